"""Every estimator passes scikit-learn's estimator checks (check_estimator)."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrian_learn import (
    MondrianDensityEstimator,
    MondrianForestClassifier,
    MondrianForestClassifierCV,
    MondrianForestRegressor,
    MondrianForestRegressorCV,
    MondrianGridRidgeCV,
    MondrianKernelFeatures,
    MondrianKernelRidge,
    MondrianKernelRidgeCV,
)
from mondrian_learn.kernel import MondrianGridFeatures
from mondrian_learn.kernel.baselines import (
    LaplaceFourierFeatures,
    LaplaceKernelRidge,
    RandomBinningFeatures,
)
from mondrian_learn.partition import PartitionGPRegressor, PartitionKernelPCA, PartitionSVC


@parametrize_with_checks(
    [
        MondrianDensityEstimator(n_estimators=5),
        MondrianForestRegressor(n_estimators=5),
        MondrianForestClassifier(n_estimators=5),
        MondrianForestRegressorCV(n_estimators=5, lifetimes=10),
        MondrianForestClassifierCV(n_estimators=5, lifetimes=10),
        MondrianKernelFeatures(n_estimators=5),
        MondrianGridFeatures(n_estimators=5),
        MondrianKernelRidge(n_estimators=5),
        MondrianKernelRidgeCV(n_estimators=5, max_lifetime=2.0, lifetimes=10),
        MondrianGridRidgeCV(n_estimators=5, max_iter=20),
        LaplaceFourierFeatures(n_components=5),
        RandomBinningFeatures(n_estimators=5),
        LaplaceKernelRidge(),
        PartitionGPRegressor(n_partitions=10, random_state=0),
        PartitionKernelPCA(n_components=2, n_partitions=10, random_state=0),
        PartitionSVC(n_partitions=10, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
