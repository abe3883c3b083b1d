"""MondrianKernelRidgeCV: how the lifetime path chooses λ and refits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from mondrian_learn import MondrianKernelRidgeCV
from mondrian_learn.kernel import _path_cv
from mondrian_learn.kernel._base import lifetime_for_cells


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = np.sin(6 * X[:, 0]) * X[:, 1] + 0.05 * rng.normal(size=300)
    return X, y


def test_validation_selection_and_refit_with_the_held_out_points(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianKernelRidgeCV(
        20, max_lifetime=12.0, alphas=1.0, lifetimes=30, random_state=0
    ).fit(X, y)
    path = model.path_
    assert model.best_index_ == int(np.argmin(path["validation_mse"]))
    assert model.lifetime_ == path["lifetimes"][model.best_index_]
    assert np.all(np.diff(path["lifetimes"]) >= 0) and path["lifetimes"][0] == 0.0
    assert np.all(np.diff(path["n_features"]) > 0) and path["n_features"][0] == 20
    # Every point of X ends up in the final model (the held-out 20 % by extension).
    assert model.model_.n_rows == len(X) and model.model_.lifetime == model.lifetime_
    # With X_val given, it is only used to choose λ.
    given = MondrianKernelRidgeCV(20, max_lifetime=12.0, alphas=1.0, lifetimes=30, random_state=0)
    given.fit(X[:200], y[:200], X_val=X[200:], y_val=y[200:])
    assert given.model_.n_rows == 200


def test_evidence_selection_needs_no_validation_data(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianKernelRidgeCV(
        20, max_lifetime=12.0, lifetimes=30, selection="evidence", random_state=0
    ).fit(X, y)
    assert np.all(np.isnan(model.path_["validation_mse"]))
    assert model.best_index_ == int(np.nanargmax(model.path_["log_evidence_profiled"]))
    assert model.model_.n_rows == len(X)
    # Refitted at α̂ = σ̂²/ŝ², the ridge's evidence (σ² profiled at that α) is the maximum
    # over both variances.
    assert np.isclose(
        model.model_.log_marginal_likelihood, model.path_["log_evidence_profiled"].max()
    )


def test_auto_solver_switches_to_gradient_and_says_so(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianKernelRidgeCV(
        20, max_lifetime=12.0, alphas=1.0, lifetimes=30, max_dense_features=300, random_state=0
    ).fit(X, y)
    path = model.path_
    dense = path["solver"] == "cholesky"
    assert dense.any() and (~dense).any()
    assert np.all(path["n_features"][dense] <= 300) and np.all(path["n_features"][~dense] > 300)
    assert np.all(np.isnan(path["log_evidence"][~dense]))
    assert np.all(path["cg_iterations"][~dense] > 0) and np.all(path["cg_iterations"][dense] == 0)
    # The evidence with both variances needs no dense path, only a small enough spectrum.
    gradient = MondrianKernelRidgeCV(
        20, max_lifetime=12.0, lifetimes=5, selection="evidence", solver="gradient"
    ).fit(X, y)
    assert np.all(np.isfinite(gradient.path_["log_evidence_profiled"]))


def test_evidence_selection_refuses_spectra_too_large(data, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    monkeypatch.setattr(_path_cv, "EVIDENCE_MAX_SIZE", 0)
    with pytest.raises(ValueError, match="selection='evidence' needs min"):
        MondrianKernelRidgeCV(10, max_lifetime=5.0, lifetimes=5, selection="evidence").fit(X, y)


def test_requested_lifetimes_are_the_checkpoints(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    grid = [4.0, 0.5, 2.0, 8.0]
    model = MondrianKernelRidgeCV(10, max_lifetime=8.0, lifetimes=grid, random_state=1).fit(X, y)
    np.testing.assert_array_equal(model.path_["lifetimes"], sorted(grid))
    every = MondrianKernelRidgeCV(5, max_lifetime=3.0, lifetimes=None, random_state=1).fit(X, y)
    # After every cut: one more feature per checkpoint.
    np.testing.assert_array_equal(np.diff(every.path_["n_features"]), 1)


def test_default_max_lifetime_gives_as_many_expected_cells_as_points() -> None:
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(500, 3)) * [1.0, 10.0, 0.0]
    lifetime = lifetime_for_cells(X, 500)
    ranges = np.ptp(X, axis=0)
    np.testing.assert_allclose(np.prod(1 + lifetime * ranges), 500, rtol=1e-9)
    assert lifetime_for_cells(np.ones((5, 2)), 5) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_path_recovers_the_lifetime_of_a_laplace_gp(seed: int) -> None:
    """Fig. 7 of the paper, smaller: y from a GP with kernel exp(−10‖x − x'‖₁) on [0, 1]²
    plus noise (std 0.01); choosing λ on the path by validation error lands within an order
    of magnitude of λ₀ = 10."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(500, 2))
    K = np.exp(-10.0 * cdist(X, X, "cityblock"))
    y = np.linalg.cholesky(K + 1e-10 * np.eye(500)) @ rng.normal(size=500)
    y += 0.01 * rng.normal(size=500)
    model = MondrianKernelRidgeCV(
        30,
        max_lifetime=100.0,
        alphas=1.0,
        lifetimes=40,
        max_dense_features=1500,
        random_state=seed,
    ).fit(X[:350], y[:350], X_val=X[350:], y_val=y[350:])
    assert 1.0 <= model.lifetime_ <= 100.0
