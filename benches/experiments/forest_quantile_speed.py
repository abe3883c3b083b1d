"""Quantile speed: MondrianForestRegressor's 19 predictive quantiles against quantile-forest's.

On split 0 of each set (80/20, as ``forest_regression_benchmark.py``): fit
``MondrianForestRegressor(n_jobs=2)`` with its defaults and quantile-forest's
``RandomForestQuantileRegressor(n_jobs=2)`` (100 trees each), then time on the test rows our
``predict_quantiles`` (levels 0.05, 0.10, …, 0.95), our ``predict(return_std=True)`` (the
cost of reading the mixtures, which the quantiles add their CDF inversion to) and
quantile-forest's ``predict(quantiles=…)``, wall and CPU seconds, best of ``--repeats``.

Usage::

    python benches/experiments/forest_quantile_speed.py
    python benches/experiments/forest_quantile_speed.py --sets cpu_act --repeats 3
"""

from __future__ import annotations

from functools import partial

import numpy as np
from _common import best_of, experiment_parser, header, load_regression

from mondrian_learn import MondrianForestRegressor

LEVELS = np.round(np.arange(1, 20) * 0.05, 2)


def main() -> None:
    from quantile_forest import RandomForestQuantileRegressor

    parser = experiment_parser(__doc__, data=True)
    parser.add_argument("--sets", nargs="+", default=["cpu_act", "house_16h"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    header("100 trees, n_jobs=2")
    print(
        "| set (train / test rows) | MF 19 quantiles s wall / cpu | MF mean+std | "
        "QRF 19 quantiles | MF quantiles / QRF (wall) |\n|---|---|---|---|---|"
    )
    for name in args.sets:
        X, y, X_test, _ = load_regression(name, args.data)
        ours = MondrianForestRegressor(n_jobs=2, random_state=0).fit(X, y)
        peer = RandomForestQuantileRegressor(n_estimators=100, n_jobs=2, random_state=0)
        peer.fit(X, y)
        q = best_of(args.repeats, partial(ours.predict_quantiles, X_test, LEVELS))
        s = best_of(args.repeats, partial(ours.predict, X_test, return_std=True))
        p = best_of(args.repeats, partial(peer.predict, X_test, quantiles=list(LEVELS)))
        print(
            f"| {name} ({len(y)} / {len(X_test)}) | {q[0]:.2f} / {q[1]:.2f} | "
            f"{s[0]:.2f} / {s[1]:.2f} | {p[0]:.2f} / {p[1]:.2f} | {q[0] / p[0]:.1f}× |",
            flush=True,
        )


if __name__ == "__main__":
    main()
