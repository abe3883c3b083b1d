"""``sample_weight`` across estimators (issue 16, item 11): scikit-learn's meaning (an integer
weight is the row repeated, a zero weight removes it) on the SVC, and metadata routing through
``cross_validate`` and a ``Pipeline``. The ridge's exactness is in
``tests/kernel/test_kernel_weights.py``."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mondrian_learn import MondrianKernelRidge, PartitionSVC


def test_svc_weights_repeat_and_remove_rows() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(80, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    counts = rng.integers(0, 4, size=80)
    Q = rng.uniform(-1.2, 1.2, size=(25, 3))
    make = lambda: PartitionSVC(n_partitions=30, random_state=2)  # noqa: E731
    weighted = make().fit(X, y, sample_weight=counts).decision_function(Q)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(weighted, repeated.decision_function(Q), rtol=1e-8, atol=1e-10)
    kept = counts > 0
    removed = make().fit(X[kept], y[kept], sample_weight=counts[kept]).decision_function(Q)
    np.testing.assert_array_equal(weighted, removed)
    with pytest.raises(ValueError, match="sample_weight must hold finite, non-negative"):
        make().fit(X, y, sample_weight=-counts)


def test_weights_are_routed_through_cross_validation_and_pipelines() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(150, 2))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=150)
    weights = rng.uniform(0.5, 2.0, size=150)
    with sklearn.config_context(enable_metadata_routing=True):
        ridge = MondrianKernelRidge(10, random_state=0).set_fit_request(sample_weight=True)
        ridge.set_score_request(sample_weight=True)
        pipeline = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), ridge)
        routed = cross_validate(
            pipeline,
            X,
            y,
            cv=KFold(3),
            params={"sample_weight": weights},
            return_estimator=True,
        )
    folds = zip(routed["estimator"], routed["test_score"], KFold(3).split(X))
    for model, score, (train, test) in folds:
        scaler = StandardScaler().fit(X[train])
        direct = MondrianKernelRidge(10, random_state=0).fit(
            scaler.transform(X[train]), y[train], sample_weight=weights[train]
        )
        np.testing.assert_array_equal(model.predict(X), direct.predict(scaler.transform(X)))
        Q = scaler.transform(X[test])
        assert score == direct.score(Q, y[test], sample_weight=weights[test])
