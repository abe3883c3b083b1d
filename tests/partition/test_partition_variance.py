"""Predictive variances of ``PartitionGPRegressor``: the exact route against a dense
from-scratch computation, the Lanczos (LOVE) route against the exact one through the bounds
it certifies (``mondrian_learn.partition._variance``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from mondrian_learn.partition import (
    FastClusterPartitions,
    MondrianPartitions,
    PartitionGPRegressor,
)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(300, 2))
    y = np.sin(5 * X[:, 0]) * np.cos(3 * X[:, 1]) + 0.1 * rng.normal(size=300)
    # Some new points outside the training box: Mondrian weights below 1.
    X_new = rng.uniform(-0.2, 1.2, size=(40, 2))
    return X, y, X_new, rng.uniform(0.3, 3.0, size=300)


def dense_covariance(
    gp: PartitionGPRegressor, X_new: np.ndarray, v: np.ndarray | None
) -> np.ndarray:
    """``s K** + σ² I − s² K* (s K̂ + σ² V⁻¹)⁻¹ K*ᵀ`` formed densely, K** = φφᵀ with 1 on the
    diagonal (the estimator's prior between new points)."""
    s, noise = gp.signal_variance_, gp.noise_variance_
    K = gp.kernel_.kernel_matrix()
    K_star = gp.kernel_.kernel_matrix(X_new)
    phi = gp.kernel_.features(X_new)
    prior = np.asarray((phi @ phi.T).todense())
    np.fill_diagonal(prior, 1.0)
    system = s * K + noise * np.diag(1 / (np.ones(len(K)) if v is None else v))
    cov = s * prior + noise * np.eye(len(X_new))
    return cov - s**2 * K_star @ np.linalg.solve(system, K_star.T)


@pytest.mark.parametrize(
    "sampler, n_points, path, weighted",
    [
        # ≈ 110 clusters for 300 points: the clusters' space, M + ρI factored densely.
        (MondrianPartitions(1.0), 300, "dense", False),
        (MondrianPartitions(1.0), 300, "dense", True),
        # ≈ 1,000 clusters for 300 points: CG in the training points' space.
        (FastClusterPartitions(7), 300, "points", False),
        (FastClusterPartitions(7), 300, "points", True),
        # ≈ 2,400 clusters for 2,500 points: CG in the clusters' space.
        (MondrianPartitions(8.0), 2500, "clusters", True),
    ],
)
def test_exact_route_equals_a_dense_computation(data, sampler, n_points, path, weighted) -> None:  # type: ignore[no-untyped-def]
    """All three paths of the exact route give the dense variances and covariance of the
    training points' system (CG to 1e-12: to 1e-8), with per-point noise σ²/v under
    weights."""
    X, y, X_new, v = data
    rng = np.random.default_rng(n_points)
    if n_points > len(X):
        X = rng.uniform(size=(n_points, 2))
        y = np.sin(5 * X[:, 0]) + 0.1 * rng.normal(size=n_points)
        v = rng.uniform(0.3, 3.0, size=n_points)
    gp = PartitionGPRegressor(
        sampler,
        n_partitions=30,
        noise_variance=0.03,
        signal_variance=0.8,
        variance="exact",
        tol=1e-12,
        max_iter=5000,
        random_state=0,
    ).fit(X, y, sample_weight=v if weighted else None)
    clusters = gp.kernel_.n_clusters_.sum()
    taken = "points" if clusters > n_points else "dense" if clusters <= 2048 else "clusters"
    assert taken == path, clusters
    want = dense_covariance(gp, X_new, v if weighted else None)
    _, std = gp.predict(X_new, return_std=True)
    np.testing.assert_allclose(std**2, np.diag(want), rtol=1e-8, atol=1e-12)
    _, cov = gp.predict(X_new, return_cov=True)
    np.testing.assert_allclose(cov, want, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(cov, cov.T)


def test_exact_route_is_deterministic_and_per_point(data) -> None:  # type: ignore[no-untyped-def]
    """The same bits for any ``n_jobs``, and a point's variance does not depend on the points
    predicted with it (each point's CG runs its own recurrence)."""
    X, y, X_new, _ = data
    stds = []
    for n_jobs in (1, 2, 7):
        gp = PartitionGPRegressor(n_partitions=30, variance="exact", random_state=1, n_jobs=n_jobs)
        stds.append(gp.fit(X, y).predict(X_new, return_std=True)[1])
    np.testing.assert_array_equal(stds[0], stds[1])
    np.testing.assert_array_equal(stds[0], stds[2])
    alone = [gp.predict(X_new[i : i + 1], return_std=True)[1][0] for i in (0, 17, 39)]
    np.testing.assert_array_equal(alone, stds[2][[0, 17, 39]])


def test_lanczos_bounds_bracket_the_exact_variance_and_close(data) -> None:  # type: ignore[no-untyped-def]
    """The Lanczos route's two Galerkin approximations (LOVE's, on the training points'
    Krylov space, and the clusters' one) bound the exact variance from above and below, for
    any rank; the bracket narrows as the rank grows and closes once the Krylov space holds
    every new point's features (rank ≥ the number of clusters). ``predict`` returns the upper
    bound."""
    X, y, X_new, v = data
    gp = PartitionGPRegressor(
        MondrianPartitions(4.0),
        n_partitions=30,
        variance="exact",
        tol=1e-12,
        max_iter=5000,
        random_state=0,
    ).fit(X, y, sample_weight=v)
    _, exact = gp.predict(X_new, return_std=True)
    clusters = int(gp.kernel_.n_clusters_.sum())
    widths = []
    for rank in (4, 16, 64, clusters):
        gp.set_params(variance="lanczos", variance_rank=rank)
        lower, upper = gp.predict_std_bounds(X_new)
        assert np.all(lower <= exact * (1 + 1e-9)) and np.all(exact <= upper * (1 + 1e-9))
        np.testing.assert_array_equal(gp.predict(X_new, return_std=True)[1], upper)
        widths.append(np.max(upper / lower - 1))
    assert widths[0] > widths[1] > widths[2] > 0.01
    # Closed up to the rounding of the upper bound's projected system (its shift of 1e-13).
    assert widths[3] < 1e-5
    np.testing.assert_allclose(upper, exact, rtol=1e-5)


def test_lanczos_covariance_and_parameters(data) -> None:  # type: ignore[no-untyped-def]
    """The Lanczos covariance is symmetric, positive semi-definite, with the route's
    variances on its diagonal; the factor is kept between calls, dropped by ``fit``, survives
    pickling, and the route's parameters are checked by name."""
    X, y, X_new, _ = data
    gp = PartitionGPRegressor(
        MondrianPartitions(4.0), n_partitions=30, variance_rank=12, random_state=0
    )
    gp.set_params(variance="lanczos").fit(X, y)
    _, std = gp.predict(X_new, return_std=True)
    _, cov = gp.predict(X_new, return_cov=True)
    np.testing.assert_array_equal(cov, cov.T)
    np.testing.assert_allclose(np.diag(cov), std**2, rtol=1e-12)
    assert np.linalg.eigvalsh(cov).min() > -1e-9
    loaded = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(loaded.predict(X_new, return_std=True)[1], std)
    # A refit on other targets recomputes the factor: as a fresh estimator's.
    gp.fit(X, 3 * y)
    fresh = PartitionGPRegressor(
        MondrianPartitions(4.0), n_partitions=30, variance_rank=12, random_state=0
    )
    fresh.set_params(variance="lanczos").fit(X, 3 * y)
    np.testing.assert_array_equal(
        gp.predict(X_new, return_std=True)[1], fresh.predict(X_new, return_std=True)[1]
    )
    with pytest.raises(ValueError, match="variance"):
        PartitionGPRegressor(variance="fast").fit(X, y)
    with pytest.raises(ValueError, match="variance_rank"):
        gp.set_params(variance_rank=0).predict(X_new, return_std=True)


def test_cluster_space_likelihood_matches_the_dense_criterion() -> None:
    """The marginal likelihood from Lanczos on the clusters' Gram matrix ``M = GᵀG/m`` (what
    the Dask GP runs): with as many steps as clusters the quadratic term is exact, and the
    log-determinant is Hutchinson's estimate of the dense value, within 4.5 of its standard
    errors (``Z``)."""
    from mondrian_learn import _core
    from mondrian_learn.partition import RandomPartitionKernel
    from mondrian_learn.partition._marginal_likelihood import ClusterSpaceLikelihood

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 2))
    y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=300)
    kernel = RandomPartitionKernel(FastClusterPartitions(4), n_partitions=10, random_state=0).fit(X)
    model, K = kernel.model_, kernel.kernel_matrix()
    clusters = int(kernel.n_clusters_.sum())
    centred = y - y.mean()
    likelihood = ClusterSpaceLikelihood(
        lambda starts, steps: _core.operator_lanczos(
            lambda U: model.cluster_sums(model.gather_sums(U, 1), 1), starts, steps, 1
        ),
        model.cluster_sums(centred[:, None], 1)[:, 0] / 10,
        float(centred @ centred),
        300,
        10,
        64,
        clusters,
        5,
    )
    for rho in (0.01, 0.3):
        system = K + rho * np.eye(300)
        quadratic = centred @ np.linalg.solve(system, centred)
        np.testing.assert_allclose(likelihood.quadratic(rho), quadratic, rtol=1e-8)
        estimate, error = likelihood.logdet(rho)
        assert abs(estimate - np.linalg.slogdet(system)[1]) <= 4.5 * error
