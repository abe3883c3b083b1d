"""The reference of the Mondrian grid's lifetime search (issue 17, item 2): exact kernel ridge
with the ARD Laplace kernel k(x, x') = exp(−Σ_d λ_d |x_d − x'_d|), its lifetimes chosen by the
same criterion as the grid's — the validation mean squared error — minimised over log λ by
scipy's L-BFGS-B with the exact gradient.

With a = (K + αI)⁻¹(y − ȳ), validation residuals r = ȳ + K_v a − y_v and
b = (K + αI)⁻¹ K_vᵀ r, ∂K/∂λ_d = −|Δ_d| ⊙ K gives

    ∂E/∂λ_d = (2/n_v) [ bᵀ(|Δ_d| ⊙ K) a − rᵀ(|Δ_d^v| ⊙ K_v) a ],

one Cholesky factor (O(N³)) and O(N² D) per evaluation; the N × N products are taken in row
blocks so that memory stays at one N × N matrix.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.spatial.distance import cdist

#: Rows per block of the gradient's N × N products.
BLOCK = 1024


class OutOfTime(Exception):
    """Raised inside the objective when the search's budget is spent."""


def _weighted_distance_sums(
    left: np.ndarray, X_left: np.ndarray, X: np.ndarray, lifetimes: np.ndarray, a: np.ndarray
) -> np.ndarray:
    """Σ_ij left_i |x_i,d − x_j,d| k(x_i, x_j) a_j for every d, rows of ``X_left`` against
    ``X``."""
    out = np.zeros(X.shape[1])
    for start in range(0, len(X_left), BLOCK):
        rows = slice(start, start + BLOCK)
        kernel = np.exp(-cdist(X_left[rows] * lifetimes, X * lifetimes, "cityblock"))
        kernel *= left[rows, None]
        kernel *= a[None, :]
        for d in range(X.shape[1]):
            out[d] += np.sum(kernel * np.abs(X_left[rows, d, None] - X[None, :, d]))
    return out


def validation_objective(
    X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, alpha: float
) -> Any:
    """``f(log λ) -> (validation MSE, gradient in log λ)`` of the exact ARD Laplace ridge."""
    mean, centred = float(y.mean()), y - y.mean()

    def objective(log_lifetimes: np.ndarray) -> tuple[float, np.ndarray]:
        lifetimes = np.exp(log_lifetimes)
        gram = np.exp(-cdist(X * lifetimes, X * lifetimes, "cityblock"))
        gram[np.diag_indices_from(gram)] += alpha
        factor = scipy.linalg.cho_factor(gram, overwrite_a=True, lower=True)
        a = scipy.linalg.cho_solve(factor, centred)
        cross = np.exp(-cdist(X_val * lifetimes, X * lifetimes, "cityblock"))
        residual = mean + cross @ a - y_val
        b = scipy.linalg.cho_solve(factor, cross.T @ residual)
        del gram, factor, cross
        gradient = _weighted_distance_sums(b, X, X, lifetimes, a)
        gradient -= _weighted_distance_sums(residual, X_val, X, lifetimes, a)
        gradient *= 2.0 / len(y_val)
        return float(np.mean(residual**2)), gradient * lifetimes

    return objective


def ard_search(
    X: np.ndarray,
    y: np.ndarray,
    X_val: np.ndarray,
    y_val: np.ndarray,
    alpha: float,
    start: np.ndarray,
    budget_s: float,
    bounds: tuple[float, float] = (1e-3, 1e3),
    max_evaluations: int = 200,
) -> dict[str, np.ndarray]:
    """L-BFGS-B over log λ from ``start`` until it converges, ``max_evaluations`` or
    ``budget_s`` seconds; per evaluation: ``time`` (seconds since the start), ``mse`` and
    ``lifetimes``."""
    objective = validation_objective(X, y, X_val, y_val, alpha)
    record: dict[str, list[Any]] = {"time": [], "mse": [], "lifetimes": []}
    began = time.perf_counter()

    def timed(theta: np.ndarray) -> tuple[float, np.ndarray]:
        if time.perf_counter() - began > budget_s:
            raise OutOfTime
        value, gradient = objective(theta)
        record["time"].append(time.perf_counter() - began)
        record["mse"].append(value)
        record["lifetimes"].append(np.exp(theta))
        return value, gradient

    low, high = np.log(bounds[0]), np.log(bounds[1])
    try:
        scipy.optimize.minimize(
            timed,
            np.log(np.asarray(start, dtype=np.float64)),
            jac=True,
            method="L-BFGS-B",
            bounds=[(low, high)] * X.shape[1],
            options={"maxfun": max_evaluations},
        )
    except OutOfTime:
        pass
    return {name: np.asarray(values) for name, values in record.items()}
