"""The Laplace-kernel baselines: random Fourier features, random binning, exact ridge.

Kernel estimates are checked with Bernstein's inequality as in test_kernel_statistics.py:
P(|mean − k| ≥ t) ≤ 2 exp(−M t² / (2σ² + 2bt/3)) for M i.i.d. terms with variance σ² and
|X − k| ≤ b; over P pairs, t = (bL/3 + √(b²L²/9 + 2MLσ²)) / M with L = log(2P/δ), δ = 1e-3.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from mondrian_learn.kernel.baselines import (
    LaplaceFourierFeatures,
    LaplaceKernelRidge,
    RandomBinningFeatures,
)

DELTA = 1e-3


def tolerance(var: np.ndarray, bound: float, m: int) -> np.ndarray:
    log_term = np.log(2 * var.size / DELTA)
    return (
        bound * log_term / 3 + np.sqrt((bound * log_term) ** 2 / 9 + 2 * m * log_term * var)
    ) / m


def laplace(A: np.ndarray, B: np.ndarray, lifetime: float) -> np.ndarray:
    return np.exp(-lifetime * np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2))


@pytest.fixture(scope="module")
def points() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.uniform(size=(40, 3)), rng.uniform(-0.5, 1.5, size=(15, 3))


def test_fourier_features_estimate_the_laplace_kernel(points) -> None:  # type: ignore[no-untyped-def]
    X, Q = points
    m, lifetime = 20000, 2.0
    model = LaplaceFourierFeatures(m, lifetime=lifetime, scale_features=False, random_state=1)
    model = model.fit(X)
    estimate = model.transform(Q) @ model.transform(X).T
    k = laplace(Q, X, lifetime)
    # Each frequency gives cos(ω·δ): variance ½(1 + k(2δ)) − k(δ)², |cos − k| ≤ 2.
    var = 0.5 * (1 + laplace(Q, X, 2 * lifetime)) - k**2
    assert np.all(np.abs(estimate - k) <= tolerance(var, 2.0, m))


def test_random_binning_estimates_the_laplace_kernel(points) -> None:  # type: ignore[no-untyped-def]
    X, Q = points
    m, lifetime = 4000, 2.0
    model = RandomBinningFeatures(m, lifetime=lifetime, scale_features=False, random_state=2)
    model = model.fit(X)
    Zx, Zq = model.transform(X), model.transform(Q)
    np.testing.assert_array_equal(Zx.getnnz(axis=1), m)  # training points: one bin per grid
    estimate = (Zq @ Zx.T).toarray()
    k = laplace(Q, X, lifetime)
    # Each grid gives a Bernoulli(k) co-occurrence: variance k(1 − k), |X − k| ≤ 1.
    assert np.all(np.abs(estimate - k) <= tolerance(k * (1 - k), 1.0, m))


def test_exact_laplace_ridge_matches_scikit_learn(points) -> None:  # type: ignore[no-untyped-def]
    X, Q = points
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    ours = LaplaceKernelRidge(lifetime=1.5, alpha=1e-3, scale_features=False).fit(X, y)
    theirs = KernelRidge(alpha=1e-3, kernel="laplacian", gamma=1.5).fit(X, y - y.mean())
    np.testing.assert_allclose(ours.predict(Q), theirs.predict(Q) + y.mean(), rtol=1e-8)


def test_exact_ard_laplace_ridge_scales_each_feature(points) -> None:  # type: ignore[no-untyped-def]
    """One lifetime per feature (the Mondrian grid's limit): the kernel of λ-scaled points;
    equal lifetimes give the plain kernel, a zero lifetime ignores its feature."""
    X, Q = points
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    lifetimes = np.array([2.0, 0.5, 0.0])
    ard = LaplaceKernelRidge(lifetime=lifetimes, alpha=1e-3, scale_features=False).fit(X, y)
    scaled = LaplaceKernelRidge(lifetime=1.0, alpha=1e-3, scale_features=False)
    scaled.fit(X * lifetimes, y)
    np.testing.assert_allclose(ard.predict(Q), scaled.predict(Q * lifetimes), rtol=1e-10)
    same = LaplaceKernelRidge(lifetime=[1.5] * 3, alpha=1e-3, scale_features=False).fit(X, y)
    plain = LaplaceKernelRidge(lifetime=1.5, alpha=1e-3, scale_features=False).fit(X, y)
    np.testing.assert_allclose(same.predict(Q), plain.predict(Q), rtol=1e-10)
    with pytest.raises(ValueError, match="3 numbers"):
        LaplaceKernelRidge(lifetime=[1.0, 2.0]).fit(X, y)
