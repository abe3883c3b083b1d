"""The forests' lifetime path (Balog's report §4.1) against from-scratch computations on the
forests pruned at the recorded lifetimes, and the CV estimators built on it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conftest import BLIND, Z, assert_same_for_any_n_jobs, homogeneity_pvalue
from mondrian_learn import (
    MondrianForestClassifier,
    MondrianForestClassifierCV,
    MondrianForestRegressor,
    MondrianForestRegressorCV,
)


def data(n: int, seed: int, classify: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 2, size=(n, 3))
    y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n) + 100.0
    return (X, (y > np.median(y)).astype(int) + (X[:, 2] > 1.2)) if classify else (X, y)


def routes(a: dict[str, np.ndarray], Z_: np.ndarray, lifetime: float) -> list[list[int]]:
    """Each row's root-to-leaf route through a tree (node arrays ``a``) pruned at
    ``lifetime``: cuts born after it removed."""
    out = []
    for x in Z_:
        j, route = a["root"], [a["root"]]
        while a["split_dim"][j] >= 0 and a["tau"][j] <= lifetime:
            d = a["split_dim"][j]
            j = a["left"][j] if x[d] <= a["threshold"][j] else a["right"][j]
            route.append(j)
        out.append(route)
    return out


def pruned_routes(model: Any, X: np.ndarray, lifetime: float) -> list[list[list[int]]]:
    """Per tree, every row's route through the tree pruned at ``lifetime``."""
    Z_ = (X - model.data_min_) / model.data_scale_
    return [routes(model.tree_arrays(t), Z_, lifetime) for t in range(model.n_estimators)]


def reference_regression(
    model: Any, X: np.ndarray, y: np.ndarray, Xs: np.ndarray, ys: np.ndarray, lifetime: float
) -> tuple[float, float]:
    """MSE and NLPD at ``lifetime`` on (Xs, ys): per tree the mean training target of the
    pruned leaf, Gaussian with σ_y² plus the spread over trees."""
    train = pruned_routes(model, X, lifetime)
    query = pruned_routes(model, Xs, lifetime)
    preds = np.empty((model.n_estimators, len(Xs)))
    for t, (tr, qr) in enumerate(zip(train, query)):
        leaves = np.array([r[-1] for r in tr])
        preds[t] = [y[leaves == r[-1]].mean() for r in qr]
    mean, spread = preds.mean(axis=0), preds.var(axis=0)
    var = model.prior_["noise_variance"] + spread
    nlpd = 0.5 * np.log(2 * np.pi * var) + (ys - mean) ** 2 / (2 * var)
    return float(np.mean((mean - ys) ** 2)), float(np.mean(nlpd))


def reference_classification(
    model: Any, X: np.ndarray, y: np.ndarray, Xs: np.ndarray, ys: np.ndarray, lifetime: float
) -> tuple[float, float]:
    """Log loss and accuracy at ``lifetime``: per tree the pruned leaf's class frequencies,
    each node's smoothed towards its parent's by one pseudo-count from the uniform root."""
    k = len(model.classes_)
    codes, codes_s = np.searchsorted(model.classes_, y), np.searchsorted(model.classes_, ys)
    proba = np.zeros((len(Xs), k))
    train = pruned_routes(model, X, np.inf)
    for t, query in enumerate(pruned_routes(model, Xs, lifetime)):
        counts: dict[int, np.ndarray] = {}
        for route, c in zip(train[t], codes):
            for j in route:
                counts.setdefault(j, np.zeros(k))[c] += 1
        for i, route in enumerate(query):
            p = np.full(k, 1.0 / k)
            for j in route:
                p = (counts[j] + p) / (counts[j].sum() + 1.0)
            proba[i] += p
    proba /= model.n_estimators
    loss = -np.mean(np.log(proba[np.arange(len(ys)), codes_s]))
    return float(loss), float(np.mean(np.argmax(proba, axis=1) == codes_s))


