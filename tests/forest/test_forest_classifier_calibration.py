"""MondrianForestClassifier's calibrated probabilities: the sharpness τ and least discount
chosen on held-out rows — the tempering against its definition, the choice against the
paper's forest on data from known models (paired standard errors), streams choosing as a
batch fit does, fixed values, and the core's discount setter."""

from __future__ import annotations

import numpy as np
import pytest

from mondrian_learn import MondrianForestClassifier
from mondrian_learn.forest._hyperparameters import MIN_CRITERION_ROWS
from mondrian_learn.forest._sharpness import sharpen


def test_sharpen_is_the_normalised_power() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(5), size=50)
    p[0] = [0.0, 0.2, 0.3, 0.5, 0.0]
    for tau in (0.4, 1.0, 2.7):
        direct = p**tau / np.sum(p**tau, axis=1, keepdims=True)
        np.testing.assert_allclose(sharpen(p, tau), direct, rtol=1e-12, atol=1e-300)
    assert sharpen(p, 1.0) is p


def _paired_gain(
    model: MondrianForestClassifier, paper: MondrianForestClassifier, X: np.ndarray, y: np.ndarray
) -> tuple[float, float]:
    """Mean per-row log-loss gain of ``model`` over ``paper`` on (X, y), and its standard
    error (the rows are independent draws)."""
    index = np.searchsorted(model.classes_, y)
    rows = np.arange(len(y))
    gain = np.log(model.predict_proba(X)[rows, index]) - np.log(paper.predict_proba(X)[rows, index])
    return float(gain.mean()), float(gain.std(ddof=1) / np.sqrt(len(y)))


def _noisy_labels(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """P(y = 1 | x) = 0.1 + 0.8 x₀ on the unit square in 4-D: the labels are noisy, and a
    forest of pure leaves is over-confident."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    return X, (rng.uniform(size=n) < 0.1 + 0.8 * X[:, 0]).astype(int)


def _separated_classes(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Eight classes of well-separated Gaussian blobs in 6-D (few errors): the trees agree
    where they are right, and their average is under-confident."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(99).normal(scale=3.0, size=(8, 6))
    y = rng.integers(0, 8, size=n)
    return centres[y] + rng.normal(size=(n, 6)), y


@pytest.mark.parametrize(("draw", "sharper"), [(_noisy_labels, False), (_separated_classes, True)])
def test_the_choice_beats_the_papers_average_on_new_rows(draw, sharper) -> None:  # type: ignore[no-untyped-def]
    X, y = draw(2000, 0)
    X_test, y_test = draw(20000, 1)
    model = MondrianForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    paper = MondrianForestClassifier(
        n_estimators=20, random_state=0, sharpness=1.0, min_discount=0.01
    ).fit(X, y)
    # τ moves the way the data need: below 1 for noisy labels, above for clear classes.
    assert (model.sharpness_ > 1.0) == sharper
    gain, error = _paired_gain(model, paper, X_test, y_test)
    assert gain > 4 * error, (gain, error)


def test_fixed_values_give_the_papers_forest() -> None:
    X, y = _noisy_labels(500, 3)
    model = MondrianForestClassifier(
        n_estimators=5, random_state=0, sharpness=1.0, min_discount=0.01
    ).fit(X, y)
    assert model.sharpness_ == 1.0 and model.min_discount_ == 0.01
    np.testing.assert_array_equal(
        model.predict_proba(X), model.model_.predict_proba(np.ascontiguousarray(X), 1)
    )


def test_setting_the_discounts_equals_fitting_with_them() -> None:
    X, y = _separated_classes(600, 4)
    chosen = MondrianForestClassifier(n_estimators=6, random_state=2).fit(X, y)
    fixed = MondrianForestClassifier(
        n_estimators=6, random_state=2, min_discount=0.2, sharpness=chosen.sharpness_
    ).fit(X, y)
    assert chosen.min_discount_ != 0.2
    chosen.model_.set_discounts(chosen.model_.discounts[0], 0.2)
    np.testing.assert_array_equal(chosen.predict_proba(X), fixed.predict_proba(X))
    with pytest.raises(ValueError, match="out of range"):
        chosen.model_.set_discounts(-1.0, 0.5)
    with pytest.raises(ValueError, match="out of range"):
        chosen.model_.set_discounts(1.0, 1.5)


def test_a_stream_chooses_as_a_batch_fit_on_the_same_rows() -> None:
    X, y = _separated_classes(200, 5)
    params = {"n_estimators": 8, "random_state": 1, "scale_features": False}
    stream = MondrianForestClassifier(**params)
    stream.partial_fit(X[:1], y[:1], classes=np.arange(8))
    for start in range(1, MIN_CRITERION_ROWS - 1):
        stream.partial_fit(X[start : start + 1], y[start : start + 1])
    assert stream.sharpness_ == 1.0 and stream.min_discount_ == 0.01  # too few rows yet
    stream.partial_fit(X[MIN_CRITERION_ROWS - 1 : 100], y[MIN_CRITERION_ROWS - 1 : 100])
    at_100 = MondrianForestClassifier(**params).fit(X[:100], y[:100])
    assert (stream.sharpness_, stream.min_discount_) == (at_100.sharpness_, at_100.min_discount_)
    stream.partial_fit(X[100:199], y[100:199])  # 199 rows: not yet doubled since 100
    assert stream.sharpness_ == at_100.sharpness_
    stream.partial_fit(X[199:], y[199:])
    batch = MondrianForestClassifier(**params).fit(X, y)
    assert (stream.sharpness_, stream.min_discount_) == (batch.sharpness_, batch.min_discount_)


def test_a_stream_that_cannot_hold_out_rows_is_not_retried_on_every_row() -> None:
    """One class so far: no fold can score, and the next attempt waits for the rows to
    double (attempts at 32 and 64 rows of 100, not at every row)."""
    X, _ = _noisy_labels(100, 6)
    stream = MondrianForestClassifier(n_estimators=4, random_state=0)
    for i in range(100):
        stream.partial_fit(X[i : i + 1], [0], classes=[0, 1])
    assert stream._weight_at_choice_ == 64
    assert stream.sharpness_ == 1.0


def test_a_fixed_floor_of_zero_still_chooses_the_sharpness() -> None:
    """With min_discount=0 a held-out label can have probability 0; the choice stays finite."""
    X, y = _separated_classes(1000, 7)
    model = MondrianForestClassifier(n_estimators=8, random_state=0, min_discount=0.0).fit(X, y)
    assert model.min_discount_ == 0.0 and model.sharpness_ != 1.0
    np.testing.assert_allclose(model.predict_proba(X[:50]).sum(axis=1), 1.0, rtol=1e-12)


def test_the_core_sharpens_any_memory_layout() -> None:
    from mondrian_learn import _core

    p = np.random.default_rng(1).dirichlet(np.ones(4), size=6)
    np.testing.assert_array_equal(_core.sharpen(np.asfortranarray(p), 1.7), _core.sharpen(p, 1.7))
    with pytest.raises(ValueError, match="sharpness"):
        _core.sharpen(p, 0.0)
