"""The regression prior's hyper-parameters from the data: the trees' marginal likelihood
(exact, against a dense Gaussian) and the forest's leave-one-out density, and their optima."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logsumexp
from scipy.stats import multivariate_normal

from conftest import BLIND
from mondrian_learn import MondrianForestRegressor
from mondrian_learn.forest._hyperparameters import SCORED_TREES


def _tree_covariance(model: MondrianForestRegressor, index: int, X: np.ndarray, prior: dict):
    """Cov(y_i, y_k) − σ² δ_ik = Σ φ_a over the common ancestors a of i's and k's leaves."""
    t = model.tree_arrays(index)
    tau_parent = np.array([0.0 if p < 0 else t["tau"][p] for p in t["parent"]])
    warp = lambda tau: np.where(np.isinf(tau), 1.0, expit(prior["gamma2"] * tau))  # noqa: E731
    phi = prior["gamma1"] * (warp(t["tau"]) - warp(tau_parent))
    n = len(phi)
    ancestors = np.zeros((n, n))
    for j in range(n):
        a = j
        while a >= 0:
            ancestors[j, a] = 1.0
            a = t["parent"][a]
    leaves = model.apply(X)[:, index]
    return (ancestors[leaves] * phi) @ ancestors[leaves].T


def _fitted(lifetime: float, n_estimators: int = 3):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(40, 2))
    y = np.sin(4 * X[:, 0]) + 0.3 * rng.normal(size=40)
    model = MondrianForestRegressor(
        n_estimators=n_estimators,
        lifetime=lifetime,
        min_samples_split=4,
        random_state=0,
        prior_mean=0.1,
        gamma1=0.7,
        gamma2=1.3,
        noise_variance=0.05,
    )
    return model.fit(X, y), X, y


@pytest.mark.parametrize("lifetime", [np.inf, 3.0])
def test_marginal_likelihood_equals_the_dense_gaussian(lifetime: float) -> None:
    model, X, y = _fitted(lifetime)
    prior = model.prior_
    dense = [
        multivariate_normal(
            np.full(len(y), prior["mean"]),
            _tree_covariance(model, t, X, prior) + prior["noise_variance"] * np.eye(len(y)),
        ).logpdf(y)
        for t in range(3)
    ]
    assert model.log_marginal_likelihood(1) == pytest.approx(dense[0], rel=1e-10)
    assert model.log_marginal_likelihood() == pytest.approx(sum(dense), rel=1e-10)


def test_leave_one_out_density_equals_the_dense_gaussian() -> None:
    """The forest mixture's leave-one-out density: per tree the Gaussian process LOO formulas
    (mean y_i − [K⁻¹r]_i / [K⁻¹]_ii, variance 1 / [K⁻¹]_ii), mixed over trees."""
    model, X, y = _fitted(np.inf)
    prior = model.prior_
    per_tree = []
    for t in range(3):
        K = _tree_covariance(model, t, X, prior) + prior["noise_variance"] * np.eye(len(y))
        inverse = np.linalg.inv(K)
        var = 1 / np.diag(inverse)
        mean = y - inverse @ (y - prior["mean"]) * var
        per_tree.append(-0.5 * np.log(2 * np.pi * var) - 0.5 * (y - mean) ** 2 / var)
    dense = np.sum(logsumexp(per_tree, axis=0) - np.log(3))
    values = (prior["mean"], prior["gamma1"], prior["gamma2"], prior["noise_variance"])
    ours = model.model_.prior_score("leave_one_out", *values, 3, 1)
    assert ours == pytest.approx(dense, rel=1e-10)


def _draw_from_the_prior(tree: dict, X_leaves: np.ndarray, prior: dict, seed: int):
    """Targets drawn from the hierarchical model on a fixed tree: node means down from
    μ_H with increments φ_j, then y = μ_leaf + N(0, σ²)."""
    rng = np.random.default_rng(seed)
    tau_parent = np.array([0.0 if p < 0 else tree["tau"][p] for p in tree["parent"]])
    warp = lambda tau: np.where(np.isinf(tau), 1.0, expit(prior["gamma2"] * tau))  # noqa: E731
    phi = prior["gamma1"] * (warp(tree["tau"]) - warp(tau_parent))
    mu = np.empty(len(phi))
    for j in np.argsort(tree["tau"], kind="stable"):  # parents are born before children
        above = prior["mean"] if tree["parent"][j] < 0 else mu[tree["parent"][j]]
        mu[j] = above + np.sqrt(phi[j]) * rng.normal()
    return mu[X_leaves] + np.sqrt(prior["noise_variance"]) * rng.normal(size=len(X_leaves))


def test_the_evidence_optimum_recovers_the_generating_prior() -> None:
    """Label-blind trees do not depend on y: draw y from the model on a fitted tree, refit
    (the same tree), and the evidence's optimum must be near the truth. N = 6000 in ≈ 300
    leaves of ≥ 20 points: σ² has relative sd ≈ √(2/(N − L)) ≈ 0.019; γ1 is learnt from the
    leaves' increments (γ₂ = 0.3 leaves ≥ 15 % of the prior variance to each leaf), log-sd
    ≈ √(2/L) ≈ 0.08 (0.065 measured over 12 draws). Tolerances: 7 % and 30 %, ≥ 3.5 sd."""
    truth = {"mean": 2.0, "gamma1": 4.0, "gamma2": 0.3, "noise_variance": 0.25}
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(6000, 3))
    params = dict(n_estimators=1, min_samples_split=40, random_state=3, **BLIND)
    first = MondrianForestRegressor(**params, hyperparameters="heuristic")
    first.fit(X, np.zeros(len(X)))
    y = _draw_from_the_prior(first.tree_arrays(0), first.apply(X)[:, 0], truth, seed=5)
    model = MondrianForestRegressor(
        **params, hyperparameters="evidence", gamma2=truth["gamma2"], prior_mean=truth["mean"]
    ).fit(X, y)
    np.testing.assert_array_equal(model.tree_arrays(0)["tau"], first.tree_arrays(0)["tau"])
    found = model.prior_
    assert found["gamma2"] == truth["gamma2"] and found["mean"] == truth["mean"]
    assert found["noise_variance"] == pytest.approx(truth["noise_variance"], rel=0.07)
    assert found["gamma1"] == pytest.approx(truth["gamma1"], rel=0.3)
    # The optimum beats the heuristic's prior on the criterion it maximises.
    heuristic = MondrianForestRegressor(**params, hyperparameters="heuristic").fit(X, y)
    assert model.log_marginal_likelihood() > heuristic.log_marginal_likelihood()


def test_chosen_priors_keep_what_the_caller_fixed_and_improve_their_criterion() -> None:
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(400, 3))
    y = np.sin(5 * X[:, 0]) + 0.2 * rng.normal(size=400)
    common = dict(n_estimators=12, random_state=0, gamma2=0.5)
    heuristic = MondrianForestRegressor(**common, hyperparameters="heuristic").fit(X, y).prior_
    loo = MondrianForestRegressor(**common, hyperparameters="leave_one_out").fit(X, y)
    assert loo.prior_["gamma2"] == 0.5 and loo.prior_["mean"] == heuristic["mean"]

    def score(p: dict) -> float:
        values = (p["mean"], p["gamma1"], p["gamma2"], p["noise_variance"])
        return loo.model_.prior_score("leave_one_out", *values, SCORED_TREES, 1)

    assert score(loo.prior_) > score(heuristic)
    fixed = MondrianForestRegressor(
        **common, hyperparameters="evidence", noise_variance=0.04, gamma1=1.0
    ).fit(X, y)
    assert fixed.prior_["noise_variance"] == 0.04 and fixed.prior_["gamma1"] == 1.0
