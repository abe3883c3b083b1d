"""``sample_weight`` on the Mondrian forests (issue 16, item 11): weights are frequencies, so a
fit with integer weights is the fit on the rows repeated — the same trees (a copy adds no
extent; ``min_samples_split=2`` pauses only blocks of coinciding points either way) and the
same leaf statistics up to the order of their sums — and a zero weight removes its row.

Tree for tree: candidates in different dimensions that split a block's points alike score
alike up to rounding, which the order of the sums decides; scores within 1e-10 of the
block's magnitude count as tied and the earlier draw wins, so neither the rows' order nor
their multiplicity picks the cut.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def _data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=n)
    counts = rng.integers(0, 4, size=n)
    return X, y, counts, rng.uniform(-0.2, 1.2, size=(40, 3))


def _labels(y: np.ndarray) -> np.ndarray:
    return np.where(y > np.median(y), "high", "low")


REGRESSORS = {
    # The heuristic prior and a fixed one: the posterior is a closed function of the leaf
    # statistics, equal up to the rounding of sums taken in another order.
    "heuristic": dict(hyperparameters="heuristic"),
    "fixed": dict(
        gamma1=0.5, gamma2=2.0, noise_variance=0.01, prior_mean=0.4, hyperparameters="heuristic"
    ),
    "within_leaf": dict(noise_variance="within_leaf", hyperparameters="heuristic"),
}


@pytest.mark.parametrize("params", REGRESSORS.values(), ids=REGRESSORS.keys())
def test_regressor_integer_weights_repeat_rows(params: dict[str, Any]) -> None:
    X, y, counts, Q = _data()

    def make() -> MondrianForestRegressor:
        return MondrianForestRegressor(n_estimators=8, random_state=3, **params)

    weighted = make().fit(X, y, sample_weight=counts)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    for t in range(8):
        a, b = weighted.tree_arrays(t), repeated.tree_arrays(t)
        np.testing.assert_array_equal(a["threshold"], b["threshold"])
    mean_w, std_w = weighted.predict(Q, return_std=True)
    mean_r, std_r = repeated.predict(Q, return_std=True)
    np.testing.assert_allclose(mean_w, mean_r, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(std_w, std_r, rtol=1e-9)
    assert weighted.prior_ == pytest.approx(repeated.prior_, rel=1e-9)
    kept = counts > 0
    removed = make().fit(X[kept], y[kept], sample_weight=counts[kept])
    np.testing.assert_array_equal(removed.predict(Q), mean_w)


def test_regressor_evidence_search_sees_repeated_rows() -> None:
    """The evidence search maximises the weighted evidence, which is the repeated rows'
    evidence: the optima agree to the optimiser's precision (L-BFGS-B on finite differences
    stops within ~1e-4 of the optimum in flat directions). σ² is fixed: repeated rows put
    equal targets in a leaf, where the evidence grows without bound as σ² → 0."""
    X, y, counts, Q = _data(seed=1)
    make = lambda: MondrianForestRegressor(  # noqa: E731
        n_estimators=8, random_state=1, noise_variance=0.01, hyperparameters="evidence"
    )
    weighted = make().fit(X, y, sample_weight=counts)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    for name, value in weighted.prior_.items():
        assert value == pytest.approx(repeated.prior_[name], rel=1e-3), name
    np.testing.assert_allclose(weighted.predict(Q), repeated.predict(Q), rtol=1e-3)
    loo = dict(hyperparameters="leave_one_out", n_estimators=4, random_state=0)
    model = MondrianForestRegressor(**loo).fit(X, y, sample_weight=counts)
    assert np.all(np.isfinite(model.predict(Q)))


def test_unit_weights_change_nothing() -> None:
    X, y, _, Q = _data(seed=2)
    plain = MondrianForestRegressor(n_estimators=6, random_state=0).fit(X, y)
    ones = MondrianForestRegressor(n_estimators=6, random_state=0).fit(
        X, y, sample_weight=np.ones(len(y))
    )
    np.testing.assert_array_equal(plain.predict(Q), ones.predict(Q))
    assert pickle.dumps(plain.model_) == pickle.dumps(ones.model_)


def test_classifier_integer_weights_repeat_rows() -> None:
    X, y, counts, Q = _data(seed=4)
    labels = _labels(y)
    make = lambda: MondrianForestClassifier(  # noqa: E731
        n_estimators=8, random_state=5
    )
    weighted = make().fit(X, labels, sample_weight=counts)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(labels, counts))
    for t in range(8):
        np.testing.assert_array_equal(weighted.node_counts(t), repeated.node_counts(t))
    np.testing.assert_allclose(weighted.predict_proba(Q), repeated.predict_proba(Q), rtol=1e-12)
    kept = counts > 0
    removed = make().fit(X[kept], labels[kept], sample_weight=counts[kept])
    np.testing.assert_array_equal(removed.predict_proba(Q), weighted.predict_proba(Q))


def test_classifier_counts_are_the_weight_of_each_class() -> None:
    X, y, _, _ = _data(seed=6)
    labels = _labels(y)
    w = np.random.default_rng(6).uniform(0.1, 3.0, size=len(y))
    model = MondrianForestClassifier(n_estimators=3, random_state=0).fit(X, labels, sample_weight=w)
    root = model.tree_arrays(0)["root"]
    totals = [w[labels == c].sum() for c in model.classes_]
    np.testing.assert_allclose(model.node_counts(0)[root], totals, rtol=1e-12)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_weighted_partial_fit_repeats_rows_and_pickles(kind: str) -> None:
    X, y, counts, Q = _data(seed=7)
    if kind == "regressor":
        target, make = (
            y,
            lambda: MondrianForestRegressor(
                n_estimators=5, random_state=2, hyperparameters="heuristic"
            ),
        )
        out = lambda m: m.predict(Q, return_std=True)[1]  # noqa: E731
    else:
        target, make = (
            _labels(y),
            lambda: MondrianForestClassifier(n_estimators=5, random_state=2),
        )
        out = lambda m: m.predict_proba(Q)  # noqa: E731
    weighted, repeated = make(), make()
    classes = {} if kind == "regressor" else {"classes": np.unique(target)}
    for rows in np.array_split(np.arange(len(y)), 4):
        weighted.partial_fit(X[rows], target[rows], sample_weight=counts[rows], **classes)
        kept = np.repeat(rows, counts[rows])
        repeated.partial_fit(X[kept], target[kept], **classes)
    np.testing.assert_allclose(out(weighted), out(repeated), rtol=1e-9)
    loaded = pickle.loads(pickle.dumps(weighted))
    np.testing.assert_array_equal(out(loaded), out(weighted))


def test_bad_weights_are_refused_and_leave_the_model_as_it_was() -> None:
    X, y, _, Q = _data(seed=8)
    model = MondrianForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    before = model.predict(Q)
    for bad, message in [
        (-np.ones(len(y)), "non-negative"),
        (np.full(len(y), np.nan), "finite"),
        (np.ones(3), "shape"),
        (np.zeros(len(y)), "zero for every row"),
        (np.full(len(y), 1e200), "up to"),
    ]:
        with pytest.raises(ValueError, match=message):
            model.fit(X, y, sample_weight=bad)
        with pytest.raises(ValueError, match=message):
            model.partial_fit(X, y, sample_weight=bad)
    np.testing.assert_array_equal(model.predict(Q), before)


def test_row_order_does_not_pick_the_cuts() -> None:
    """Shuffled rows: the same trees (label-guided cuts whose ties are decided by the draw, not
    by rounding), the same predictions up to the rounding of the leaves' sums."""
    X, y, _, Q = _data(n=300, seed=9)
    order = np.random.default_rng(9).permutation(len(y))
    for make in (
        lambda: MondrianForestRegressor(n_estimators=6, random_state=4),
        lambda: MondrianForestClassifier(n_estimators=6, random_state=4),
    ):
        target = y if isinstance(make(), MondrianForestRegressor) else _labels(y)
        a, b = make().fit(X, target), make().fit(X[order], target[order])
        for t in range(6):
            np.testing.assert_array_equal(
                a.tree_arrays(t)["threshold"], b.tree_arrays(t)["threshold"]
            )
        out = "predict" if isinstance(a, MondrianForestRegressor) else "predict_proba"
        np.testing.assert_allclose(getattr(a, out)(Q), getattr(b, out)(Q), rtol=1e-6)


