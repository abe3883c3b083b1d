"""The folds of the two kernel ridges that choose their lifetimes by validation
(MondrianKernelRidgeCV and MondrianGridRidgeCV): both split and check ``fit``'s arguments by
one rule, and pool and choose on the path as the CV forests do."""

from __future__ import annotations

import pickle
from typing import Any, Callable

import numpy as np
import pytest

from mondrian_learn import MondrianKernelRidgeCV
from mondrian_learn._lifetime_path import best_index, pooled_scores, validation_splits
from mondrian_learn.kernel import MondrianGridRidgeCV
from mondrian_learn.kernel._base import lifetime_for_cells

ESTIMATORS: list[Callable[..., Any]] = [
    lambda **params: MondrianKernelRidgeCV(4, max_lifetime=3.0, lifetimes=5, **params),
    lambda **params: MondrianGridRidgeCV(3, max_iter=3, **params),
]


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(40, 2))
    return X, np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=40)


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("cv", [None, 3])
def test_folds_are_the_drawn_splits(
    make: Callable[..., Any], cv: int | None, data: tuple[np.ndarray, np.ndarray]
) -> None:
    """Each fold holds the rows of one split of ``validation_splits`` (for the same
    ``random_state``); a single held-out share is added back after the training rows for the
    final model, folds refit on all of X in order."""
    X, y = data
    rows = make(cv=cv, random_state=5)._validation_folds(X, y, None, None, None)
    splits = validation_splits(cv, rows.X, y, 0.2, 5, distinct=False)
    assert len(rows.folds) == len(splits) and rows.held_out == (cv is None)
    for fold, (train, held_out) in zip(rows.folds, splits):
        np.testing.assert_array_equal(fold.X, rows.X[train])
        np.testing.assert_array_equal(fold.y_val, y[held_out])
        assert fold.weights is None and fold.val_weights is None
    refit_y, refit_w = rows.refit_targets()
    first = splits[0]
    expected = np.concatenate([y[first[0]], y[first[1]]]) if cv is None else y
    np.testing.assert_array_equal(refit_y, expected)
    assert refit_w is None


@pytest.mark.parametrize("make", ESTIMATORS)
def test_weighted_folds_keep_the_weights(
    make: Callable[..., Any], data: tuple[np.ndarray, np.ndarray]
) -> None:
    """Rows of zero weight leave every fold; the others keep their weights in both shares,
    which weigh the fold in the pooled error and follow the rows into the refit."""
    X, y = data
    weights = np.tile([0.0, 1.0, 2.0, 3.0], 10)
    rows = make(random_state=5)._validation_folds(X, y, None, None, weights)
    assert rows.X.shape[0] == 30
    (fold,) = rows.folds
    assert np.all(fold.weights > 0) and np.all(fold.val_weights > 0)
    assert rows.validation_weights() == [float(np.sum(fold.val_weights))]
    _, refit_w = rows.refit_targets()
    np.testing.assert_array_equal(refit_w, np.concatenate([fold.weights, fold.val_weights]))
    assert sorted(refit_w) == sorted(weights[weights > 0])


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize(
    ("params", "given", "match"),
    [
        ({}, ("X_val",), "give both X_val and y_val"),
        ({"cv": 3}, ("X_val", "y_val"), "leave cv=None"),
        ({"cv": 3, "selection": "evidence"}, (), "leave cv=None"),
    ],
)
def test_fit_arguments_are_checked_alike(
    make: Callable[..., Any],
    params: dict[str, Any],
    given: tuple[str, ...],
    match: str,
    data: tuple[np.ndarray, np.ndarray],
) -> None:
    """A lone X_val, and cv with X_val or with the evidence, are refused by both."""
    X, y = data
    validation = {"X_val": X[:5], "y_val": y[:5]}
    arguments = {name: validation[name] for name in given}
    with pytest.raises(ValueError, match=match):
        make(**params).fit(X, y, **arguments)


def test_pooled_scores_weigh_splits_by_validation_weight() -> None:
    """Σ_k w_k s_k / Σ_k w_k per checkpoint; one split's own scores bit for bit (a weighted
    mean of one row may round); the choice takes the first of equal scores."""
    scores = np.array([[0.3, 0.1, 0.1], [0.5, 0.2, 0.4]])
    np.testing.assert_allclose(
        pooled_scores(scores, [1.0, 3.0]), (scores[0] + 3 * scores[1]) / 4, rtol=1e-15
    )
    single = np.array([[0.1 + 0.2, 1 / 3]])
    assert pooled_scores(single, [7.0]).tobytes() == single[0].tobytes()
    assert best_index(scores[0]) == 1
    assert best_index(scores[0], larger_is_better=True) == 0
    assert best_index(np.array([[2.0, 1.0], [1.0, 3.0]])) == 1


