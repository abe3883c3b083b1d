"""Mondrian density estimation (issue 17, item 1; Balog's report, App. C): the posterior masses
against a direct Beta–binomial computation, the density integrates to 1, online equals batch,
draws follow the density, and bad input is refused with the model unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from mondrian_learn import MondrianDensityEstimator


def _model(X: np.ndarray, **params: object) -> MondrianDensityEstimator:
    return MondrianDensityEstimator(**{"n_estimators": 4, "random_state": 0, **params}).fit(X)


def test_leaf_masses_are_the_beta_binomial_posterior_means() -> None:
    """From the node arrays alone: the lower child's share (γ q (d+1)² + n_lower) /
    (γ (d+1)² + n_block), multiplied down every path (q its share of the block's width)."""
    X = np.random.default_rng(0).normal(size=(300, 2))
    gamma = 0.7
    model = _model(X, lifetime=4.0, gamma=gamma)
    lower, upper = (model.box_ - model.data_min_) / model.data_scale_
    for t in range(4):
        nodes = model.model_.nodes(t)
        mass, bounds, depth = {0: 1.0}, {0: (lower.copy(), upper.copy())}, {0: 0}
        leaves = []
        for j in range(len(nodes["dim"])):
            lo, hi = bounds[j]
            if nodes["dim"][j] < 0:
                leaves.append((mass[j], np.prod(hi - lo)))
                continue
            k, cut = nodes["dim"][j], nodes["threshold"][j]
            left, right = nodes["left"][j], nodes["right"][j]
            strength = gamma * (depth[j] + 1) ** 2
            q = (cut - lo[k]) / (hi[k] - lo[k])
            share = (strength * q + nodes["count"][left]) / (
                strength + nodes["count"][left] + nodes["count"][right]
            )
            mass[left], mass[right] = mass[j] * share, mass[j] * (1 - share)
            depth[left] = depth[right] = depth[j] + 1
            hi_left, lo_right = hi.copy(), lo.copy()
            hi_left[k] = lo_right[k] = cut
            bounds[left], bounds[right] = (lo, hi_left), (lo_right, hi)
        expected_mass, expected_volume = np.transpose(leaves)
        got_mass, got_volume = model.leaf_masses(t)
        np.testing.assert_allclose(got_mass, expected_mass, rtol=1e-12)
        np.testing.assert_allclose(got_volume, expected_volume, rtol=1e-12)
        assert got_mass.sum() == pytest.approx(1.0, rel=1e-12)
        assert nodes["count"][0] == 300


@pytest.mark.parametrize("dim", [1, 2])
def test_density_integrates_to_one(dim: int) -> None:
    """Midpoint rule on a grid of the box in the units of X: the density is constant on
    cells, so the error is the share of the grid's cells a cut crosses (well under 1 % here)."""
    rng = np.random.default_rng(dim)
    X = rng.gamma(2.0, size=(400, dim)) * [3.0, 0.5][:dim]
    model = _model(X, n_estimators=10)
    n = 20_000 if dim == 1 else 400
    axes = [np.linspace(lo, hi, n + 1) for lo, hi in model.box_.T]
    centres = [(a[1:] + a[:-1]) / 2 for a in axes]
    grid = np.stack(np.meshgrid(*centres, indexing="ij"), axis=-1).reshape(-1, dim)
    cell = np.prod([(a[-1] - a[0]) / n for a in axes])
    assert np.exp(model.score_samples(grid)).sum() * cell == pytest.approx(1.0, abs=5e-3)
    outside = model.box_[1] + 1.0
    assert model.score_samples(outside[None, :])[0] == -np.inf


def test_partial_fit_equals_fit_and_pickles() -> None:
    """The trees do not depend on the data: a first batch holding every feature's extremes
    fixes the box of a fit on all rows, and adding the rest online gives the same counts."""
    X = np.random.default_rng(3).normal(size=(500, 3))
    extremes = np.unique(np.concatenate([X.argmin(axis=0), X.argmax(axis=0)]))
    first = np.concatenate([extremes, np.setdiff1d(np.arange(250), extremes)])
    rest = np.setdiff1d(np.arange(500), first)
    batch = _model(X, lifetime=3.0)
    online = MondrianDensityEstimator(n_estimators=4, lifetime=3.0, random_state=0)
    online.partial_fit(X[first]).partial_fit(X[rest])
    Q = np.random.default_rng(4).normal(size=(50, 3))
    np.testing.assert_array_equal(online.score_samples(Q), batch.score_samples(Q))
    with pytest.raises(ValueError, match="outside the density's bounding box"):
        _model(X[rest[:100]], lifetime=3.0).partial_fit(X[extremes])
    loaded = pickle.loads(pickle.dumps(batch))
    np.testing.assert_array_equal(loaded.score_samples(Q), batch.score_samples(Q))


def test_weights_count_rows_and_sample_follows_the_density() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 1))
    counts = rng.integers(0, 4, size=200)
    keep = counts > 0
    weighted = MondrianDensityEstimator(n_estimators=8, random_state=0, lifetime=5.0)
    repeated = MondrianDensityEstimator(n_estimators=8, random_state=0, lifetime=5.0)
    weighted.fit(X, sample_weight=counts)
    repeated.fit(np.repeat(X[keep], counts[keep], axis=0))
    Q = np.linspace(-2, 2, 41)[:, None]
    np.testing.assert_allclose(weighted.score_samples(Q), repeated.score_samples(Q), rtol=1e-12)
    # Draws against the model's own CDF (from its density on a fine grid): the
    # Kolmogorov–Smirnov distance of 4,000 draws exceeds 1.63/√n with probability 1 %.
    draws = weighted.sample(4_000, random_state=1)[:, 0]
    grid = np.linspace(*weighted.box_[:, 0], 20_001)
    density = np.exp(weighted.score_samples(((grid[1:] + grid[:-1]) / 2)[:, None]))
    cdf = np.concatenate([[0.0], np.cumsum(density * np.diff(grid))])
    empirical = np.searchsorted(np.sort(draws), grid, side="right") / len(draws)
    assert np.max(np.abs(empirical - cdf / cdf[-1])) < 1.63 / np.sqrt(len(draws))


