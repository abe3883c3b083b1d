"""The core's forest classes, one per model: each holds its own kind, so it has only its own
methods, takes only its own targets, and refuses the other kind's bytes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import mondrian_learn as ml
from mondrian_learn import _core

RNG = np.random.default_rng(0)
X = RNG.uniform(size=(60, 2))
Y = np.sin(4 * X[:, 0])


def fitted() -> tuple[_core.ForestRegressor, _core.ForestClassifier]:
    regressor = ml.MondrianForestRegressor(3, lifetime=4.0, random_state=0).fit(X, Y)
    classifier = ml.MondrianForestClassifier(3, lifetime=4.0, random_state=0).fit(X, Y > 0)
    return regressor.model_, classifier.model_


def test_each_estimator_holds_the_class_of_its_kind() -> None:
    regressor, classifier = fitted()
    assert type(regressor) is _core.ForestRegressor
    assert type(classifier) is _core.ForestClassifier
    assert not hasattr(regressor, "predict_proba") and not hasattr(regressor, "sharpness")
    assert not hasattr(classifier, "predict") and not hasattr(classifier, "spread")


def test_bytes_of_one_kind_are_refused_by_the_other() -> None:
    regressor, classifier = fitted()
    with pytest.raises(ValueError, match="another kind, not a regressor"):
        _core.ForestRegressor.from_bytes(classifier.to_bytes())
    with pytest.raises(ValueError, match="another kind, not a classifier"):
        _core.ForestClassifier.from_bytes(regressor.to_bytes())


def test_pickled_classes_predict_exactly_as_the_original() -> None:
    regressor, classifier = fitted()
    for model in (regressor, classifier):
        loaded = pickle.loads(pickle.dumps(model))
        assert type(loaded) is type(model)
        assert bytes(loaded.to_bytes()) == bytes(model.to_bytes())
    mean, var = regressor.predict(X, 1)
    loaded_mean, loaded_var = pickle.loads(pickle.dumps(regressor)).predict(X, 1)
    np.testing.assert_array_equal(mean, loaded_mean)
    np.testing.assert_array_equal(var, loaded_var)
    np.testing.assert_array_equal(
        classifier.predict_proba(X, 1), pickle.loads(pickle.dumps(classifier)).predict_proba(X, 1)
    )


def test_constructors_share_their_positional_arguments() -> None:
    """The first four arguments are the same for both kinds; the rest are keyword-only."""
    regressor = _core.ForestRegressor(2, 3.0, 2, 7, tries=1, locations=1)
    classifier = _core.ForestClassifier(2, 3.0, 2, 7, n_classes=3, discount_rate=20.0)
    for model in (regressor, classifier):
        assert (model.n_features, model.lifetime, model.seed, model.n_trees) == (2, 3.0, 7, 0)
    assert classifier.discounts == (20.0, 0.0)
    with pytest.raises(TypeError):
        _core.ForestClassifier(2, 3.0, 2, 7, 3, 20.0)  # type: ignore[misc]


def test_targets_of_the_other_kind_are_refused() -> None:
    regressor = _core.ForestRegressor(2, 3.0, 2, 0)
    with pytest.raises(TypeError):
        regressor.fit(X, (Y > 0).astype(np.uint32), 2, 1, 2)
    classifier = _core.ForestClassifier(2, 3.0, 2, 0, n_classes=2, discount_rate=20.0)
    with pytest.raises(TypeError):
        classifier.fit(X, Y, 2, 1, 2)
    assert regressor.n_trees == 0 and classifier.n_trees == 0
