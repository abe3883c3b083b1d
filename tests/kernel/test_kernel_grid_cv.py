"""MondrianGridRidgeCV with ``cv`` folds: every state of the search is scored by the folds'
mean validation error, recomputed here from scratch (dense ridge solves on each fold's grid
features), and ``cv=None`` is the single hold-out of ``held_out_split``."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import TimeSeriesSplit

from mondrian_learn import _core
from mondrian_learn._lifetime_path import held_out_split, validation_splits
from mondrian_learn._validation import draw_seed
from mondrian_learn.kernel import MondrianGridRidgeCV
from mondrian_learn.kernel._features import to_csr

GRIDS, SEED, ALPHA = 6, 2, 0.3


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    return X, np.sin(5 * X[:, 0]) + 0.1 * rng.normal(size=90)


def make(**params: object) -> MondrianGridRidgeCV:
    return MondrianGridRidgeCV(
        GRIDS, alpha=ALPHA, max_iter=8, scale_features=False, random_state=SEED, **params
    )


def fold_mse(X: np.ndarray, y: np.ndarray, train: np.ndarray, val: np.ndarray, lifetimes) -> float:  # type: ignore[no-untyped-def]
    """From scratch: the fold's grid features at ``lifetimes`` (training rows, then validation
    rows), the dense ridge (ZᵀZ + αI) w = Zᵀ(y − ȳ) and its validation MSE."""
    search = _core.GridSearch(
        X[train], y[train], X[val], y[val], GRIDS, draw_seed(SEED), ALPHA, "auto", 256, 1e-6,
        300, 1,
    )  # fmt: skip
    n = len(train) + len(val)
    Z = to_csr(search.transform([float(v) for v in lifetimes], n, 1)).toarray()
    Zt, Zv, yt = Z[: len(train)], Z[len(train) :], y[train]
    w = np.linalg.solve(Zt.T @ Zt + ALPHA * np.eye(Z.shape[1]), Zt.T @ (yt - yt.mean()))
    return float(np.mean((yt.mean() + Zv @ w - y[val]) ** 2))


def test_folds_score_every_state_by_their_mean_validation_error(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = make(cv=4).fit(X, y)  # folds of 23, 23, 22 and 22 rows, weighted by size
    path = model.path_
    folds = validation_splits(4, X, y, 0.2, SEED, distinct=False)
    scores = np.array(
        [[fold_mse(X, y, t, v, lifetimes) for t, v in folds] for lifetimes in path["lifetimes"]]
    )
    results = model.cv_results_
    np.testing.assert_allclose(results["split_scores"], scores.T, rtol=1e-7)
    np.testing.assert_array_equal(results["split_weights"], [len(v) for _, v in folds])
    np.testing.assert_array_equal(results["lifetimes"], path["lifetimes"])
    pooled = np.average(scores, axis=1, weights=[len(v) for _, v in folds])
    np.testing.assert_allclose(path["criterion"], pooled, rtol=1e-7)
    # The search pools each state's errors on its own, in the table's order: the same bits.
    np.testing.assert_array_equal(results["mean_score"], path["criterion"])
    assert model.best_index_ == int(np.argmin(pooled))
    assert len(path["step"]) > 2
    # Refitted on all of X.
    rows, _ = model._posterior_rows
    assert len(rows) == len(X)


def test_no_cv_is_the_single_hold_out(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = make().fit(X, y)
    train, held_out = held_out_split(len(X), 0.2, SEED)
    given = make(cv=[(train, held_out)]).fit(X, y)
    for name in ("criterion", "validation_mse", "n_cuts", "lifetimes"):
        np.testing.assert_array_equal(model.path_[name], given.path_[name])
    first = [fold_mse(X, y, train, held_out, lifetimes) for lifetimes in model.path_["lifetimes"]]
    np.testing.assert_allclose(model.path_["validation_mse"], first, rtol=1e-7)
    # One split, weighing its rows, whose scores are the path's and the mean's bit for bit.
    for fit in (model, given):
        np.testing.assert_array_equal(
            fit.cv_results_["split_scores"], [fit.path_["validation_mse"]]
        )
        np.testing.assert_array_equal(fit.cv_results_["split_weights"], [len(held_out)])
        np.testing.assert_array_equal(fit.cv_results_["mean_score"], fit.path_["validation_mse"])
    assert not {"fold_validation_mse", "split_scores"} & model.path_.keys()


@pytest.mark.parametrize(
    ("params", "fit_val"),
    [
        ({"cv": 1}, False),
        ({"cv": "3"}, False),
        ({"cv": 3}, True),
        ({"cv": 3.0}, False),
        ({"cv": []}, False),
        ({"cv": TimeSeriesSplit(3)}, False),  # leaves rows out of a split: refused
    ],
)
def test_bad_cv_is_refused_by_name(data, params, fit_val: bool) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = make(**params)
    extra = {"X_val": X[:10], "y_val": y[:10]} if fit_val else {}
    with pytest.raises(ValueError, match="cv"):
        model.fit(X, y, **extra)
    assert not hasattr(model, "model_")
