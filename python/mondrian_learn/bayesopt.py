"""Bayesian optimisation over a finite candidate set with a Mondrian-forest surrogate.

Lakshminarayanan, Roy & Teh (AISTATS 2016, §5.3): the surrogate is a Mondrian forest whose
predictive mean and standard deviation give the upper confidence bound
``UCB(x) = mean(x) + kappa · std(x)``; after each evaluation the forest is updated online with
``partial_fit`` (the trees' distribution is the same as refitting from scratch). The paper's
benchmarks, :func:`branin` and :func:`hartmann6`, are here too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn._progress import progress_callback
from mondrian_learn._test_functions import BRANIN_DOMAIN, HARTMANN6_DOMAIN, branin, hartmann6
from mondrian_learn._validation import Integer, IsCallable, Real, check_parameter, draw_seed
from mondrian_learn.forest import MondrianForestRegressor

__all__ = [
    "BRANIN_DOMAIN",
    "HARTMANN6_DOMAIN",
    "OptimizationResult",
    "branin",
    "hartmann6",
    "optimize",
    "optimize_box",
]

# Parameters of optimize() that it sets itself, so they cannot pass through to the forest.
_RESERVED_FOREST_PARAMS = ("random_state", "scale_features", "verbose")


@dataclass
class OptimizationResult:
    """What :func:`.optimize` found (its fields, as constructor parameters and attributes).

    Parameters
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
    indices : ndarray of shape (n_evaluations,) or None
        Row of ``candidates`` of each evaluation (the first ``n_initial`` are the random
        initial design); None from :func:`optimize_box`.
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
    indices: np.ndarray | None
    timings: dict[str, float] = field(default_factory=dict)


def _check_count(name: str, value: Any, low: int, high: int) -> int:
    check_parameter(name, value, [Integer(low=low, high=high)])
    return int(value)


def _check_matrix(values: Any, name: str) -> np.ndarray:
    """``values`` as a non-empty finite 2-D float array, or a ValueError naming ``name``."""
    try:
        matrix = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a 2-D array of numbers ({error})") from None
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return matrix


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
    # The paper's forest (label-blind cuts, heuristic prior), as measured for its Table 3
    # (the project's benchmarks): with a few dozen noise-free evaluations the marginal likelihood
    # drives the noise to zero and the acquisition loses its spread.
    params = {
        "n_estimators": 10,
        "min_samples_split": 2,
        "candidate_dimensions": 1,
        "candidate_locations": 1,
        "hyperparameters": "heuristic",
        **forest_params,
    }
    return MondrianForestRegressor(scale_features=False, random_state=seed, **params)


def _check_search_args(func: Any, kappa: Any) -> None:
    check_parameter("func", func, [IsCallable()])
    check_parameter("kappa", kappa, [Real(low=0)])


def _lowest_bound(model: MondrianForestRegressor, unit: np.ndarray, kappa: float) -> np.ndarray:
    """mean − kappa·std of the forest at every row of ``unit`` (the forest models sign·f)."""
    mean, std = model.predict(unit, return_std=True)
    return mean - kappa * std


# One proposal: the point in the forest's unit box, the point itself, its candidate row (−1
# when the candidates are drawn afresh).
_Proposal = tuple[np.ndarray, np.ndarray, int]