def test_validation_path_weights_are_repeated_rows() -> None:
    """Validation weights weigh the path's validation scores: integer weights give the scores
    of the rows repeated (the same sums, in another order)."""
    X, y, counts, _ = _data(n=200, seed=10)
    regressor = MondrianForestRegressor(n_estimators=4, random_state=0).fit(X[:150], y[:150])
    classifier = MondrianForestClassifier(n_estimators=4, random_state=0)
    classifier.fit(X[:150], _labels(y)[:150])
    held_out = slice(150, None)
    kept = np.repeat(np.arange(150, 200), counts[held_out])
    for model, target, names in [
        (regressor, y, ("validation_mse", "validation_nlpd")),
        (classifier, _labels(y), ("validation_log_loss", "validation_accuracy")),
    ]:
        weighted = model.lifetime_path(
            X[held_out], target[held_out], 20, sample_weight=counts[held_out]
        )
        repeated = model.lifetime_path(X[kept], target[kept], 20)
        for name in names:
            np.testing.assert_allclose(weighted[name], repeated[name], rtol=1e-10)
        assert not np.allclose(
            weighted[names[0]], model.lifetime_path(X[held_out], target[held_out], 20)[names[0]]
        )
    with pytest.raises(ValueError, match="give X and y too"):
        regressor.lifetime_path(sample_weight=np.ones(3))


