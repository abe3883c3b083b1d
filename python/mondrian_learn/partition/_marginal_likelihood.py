"""Stochastic Lanczos quadrature for Gaussian-process marginal likelihoods on operators that are
only available through products (Ubaru, Chen & Saad 2017; Dong et al. 2017).

For a symmetric positive semi-definite ``K`` and a start ``u``, ``m`` Lanczos steps give a
tridiagonal ``T`` whose eigenvalues ``θ_j`` and squared first eigenvector components ``τ_j²``
are the nodes and weights of the ``m``-point Gauss quadrature of ``u``'s spectral measure:
``uᵀ f(K) u ≈ ‖u‖² Σ_j τ_j² f(θ_j)``, exact for polynomials of degree < 2m. Krylov spaces are
shift-invariant, so one run on ``K`` serves ``f(x) = 1/(x + ρ)`` and ``log(x + ρ)`` for every
shift ``ρ``: one run on the targets and on ``n_v`` Rademacher probes (entries ±1) gives

- ``yᵀ (K + ρI)⁻¹ y`` (the start ``y``), and
- ``log det(K + ρI) = tr log(K + ρI) ≈ (1/n_v) Σ_v z_vᵀ log(K + ρI) z_v`` (Hutchinson).

The Hutchinson estimator is unbiased; with Rademacher probes its variance is
``(2/n_v) (‖log(K + ρI)‖_F² − Σ_i log(K + ρI)_ii²)``, reported through the probes' sample
standard error. The quadrature adds a bias that falls geometrically with the number of steps.

The core only runs the Lanczos recurrences (the products); the tiny tridiagonal eigenproblems
and the one-dimensional searches below take microseconds.

Up to ``EXACT_MAX_POINTS`` points the criterion is exact instead: one dense eigendecomposition
``K = Q Θ Qᵀ`` gives ``yᵀ(K + ρI)⁻¹y = Σ_j (q_jᵀy)²/(θ_j + ρ)`` and ``log det(K + ρI) =
Σ_j log(θ_j + ρ)`` for every ρ (O(N³) once: 0.2 s at N = 1,000), with no estimation error.

Row weights v (the GP's ``sample_weight``, frequency weights: an integer weight is the row
repeated) turn K into ``D K D`` and y into ``D y`` (``D = diag(√v)``): for repeated rows
``log det(s K_rep + σ²I) = log det(s DKD + σ²I) + (Σv − N) log σ²`` (Sylvester) and the data
term is ``(Dy)ᵀ(s DKD + σ²I)⁻¹(Dy)``, so the criterion is that of the repeated data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import eigh_tridiagonal
from scipy.optimize import minimize_scalar

from mondrian_learn import _core


def gauss_nodes(alpha: np.ndarray, beta: np.ndarray, norm2: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``θ_j`` (clipped at 0: the operator is PSD, rounding is not) and weights
    ``‖u‖² τ_j²`` of the Gauss quadrature from a Lanczos tridiagonal."""
    if len(alpha) == 1:
        return np.maximum(alpha, 0.0), np.array([norm2])
    theta, vectors = eigh_tridiagonal(alpha, beta)
    return np.maximum(theta, 0.0), norm2 * vectors[0] ** 2


#: Largest number of training points for which the criterion is computed exactly (dense).
EXACT_MAX_POINTS = 1000


