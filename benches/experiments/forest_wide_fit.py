"""Label-guided fits on very wide data: does the candidate search stay linear in D?

Five rows (labels 0, 1, 0, 1, 1; regression targets drawn N(0, 1)) of D uniform features, for
D = 1,000 … 100,000: wall and CPU seconds of ``fit`` for the default
MondrianForestClassifier and MondrianForestRegressor (10 trees, ``n_jobs=1``; a third of the
features × 6 locations per cut) and for the label-blind forests (one candidate), best of
``--repeats``; then the ratio of the time at the largest D to the time at a quarter of it
(linear: 4).

Usage::

    python benches/experiments/forest_wide_fit.py
    python benches/experiments/forest_wide_fit.py --widths 10000 40000 --repeats 5
"""

from __future__ import annotations

from functools import partial

import numpy as np
from _common import best_of, experiment_parser, header, markdown_table

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor

BLIND = {"candidate_dimensions": 1, "candidate_locations": 1}


def main() -> None:
    parser = experiment_parser(__doc__, repeats=3)
    parser.add_argument("--widths", nargs="+", type=int, default=[1000, 10000, 40000])
    args = parser.parse_args()
    header("5 rows, 10 trees, n_jobs=1")
    rng = np.random.default_rng(0)
    labels, targets = np.array([0, 1, 0, 1, 1]), rng.normal(size=5)
    models = {
        "classifier (guided)": (MondrianForestClassifier, {}, labels),
        "classifier (blind)": (MondrianForestClassifier, BLIND, labels),
        "regressor (guided)": (MondrianForestRegressor, {}, targets),
        "regressor (blind)": (MondrianForestRegressor, BLIND, targets),
    }
    times: dict[str, dict[int, float]] = {name: {} for name in models}

    def row(d: int) -> list[str]:
        X = rng.uniform(size=(5, d))
        cells = []
        for name, (kind, params, y) in models.items():
            model = kind(n_estimators=10, random_state=0, n_jobs=1, **params)
            wall, cpu = best_of(args.repeats, partial(model.fit, X, y))
            times[name][d] = cpu
            cells.append(f"{wall:.3f} / {cpu:.3f}")
        return [f"{d:,}", *cells]

    markdown_table(["D", *models], map(row, args.widths))
    top = max(args.widths)
    if top // 4 in args.widths:
        ratios = ", ".join(f"{n} {t[top] / t[top // 4]:.2f}" for n, t in times.items())
        print(f"\nCPU time at D = {top:,} / D = {top // 4:,}: {ratios}")


if __name__ == "__main__":
    main()
