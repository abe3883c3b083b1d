"""Cost of one Bayesian-optimisation step on a 250,000-point grid (AISTATS 2016, §5.3).

A step of :func:`mondrian_learn.bayesopt.optimize` is one ``partial_fit`` of the new point
and one ``predict(return_std=True)`` on every candidate. This times both for a Mondrian
forest holding N points (10 trees, ``min_samples_split=2``, Branin in 2-D and Hartmann-6 in
6-D, points uniform in the domain) beside the RF-UCB baseline's step (scikit-learn
``RandomForestRegressor``, 10 trees: refit on the N points, then every tree predicts every
candidate), in the same process, median of ``--repeats`` timings.

Usage::

    flock /tmp/mondrian-bench.lock python benches/experiments/forest_bayesopt_step_cost.py
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
from _common import experiment_parser, header, import_mondrian_forest_regressor
from sklearn.ensemble import RandomForestRegressor

from mondrian_learn.bayesopt import BRANIN_DOMAIN, HARTMANN6_DOMAIN, branin, hartmann6


def median_seconds(work: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``work`` (after one warm-up call)."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def step_costs(
    regressor: type,
    func: Callable[[Any], Any],
    domain: np.ndarray,
    n: int,
    unit: np.ndarray,
    repeats: int,
) -> tuple[float, float, float, float]:
    """MF acquisition seconds with n_jobs 1 and 2, MF update seconds, RF step seconds, for a
    surrogate holding ``n`` points."""
    rng = np.random.default_rng(n)
    X = rng.uniform(size=(n + repeats + 1, len(domain)))
    y = -func(domain[:, 0] + X * (domain[:, 1] - domain[:, 0]))
    acquisition = []
    for n_jobs in (1, 2):
        model = regressor(
            n_estimators=10,
            min_samples_split=2,
            scale_features=False,
            random_state=0,
            n_jobs=n_jobs,
        ).fit(X[:n], y[:n])
        acquisition.append(
            median_seconds(lambda m=model: m.predict(unit, return_std=True), repeats)
        )
    position = iter(range(n, n + repeats + 1))

    def update() -> None:
        i = next(position)
        model.partial_fit(X[i : i + 1], y[i : i + 1])
        model.predict(unit[:1])  # the posterior refresh that a step pays once

    def rf_step() -> None:
        forest = RandomForestRegressor(n_estimators=10, random_state=0, n_jobs=2)
        forest.fit(X[:n], y[:n])
        per_tree = np.stack([tree.predict(unit) for tree in forest.estimators_])
        per_tree.mean(axis=0) + per_tree.std(axis=0)

    return (
        acquisition[0],
        acquisition[1],
        median_seconds(update, repeats),
        median_seconds(rf_step, repeats),
    )


def main() -> None:
    parser = experiment_parser(__doc__, repeats=5)
    parser.add_argument("--candidates", type=int, default=250_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 200])
    args = parser.parse_args()
    header()
    regressor = import_mondrian_forest_regressor()
    print(
        f"\nseconds per step on {args.candidates:,} candidates (median of {args.repeats}); "
        "MF acquisition = predict(return_std=True), MF update = partial_fit of 1 point"
    )
    print(
        f"{'function':10s} {'N':>4s} {'MF acq n_jobs=1':>16s} {'n_jobs=2':>9s} "
        f"{'MF update':>10s} {'RF step':>8s} {'RF/MF(2)':>9s}"
    )
    for name, func, domain in (
        ("branin", branin, BRANIN_DOMAIN),
        ("hartmann6", hartmann6, HARTMANN6_DOMAIN),
    ):
        unit = np.random.default_rng(0).uniform(size=(args.candidates, len(domain)))
        for n in args.sizes:
            one, two, updated, rf = step_costs(regressor, func, domain, n, unit, args.repeats)
            print(
                f"{name:10s} {n:4d} {one:16.3f} {two:9.3f} "
                f"{updated * 1e3:8.2f}ms {rf:8.3f} {rf / (two + updated):9.2f}"
            )


if __name__ == "__main__":
    main()
