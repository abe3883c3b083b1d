"""Partition-kernel GP regression and kernel PCA on Dask arrays: the
estimators of :mod:`mondrian_learn.partition` with the kernel's labels kept on the workers
(:class:`~mondrian_learn.dask._partition.DistributedPartitionKernel`) and the core's CG,
Lanczos and block Lanczos run on the clusters' Gram matrix ``M = GᵀG/m`` (``C × C``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import RegressorMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from mondrian_learn import _core
from mondrian_learn._base import EstimatorBase, restore_on_failure, warn
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    RUNTIME,
    SCALING,
    Integer,
    Param,
    check_parameter,
    draw_seed,
)
from mondrian_learn.dask._partition import DistributedPartitionKernel, share
from mondrian_learn.partition import RandomPartitionKernel
from mondrian_learn.partition._gp import RHO_FLOOR, check_fixed_ratio
from mondrian_learn.partition._marginal_likelihood import ClusterSpaceLikelihood
from mondrian_learn.partition._samplers import FRESH, SAMPLING
from mondrian_learn.partition._variance import (
    VARIANCE,
    feature_norms,
    lanczos_start,
    lanczos_variances_from_rows,
)

#: Rows the sampler is fitted on by default (``subsample``): measured in the project's
#: benchmarks against the sampler fitted on every row.
SUBSAMPLE = 100_000

#: The parameters every estimator here adds to the in-memory one's.
DISTRIBUTED = {"subsample": Param(SUBSAMPLE, None, *COUNT)}


def as_rows(X: Any, name: str = "X") -> Any:
    """``X`` as a 2-D float64 Dask array with one chunk across its columns (a NumPy array
    becomes one chunk of rows per 100,000)."""
    import dask.array as da

    if not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X), chunks=(100_000, -1))
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {X.shape}")
    return X.astype(np.float64).rechunk({1: -1})


def as_targets(y: Any, X: Any) -> Any:
    """``y`` as a 1-D float64 Dask array chunked like the rows of ``X``."""
    import dask.array as da

    y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y, dtype=np.float64))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    return y.astype(np.float64).rechunk((X.chunks[0],))


class DistributedPartitionEstimator(EstimatorBase):
    """What the Dask estimators share: the kernel sampled on a subsample (``subsample``
    rows drawn at random; None: every row, gathered on the client) and its labels of every
    row block kept on the workers (``kernel_`` and the private distributed kernel).

    Parameters
    ----------
    sampler, n_partitions, scale_features, random_state, n_jobs, verbose
        As for :class:`~mondrian_learn.partition.RandomPartitionKernel` (``n_jobs``: threads
        of each block's call into the core on a worker).
    subsample : int or None, default=100000
        Rows the sampler is fitted on (all of them when fewer): its partitions of those rows
        are extended to every row by their cuts (see :mod:`mondrian_learn.dask._partition`).
        A sampler whose cells are sized in rows (a Random Forest's ``min_samples_leaf``, or
        its default fully grown trees) makes coarser cells on fewer rows: scale its leaf
        size with the subsample (our benchmarks measure the accuracy each sampler loses).
    """

    _parameters = {**SAMPLING, **DISTRIBUTED, **SCALING, **RUNTIME}

    def _distribute(self, X: Any, y: Any = None) -> tuple[np.random.RandomState, Any]:
        """Sample ``kernel_`` and label every row block; returns the estimator's random state
        (to draw what comes next) and ``y`` as a Dask array (None without)."""
        self._validate_params()
        X = as_rows(X)
        y = None if y is None else as_targets(y, X)
        n = int(X.shape[0])
        rng = check_random_state(self.random_state)
        # The kernel's seed as the in-memory estimators draw it: with subsample=None both
        # sample the same partitions.
        seed = int(rng.randint(0, 2**32 - 1, dtype=np.int64))
        if self.subsample is None or int(self.subsample) >= n:
            rows, targets = X.compute(), None if y is None else y.compute()
        else:
            pick = np.sort(
                np.random.default_rng(draw_seed(rng)).choice(n, int(self.subsample), replace=False)
            )
            rows, targets = X[pick].compute(), None if y is None else y[pick].compute()
        if not np.isfinite(rows).all():
            raise ValueError("X contains NaN or infinity")
        self.kernel_ = RandomPartitionKernel(
            self.sampler,
            self.n_partitions,
            scale_features=self.scale_features,
            random_state=seed,
            n_jobs=self.n_jobs,
        ).fit(rows, targets)
        self.n_features_in_ = int(X.shape[1])
        self.n_subsample_ = int(rows.shape[0])
        self._distributed_kernel = DistributedPartitionKernel(
            self.kernel_, X, self._threads(), self.verbose
        )
        return rng, y

    def _rows(self) -> DistributedPartitionKernel:
        """The training rows' labels on the workers (not pickled: a Dask cluster's data)."""
        check_is_fitted(self)
        rows = self.__dict__.get("_distributed_kernel")
        if rows is None:
            raise ValueError(
                "this estimator was restored from a pickle: the training rows' labels on the "
                "Dask workers are gone; fit it again"
            )
        return rows

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_distributed_kernel", None)
        return state

    def _checked(self, X: Any) -> np.ndarray:
        """New points gathered here as a float64 ndarray, checked."""
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n_samples, {self.n_features_in_}), got {X.shape}")
        return X

    def _per_row_block(self, X: Any, f: Any, *args: Any, width: int) -> Any:
        """``f(kernel, rows, *args)`` (``n × width``) on every row block of a Dask ``X``, as a
        Dask array; on an ndarray, computed here."""
        import dask
        import dask.array as da

        check_is_fitted(self)
        if not isinstance(X, da.Array):
            return f(self.kernel_, self._checked(X), *args)
        X = as_rows(X)
        kernel, shared = share(self.kernel_), [share(a) for a in args]
        blocks = [b for row in X.to_delayed() for b in row]
        return da.concatenate(
            [
                da.from_delayed(
                    dask.delayed(f, pure=True)(kernel, b, *shared),
                    shape=(n, width),
                    dtype=np.float64,
                )
                for b, n in zip(blocks, X.chunks[0])
            ]
        )


def _assignment(kernel: RandomPartitionKernel, rows: np.ndarray) -> tuple[Any, None]:
    """Labels of new points, placed by the rules' cuts as the training rows are (the
    conditional Mondrian's weights are not used on Dask, see the module notes of
    :mod:`mondrian_learn.dask._partition`); a point in no cluster (a callable rule's unseen
    label) is alone there (``FRESH``)."""
    return np.ascontiguousarray(kernel.assign(rows)[0]), None


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
    labels, weights = _assignment(kernel, rows)
    m = model.n_partitions
    mean = y_mean + m * model.gather_sums(coef, 1, labels, weights)[:, 0]
    if factor is None:
        return mean[:, None]
    upper = model.gather_sums(factor, 1, labels, weights)
    var = signal + noise - np.einsum("ij,ij->i", upper, upper)
    return np.column_stack([mean, np.sqrt(np.maximum(var, noise))])


class PartitionGPRegressor(RegressorMixin, DistributedPartitionEstimator):
    """:class:`mondrian_learn.partition.PartitionGPRegressor` on rows spread over a Dask
    cluster: the same model (covariance ``s k̂(a, b) + σ² 1[a = b]``, variances by marginal
    likelihood when None), solved in the clusters' space.

    With ``G`` the rows' one-hot labels and ``M = GᵀG/m``, the posterior mean at ``x*`` is
    ``ȳ + g*ᵀ u`` with ``(M + ρI) u = Gᵀ(y − ȳ)/m``, ``ρ = σ²/s`` (push-through of
    ``s K̂ (s K̂ + σ² I)⁻¹``): CG on ``M + ρI`` (Jacobi: its diagonal is the clusters' sizes
    over m, plus ρ) to the relative residual ``tol``; ``cluster_coef_`` holds ``u``, so
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
        As for :class:`mondrian_learn.partition.PartitionGPRegressor` (``tol`` applies to the
        clusters' system).
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

    _parameters = {
        **SAMPLING,
        **DISTRIBUTED,
        "noise_variance": Param(None, None, *POSITIVE),
        "signal_variance": Param(None, None, *POSITIVE),
        "tol": Param(1e-3, *POSITIVE),
        "max_iter": Param(1000, *COUNT),
        "n_probes": Param(16, Integer(low=2)),
        "lanczos_steps": Param(60, *COUNT),
        "variance": Param("exact", *VARIANCE),
        "variance_rank": Param(100, *COUNT),
        **SCALING,
        **RUNTIME,
    }

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
        import dask

        self._validate_params()
        check_fixed_ratio(  # before the partitions are sampled
            None if self.signal_variance is None else float(self.signal_variance),
            None if self.noise_variance is None else float(self.noise_variance),
        )
        rng, y = self._distribute(X, y)
        dk = self._rows()
        m, n, threads = dk.n_partitions, dk.n_rows, self._threads()
        self.y_mean_ = float(y.mean().compute())
        centred = [b - self.y_mean_ for b in y.to_delayed()]
        c = dk.cluster_sums_of([dask.delayed(np.reshape)(b, (-1, 1)) for b in centred])[:, 0] / m
        y_norm2 = float(((y - self.y_mean_) ** 2).sum().compute())
        probe_seed = draw_seed(rng)
        self._variance_seed = draw_seed(rng)
        self._variance_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        signal, noise = (
            None if v is None else float(v) for v in (self.signal_variance, self.noise_variance)
        )
        if signal is None or noise is None:
            likelihood = ClusterSpaceLikelihood(
                lambda starts, steps: _core.operator_lanczos(dk.gram, starts, steps, threads),
                c,
                y_norm2,
                n,
                m,
                int(self.n_probes),
                int(self.lanczos_steps),
                probe_seed,
            )
        fixed, floor = (signal, noise), RHO_FLOOR
        while True:
            if None in fixed:
                signal, noise = likelihood.maximise(*fixed, floor)
            assert signal is not None and noise is not None
            rho = noise / signal
            u, self.n_iter_, residual = self._solve(dk, c, rho, y_norm2)
            converged = residual <= float(self.tol)
            if converged or None not in fixed or rho >= 1e2:
                break
            floor = 10.0 * rho
        self.signal_variance_, self.noise_variance_ = float(signal), float(noise)
        self.cluster_coef_ = u
        if not converged and y_norm2 > 0:
            warn(
                f"conjugate gradients stopped after {self.n_iter_} iterations with relative "
                f"residual {residual:.2e} > tol={self.tol}; raise max_iter",
                ConvergenceWarning,
            )
        if self.signal_variance is None or self.noise_variance is None:
            # yᵀ(sK̂ + σ²I)⁻¹y from the CG solution (push-through, as in the criterion).
            quadratic = (y_norm2 - m * float(c @ u)) / noise
            self.log_marginal_likelihood_value_ = likelihood.value(signal, noise, quadratic)
            self.log_marginal_likelihood_std_ = 0.5 * likelihood.logdet(rho)[1]
        return self

    def _solve(
        self, dk: DistributedPartitionKernel, c: np.ndarray, rho: float, y_norm2: float
    ) -> tuple[np.ndarray, int, float]:
        """``(M + ρI) u = c`` by CG with Jacobi, to the in-memory estimator's criterion: the
        training points' residual ``r = y − (s K̂ + σ² I) α`` of the dual weights
        ``α = (y − G u)/σ²`` it implies, ``‖r‖ ≤ tol ‖y‖``. That residual is
        ``−G r_c / ρ`` for the clusters' residual ``r_c = c − (M + ρI) u``, so
        ``‖r‖² = m r_cᵀ M r_c / ρ²``: one product per check. CG's own criterion
        (``‖r_c‖ ≤ tol ‖c‖``) is a different norm, so the solve is refined (CG on the
        residual, its tolerance scaled by the ratio of the two norms) until the criterion
        holds. Returns ``u``, the CG iterations and the relative residual reached."""
        m, threads, tol = dk.n_partitions, self._threads(), float(self.tol)
        y_norm = np.sqrt(y_norm2)
        u, residual, spent = np.zeros_like(c), c.copy(), 0
        diagonal = dk.sizes / m + rho
        relative, inner = np.inf, tol
        for _refinement in range(8):
            relative = np.sqrt(max(m * residual @ dk.gram(residual[:, None])[:, 0], 0.0))
            relative /= rho * max(y_norm, np.finfo(float).tiny)
            norm = np.linalg.norm(residual)
            if relative <= tol or spent >= int(self.max_iter) or norm == 0.0:
                break
            if spent:
                # The clusters' residual that meets tol, from the ratio of the two norms.
                inner = min(0.5, 0.5 * tol / relative)
            step, iterations, _, _ = _core.operator_solve(
                lambda U: dk.gram(U) + rho * U,
                np.ascontiguousarray(residual[:, None]),
                inner,
                int(self.max_iter) - spent,
                threads,
                diagonal,
            )
            spent += int(iterations[0])
            u = u + step[:, 0]
            residual = c - dk.gram(u[:, None])[:, 0] - rho * u
        return u, spent, float(relative)

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

    def predict_std_bounds(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Certified lower and upper bounds of the exact predictive standard deviations from
        the ``"lanczos"`` route's decomposition (as the in-memory estimator's).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,)
            Bounds of the exact predictive standard deviations.
        """
        labels, weights = _assignment(self.kernel_, self._checked(X))
        model, s, noise = self.kernel_.model_, self.signal_variance_, self.noise_variance_
        upper_f, lower_f = self._variance_factors()
        up = model.gather_sums(upper_f, self._threads(), labels, weights)
        lo = model.gather_sums(lower_f, self._threads(), labels, weights)
        lower, upper = lanczos_variances_from_rows(up, lo, feature_norms(labels, weights), s, noise)
        return np.sqrt(np.maximum(lower, noise)), np.sqrt(np.maximum(upper, noise))

    def _exact_variance(self, X: np.ndarray) -> np.ndarray:
        """``σ² + s (1 − ‖φ*‖²) + σ² φ*ᵀ(M + ρI)⁻¹φ*`` per point by CG on the distributed
        ``M``, 16 points per solve."""
        dk = self._rows()
        labels, weights = _assignment(self.kernel_, self._checked(X))
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
            z, _, _, converged = _core.operator_solve(
                lambda U: dk.gram(U) + rho * U,
                rhs,
                float(self.tol),
                int(self.max_iter),
                self._threads(),
                dk.sizes / m + rho,
            )
            if not converged.all():
                warn(
                    "conjugate gradients did not converge for some predictive variances",
                    ConvergenceWarning,
                )
            out[part] = noise * np.einsum("ij,ij->j", rhs, z) / m
        return out + noise + s * (1.0 - feature_norms(labels, weights))

    def _variance_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """The two LOVE factors (clusters × rank), on first use (kept until ``fit``)."""
        check_parameter("variance_rank", self.variance_rank, COUNT)
        rank, dk = int(self.variance_rank), self._rows()
        cache = self.__dict__.setdefault("_variance_cache", {})
        if rank not in cache:
            cache.clear()
            cache[rank] = _core.operator_variance_factors(
                dk.gram,
                lanczos_start(dk.sizes, rank, self._variance_seed),
                rank,
                self._variance_seed,
                self.signal_variance_,
                self.noise_variance_,
                dk.n_partitions,
                self._threads(),
            )
        return cache[rank]


def _scores_block(
    kernel: RandomPartitionKernel, rows: np.ndarray, components: np.ndarray, offset: np.ndarray
) -> np.ndarray:
    """``(φ(x) − μ)ᵀ V`` of a block of new points."""
    model = kernel.model_
    labels, weights = _assignment(kernel, rows)
    return np.sqrt(model.n_partitions) * model.gather_sums(components, 1, labels, weights) - offset


def _train_scores(
    model: Any, labels: np.ndarray, components: np.ndarray, offset: np.ndarray, n_jobs: int
) -> np.ndarray:
    """:func:`_scores_block` for a block of training rows, from their kept labels."""
    return np.sqrt(model.n_partitions) * model.gather_sums(components, n_jobs, labels) - offset


class PartitionKernelPCA(TransformerMixin, DistributedPartitionEstimator):
    """:class:`mondrian_learn.partition.PartitionKernelPCA` on rows spread over a Dask
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
        As for :class:`mondrian_learn.partition.PartitionKernelPCA`.

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

    _parameters = {
        "n_components": Param(5, *COUNT),
        **SAMPLING,
        **DISTRIBUTED,
        "block_size": Param(None, None, *COUNT),
        "krylov_depth": Param(6, *COUNT),
        "tol": Param(1e-6, *POSITIVE),
        "max_restarts": Param(50, Integer(low=0)),
        **SCALING,
        **RUNTIME,
    }

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
        rng, _ = self._distribute(X, y)
        dk = self._rows()
        k = int(self.n_components)
        block = max(k + 5, 2 * k) if self.block_size is None else int(self.block_size)
        n, m, g = dk.n_rows, dk.n_partitions, dk.sizes
        if k > min(n, dk.n_clusters):
            raise ValueError(f"n_components={k} exceeds the number of samples or clusters")

        def centred(U: np.ndarray) -> np.ndarray:
            return dk.gram(U) - np.outer(g, g @ U) / (n * m)

        values, vectors, residuals, products, converged = _core.operator_top_eigen(
            centred,
            dk.n_clusters,
            k,
            block,
            int(self.krylov_depth),
            float(self.tol),
            int(self.max_restarts),
            draw_seed(rng),
            self._threads(),
        )
        if not converged:
            warn(
                "block Lanczos did not reach tol; raise max_restarts",
                ConvergenceWarning,
            )
        self.eigenvalues_, self.components_ = values, vectors
        self.residuals_, self.n_products_ = residuals, int(products)
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