class MarginalLikelihood:
    """``log p(y | s, σ²)`` of a zero-mean GP with covariance ``s K + σ² I`` for every
    ``(s, σ²)`` from one Lanczos run on ``K`` (see the module notes).

    With ``ρ = σ²/s``: ``yᵀ(sK + σ²I)⁻¹y = yᵀ(K + ρI)⁻¹y / s`` and
    ``log det(sK + σ²I) = N log s + log det(K + ρI)``.

    Parameters
    ----------
    model : mondrian_learn._core.PartitionKernel
        The kernel ``K`` (``_core.lanczos`` runs the recurrences on it).
    y : ndarray of shape (N,)
        Centred targets.
    n_probes, steps : int
        Rademacher probes and Lanczos steps per start.
    seed : int
        Seed of the probes.
    n_jobs : int
    weights : ndarray of shape (N,) or None
        Row weights (module notes).
    """

    def __init__(
        self,
        model: Any,
        y: np.ndarray,
        n_probes: int,
        steps: int,
        seed: int,
        n_jobs: int,
        weights: np.ndarray | None = None,
    ) -> None:
        n = y.shape[0]
        self.n = n
        self.total = n if weights is None else float(np.sum(weights))
        if weights is not None:
            y = np.sqrt(weights) * y
        self.exact = n <= EXACT_MAX_POINTS
        if self.exact:
            gram = model.matmul(np.eye(n), n_jobs)
            if weights is not None:
                root = np.sqrt(weights)
                gram = root[:, None] * gram * root[None, :]
            theta, vectors = np.linalg.eigh(0.5 * (gram + gram.T))
            theta = np.maximum(theta, 0.0)
            self._y = (theta, (vectors.T @ y) ** 2)
            self._probes = [(theta, np.ones(n))]
            self.steps_run = [n]
            return
        self._quadrature(
            lambda starts, steps: _core.lanczos(model, starts, steps, n_jobs, weights),
            y,
            n_probes,
            steps,
            seed,
        )

    def _quadrature(
        self, lanczos: Any, start: np.ndarray, n_probes: int, steps: int, seed: int
    ) -> None:
        """Gauss quadrature nodes from one Lanczos run ``lanczos(starts, steps)`` on the
        operator from ``start`` (the data-fit term's) and from ``n_probes`` Rademacher probes
        (the log-determinant's) of the seed ``seed``."""
        dim = start.shape[0]
        probes = np.random.default_rng(seed).integers(0, 2, size=(dim, n_probes)) * 2.0 - 1.0
        starts = np.ascontiguousarray(np.column_stack([start, probes]))
        norms2 = np.einsum("ij,ij->j", starts, starts)
        if norms2[0] == 0:
            # y ≡ 0: the data-fit term vanishes; any start gives the log-determinant.
            starts[:, 0] = probes[:, 0]
        # Lanczos on a dim × dim operator is exact after dim steps: more would only cost
        # memory (the quadrature's eigen-decomposition is steps × steps).
        tri = lanczos(starts, min(int(steps), dim))
        nodes = [gauss_nodes(a, b, w) for (a, b), w in zip(tri, norms2)]
        self._y = nodes[0] if norms2[0] > 0 else (np.zeros(1), np.zeros(1))
        self._probes = nodes[1:]
        self.steps_run = [len(a) for a, _ in tri]

    def quadratic(self, rho: float) -> float:
        """``yᵀ (K + ρI)⁻¹ y``."""
        theta, w = self._y
        return float(np.sum(w / (theta + rho)))

    def logdet_samples(self, rho: float) -> np.ndarray:
        """Each probe's estimate of ``log det(K + ρI)``."""
        return np.array([np.sum(w * np.log(theta + rho)) for theta, w in self._probes])

    def logdet(self, rho: float) -> tuple[float, float]:
        """Estimate of ``log det(K + ρI)`` and its standard error over the probes (0 when
        exact)."""
        samples = self.logdet_samples(rho)
        if self.exact:
            return float(samples[0]), 0.0
        error = samples.std(ddof=1) / np.sqrt(len(samples)) if len(samples) > 1 else np.inf
        return float(samples.mean()), float(error)

    def value(self, signal: float, noise: float, quadratic: float | None = None) -> float:
        """``log p(y | s, σ²)``; ``quadratic`` overrides ``yᵀ(sK + σ²I)⁻¹y`` (e.g. from CG).
        With weights, the repeated rows' term ``−(Σv − N)/2 · log(2πσ²)`` is added."""
        rho = noise / signal
        q = self.quadratic(rho) / signal if quadratic is None else quadratic
        logdet = self.n * np.log(signal) + self.logdet(rho)[0]
        value = -0.5 * q - 0.5 * logdet - 0.5 * self.n * np.log(2 * np.pi)
        if self.total != self.n:
            value -= 0.5 * (self.total - self.n) * np.log(2 * np.pi * noise)
        return float(value)

    def maximise(
        self, signal: float | None, noise: float | None, rho_floor: float = 1e-6
    ) -> tuple[float, float]:
        """The ``(s, σ²)`` of highest marginal likelihood, each searched on a log scale when
        None (fixed otherwise), with the noise-to-signal ratio ``ρ = σ²/s`` in
        ``[max(1e-6, rho_floor), 1e3]``. With both free, ``s`` is profiled out:
        ``ŝ(ρ) = yᵀ(K + ρI)⁻¹y / N`` (``Σv`` instead of N with weights).

        ``rho_floor`` exists because the Lanczos estimates degrade as ρ → 0: K̂ is close to
        singular (its rank is at most the number of clusters), the few Gauss nodes cannot
        resolve its small eigenvalues, and the estimated criterion can keep rising towards the
        lower end while the system (s K̂ + σ² I) α = y becomes too ill-conditioned for CG."""
        if signal is not None and noise is not None:
            return signal, noise
        low = max(1e-6, rho_floor)
        if signal is None and noise is None:

            def loss(log_rho: float) -> float:
                rho = np.exp(log_rho)
                s = max(self.quadratic(rho) / self.total, np.finfo(float).tiny)
                return -self.value(s, rho * s)

            log_rho = _search(loss, np.log(low), np.log(1e3))
            rho = float(np.exp(log_rho))
            s = max(self.quadratic(rho) / self.total, np.finfo(float).tiny)
            return s, rho * s
        if signal is not None:
            log_noise = _search(
                lambda t: -self.value(signal, float(np.exp(t))),
                *_log_range("signal_variance", signal, "noise_variance", low, 1e3),
            )
            return signal, float(np.exp(log_noise))
        assert noise is not None
        log_signal = _search(
            lambda t: -self.value(float(np.exp(t)), noise),
            *_log_range("noise_variance", noise, "signal_variance", 1e-3, 1.0 / low),
        )
        return float(np.exp(log_signal)), noise