def test_lifetime_search_takes_weights() -> None:
    """The CV forests pass the weights to both fits and to the validation path: a zero weight
    removes the row before the split, and weights change the chosen path."""
    from mondrian_learn import MondrianForestClassifierCV, MondrianForestRegressorCV

    X, y, counts, Q = _data(n=200, seed=11)
    for cls, target in [(MondrianForestRegressorCV, y), (MondrianForestClassifierCV, _labels(y))]:
        params = dict(n_estimators=4, lifetimes=10, random_state=0)
        kept = counts > 0
        weighted = cls(**params).fit(X, target, sample_weight=counts)
        removed = cls(**params).fit(X[kept], target[kept], sample_weight=counts[kept])
        plain = cls(**params).fit(X[kept], target[kept])
        key = next(k for k in weighted.path_ if k.startswith("validation_"))
        np.testing.assert_array_equal(weighted.path_[key], removed.path_[key])
        np.testing.assert_array_equal(weighted.predict(Q), removed.predict(Q))
        assert not np.array_equal(weighted.path_[key], plain.path_[key])


def test_lifetime_search_split_ignores_row_order_and_keeps_copies_together() -> None:
    from mondrian_learn import MondrianForestRegressorCV
    from mondrian_learn._lifetime_path import validation_splits

    X, y, counts, Q = _data(n=150, seed=12)
    X, y = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    [(train, held_out)] = validation_splits(None, X, y, 0.2, 0)
    assert not {tuple(r) for r in X[train]} & {tuple(r) for r in X[held_out]}
    order = np.random.default_rng(12).permutation(len(y))
    params = dict(n_estimators=4, lifetimes=10, random_state=0)
    a = MondrianForestRegressorCV(**params).fit(X, y)
    b = MondrianForestRegressorCV(**params).fit(X[order], y[order])
    assert a.lifetime_ == b.lifetime_
    np.testing.assert_allclose(a.path_["validation_mse"], b.path_["validation_mse"], rtol=1e-12)
    # the prior search sums the held-out densities in another order: equal to its precision
    np.testing.assert_allclose(a.predict(Q), b.predict(Q), rtol=1e-6, atol=1e-6)
