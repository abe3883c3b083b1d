"""The regression forest's predictive: the held-out choice of its prior and spread, the spread
factor's exact effect on moments, densities and quantiles, and split-conformal intervals."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from mondrian_learn import MondrianForestRegressor
from mondrian_learn.forest._conformal import conformal_quantile
from mondrian_learn.forest._held_out import (
    FOLDS,
    HELD_OUT_ROWS,
    held_out_folds,
    scoring_trees,
    spread_for,
)


def piecewise(n: int, seed: int, noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Targets constant on the cells of a random axis-aligned partition (the trees' model
    family) plus Gaussian noise of standard deviation ``noise``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    level = 3 * np.floor(4 * X[:, 0]) + 2 * (X[:, 1] > 0.4) - (X[:, 2] > 0.7)
    return X, level + rng.normal(scale=noise, size=n)


def test_held_out_folds_score_each_row_once_and_never_grow_on_it() -> None:
    rng = np.random.default_rng(0)
    for n in (40, 1_000, 1_900, 60_000):
        points, y = rng.uniform(size=(n, 2)), rng.normal(size=n)
        folds = held_out_folds(points, y, seed=3)
        scored = np.concatenate([held for _, held in folds])
        assert len(np.unique(scored)) == scored.size == min(n, HELD_OUT_ROWS)
        for grown, held in folds:
            assert np.intersect1d(grown, held).size == 0
            assert grown.size + held.size <= n
        if n < HELD_OUT_ROWS:
            assert len(folds) == FOLDS  # every row scored once
        # The folds follow the rows, not their order: shuffled rows, the same rows scored.
        order = rng.permutation(n)
        shuffled = held_out_folds(points[order], y[order], seed=3)
        again = np.sort(order[np.concatenate([held for _, held in shuffled])])
        assert np.array_equal(again, np.sort(scored))
    # Copies of a row share a fold: never grown on and scored at once.
    points = np.repeat(rng.uniform(size=(50, 2)), 3, axis=0)
    y = np.repeat(rng.normal(size=50), 3)
    for grown, held in held_out_folds(points, y, seed=1):
        assert not set(map(tuple, points[grown])) & set(map(tuple, points[held]))


def test_spread_carried_to_more_trees_solves_the_calibration_identity() -> None:
    """ρ_K² (K − 1)/K − 1/K is the same for every K (module docstring of the rule)."""
    for m in (2, 10, 100, 1000):
        for s in (2, 8):
            for rho in (0.4, 0.8, 1.0, 1.5):
                carried = spread_for(m, rho, s)
                lhs = carried**2 * (m - 1) / m - 1 / m
                rhs = rho**2 * (s - 1) / s - 1 / s
                if carried > 0:
                    assert lhs == pytest.approx(rhs, abs=1e-12)
                else:
                    assert rhs <= -1 / m + 1e-12
    assert spread_for(1, 0.7, 2) == 0.7
    assert scoring_trees(100) == 8 and scoring_trees(10) == 3 and scoring_trees(1) == 2


def test_the_spread_scales_the_variance_between_components_exactly() -> None:
    """var(ρ) = W + ρ² B, with W, B from ρ = 0 and ρ = 1; the mean does not move."""
    X, y = piecewise(400, 0)
    model = MondrianForestRegressor(n_estimators=6, random_state=0).fit(X, y)
    probes = np.random.default_rng(1).uniform(-0.5, 1.5, size=(50, 3))
    core = model.model_
    moments = {}
    for rho in (0.0, 1.0, 0.37):
        core.set_spread(rho)
        moments[rho] = model.predict(probes, return_std=True)
    within, total = moments[0.0][1] ** 2, moments[1.0][1] ** 2
    expected = within + 0.37**2 * (total - within)
    np.testing.assert_allclose(moments[0.37][1] ** 2, expected, rtol=1e-9)
    for rho in (0.0, 1.0):
        np.testing.assert_allclose(moments[rho][0], moments[0.37][0], rtol=1e-12)


def test_density_and_quantiles_describe_the_same_spread_mixture() -> None:
    """At every ρ the log density is the derivative of the CDF the quantiles invert: between
    the quantiles at q ± h, the probability 2h is the density times the width."""
    X, y = piecewise(300, 2)
    model = MondrianForestRegressor(n_estimators=5, random_state=1).fit(X, y)
    probes = np.random.default_rng(3).uniform(-0.2, 1.2, size=(20, 3))
    h = 1e-5
    for rho in (0.0, 0.5, 1.0):
        model.model_.set_spread(rho)
        for q in (0.2, 0.5, 0.9):
            lo, mid, hi = model.predict_quantiles(probes, [q - h, q, q + h]).T
            density = np.exp(model.log_predictive_density(probes, mid))
            np.testing.assert_allclose(density * (hi - lo), 2 * h, rtol=1e-4)


@pytest.mark.parametrize("fixed", [{}, {"noise_variance": 0.05}, {"gamma2": 3.0}])
def test_held_out_choice_is_a_local_optimum_of_the_direct_criterion(
    fixed: dict[str, float],
) -> None:
    """The criterion computed here from scratch — scoring forests grown on the folds, each
    held-out row's log density under the chosen prior — is not improved by moving any free
    coordinate of the choice (ρ on the scoring trees, recovered from the carried ρ_M): the
    nested search (γ₁ and σ_y² scaled together inside, when both are free) finds the
    optimum of the joint one, whichever hyper-parameters the user fixes."""
    X, y = piecewise(300, 4)
    model = MondrianForestRegressor(n_estimators=8, random_state=5, **fixed).fit(X, y)
    prior = model.prior_
    core = model.model_
    points, targets, weights = core.training_rows()
    assert weights is None
    s = scoring_trees(8)
    folds = held_out_folds(points, targets, core.seed)
    forests = []
    for k, (grown, held) in enumerate(folds):
        scoring = model._scoring_forest(core, k)
        scoring.fit(points[grown], targets[grown], s, 1, s, None, None)
        forests.append((scoring, np.ascontiguousarray(points[held]), targets[held]))
    # ρ_S from ρ_M (inverting spread_for; ρ_M > 0 here).
    m = 8
    a = (prior["spread"] ** 2 * (m - 1) - 1) / m
    rho_s = np.sqrt((s * a + 1) / (s - 1))

    def criterion(p: dict[str, float]) -> float:
        total = 0.0
        for scoring, x, t in forests:
            scoring.fix_prior(p["mean"], p["gamma1"], p["gamma2"], p["noise_variance"], 1)
            scoring.set_spread(p["spread"])
            total += float(np.sum(scoring.log_density(x, t, 1)))
        return total / len(targets)

    best = {**prior, "spread": rho_s}
    at_best = criterion(best)
    for name in sorted({"gamma1", "gamma2", "noise_variance"} - set(fixed)):
        for factor in (0.8, 1.25):
            assert criterion({**best, name: best[name] * factor}) <= at_best + 1e-6, name
    for step in (-0.1, 0.1):
        moved = min(max(rho_s + step, 0.0), 2.0)
        assert criterion({**best, "spread": moved}) <= at_best + 1e-6


def test_held_out_intervals_are_calibrated_on_the_trees_model_family() -> None:
    """Noisy piecewise-constant targets, 3,000 test rows: each central interval's coverage
    is within 4 binomial standard deviations of nominal plus 0.03 for what the forest has
    to estimate (the goal the defaults are measured against is a mean error ≤ 0.05)."""
    X, y = piecewise(5_000, 6)
    model = MondrianForestRegressor(n_estimators=30, random_state=0, n_jobs=2)
    model.fit(X[:2_000], y[:2_000])
    X_test, y_test = X[2_000:], y[2_000:]
    levels = np.arange(0.1, 0.91, 0.1)
    bounds = model.predict_quantiles(X_test, np.concatenate([(1 - levels) / 2, (1 + levels) / 2]))
    errors = []
    for k, c in enumerate(levels):
        inside = np.mean((bounds[:, k] <= y_test) & (y_test <= bounds[:, k + len(levels)]))
        tolerance = 4 * np.sqrt(c * (1 - c) / y_test.size) + 0.03
        assert abs(inside - c) <= tolerance, (c, inside)
        errors.append(abs(inside - c))
    assert np.mean(errors) <= 0.05


def test_integer_targets_give_a_finite_density_without_a_spike() -> None:
    """Targets rounded to integers (repeated values in every leaf): the held-out rule keeps
    σ_y² where rows not fitted on put it, so the test NLPD is finite and no better than a
    Gaussian with the test error's own variance could make it by more than the mixture's
    shape allows (an NLPD far below that would be a spike on repeated values)."""
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(2_400, 3))
    y = np.round(4 * X[:, 0] + 2 * np.sin(6 * X[:, 1]) + rng.normal(scale=0.8, size=2_400))
    model = MondrianForestRegressor(n_estimators=20, random_state=0).fit(X[:1_600], y[:1_600])
    mean, std = model.predict(X[1_600:], return_std=True)
    nlpd = -np.mean(model.log_predictive_density(X[1_600:], y[1_600:]))
    rmse = np.sqrt(np.mean((mean - y[1_600:]) ** 2))
    gaussian = 0.5 * np.log(2 * np.pi * np.e * rmse**2)
    assert np.isfinite(nlpd) and nlpd >= gaussian - 0.3
    assert np.min(std) > 0.25 * rmse


def test_conformal_quantile_is_the_finite_sample_rank() -> None:
    scores = np.arange(1.0, 10.0)  # n = 9
    assert conformal_quantile(scores, 0.5) == 5.0  # ⌈10 · 0.5⌉ = 5
    assert conformal_quantile(scores, 0.9) == 9.0
    assert conformal_quantile(scores, 0.91) == np.inf  # rank 10 > n


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.95])
def test_conformal_intervals_cover_at_least_nominal_over_many_splits(confidence: float) -> None:
    """Split-conformal coverage: over 120 seeded draws of fit, calibration and test rows,
    the mean coverage lies in [c, c + 1/(n + 1)] (the guarantee and its upper bound for
    continuous scores), within 3 standard errors of the per-draw coverages."""
    coverages = []
    n_cal = 40
    for seed in range(120):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(140, 2))
        y = np.sin(4 * X[:, 0]) + (0.2 + X[:, 1]) * rng.standard_normal(140)
        model = MondrianForestRegressor(
            n_estimators=4, random_state=seed, hyperparameters="heuristic"
        ).fit(X[:60], y[:60])
        model.conformalize(X[60 : 60 + n_cal], y[60 : 60 + n_cal])
        low, high = model.predict_interval(X[100:], confidence=confidence, method="conformal").T
        coverages.append(np.mean((low <= y[100:]) & (y[100:] <= high)))
    mean, error = np.mean(coverages), np.std(coverages) / np.sqrt(len(coverages))
    assert mean >= confidence - 3 * error
    assert mean <= confidence + 1 / (n_cal + 1) + 3 * error


def test_conformal_calibration_is_checked_kept_and_discarded() -> None:
    X, y = piecewise(200, 8)
    model = MondrianForestRegressor(n_estimators=4, random_state=0).fit(X[:120], y[:120])
    with pytest.raises(ValueError, match="conformalize"):
        model.predict_interval(X[:5], method="conformal")
    with pytest.raises(ValueError, match="method"):
        model.predict_interval(X[:5], method="jackknife")
    model.conformalize(X[120:], y[120:])
    before = model.predict_interval(X[:5], confidence=0.8, method="conformal")
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(
        restored.predict_interval(X[:5], confidence=0.8, method="conformal"), before
    )
    assert restored.prior_ == model.prior_
    model.partial_fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="conformalize"):
        model.predict_interval(X[:5], method="conformal")
