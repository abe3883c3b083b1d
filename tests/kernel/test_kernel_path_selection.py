"""MondrianKernelRidgeCV: the ridge penalty chosen along the path among ``alphas``, and ``cv``
folds; every choice checked against validation errors recomputed from scratch (dense ridge
solves on the same trees' features)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.model_selection import KFold

from mondrian_learn import MondrianKernelFeatures, MondrianKernelRidgeCV, _core
from mondrian_learn._lifetime_path import held_out_split, validation_splits
from mondrian_learn._validation import draw_seed
from mondrian_learn.kernel._features import to_csr

ALPHAS = (0.01, 0.3, 10.0)
TREES, MAX_LIFETIME, SEED = 6, 6.0, 3


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.2 * rng.normal(size=90)
    X_val = rng.uniform(size=(40, 2))
    y_val = np.sin(5 * X_val[:, 0]) + X_val[:, 1] + 0.2 * rng.normal(size=40)
    return X, y, X_val, y_val


def validation_mse(
    X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, lifetimes: Any
) -> np.ndarray:
    """From scratch: trees sampled on X at Λ with the estimator's seed, then per (λ, α) the
    dense ridge (ZᵀZ + αI) w = Zᵀ(y − ȳ) and its validation MSE; shape (n_λ, n_α)."""
    trees = MondrianKernelFeatures(
        TREES, lifetime=MAX_LIFETIME, scale_features=False, random_state=SEED
    ).fit(X)
    out = np.empty((len(lifetimes), len(ALPHAS)))
    for i, lifetime in enumerate(lifetimes):
        Z = to_csr(trees.model_.transform(X, 1, float(lifetime))).toarray()
        Zv = to_csr(trees.model_.transform(X_val, 1, float(lifetime))).toarray()
        for j, alpha in enumerate(ALPHAS):
            w = np.linalg.solve(Z.T @ Z + alpha * np.eye(Z.shape[1]), Z.T @ (y - y.mean()))
            out[i, j] = np.mean((y.mean() + Zv @ w - y_val) ** 2)
    return out


def make(**params: Any) -> MondrianKernelRidgeCV:
    settings: dict[str, Any] = dict(
        max_lifetime=MAX_LIFETIME,
        alphas=ALPHAS,
        lifetimes=8,
        scale_features=False,
        random_state=SEED,
    )
    return MondrianKernelRidgeCV(TREES, **{**settings, **params})


def test_lifetime_and_alpha_are_the_argmin_of_the_validation_error(data) -> None:  # type: ignore[no-untyped-def]
    X, y, X_val, y_val = data
    model = make().fit(X, y, X_val=X_val, y_val=y_val)
    path, results = model.path_, model.cv_results_
    expected = validation_mse(X, y, X_val, y_val, path["lifetimes"])
    np.testing.assert_allclose(results["mean_score"], expected, rtol=1e-8)
    best, which = np.unravel_index(np.argmin(expected), expected.shape)
    assert (model.best_index_, model.alpha_) == (best, ALPHAS[which])
    assert model.lifetime_ == path["lifetimes"][best]
    np.testing.assert_array_equal(results["alphas"], ALPHAS)
    np.testing.assert_array_equal(results["lifetimes"], path["lifetimes"])
    np.testing.assert_array_equal(path["validation_mse"], results["mean_score"][:, which])
    # X_val is one split, of its rows' weight, whose scores are the mean's bit for bit.
    assert results["split_scores"].shape == (1, *expected.shape)
    np.testing.assert_array_equal(results["split_weights"], [len(X_val)])
    np.testing.assert_array_equal(results["mean_score"], results["split_scores"][0])
    # More than one α wins somewhere on the path: the choice is not one α's.
    assert len(set(np.argmin(expected, axis=1))) > 1


def test_folds_choose_the_argmin_of_the_fold_mean_error(data) -> None:  # type: ignore[no-untyped-def]
    """Four folds of 90 rows (23, 23, 22, 22): the pooled error weights them by size."""
    X, y, _, _ = data
    model = make(cv=4).fit(X, y)
    path, results = model.path_, model.cv_results_
    folds = validation_splits(4, X, y, 0.2, SEED, distinct=False)
    scores = np.array([validation_mse(X[t], y[t], X[v], y[v], path["lifetimes"]) for t, v in folds])
    np.testing.assert_allclose(results["split_scores"], scores, rtol=1e-8)
    sizes = [len(v) for _, v in folds]
    np.testing.assert_array_equal(results["split_weights"], sizes)
    mean = np.average(scores, axis=0, weights=sizes)
    np.testing.assert_allclose(results["mean_score"], mean, rtol=1e-8)
    # The mean is the splits' weighted mean bit for bit, and the path's error its column at α.
    np.testing.assert_array_equal(
        results["mean_score"], np.average(results["split_scores"], axis=0, weights=sizes)
    )
    best, which = np.unravel_index(np.argmin(mean), mean.shape)
    assert (model.best_index_, model.alpha_) == (best, ALPHAS[which])
    np.testing.assert_array_equal(path["validation_mse"], results["mean_score"][:, which])
    # Refitted on all of X, on trees sampled on it at Λ and stopped at the chosen λ.
    refit = MondrianKernelFeatures(
        TREES, lifetime=MAX_LIFETIME, scale_features=False, random_state=SEED
    ).fit(X)
    Z = to_csr(refit.model_.transform(X, 1, model.lifetime_)).toarray()
    A = Z.T @ Z + model.alpha_ * np.eye(Z.shape[1])
    w = np.linalg.solve(A, Z.T @ (y - y.mean()))
    assert model.model_.n_rows == len(X)
    np.testing.assert_allclose(model.predict(X), y.mean() + Z @ w, rtol=1e-8)
    # A splitter is used as given.
    splitter = KFold(3, shuffle=True, random_state=1)
    given = make(cv=splitter).fit(X, y)
    own = [(t, v) for t, v in splitter.split(X)]
    first = validation_mse(X[own[0][0]], y[own[0][0]], X[own[0][1]], y[own[0][1]], [0.0])
    np.testing.assert_allclose(given.cv_results_["split_scores"][0, :1], first, rtol=1e-8)
    # One given split: chosen on it, refitted on all of X all the same.
    single = make(cv=own[:1]).fit(X, y)
    assert single.model_.n_rows == len(X)


def test_no_cv_is_the_single_hold_out_as_before(data) -> None:  # type: ignore[no-untyped-def]
    """cv=None with one α: the core path on ``held_out_split``'s rows, checkpoint for
    checkpoint, and the refit on the trees extended by the held-out rows."""
    X, y, _, _ = data
    model = make(alphas=1.0).fit(X, y)
    train, held_out = held_out_split(len(X), 0.2, SEED)
    features = _core.KernelFeatures(X[train], TREES, MAX_LIFETIME, draw_seed(SEED), 1, TREES)
    path = features.path(
        y[train], X[held_out], y[held_out], MAX_LIFETIME, 1.0, 8, None, "auto", 4096, 1e-6,
        300, False, 1,
    )  # fmt: skip
    for name in ("lifetimes", "validation_mse", "train_mse", "log_evidence", "n_features"):
        np.testing.assert_array_equal(model.path_[name], path[name])
    best = int(np.argmin(path["validation_mse"]))
    refit = features.refit(
        np.concatenate([y[train], y[held_out]]),
        float(path["lifetimes"][best]),
        1.0,
        1,
        X[held_out],
    )
    np.testing.assert_array_equal(model.predict(X), refit.predict(X, 1))
    # The held-out share is one split, weighing its rows.
    np.testing.assert_array_equal(
        model.cv_results_["split_scores"], [path["validation_mse"][:, None]]
    )
    np.testing.assert_array_equal(model.cv_results_["split_weights"], [len(held_out)])
    assert not {"alphas", "validation_mse_by_alpha", "fold_validation_mse"} & model.path_.keys()


@pytest.mark.parametrize(
    ("params", "fit_val", "name"),
    [
        ({"cv": 1}, False, "cv"),
        ({"cv": 2.5}, False, "cv"),
        ({"cv": "five"}, False, "cv"),
        ({"cv": 3}, True, "cv"),
        ({"cv": 3, "selection": "evidence"}, False, "cv"),
        ({"cv": []}, False, "cv"),
        ({"cv": iter([])}, False, "cv"),
        ({"alphas": 0.0}, False, "alphas"),
        ({"alphas": [1.0, 0.0]}, False, "alphas"),
        ({"alphas": []}, False, "alphas"),
        ({"alphas": [1.0, np.nan]}, False, "alphas"),
    ],
)
def test_bad_cv_and_alphas_are_refused_by_name(data, params, fit_val, name) -> None:  # type: ignore[no-untyped-def]
    X, y, X_val, y_val = data
    model = make(**params)
    extra = {"X_val": X_val, "y_val": y_val} if fit_val else {}
    with pytest.raises(ValueError, match=name):
        model.fit(X, y, **extra)
    assert not hasattr(model, "model_")
