"""Bayesian optimisation over a finite candidate set with a Mondrian-forest surrogate.

Lakshminarayanan, Roy & Teh (AISTATS 2016, §5.3): the surrogate is a Mondrian forest whose
predictive mean and standard deviation give the upper confidence bound
``UCB(x) = mean(x) + kappa · std(x)``; after each evaluation the forest is updated online with
``partial_fit`` (the trees' distribution is the same as refitting from scratch). The paper's
benchmarks, :func:`branin` and :func:`hartmann6`, are here too.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn._progress import progress_callback
from mondrian_learn.forest import MondrianForestRegressor

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
# Parameters of optimize() that it sets itself, so they cannot pass through to the forest.
_RESERVED_FOREST_PARAMS = ("random_state", "scale_features", "verbose")


def branin(X: Any) -> Any:
    """The Branin–Hoo function, minimum 0.397887 (at three points) on :data:`BRANIN_DOMAIN`.

    ``f(x) = (x₂ − 5.1x₁²/(4π²) + 5x₁/π − 6)² + 10(1 − 1/(8π))cos x₁ + 10``.

    Parameters
    ----------
    X : array-like of shape (2,) or (n_points, 2)

    Returns
    -------
    float or ndarray of shape (n_points,)

    Examples
    --------
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

    Returns
    -------
    float or ndarray of shape (n_points,)

    Examples
    --------
    >>> x = [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]
    >>> round(float(hartmann6(x)), 5)
    -3.32237
    """
    X = np.asarray(X, dtype=np.float64)
    squared = (X[..., None, :] - _HARTMANN6_P) ** 2
    return -np.exp(-(squared * _HARTMANN6_A).sum(axis=-1)) @ _HARTMANN6_ALPHA


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
    indices : ndarray of shape (n_evaluations,)
        Row of ``candidates`` of each evaluation (the first ``n_initial`` are the random
        initial design).
    timings : dict
        Seconds spent in ``func`` (``"evaluate"``), in fitting and updating the forest
        (``"update"``) and in predicting every candidate and picking the next
        (``"acquisition"``).
    """

    x_best: np.ndarray
    y_best: float
    X: np.ndarray
    y: np.ndarray
    best_so_far: np.ndarray
    indices: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)


def _check_count(name: str, value: Any, low: int, high: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value}")
    return int(value)


def _check_candidates(candidates: Any) -> np.ndarray:
    try:
        grid = np.asarray(candidates, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"candidates must be a 2-D array of numbers ({error})") from None
    if grid.ndim != 2 or grid.shape[0] == 0 or grid.shape[1] == 0:
        raise ValueError(
            f"candidates must be a non-empty 2-D array (n_candidates, n_features), "
            f"got shape {grid.shape}"
        )
    if not np.isfinite(grid).all():
        raise ValueError("candidates contain NaN or infinity")
    return grid


