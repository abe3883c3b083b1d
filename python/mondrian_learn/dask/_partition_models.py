"""Partition-kernel GP regression and kernel PCA on Dask arrays: the
estimators of :mod:`mondrian_learn.partition` with the kernel's labels kept on the workers
(:class:`~mondrian_learn.dask._partition.DistributedPartitionKernel`) and the core's CG,
Lanczos and block Lanczos run on the clusters' Gram matrix ``M = GᵀG/m`` (``C × C``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._base import EstimatorBase, restore_on_failure, store_parameters
from mondrian_learn.dask._estimator import (
    SUBSAMPLE,
    DistributedPartitionEstimator,
    assignment,
    distributed_parameters,
)
from mondrian_learn.dask._operator import ClusterSystem
from mondrian_learn.partition import PartitionGPRegressor as InMemoryGP
from mondrian_learn.partition import PartitionKernelPCA as InMemoryPCA
from mondrian_learn.partition import RandomPartitionKernel
from mondrian_learn.partition._operator import (
    LanczosVarianceMixin,
    check_fixed_ratio,
    fit_eigenpairs,
    fit_variances,
    warn_unconverged_variances,
)
from mondrian_learn.partition._samplers import FRESH
from mondrian_learn.partition._variance import feature_norms, lanczos_upper_variances


def _gp_block(
    kernel: RandomPartitionKernel,
    rows: np.ndarray,
    coef: np.ndarray,
    y_mean: float,
    factor: np.ndarray | None,
    signal: float,
    noise: float,
) -> np.ndarray:
    """Means (and, with the upper LOVE factor, standard deviations) of a block of new points:
    ``(n, 1)`` or ``(n, 2)``."""
    model = kernel.model_
    labels, weights = assignment(kernel, rows)
    m = model.n_partitions
    mean = y_mean + m * model.gather_sums(coef, 1, labels, weights)[:, 0]
    if factor is None:
        return mean[:, None]
    upper = model.gather_sums(factor, 1, labels, weights)
    var = lanczos_upper_variances(upper, signal, noise)
    return np.column_stack([mean, np.sqrt(np.maximum(var, noise))])


class PartitionGPRegressor(RegressorMixin, DistributedPartitionEstimator, LanczosVarianceMixin):
    """:class:`mondrian_learn.PartitionGPRegressor` on rows spread over a Dask
    cluster: the same model (covariance ``s k̂(a, b) + σ² 1[a = b]``, variances by marginal
    likelihood when None), solved in the clusters' space.

    With ``G`` the rows' one-hot labels and ``M = GᵀG/m``, the posterior mean at ``x*`` is
    ``ȳ + g*ᵀ u`` with ``(M + ρI) u = Gᵀ(y − ȳ)/m``, ``ρ = σ²/s`` (push-through of
    ``s K̂ (s K̂ + σ² I)⁻¹``): CG on ``M + ρI`` (Jacobi: its diagonal is the clusters' sizes
    over m, plus ρ) until the training points' relative residual is within ``tol``, the
    in-memory estimator's criterion; ``cluster_coef_`` holds ``u``, so
    predictions need only the new points' labels. The marginal likelihood comes from Lanczos
    on ``M`` (:class:`~mondrian_learn.partition._marginal_likelihood.ClusterSpaceLikelihood`),
    the predictive variances from the routes of the in-memory estimator on ``M``
    (``"lanczos"``: LOVE's factor, ``C × variance_rank`` on the client; ``"exact"``: one CG
    solve per point, every iteration a distributed product).

    Parameters
    ----------
    sampler, n_partitions, subsample, scale_features, random_state, n_jobs, verbose
        See :class:`DistributedPartitionEstimator`.
    noise_variance, signal_variance, tol, max_iter, n_probes, lanczos_steps
        As for :class:`mondrian_learn.PartitionGPRegressor` (``tol`` bounds the
        training points' residual, as there: the clusters' system is solved until it does).
    variance : {"exact", "lanczos"}, default="exact"
        Route of ``predict(return_std=True)``, as in the in-memory estimator. Here the exact
        route costs a CG solve per 16 points whose every iteration is a distributed product,
        so ``"lanczos"`` is the route for many points (check it with
        :meth:`predict_std_bounds`).
    variance_rank : int, default=100
        Dimension of the Lanczos decomposition of the ``"lanczos"`` route.

    Attributes
    ----------
    kernel_ : RandomPartitionKernel
        Sampled on ``n_subsample_`` rows.
    cluster_coef_ : ndarray of shape (C,)
        ``u`` above.
    y_mean_, noise_variance_, signal_variance_ : float
    log_marginal_likelihood_value_, log_marginal_likelihood_std_ : float
        Only when a variance was chosen by marginal likelihood.
    n_iter_ : int
        CG iterations of the fit.
    """

    _parameters = distributed_parameters(InMemoryGP._parameters, without=("preconditioner",))

    def __init__(
        self,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        *,
        n_partitions: int = 100,
        subsample: int | None = SUBSAMPLE,
        noise_variance: float | None = None,
        signal_variance: float | None = None,
        tol: float = 1e-3,
        max_iter: int = 1000,
        variance: str = "exact",
        variance_rank: int = 100,
        n_probes: int = 16,
        lanczos_steps: int = 60,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    def fit(self, X: Any, y: Any) -> PartitionGPRegressor:
        """Sample the partitions on a subsample, label every row block on the workers,
        choose the variances left as None and solve for ``cluster_coef_``.

        Parameters
        ----------
        X : dask.array.Array or array-like of shape (n_samples, n_features)
            Training points (finite values).
        y : dask.array.Array or array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : PartitionGPRegressor
            The fitted estimator.
        """
        self._validate_params()
        # Before the partitions are sampled.
        check_fixed_ratio(self.signal_variance, self.noise_variance)
        rng, y, stages = self._distribute(X, y)
        self.y_mean_ = float(y.mean().compute())
        system = ClusterSystem(
            self._operator(), y, self.y_mean_, float(self.tol), int(self.max_iter)
        )
        self.cluster_coef_ = fit_variances(self, system, rng, stages)
        return self

    def _new_labels(self, X: Any) -> tuple[np.ndarray, None]:
        return assignment(self.kernel_, self._checked(X))

    def predict(self, X: Any, return_std: bool = False) -> Any:
        """Posterior predictive means (and standard deviations of new noisy targets).

        Parameters
        ----------
        X : dask.array.Array or array-like of shape (n_samples, n_features)
            Points: a Dask array gives Dask arrays (computed on the workers, block by
            block), anything else ndarrays.
        return_std : bool, default=False
            Also return the standard deviations, by the route ``variance`` names.

        Returns
        -------
        mean : ndarray or dask.array.Array of shape (n_samples,)
            Posterior predictive means.
        std : ndarray or dask.array.Array of shape (n_samples,)
            Only when ``return_std``.
        """
        check_is_fitted(self)
        s, noise = self.signal_variance_, self.noise_variance_
        coef = np.ascontiguousarray(self.cluster_coef_[:, None])
        if not return_std:
            out = self._per_row_block(X, _gp_block, coef, self.y_mean_, None, s, noise, width=1)
            return out[:, 0]
        if self.variance == "lanczos":
            upper = self._variance_factors()[0]
            out = self._per_row_block(X, _gp_block, coef, self.y_mean_, upper, s, noise, width=2)
            return out[:, 0], out[:, 1]
        mean = self.predict(X)
        return mean, np.sqrt(self._exact_variance(X))

    def _exact_variance(self, X: np.ndarray) -> np.ndarray:
        """``σ² + s (1 − ‖φ*‖²) + σ² φ*ᵀ(M + ρI)⁻¹φ*`` per point by CG on the distributed
        ``M``, 16 points per solve."""
        operator = self._operator()
        dk = operator.rows
        labels, weights = self._new_labels(X)
        m, s, noise = dk.n_partitions, self.signal_variance_, self.noise_variance_
        rho = noise / s
        offsets = self.kernel_.model_.cluster_offsets().astype(np.int64)
        shared = labels != FRESH
        w = np.where(shared, 1.0 if weights is None else weights, 0.0)
        at = np.where(shared, labels.astype(np.int64) + offsets[:-1, None], 0)
        out = np.empty(labels.shape[1])
        for start in range(0, labels.shape[1], 16):
            part = slice(start, start + 16)
            width = at[:, part].shape[1]
            rhs = np.zeros((dk.n_clusters, width))
            for j in range(width):
                np.add.at(rhs[:, j], at[:, part][:, j], w[:, part][:, j])
            z, _, _, converged = operator.solve_shifted(
                rhs, rho, float(self.tol), int(self.max_iter)
            )
            warn_unconverged_variances(converged)
            out[part] = noise * np.einsum("ij,ij->j", rhs, z) / m
        return out + noise + s * (1.0 - feature_norms(labels, weights))


def _scores_block(
    kernel: RandomPartitionKernel, rows: np.ndarray, components: np.ndarray, offset: np.ndarray
) -> np.ndarray:
    """``(φ(x) − μ)ᵀ V`` of a block of new points."""
    model = kernel.model_
    labels, weights = assignment(kernel, rows)
    return np.sqrt(model.n_partitions) * model.gather_sums(components, 1, labels, weights) - offset


def _train_scores(
    model: Any, labels: np.ndarray, components: np.ndarray, offset: np.ndarray, n_jobs: int
) -> np.ndarray:
    """:func:`_scores_block` for a block of training rows, from their kept labels."""
    return np.sqrt(model.n_partitions) * model.gather_sums(components, n_jobs, labels) - offset


class PartitionKernelPCA(TransformerMixin, DistributedPartitionEstimator):
    """:class:`mondrian_learn.PartitionKernelPCA` on rows spread over a Dask
    cluster: the top eigenpairs of the centred kernel ``H K̂ H`` from restarted block Lanczos
    on ``ΦᵀHΦ = M − g gᵀ/(N m)`` (``Φ = G/√m``, ``g = Gᵀ1`` the clusters' sizes), which has
    the same non-zero eigenvalues; its unit eigenvectors ``v_j`` (``components_``) give every
    point's score ``(φ(x) − μ)ᵀ v_j`` with ``μ = Φᵀ1/N`` — the in-memory estimator's
    ``transform`` (``Σ_i k̃(x, x_i) u_ij / √λ_j``) in closed form, and for a training point
    its ``u_ij √λ_j``. Signs: the largest entry of each ``v_j`` is positive (the in-memory
    estimator fixes the sign of ``u_j`` instead, so components may differ in sign).

    Parameters
    ----------
    n_components : int, default=5
        Number of principal components.
    sampler, n_partitions, subsample, scale_features, random_state, n_jobs, verbose
        See :class:`DistributedPartitionEstimator`.
    block_size, krylov_depth, tol, max_restarts
        As for :class:`mondrian_learn.PartitionKernelPCA`.

    Attributes
    ----------
    kernel_ : RandomPartitionKernel
    eigenvalues_ : ndarray of shape (n_components,)
    components_ : ndarray of shape (C, n_components)
        The ``v_j``.
    explained_variance_, explained_variance_ratio_ : ndarray of shape (n_components,)
    n_products_ : int
        Distributed block products used by Lanczos.
    """

    _parameters = distributed_parameters(InMemoryPCA._parameters)

    def __init__(
        self,
        n_components: int = 5,
        *,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        n_partitions: int = 100,
        subsample: int | None = SUBSAMPLE,
        block_size: int | None = None,
        krylov_depth: int = 6,
        tol: float = 1e-6,
        max_restarts: int = 50,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    def fit(self, X: Any, y: Any = None) -> PartitionKernelPCA:
        """Sample the partitions on a subsample, label every row block on the workers and
        compute the top eigenpairs of the centred kernel.

        Parameters
        ----------
        X : dask.array.Array or array-like of shape (n_samples, n_features)
            Training points (finite values).
        y : None or array-like of shape (n_samples,)
            Only used by supervised samplers (Random Forest).

        Returns
        -------
        self : PartitionKernelPCA
            The fitted estimator.
        """
        rng, _, stages = self._distribute(X, y)
        dk = self._rows()
        k = int(self.n_components)
        n, m, g = dk.n_rows, dk.n_partitions, dk.sizes
        if k > min(n, dk.n_clusters):
            raise ValueError(f"n_components={k} exceeds the number of samples or clusters")
        vectors = fit_eigenpairs(self, self._operator(), rng, stages)
        values = self.eigenvalues_
        self.components_ = vectors
        # μᵀV = gᵀV / (N √m): the centring of every score.
        self.score_offset_ = (g @ vectors) / (n * np.sqrt(m))
        self.explained_variance_ = values / n
        self.explained_variance_ratio_ = values / (n - float(g @ g) / (m * n))
        return self

    def transform(self, X: Any) -> Any:
        """Scores ``(φ(x) − μ)ᵀ v_j`` of new points.

        Parameters
        ----------
        X : dask.array.Array or array-like of shape (n_samples, n_features)
            Points (a Dask array gives a Dask array).

        Returns
        -------
        Z : ndarray or dask.array.Array of shape (n_samples, n_components)
            The scores.
        """
        check_is_fitted(self)
        return self._per_row_block(
            X,
            _scores_block,
            self.components_,
            self.score_offset_,
            width=int(self.n_components),
        )

    def fit_transform(self, X: Any, y: Any = None, **params: Any) -> Any:
        """Fit, then the training points' scores from their labels kept on the workers.

        Parameters
        ----------
        X : dask.array.Array or array-like of shape (n_samples, n_features)
            Training points (finite values).
        y : None or array-like of shape (n_samples,)
            Only used by supervised samplers.
        **params : dict
            Ignored; present for scikit-learn's API.

        Returns
        -------
        Z : dask.array.Array of shape (n_samples, n_components)
            The training points' scores (``u_j √λ_j``).
        """
        self.fit(X, y)
        return self._rows().per_block(
            _train_scores,
            self.components_,
            self.score_offset_,
            width=int(self.n_components),
        )
