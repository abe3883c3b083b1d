"""A small set with one steep, decisive feature of narrow range: MondrianForestRegressor against
RandomForest.

Yacht-like data (the shape of the UCI yacht hydrodynamics set, generated): 308 rows, five
irrelevant uniform features and a Froude number taking 14 values in [0.125, 0.45], the target
62 ((F − 0.1)/0.35)⁵ (1 + 0.1 x₀) + N(0, 0.2²), so the target grows steeply with the one
feature whose range is smallest once blocks shrink. Five seeded 277/31 splits (as the UCI
splits of that set); RMSE per split, the mean, and its ratio to RandomForest's.

Usage::

    python benches/experiments/forest_steep_feature.py
    python benches/experiments/forest_steep_feature.py --variant "evidence:hyperparameters=evidence"
"""

from __future__ import annotations

import warnings

import numpy as np
from _common import experiment_parser, header, import_mondrian_forest_regressor
from forest_regression_benchmark import parse_variant
from sklearn.ensemble import RandomForestRegressor


def yacht_like(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    froude = rng.choice(np.linspace(0.125, 0.45, 14), 308)
    other = rng.uniform(size=(308, 5))
    y = 62 * ((froude - 0.1) / 0.35) ** 5 * (1 + 0.1 * other[:, 0])
    return np.column_stack([other, froude]), y + rng.normal(scale=0.2, size=308)


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--variant", action="append", default=[])
    args = parser.parse_args()
    header()
    regressor = import_mondrian_forest_regressor()
    models = {"MF": {}, **dict(parse_variant(v) for v in args.variant)}
    errors: dict[str, list[float]] = {name: [] for name in [*models, "RF"]}
    for seed in range(5):
        X, y = yacht_like(seed)
        order = np.random.default_rng(100 + seed).permutation(len(y))
        train, test = order[:277], order[277:]
        forest = RandomForestRegressor(100, random_state=seed).fit(X[train], y[train])
        errors["RF"].append(float(np.sqrt(np.mean((forest.predict(X[test]) - y[test]) ** 2))))
        for name, params in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = regressor(random_state=seed, **params).fit(X[train], y[train])
            mean = model.predict(X[test])
            errors[name].append(float(np.sqrt(np.mean((mean - y[test]) ** 2))))
    reference = np.mean(errors["RF"])
    for name, values in errors.items():
        cells = " ".join(f"{v:.3f}" for v in values)
        ratio = np.mean(values) / reference
        print(f"{name:<12} RMSE {cells}  mean {np.mean(values):.3f}  / RF {ratio:.2f}")


if __name__ == "__main__":
    main()