@pytest.mark.parametrize("guided", [False, True])
def test_regression_path_equals_pruned_forests(guided: bool) -> None:
    X, y = data(150, 0)
    Xv, yv = data(60, 1)
    Xv = Xv * 1.2 - 0.1  # some validation points outside the training box
    params: dict[str, Any] = {} if guided else dict(BLIND)
    model = MondrianForestRegressor(4, random_state=0, **params).fit(X, y)
    path = model.lifetime_path(Xv, yv, lifetimes=12)
    assert path["n_leaves"][-1] == model.n_leaves_.sum()
    assert path["train_mse"][-1] == pytest.approx(0.0, abs=1e-20)  # single-point leaves
    for c in [0, 3, 7, len(path["lifetimes"]) - 1]:
        lifetime = path["lifetimes"][c]
        for prefix, (Xs, ys) in [("train", (X, y)), ("validation", (Xv, yv))]:
            mse, nlpd = reference_regression(model, X, y, Xs, ys, lifetime)
            np.testing.assert_allclose(path[f"{prefix}_mse"][c], mse, rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(path[f"{prefix}_nlpd"][c], nlpd, rtol=1e-10)


def test_classification_path_equals_pruned_forests() -> None:
    X, y = data(120, 2, classify=True)
    Xv, yv = data(50, 3, classify=True)
    model = MondrianForestClassifier(3, random_state=0).fit(X, y)
    grid = np.quantile(model.lifetime_path(lifetimes=None)["lifetimes"], [0, 0.3, 0.6, 1])
    path = model.lifetime_path(Xv, yv, lifetimes=grid)
    np.testing.assert_array_equal(path["lifetimes"], np.sort(grid))
    for c, lifetime in enumerate(path["lifetimes"]):
        for prefix, (Xs, ys) in [("train", (X, y)), ("validation", (Xv, yv))]:
            loss, accuracy = reference_classification(model, X, y, Xs, ys, lifetime)
            np.testing.assert_allclose(path[f"{prefix}_log_loss"][c], loss, rtol=1e-10)
            assert path[f"{prefix}_accuracy"][c] == accuracy


def test_pruned_trees_are_mondrian_trees_of_the_shorter_lifetime() -> None:
    """A Mondrian tree pruned at λ is a Mondrian tree of lifetime λ: the leaf counts of 2,000
    trees grown to ∞ and pruned at λ = 3 (read off the path) match 2,000 trees grown at 3."""
    X, y = data(60, 4)
    params = dict(n_estimators=2000, min_samples_split=2, n_jobs=2, **BLIND)
    full = MondrianForestRegressor(random_state=1, **params).fit(X, y)
    short = MondrianForestRegressor(lifetime=3.0, random_state=2, **params).fit(X, y)
    pruned = np.array([len({r[-1] for r in tree}) for tree in pruned_routes(full, X, 3.0)])
    assert homogeneity_pvalue(pruned, short.n_leaves_) > 1e-3
    z = (pruned.mean() - short.n_leaves_.mean()) / np.sqrt(
        (pruned.var() + short.n_leaves_.var()) / 2000
    )
    assert abs(z) < Z
    path = full.lifetime_path(lifetimes=[3.0])
    assert path["n_leaves"][0] == pruned.sum()


def test_path_same_for_any_n_jobs_and_checks_input() -> None:
    X, y = data(200, 5)
    model = MondrianForestRegressor(6, random_state=0).fit(X, y)

    def run(n_jobs: int) -> tuple[Any, ...]:
        path = model.set_params(n_jobs=n_jobs).lifetime_path(X[:50], y[:50], lifetimes=8)
        return tuple(path.values())

    assert_same_for_any_n_jobs(run)
    with pytest.raises(ValueError, match="both X and y"):
        model.lifetime_path(X[:5])
    with pytest.raises(ValueError, match="lifetimes"):
        model.lifetime_path(lifetimes=0)
    with pytest.raises(ValueError, match="features"):
        model.lifetime_path(X[:5, :2], y[:5])
    bounded = MondrianForestRegressor(3, lifetime=2.0, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="max_lifetime"):
        bounded.lifetime_path(lifetimes=[1.0, 2.5])
    classifier = MondrianForestClassifier(3, random_state=0).fit(X, y > y.mean())
    with pytest.raises(ValueError, match="not among classes_"):
        classifier.lifetime_path(X[:5], np.full(5, 7))


@pytest.mark.parametrize(
    "estimator, forest, selection",
    [
        (MondrianForestRegressorCV, MondrianForestRegressor, "nlpd"),
        (MondrianForestClassifierCV, MondrianForestClassifier, "accuracy"),
    ],
)
def test_cv_picks_the_best_checkpoint_and_refits_there(
    estimator: Any, forest: Any, selection: str
) -> None:
    classify = forest is MondrianForestClassifier
    X, y = data(400, 6, classify=classify)
    y = y + 0.5 * np.random.default_rng(0).normal(size=len(y)) if not classify else y
    search = estimator(8, lifetimes=15, selection=selection, random_state=3).fit(X, y)
    scores = search.path_[f"validation_{selection}"]
    best = np.argmax(scores) if selection == "accuracy" else np.argmin(scores)
    assert search.best_index_ == best
    n_cuts = search.path_["n_cuts"][best]
    expected = np.inf if n_cuts == search.path_["n_cuts"][-1] else search.path_["lifetimes"][best]
    assert search.lifetime_ == expected
    plain = forest(8, lifetime=search.lifetime_, random_state=3).fit(X, y)
    method = "predict_proba" if classify else "predict"
    np.testing.assert_array_equal(getattr(search, method)(X), getattr(plain, method)(X))


def test_cv_stops_early_on_noise() -> None:
    """On a target that is pure noise the validation error is least with few cuts: the search
    stops there (λ well below the full trees'), and its refit predicts better than ∞."""
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(600, 2))
    y = rng.normal(size=600)
    search = MondrianForestRegressorCV(10, lifetimes=20, random_state=0).fit(X[:400], y[:400])
    assert search.lifetime_ < search.path_["lifetimes"][-1]
    full = MondrianForestRegressor(10, random_state=0).fit(X[:400], y[:400])
    mse = [np.mean((m.predict(X[400:]) - y[400:]) ** 2) for m in (search, full)]
    assert mse[0] < mse[1]