def test_bad_input_and_budgets_are_refused() -> None:
    X = np.random.default_rng(6).normal(size=(100, 2))
    model = _model(X, lifetime=2.0)
    before = model.score_samples(X)
    with pytest.raises(ValueError, match="outside the density's bounding box"):
        model.partial_fit(X * 10)
    with pytest.raises(ValueError, match="X has 3 features"):
        model.partial_fit(np.zeros((2, 3)))
    np.testing.assert_array_equal(model.score_samples(X), before)
    with pytest.raises(MemoryError, match="lifetime"):
        MondrianDensityEstimator(lifetime=1e6).fit(np.random.default_rng(0).normal(size=(50, 8)))
    with pytest.raises(ValueError, match="n_samples"):
        model.sample(-1)


def test_lifetime_path_equals_refits() -> None:
    """Each block draws from its own stream, so the forest refitted with lifetime λ is the
    fitted one pruned at λ: the path's mean log-likelihood equals the refit's (1e-12)."""
    X = np.random.default_rng(7).normal(size=(300, 2))
    V = np.random.default_rng(8).normal(size=(200, 2))
    model = _model(X, n_estimators=10, lifetime=15.0)
    grid = [0.0, 0.5, 2.0, 7.5, 15.0]
    path = model.lifetime_path(V, lifetimes=grid)
    for lifetime, value in zip(grid, path["log_likelihood"]):
        scores = _model(X, n_estimators=10, lifetime=lifetime).score_samples(V)
        inside = np.isfinite(scores)
        assert value == pytest.approx(scores[inside].mean(), rel=1e-12)
        assert path["outside"] == pytest.approx(1 - inside.mean())
    with pytest.raises(ValueError, match="lifetimes must lie in"):
        model.lifetime_path(V, lifetimes=[20.0])


def test_leave_one_out_path_is_each_row_scored_without_itself() -> None:
    """From scratch: for every training row, a core forest on the same box and seed with the
    other rows' counts scores it; the path's leave-one-out mean is the mean of those."""
    from mondrian_learn import _core
    from mondrian_learn._validation import draw_seed

    X = np.random.default_rng(9).uniform(size=(40, 2))
    model = MondrianDensityEstimator(6, lifetime=4.0, random_state=3, scale_features=False)
    model.fit(X)
    path = model.lifetime_path(X, lifetimes=[1.0, 4.0], leave_one_out=True)
    seed = draw_seed(3)  # the estimator's seed for random_state=3
    for k, lifetime in enumerate([1.0, 4.0]):
        direct = []
        for i in range(len(X)):
            core = _core.Density(
                list(model.box_[0]), list(model.box_[1]), lifetime, 0.01, 6, int(seed), 10**6, 1
            )
            core.add_points(np.delete(X, i, axis=0), 1)
            direct.append(core.log_density(X[i : i + 1], 1)[0])
        assert path["log_likelihood"][k] == pytest.approx(np.mean(direct), rel=1e-12)


def test_leave_one_out_selection_keeps_the_best_lifetime_of_its_path() -> None:
    X = np.random.default_rng(10).normal(size=(200, 2))
    model = _model(X, n_estimators=10, lifetime="leave_one_out")
    path = model.path_
    assert model.lifetime_ == path["lifetimes"][np.argmax(path["leave_one_out"])]
    assert 0 < model.lifetime_ <= path["lifetimes"][-1]
    refit = _model(X, n_estimators=10, lifetime=model.lifetime_)
    np.testing.assert_array_equal(model.score_samples(X), refit.score_samples(X))
