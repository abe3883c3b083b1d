"""The lifetime search of the CV forests over ``cv`` splits: the default single hold-out as
before, k folds chosen on the weighted mean of the folds' scores, splitters used as given,
sparse X split exactly as its dense copy without densifying it, and the names of a
DataFrame's columns kept."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse
from sklearn.model_selection import KFold, StratifiedKFold

from mondrian_learn import (
    MondrianForestClassifierCV,
    MondrianForestRegressor,
    MondrianForestRegressorCV,
)
from mondrian_learn._lifetime_path import distinct_rows, held_out_split, validation_splits

PARAMS = dict(n_estimators=4, lifetimes=12, random_state=3)


def _fast(cls: type) -> dict[str, Any]:
    """PARAMS, with the regressor's prior by the closed form (the tests below are about the
    split, not the prior, and its held-out search costs most of a small fit)."""
    return (
        {**PARAMS, "hyperparameters": "heuristic"} if cls is MondrianForestRegressorCV else PARAMS
    )


def _data(n: int = 90, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows with repeats and a sparse pattern (about half the entries 0)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    X[X < 0] *= rng.integers(0, 2, size=X[X < 0].shape)  # zero out about half the negatives
    X[X > 0.4] = 0.0
    X[5:12] = X[:7]  # copies of rows
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=n)
    y[5:12] = y[:7]
    return X, y


def _old_single_hold_out(cls: type, X: np.ndarray, y: np.ndarray, **params: Any) -> Any:
    """The search as fitted before ``cv`` existed: the distinct rows of (X, y) in
    lexicographic order, 20 % held out, one fit, one path, argmin, refit."""
    model = cls(**params)
    classes = np.unique(y) if cls is MondrianForestClassifierCV else None
    codes = y if classes is None else np.searchsorted(classes, y)
    units, group = np.unique(np.column_stack([X, codes]), axis=0, return_inverse=True)
    group = group.reshape(-1)
    train_units, held_units = held_out_split(len(units), 0.2, params["random_state"])
    train = np.flatnonzero(np.isin(group, train_units))
    held = np.flatnonzero(np.isin(group, held_units))
    model._fit(X[train], y[train], classes=classes)
    path = model.lifetime_path(X[held], y[held], params["lifetimes"])
    key = "validation_mse" if classes is None else "validation_log_loss"
    best = int(np.argmin(path[key]))
    n_cuts = int(np.sum(model.model_.n_leaves())) - model.model_.n_trees
    every_cut = int(path["n_cuts"][best]) == n_cuts
    lifetime = float(model.lifetime) if every_cut else float(path["lifetimes"][best])
    model._fit(X, y, lifetime=lifetime)
    return model, path, best, lifetime


@pytest.mark.parametrize("cls", [MondrianForestRegressorCV, MondrianForestClassifierCV])
def test_cv_none_is_the_single_hold_out_bit_for_bit(cls: type) -> None:
    X, y = _data()
    if cls is MondrianForestClassifierCV:
        y = (y > np.median(y)).astype(int)
    model = cls(**PARAMS).fit(X, y)
    old, path, best, lifetime = _old_single_hold_out(cls, X, y, **PARAMS)
    assert (model.best_index_, model.lifetime_) == (best, lifetime)
    for key in path:
        np.testing.assert_array_equal(model.path_[key], path[key])
    output = "predict" if cls is MondrianForestRegressorCV else "predict_proba"
    np.testing.assert_array_equal(getattr(model, output)(X), getattr(old, output)(X))
    assert model.cv_results_["split_scores"].shape == (1, len(path["lifetimes"]))


def test_int_cv_chooses_the_argmin_of_the_weighted_fold_mean() -> None:
    X, y = _data(n=120, seed=1)
    weights = np.random.default_rng(1).integers(1, 4, size=len(y)).astype(float)
    model = MondrianForestRegressorCV(cv=3, **PARAMS).fit(X, y, sample_weight=weights)
    lifetimes = model.cv_results_["lifetimes"]
    # From scratch: the three folds of the distinct rows, a plain forest on each training
    # share, its path at the first fold's λ (the last: the forest with every cut).
    splits = validation_splits(3, X, y, 0.2, PARAMS["random_state"])
    assert len(splits) == 3
    assert np.array_equal(np.sort(np.concatenate([v for _, v in splits])), np.arange(len(y)))
    forest = {k: v for k, v in PARAMS.items() if k != "lifetimes"}
    scores, totals = [], []
    for k, (train, held) in enumerate(splits):
        fold = MondrianForestRegressor(**forest).fit(X[train], y[train], weights[train])
        grid = PARAMS["lifetimes"] if k == 0 else np.r_[lifetimes[:-1], 1e308]
        path = fold.lifetime_path(X[held], y[held], grid, weights[held])
        if k == 0:
            np.testing.assert_array_equal(path["lifetimes"], lifetimes)
        scores.append(path["validation_mse"])
        totals.append(weights[held].sum())
    mean = np.sum(np.multiply(scores, np.array(totals)[:, None]), axis=0) / np.sum(totals)
    np.testing.assert_allclose(model.cv_results_["split_scores"], scores, rtol=1e-12)
    np.testing.assert_allclose(model.cv_results_["split_weights"], totals, rtol=1e-12)
    np.testing.assert_allclose(model.cv_results_["mean_score"], mean, rtol=1e-12)
    assert model.best_index_ == int(np.argmin(mean))
    chosen = model.lifetime_
    assert chosen == (
        np.inf if model.best_index_ == len(mean) - 1 else lifetimes[model.best_index_]
    )
    refit = MondrianForestRegressor(**{**forest, "lifetime": chosen}).fit(X, y, weights)
    np.testing.assert_array_equal(model.predict(X), refit.predict(X))


def test_a_splitter_and_its_index_pairs_give_the_same_search() -> None:
    X, y = _data(seed=2)
    labels = (y > np.median(y)).astype(int)
    splitter = StratifiedKFold(4, shuffle=True, random_state=0)
    a = MondrianForestClassifierCV(cv=splitter, **PARAMS).fit(X, labels)
    b = MondrianForestClassifierCV(cv=list(splitter.split(X, labels)), **PARAMS).fit(X, labels)
    assert a.cv_results_["split_scores"].shape[0] == 4
    np.testing.assert_array_equal(a.cv_results_["mean_score"], b.cv_results_["mean_score"])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    # The weights of the validation rows: each fold's row count.
    counts = [len(v) for _, v in splitter.split(X, labels)]
    np.testing.assert_array_equal(a.cv_results_["split_weights"], counts)


def test_given_splits_drop_rows_of_zero_weight() -> None:
    X, y = _data(seed=4)
    weights = np.ones(len(y))
    weights[::7] = 0.0
    kept = weights > 0
    pairs = list(KFold(3, shuffle=True, random_state=1).split(X))
    position = np.cumsum(kept) - 1
    renumbered = [(position[t[kept[t]]], position[v[kept[v]]]) for t, v in pairs]
    params = _fast(MondrianForestRegressorCV)
    a = MondrianForestRegressorCV(cv=pairs, **params).fit(X, y, sample_weight=weights)
    b = MondrianForestRegressorCV(cv=renumbered, **params).fit(X[kept], y[kept])
    np.testing.assert_array_equal(a.cv_results_["mean_score"], b.cv_results_["mean_score"])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("cv", [1, 0, -3, 2.5, True, "folds", 10_000])
def test_bad_cv_is_refused_by_name(cv: Any) -> None:
    X, y = _data()
    model = MondrianForestRegressorCV(cv=cv, **PARAMS)
    with pytest.raises(ValueError, match="cv"):
        model.fit(X, y)
    assert not hasattr(model, "model_")


@pytest.mark.parametrize(
    ("cv", "fmt"), [(None, "csr"), (3, "csc"), (KFold(3, shuffle=True, random_state=0), "csr")]
)
@pytest.mark.parametrize("cls", [MondrianForestRegressorCV, MondrianForestClassifierCV])
def test_sparse_x_gives_the_dense_results(cv: Any, fmt: str, cls: type) -> None:
    X, y = _data(seed=5)
    if cls is MondrianForestClassifierCV:
        y = (y > np.median(y)).astype(int)
    dense = cls(cv=cv, **_fast(cls)).fit(X, y)
    sparse = cls(cv=cv, **_fast(cls)).fit(scipy.sparse.csr_matrix(X).asformat(fmt), y)
    assert sparse.lifetime_ == dense.lifetime_
    np.testing.assert_array_equal(sparse.cv_results_["mean_score"], dense.cv_results_["mean_score"])
    output = "predict" if cls is MondrianForestRegressorCV else "predict_proba"
    np.testing.assert_array_equal(getattr(sparse, output)(X), getattr(dense, output)(X))


def test_sparse_rows_are_grouped_as_their_dense_copies() -> None:
    rng = np.random.default_rng(6)
    for _ in range(60):
        n, d = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        X = rng.choice([-2.0, -1.0, -0.0, 0.0, 0.0, 0.0, 0.5, 3.0], size=(n, d))
        copies = rng.integers(0, n, size=(2, n // 3))
        X[copies[0]] = X[copies[1]]
        y = rng.choice([-1.0, 0.0, 2.0], size=n)
        expected = np.unique(np.column_stack([X, y]), axis=0, return_inverse=True)[1]
        for matrix in (scipy.sparse.csr_matrix(X), scipy.sparse.csc_matrix(X, dtype=np.float32)):
            np.testing.assert_array_equal(distinct_rows(matrix, y), expected.reshape(-1))
    # Explicit zeros and split entries (duplicates summed) as the dense values.
    coo = scipy.sparse.coo_matrix(([1.0, -1.0, 0.0, 2.0], ([0, 0, 1, 1], [0, 0, 1, 2])), (2, 3))
    np.testing.assert_array_equal(distinct_rows(coo, np.zeros(2)), [0, 1])


def test_sparse_split_makes_no_dense_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = _data(seed=7)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("densified")

    sparse = scipy.sparse.csr_matrix(X)
    monkeypatch.setattr(scipy.sparse.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(scipy.sparse.csr_matrix, "todense", refuse)
    splits = validation_splits(4, sparse, y, 0.2, 0)
    expected = validation_splits(4, X, y, 0.2, 0)
    for (t, v), (u, w) in zip(splits, expected):
        np.testing.assert_array_equal(t, u)
        np.testing.assert_array_equal(v, w)


@pytest.mark.parametrize("cls", [MondrianForestRegressorCV, MondrianForestClassifierCV])
def test_dataframe_names_are_kept_and_checked(cls: type) -> None:
    pd = pytest.importorskip("pandas")
    X, y = _data(seed=8)
    if cls is MondrianForestClassifierCV:
        y = (y > np.median(y)).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = cls(**_fast(cls)).fit(frame, y)
    assert model.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = model.predict(frame)
    np.testing.assert_array_equal(named, cls(**_fast(cls)).fit(X, y).predict(X))
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(frame[["b", "a", "c", "d"]])
    # Refitted on an array: no names any more, as scikit-learn's estimators.
    assert not hasattr(model.fit(X, y), "feature_names_in_")
