"""The partition-kernel estimators as scikit-learn estimators: check_estimator, clone,
pickle, pipelines."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mondrian_learn.partition import (
    FastClusterPartitions,
    MondrianPartitions,
    PartitionGPRegressor,
    PartitionKernelEstimator,
    PartitionKernelPCA,
    PartitionSVC,
    RandomPartitionKernel,
)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    return X, X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=300)


def test_pickle_clone_and_pipelines(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    gp = make_pipeline(
        StandardScaler(),
        PartitionGPRegressor(
            MondrianPartitions(0.5), n_partitions=30, noise_variance=0.05, random_state=0
        ),
    ).fit(X, y)
    copy = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(copy.predict(X[:20]), gp.predict(X[:20]))
    pca = PartitionKernelPCA(
        2, sampler=FastClusterPartitions(4), n_partitions=20, random_state=0
    ).fit(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pca)).transform(X), pca.transform(X))
    fresh = clone(pca)
    assert not hasattr(fresh, "kernel_") and fresh.get_params()["sampler"].max_level == 4
    search = GridSearchCV(
        PartitionSVC(n_partitions=20, random_state=0),
        {"sampler": [MondrianPartitions(0.3), MondrianPartitions(1.0)]},
        cv=3,
    ).fit(X, y > 0)
    assert search.best_score_ > 0.6


def test_bad_parameters_are_value_errors(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    for bad in [
        PartitionGPRegressor(noise_variance=-1.0),
        PartitionGPRegressor(preconditioner="ilu"),
        PartitionGPRegressor(n_probes=0),
        PartitionGPRegressor(n_probes=1),
        PartitionGPRegressor(n_partitions=2.5),
    ]:
        with pytest.raises(ValueError):
            bad.fit(X, y)
    for bad_pca in [
        PartitionKernelPCA(n_components=0),
        PartitionKernelPCA(krylov_depth=0),
        PartitionKernelPCA(tol=-1.0),
        PartitionKernelPCA(n_components=301),
    ]:
        with pytest.raises(ValueError):
            bad_pca.fit(X)
    with pytest.raises(ValueError):
        PartitionSVC().fit(X, y)  # continuous targets


def test_the_base_is_not_an_estimator() -> None:
    """The estimators' base declares no parameters of its own (the kernel's table is the
    kernel's alone): making it is a ``TypeError``, as for the other families' bases."""
    assert "_parameters" not in vars(PartitionKernelEstimator)
    with pytest.raises(TypeError, match="declares no parameters"):
        PartitionKernelEstimator()
    for estimator in (PartitionGPRegressor, PartitionKernelPCA, PartitionSVC):
        table = estimator._parameters  # type: ignore[attr-defined]
        for name, param in RandomPartitionKernel._parameters.items():
            assert table[name] is param, (estimator.__name__, name)
