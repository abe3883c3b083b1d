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
from _common import best_of
from _regression_timing import time_on_regression_sets, wall_cpu

from mondrian_learn import MondrianForestRegressor

LEVELS = np.round(np.arange(1, 20) * 0.05, 2)


COLUMNS = [
    "set (train / test rows)",
    "MF 19 quantiles s wall / cpu",
    "MF mean+std",
    "QRF 19 quantiles",
    "MF quantiles / QRF (wall)",
]


def row(name: str, split: tuple[np.ndarray, ...], repeats: int) -> list[str]:
    """A set's seconds of 19 quantiles, of mean and standard deviation, and of the peer's 19
    quantiles."""
    from quantile_forest import RandomForestQuantileRegressor

    X, y, X_test, _ = split
    ours = MondrianForestRegressor(n_jobs=2, random_state=0).fit(X, y)
    peer = RandomForestQuantileRegressor(n_estimators=100, n_jobs=2, random_state=0)
    peer.fit(X, y)
    q = best_of(repeats, partial(ours.predict_quantiles, X_test, LEVELS))
    s = best_of(repeats, partial(ours.predict, X_test, return_std=True))
    p = best_of(repeats, partial(peer.predict, X_test, quantiles=list(LEVELS)))
    size = f"{name} ({len(y)} / {len(X_test)})"
    return [size, wall_cpu(q), wall_cpu(s), wall_cpu(p), f"{q[0] / p[0]:.1f}×"]


if __name__ == "__main__":
    time_on_regression_sets(__doc__, 3, COLUMNS, row)