def _as_finite_number(value: Any) -> float | None:
    """``value`` as a float if it is one finite number (also a size-1 array), else None."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if array.size != 1 or not np.isfinite(array).all():
        return None
    return float(array.reshape(()))


def _forest(forest_params: dict[str, Any], seed: int) -> MondrianForestRegressor:
    reserved = sorted(set(forest_params) & set(_RESERVED_FOREST_PARAMS))
    if reserved:
        raise ValueError(
            f"{', '.join(reserved)} cannot be passed to the forest: optimize() sets them "
            "(random_state and verbose are optimize()'s own arguments)"
        )
    unknown = sorted(set(forest_params) - set(MondrianForestRegressor().get_params()))
    if unknown:
        raise ValueError(f"unknown MondrianForestRegressor parameter(s): {', '.join(unknown)}")
    params = {"n_estimators": 10, "min_samples_split": 2, **forest_params}
    return MondrianForestRegressor(scale_features=False, random_state=seed, **params)


def optimize(
    func: Callable[[np.ndarray], float],
    candidates: Any,
    n_evaluations: int,
    *,
    maximize: bool = False,
    kappa: float = 1.0,
    n_initial: int = 5,
    random_state: int | np.random.RandomState | None = None,
    verbose: int = 0,
    **forest_params: Any,
) -> OptimizationResult:
    """Minimise (or maximise) ``func`` over the rows of ``candidates`` by UCB search.

    The paper's §5.3 loop: ``n_initial`` candidates drawn uniformly at random without
    replacement; then, until ``n_evaluations`` calls, evaluate the unevaluated candidate with
    the best confidence bound under the Mondrian forest fitted so far (``mean + kappa·std``
    when maximising, ``mean − kappa·std`` when minimising: the same rule on ``−f``) and add
    its value with ``partial_fit``. The forest sees the candidates mapped to the unit box
    spanned by all of them, since that box, unlike the points evaluated so far, is known
    from the start.

    Parameters
    ----------
    func : callable
        Takes one candidate (1-D array of length n_features) and returns one finite number.
    candidates : array-like of shape (n_candidates, n_features)
        The search space, e.g. a random grid of 250,000 points as in the paper.
    n_evaluations : int
        Total number of calls to ``func``, the initial design included; at most
        ``n_candidates`` (no candidate is evaluated twice).
    maximize : bool, default=False
        Maximise instead of minimise.
    kappa : float, default=1.0
        Weight of the predictive standard deviation in the bound (the paper: 1).
    n_initial : int, default=5
        Size of the random initial design, in [1, n_evaluations].
    random_state : int, RandomState or None, default=None
        Seeds the initial design and the forest: a fixed value gives identical results.
    verbose : int, default=0
        Report progress over the evaluations (tqdm when installed, else lines on stderr).
    **forest_params
        Passed to :class:`~mondrian_learn.MondrianForestRegressor` (e.g. ``n_jobs``,
        ``gamma2``); defaults ``n_estimators=10``, ``min_samples_split=2`` as in the paper's
        experiment. ``random_state``, ``verbose`` and ``scale_features`` are set here.

    Returns
    -------
    OptimizationResult

    Raises
    ------
    ValueError
        On bad arguments, or when ``func`` returns anything but one finite number.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.bayesopt import optimize
    >>> grid = np.random.default_rng(0).uniform(-2, 2, size=(2000, 2))
    >>> result = optimize(lambda x: float(np.sum(x**2)), grid, 25, random_state=0)
    >>> result.y_best < 0.1
    True
    """
    if not callable(func):
        raise ValueError(f"func must be callable, got {type(func).__name__}")
    grid = _check_candidates(candidates)
    n_evaluations = _check_count("n_evaluations", n_evaluations, 1, len(grid))
    n_initial = _check_count("n_initial", n_initial, 1, n_evaluations)
    if not isinstance(kappa, numbers.Real) or not (np.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa!r}")
    rng = check_random_state(random_state)
    initial = rng.choice(len(grid), size=n_initial, replace=False)
    model = _forest(forest_params, int(rng.randint(np.iinfo(np.int32).max)))
    low, span = grid.min(axis=0), np.ptp(grid, axis=0)
    unit = np.ascontiguousarray((grid - low) / np.where(span > 0, span, 1.0))
    sign = -1.0 if maximize else 1.0  # the forest models sign · f, which is minimised
    timings = {"evaluate": 0.0, "update": 0.0, "acquisition": 0.0}

    def evaluate(index: int) -> float:
        start = time.perf_counter()
        returned = func(grid[index])
        timings["evaluate"] += time.perf_counter() - start
        value = _as_finite_number(returned)
        if value is None:
            raise ValueError(
                f"func must return one finite number, got {returned!r} at candidate {index}"
            )
        return value

    update, close = progress_callback(n_evaluations, "evaluations", verbose)
    try:
        chosen = [int(i) for i in initial]
        values = [evaluate(i) for i in chosen]
        update(len(chosen))
        start = time.perf_counter()
        model.fit(unit[chosen], sign * np.asarray(values))
        timings["update"] += time.perf_counter() - start
        # Evaluated candidates stay in the prediction and are masked: cheaper than copying
        # the unevaluated rows out of a large grid at every step.
        evaluated = np.zeros(len(grid), dtype=bool)
        evaluated[chosen] = True
        while len(chosen) < n_evaluations:
            start = time.perf_counter()
            mean, std = model.predict(unit, return_std=True)
            bound = mean - kappa * std
            bound[evaluated] = np.inf
            index = int(np.argmin(bound))
            timings["acquisition"] += time.perf_counter() - start
            value = evaluate(index)
            chosen.append(index)
            values.append(value)
            evaluated[index] = True
            start = time.perf_counter()
            model.partial_fit(unit[index : index + 1], np.array([sign * value]))
            timings["update"] += time.perf_counter() - start
            update(len(chosen))
    finally:
        close()
    y = np.asarray(values)
    best = np.maximum.accumulate(y) if maximize else np.minimum.accumulate(y)
    position = int(np.argmax(y) if maximize else np.argmin(y))
    indices = np.asarray(chosen, dtype=np.intp)
    return OptimizationResult(
        grid[indices[position]], float(y[position]), grid[indices], y, best, indices, timings
    )