def _log_range(
    name: str, value: float, searched: str, low: float, high: float
) -> tuple[float, float]:
    """``log(value · low), log(value · high)``: where the variance ``searched`` is looked for
    relative to the fixed ``name=value``; a ValueError naming both when that range leaves the
    floats (``value`` so large or small that ``value · high`` overflows or ``value · low`` is
    0 or subnormal)."""
    lo, hi = value * low, value * high
    if not (np.isfinite(hi) and lo >= np.finfo(float).tiny):
        raise ValueError(
            f"{name}={value:g} is too {'large' if not np.isfinite(hi) else 'small'}: "
            f"{searched} is searched on [{low:g}, {high:g}] × {name}, which leaves the "
            f"range of float64; fix {searched} as well, or give {name} a value nearer the "
            "variance of y"
        )
    return float(np.log(lo)), float(np.log(hi))


def _search(loss: Any, lo: float, hi: float) -> float:
    """Minimiser of a 1-D function on ``[lo, hi]``: the best of 91 grid points, refined by
    bounded Brent between its neighbours (the loss may have several local minima)."""
    grid = np.linspace(lo, hi, 91)
    values = np.array([loss(t) for t in grid])
    best = int(np.nanargmin(values))
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    if right <= left:
        return float(grid[best])
    res = minimize_scalar(loss, bounds=(left, right), method="bounded", options={"xatol": 1e-6})
    return float(res.x) if res.fun <= values[best] else float(grid[best])


class ClusterSpaceLikelihood(MarginalLikelihood):
    """The same criterion from Lanczos runs on the clusters' Gram matrix ``M = GᵀG/m``
    (``C × C``, ``G`` the training points' one-hot labels, ``K = GGᵀ/m``) instead of on ``K``
    (``N × N``): for hard partitions spread over machines, where the solvers' vectors are kept
    per cluster. With ``c = Gᵀy/m``, the push-through identity
    ``(K + ρI)⁻¹ = (I − G (M + ρI)⁻¹ Gᵀ/m)/ρ`` and Sylvester's determinant theorem give

    - ``yᵀ(K + ρI)⁻¹y = (‖y‖² − m cᵀ(M + ρI)⁻¹c)/ρ`` (Gauss quadrature from the start ``c``),
    - ``log det(K + ρI) = (N − C) log ρ + log det(M + ρI)`` (Hutchinson with ``C``-entry
      Rademacher probes).

    Parameters
    ----------
    lanczos : callable
        ``lanczos(starts, steps)`` → Lanczos tridiagonals of ``M`` from each column of
        ``starts`` (``_core.operator_lanczos`` on the distributed product).
    c : ndarray of shape (C,)
        ``Gᵀy/m`` for the centred targets y.
    y_norm2 : float
        ``‖y‖²``.
    n_points, n_partitions : int
        N and m.
    n_probes, steps, seed : int
        Probes, Lanczos steps per start (at most C are run) and the probes' seed.
    """

    def __init__(
        self,
        lanczos: Any,
        c: np.ndarray,
        y_norm2: float,
        n_points: int,
        n_partitions: int,
        n_probes: int,
        steps: int,
        seed: int,
    ) -> None:
        clusters = len(c)
        self.n, self.total, self.exact = n_points, float(n_points), False
        self.n_clusters, self.n_partitions, self.y_norm2 = clusters, n_partitions, y_norm2
        self._quadrature(lanczos, c, n_probes, steps, seed)

    def quadratic(self, rho: float) -> float:
        """``yᵀ (K + ρI)⁻¹ y``."""
        theta, w = self._y
        fitted = self.n_partitions * float(np.sum(w / (theta + rho)))
        return max(self.y_norm2 - fitted, 0.0) / rho

    def logdet_samples(self, rho: float) -> np.ndarray:
        """Each probe's estimate of ``log det(K + ρI)``."""
        free = (self.n - self.n_clusters) * np.log(rho)
        return np.array([free + np.sum(w * np.log(theta + rho)) for theta, w in self._probes])
