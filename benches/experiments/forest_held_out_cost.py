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
from _common import best_of, experiment_parser, header, load_regression

from mondrian_learn import MondrianForestRegressor


def fit_seconds(rule: str, X: np.ndarray, y: np.ndarray, repeats: int) -> tuple[float, float]:
    """Least (wall, CPU) seconds of ``repeats`` fits with ``hyperparameters=rule``."""
    model = MondrianForestRegressor(n_jobs=2, random_state=0, hyperparameters=rule)
    return best_of(repeats, partial(model.fit, X, y))


def main() -> None:
    parser = experiment_parser(__doc__, data=True)
    parser.add_argument("--sets", nargs="+", default=["cpu_act", "house_16h"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    header("100 trees, n_jobs=2")
    print(
        "| set (train rows) | fit s, heuristic (wall / cpu) | fit s, held-out "
        "| added (wall / cpu) |\n|---|---|---|---|"
    )
    for name in args.sets:
        X, y, _, _ = load_regression(name, args.data)
        base = fit_seconds("heuristic", X, y, args.repeats)
        chosen = fit_seconds("held_out", X, y, args.repeats)
        print(
            f"| {name} ({len(y)}) | {base[0]:.2f} / {base[1]:.2f} | "
            f"{chosen[0]:.2f} / {chosen[1]:.2f} | "
            f"{chosen[0] / base[0] - 1:+.0%} / {chosen[1] / base[1] - 1:+.0%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
