"""The Mondrian kernel's log marginal likelihood with both variances estimated.

The Bayesian view of the kernel ridge (Balog et al., UAI 2016, supplement B) is the GP
``y − ȳ ~ N(0, s² K + σ² I)``, ``K = ΦΦᵀ`` the Mondrian kernel estimate at lifetime λ. The ridge
fixes the ratio ``α = σ²/s²`` and profiles σ² (:class:`MondrianKernelRidge`); on data whose
features cannot fit y down to its noise that makes the weights' prior σ̂²/α far too broad, and
the evidence then prefers the fewest features (λ = 0 on the kernel paper's Fig. 7 data). Here
both are estimated at every λ: with the spectrum of K — eigenvalues ``e_i`` and projections
``p_i = u_iᵀ(y − ȳ)`` over its ``r`` non-zero directions, and the rest ``R`` of ‖y − ȳ‖² in its
null space —

    log p(ρ, s²) = −½ [N log(2π s²) + Σ_i log(e_i + ρ) + (N − r) log ρ
                       + (Σ_i p_i²/(e_i + ρ) + R/ρ) / s²],   ρ = σ²/s²,

s² is profiled in closed form (ŝ² = (Σ p_i²/(e_i + ρ) + R/ρ)/N) and ρ found by a bounded 1-D
search in log space. The spectrum comes from the smaller of ΦΦᵀ (N × N) and ΦᵀΦ (C × C)
(p_i = v_iᵀΦᵀy/√e_i for the eigenvectors v_i of ΦᵀΦ): O(min(N, C)³) per lifetime.

Row weights w_i (``sample_weight``, as the kernel ridge reads them) make row i's noise σ²/w_i:
the formula holds for √W(y − ȳ) and √W Φ, ȳ the weighted mean, and log p gains the Jacobian
½ Σ log w_i.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
from scipy.optimize import minimize_scalar

from mondrian_learn._points import CorePoints

#: Search range of ρ = σ²/s², relative to the kernel's scale (K(x, x) = 1).
RATIO_BOUNDS = (1e-8, 1e6)

#: Eigenvalues below this fraction of the largest count as zero (the null space of K).
RANK_TOLERANCE = 1e-10

#: The largest min(N, C) at which a checkpoint's evidence is computed: its eigendecomposition
#: costs O(min(N, C)³) (about 2 s at 2,048 on two cores).
EVIDENCE_MAX_SIZE = 2048


def kernel_spectrum(phi: Any, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(eigenvalues e, squared projections p², null-space rest R) of K = ΦΦᵀ and the centred
    targets ``y`` (module docs); ``phi`` is the N × C feature matrix (sparse or dense)."""
    phi = scipy.sparse.csr_matrix(phi)
    n, c = phi.shape
    total = float(y @ y)
    if n <= c:
        values, vectors = np.linalg.eigh((phi @ phi.T).toarray())
        projections = vectors.T @ y
    else:
        values, vectors = np.linalg.eigh((phi.T @ phi).toarray())
        keep = values > RANK_TOLERANCE * max(values.max(initial=0.0), 1e-300)
        values, vectors = values[keep], vectors[:, keep]
        projections = (vectors.T @ (phi.T @ y)) / np.sqrt(values)
    keep = values > RANK_TOLERANCE * max(values.max(initial=0.0), 1e-300)
    values, squares = values[keep], projections[keep] ** 2
    return values, squares, max(total - float(squares.sum()), 0.0)


def profiled_log_evidence(
    values: np.ndarray, squares: np.ndarray, rest: float, n: int
) -> tuple[float, float, float]:
    """max over (ρ, s²) of log p (module docs) from a spectrum: (log p, ρ̂ = σ̂²/ŝ², ŝ²)."""
    rank = len(values)

    def negative(log_ratio: float) -> tuple[float, float]:
        ratio = np.exp(log_ratio)
        quadratic = float(np.sum(squares / (values + ratio))) + rest / ratio
        signal = max(quadratic / n, np.finfo(float).tiny)
        log_det = float(np.sum(np.log(values + ratio))) + (n - rank) * log_ratio
        return 0.5 * (n * np.log(2 * np.pi * signal) + log_det + n), signal

    bounds = np.log(RATIO_BOUNDS)
    # A coarse grid first: the criterion can have several local optima in log ρ.
    grid = np.linspace(bounds[0], bounds[1], 41)
    start = int(np.argmin([negative(t)[0] for t in grid]))
    low, high = grid[max(start - 1, 0)], grid[min(start + 1, len(grid) - 1)]
    result = minimize_scalar(lambda t: negative(t)[0], bounds=(low, high), method="bounded")
    best = float(result.x) if result.fun <= negative(grid[start])[0] else float(grid[start])
    value, signal = negative(best)
    return -value, float(np.exp(best)), signal


def centre(y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``y`` minus its (weighted) mean."""
    return y - (y.mean() if weights is None else np.average(y, weights=weights))


def weighted_evidence(
    phi: Any, centred: np.ndarray, weights: np.ndarray | None
) -> tuple[float, float, float]:
    """:func:`profiled_log_evidence` of the N × C features ``phi`` and the centred targets
    ``centred`` (:func:`centre`), the rows weighted by ``weights`` (module docs; None: all 1)."""
    n = phi.shape[0]
    if weights is None:
        return profiled_log_evidence(*kernel_spectrum(phi, centred), n)
    root = np.sqrt(weights)
    rows = scipy.sparse.diags(root) @ scipy.sparse.csr_matrix(phi)
    value, ratio, signal = profiled_log_evidence(*kernel_spectrum(rows, root * centred), n)
    return value + 0.5 * float(np.log(weights).sum()), ratio, signal


def path_evidence(
    features: Any,
    X: CorePoints,
    y: np.ndarray,
    lifetimes: np.ndarray,
    max_size: int,
    n_jobs: int,
    weights: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """:func:`weighted_evidence` at each lifetime of ``lifetimes`` on the features of ``X``
    (points as the core reads them, with their map) by the core ``KernelFeatures``
    ``features``, targets ``y`` (centred here) and row weights ``weights``; NaN where
    min(N, C) exceeds ``max_size``.

    Returns
    -------
    evidence : dict of arrays
        ``log_evidence_profiled``, ``alpha`` (ρ̂ = σ̂²/ŝ²), ``signal_variance`` (ŝ²) and
        ``noise_variance`` (ρ̂ ŝ²), one value per lifetime.
    """
    centred = centre(y, weights)
    n = len(y)
    names = ("log_evidence_profiled", "alpha", "signal_variance")
    out = {name: np.full(len(lifetimes), np.nan) for name in names}
    for k, lifetime in enumerate(lifetimes):
        if min(n, features.n_columns(float(lifetime))) > max_size:
            continue
        data, indices, indptr, n_columns = features.transform(X, n_jobs, float(lifetime))
        phi = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n_columns))
        value, ratio, signal = weighted_evidence(phi, centred, weights)
        out["log_evidence_profiled"][k], out["alpha"][k] = value, ratio
        out["signal_variance"][k] = signal
    out["noise_variance"] = out["alpha"] * out["signal_variance"]
    return out
