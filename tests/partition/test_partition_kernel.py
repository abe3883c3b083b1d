"""RandomPartitionKernel: samplers, products against dense computations on the same partitions,
the Laplace limit of Mondrian partitions, determinism, pickling and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.ensemble import ExtraTreesClassifier

from conftest import assert_same_for_any_n_jobs
from mondrian_learn.partition import (
    FRESH,
    CallablePartitions,
    FastClusterPartitions,
    MondrianPartitions,
    RandomForestPartitions,
    RandomPartitionKernel,
)


def kmeans_partition(X: np.ndarray, y: object, rng: np.random.Generator) -> object:
    """A partition defined by a program: k-means with a random number of clusters."""
    k = int(rng.integers(2, 9))
    return KMeans(k, n_init=1, random_state=int(rng.integers(2**31))).fit(X).predict


def hyperplane_partition(X: np.ndarray, y: object, rng: np.random.Generator) -> object:
    """A cheap program: 1–3 random hyperplanes through data points; the cluster is the code
    of the sides a point lies on."""
    k = int(rng.integers(1, 4))
    normals = rng.normal(size=(k, X.shape[1]))
    offsets = np.einsum("kd,kd->k", normals, X[rng.integers(0, len(X), size=k)])
    return lambda Z: ((Z @ normals.T > offsets) * (2 ** np.arange(k))).sum(axis=1)


SAMPLERS = {
    "mondrian": MondrianPartitions(lifetime=2.0),
    "random_forest": RandomForestPartitions(),
    "fast_cluster": FastClusterPartitions(max_level=5),
    "callable": CallablePartitions(hyperplane_partition),
}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=400)
    X_new = rng.uniform(-0.2, 1.2, size=(37, 3))
    return X, y, X_new


def dense_from_labels(
    labels: np.ndarray, weights: np.ndarray | None = None, train: np.ndarray | None = None
) -> np.ndarray:
    """``(1/m) Σ_ρ w_ρ(a) 1[ρ(a) = ρ(b)]`` computed naively from label arrays."""
    train = labels if train is None else train
    w = np.ones(labels.shape) if weights is None else weights
    m = labels.shape[0]
    K = np.zeros((labels.shape[1], train.shape[1]))
    for rho in range(m):
        K += w[rho][:, None] * (labels[rho][:, None] == train[rho][None, :])
    return K / m


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_products_match_dense_kernel(data, name: str) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    kernel = RandomPartitionKernel(SAMPLERS[name], n_partitions=30, random_state=1).fit(X, y)
    labels = kernel.model_.labels()
    assert labels.shape == (30, 400) and labels.dtype == np.uint32
    K = dense_from_labels(labels)
    # Exact up to the order of floating-point additions.
    np.testing.assert_allclose(kernel.kernel_matrix(), K, atol=1e-13)
    assert np.all(np.diag(K) == 1.0)
    V = np.random.default_rng(2).normal(size=(400, 3))
    np.testing.assert_allclose(kernel.matmul(V), K @ V, atol=1e-12)
    np.testing.assert_allclose(kernel.matmul(V[:, 0]), K @ V[:, 0], atol=1e-12)
    new_labels, new_weights = kernel.assign(X_new)
    K_new = dense_from_labels(new_labels, new_weights, labels)
    np.testing.assert_allclose(kernel.kernel_matrix(X_new), K_new, atol=1e-13)
    np.testing.assert_allclose(kernel.cross_matmul(X_new, V), K_new @ V, atol=1e-12)
    # Training points assigned as new points get their own clusters, with weight 1.
    np.testing.assert_allclose(kernel.kernel_matrix(X[:20]), K[:20], atol=1e-13)
    # One-hot features reproduce the kernel: φ(a)·φ(b) = k̂(a, b).
    phi = kernel.features()
    assert phi.nnz == 30 * 400
    np.testing.assert_allclose((phi @ phi.T).toarray(), K, atol=1e-13)
    np.testing.assert_allclose((kernel.features(X_new) @ phi.T).toarray(), K_new, atol=1e-13)


def test_mondrian_kernel_converges_to_laplace() -> None:
    """Balog et al. Prop. 1: each partition puts a and b together with probability
    p = exp(−λ‖a − b‖₁), independently, so m·k̂(a, b) ~ Binomial(m, p) and
    |k̂ − p| ≤ 5 √(p(1 − p)/m) except with probability < 1e-6 per pair. New points' weights
    (the conditional-Mondrian stay probability) give an unbiased estimate whose variance is at
    most the Bernoulli one (it is a conditional expectation of the indicator), so the same
    bound holds for the cross-kernel."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(40, 3))
    lam, m = 2.0, 4000
    kernel = RandomPartitionKernel(
        MondrianPartitions(lam), n_partitions=m, scale_features=False, random_state=0, n_jobs=2
    ).fit(X)
    for points, K in [(X, kernel.kernel_matrix())]:
        p = np.exp(-lam * np.abs(points[:, None, :] - X[None, :, :]).sum(axis=2))
        bound = 5 * np.sqrt(p * (1 - p) / m) + 1e-12
        assert np.all(np.abs(K - p) <= bound)
    X_new = rng.uniform(-0.3, 1.3, size=(15, 3))
    K_new = kernel.kernel_matrix(X_new)
    p = np.exp(-lam * np.abs(X_new[:, None, :] - X[None, :, :]).sum(axis=2))
    assert np.all(np.abs(K_new - p) <= 5 * np.sqrt(p * (1 - p) / m) + 1e-12)
    # Averaging fewer partitions gives a larger error (the estimate converges in m).
    few = RandomPartitionKernel(
        MondrianPartitions(lam), n_partitions=40, scale_features=False, random_state=0
    ).fit(X)
    p = np.exp(-lam * np.abs(X[:, None, :] - X[None, :, :]).sum(axis=2))
    assert np.abs(few.kernel_matrix() - p).mean() > 3 * np.abs(kernel.kernel_matrix() - p).mean()


