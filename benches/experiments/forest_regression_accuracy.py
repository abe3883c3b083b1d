"""Mondrian forest regression with the hierarchical posterior: speed and the γ₂ heuristic.

Measures, on ``make_friedman1`` (D = 10, noise ``--noise``), 10 trees, ``min_samples_split=10``,
``n_jobs=2``, in one run:

* fit time with the full posterior (``--n`` training points) and ``predict(return_std=True)``
  time on ``--n-test`` points, beside scikit-learn ``ExtraTreesRegressor`` (default and
  ``max_features=1``) fit and predict on the same data;
* test RMSE and NLPD of our predictive for the γ₂ divisor 2 (the authors' code, shipped) and
  20 (the paper's text), on ``--n-gamma`` training points.

Usage::

    python benches/experiments/forest_regression_accuracy.py
    python benches/experiments/forest_regression_accuracy.py --n 100000 --n-test 10000   # quick
"""

from __future__ import annotations

import numpy as np
from _common import (
    experiment_parser,
    import_mondrian_forest_regressor,
    machine_info,
    rmse,
    timed,
)
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor


def main() -> None:
    parser = experiment_parser(__doc__, n=1_000_000, repeats=2)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--n-gamma", type=int, default=100_000)
    parser.add_argument("--noise", type=float, default=1.0)
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    print(machine_info())
    X, y = make_friedman1(args.n + args.n_test, noise=args.noise, random_state=0)
    X_train, y_train, X_test, y_test = X[: args.n], y[: args.n], X[args.n :], y[args.n :]
    print(f"\nN_train={args.n}, N_test={args.n_test}, D=10, noise={args.noise}, 10 trees, n_jobs=2")
    print(f"{'model':<34}{'fit s':>8}{'predict s':>11}{'RMSE':>8}")
    models = {
        "MondrianForestRegressor (std too)": regressor(n_estimators=10, random_state=0, n_jobs=2),
        "ExtraTrees(max_features=1.0)": ExtraTreesRegressor(10, min_samples_split=10, n_jobs=2),
        "ExtraTrees(max_features=1)": ExtraTreesRegressor(
            10, min_samples_split=10, max_features=1, n_jobs=2
        ),
    }
    for name, model in models.items():
        fit_s = min(timed(lambda m=model: m.fit(X_train, y_train))[0] for _ in range(args.repeats))
        if name.startswith("Mondrian"):
            predict_s, (mean, _) = timed(lambda m=model: m.predict(X_test, return_std=True))
        else:
            predict_s, mean = timed(lambda m=model: m.predict(X_test))
        print(f"{name:<34}{fit_s:>8.2f}{predict_s:>11.2f}{rmse(mean, y_test):>8.3f}")

    n = args.n_gamma
    print(f"\nγ₂ = D / (s log₂ N), N_train={n}, N_test={args.n_test}")
    print(f"{'s':>4}{'RMSE':>8}{'NLPD':>8}")
    for divisor in (2.0, 20.0):
        model = regressor(
            n_estimators=10, random_state=0, n_jobs=2, gamma2=10 / (divisor * np.log2(n))
        ).fit(X_train[:n], y_train[:n])
        nlpd = -model.log_predictive_density(X_test, y_test).mean()
        print(f"{divisor:>4.0f}{rmse(model.predict(X_test), y_test):>8.3f}{nlpd:>8.3f}")


if __name__ == "__main__":
    main()
