"""Defaults on raw data: the kernel and partition estimators before and after issue 16 (item 8).

Before: lifetimes in the units of X as given (λ = 1), ridge penalty α = 1e-4. After: features
mapped to the unit box (``scale_features=True``), the kernel ridges' ``lifetime=None`` (128
expected cells per tree) and α = 1. Each estimator is fitted with its defaults only
(``random_state`` aside) on the 8 regression sets of the accuracy issue (a seeded subsample of
``--rows`` training rows, the usual 20 % test split) and scikit-learn's raw diabetes, and the
SVC on raw breast cancer and wine (3-fold stratified CV). Scores: test R² (regression),
accuracy (classification); "refused" is the ridge's dense-size ValueError.

``--sweep`` instead measures how the new defaults were chosen: 3-fold CV R² of
``MondrianKernelRidge`` on 3,000 rows of each set for 8, 32, 128 and 512 expected cells per
tree (``lifetime``) and α ∈ {0.1, 1}.

Run: ``python benches/experiments/defaults_on_raw_data.py [--sweep]``
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
from _common import REGRESSION_SETS, experiment_parser, header, load_regression
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score, train_test_split

from mondrian_learn import MondrianKernelRidge, MondrianKernelRidgeCV, PartitionGPRegressor
from mondrian_learn.kernel._base import lifetime_for_cells
from mondrian_learn.kernel.baselines import LaplaceKernelRidge
from mondrian_learn.partition import PartitionSVC

#: The parameters that were the defaults before (lifetimes in raw units, α = 1e-4).
BEFORE = {"scale_features": False}
BEFORE_RIDGE = {**BEFORE, "lifetime": 1.0, "alpha": 1e-4}

REGRESSORS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "MondrianKernelRidge": (MondrianKernelRidge, BEFORE_RIDGE),
    "MondrianKernelRidgeCV": (MondrianKernelRidgeCV, {**BEFORE, "alpha": 1e-4}),
    "LaplaceKernelRidge": (LaplaceKernelRidge, BEFORE_RIDGE),
    "PartitionGPRegressor": (PartitionGPRegressor, BEFORE),
}


def score(make: Callable[..., Any], params: dict[str, Any], data: tuple[np.ndarray, ...]) -> str:
    """Test R² of ``make(**params)`` (seeded when it draws at random), or "refused"."""
    X, y, Xt, yt = data
    if "random_state" in make().get_params():
        params = {**params, "random_state": 0}
    try:
        model = make(**params).fit(X, y)
    except ValueError:
        return "refused"
    return f"{model.score(Xt, yt):.3f}"


def regression_sets(rows: int) -> dict[str, tuple[np.ndarray, ...]]:
    sets = {}
    for name in REGRESSION_SETS:
        X, y, Xt, yt = load_regression(name)
        keep = np.random.default_rng(0).permutation(len(X))[:rows]
        sets[name] = (X[keep], y[keep], Xt, yt)
    X, y = load_diabetes(return_X_y=True, scaled=False)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.2, random_state=0)
    sets["diabetes (raw)"] = (X, y, Xt, yt)
    return sets


def sweep() -> None:
    """CV R² of the kernel ridge for expected cells per tree × α (the defaults' choice)."""
    grid = [(alpha, cells) for alpha in (0.1, 1.0) for cells in (8, 32, 128, 512)]
    print("\n3-fold CV R² of MondrianKernelRidge: α, expected cells per tree (C: columns)")
    for name, (X, y, _, _) in regression_sets(3000).items():
        cells_row = []
        for alpha, cells in grid:
            scores, columns = [], []
            for train, test in KFold(3, shuffle=True, random_state=0).split(X):
                scaled = (X[train] - X[train].min(axis=0)) / np.ptp(X[train], axis=0).clip(1e-300)
                model = MondrianKernelRidge(
                    lifetime=lifetime_for_cells(scaled, cells), alpha=alpha, random_state=0
                )
                try:
                    model.fit(X[train], y[train])
                except ValueError:
                    break
                scores.append(model.score(X[test], y[test]))
                columns.append(model.n_columns_)
            text = (
                "refused" if len(scores) < 3 else f"{np.mean(scores):.3f} C={np.mean(columns):.0f}"
            )
            cells_row.append(f"α={alpha:g},{cells}: {text}")
        print(f"{name:<20}" + " | ".join(cells_row), flush=True)


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--rows", type=int, default=2000, help="training rows per set")
    parser.add_argument("--sweep", action="store_true", help="the defaults' choice instead")
    args = parser.parse_args()
    header()
    warnings.simplefilter("ignore")
    if args.sweep:
        sweep()
        return
    sets = regression_sets(args.rows)
    print(f"\ntest R², defaults before → after (N_train ≤ {args.rows})")
    print(f"{'set':<20}" + "".join(f"{name:>32}" for name in REGRESSORS))
    for name, data in sets.items():
        cells = []
        for make, before in REGRESSORS.values():
            old, new = score(make, before, data), score(make, {}, data)
            cells.append(f"{old:>8} → {new:<8}")
        print(f"{name:<20}" + "".join(f"{c:>32}" for c in cells), flush=True)
    print("\nPartitionSVC accuracy (3-fold stratified CV), defaults before → after")
    for name, load in [("breast cancer", load_breast_cancer), ("wine", load_wine)]:
        X, y = load(return_X_y=True)
        cv = StratifiedKFold(3, shuffle=True, random_state=0)
        old = cross_val_score(PartitionSVC(random_state=0, **BEFORE), X, y, cv=cv).mean()
        new = cross_val_score(PartitionSVC(random_state=0), X, y, cv=cv).mean()
        majority = np.bincount(y).max() / len(y)
        print(f"{name:<20}{old:.3f} → {new:.3f}   (majority class {majority:.3f})")


if __name__ == "__main__":
    main()
