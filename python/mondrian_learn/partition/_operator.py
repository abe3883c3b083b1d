"""The partition-kernel GP's and kernel PCA's solver orchestration, written once over an
operator that may be local (the kernel's labels in this process) or distributed (the labels
kept on Dask workers, :mod:`mondrian_learn.dask`).

A :class:`PartitionOperator` gives what the estimators need of ``K̂`` beyond their own
products: the clusters' sizes, the LOVE decomposition of the predictive variances and the
top eigenpairs of the centred kernel. A :class:`GaussianSystem` is the GP's system
``(s K̂ + σ² I) α = y − ȳ`` on the training targets: the marginal likelihood of
``(s, σ²)``, a CG solve and the data-fit term from its solution. :func:`fit_variances` (the
choice of the variances, the retry of CG at a higher noise-to-signal ratio, the warnings),
:func:`fit_eigenpairs` and :class:`LanczosVarianceMixin` run on either.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mondrian_learn import _core
from mondrian_learn._base import warn
from mondrian_learn._progress import StageTimer
from mondrian_learn._validation import COUNT, check_parameter, draw_seed
from mondrian_learn.partition._kernel import RandomPartitionKernel
from mondrian_learn.partition._marginal_likelihood import MarginalLikelihood
from mondrian_learn.partition._variance import (
    feature_norms,
    lanczos_start,
    lanczos_variances_from_rows,
)

#: The least noise-to-signal ratio σ²/s the marginal-likelihood search considers by default.
#: Below it the Lanczos estimates of the criterion are biased upwards and CG needs thousands of
#: iterations (on 20,000 points of a smooth signal with noise 0.01 the search ran to ρ = 1e-6
#: and CG stopped unconverged; from 1e-3, ρ = 1e-3, CG converged in 589 iterations, RMSE 0.023).
RHO_FLOOR = 1e-3
#: The least ratio σ²/s a user may fix: the kernel matrix plus ρI must stay positive definite.
RHO_MIN = 1e-12


def check_fixed_ratio(signal_variance: float | None, noise_variance: float | None) -> None:
    """Refuses fixed variances (the estimator's parameters; None: chosen by marginal
    likelihood) whose ratio σ²/s is below :data:`RHO_MIN` (below it K + ρI is singular to
    float64: pivots of order 1e-15 go negative, or s·K overflows)."""
    if signal_variance is None or noise_variance is None:
        return
    signal, noise = float(signal_variance), float(noise_variance)
    if not noise / signal >= RHO_MIN:
        raise ValueError(
            f"noise_variance / signal_variance must be at least {RHO_MIN:g}, got "
            f"noise_variance={noise:g} and signal_variance={signal:g}"
        )


class PartitionOperator(ABC):
    """``K̂`` through products, local or distributed: what the estimators ask of it."""

    @abstractmethod
    def cluster_sizes(self) -> np.ndarray:
        """Training points per cluster, over the clusters of all partitions."""

    @abstractmethod
    def variance_factors(
        self, rank: int, seed: int, signal: float, noise: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The two LOVE factors (clusters × ``rank``) of the predictive variances."""

    @abstractmethod
    def top_eigen(
        self, k: int, block: int, depth: int, tol: float, max_restarts: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
        """Top ``k`` eigenpairs of the centred kernel by restarted block Lanczos: values,
        vectors, residuals, block products and whether every pair converged."""


class GaussianSystem(ABC):
    """The GP's system on its centred training targets, local or distributed."""

    #: Whether the centred targets are not all zero (else nothing is fitted, nor warned of).
    has_signal: bool
    #: What :meth:`solve` solves for, in the words of the progress lines.
    unknowns: str

    @abstractmethod
    def likelihood(self, n_probes: int, steps: int, seed: int) -> MarginalLikelihood:
        """The marginal likelihood of every ``(s, σ²)``."""

    @abstractmethod
    def solve(self, signal: float, noise: float) -> tuple[np.ndarray, int, float, bool]:
        """The GP's coefficients by CG, stopped at ``‖r‖ ≤ tol ‖y − ȳ‖`` for the residual
        ``r`` of the training points' system: coefficients, iterations, the relative residual
        reached and whether it is within ``tol``."""

    @abstractmethod
    def quadratic(self, coef: np.ndarray, noise: float) -> float:
        """``(y − ȳ)ᵀ(s K̂ + σ² I)⁻¹(y − ȳ)`` from the solution ``coef``."""


class LocalOperator(PartitionOperator):
    """The operator of a kernel fitted in this process (``sample_weight``: the GP's row
    weights, which the LOVE decomposition reads)."""

    def __init__(
        self, kernel: RandomPartitionKernel, n_jobs: int, sample_weight: np.ndarray | None = None
    ) -> None:
        self.model, self.n_jobs, self.sample_weight = kernel.model_, n_jobs, sample_weight

    def cluster_sizes(self) -> np.ndarray:
        return self.model.cluster_sums(np.ones((self.model.n_points, 1)), self.n_jobs)[:, 0]

    def variance_factors(
        self, rank: int, seed: int, signal: float, noise: float
    ) -> tuple[np.ndarray, np.ndarray]:
        start = lanczos_start(self.cluster_sizes(), rank, seed)
        return _core.variance_factors(
            self.model, start, rank, seed, signal, noise, self.n_jobs, self.sample_weight
        )

    def top_eigen(
        self, k: int, block: int, depth: int, tol: float, max_restarts: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
        return _core.top_eigen(
            self.model, k, block, depth, tol, max_restarts, seed, True, self.n_jobs
        )


class LocalSystem(GaussianSystem):
    """The GP's system in the training points' space, solved by the kernel's preconditioned
    CG (:meth:`RandomPartitionKernel.solve`; ``sample_weight``: row weights v, noise σ²/v)."""

    unknowns = "the dual weights"

    def __init__(
        self,
        kernel: RandomPartitionKernel,
        centred: np.ndarray,
        sample_weight: np.ndarray | None,
        estimator: Any,
    ) -> None:
        self.kernel, self.centred, self.sample_weight = kernel, centred, sample_weight
        self.preconditioner, self.tol = estimator.preconditioner, estimator.tol
        self.max_iter, self.n_jobs = estimator.max_iter, estimator._threads()
        self.has_signal = bool(np.any(centred != 0))

    def likelihood(self, n_probes: int, steps: int, seed: int) -> MarginalLikelihood:
        model = self.kernel.model_
        return MarginalLikelihood(
            model, self.centred, n_probes, steps, seed, self.n_jobs, self.sample_weight
        )

    def solve(self, signal: float, noise: float) -> tuple[np.ndarray, int, float, bool]:
        coef, info = self.kernel.solve(
            self.centred,
            noise,
            signal,
            self.preconditioner,
            self.tol,
            self.max_iter,
            self.sample_weight,
        )
        residual, converged = float(info["residual"][0]), bool(info["converged"][0])
        return coef, int(info["iterations"][0]), residual, converged

    def quadratic(self, coef: np.ndarray, noise: float) -> float:
        return float(self.centred @ coef)


def fit_variances(
    estimator: Any, system: GaussianSystem, rng: np.random.RandomState, stages: StageTimer
) -> np.ndarray:
    """Choose the GP's variances left as None by marginal likelihood and solve for its
    coefficients (returned); sets ``signal_variance_``, ``noise_variance_``, ``n_iter_`` and,
    when a variance was chosen, ``log_marginal_likelihood_value_`` and ``_std_``.

    The search keeps ``σ²/s ≥ RHO_FLOOR``; when CG does not converge at the chosen ratio (the
    model there cannot be computed within ``max_iter``), it starts again ten times above it,
    up to a ratio of 100.
    """
    signal, noise = (
        None if v is None else float(v)
        for v in (estimator.signal_variance, estimator.noise_variance)
    )
    probe_seed = draw_seed(rng)
    estimator._variance_seed = draw_seed(rng)
    estimator._variance_cache = {}
    fixed, floor = (signal, noise), RHO_FLOOR
    if None in fixed:
        likelihood = system.likelihood(
            int(estimator.n_probes), int(estimator.lanczos_steps), probe_seed
        )
    while True:
        if None in fixed:
            signal, noise = likelihood.maximise(*fixed, floor)
            stages.done(f"chose s = {signal:.3g}, σ² = {noise:.3g} by marginal likelihood")
        assert signal is not None and noise is not None
        coef, iterations, residual, converged = system.solve(signal, noise)
        if converged or None not in fixed or noise / signal >= 1e2:
            break
        floor = 10.0 * noise / signal
    estimator.signal_variance_, estimator.noise_variance_ = float(signal), float(noise)
    estimator.n_iter_ = iterations
    stages.done(f"solved for {system.unknowns} in {iterations} CG iterations")
    if not converged and system.has_signal:
        warn(
            f"conjugate gradients stopped after {iterations} iterations with relative "
            f"residual {residual:.2e} > tol={estimator.tol}; raise max_iter",
            ConvergenceWarning,
        )
    if None in fixed:
        quadratic = system.quadratic(coef, noise)
        estimator.log_marginal_likelihood_value_ = likelihood.value(signal, noise, quadratic)
        estimator.log_marginal_likelihood_std_ = 0.5 * likelihood.logdet(noise / signal)[1]
    return coef


def warn_unconverged_variances(converged: np.ndarray) -> None:
    """The exact route's warning when some points' CG solves stopped at ``max_iter``."""
    if not converged.all():
        warn(
            "conjugate gradients did not converge for some predictive variances; raise max_iter",
            ConvergenceWarning,
        )


def fit_eigenpairs(
    estimator: Any, operator: PartitionOperator, rng: np.random.RandomState, stages: StageTimer
) -> np.ndarray:
    """The kernel PCA's top ``n_components`` eigenpairs by restarted block Lanczos (block
    ``max(n_components + 5, 2 n_components)`` unless ``block_size``): sets ``eigenvalues_``,
    ``residuals_`` and ``n_products_``, returns the eigenvectors."""
    k = int(estimator.n_components)
    block = max(k + 5, 2 * k) if estimator.block_size is None else int(estimator.block_size)
    values, vectors, residuals, products, converged = operator.top_eigen(
        k,
        block,
        int(estimator.krylov_depth),
        float(estimator.tol),
        int(estimator.max_restarts),
        draw_seed(rng),
    )
    stages.done(f"block Lanczos: {products} block products")
    if not converged:
        warn(
            f"block Lanczos stopped after {estimator.max_restarts} restarts with residuals "
            f"{np.max(residuals):.2e} > tol · λ₁; raise max_restarts",
            ConvergenceWarning,
        )
    estimator.eigenvalues_, estimator.residuals_ = values, residuals
    estimator.n_products_ = int(products)
    return vectors


class LanczosVarianceMixin:
    """The ``"lanczos"`` route of the GP's predictive variances, local or distributed: the
    LOVE factors (computed once per ``variance_rank``, kept until the next ``fit``) and the
    certified bounds from them. The estimator gives its operator (``_operator``) and new
    points' labels (``_new_labels``)."""

    kernel_: RandomPartitionKernel
    signal_variance_: float
    noise_variance_: float
    variance_rank: int
    _variance_seed: int

    if TYPE_CHECKING:  # the estimator's own (none here: a stub would hide a base class's)

        def _operator(self) -> PartitionOperator: ...

        def _new_labels(self, X: Any) -> tuple[np.ndarray, np.ndarray | None]: ...

        def _threads(self) -> int: ...

    def predict_std_bounds(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the exact predictive standard deviations from the
        ``"lanczos"`` route's decomposition (``variance_rank``): the upper bound is what
        ``predict(X, return_std=True)`` returns with ``variance="lanczos"``; the gap between
        the two bounds every error of that route (Galerkin approximations on one Krylov
        space).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).

        Returns
        -------
        lower : ndarray of shape (n_samples,)
            At most the exact predictive standard deviation.
        upper : ndarray of shape (n_samples,)
            At least the exact predictive standard deviation.
        """
        labels, weights = self._new_labels(X)
        model, threads = self.kernel_.model_, self._threads()
        s, noise = self.signal_variance_, self.noise_variance_
        upper_f, lower_f = self._variance_factors()
        lower, upper = lanczos_variances_from_rows(
            model.gather_sums(upper_f, threads, labels, weights),
            model.gather_sums(lower_f, threads, labels, weights),
            feature_norms(labels, weights),
            s,
            noise,
        )
        return np.sqrt(np.maximum(lower, noise)), np.sqrt(np.maximum(upper, noise))

    def _variance_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """The two LOVE factors of the ``"lanczos"`` route (clusters × rank each), computed
        on first use (``variance_rank`` dimensions; the start does not depend on the points
        predicted, so neither does any point's variance) and kept until the next ``fit``."""
        check_parameter("variance_rank", self.variance_rank, COUNT)
        rank = int(self.variance_rank)
        cache = self.__dict__.setdefault("_variance_cache", {})
        if rank not in cache:
            factors = self._operator().variance_factors(
                rank, self._variance_seed, self.signal_variance_, self.noise_variance_
            )
            cache.clear()
            cache[rank] = factors
        return cache[rank]