def test_random_forest_clusters_are_ancestors_at_the_drawn_depth(data) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    forest = ExtraTreesClassifier(max_depth=6)
    kernel = RandomPartitionKernel(
        RandomForestPartitions(forest), n_partitions=25, random_state=4
    ).fit(X, y > y.mean())
    depths = kernel.model_.forest_depths()
    # Refit the same forest to read scikit-learn's own decision paths.
    fitted = RandomForestPartitions(forest)._fit_forest(X, y > y.mean(), 25, kernel_seed(kernel), 1)
    for rho, (tree, d) in enumerate(zip(fitted.estimators_, depths)):
        for points, labels in [
            (X, kernel.model_.labels()[rho]),
            (X_new, kernel.assign(X_new)[0][rho]),
        ]:
            path = tree.decision_path(points.astype(np.float32)).tocsr()
            node_depth = _node_depths(tree.tree_)
            stop = np.array(
                [
                    path.indices[path.indptr[i] : path.indptr[i + 1]][
                        node_depth[path.indices[path.indptr[i] : path.indptr[i + 1]]] <= d
                    ].max()
                    for i in range(points.shape[0])
                ]
            )
            train_stop = _stops(tree, X, node_depth, d)
            # Same node ⇔ same label; nodes no training point reaches are FRESH.
            for node in np.unique(stop):
                got = np.unique(labels[stop == node])
                assert len(got) == 1
                if node in train_stop:
                    assert got[0] != FRESH
                else:
                    assert got[0] == FRESH
        assert len(np.unique(kernel.model_.labels()[rho])) == len(train_stop)
    assert set(depths) != {depths[0]}


def kernel_seed(kernel: RandomPartitionKernel) -> int:
    """The seed the kernel drew from its random_state (as fit does)."""
    from mondrian_learn._validation import draw_seed

    return draw_seed(kernel.random_state)


def _node_depths(tree: object) -> np.ndarray:
    depth = np.zeros(tree.node_count, dtype=int)  # type: ignore[attr-defined]
    for j in range(tree.node_count):  # type: ignore[attr-defined]
        for c in (tree.children_left[j], tree.children_right[j]):  # type: ignore[attr-defined]
            if c >= 0:
                depth[c] = depth[j] + 1
    return depth


def _stops(tree: object, X: np.ndarray, node_depth: np.ndarray, d: int) -> set:
    path = tree.decision_path(X.astype(np.float32)).tocsr()  # type: ignore[attr-defined]
    return {
        path.indices[path.indptr[i] : path.indptr[i + 1]][
            node_depth[path.indices[path.indptr[i] : path.indptr[i + 1]]] <= d
        ].max()
        for i in range(X.shape[0])
    }


