"""Sparse X (CSR, CSC, COO; any index order, duplicates, explicit zeros) for the estimators
that read it: the forests, the Mondrian kernel features and the kernel ridge. The core reads a
sparse matrix a row block at a time (a feature's range from its non-zeros and whether a row
lacks one), mapped to the unit box as it reads; every result equals the one on the same
values given dense, bit for bit."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone

import mondrian_learn as ml
from conftest import estimator_zoo, fit_data
from mondrian_learn import _core

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
    for method in ("transform", "predict", "predict_proba", "apply"):
        if hasattr(fitted, method):
            value = getattr(fitted, method)(X)
            out.append(value.toarray() if scipy.sparse.issparse(value) else np.asarray(value))
    if isinstance(fitted, (ml.MondrianForestRegressor, ml.MondrianKernelRidge)):
        out.extend(fitted.predict(X, return_std=True))
    if isinstance(fitted, ml.MondrianForestRegressor):
        out.append(fitted.predict(X, quantiles=[0.1, 0.9]))
        out.append(fitted.decision_path(X)[0].toarray())
    return out


@pytest.mark.parametrize("name", SPARSE)
def test_sparse_input_equals_the_same_values_dense(name: str) -> None:
    X = sparse_points()
    X_new = sparse_points(40, seed=1) * 1.5  # partly outside the training box
    estimator = ZOO[name][0]
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
    offset, scale = _core.unit_box(ml._validation.as_core_points(scipy.sparse.csr_matrix(X)))
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


@pytest.mark.parametrize("name", ["forest_cv", "kernel_ridge_cv", "partition_gp"])
def test_estimators_that_do_not_read_sparse_refuse_it_by_name(name: str) -> None:
    X = sparse_points()
    with pytest.raises(TypeError, match="dense data is required"):
        clone(ZOO[name][0]).fit(scipy.sparse.csr_matrix(X), fit_data(ZOO[name][0], X))
