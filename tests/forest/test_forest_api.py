"""Behaviour of MondrianForestRegressor as a scikit-learn estimator."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from conftest import assert_same_for_any_n_jobs
from mondrian_learn import MondrianForestRegressor


@pytest.fixture(scope="module")
def friedman() -> tuple[np.ndarray, np.ndarray]:
    return make_friedman1(n_samples=2000, random_state=0)


@pytest.mark.parametrize("lifetime", [np.inf, 3.0])
def test_same_seed_same_forest_for_any_n_jobs(friedman, lifetime: float) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman

    def leaves_and_predictions(n_jobs: int) -> tuple[np.ndarray, np.ndarray]:
        model = MondrianForestRegressor(
            n_estimators=9, lifetime=lifetime, random_state=3, n_jobs=n_jobs
        ).fit(X[:1000], y[:1000])
        model.partial_fit(X[1000:1500], y[1000:1500]).partial_fit(X[1500:], y[1500:])
        return model.apply(X), model.predict(X)

    assert_same_for_any_n_jobs(leaves_and_predictions)


def test_different_seeds_differ(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    a = MondrianForestRegressor(random_state=0).fit(X, y).apply(X)
    b = MondrianForestRegressor(random_state=1).fit(X, y).apply(X)
    assert (a != b).mean() > 0.5


def test_pickle_round_trip_and_continue_online(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    model = MondrianForestRegressor(random_state=0).fit(X[:1500], y[:1500])
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    # The random streams travel too: the same update gives the same trees.
    model.partial_fit(X[1500:], y[1500:])
    copy.partial_fit(X[1500:], y[1500:])
    np.testing.assert_array_equal(copy.apply(X), model.apply(X))
    # Pickled while its posterior is stale (recomputed lazily after partial_fit).
    stale = pickle.loads(pickle.dumps(copy))
    np.testing.assert_array_equal(stale.predict(X), model.predict(X))
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))


def test_corrupt_state_is_a_value_error(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    model = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X[:100], y[:100])
    blob = model.model_.to_bytes()
    restore = type(model.model_).from_bytes
    with pytest.raises(ValueError):
        restore(blob[: len(blob) // 2])
    with pytest.raises(ValueError):
        restore(b"MLRN\x63\x00\x00\x00")
    with pytest.raises(ValueError, match="not a mondrian-learn model"):
        restore(b"hello world")


def test_learns_friedman(friedman) -> None:  # type: ignore[no-untyped-def]
    """Held-out R² on Friedman #1 far above a constant's (≤ 0), and near that of extremely
    randomized trees with one random feature per split, the closest label-blind peer (0.59
    with 20 trees; the Mondrian forest reaches 0.54 with 100)."""
    X, y = friedman
    model = MondrianForestRegressor(n_estimators=100, random_state=0).fit(X[:1500], y[:1500])
    assert model.score(X[1500:], y[1500:]) > 0.5


def test_scaling_is_the_unit_box_map() -> None:
    """scale_features=True equals scale_features=False on min-max scaled data."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3)) * [1.0, 50.0, 0.01] + [0.0, 7.0, -3.0]
    y = rng.normal(size=300)
    scaled = MondrianForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    unit = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    raw = MondrianForestRegressor(n_estimators=3, random_state=0, scale_features=False)
    raw.fit(unit, y)
    X_new = X * 1.5  # partly outside the training range
    unit_new = (X_new - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    np.testing.assert_array_equal(scaled.apply(X_new), raw.apply(unit_new))
    np.testing.assert_allclose(scaled.predict(X_new), raw.predict(unit_new), rtol=1e-12)


def test_tree_arrays_describe_the_partition(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    model = MondrianForestRegressor(n_estimators=3, random_state=0, lifetime=5.0).fit(X, y)
    t = model.tree_arrays(1)
    leaves = model.apply(X)[:, 1]
    assert set(np.unique(leaves)) <= set(np.flatnonzero(t["split_dim"] < 0))
    assert (t["split_dim"] < 0).sum() == model.n_leaves_[1]
    assert t["n_samples"][t["root"]] == len(X)
    internal = t["split_dim"] >= 0
    assert (t["tau"][internal] <= 5.0).all() and (t["tau"][~internal] == 5.0).all()
    with pytest.raises(ValueError, match="out of range"):
        model.tree_arrays(3)


def test_works_in_pipeline_gridsearch_and_clone(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    pipe = make_pipeline(StandardScaler(), MondrianForestRegressor(random_state=0))
    search = GridSearchCV(pipe, {"mondrianforestregressor__lifetime": [0.0, np.inf]}, cv=2)
    search.fit(X[:600], y[:600])
    assert search.best_params_["mondrianforestregressor__lifetime"] == np.inf
    params = clone(MondrianForestRegressor(lifetime=2.0)).get_params()
    assert params["lifetime"] == 2.0


def test_accepted_input_types(friedman) -> None:  # type: ignore[no-untyped-def]
    """float32, Fortran order, non-contiguous views, pandas and lists give the same trees."""
    X, y = friedman
    X, y = X[:400], y[:400]
    X32 = X.astype(np.float32)
    ref = MondrianForestRegressor(random_state=0).fit(X32.astype(np.float64), y)
    wide = np.repeat(X32, 2, axis=1)
    inputs = [
        X32,
        np.asfortranarray(X32),
        wide[:, ::2],
        pd.DataFrame(X32, columns=[f"f{i}" for i in range(X.shape[1])]),
        X32.tolist(),
    ]
    for data in inputs:
        model = MondrianForestRegressor(random_state=0).fit(data, list(y))
        # Predict on the same kind of input (a frame keeps its feature names).
        np.testing.assert_array_equal(model.apply(data), ref.apply(X32))


def test_constant_features_and_duplicates() -> None:
    X = np.zeros((100, 3))
    X[:, 1] = np.repeat(np.arange(5), 20)
    y = X[:, 1] * 2.0
    model = MondrianForestRegressor(n_estimators=4, min_samples_split=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.n_leaves_, 5)
    np.testing.assert_allclose(model.predict(X), y, atol=0.05)
    constant = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, np.full(100, 3.0))
    mean, std = constant.predict(X[:5] + 10.0, return_std=True)
    np.testing.assert_allclose(mean, 3.0)
    assert np.all(np.isfinite(std)) and np.all(std < 1e-3)


BAD_X = [
    (np.array([[0.0, np.nan]]), "NaN"),
    (np.array([[0.0, np.inf]]), "infinity"),
    (np.zeros((0, 2)), "0 sample"),
    (np.zeros(5), "2D array"),
    (np.array([["a", "b"]]), "could not convert"),
]


@pytest.mark.parametrize(("X", "message"), BAD_X)
def test_bad_fit_input(X: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MondrianForestRegressor().fit(X, np.zeros(len(X)))


def test_bad_targets_and_feature_counts(friedman) -> None:  # type: ignore[no-untyped-def]
    X, y = friedman
    with pytest.raises(ValueError, match="NaN"):
        MondrianForestRegressor().fit(X[:3], [0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MondrianForestRegressor().fit(X[:3], y[:2])
    model = MondrianForestRegressor(random_state=0).fit(X, y)
    for method in (model.predict, model.apply):
        with pytest.raises(ValueError, match="features"):
            method(X[:, :4])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :4], y)
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(np.full((1, X.shape[1]), np.nan), [0.0])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"min_samples_split": 1}, "min_samples_split"),
        ({"lifetime": -1.0}, "lifetime"),
        ({"lifetime": np.nan}, "lifetime"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"gamma1": 0.0}, "gamma1"),
        ({"noise_variance": np.inf}, "noise_variance"),
        ({"noise_variance": "guess"}, "noise_variance"),
        ({"prior_mean": np.nan}, "prior_mean"),
    ],
)
def test_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MondrianForestRegressor(**params).fit(np.zeros((4, 1)), np.zeros(4))


