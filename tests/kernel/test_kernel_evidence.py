"""The Mondrian kernel's evidence with the signal and noise variances both estimated (issue 17,
item 3): exact against the dense GP log density, a maximum over both variances, and the kernel
width it selects on Laplace-GP data (the kernel paper's Fig. 7 setting, smaller)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import multivariate_normal

from mondrian_learn import MondrianKernelRidgeCV
from mondrian_learn.kernel._evidence import kernel_spectrum, profiled_log_evidence


def _dense(K: np.ndarray, y: np.ndarray, signal: float, noise: float) -> float:
    return float(
        multivariate_normal(np.zeros(len(y)), signal * K + noise * np.eye(len(y))).logpdf(y)
    )


@pytest.mark.parametrize("shape", [(40, 70), (70, 25)], ids=["N<C", "N>C"])
def test_profiled_evidence_is_the_dense_gp_maximum(shape: tuple[int, int]) -> None:
    """Both routes (ΦΦᵀ when N ≤ C, ΦᵀΦ otherwise) against log N(y; 0, s²ΦΦᵀ + σ²I) formed
    densely: equal at the estimates (1e-9), and no larger at 8 perturbed (s², σ²) pairs."""
    rng = np.random.default_rng(shape[0])
    n, c = shape
    phi = rng.normal(size=(n, c)) * (rng.uniform(size=(n, c)) < 0.3) / np.sqrt(c / 3)
    y = phi @ rng.normal(size=c) + 0.3 * rng.normal(size=n)
    y -= y.mean()
    value, ratio, signal = profiled_log_evidence(*kernel_spectrum(phi, y), n)
    K = phi @ phi.T
    assert value == pytest.approx(_dense(K, y, signal, ratio * signal), rel=1e-9)
    assert 1e-3 < ratio < 1e3  # an interior optimum on data with signal and noise
    for a in (0.7, 1.0, 1.4):
        for b in (0.7, 1.0, 1.4):
            if (a, b) != (1.0, 1.0):
                assert _dense(K, y, a * signal, b * ratio * signal) < value


def _laplace_gp(seed: int, n: int = 300, lifetime: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    K = np.exp(-lifetime * cdist(X, X, "cityblock")) + 1e-10 * np.eye(n)
    y = np.linalg.cholesky(K) @ rng.standard_normal(n) + 1e-2 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_evidence_selection_recovers_the_kernel_width(seed: int) -> None:
    """λ₀ = 10: the evidence with both variances picks λ̂ within a factor 3 (with α fixed it
    picked λ = 0 on such data), with α̂ = σ̂²/ŝ² of that checkpoint for the refit."""
    X, y = _laplace_gp(seed)
    model = MondrianKernelRidgeCV(
        10,
        max_lifetime=30.0,
        lifetimes=20,
        selection="evidence",
        scale_features=False,
        random_state=seed,
    ).fit(X, y)
    assert 10 / 3 <= model.lifetime_ <= 30
    best = model.best_index_
    assert model.alpha_ == model.path_["alpha"][best]
    assert model.path_["log_evidence_profiled"][best] == np.nanmax(
        model.path_["log_evidence_profiled"]
    )
    np.testing.assert_allclose(
        model.path_["noise_variance"], model.path_["alpha"] * model.path_["signal_variance"]
    )
