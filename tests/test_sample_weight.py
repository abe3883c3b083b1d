"""``sample_weight`` across estimators (issue 16, item 11): scikit-learn's meaning (an integer
weight is the row repeated, a zero weight removes it) on the SVC and the GP (whose weights are
per-point noise σ²/v_i, checked against dense solves), and metadata routing through
``cross_validate`` and a ``Pipeline``. The ridge's exactness is in
``tests/kernel/test_kernel_weights.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mondrian_learn as ml
from mondrian_learn import (
    MondrianKernelRidge,
    PartitionGPRegressor,
    PartitionSVC,
    RandomPartitionKernel,
)
from mondrian_learn.partition import _marginal_likelihood


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


def _gp_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(90, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=90)
    return X, y, rng.uniform(0.3, 3.0, size=90), rng.uniform(-0.1, 1.1, size=(20, 2))


def test_gp_weights_are_per_point_noise() -> None:
    """Fixed variances: the dual weights, means and variances of ``s K̂ + σ² V⁻¹`` formed
    densely on the same partitions."""
    X, y, v, X_new = _gp_data()
    s, noise = 0.8, 0.05
    gp = PartitionGPRegressor(
        n_partitions=30, noise_variance=noise, signal_variance=s, tol=1e-12, random_state=0
    ).fit(X, y, sample_weight=v)
    K = gp.kernel_.kernel_matrix()
    K_star = gp.kernel_.kernel_matrix(X_new)
    mean_y = np.average(y, weights=v)
    system = s * K + noise * np.diag(1 / v)
    dual = np.linalg.solve(system, y - mean_y)
    np.testing.assert_allclose(gp.dual_coef_, dual, rtol=1e-7, atol=1e-9)
    mean, std = gp.predict(X_new, return_std=True)
    np.testing.assert_allclose(mean, mean_y + s * K_star @ dual, atol=1e-8)
    var = s + noise - s**2 * np.einsum("ij,ji->i", K_star, np.linalg.solve(system, K_star.T))
    np.testing.assert_allclose(std, np.sqrt(var), atol=1e-8)


def test_gp_integer_weights_repeat_rows_with_the_variance_search() -> None:
    """Default variance search (exact below 1,000 points): the criterion with weights is the
    repeated data's, so the chosen variances and the predictions agree."""
    X, y, _, X_new = _gp_data()
    counts = np.random.default_rng(4).integers(0, 4, size=len(X))
    make = lambda: PartitionGPRegressor(n_partitions=30, tol=1e-10, random_state=0)  # noqa: E731
    weighted = make().fit(X, y, sample_weight=counts)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    for name in ("noise_variance_", "signal_variance_", "log_marginal_likelihood_value_"):
        assert getattr(weighted, name) == pytest.approx(getattr(repeated, name), rel=1e-6)
    assert weighted.log_marginal_likelihood_std_ == 0.0
    np.testing.assert_allclose(weighted.predict(X_new), repeated.predict(X_new), rtol=1e-6)
    kept = counts > 0
    removed = make().fit(X[kept], y[kept], sample_weight=counts[kept])
    np.testing.assert_array_equal(weighted.predict(X_new), removed.predict(X_new))


def test_weighted_lanczos_quadrature_matches_the_dense_criterion(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The Lanczos route on D K̂ D (forced at N = 90): the data term is exact after N steps,
    the log-determinant within four standard errors of its probes."""
    X, y, v, _ = _gp_data()
    kernel = RandomPartitionKernel(n_partitions=30, random_state=0).fit(X)
    monkeypatch.setattr(_marginal_likelihood, "EXACT_MAX_POINTS", 0)
    estimate = _marginal_likelihood.MarginalLikelihood(kernel.model_, y, 64, 90, 1, 1, v)
    K = np.sqrt(v)[:, None] * kernel.kernel_matrix() * np.sqrt(v)[None, :]
    rho, y_tilde = 0.1, np.sqrt(v) * y
    exact_quadratic = y_tilde @ np.linalg.solve(K + rho * np.eye(90), y_tilde)
    assert estimate.quadratic(rho) == pytest.approx(exact_quadratic, rel=1e-8)
    value, error = estimate.logdet(rho)
    exact_logdet = np.linalg.slogdet(K + rho * np.eye(90))[1]
    assert abs(value - exact_logdet) < 4 * error


def test_svc_refuses_a_penalty_liblinear_cannot_solve() -> None:
    """C × sample_weight = 1e120 or 1e-200 had liblinear's primal solver spin for minutes."""
    X = np.random.default_rng(2).uniform(size=(20, 2))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="C × the largest sample_weight"):
        PartitionSVC(n_partitions=5).fit(X, y, sample_weight=np.full(20, 1e120))
    for C in (1e150, 1e-200):
        with pytest.raises(ValueError, match="change C or rescale sample_weight"):
            PartitionSVC(n_partitions=5, C=C).fit(X, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ml.MondrianForestRegressor(3, random_state=0),
        lambda: ml.MondrianForestRegressorCV(3, lifetimes=5, random_state=0),
        lambda: ml.MondrianKernelRidge(3, lifetime=1.0, random_state=0),
    ],
)
def test_weights_too_small_to_sum_precisely_are_refused_by_name(make: Any) -> None:
    """Found by the property tests' exploration: weights of 5e-311 (subnormal sums) made a
    forest predict NaN 1e300 away from its data. Positive weights below 1e-150 are refused
    by name; at 1e-150 the predictions there are finite."""
    X = np.array([[1e300, -0.0], [1e300, -0.0]])
    y = np.array([-1.5, -0.3])
    with pytest.raises(ValueError, match="sample_weight must hold values of at least 1e-150"):
        make().fit(X, y, sample_weight=[5e-311, 5e-311])
    model = make().fit(X, y, sample_weight=[1e-150, 1e-150])
    assert np.all(np.isfinite(model.predict(np.zeros((2, 2)))))


def test_rows_too_light_to_inform_a_leaf_do_not_make_nan() -> None:
    """Found by the property tests' exploration: two rows of weight 5e-9 with targets of
    scale 1e150 gave leaves whose likelihood variance σ_y²/Σw overflowed to ∞, and the product
    of two such likelihoods a NaN mean. A likelihood that flat now carries no information:
    the predictions are finite, and those of a forest whose leaves are all that flat are
    its prior's (mean μ_H, the same for every point)."""
    X = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -1e-310]])
    y = np.random.default_rng(472).normal(size=2) * 1e150
    model = ml.MondrianForestRegressor(5, random_state=0).fit(X, y, sample_weight=[5e-9, 5e-9])
    mean, std = model.predict(np.array([[0.0, 0.0, 8.25511155e-311], [0.0, 0.0, 0.0]]), True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)
    assert model.prior_["noise_variance"] / 1e-8 == np.inf  # the leaves' σ_y²/Σw overflows
    np.testing.assert_allclose(mean, model.prior_["mean"], rtol=1e-12)
