"""Speed goals of the accurate regression forest against scikit-learn's ExtraTrees.

On ``make_friedman1`` (D = 10, noise 1), ``--n`` training rows, 10 trees, ``n_jobs=2``, every
model in the same run (best of ``--repeats``):

* fit time of ``MondrianForestRegressor`` with the defaults (label-guided cuts, hyper-parameters
  by the marginal likelihood), split into growing the trees (the same forest with
  ``hyperparameters="heuristic"``) and the marginal-likelihood search (the difference), beside
  the label-blind forest and ``ExtraTreesRegressor()`` / ``ExtraTreesRegressor(max_features=1)``;
* ``predict`` of ``--n-test`` rows with and without ``return_std`` against ExtraTrees'
  ``predict``, and the test RMSE of each;
* the lifetime path of the default forest (100 checkpoints; training rows and the test rows
  as validation) against its fit at Λ = ∞.

Usage::

    python benches/experiments/forest_regression_speed.py
    python benches/experiments/forest_regression_speed.py --n 100000 --n-test 10000  # quick
"""

from __future__ import annotations

from typing import Any, Callable

from _common import experiment_parser, header, import_mondrian_forest_regressor, rmse, timed
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor


def best_time(call: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The least seconds of ``repeats`` calls, and the last call's result."""
    runs = [timed(call) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[-1][1]


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    header()
    X, y = make_friedman1(args.n + args.n_test, noise=1.0, random_state=0)
    X_train, y_train, X_test, y_test = X[: args.n], y[: args.n], X[args.n :], y[args.n :]
    print(f"\nN_train={args.n:,}, N_test={args.n_test:,}, D=10, 10 trees, n_jobs=2")
    common = dict(n_estimators=10, n_jobs=2, random_state=0)
    models = {
        "MF default": regressor(**common),
        "MF guided, heuristic prior": regressor(**common, hyperparameters="heuristic"),
        "MF label-blind (paper)": regressor(
            **common,
            candidate_dimensions=1,
            candidate_locations=1,
            min_samples_split=10,
            hyperparameters="heuristic",
        ),
        "ExtraTrees()": ExtraTreesRegressor(10, n_jobs=2, random_state=0),
        "ExtraTrees(max_features=1)": ExtraTreesRegressor(
            10, max_features=1, n_jobs=2, random_state=0
        ),
    }
    fit_s, predict_s, std_s, path_s = {}, {}, {}, 0.0
    print(f"{'model':<30}{'fit s':>8}{'predict s':>11}{'+std s':>9}{'RMSE':>8}")
    for name, model in models.items():
        fit_s[name], _ = best_time(lambda m=model: m.fit(X_train, y_train), args.repeats)
        predict_s[name], mean = best_time(lambda m=model: m.predict(X_test), args.repeats)
        std = ""
        if name.startswith("MF"):
            std_s[name], _ = best_time(
                lambda m=model: m.predict(X_test, return_std=True), args.repeats
            )
            std = f"{std_s[name]:>9.2f}"
        if name == "MF default":
            path_s, _ = best_time(
                lambda m=model: m.lifetime_path(X_test, y_test, lifetimes=100), args.repeats
            )
        print(
            f"{name:<30}{fit_s[name]:>8.2f}{predict_s[name]:>11.2f}{std:>9}"
            f"{rmse(mean, y_test):>8.3f}"
        )
        del model
    search = fit_s["MF default"] - fit_s["MF guided, heuristic prior"]
    grow = fit_s["MF guided, heuristic prior"]
    print("\ngoals:")
    print(f"  guided fit (trees) / ExtraTrees() fit: {grow / fit_s['ExtraTrees()']:.2f} (≤ 1)")
    print(
        f"  marginal-likelihood search / one fit: {search / grow:.2f} (≤ 2); "
        f"the default's whole fit / ExtraTrees(): {fit_s['MF default'] / fit_s['ExtraTrees()']:.2f}"
    )
    print(
        f"  lifetime path ({path_s:.2f} s) / the default's fit at Λ = ∞: "
        f"{path_s / fit_s['MF default']:.2f} (≤ 1.5)"
    )
    et = predict_s["ExtraTrees()"]
    print(
        f"  predict (mean) / ExtraTrees() predict: {predict_s['MF default'] / et:.2f} (≤ 1); "
        f"with return_std: {std_s['MF default'] / et:.2f} (≤ 1.5)"
    )


if __name__ == "__main__":
    main()
