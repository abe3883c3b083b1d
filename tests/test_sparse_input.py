"""Sparse X (CSR, CSC, COO; any index order, duplicates, explicit zeros) for the estimators
that read it: the forests, the Mondrian kernel features and the kernel ridge (the core reads a
sparse matrix a row block at a time, a feature's range from its non-zeros and whether a row
lacks one, mapped to the unit box as it reads); the random partition kernel and its
estimators, and the density estimator (the core reads dense rows only: new points go to it a
block of rows at a time, the partitions' samplers read the training points dense). Every
result equals the one on the same values given dense, bit for bit."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import mondrian_learn as ml
from conftest import estimator_zoo, fit_data, traced_peak
from mondrian_learn import _core, partition

ZOO = estimator_zoo()
SPARSE = sorted(name for name, (e, _) in ZOO.items() if e._accepts_sparse)


def sparse_points(n: int = 120, d: int = 5, seed: int = 0) -> np.ndarray:
    """Points with many zeros: a column never zero, one always zero, the rest 70 % zeros, and
    negative values (so an implicit zero lies inside some ranges, at an end of others)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 2.0, size=(n, d))
    X[rng.uniform(size=(n, d)) < 0.7] = 0.0
    X[:, 0] = rng.uniform(1.0, 3.0, size=n)
    X[:, 1] = 0.0
    return X


def formats(X: np.ndarray) -> dict[str, object]:
    """The values of ``X`` in every sparse form scikit-learn users hand over."""
    coo = scipy.sparse.coo_matrix(X)
    # Split every entry in two halves (duplicates) and list them in reverse order.
    half = coo.data / 2
    rows, cols = np.r_[coo.row, coo.row][::-1], np.r_[coo.col, coo.col][::-1]
    duplicated = scipy.sparse.coo_matrix(
        (np.r_[half, coo.data - half][::-1], (rows, cols)), shape=X.shape
    )
    unsorted = scipy.sparse.csr_matrix(X)
    unsorted.indices = unsorted.indices.copy()
    for i in range(X.shape[0]):  # reverse the columns within each row
        a, b = unsorted.indptr[i], unsorted.indptr[i + 1]
        unsorted.indices[a:b] = unsorted.indices[a:b][::-1]
        unsorted.data[a:b] = unsorted.data[a:b][::-1]
    unsorted.has_sorted_indices = False
    # An explicitly stored zero at (0, 1) (column 1 has no other entry).
    explicit = scipy.sparse.coo_matrix(
        (np.r_[coo.data, 0.0], (np.r_[coo.row, 0], np.r_[coo.col, 1])), shape=X.shape
    ).tocsr()
    return {
        "csr": scipy.sparse.csr_matrix(X),
        "csc": scipy.sparse.csc_matrix(X),
        "csr_array": scipy.sparse.csr_array(X),
        "coo_duplicates": duplicated,
        "csr_unsorted": unsorted,
        "csr_explicit_zero": explicit,
    }


def results(fitted: object, X: object) -> list[np.ndarray]:
    """Everything a fitted estimator of the zoo gives for ``X``, as dense arrays."""
    out = []
    for method in ("transform", "predict", "predict_proba", "decision_function", "apply"):
        if hasattr(fitted, method):
            value = getattr(fitted, method)(X)
            out.append(value.toarray() if scipy.sparse.issparse(value) else np.asarray(value))
    if isinstance(fitted, (ml.MondrianForestRegressor, ml.MondrianKernelRidge)):
        out.extend(fitted.predict(X, return_std=True))
    if isinstance(fitted, ml.MondrianForestRegressor):
        out.append(fitted.predict(X, quantiles=[0.1, 0.9]))
        out.append(fitted.decision_path(X)[0].toarray())
    if isinstance(fitted, ml.RandomPartitionKernel):
        out.extend(kernel_results(fitted, X))
    if isinstance(fitted, ml.PartitionGPRegressor):
        out.extend(fitted.predict(X, return_std=True))
        out.extend(fitted.predict(X, return_cov=True))
        out.extend(fitted.predict_std_bounds(X))
    if isinstance(fitted, ml.MondrianDensityEstimator):
        out.append(fitted.score_samples(X))
    return out


