"""Gaussian-process regression with a random partition kernel (Davies & Ghahramani 2014, §5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import validate_data

from mondrian_learn import _core
from mondrian_learn._base import (
    EstimatorBase,
    GaussianSampleMixin,
    document,
    restore_on_failure,
    store_parameters,
)
from mondrian_learn._memory import check_memory
from mondrian_learn._targets import weighted_targets
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    RUNTIME,
    SCALING,
    Integer,
    Param,
)
from mondrian_learn.partition._base import PartitionKernelEstimator
from mondrian_learn.partition._kernel import PRECONDITIONER
from mondrian_learn.partition._operator import (
    LanczosVarianceMixin,
    LocalOperator,
    LocalSystem,
    check_fixed_ratio,
    fit_variances,
    warn_unconverged_variances,
)
from mondrian_learn.partition._samplers import SAMPLING
from mondrian_learn.partition._variance import VARIANCE, lanczos_upper_variances

__all__ = ["PartitionGPRegressor"]


class PartitionGPRegressor(
    RegressorMixin, GaussianSampleMixin, LanczosVarianceMixin, PartitionKernelEstimator
):
    """GP regression with covariance ``s k̂(a, b) + σ² 1[a = b]``, ``k̂`` a random partition
    kernel, solved in O(m N) per iteration (Davies & Ghahramani 2014, §5.1).

    - Posterior mean: ``ȳ + s K̂(X*, X) α`` with the dual weights α (``dual_coef_``)
      solving ``(s K̂ + σ² I) α = y − ȳ`` by
      preconditioned conjugate gradients, preconditioner ``(1/m) Σ_ρ (s K_ρ + σ² I)⁻¹``
      (eq. 9; each inverse in closed form per cluster, eq. 10).
    - Predictive variance of a new target: ``s + σ² − s² k*ᵀ (s K̂ + σ² I)⁻¹ k*`` with
      ``k* = K̂(X, x*)`` (``k̂(x*, x*) = 1``), by one of two routes (``variance``).
      ``"exact"`` (default): one solve per point, in the core, in the clusters' space
      (Woodbury: ``σ² + s (1 − ‖φ*‖²) +
      σ² φ*ᵀ (ΦᵀΦ + (σ²/s) I)⁻¹ φ*``, no cancellation) when there are at most as many
      clusters as points, else in the training points' space; by a dense Cholesky factor
      when that space is small (≤ 2,048 clusters, ≤ 8,192 points), else by CG, points in
      blocks solved in parallel. ``"lanczos"`` (LOVE, Pleiss et
      al. 2018): one block Lanczos decomposition of dimension ``variance_rank`` serves
      every new point, O(m · variance_rank) per point once it is computed (on the first
      call that needs it, then kept until the next ``fit``); a Galerkin approximation that
      never understates the exact variance, the gap shrinking as ``variance_rank`` grows;
      :meth:`predict_std_bounds` gives a certified bracket of the exact value.
    - ``σ²`` and ``s`` (when None) maximise the log marginal likelihood: exact up to 1,000
      training points (one dense eigendecomposition of ``K̂``), above that estimated by
      stochastic Lanczos quadrature (one Lanczos run on ``K̂`` from ``y`` and ``n_probes``
      Rademacher probes serves every ``(s, σ²)``).
      ``log_marginal_likelihood_value_`` then uses the CG solution for the data-fit term and
      the Hutchinson estimate for ``log det``; ``log_marginal_likelihood_std_`` is half the
      probes' standard error of ``log det`` (the estimator's only random part; 0 when exact).
    - ``sample_weight`` v: point i's noise is σ²/v_i (``σ² V⁻¹`` replaces ``σ² I`` above, ȳ is
      the weighted mean), and the marginal likelihood counts row i v_i times (frequency
      weights), so an integer weight is exactly the row repeated and a zero weight removes it.

    Parameters
    ----------
    sampler : str, sampler object or callable, default="mondrian"
        See :class:`RandomPartitionKernel`.
    n_partitions : int, default=100
        Number m of random partitions.
    noise_variance : float or None, default=None
        σ² > 0; None chooses it by marginal likelihood, with σ²/s ≥ 1e-3 (``RHO_FLOOR``: below,
        the Lanczos estimate of the criterion is biased upwards and CG needs thousands of
        iterations), raised tenfold above the chosen ratio while CG does not converge there.
    signal_variance : float or None, default=None
        s > 0; None chooses it by marginal likelihood (same search). With both variances
        fixed, σ²/s must be at least 1e-12 (below, the kernel matrix plus σ²/s I is singular
        to float64 precision).
    preconditioner : {"partition", "jacobi", "none"}, default="partition"
        Preconditioner of the conjugate gradients, as in :meth:`.RandomPartitionKernel.solve`.
    tol : float, default=1e-3
        CG stops when ``‖r‖ ≤ tol ‖b‖`` (the fit); the exact route's variances are within a
        relative ``tol`` of their exact values.
        Posterior means at 1e-2 … 1e-4 differed by < 0.1 % in test RMSE in our
        benchmarks; lower it for exact agreement with a dense solve.
    max_iter : int, default=1000
        CG iteration cap; a ``ConvergenceWarning`` is raised when it is reached.
    variance : {"exact", "lanczos"}, default="exact"
        Route of the predictive variances (``return_std``, ``return_cov``, ``sample_y``):
        ``"exact"``, one solve per point (dense when the system is small); ``"lanczos"``, one
        Lanczos decomposition shared by all points (LOVE), an upper bound of the exact
        variance, far faster for many points but, on the problems of our benchmarks,
        14 % (median) to 4× above the exact standard deviations
        at ``variance_rank=100``: check with :meth:`predict_std_bounds`, which brackets the
        exact value.
    variance_rank : int, default=100
        Lanczos steps of the ``"lanczos"`` route: the rank of its low-rank factor
        (C × variance_rank values kept, C the clusters of all partitions).
    n_probes : int, default=16
        Rademacher probes for the log-determinant (at least 2: their spread is the reported
        error).
    lanczos_steps : int, default=60
        Lanczos steps per probe (at most N are run: Lanczos is exact after N steps).
    scale_features, random_state, n_jobs
        As for :class:`RandomPartitionKernel`; results are identical for any ``n_jobs``.
    verbose : int, default=0
        Report each stage of the fit (sampling, solves) with its time on stderr.

    Attributes
    ----------
    kernel_ : RandomPartitionKernel
    dual_coef_ : ndarray of shape (n_samples,)
        The dual weights α (as scikit-learn's ``KernelRidge.dual_coef_``).
    noise_variance_, signal_variance_ : float
    log_marginal_likelihood_value_, log_marginal_likelihood_std_ : float
        Only when a variance was chosen by marginal likelihood.
    n_iter_ : int
        CG iterations of the fit.
    sample_weight_ : ndarray of shape (n_samples,) or None
        The positive row weights of the fit (None without weights).

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.partition import PartitionGPRegressor, MondrianPartitions
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=300)
    >>> gp = PartitionGPRegressor(MondrianPartitions(lifetime=5.0), random_state=0).fit(X, y)
    >>> mean, std = gp.predict(X[:3], return_std=True)
    >>> bool(np.all(std > 0))
    True
    """

    _parameters = {
        **SAMPLING,
        "noise_variance": Param(None, None, *POSITIVE),
        "signal_variance": Param(None, None, *POSITIVE),
        "preconditioner": Param("partition", *PRECONDITIONER),
        "tol": Param(1e-3, *POSITIVE),
        "max_iter": Param(1000, *COUNT),
        "variance": Param("exact", *VARIANCE),
        "variance_rank": Param(100, *COUNT),
        "n_probes": Param(16, Integer(low=2)),
        "lanczos_steps": Param(60, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        *,
        n_partitions: int = 100,
        noise_variance: float | None = None,
        signal_variance: float | None = None,
        preconditioner: str = "partition",
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
    @document("X", "y", "sample_weight")
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> PartitionGPRegressor:
        """Sample the partitions (on the rows of positive weight), choose the variances left
        as None, and solve for the dual weights α.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        # Before the partitions are sampled.
        check_fixed_ratio(self.signal_variance, self.noise_variance)
        X, y = validate_data(
            self, X, y, dtype=np.float64, accept_sparse=self._sparse_formats(), y_numeric=True
        )
        X, y, weights, _ = weighted_targets(X, y, sample_weight)
        rng, stages = self._sample_kernel(X, y)
        self.sample_weight_ = weights
        self.y_mean_ = float(np.average(y, weights=weights))
        system = LocalSystem(self.kernel_, y - self.y_mean_, weights, self)
        self.dual_coef_ = fit_variances(self, system, rng, stages)
        return self

    def _operator(self) -> LocalOperator:
        return LocalOperator(self.kernel_, self._threads(), self.sample_weight_)

    def _new_labels(self, X: Any) -> tuple[np.ndarray, np.ndarray | None]:
        return self.kernel_.assign(self._fitted_input(X))

    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False) -> Any:
        """Posterior predictive mean (and standard deviation or covariance of new noisy
        targets).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        return_std : bool, default=False
            Also return ``sqrt(s + σ² − s² k*ᵀ (s K̂ + σ² I)⁻¹ k*)``, by the route
            ``variance`` names.
        return_cov : bool, default=False
            Also return the joint covariance ``s K̂** + σ² I − s² K̂*ᵀ (s K̂ + σ² I)⁻¹ K̂*``
            (``σ² V⁻¹`` in the inverse with ``sample_weight``; by the route ``variance``
            names; O(n_samples²) memory). Between two new points K̂** is the
            fraction of partitions that put both in the cluster of the same training points,
            weighted as in ``kernel_.features`` (``φ(x)·φ(x')``); a point alone in a cluster
            (no training point, or separated by the conditional Mondrian) is counted as
            alone among the new points too, so K̂** = φφᵀ + diag(1 − ‖φ‖²): positive
            semi-definite, diagonal 1 as for ``return_std``, and a lower bound of the
            co-occurrence of two new points that may share a cluster no training point is in.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            Posterior predictive means.
        std : ndarray of shape (n_samples,)
            Predictive standard deviations; only when ``return_std``.
        cov : ndarray of shape (n_samples, n_samples)
            Predictive covariance; only when ``return_cov``.
        """
        if return_std and return_cov:
            raise ValueError("at most one of return_std and return_cov can be requested")
        X = self._fitted_input(X)
        kernel, s, noise = self.kernel_, self.signal_variance_, self.noise_variance_
        labels, weights = kernel.assign(X)
        threads = self._threads()
        dual = np.ascontiguousarray(self.dual_coef_.reshape(-1, 1))
        mean = self.y_mean_ + s * kernel.model_.cross_matmul(labels, weights, dual, threads)[:, 0]
        if not (return_std or return_cov):
            return mean
        n = X.shape[0]
        if return_cov:
            check_memory("X", n, 8.0 * n * n * 3, "return_cov holds n_samples² values")
        if self.variance == "exact":
            result = self._exact_variance(labels, weights, full=return_cov)
            if not return_cov:
                return mean, np.sqrt(np.maximum(result, noise))
            result[np.diag_indices(n)] = np.maximum(np.diag(result), noise)
            return mean, result
        rows = kernel.model_.gather_sums(self._variance_factors()[0], threads, labels, weights)
        var = lanczos_upper_variances(rows, s, noise)
        if not return_cov:
            return mean, np.sqrt(np.maximum(var, noise))
        features = kernel.features(X)
        prior = np.asarray((features @ features.T).todense())
        prior[np.diag_indices(n)] = 1.0
        cov = s * prior - rows @ rows.T
        cov = 0.5 * (cov + cov.T)
        cov[np.diag_indices(n)] = np.maximum(var, noise)
        return mean, cov

    def _exact_variance(
        self, labels: np.ndarray, weights: np.ndarray | None, full: bool
    ) -> np.ndarray:
        """The exact route: each new point's predictive variance (``full``: the covariance)
        by one CG solve per point, in the core."""
        values, _, converged = _core.predictive_variance(
            self.kernel_.model_,
            labels,
            weights,
            self.signal_variance_,
            self.noise_variance_,
            self.preconditioner,
            float(self.tol),
            int(self.max_iter),
            full,
            self._threads(),
            self.sample_weight_,
        )
        warn_unconverged_variances(converged)
        return values.reshape(labels.shape[1], -1) if full else values
