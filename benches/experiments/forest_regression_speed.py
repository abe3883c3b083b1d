"""Speed of the default regression forest against scikit-learn's ExtraTrees.

On ``make_friedman1`` (D = 10, noise 1), ``--n`` training rows, 10 trees, ``n_jobs=2``, every
model in the same run (least wall and least CPU seconds of ``--repeats``; CPU seconds count
every thread, so other load on the machine cancels):

* fit of ``MondrianForestRegressor`` with the defaults (label-guided cuts, the predictive
  chosen on held-out rows), split into growing the trees (the same forest with
  ``hyperparameters="heuristic"``) and the held-out search (the difference), beside the
  label-blind forest and ``ExtraTreesRegressor()`` / ``ExtraTreesRegressor(max_features=1)``;
* ``predict`` of ``--n-test`` rows with and without ``return_std`` against ExtraTrees'
  ``predict``, and the test RMSE of each;
* with ``--path``, the lifetime path of the default forest (100 checkpoints; the test rows as
  validation) against its fit at Λ = ∞.

Usage::

    python benches/experiments/forest_regression_speed.py
    python benches/experiments/forest_regression_speed.py --n 200000 --n-test 100000
"""

from __future__ import annotations

from typing import Any

from _common import best_of, experiment_parser, header, import_mondrian_forest_regressor, rmse
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor


def main() -> None:
    parser = experiment_parser(__doc__, n=1_000_000, repeats=2)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--path", action="store_true", help="also time the lifetime path")
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    header()
    X, y = make_friedman1(args.n + args.n_test, noise=1.0, random_state=0)
    X_train, y_train, X_test, y_test = X[: args.n], y[: args.n], X[args.n :], y[args.n :]
    print(f"\nN_train={args.n:,}, N_test={args.n_test:,}, D=10, 10 trees, n_jobs=2")
    common = dict(n_estimators=10, n_jobs=2, random_state=0)
    models: dict[str, Any] = {
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
    fit, predict, std = {}, {}, {}
    print(f"{'model':<30}{'fit s (wall/cpu)':>18}{'predict s':>14}{'+std s':>14}{'RMSE':>8}")
    for name, model in models.items():
        fit[name] = best_of(args.repeats, lambda m=model: m.fit(X_train, y_train))
        predict[name] = best_of(args.repeats, lambda m=model: m.predict(X_test))
        extra = ""
        if name.startswith("MF"):
            std[name] = best_of(args.repeats, lambda m=model: m.predict(X_test, return_std=True))
            extra = f"{std[name][0]:>7.2f}/{std[name][1]:<6.2f}"
        print(
            f"{name:<30}{fit[name][0]:>9.2f}/{fit[name][1]:<8.2f}"
            f"{predict[name][0]:>7.2f}/{predict[name][1]:<6.2f}{extra:>14}"
            f"{rmse(model.predict(X_test), y_test):>8.3f}",
            flush=True,
        )
        if name == "MF default" and args.path:
            path = best_of(
                args.repeats, lambda m=model: m.lifetime_path(X_test, y_test, lifetimes=100)
            )
            print(f"  lifetime path: {path[0]:.2f} / {path[1]:.2f} s")

    def ratio(a: tuple[float, float], b: tuple[float, float]) -> str:
        return f"{a[0] / b[0]:.2f} wall, {a[1] / b[1]:.2f} cpu"

    default, trees, et = fit["MF default"], fit["MF guided, heuristic prior"], fit["ExtraTrees()"]
    search = (default[0] - trees[0], default[1] - trees[1])
    print("\ngoals:")
    print(f"  the default's fit / ExtraTrees() fit: {ratio(default, et)} (≤ 1)")
    print(f"  the trees alone (heuristic prior) / ExtraTrees() fit: {ratio(trees, et)}")
    print(f"  held-out search / the trees' fit: {ratio(search, trees)} (≤ 0.25)")
    print(
        "  label-blind fit / ExtraTrees(max_features=1) fit: "
        f"{ratio(fit['MF label-blind (paper)'], fit['ExtraTrees(max_features=1)'])} (≤ 1)"
    )
    et_predict = predict["ExtraTrees()"]
    print(
        f"  predict (mean) / ExtraTrees() predict: {ratio(predict['MF default'], et_predict)}"
        f" (≤ 1); with return_std: {ratio(std['MF default'], et_predict)} (≤ 1.25)"
    )


if __name__ == "__main__":
    main()
