"""The sampled trees against Mondrian-process theory (fixed seeds, variance-derived bounds).

Each frequency over M independent trees has standard deviation sqrt(p(1 − p)/M); a bound of
4.5 standard deviations makes a false alarm about 1 in 150,000 per check.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    BLIND,
    Z,
    assert_online_matches_batch,
    cooccurrence,
    homogeneity_pvalue,
    two_proportion_z,
)
from mondrian_learn import MondrianForestRegressor


def _leaves(X: np.ndarray, m: int, lifetime: float, seed: int, mss: int = 2) -> np.ndarray:
    """Leaf ids, shape (n_points, m), of m trees sampled on X."""
    model = MondrianForestRegressor(
        n_estimators=m,
        lifetime=lifetime,
        min_samples_split=mss,
        random_state=seed,
        n_jobs=2,
        scale_features=False,
        **BLIND,
    )
    return model.fit(X, np.zeros(len(X))).apply(X)


@pytest.mark.parametrize("dim", [1, 3, 10])
def test_laplace_link(dim: int) -> None:
    """Balog et al. (UAI 2016) Prop. 1: P(same leaf) = exp(−λ‖x − x′‖₁)."""
    rng = np.random.default_rng(dim)
    m, lifetime = 2000, 1.5
    # Pairs at L1 distances from 0.05/λ to 2/λ, inside a cloud of other points.
    base = rng.uniform(size=(30, dim))
    dists = np.array([0.05, 0.3, 0.7, 1.2, 2.0]) / lifetime
    partners = []
    for i, dist in enumerate(dists):
        step = rng.dirichlet(np.ones(dim)) * dist * rng.choice([-1, 1], size=dim)
        partners.append(base[i] + step)
    X = np.vstack([base, partners])
    leaves = _leaves(X, m, lifetime, seed=dim)
    for i, dist in enumerate(dists):
        p = np.exp(-lifetime * dist)
        freq = cooccurrence(leaves, i, 30 + i).mean()
        assert abs(freq - p) <= Z * np.sqrt(p * (1 - p) / m) + 1 / m, (dim, dist, freq, p)


def test_poisson_structure_in_one_dimension() -> None:
    """Report Thm 1.10: E[#cells] = 1 + Σ (1 − e^{−λ g_i}) over the gaps g_i of sorted points.

    The gaps are cut independently, so Var[#cells] = Σ p_i (1 − p_i).
    """
    rng = np.random.default_rng(5)
    X = rng.exponential(size=(80, 1))
    lifetime, m = 3.0, 3000
    gaps = np.diff(np.sort(X[:, 0]))
    p = -np.expm1(-lifetime * gaps)
    model = MondrianForestRegressor(
        n_estimators=m,
        lifetime=lifetime,
        min_samples_split=2,
        random_state=1,
        scale_features=False,
        **BLIND,
    ).fit(X, np.zeros(len(X)))
    counts = model.n_leaves_
    expected, var = 1 + p.sum(), (p * (1 - p)).sum()
    assert abs(counts.mean() - expected) <= Z * np.sqrt(var / m)
    # The variance matches too: sample variance has sd ≈ var·sqrt(2/(m − 1)) for near-normal counts.
    assert abs(counts.var(ddof=1) - var) <= Z * var * np.sqrt(2 / (m - 1)) * 1.5


def test_projectivity() -> None:
    """Trees on a sub-box's points have the law of trees on more points, restricted."""
    rng = np.random.default_rng(7)
    inner = rng.uniform(0, 0.5, size=(25, 2))
    outer = rng.uniform(0, 1, size=(200, 2))
    outer = outer[(outer > 0.5).any(axis=1)]
    m, lifetime = 3000, 4.0
    small = _leaves(inner, m, lifetime, seed=1)
    large = _leaves(np.vstack([inner, outer]), m, lifetime, seed=2)[: len(inner)]
    cells_small = np.array([len(np.unique(small[:, t])) for t in range(m)])
    cells_large = np.array([len(np.unique(large[:, t])) for t in range(m)])
    assert homogeneity_pvalue(cells_small, cells_large) > 1e-3
    for a, b in [(0, 1), (2, 3), (4, 10), (5, 20), (6, 24)]:
        z = two_proportion_z(cooccurrence(small, a, b), cooccurrence(large, a, b))
        assert abs(z) < Z, (a, b, z)


@pytest.mark.parametrize(("lifetime", "mss"), [(4.0, 5), (np.inf, 10)])
def test_online_equals_batch_in_distribution(lifetime: float, mss: int) -> None:
    """Trees grown by partial_fit in 10 chunks have the batch distribution (NIPS 2014 Thm 1).

    Compared: the distribution of the number of leaves (chi-square homogeneity, level 1e-3)
    and co-occurrence frequencies of point pairs (two-proportion z-test, |z| < 4.5).
    """
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(150, 2)) * [1.0, 2.0]
    assert_online_matches_batch(MondrianForestRegressor, X, np.zeros(len(X)), lifetime, mss)


@pytest.mark.parametrize("scale_features", [False, True])
def test_online_from_one_row_equals_batch_in_distribution(scale_features: bool) -> None:
    """A stream that starts with one row and brings one row per call grows trees of the
    batch distribution. With ``scale_features`` the map to the unit box is chosen again at
    every power of two; the cuts carried to the new coordinates keep the partition, so the
    trees still compare (here on points whose two features have ranges 1 and 2)."""
    rng = np.random.default_rng(12)
    X = rng.uniform(size=(150, 2)) * [1.0, 2.0]
    one_by_one = [np.array([i]) for i in range(len(X))]
    assert_online_matches_batch(
        MondrianForestRegressor,
        X,
        np.zeros(len(X)),
        4.0,
        2,
        chunks=one_by_one,
        scale_features=scale_features,
    )
