"""Uncertainty away from the data (Lakshminarayanan et al. 2016, Fig. 2).

2-D training points uniform in [0, 1]², y = sin(3x₁)·cos(3x₂) + N(0, 0.05²). Test points on
lines x₁ = 1 + distance (x₂ uniform) moving away from the data, and inside [0.2, 0.8]².
Prints the mean predictive standard deviation at each distance for the Mondrian forest
(posterior predictive) and for scikit-learn RandomForest / ExtraTrees (standard deviation
across trees), and saves the curve to ``--out``.

Usage::

    python benches/experiments/forest_uncertainty.py --out benches/out/uncertainty_2d.png
"""

from __future__ import annotations

import numpy as np
from _common import (
    experiment_parser,
    finish_figure,
    import_mondrian_forest_regressor,
    machine_info,
    pyplot,
)
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

DISTANCES = [0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]


def main() -> None:
    parser = experiment_parser(__doc__, out="", n=2000)
    parser.add_argument("--trees", type=int, default=20)
    args = parser.parse_args()
    regressor = import_mondrian_forest_regressor()
    print(machine_info())
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(args.n, 2))
    y = np.sin(3 * X[:, 0]) * np.cos(3 * X[:, 1]) + rng.normal(scale=0.05, size=args.n)
    inside = rng.uniform(0.2, 0.8, size=(1000, 2))
    lines = [np.column_stack([np.full(500, 1.0 + d), rng.uniform(0, 1, 500)]) for d in DISTANCES]

    def across_trees(model):  # type: ignore[no-untyped-def]
        model.fit(X, y)
        return lambda Z: np.stack([t.predict(Z) for t in model.estimators_]).std(axis=0)

    stds = {
        "Mondrian forest": (lambda m: lambda Z: m.predict(Z, return_std=True)[1])(
            regressor(n_estimators=args.trees, random_state=0).fit(X, y)
        ),
        "RandomForest": across_trees(RandomForestRegressor(args.trees, random_state=0)),
        "ExtraTrees": across_trees(ExtraTreesRegressor(args.trees, random_state=0)),
    }
    print(f"\nN={args.n}, {args.trees} trees; std(y) = {y.std():.3f}")
    print(f"{'model':<18}{'inside':>8}" + "".join(f"{'d=' + str(d):>8}" for d in DISTANCES))
    curves = {}
    for name, std in stds.items():
        curve = [float(std(Z).mean()) for Z in lines]
        curves[name] = curve
        cells = "".join(f"{v:>8.3f}" for v in curve)
        print(f"{name:<18}{float(std(inside).mean()):>8.3f}{cells}")
    plt = pyplot() if args.out else None
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, curve in curves.items():
            ax.plot(np.array(DISTANCES) + 1e-3, curve, marker="o", label=name)
        xlabel = "distance beyond the training region (+0.001)"
        finish_figure(fig, ax, args.out, xlabel, "mean predictive std")


if __name__ == "__main__":
    main()