@pytest.mark.parametrize("make", ESTIMATORS)
def test_folds_hold_the_rows_as_given(
    make: Callable[..., Any], data: tuple[np.ndarray, np.ndarray]
) -> None:
    """The folds index the checked rows themselves, not their images in the unit box: the
    core reads them through the fitted map (no mapped copy of X)."""
    X, y = data
    X = 40.0 * X - 7.0
    model = make(random_state=5)
    rows = model._validation_folds(X, y, X[:6] + 1.0, y[:6], None)
    np.testing.assert_array_equal(rows.X, X)
    (fold,) = rows.folds
    np.testing.assert_array_equal(fold.X, X)
    np.testing.assert_array_equal(fold.X_val, X[:6] + 1.0)
    rows = make(cv=3, random_state=5)._validation_folds(X, y, None, None, None)
    np.testing.assert_array_equal(rows.X, X)
    for fold in rows.folds:
        np.testing.assert_array_equal(np.sort(np.vstack([fold.X, fold.X_val]), 0), np.sort(X, 0))
    assert not model._is_identity()


@pytest.mark.parametrize("weighted", [False, True])
def test_max_lifetime_is_that_of_the_mapped_rows(
    weighted: bool, data: tuple[np.ndarray, np.ndarray]
) -> None:
    """Λ (``max_lifetime=None``) read from the images of each feature's extremes is, bit for
    bit, Λ of the mapped rows themselves (the map is increasing in each feature)."""
    X, y = data
    X = np.column_stack([1e3 * X[:, 0] - 0.1, 1e-3 * X[:, 1] + 7.0])
    weights = np.tile([1.0, 2.0, 0.5, 3.0], 10) if weighted else None
    model = MondrianKernelRidgeCV(4, lifetimes=5, random_state=5)
    rows = model._validation_folds(X, y, None, None, weights)
    for fold in rows.folds:
        cells = float(len(fold.y)) if fold.weights is None else float(np.sum(fold.weights))
        expected = lifetime_for_cells(model._mapped_array(fold.X), cells)
        assert model._max_lifetime(fold.X, fold.weights) == expected


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("params", [{}, {"cv": 3}, {"selection": "evidence"}, {"validation": True}])
def test_the_core_maps_the_rows_as_numpy_would(
    make: Callable[..., Any], params: dict[str, Any], data: tuple[np.ndarray, np.ndarray]
) -> None:
    """A fit on X, read by the core through the map, is bit for bit the fit on X mapped in
    numpy beforehand with ``scale_features=False``: path, choice, model and predictions."""
    X, y = data
    X = np.column_stack([300.0 * X[:, 0] - 50.0, 1e-2 * X[:, 1] + 7.0])
    params = dict(params)  # pytest shares the parametrised dict between the estimators
    validation = params.pop("validation", False)
    scaled = make(random_state=2, **params)
    scaled.fit(X, y, *((X[:8] * 1.1, y[:8]) if validation else ()))
    images = scaled._mapped_array
    raw = make(random_state=2, scale_features=False, **params)
    raw.fit(images(X), y, *((images(X[:8] * 1.1), y[:8]) if validation else ()))
    for name, value in scaled.path_.items():
        if name != "time":  # wall clock
            assert np.asarray(value).tobytes() == np.asarray(raw.path_[name]).tobytes(), name
    assert (scaled.best_index_, scaled.alpha_) == (raw.best_index_, raw.alpha_)
    assert pickle.dumps(scaled.model_) == pickle.dumps(raw.model_)
    far = 2.0 * X - 1.0
    mean, std = scaled.predict(far, return_std=True)
    expected_mean, expected_std = raw.predict(images(far), return_std=True)
    assert mean.tobytes() == expected_mean.tobytes() and std.tobytes() == expected_std.tobytes()


@pytest.mark.parametrize("make", ESTIMATORS)
def test_validation_rows_whose_images_overflow_are_refused_by_name(
    make: Callable[..., Any], data: tuple[np.ndarray, np.ndarray]
) -> None:
    """X_val read through the map is refused before any tree is sampled, with the message of
    every estimator's map (not as a failure of the path at some α)."""
    X, y = data
    X = 1e-10 * X
    X_val = np.array([[1e308, 0.0]])
    with pytest.raises(ValueError, match="^X holds values of feature 0 so far outside"):
        make().fit(X, y, X_val, y[:1])
