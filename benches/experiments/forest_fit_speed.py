"""Batch fit time of ``MondrianForestRegressor`` against scikit-learn's ExtraTrees.

What it measures
----------------
Wall-clock time (``time.perf_counter``, best of ``--repeats``) to ``fit`` three
regressors, in the same process and on the same data:

* ``mondrian_learn.MondrianForestRegressor`` (10 trees, ``min_samples_split=10``,
  ``lifetime=inf``, ``n_jobs=2``),
* ``sklearn.ensemble.ExtraTreesRegressor`` with the default ``max_features=1.0``,
* ``sklearn.ensemble.ExtraTreesRegressor`` with ``max_features=1`` (one random
  feature per split, the closest scikit-learn analogue of a Mondrian split),

both ExtraTrees with 10 trees, ``min_samples_split=10`` and ``n_jobs=2``.
Training data: ``--n`` points (default 1,000,000) of ``make_friedman1``
(D=10, ``random_state=0``); another ``--n-test`` points (default 100,000) drawn
in the same call are held out. The table gives fit seconds, the ratios
ExtraTrees(default) / ours and ExtraTrees(max_features=1) / ours, the held-out
RMSE of each model (a sanity check that all three learned the function) and
the total number of leaves over the forest.

Issue served
------------
The batch-fit speed issue: Mondrian forest fitting must be no slower than
ExtraTrees(max_features=1) (ratio >= 1) and at least 4.5x faster than default
ExtraTrees (ratio >= 4.5). The script prints whether each goal is met.

Usage
-----
    python benches/experiments/forest_fit_speed.py                 # full size (several minutes)
    python benches/experiments/forest_fit_speed.py --n 50000 --repeats 1   # quick check

Requires ``mondrian_learn`` to be installed (``pip install .`` from the
repository root); the script stops with a message if it is not.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _common
import numpy as np
from _common import (
    FloatArray,
    add_forest_options,
    experiment_parser,
    import_mondrian_forest_regressor,
    machine_info,
)
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor

N_FEATURES = 10
GOAL_VS_EXTRATREES_DEFAULT = 4.5
GOAL_VS_EXTRATREES_ONE_FEATURE = 1.0


@dataclass
class FitResult:
    """Timing and sanity figures for one estimator."""

    name: str
    best_seconds: float
    all_seconds: list[float]
    test_rmse: float
    n_leaves: int


def count_leaves(estimator: Any) -> int:
    """Total number of leaves over all trees of a fitted forest."""
    if hasattr(estimator, "n_leaves_"):
        return int(np.sum(estimator.n_leaves_))
    return int(sum(tree.tree_.n_leaves for tree in estimator.estimators_))


def time_fit(
    name: str,
    make_estimator: Callable[[], Any],
    data: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    repeats: int,
) -> FitResult:
    """Fit a fresh estimator ``repeats`` times; keep the best wall-clock time."""
    X_train, y_train, X_test, y_test = data
    seconds: list[float] = []
    estimator = None
    for _ in range(repeats):
        estimator = make_estimator()  # drops the previous forest before timing
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        seconds.append(time.perf_counter() - start)
        print(f"  {name}: fit {seconds[-1]:.3f} s", flush=True)
    assert estimator is not None
    residual = estimator.predict(X_test) - y_test
    return FitResult(
        name=name,
        best_seconds=min(seconds),
        all_seconds=seconds,
        test_rmse=float(np.sqrt(np.mean(residual**2))),
        n_leaves=count_leaves(estimator),
    )


def print_table(results: list[FitResult], ours: FitResult) -> None:
    """Print fit time, speed ratio to ours, test RMSE and leaf count per estimator."""
    _common.print_rule_header(
        f"{'estimator':<40} {'fit s (best)':>12} {'ratio/ours':>10} "
        f"{'test RMSE':>10} {'leaves':>10}"
    )
    for result in results:
        ratio = result.best_seconds / ours.best_seconds
        print(
            f"{result.name:<40} {result.best_seconds:>12.3f} {ratio:>10.2f} "
            f"{result.test_rmse:>10.4f} {result.n_leaves:>10d}"
        )


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = experiment_parser(__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="training points")
    parser.add_argument("--n-test", type=int, default=100_000, help="held-out points")
    parser.add_argument("--repeats", type=int, default=3, help="fits per estimator")
    add_forest_options(parser)
    args = parser.parse_args()
    if args.n < 2 or args.n_test < 1 or args.repeats < 1:
        parser.error("need --n >= 2, --n-test >= 1 and --repeats >= 1")
    return args


def main() -> None:
    """Run the benchmark and print the table."""
    args = parse_args()
    mondrian_forest_regressor = import_mondrian_forest_regressor()
    print(machine_info())

    X, y = make_friedman1(
        n_samples=args.n + args.n_test,
        n_features=N_FEATURES,
        noise=args.noise,
        random_state=args.seed,
    )
    X = np.ascontiguousarray(X, dtype=np.float64)
    data = (X[: args.n], y[: args.n], X[args.n :], y[args.n :])
    print(
        f"data: make_friedman1, N_train={args.n}, N_test={args.n_test}, "
        f"D={N_FEATURES}, noise={args.noise}; {args.n_estimators} trees, "
        f"min_samples_split={args.min_samples_split}, n_jobs={args.n_jobs}, "
        f"best of {args.repeats}\n",
        flush=True,
    )

    common = {
        "n_estimators": args.n_estimators,
        "min_samples_split": args.min_samples_split,
        "n_jobs": args.n_jobs,
        "random_state": args.seed,
    }
    ours = time_fit(
        "MondrianForestRegressor (lifetime=inf)",
        lambda: mondrian_forest_regressor(lifetime=float("inf"), **common),
        data,
        args.repeats,
    )
    extra_default = time_fit(
        "ExtraTreesRegressor (max_features=1.0)",
        lambda: ExtraTreesRegressor(**common),
        data,
        args.repeats,
    )
    extra_one = time_fit(
        "ExtraTreesRegressor (max_features=1)",
        lambda: ExtraTreesRegressor(max_features=1, **common),
        data,
        args.repeats,
    )

    print()
    print_table([ours, extra_default, extra_one], ours)
    ratio_default = extra_default.best_seconds / ours.best_seconds
    ratio_one = extra_one.best_seconds / ours.best_seconds
    print()
    for label, ratio, goal in [
        ("ExtraTrees(max_features=1.0) / ours", ratio_default, GOAL_VS_EXTRATREES_DEFAULT),
        ("ExtraTrees(max_features=1) / ours", ratio_one, GOAL_VS_EXTRATREES_ONE_FEATURE),
    ]:
        verdict = "met" if ratio >= goal else "NOT met"
        print(f"{label:<37} = {ratio:6.2f}  (goal >= {goal}: {verdict})")


if __name__ == "__main__":
    main()
