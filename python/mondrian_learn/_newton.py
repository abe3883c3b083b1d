"""Newton's method in a box, for searches of a few variables whose derivatives are exact
(analytic) or taken by differences (a smooth function costly to evaluate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: Longest step (in the variables' own units: log scales and ρ for the forest's searches).
MAX_STEP = 2.0


def newton_in_box(
    f: Callable[[np.ndarray, bool], tuple[float, Any, Any]],
    x: np.ndarray,
    bounds: np.ndarray,
    tolerance: float = 1e-13,
    max_steps: int = 100,
) -> tuple[float, np.ndarray]:
    """(min f, argmin) in the box ``bounds`` (rows (low, high)) by projected Newton steps
    from ``x``: variables at a bound that the gradient pushes outward stay there, the others
    take the Newton step (a long step downhill along negative curvature), halved
    until f decreases enough (Armijo); it stops when a step would gain less than
    ``tolerance`` relative to f. ``f(x, derivatives)`` returns (value, gradient, Hessian),
    the last two only needed when ``derivatives``."""
    low, high = bounds[:, 0], bounds[:, 1]
    value, gradient, hessian = f(x, True)
    for _ in range(max_steps):
        if not (np.isfinite(value) and np.all(np.isfinite(hessian))):
            break
        free = ~(((x <= low) & (gradient > 0)) | ((x >= high) & (gradient < 0)))
        if not free.any():
            break
        step = np.zeros_like(x)
        g, h = gradient[free], hessian[np.ix_(free, free)]
        # Newton's step along the Hessian's directions of positive curvature; along those of
        # negative (or no) curvature, where the quadratic model has no minimum, ``MAX_STEP``
        # downhill; the whole step at most ``MAX_STEP`` long, then halved as needed.
        eigenvalues, vectors = np.linalg.eigh(h)
        along = vectors.T @ g
        floor = 1e-8 * float(np.max(np.abs(eigenvalues)))
        curved = eigenvalues > floor
        along = np.where(
            curved, along / np.where(curved, eigenvalues, 1.0), MAX_STEP * np.sign(along)
        )
        step[free] = -vectors @ along
        step *= min(1.0, MAX_STEP / max(float(np.linalg.norm(step)), 1e-300))
        if -float(gradient @ step) <= tolerance * (1 + abs(value)):
            break  # the step would gain less than the tolerance: x is the minimum
        t = 1.0
        while t > 1e-12:
            moved = np.clip(x + t * step, low, high)
            trial = f(moved, False)[0]
            if np.isfinite(trial) and trial <= value + 1e-4 * float(gradient @ (moved - x)):
                break
            t /= 2
        else:
            break  # no decrease along the step: x is a minimum to rounding
        x, (value, gradient, hessian) = moved, f(moved, True)
    return float(value), x


def differenced(
    f: Callable[[np.ndarray], float], h: float = 1e-3
) -> Callable[[np.ndarray, bool], tuple[float, Any, Any]]:
    """``f`` with its gradient (central differences) and Hessian (second differences) at
    step ``h``: 1 + n (n + 3) / 2 evaluations in n variables. The profile is smooth to
    about 1e-13, so the second differences are good to about 1e-7."""

    def with_derivatives(x: np.ndarray, derivatives: bool) -> tuple[float, Any, Any]:
        centre = f(x)
        if not derivatives:
            return centre, None, None
        n = x.size
        unit = np.eye(n) * h
        plus = np.array([f(x + unit[i]) for i in range(n)])
        minus = np.array([f(x - unit[i]) for i in range(n)])
        hessian = np.diag((plus - 2 * centre + minus) / h**2)
        for i in range(n):
            for j in range(i):
                both = f(x + unit[i] + unit[j])
                hessian[i, j] = hessian[j, i] = (both - plus[i] - plus[j] + centre) / h**2
        return centre, (plus - minus) / (2 * h), hessian

    return with_derivatives