def kernel_results(kernel: Any, X: object) -> list[np.ndarray]:
    """Labels, weights, features, a cross product and the training labels of a fitted
    random partition kernel."""
    out = [value for value in kernel.assign(X) if value is not None]
    out.append(kernel.features(X).toarray())
    out.append(kernel.cross_matmul(X, np.arange(kernel.n_points_, dtype=float)))
    out.append(kernel.model_.labels())
    return out


@pytest.mark.parametrize("name", SPARSE)
def test_sparse_input_equals_the_same_values_dense(name: str) -> None:
    X = sparse_points()
    X_new = sparse_points(40, seed=1) * 1.5  # partly outside the training box
    estimator = ZOO[name][0]
    assert estimator.__sklearn_tags__().input_tags.sparse
    y = fit_data(estimator, X)
    reference = clone(estimator).fit(X, y)
    expected = results(reference, X_new)
    for kind, data in formats(X).items():
        fitted = clone(estimator).fit(data, y)
        for got, want in zip(results(fitted, formats(X_new)[kind]), expected):
            np.testing.assert_array_equal(got, want, err_msg=kind)
    # and a dense model answers sparse queries, a sparse-fitted one dense queries, alike
    for got, want in zip(results(reference, scipy.sparse.csr_matrix(X_new)), expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["forest", "forest_classifier", "kernel_ridge"])
def test_sparse_online_updates_equal_dense_ones(name: str) -> None:
    X = sparse_points(150, seed=2)
    X[100:] *= 2.0  # the later rows widen the box: the trees extend
    estimator = ZOO[name][0]
    y = fit_data(estimator, X)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=50)

    def grown(data: object) -> object:
        model = clone(estimator)
        if name == "forest_classifier":
            model.partial_fit(data[:100], y[:100], classes=[0, 1])
        else:
            model.fit(data[:100], y[:100])
        return model.partial_fit(data[100:], y[100:], sample_weight=w)

    dense, sparse = grown(X), grown(scipy.sparse.csr_matrix(X))
    for got, want in zip(results(sparse, X), results(dense, X)):
        np.testing.assert_array_equal(got, want)


def test_sparse_validation_rows_on_the_lifetime_path() -> None:
    X, X_val = sparse_points(150, seed=4), sparse_points(60, seed=5)
    forest = ml.MondrianForestRegressor(5, random_state=0).fit(X, fit_data(ZOO["forest"][0], X))
    y_val = fit_data(ZOO["forest"][0], X_val)
    dense = forest.lifetime_path(X_val, y_val, lifetimes=20)
    sparse = forest.lifetime_path(scipy.sparse.csc_matrix(X_val), y_val, lifetimes=20)
    for key in ("validation_mse", "validation_nlpd", "lifetimes"):
        np.testing.assert_array_equal(sparse[key], dense[key])
    np.testing.assert_array_equal(
        forest.log_predictive_density(scipy.sparse.csr_matrix(X_val), y_val),
        forest.log_predictive_density(X_val, y_val),
    )


