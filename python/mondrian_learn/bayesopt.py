"""Bayesian optimisation over a finite candidate set with a Mondrian-forest surrogate.

Lakshminarayanan, Roy & Teh (AISTATS 2016, §5.3): the surrogate is a Mondrian forest whose
predictive mean and standard deviation give the upper confidence bound
``UCB(x) = mean(x) + kappa · std(x)``; after each evaluation the forest is updated online with
``partial_fit`` (the trees' distribution is the same as refitting from scratch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn.forest import MondrianForestRegressor


@dataclass
class OptimizationResult:
    """What :func:`optimize` found.

    Attributes
    ----------
    x_best : ndarray of shape (n_features,)
        The best evaluated candidate.
    y_best : float
        Its value.
    X : ndarray of shape (n_evaluations, n_features)
        Every evaluated candidate, in order.
    y : ndarray of shape (n_evaluations,)
        Their values.
    best_so_far : ndarray of shape (n_evaluations,)
        The best value after each evaluation.
    """

    x_best: np.ndarray
    y_best: float
    X: np.ndarray
    y: np.ndarray
    best_so_far: np.ndarray


def optimize(
    func: Callable[[np.ndarray], float],
    candidates: Any,
    n_evaluations: int,
    *,
    maximize: bool = False,
    n_initial: int = 5,
    kappa: float = 1.0,
    random_state: int | np.random.RandomState | None = None,
    **forest_params: Any,
) -> OptimizationResult:
    """Minimise (or maximise) ``func`` over the rows of ``candidates``.

    The first ``n_initial`` candidates are drawn uniformly at random; then each step
    evaluates the unevaluated candidate with the best confidence bound (``mean + kappa·std``
    when maximising, ``mean − kappa·std`` when minimising) under the Mondrian forest fitted to
    the values so far, and adds the new value with ``partial_fit``.

    Parameters
    ----------
    func : callable
        Takes one candidate (1-D array) and returns a finite float.
    candidates : array-like of shape (n_candidates, n_features)
        The search space (e.g. a random grid).
    n_evaluations : int
        Total number of calls to ``func`` (initial ones included).
    maximize : bool, default=False
    n_initial : int, default=5
    kappa : float, default=1.0
        Weight of the standard deviation in the confidence bound.
    random_state : int, RandomState or None
        Seeds the initial design and the forest.
    **forest_params
        Passed to :class:`MondrianForestRegressor` (default: 10 trees,
        ``min_samples_split=2`` as in the paper's experiment).

    Returns
    -------
    OptimizationResult

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.bayesopt import optimize
    >>> grid = np.random.default_rng(0).uniform(-2, 2, size=(2000, 2))
    >>> result = optimize(lambda x: float(np.sum(x**2)), grid, 25, random_state=0)
    >>> result.y_best < 0.1
    True
    """
    grid = np.asarray(candidates, dtype=np.float64)
    if grid.ndim != 2 or len(grid) == 0 or not np.isfinite(grid).all():
        raise ValueError("candidates must be a non-empty 2-D array of finite numbers")
    if not 1 <= n_initial <= n_evaluations <= len(grid):
        raise ValueError(
            "need 1 <= n_initial <= n_evaluations <= number of candidates, got "
            f"n_initial={n_initial}, n_evaluations={n_evaluations}, candidates={len(grid)}"
        )
    if not np.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa!r}")
    rng = check_random_state(random_state)
    # The candidate box is known, so scale to it once instead of to the first points seen.
    low, span = grid.min(axis=0), np.ptp(grid, axis=0)
    unit = (grid - low) / np.where(span > 0, span, 1.0)
    params = {"n_estimators": 10, "min_samples_split": 2, **forest_params}
    params.setdefault("random_state", rng.randint(np.iinfo(np.int32).max))
    model = MondrianForestRegressor(scale_features=False, **params)
    sign = -1.0 if maximize else 1.0  # minimise sign · f

    def evaluate(i: int) -> float:
        value = float(func(grid[i]))
        if not np.isfinite(value):
            raise ValueError(f"func returned {value} at candidate {i}")
        return value

    chosen = list(rng.choice(len(grid), size=n_initial, replace=False))
    values = [evaluate(i) for i in chosen]
    model.fit(unit[chosen], sign * np.asarray(values))
    available = np.ones(len(grid), dtype=bool)
    available[chosen] = False
    while len(chosen) < n_evaluations:
        mean, std = model.predict(unit[available], return_std=True)
        index = np.flatnonzero(available)[np.argmin(mean - kappa * std)]
        value = evaluate(index)
        chosen.append(index)
        values.append(value)
        available[index] = False
        model.partial_fit(unit[index : index + 1], np.array([sign * value]))
    y = np.asarray(values)
    best = np.maximum.accumulate(y) if maximize else np.minimum.accumulate(y)
    position = int(np.argmax(y) if maximize else np.argmin(y))
    return OptimizationResult(grid[chosen[position]], float(y[position]), grid[chosen], y, best)