def test_fast_cluster_levels_and_callable_rules(data) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    kernel = RandomPartitionKernel(
        FastClusterPartitions(max_level=3), n_partitions=200, random_state=0
    ).fit(X)
    # 2^s clusters, s ~ U{0..3} (one cluster when no dimension is kept); each level has
    # probability 1/4 per partition, so all occur among 200 partitions.
    assert set(kernel.n_clusters_) == {1, 2, 4, 8}
    callable_kernel = RandomPartitionKernel(kmeans_partition, n_partitions=12, random_state=0).fit(
        X
    )
    labels, weights = callable_kernel.assign(X_new)
    assert weights is None
    rules = callable_kernel.rules_
    # The rules were fitted on the points mapped to the unit box.
    scaled = (X_new - callable_kernel.data_min_) / callable_kernel.data_scale_
    X_scaled = (X - callable_kernel.data_min_) / callable_kernel.data_scale_
    for rho in range(12):
        raw = rules[rho](scaled)
        # Same raw cluster ⇒ same id, and ids match the training points' ids.
        train = callable_kernel.model_.labels()[rho]
        for c in np.unique(raw):
            ids = np.unique(labels[rho][raw == c])
            assert len(ids) == 1
            assert ids[0] in set(train[rules[rho](X_scaled) == c])


@pytest.mark.parametrize("sampler", ["mondrian", "random_forest", "fast_cluster"])
def test_results_do_not_depend_on_n_jobs(data, sampler: str) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    V = np.random.default_rng(5).normal(size=(400, 2))

    def products(n_jobs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        kernel = RandomPartitionKernel(sampler, n_partitions=20, random_state=7, n_jobs=n_jobs).fit(
            X, y
        )
        return kernel.model_.labels(), kernel.matmul(V), kernel.cross_matmul(X_new, V)

    assert_same_for_any_n_jobs(products)


def test_pickle_round_trip(data) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    for sampler in ["mondrian", "random_forest", "fast_cluster"]:
        kernel = RandomPartitionKernel(sampler, n_partitions=10, random_state=0).fit(X, y)
        copy = pickle.loads(pickle.dumps(kernel))
        np.testing.assert_array_equal(copy.kernel_matrix(X_new), kernel.kernel_matrix(X_new))
    blob = kernel.model_.to_bytes()
    with pytest.raises(ValueError):
        type(kernel.model_).from_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="not a mondrian-learn model"):
        type(kernel.model_).from_bytes(b"garbage bytes")


def test_bad_input_is_a_value_error(data) -> None:  # type: ignore[no-untyped-def]
    X, y, X_new = data
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        RandomPartitionKernel().fit(bad)
    with pytest.raises(ValueError, match="n_partitions"):
        RandomPartitionKernel(n_partitions=0).fit(X)
    with pytest.raises(ValueError, match="lifetime"):
        RandomPartitionKernel(MondrianPartitions(-1.0)).fit(X)
    with pytest.raises(ValueError, match="sampler"):
        RandomPartitionKernel("voronoi").fit(X)
    with pytest.raises(ValueError, match="supervised"):
        RandomPartitionKernel("random_forest").fit(X)
    with pytest.raises(ValueError, match="max_level"):
        RandomPartitionKernel(FastClusterPartitions(max_level=-2)).fit(X)
    kernel = RandomPartitionKernel(n_partitions=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        kernel.assign(X[:, :2])
    with pytest.raises(ValueError, match="shape"):
        kernel.matmul(np.ones(7))
    with pytest.raises(ValueError, match="NaN"):
        kernel.matmul(np.full(400, np.nan))
    with pytest.raises(ValueError, match="noise_variance"):
        kernel.solve(np.ones(400), noise_variance=0.0)
    with pytest.raises(ValueError, match="preconditioner"):
        kernel.solve(np.ones(400), noise_variance=1.0, preconditioner="ilu")
    with pytest.raises(ValueError, match="callable"):
        RandomPartitionKernel(CallablePartitions(lambda X, y, rng: np.zeros(len(X)))).fit(X)
    with pytest.raises(ValueError, match="one label per point"):
        RandomPartitionKernel(lambda X, y, rng: lambda Z: np.zeros(3)).fit(X)
    with pytest.raises(ValueError):
        type(kernel.model_).from_labels(np.array([[0, 5, 1]], dtype=np.uint32))