def test_verbose_reports_progress(capsys, friedman, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    X, y = friedman
    MondrianForestRegressor(n_estimators=10, verbose=1, n_jobs=1).fit(X[:200], y[:200])
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1] == "trees: 10/10" and len(lines) == 3


def test_a_single_quantile_gives_one_value_per_point() -> None:
    """As quantile-forest: a level given as a number gives shape (n,), a sequence (n, k)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 2))
    model = MondrianForestRegressor(3, hyperparameters="heuristic", random_state=0)
    model.fit(X, X[:, 0] + 0.1 * rng.normal(size=80))
    for level in (0.2, np.float64(0.5)):
        column = model.predict_quantiles(X[:7], [level])[:, 0]
        for single in (
            model.predict(X[:7], quantiles=level),
            model.predict_quantiles(X[:7], level),
        ):
            assert single.shape == (7,)
            np.testing.assert_array_equal(single, column)
    assert model.predict(X[:7], quantiles=[0.5]).shape == (7, 1)
    assert model.predict_quantiles(X[:7], np.array([0.2, 0.5, 0.9])).shape == (7, 3)
    for bad in ([[0.5]], []):
        with pytest.raises(ValueError, match="quantiles"):
            model.predict_quantiles(X[:7], bad)


def test_the_marginal_likelihood_has_scikit_learns_gpr_spelling() -> None:
    """``log_marginal_likelihood_value_`` as on GaussianProcessRegressor, the kernel ridges and
    the partition GP; it follows the model through ``partial_fit``."""
    rng = np.random.default_rng(3)
    X, y = rng.uniform(size=(80, 2)), rng.normal(size=80)
    model = MondrianForestRegressor(4, random_state=0).fit(X[:60], y[:60])
    assert model.log_marginal_likelihood_value_ == model.log_marginal_likelihood()
    before = model.log_marginal_likelihood_value_
    model.partial_fit(X[60:], y[60:])
    assert model.log_marginal_likelihood_value_ == model.log_marginal_likelihood() != before
