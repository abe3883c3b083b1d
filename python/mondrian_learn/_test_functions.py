"""The test functions of the Bayesian-optimisation benchmarks in Lakshminarayanan, Roy & Teh
(AISTATS 2016, §5.3, Table 3): Branin–Hoo (2-D) and Hartmann-6 (6-D), with their standard
domains. :mod:`mondrian_learn.bayesopt` re-exports them."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Standard domain of :func:`branin`: x₁ ∈ [−5, 10], x₂ ∈ [0, 15].
BRANIN_DOMAIN = np.array([[-5.0, 10.0], [0.0, 15.0]])
#: Standard domain of :func:`hartmann6`: the unit cube [0, 1]⁶.
HARTMANN6_DOMAIN = np.array([[0.0, 1.0]] * 6)

_HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_HARTMANN6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def branin(X: Any) -> Any:
    """The Branin–Hoo function, minimum 0.397887 (at three points) on :data:`BRANIN_DOMAIN`.

    ``f(x) = (x₂ − 5.1x₁²/(4π²) + 5x₁/π − 6)² + 10(1 − 1/(8π))cos x₁ + 10``.

    Parameters
    ----------
    X : array-like of shape (2,) or (n_points, 2)
        Point(s) in the function's domain.

    Returns
    -------
    value : float or ndarray of shape (n_points,)
        The function at each point.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(branin([np.pi, 2.275])), 6)
    0.397887
    """
    X = np.asarray(X, dtype=np.float64)
    x1, x2 = X[..., 0], X[..., 1]
    quadratic = x2 - 5.1 / (4 * np.pi**2) * x1**2 + 5 / np.pi * x1 - 6
    return quadratic**2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x1) + 10


def hartmann6(X: Any) -> Any:
    """The 6-D Hartmann function, minimum −3.32237 on the unit cube :data:`HARTMANN6_DOMAIN`.

    ``f(x) = −Σᵢ αᵢ exp(−Σⱼ Aᵢⱼ (xⱼ − Pᵢⱼ)²)`` with the standard constants.

    Parameters
    ----------
    X : array-like of shape (6,) or (n_points, 6)
        Point(s) in the function's domain.

    Returns
    -------
    value : float or ndarray of shape (n_points,)
        The function at each point.

    Examples
    --------
    >>> x = [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]
    >>> round(float(hartmann6(x)), 5)
    -3.32237
    """
    X = np.asarray(X, dtype=np.float64)
    squared = (X[..., None, :] - _HARTMANN6_P) ** 2
    return -np.exp(-(squared * _HARTMANN6_A).sum(axis=-1)) @ _HARTMANN6_ALPHA
