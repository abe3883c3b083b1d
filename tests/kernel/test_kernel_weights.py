"""Row weights of the Mondrian kernel ridge (issue 16, item 11): a weight v_i makes row i's noise
σ²/v_i. Checked against a dense weighted ridge on the same trees, and against scikit-learn's
meaning of weights: an integer weight is the row repeated, a zero weight removes it."""

from __future__ import annotations

import numpy as np
import pytest

from mondrian_learn import MondrianKernelRidge
from mondrian_learn.kernel._features import to_csr


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(120, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.2 * rng.normal(size=120)
    weights = rng.uniform(0.2, 3.0, size=120)
    return X, y, weights, rng.uniform(-0.2, 1.2, size=(30, 2))


def dense_weighted(model: MondrianKernelRidge, X: np.ndarray, y: np.ndarray, v: np.ndarray):  # type: ignore[no-untyped-def]
    """Weights, intercept and log evidence of the weighted ridge on the model's own trees,
    from scratch: A = ΦᵀVΦ + αI, w = A⁻¹ΦᵀV(y − ȳ_v)."""
    alpha = model.alpha
    Phi = to_csr(model.model_.transform(model._to_unit_box(X), 1)).toarray()
    mean = np.sum(v * y) / np.sum(v)
    A = Phi.T @ (v[:, None] * Phi) + alpha * np.eye(Phi.shape[1])
    w = np.linalg.solve(A, Phi.T @ (v * (y - mean)))
    L = np.linalg.cholesky(A)
    z = np.linalg.solve(L, Phi.T @ (v * (y - mean)))
    n, c = len(y), Phi.shape[1]
    sigma2 = (np.sum(v * (y - mean) ** 2) - z @ z) / n
    log_det = 2 * np.log(np.diag(L)).sum()
    evidence = (
        -0.5 * n * np.log(2 * np.pi * sigma2)
        - 0.5 * n
        + 0.5 * c * np.log(alpha)
        - 0.5 * log_det
        + 0.5 * np.log(v).sum()
    )
    return w, mean, evidence


def test_weighted_fit_equals_a_dense_weighted_ridge(data) -> None:  # type: ignore[no-untyped-def]
    X, y, v, X_new = data
    model = MondrianKernelRidge(8, lifetime=4.0, alpha=0.3, random_state=0).fit(X, y, v)
    w, mean, evidence = dense_weighted(model, X, y, v)
    np.testing.assert_allclose(model.model_.weights()[0], w, rtol=1e-8, atol=1e-10)
    assert model.intercept_ == pytest.approx(mean, rel=1e-12)
    assert model.log_marginal_likelihood_value_ == pytest.approx(evidence, rel=1e-9)
    Phi_new = to_csr(model.model_.transform(model._to_unit_box(X_new), 1)).toarray()
    np.testing.assert_allclose(model.predict(X_new), mean + Phi_new @ w, rtol=1e-9)


def test_online_weighted_updates_equal_the_batch_solution(data) -> None:  # type: ignore[no-untyped-def]
    X, y, v, X_new = data
    model = MondrianKernelRidge(8, lifetime=4.0, alpha=0.3, random_state=1)
    model.fit(X[:40], y[:40], v[:40])
    model.partial_fit(X[40:41], y[40:41], v[40:41])
    model.partial_fit(X[41:], y[41:], sample_weight=v[41:])
    w, mean, evidence = dense_weighted(model, X, y, v)
    np.testing.assert_allclose(model.model_.weights()[0], w, rtol=1e-8, atol=1e-10)
    assert model.log_marginal_likelihood_value_ == pytest.approx(evidence, rel=1e-9)


def test_integer_weights_repeat_rows_and_zero_weights_remove_them(data) -> None:  # type: ignore[no-untyped-def]
    X, y, _, X_new = data
    counts = np.random.default_rng(2).integers(0, 4, size=len(X))
    make = lambda: MondrianKernelRidge(10, lifetime=3.0, alpha=0.5, random_state=4)  # noqa: E731
    weighted = make().fit(X, y, sample_weight=counts)
    repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(weighted.predict(X_new), repeated.predict(X_new), rtol=1e-9)
    kept = counts > 0
    removed = make().fit(X[kept], y[kept], sample_weight=counts[kept])
    np.testing.assert_array_equal(weighted.predict(X_new), removed.predict(X_new))
    unit = make().fit(X, y, sample_weight=1.0)
    # Equal up to the order of the sums (the unweighted model keeps ndarray's).
    np.testing.assert_allclose(unit.predict(X_new), make().fit(X, y).predict(X_new), rtol=1e-12)


@pytest.mark.parametrize(
    "weights, message",
    [
        (-np.ones(120), "non-negative"),
        (np.full(120, np.nan), "finite"),
        (np.ones(7), r"shape \(120,\)"),
        (np.zeros(120), "zero for every row"),
        (np.full(120, 1e200), r"up to 1e\+?150"),
    ],
)
def test_bad_weights_are_refused_and_leave_the_model_as_it_was(data, weights, message) -> None:  # type: ignore[no-untyped-def]
    X, y, _, X_new = data
    model = MondrianKernelRidge(5, random_state=0).fit(X, y)
    before = model.predict(X_new)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y, sample_weight=weights)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(model.predict(X_new), before)