def test_the_unit_box_of_sparse_points_counts_their_implicit_zeros() -> None:
    # Feature 0 is never zero (its range is that of the stored values), feature 1 is always
    # zero, the rest have implicit zeros inside or at an end of their range.
    X = sparse_points()
    offset, scale = _core.unit_box(ml._points.as_core_points(scipy.sparse.csr_matrix(X)))
    np.testing.assert_array_equal(offset, X.min(axis=0))
    spread = X.max(axis=0) - X.min(axis=0)
    np.testing.assert_array_equal(scale, np.where(spread > 0, spread, 1.0))
    assert offset[0] >= 1.0 and offset[1] == 0.0 and scale[1] == 1.0


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ((np.ones(2), np.array([0, 3], dtype=np.int32), np.array([0, 1, 2]), 3), "out of range"),
        ((np.ones(2), np.array([2, 1], dtype=np.int32), np.array([0, 2]), 3), "sorted"),
        ((np.ones(2), np.array([0, 1], dtype=np.int32), np.array([0, 3, 2]), 3), "same entries"),
        ((np.ones(2), np.array([0, 1], dtype=np.int32), np.array([1, 2]), 3), "start at 0"),
        ((np.ones(3), np.array([0, 1, 2], dtype=np.int32), np.array([0, 2, 1, 3]), 3), "decrease"),
        ((np.array([1.0, np.inf]), np.array([0, 1], dtype=np.int32), np.array([0, 2]), 3), "NaN"),
    ],
)
def test_malformed_sparse_points_are_refused_by_the_core(parts: tuple, message: str) -> None:
    # What the Python layer never hands over (it canonicalises first) the core still refuses
    # with a ValueError instead of reading out of range.
    data, indices, indptr, d = parts
    forest = ml.MondrianForestRegressor(2, random_state=0).fit(np.eye(3), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=message):
        forest.model_.apply((data, indices, indptr.astype(np.int64), d, None), 1)


def test_sparse_queries_are_not_densified_in_python() -> None:
    # A dense copy of the queries would take n × d × 8 = 256 MB; the core reads the sparse
    # rows a block at a time (its buffers are not Python allocations), so Python's peak stays
    # at the sparse matrix and the results.
    rng = np.random.default_rng(6)
    n, d = 16_000, 2_000
    queries = scipy.sparse.random(n, d, density=0.001, format="csr", random_state=rng)
    train = scipy.sparse.random(300, d, density=0.01, format="csr", random_state=rng)
    forest = ml.MondrianForestRegressor(3, random_state=0).fit(train, rng.normal(size=300))
    tracemalloc.start()
    try:
        mean = forest.predict(queries)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mean.shape == (n,) and np.isfinite(mean).all()
    assert peak < 0.02 * n * d * 8


def test_a_dense_store_beyond_memory_is_refused_before_allocating() -> None:
    # The trees keep their training points dense (boxes and the conditional Mondrian read
    # coordinates): a sparse X whose dense store cannot fit is refused by name.
    huge = scipy.sparse.csr_matrix(([1.0], ([0], [5])), shape=(2, 2**40))
    with pytest.raises(MemoryError, match="X="):
        ml.MondrianForestRegressor(2).fit(huge, [0.0, 1.0])


@pytest.mark.parametrize("name", sorted(set(ZOO) - set(SPARSE)))
def test_estimators_that_do_not_read_sparse_refuse_it_by_name(name: str) -> None:
    X = sparse_points()
    assert not ZOO[name][0].__sklearn_tags__().input_tags.sparse
    with pytest.raises(TypeError, match="dense data is required"):
        clone(ZOO[name][0]).fit(scipy.sparse.csr_matrix(X), fit_data(ZOO[name][0], X))


def test_the_partition_family_and_the_density_declare_sparse_input() -> None:
    # What scikit-learn's checks and meta-estimators read: the tag says what fit accepts.
    names = {"partition_kernel", "partition_gp", "partition_kpca", "partition_svc"}
    assert names <= set(SPARSE)
    assert ml.MondrianDensityEstimator().__sklearn_tags__().input_tags.sparse


def halves(X: np.ndarray, y: object, rng: np.random.Generator) -> Any:
    """A partition by a program: a random coordinate's threshold, crossed with feature 0's."""
    j, t = int(rng.integers(X.shape[1])), float(rng.uniform())
    return lambda Z: (Z[:, j] > t).astype(int) + 2 * (Z[:, 0] > 0.5)


