"""Mondrian kernel estimators as scikit-learn estimators: compliance, determinism, bad input,
pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from conftest import assert_same_for_any_n_jobs
from mondrian_learn import MondrianKernelFeatures, MondrianKernelRidge, MondrianKernelRidgeCV


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 3))
    y = np.sin(5 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=600)
    return X, y


def test_features_have_m_entries_per_row_of_one_over_sqrt_m(data) -> None:  # type: ignore[no-untyped-def]
    X, _ = data
    model = MondrianKernelFeatures(n_estimators=30, lifetime=3.0, random_state=1).fit(X[:400])
    Z = model.transform(X[:400])
    assert scipy.sparse.isspmatrix_csr(Z) and Z.shape == (400, model.n_columns_)
    np.testing.assert_array_equal(Z.getnnz(axis=1), 30)
    # Training points are inside their leaves' boxes: every value is 1/√M exactly.
    np.testing.assert_array_equal(Z.data, 1 / np.sqrt(30))
    # Each tree's leaves partition the points: column sums of a tree's block add up to N.
    assert np.isclose((Z.sum(axis=0) * np.sqrt(30)).sum(), 400 * 30)
    # Other points: still M stored entries, values in (0, 1/√M].
    Zt = model.transform(X[400:] * 1.5 - 0.25)
    np.testing.assert_array_equal(Zt.getnnz(axis=1), 30)
    assert np.all(Zt.data <= 1 / np.sqrt(30)) and np.all(Zt.data >= 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda n_jobs: MondrianKernelFeatures(20, lifetime=4.0, random_state=5, n_jobs=n_jobs),
        lambda n_jobs: MondrianKernelRidge(20, lifetime=4.0, random_state=5, n_jobs=n_jobs),
        lambda n_jobs: MondrianKernelRidgeCV(
            20, max_lifetime=6.0, alphas=1.0, lifetimes=15, random_state=5, n_jobs=n_jobs
        ),
    ],
)
def test_same_seed_same_result_for_any_n_jobs(data, make) -> None:  # type: ignore[no-untyped-def]
    X, y = data

    def output(n_jobs: int) -> tuple[np.ndarray]:
        model = make(n_jobs).fit(X[:500], y[:500])
        if isinstance(model, MondrianKernelRidge):
            model.partial_fit(X[500:], y[500:])
        out = model.transform(X) if hasattr(model, "transform") else model.predict(X)
        return (out.toarray() if scipy.sparse.issparse(out) else out,)

    assert_same_for_any_n_jobs(output)


def test_different_seeds_differ(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    a = MondrianKernelRidge(10, lifetime=4.0, random_state=0).fit(X, y).predict(X)
    b = MondrianKernelRidge(10, lifetime=4.0, random_state=1).fit(X, y).predict(X)
    assert np.abs(a - b).max() > 1e-3


@pytest.mark.parametrize(
    "estimator",
    [
        MondrianKernelFeatures(10, lifetime=2.0, random_state=0),
        MondrianKernelRidge(10, lifetime=2.0, random_state=0),
        MondrianKernelRidgeCV(10, max_lifetime=4.0, lifetimes=8, random_state=0),
    ],
)
def test_pickle_round_trip(data, estimator) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = estimator.fit(X[:500], y[:500])
    copy = pickle.loads(pickle.dumps(model))
    if hasattr(model, "transform"):
        assert (copy.transform(X) != model.transform(X)).nnz == 0
    else:
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    if isinstance(model, MondrianKernelRidge):
        # The trees' random streams travel too: the same update gives the same model.
        model.partial_fit(X[500:], y[500:])
        copy.partial_fit(X[500:], y[500:])
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))


def test_corrupt_bytes_are_rejected(data) -> None:  # type: ignore[no-untyped-def]
    from mondrian_learn import _core

    X, y = data
    model = MondrianKernelRidge(5, lifetime=2.0, random_state=0).fit(X, y)
    raw = model.model_.to_bytes()
    with pytest.raises(ValueError):
        _core.KernelRidge.from_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError):
        _core.KernelFeatures.from_bytes(b"MLRN" + raw[4:])


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (MondrianKernelRidge(n_estimators=0), "n_estimators"),
        (MondrianKernelRidge(lifetime=-1.0), "lifetime"),
        (MondrianKernelRidge(lifetime=np.inf), "lifetime"),
        (MondrianKernelRidge(alpha=0.0), "alpha"),
        (MondrianKernelFeatures(lifetime="big"), "lifetime"),  # type: ignore[arg-type]
        (MondrianKernelRidgeCV(selection="aic"), "selection"),
        (MondrianKernelRidgeCV(solver="lu"), "solver"),
        (MondrianKernelRidgeCV(validation_fraction=1.0), "validation_fraction"),
        (MondrianKernelRidgeCV(max_lifetime=1.0, lifetimes=[0.5, 2.0]), "max_lifetime"),
        (MondrianKernelRidgeCV(lifetimes=0), "lifetimes"),
        (MondrianKernelRidgeCV(max_dense_features=0), "max_dense_features"),
    ],
)
def test_bad_parameters_raise_value_error(data, estimator, message: str) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)


def test_bad_input_raises_value_error(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianKernelRidge(5, lifetime=2.0, random_state=0).fit(X, y)
    with pytest.raises(ValueError):
        model.predict(X[:, :2])
    with pytest.raises(ValueError):
        model.partial_fit(X[:, :2], y)
    bad = X[:10].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, y[:10])
    with pytest.raises(ValueError):
        model.partial_fit(X[:10], np.full(10, np.inf))
    with pytest.raises(ValueError, match="X_val"):
        MondrianKernelRidgeCV(5, max_lifetime=2.0).fit(X, y, X_val=X[:5])
    with pytest.raises(ValueError, match="n_samples=1"):
        MondrianKernelRidgeCV(5, max_lifetime=2.0).fit(X[:1], y[:1])
    # A failed update leaves the model usable and unchanged.
    np.testing.assert_array_equal(
        model.predict(X), MondrianKernelRidge(5, lifetime=2.0, random_state=0).fit(X, y).predict(X)
    )


def test_pipeline_grid_search_and_clone(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    pipe = make_pipeline(MinMaxScaler(), MondrianKernelRidge(10, random_state=0))
    search = GridSearchCV(pipe, {"mondriankernelridge__lifetime": [1.0, 4.0]}, cv=2)
    search.fit(X, y)
    assert search.best_params_
    params = MondrianKernelRidgeCV(7, max_lifetime=3.0).get_params()
    assert clone(MondrianKernelRidgeCV(7, max_lifetime=3.0)).get_params() == params