def _search(
    func: Callable[[np.ndarray], float],
    initial: list[_Proposal],
    propose: Callable[[MondrianForestRegressor], _Proposal],
    n_evaluations: int,
    model: MondrianForestRegressor,
    maximize: bool,
    verbose: int,
) -> OptimizationResult:
    """The UCB loop shared by :func:`optimize` and :func:`optimize_box`."""
    sign = -1.0 if maximize else 1.0  # the forest models sign · f, which is minimised
    timings = {"evaluate": 0.0, "update": 0.0, "acquisition": 0.0}
    points, values, rows = [], [], []

    def evaluate(proposal: _Proposal) -> None:
        start = time.perf_counter()
        returned = func(proposal[1])
        timings["evaluate"] += time.perf_counter() - start
        value = _as_finite_number(returned)
        if value is None:
            raise ValueError(
                f"func must return one finite number, got {returned!r} at {proposal[1]}"
            )
        points.append(proposal[1])
        values.append(value)
        rows.append(proposal[2])

    update, close = progress_callback(n_evaluations, "evaluations", verbose)
    try:
        for proposal in initial:
            evaluate(proposal)
        update(len(values))
        start = time.perf_counter()
        model.fit(np.array([p[0] for p in initial]), sign * np.asarray(values))
        timings["update"] += time.perf_counter() - start
        while len(values) < n_evaluations:
            start = time.perf_counter()
            proposal = propose(model)
            timings["acquisition"] += time.perf_counter() - start
            evaluate(proposal)
            start = time.perf_counter()
            model.partial_fit(proposal[0][None, :], np.array([sign * values[-1]]))
            timings["update"] += time.perf_counter() - start
            update(len(values))
    finally:
        close()
    y = np.asarray(values)
    best = np.maximum.accumulate(y) if maximize else np.minimum.accumulate(y)
    position = int(np.argmax(y) if maximize else np.argmin(y))
    indices = np.asarray(rows, dtype=np.intp) if rows[0] >= 0 else None
    X = np.array(points)
    return OptimizationResult(X[position], float(y[position]), X, y, best, indices, timings)


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
    from the start. Each step predicts every candidate: that is the cost of a step (about
    1 s for 250,000 candidates in 6-D on 2 cores in our benchmarks).

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
        ``gamma2``); defaults as in the paper's experiment: ``n_estimators=10``,
        ``min_samples_split=2``, label-blind cuts (``candidate_dimensions=1``,
        ``candidate_locations=1``) and ``hyperparameters="heuristic"``. ``random_state``,
        ``verbose`` and ``scale_features`` are set here.

    Returns
    -------
    result : OptimizationResult
        The best candidate, every evaluation and the time spent.

    Raises
    ------
    ValueError
        On bad arguments, or when ``func`` returns anything but one finite number.

    See Also
    --------
    optimize_box : the same search over a box, with fresh random candidates at every step.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.bayesopt import optimize
    >>> grid = np.random.default_rng(0).uniform(-2, 2, size=(2000, 2))
    >>> result = optimize(lambda x: float(np.sum(x**2)), grid, 25, random_state=0)
    >>> result.y_best < 0.1
    True
    """
    _check_search_args(func, kappa)
    grid = _check_matrix(candidates, "candidates")
    n_evaluations = _check_count("n_evaluations", n_evaluations, 1, len(grid))
    n_initial = _check_count("n_initial", n_initial, 1, n_evaluations)
    rng = check_random_state(random_state)
    initial = rng.choice(len(grid), size=n_initial, replace=False)
    model = _forest(forest_params, draw_seed(rng, np.iinfo(np.int32).max))
    low, span = grid.min(axis=0), np.ptp(grid, axis=0)
    unit = np.ascontiguousarray((grid - low) / np.where(span > 0, span, 1.0))
    # Evaluated candidates stay in the prediction and are masked: cheaper than copying the
    # unevaluated rows out of a large grid at every step.
    evaluated = np.zeros(len(grid), dtype=bool)
    evaluated[initial] = True

    def propose(model: MondrianForestRegressor) -> _Proposal:
        bound = _lowest_bound(model, unit, kappa)
        bound[evaluated] = np.inf
        index = int(np.argmin(bound))
        evaluated[index] = True
        return unit[index], grid[index], index

    proposals = [(unit[i], grid[i], int(i)) for i in initial]
    return _search(func, proposals, propose, n_evaluations, model, maximize, verbose)


def optimize_box(
    func: Callable[[np.ndarray], float],
    domain: Any,
    n_evaluations: int,
    *,
    n_candidates: int = 250_000,
    maximize: bool = False,
    kappa: float = 1.0,
    n_initial: int = 5,
    random_state: int | np.random.RandomState | None = None,
    verbose: int = 0,
    **forest_params: Any,
) -> OptimizationResult:
    """Minimise (or maximise) ``func`` over a box, with fresh random candidates each step.

    As :func:`optimize`, but the acquisition is maximised over ``n_candidates`` points drawn
    uniformly from the box afresh at every step (random search on the confidence bound), so
    the search is not limited to the best point of one fixed grid. ``n_initial`` points are
    drawn uniformly first.

    Parameters
    ----------
    func : callable
        Takes one point (1-D array of length n_features) and returns one finite number.
    domain : array-like of shape (n_features, 2)
        Lower and upper bound of each coordinate (finite, lower < upper).
    n_evaluations : int
        Total number of calls to ``func``, the initial design included.
    n_candidates : int, default=250_000
        Candidates drawn at each step.
    maximize, kappa, n_initial, random_state, verbose, **forest_params
        As in :func:`optimize`.

    Returns
    -------
    OptimizationResult
        With ``indices`` None.

    Examples
    --------
    >>> from mondrian_learn.bayesopt import BRANIN_DOMAIN, branin, optimize_box
    >>> result = optimize_box(branin, BRANIN_DOMAIN, 30, n_candidates=2000, random_state=0)
    >>> bool(result.y_best < 1.0)
    True
    """
    _check_search_args(func, kappa)
    box = _check_matrix(domain, "domain")
    if box.shape[1] != 2 or not (box[:, 0] < box[:, 1]).all():
        raise ValueError("domain must have shape (n_features, 2) with lower < upper in each row")
    n_evaluations = _check_count("n_evaluations", n_evaluations, 1, np.iinfo(np.int32).max)
    n_initial = _check_count("n_initial", n_initial, 1, n_evaluations)
    n_candidates = _check_count("n_candidates", n_candidates, 1, np.iinfo(np.int64).max)
    rng = check_random_state(random_state)
    low, span = box[:, 0], box[:, 1] - box[:, 0]
    initial = rng.uniform(size=(n_initial, len(box)))
    model = _forest(forest_params, draw_seed(rng, np.iinfo(np.int32).max))

    def propose(model: MondrianForestRegressor) -> _Proposal:
        unit = rng.uniform(size=(n_candidates, len(box)))
        best = unit[int(np.argmin(_lowest_bound(model, unit, kappa)))]
        return best, low + span * best, -1

    proposals = [(u, low + span * u, -1) for u in initial]
    return _search(func, proposals, propose, n_evaluations, model, maximize, verbose)