@pytest.mark.parametrize("sampler", ["mondrian", "fast_cluster", "random_forest", halves])
@pytest.mark.parametrize("scale_features", [True, False])
def test_every_sampler_reads_sparse_points_as_dense_ones(
    sampler: Any, scale_features: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks of two rows (40 bytes a row): the labels of new points are put together from
    # many core calls, and must be those of one call on the same points given dense.
    monkeypatch.setattr(ml._points, "DENSE_BLOCK_BYTES", 80)
    X, X_new = sparse_points(), sparse_points(41, seed=1) * 1.5
    y = fit_data(ZOO["forest"][0], X)
    kernel = partition.RandomPartitionKernel(
        sampler, n_partitions=8, scale_features=scale_features, random_state=0
    )
    reference = clone(kernel).fit(X, y)
    expected = kernel_results(reference, X_new)
    for kind, data in formats(X).items():
        fitted = clone(kernel).fit(data, y)
        np.testing.assert_array_equal(fitted.data_min_, reference.data_min_)
        np.testing.assert_array_equal(fitted.data_scale_, reference.data_scale_)
        for got, want in zip(kernel_results(fitted, formats(X_new)[kind]), expected):
            np.testing.assert_array_equal(got, want, err_msg=kind)
    if sampler == "mondrian":  # the conditional Mondrian weights some points below 1
        weights = reference.assign(X_new)[1]
        assert weights is not None and weights.min() < 1.0


@pytest.mark.parametrize("name", ["partition_gp", "partition_svc"])
def test_sparse_rows_of_zero_weight_are_left_out_as_dense_ones(name: str) -> None:
    X, X_new = sparse_points(seed=7), sparse_points(30, seed=8)
    estimator = ZOO[name][0]
    y = fit_data(estimator, X)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, size=len(X))
    weights[::5] = 0.0
    dense = clone(estimator).fit(X, y, sample_weight=weights)
    sparse = clone(estimator).fit(scipy.sparse.csc_matrix(X), y, sample_weight=weights)
    assert sparse.kernel_.n_points_ == dense.kernel_.n_points_ == np.count_nonzero(weights)
    for got, want in zip(results(sparse, scipy.sparse.csr_matrix(X_new)), results(dense, X_new)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lifetime", [None, 4.0, "leave_one_out"])
def test_sparse_density_equals_dense(lifetime: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Counts are added a block of rows at a time (three rows a block here), densities scored
    # so; the leave-one-out path and lifetime_path read every row at once. Online updates
    # from sparse rows too.
    monkeypatch.setattr(ml._points, "DENSE_BLOCK_BYTES", 120)
    X, X_new = sparse_points(seed=10), sparse_points(40, seed=11) * 1.2
    weights = np.random.default_rng(12).uniform(0.5, 2.0, size=len(X))
    weights[::7] = 0.0
    estimator = ml.MondrianDensityEstimator(5, lifetime=lifetime, random_state=0)
    assert estimator.__sklearn_tags__().input_tags.sparse

    def fitted(data: Any) -> Any:
        model = clone(estimator).fit(data[:100], sample_weight=weights[:100])
        return model.partial_fit(data[100:], sample_weight=weights[100:])

    def outputs(model: Any, queries: Any) -> list[Any]:
        path = model.lifetime_path(queries, 6, sample_weight=np.arange(1.0, 41.0))
        return [model.box_, model.lifetime_, model.score_samples(queries), *path.values()]

    reference = fitted(X)
    expected = outputs(reference, X_new)
    assert np.isfinite(expected[2]).sum() > 20  # most queries inside the box
    # (The leave-one-out fit grows 10⁵ cells a tree: one format for it.)
    kinds = ["coo_duplicates"] if lifetime == "leave_one_out" else list(formats(X))
    for kind in kinds:
        model = fitted(scipy.sparse.csr_matrix(formats(X)[kind]))
        for got, want in zip(outputs(model, formats(X_new)[kind]), expected):
            np.testing.assert_array_equal(got, want, err_msg=kind)
        if lifetime == "leave_one_out":
            for key in ("lifetimes", "leave_one_out"):
                np.testing.assert_array_equal(model.path_[key], reference.path_[key])


def categories(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three categorical columns and a target that depends on two of them."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [rng.choice(list("abcd"), n), rng.choice(list("xyz"), n), rng.choice(list("pq"), n)]
    )
    y = (X[:, 0] == "a") + 2.0 * (X[:, 1] == "z") + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("name", [*SPARSE, "density"])
def test_a_one_hot_encoder_pipeline_gives_the_results_of_its_dense_twin(name: str) -> None:
    # The encoder's default output is a CSR matrix; swapping the estimator after it must not
    # break the pipeline, and the results are those of the dense encoding.
    if name == "density":
        estimator: Any = ml.MondrianDensityEstimator(5, lifetime=2.0, random_state=0)
    else:
        estimator = ZOO[name][0]
    X, y = categories(90, seed=13)
    X_new = categories(25, seed=14)[0]
    X_new[0, 0] = "e"  # a category the encoder has not seen: all zeros
    target: Any = y
    if name == "density" or not (hasattr(estimator, "predict") or name == "kernel_ridge"):
        target = None
    elif hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function"):
        target = (y > 1.0).astype(int)
    pipelines = [
        make_pipeline(
            OneHotEncoder(handle_unknown="ignore", sparse_output=sparse), clone(estimator)
        )
        for sparse in (True, False)
    ]
    fitted = [pipeline.fit(X, target) for pipeline in pipelines]
    assert scipy.sparse.issparse(fitted[0][0].transform(X_new))
    for method in ("predict", "transform", "decision_function", "score_samples"):
        if hasattr(fitted[0], method) and hasattr(fitted[0][-1], method):
            got, want = (getattr(f, method)(X_new) for f in fitted)
            if scipy.sparse.issparse(got):
                got, want = got.toarray(), want.toarray()
            np.testing.assert_array_equal(got, want, err_msg=method)
    if isinstance(estimator, ml.RandomPartitionKernel):
        for got, want in zip(*(kernel_results(f[-1], f[0].transform(X_new)) for f in fitted)):
            np.testing.assert_array_equal(got, want)


def test_sparse_queries_of_the_partition_kernel_and_the_density_are_read_in_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Dense queries would take n × d × 8 = 80 MB; they reach the core a block of rows (1 MiB
    # here) at a time, so Python's peak stays near one block and the results. (A short
    # lifetime keeps the trees, and the d-dimensional routing of 10,000 points, cheap.)
    monkeypatch.setattr(ml._points, "DENSE_BLOCK_BYTES", 2**20)
    rng = np.random.default_rng(15)
    n, d = 10_000, 1_000
    queries = scipy.sparse.random(n, d, density=0.002, format="csr", random_state=rng)
    train = scipy.sparse.random(200, d, density=0.02, format="csr", random_state=rng)
    kernel = partition.RandomPartitionKernel(
        partition.MondrianPartitions(lifetime=0.002), n_partitions=3, random_state=0
    ).fit(train)
    density = ml.MondrianDensityEstimator(3, random_state=0).fit(train)
    labels, weights = kernel.assign(queries)
    assert weights is not None and weights.min() < 1.0  # the trees have cuts
    outputs = labels.nbytes + weights.nbytes
    for call in (lambda: kernel.assign(queries), lambda: density.score_samples(queries)):
        assert traced_peak(call) < 3 * 2**20 + outputs < 0.1 * n * d * 8
    # and the blocks put together are the answers for the same rows given dense
    head = queries[:300].toarray()
    for got, want in zip((labels, weights), kernel.assign(head)):
        np.testing.assert_array_equal(got[:, :300], want)
    np.testing.assert_array_equal(density.score_samples(queries)[:300], density.score_samples(head))


def test_a_partition_kernel_on_sparse_points_beyond_memory_is_refused_before_allocating() -> None:
    # The samplers read coordinates: the training points are made dense, which is refused by
    # name when it cannot fit (a 2⁴⁶-byte array here), before the map or any array is made.
    huge = scipy.sparse.csr_matrix(([1.0], ([0], [5])), shape=(2**12, 2**31 - 1))
    kernel = partition.RandomPartitionKernel(n_partitions=2)
    with pytest.raises(MemoryError, match="X=4096 × 2147483647"):
        kernel.fit(huge)
    assert not hasattr(kernel, "model_") and not hasattr(kernel, "data_min_")
