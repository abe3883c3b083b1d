"""The Gaussian predictive of the kernel ridges (``predict(return_std=, return_cov=)``,
``sample_y``), as scikit-learn's ``GaussianProcessRegressor`` offers it: the covariance's
diagonal is the standard deviation squared, it is symmetric positive semi-definite, the
draws have its mean and covariance, and the grid ridge's standard deviation is the Bayesian
ridge posterior on its features computed from scratch."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import scipy.sparse

from mondrian_learn import MondrianKernelRidge, MondrianKernelRidgeCV
from mondrian_learn.kernel import MondrianGridRidgeCV
from mondrian_learn.kernel._features import to_csr


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=120)
    return X, y, rng.uniform(-0.2, 1.2, size=(15, 2))


def fitted(name: str, X: np.ndarray, y: np.ndarray) -> Any:
    if name == "ridge":
        weights = np.random.default_rng(1).integers(1, 4, size=len(X)).astype(float)
        model = MondrianKernelRidge(8, lifetime=4.0, alpha=0.3, random_state=0)
        model.fit(X[:100], y[:100], sample_weight=weights[:100])
        # The rows added online count too.
        return model.partial_fit(X[100:], y[100:], sample_weight=weights[100:])
    if name == "ridge_cv":
        return MondrianKernelRidgeCV(8, max_lifetime=6.0, lifetimes=10, random_state=0).fit(X, y)
    return MondrianGridRidgeCV(8, max_iter=15, random_state=0).fit(X, y)


MODELS = ["ridge", "ridge_cv", "grid_cv"]


@pytest.mark.parametrize("name", MODELS)
def test_covariance_matches_std_and_is_positive_semi_definite(data, name: str) -> None:  # type: ignore[no-untyped-def]
    X, y, Q = data
    model = fitted(name, X, y)
    mean, std = model.predict(Q, return_std=True)
    same, cov = model.predict(Q, return_cov=True)
    np.testing.assert_array_equal(same, mean)
    np.testing.assert_array_equal(mean, model.predict(Q))
    assert cov.shape == (len(Q), len(Q)) and std.shape == (len(Q),)
    np.testing.assert_allclose(np.diag(cov), std**2, rtol=1e-12)
    np.testing.assert_array_equal(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() > 0  # σ̂² I + σ̂² BᵀB: at least σ̂²
    with pytest.raises(ValueError, match="return_std and return_cov"):
        model.predict(Q, return_std=True, return_cov=True)


@pytest.mark.parametrize("name", MODELS)
def test_sample_y_draws_from_the_predictive(data, name: str) -> None:  # type: ignore[no-untyped-def]
    """S draws: each entry of the sample mean is off by at most 5 standard errors
    sqrt(cov_ii / S), each sample covariance entry by 5 sqrt((cov_ij² + cov_ii cov_jj) / S)
    (the variance of a Gaussian sample covariance)."""
    X, y, Q = data
    model = fitted(name, X, y)
    mean, cov = model.predict(Q[:4], return_cov=True)
    draws = model.sample_y(Q[:4], n_samples=4000, random_state=0)
    assert draws.shape == (4, 4000) and model.sample_y(Q[:4]).shape == (4, 1)
    np.testing.assert_array_equal(draws, model.sample_y(Q[:4], 4000, random_state=0))
    s = draws.shape[1]
    assert np.all(np.abs(draws.mean(axis=1) - mean) <= 5 * np.sqrt(np.diag(cov) / s))
    bound = 5 * np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / s)
    assert np.all(np.abs(np.cov(draws) - cov) <= bound)
    with pytest.raises(ValueError, match="n_samples"):
        model.sample_y(Q, n_samples=0)


def bayesian_ridge(Z: np.ndarray, y: np.ndarray, alpha: float, Zq: np.ndarray) -> np.ndarray:
    """From scratch: the predictive std of y* = ȳ + z*ᵀw + ε, w ~ N(0, σ²/α I), ε ~ N(0, σ²),
    σ² at its maximum-likelihood value with the weights integrated out: the N-dimensional
    Gaussian y − ȳ ~ N(0, σ²(ZZᵀ/α + I)) gives σ̂² = (y − ȳ)ᵀ(ZZᵀ/α + I)⁻¹(y − ȳ)/N, and the
    posterior variance of z*ᵀw is σ² z*ᵀ(ZᵀZ + αI)⁻¹z* (solved in the N-dimensional form)."""
    n = len(y)
    yc = y - y.mean()
    K = Z @ Z.T / alpha + np.eye(n)
    noise = yc @ np.linalg.solve(K, yc) / n
    cross = Zq @ Z.T / alpha
    prior = np.sum(Zq * Zq, axis=1) / alpha
    posterior = prior - np.sum(cross * np.linalg.solve(K, cross.T).T, axis=1)
    return np.sqrt(noise * (1 + posterior))


def test_grid_std_is_the_bayesian_ridge_posterior_on_its_features(data) -> None:  # type: ignore[no-untyped-def]
    X, y, Q = data
    model = fitted("grid_cv", X, y)
    transform: Callable[[np.ndarray], np.ndarray] = lambda A: to_csr(  # noqa: E731
        model.model_.transform(model._to_unit_box(A), 1)
    ).toarray()
    # Refitted on all of X (the held-out rows added back).
    expected = bayesian_ridge(transform(X), y, model.alpha_, transform(Q))
    _, std = model.predict(Q, return_std=True)
    np.testing.assert_allclose(std, expected, rtol=1e-9)


def test_ridge_covariance_counts_the_weights(data) -> None:  # type: ignore[no-untyped-def]
    """Weighted rows: A = ΦᵀVΦ + αI in the covariance, as in the core's return_std (which
    the diagonal test above matches): an integer weight is the row repeated."""
    X, y, Q = data
    weights = np.random.default_rng(2).integers(1, 4, size=len(X))
    model = MondrianKernelRidge(8, lifetime=4.0, alpha=0.3, random_state=0)
    weighted = model.fit(X, y, sample_weight=weights).predict(Q, return_cov=True)[1]
    repeated = MondrianKernelRidge(8, lifetime=4.0, alpha=0.3, random_state=0)
    repeated.fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    noise_ratio = repeated.model_.noise_variance / model.model_.noise_variance
    np.testing.assert_allclose(repeated.predict(Q, return_cov=True)[1], weighted * noise_ratio)


@pytest.mark.parametrize("layout", ["float32 then float64", "sparse"])
def test_online_rows_keep_the_covariance_exact(data, layout: str) -> None:  # type: ignore[no-untyped-def]
    """Rows added by ``partial_fit`` in another dtype or sparse are kept as the core reads
    them: the covariance's diagonal stays the core's variance."""
    X, y, Q = data
    first: Any = X[:80].astype(np.float32) if layout != "sparse" else None
    if layout == "sparse":
        X = np.where(X < 0.3, 0.0, X)
        first = scipy.sparse.csr_matrix(X[:80])
    model = MondrianKernelRidge(6, lifetime=3.0, random_state=0).fit(first, y[:80])
    rest = scipy.sparse.csr_matrix(X[80:]) if layout == "sparse" else X[80:]
    model.partial_fit(rest, y[80:], sample_weight=np.full(40, 2.0))
    _, std = model.predict(Q, return_std=True)
    _, cov = model.predict(Q, return_cov=True)
    np.testing.assert_allclose(np.diag(cov), std**2, rtol=1e-12)
