"""The Mondrian grid (issue 17, item 2, its features): a cell per grid shared with probability
Π_d exp(−λ_d |x_d − x'_d|), so the features' inner products estimate the ARD Laplace kernel, in
the training box and out of it; λ_d = 0 removes a feature from the kernel."""

from __future__ import annotations

import numpy as np
import pytest

from mondrian_learn.kernel import MondrianGridFeatures
from mondrian_learn.kernel.baselines import RandomBinningFeatures


def test_features_estimate_the_ard_laplace_kernel_in_and_out_of_the_box() -> None:
    """M = 4,000 grids: each inner product is a mean of M Bernoulli(k) draws, sd √(k(1−k)/M);
    every pair within 4.5 sd (a false alarm once in 150,000 pairs)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    lifetimes = np.array([4.0, 1.0, 0.0])
    grid = MondrianGridFeatures(4000, lifetime=lifetimes, scale_features=False, random_state=1)
    Z = grid.fit(X).transform(X[:10])
    outside = np.array([[-0.3, 0.5, 7.0], [1.2, 1.4, -2.0], [0.5, -0.1, 0.5]])
    Q = np.vstack([X[:10], outside])
    estimate = (grid.transform(Q) @ Z.T).toarray()
    exact = np.exp(-np.abs(Q[:, None, :] - X[None, :10, :]) @ lifetimes)
    sd = np.sqrt(exact * (1 - exact) / 4000)
    assert np.all(np.abs(estimate - exact) <= 4.5 * sd + 1e-12)
    assert np.all(np.diag(estimate[:10]) == pytest.approx(1.0))


def test_lifetimes_are_checked_and_a_zero_lifetime_ignores_a_feature() -> None:
    X = np.random.default_rng(2).uniform(size=(50, 2))
    for bad in ([1.0, 2.0, 3.0], [-1.0, 1.0], [np.inf, 1.0], "x"):
        with pytest.raises(ValueError, match="lifetime"):
            MondrianGridFeatures(5, lifetime=bad).fit(X)
    grid = MondrianGridFeatures(20, lifetime=[3.0, 0.0], random_state=0).fit(X)
    moved = X.copy()
    moved[:, 1] = np.random.default_rng(3).uniform(size=50)  # only the ignored feature
    np.testing.assert_array_equal(grid.transform(X).toarray(), grid.transform(moved).toarray())
    assert all(len(cuts[1]) == 0 for cuts in grid.cuts_)


def test_random_binning_is_unchanged_by_the_shared_cell_numbering() -> None:
    """Random binning now numbers its cells through the same base class as the grid: its
    features equal the occupied-bin indicators computed here from its pitches and shifts."""
    X = np.random.default_rng(4).uniform(size=(40, 2))
    model = RandomBinningFeatures(7, lifetime=3.0, scale_features=False, random_state=0).fit(X)
    Z = model.transform(X).toarray()
    for k in range(7):
        bins = np.ceil((X - model.shift_[k]) / model.pitch_[k]).astype(np.int64)
        _, number = np.unique(bins, axis=0, return_inverse=True)
        block = Z[:, model.offsets_[k] : model.offsets_[k + 1]]
        np.testing.assert_array_equal(np.argmax(block, axis=1), number.reshape(-1))
        np.testing.assert_allclose(block.sum(axis=1), 1 / np.sqrt(7))
