"""What choosing the regressor's predictive on held-out rows adds to ``fit``.

On split 0 of each set (80/20, as ``forest_regression_benchmark.py``), ``fit`` of
``MondrianForestRegressor(n_jobs=2, random_state=0)`` with its default
``hyperparameters="held_out"`` against the same forest with ``hyperparameters="heuristic"``
(the same trees; the prior of AISTATS 2016 §3.2, nothing chosen): wall and CPU seconds, best of
``--repeats``, and the ratio (the goal: the chosen predictive adds ≤ 25 %).

Usage::

    python benches/experiments/forest_held_out_cost.py
    python benches/experiments/forest_held_out_cost.py --sets cpu_act --repeats 1
"""

from __future__ import annotations

from functools import partial

import numpy as np
from _common import best_of
from _regression_timing import time_on_regression_sets, wall_cpu

from mondrian_learn import MondrianForestRegressor

COLUMNS = [
    "set (train rows)",
    "fit s, heuristic (wall / cpu)",
    "fit s, held-out",
    "added (wall / cpu)",
]


def fit_seconds(rule: str, X: np.ndarray, y: np.ndarray, repeats: int) -> tuple[float, float]:
    """Least (wall, CPU) seconds of ``repeats`` fits with ``hyperparameters=rule``."""
    model = MondrianForestRegressor(n_jobs=2, random_state=0, hyperparameters=rule)
    return best_of(repeats, partial(model.fit, X, y))


def row(name: str, split: tuple[np.ndarray, ...], repeats: int) -> list[str]:
    """A set's fit seconds with each rule, and what choosing adds."""
    X, y, _, _ = split
    base = fit_seconds("heuristic", X, y, repeats)
    chosen = fit_seconds("held_out", X, y, repeats)
    added = f"{chosen[0] / base[0] - 1:+.0%} / {chosen[1] / base[1] - 1:+.0%}"
    return [f"{name} ({len(y)})", wall_cpu(base), wall_cpu(chosen), added]


if __name__ == "__main__":
    time_on_regression_sets(__doc__, 2, COLUMNS, row)
