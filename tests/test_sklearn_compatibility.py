"""Every estimator passes scikit-learn's estimator checks (check_estimator) at its defaults, as
a user constructs it (at small settings a default could hide behind a cheaper one: the forest
regressor's held-out prior search failed the sample-weight equivalence only at its defaults)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import mondrian_learn as ml
from mondrian_learn.kernel import MondrianGridFeatures
from mondrian_learn.kernel.baselines import (
    LaplaceFourierFeatures,
    LaplaceKernelRidge,
    RandomBinningFeatures,
)
from mondrian_learn.partition import PartitionGPRegressor, PartitionKernelPCA, PartitionSVC

ESTIMATORS = [
    ml.MondrianDensityEstimator,
    ml.MondrianForestRegressor,
    ml.MondrianForestClassifier,
    ml.MondrianForestRegressorCV,
    ml.MondrianForestClassifierCV,
    ml.MondrianKernelFeatures,
    MondrianGridFeatures,
    ml.MondrianKernelRidge,
    ml.MondrianKernelRidgeCV,
    ml.MondrianGridRidgeCV,
    LaplaceFourierFeatures,
    RandomBinningFeatures,
    LaplaceKernelRidge,
    PartitionGPRegressor,
    PartitionKernelPCA,
    PartitionSVC,
]


def test_every_public_estimator_is_checked() -> None:
    """A new estimator exported at the top level joins the list (or this test fails)."""
    exported = {getattr(ml, name) for name in ml.__all__ if isinstance(getattr(ml, name), type)}
    assert exported - set(ESTIMATORS) == {ml.RandomPartitionKernel}  # a kernel, not a model


@pytest.mark.slow
@parametrize_with_checks([make() for make in ESTIMATORS])
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)


@pytest.mark.parametrize("make", ESTIMATORS, ids=lambda make: make.__name__)
def test_duplicate_column_names_are_treated_as_scikit_learn_treats_them(make: type) -> None:
    """A frame with a repeated column name gets, at fit, exactly what scikit-learn's own
    estimators give it (scikit-learn ≥ 1.9 refuses it; older versions accept it)."""
    import pandas as pd
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(size=(40, 3)), columns=["a", "b", "a"])
    y = (frame.iloc[:, 0] > 0.5).astype(int).to_numpy()
    try:
        Ridge().fit(frame, y)
        expected: type[BaseException] | None = None
    except Exception as error:  # whatever scikit-learn raises is the reference
        expected, message = type(error), str(error)
    estimator = make()
    if "n_estimators" in estimator.get_params():
        estimator.set_params(n_estimators=3)
    if expected is None:
        estimator.fit(frame, y)
        assert list(estimator.feature_names_in_) == ["a", "b", "a"]
    else:
        with pytest.raises(expected) as raised:
            estimator.fit(frame, y)
        assert str(raised.value) == message
