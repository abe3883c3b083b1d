"""The Mondrian kernel estimate converges to the Laplace kernel (Balog et al., UAI 2016,
Prop. 1), for test points inside and outside the training data's box.

For a query x* and a training point x, each tree contributes X_m = s_m(x*)·1[x shares x*'s
leaf] ∈ [0, 1] (s_m the conditional-Mondrian stay probability; 1 for training points), i.i.d.
over trees with mean k = exp(−λ‖x* − x‖₁) if the features are right, and variance
σ² ≤ E[X²] − k² ≤ k(1 − k). Bernstein's inequality bounds the estimate φ(x*)·φ(x) = mean X_m:
P(|mean − k| ≥ t) ≤ 2 exp(−M t² / (2σ² + 2t/3)), so with L = log(2P/δ) over P pairs the
tolerance t = (L/3 + √(L²/9 + 2MLσ²)) / M holds for all pairs at once with probability
1 − δ (δ = 1e-3 here; fixed seeds make the tests deterministic).
"""

from __future__ import annotations

import numpy as np
import pytest

from mondrian_learn import MondrianKernelFeatures
from mondrian_learn.kernel._features import to_csr

DELTA = 1e-3


def bernstein_tolerance(k: np.ndarray, n_trees: int) -> np.ndarray:
    log_term = np.log(2 * k.size / DELTA)
    var = k * (1 - k)
    return (log_term / 3 + np.sqrt(log_term**2 / 9 + 2 * n_trees * log_term * var)) / n_trees


def queries(rng: np.random.Generator, d: int) -> np.ndarray:
    """Points inside the box (not training points) and points outside it at several
    distances, in one or several coordinates."""
    inside = rng.uniform(0.1, 0.9, size=(6, d))
    outside = rng.uniform(0.2, 0.8, size=(9, d))
    outside[:3, 0] = [1.1, 1.4, -0.5]
    outside[3:6, -1] = [-0.05, 1.25, 2.0]
    outside[6:] = rng.uniform(-0.6, 1.6, size=(3, d))
    return np.vstack([inside, outside])


@pytest.mark.parametrize(("d", "lifetime"), [(1, 3.0), (2, 2.0), (3, 1.5)])
def test_kernel_estimate_matches_laplace_in_and_out_of_box(d: int, lifetime: float) -> None:
    rng = np.random.default_rng(d)
    X = rng.uniform(size=(120, d))
    Q = queries(rng, d)
    n_trees = 4000
    model = MondrianKernelFeatures(n_trees, lifetime=lifetime, random_state=d).fit(X)
    Zx, Zq = model.transform(X[:15]), model.transform(Q)
    for A, B in [(Zq, Zx), (Zx, Zx)]:
        estimate = (A @ B.T).toarray()
        k = np.exp(
            -lifetime
            * np.abs((Q if A is Zq else X[:15])[:, None, :] - X[:15][None, :, :]).sum(axis=2)
        )
        assert np.all(np.abs(estimate - k) <= bernstein_tolerance(k, n_trees))


def test_features_at_an_earlier_lifetime_match_that_lifetime() -> None:
    """Trees sampled to Λ and stopped at λ < Λ (as the path does) give the Laplace kernel
    of λ, out of the box too — which needs the leaf's remaining lifetime to be λ − τ_parent,
    not Λ − τ_parent."""
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(100, 2))
    Q = queries(rng, 2)
    n_trees, big, small = 4000, 6.0, 1.5
    model = MondrianKernelFeatures(n_trees, lifetime=big, random_state=1).fit(X)
    Zx = to_csr(model.model_.transform(X[:15], 1, small))
    Zq = to_csr(model.model_.transform(Q, 1, small))
    estimate = (Zq @ Zx.T).toarray()
    k = np.exp(-small * np.abs(Q[:, None, :] - X[:15][None, :, :]).sum(axis=2))
    assert np.all(np.abs(estimate - k) <= bernstein_tolerance(k, n_trees))
    # The kernel at Λ is far from it: the test can tell the two lifetimes apart.
    k_big = np.exp(-big * np.abs(Q[:, None, :] - X[:15][None, :, :]).sum(axis=2))
    assert np.mean(np.abs(estimate - k_big) > bernstein_tolerance(k_big, n_trees)) > 0.5
