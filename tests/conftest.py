"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import tracemalloc
from typing import Any, Callable

# scikit-learn's array-API check (NumPy inputs with dispatch on) runs only with this set,
# and SciPy reads it at import.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

#: |z| bound of the statistical checks: a false alarm about 1 in 150,000 per check.
Z = 4.5

#: One candidate cut (T = Q = 1): the label-blind Mondrian process of the papers.
BLIND = {"candidate_dimensions": 1, "candidate_locations": 1}


def assert_same_for_any_n_jobs(results: Callable[[int], tuple[Any, ...]]) -> None:
    """``results(n_jobs)`` is the same, bit for bit, for n_jobs 1, 2 and an odd count (7):
    the thread count changes speed, never results."""
    first, *others = (results(n_jobs) for n_jobs in (1, 2, 7))
    for other in others:
        assert len(other) == len(first)
        for a, b in zip(other, first):
            np.testing.assert_array_equal(a, b)


def cooccurrence(leaves: np.ndarray, a: int, b: int) -> np.ndarray:
    """Per tree: 1 if points ``a`` and ``b`` share a leaf, else 0."""
    return (leaves[a] == leaves[b]).astype(float)


def two_proportion_z(x: np.ndarray, y: np.ndarray) -> float:
    """z statistic of the difference of two Bernoulli frequencies (pooled variance)."""
    p = (x.sum() + y.sum()) / (len(x) + len(y))
    se = np.sqrt(max(p * (1 - p), 1e-12) * (1 / len(x) + 1 / len(y)))
    return float((x.mean() - y.mean()) / se)


def homogeneity_pvalue(a: np.ndarray, b: np.ndarray, min_expected: float = 5.0) -> float:
    """Chi-square two-sample test that integer samples ``a`` and ``b`` share a distribution.

    Values are binned in order, each bin grown until both samples expect at least
    ``min_expected`` counts in it.
    """
    values = np.union1d(a, b)
    rows, current = [], np.zeros(2)
    total = len(a) + len(b)
    for v in values:
        current += [(a == v).sum(), (b == v).sum()]
        expected = current.sum() * np.array([len(a), len(b)]) / total
        if expected.min() >= min_expected:
            rows.append(current.copy())
            current[:] = 0
    if current.sum() > 0 and rows:
        rows[-1] += current
    table = np.array(rows)
    if len(table) < 2:
        return 1.0
    return float(stats.chi2_contingency(table.T)[1])


def assert_online_matches_batch(
    estimator: type,
    X: np.ndarray,
    y: np.ndarray,
    lifetime: float,
    min_samples_split: int,
    chunks: list[np.ndarray] | None = None,
    scale_features: bool = False,
    **first_partial_fit: Any,
) -> None:
    """Label-blind trees grown by ``partial_fit`` in 10 chunks (or ``chunks``: row indices
    per call; ``first_partial_fit``: extra arguments of the first call) have the batch
    distribution (NIPS 2014 Thm 1): the number of leaves (chi-square homogeneity, level 1e-3)
    and co-occurrence frequencies of point pairs (two-proportion z-test, |z| < Z), over 3000
    trees each."""
    params = dict(
        n_estimators=3000,
        lifetime=lifetime,
        min_samples_split=min_samples_split,
        n_jobs=2,
        scale_features=scale_features,
        **BLIND,
    )
    batch = estimator(random_state=3, **params).fit(X, y)
    online = estimator(random_state=4, **params)
    first, *rest = np.array_split(np.arange(len(X)), 10) if chunks is None else chunks
    online.partial_fit(X[first], y[first], **first_partial_fit)
    for chunk in rest:
        online.partial_fit(X[chunk], y[chunk])
    assert homogeneity_pvalue(batch.n_leaves_, online.n_leaves_) > 1e-3
    lb, lo = batch.apply(X), online.apply(X)
    for a, b in [(0, 1), (0, 149), (10, 20), (30, 31), (60, 90), (100, 140)]:
        z = two_proportion_z(cooccurrence(lb, a, b), cooccurrence(lo, a, b))
        assert abs(z) < Z, (a, b, z)


def estimator_zoo() -> dict[str, tuple[Any, dict[str, Any]]]:
    """Every public estimator, small and unfitted, with parameters that fail validation."""
    import mondrian_learn as ml
    from mondrian_learn import partition
    from mondrian_learn.kernel import baselines

    cut = partition.MondrianPartitions(lifetime=2.0)
    fixed = {"noise_variance": 0.1, "signal_variance": 1.0, "random_state": 0}
    return {
        "forest": (ml.MondrianForestRegressor(3, random_state=0), {"n_estimators": 0}),
        "forest_classifier": (
            ml.MondrianForestClassifier(3, random_state=0),
            {"candidate_locations": 0},
        ),
        "forest_cv": (
            ml.MondrianForestRegressorCV(3, lifetimes=5, random_state=0),
            {"selection": "r2"},
        ),
        "forest_classifier_cv": (
            ml.MondrianForestClassifierCV(3, lifetimes=5, random_state=0),
            {"validation_fraction": 1.0},
        ),
        "kernel_features": (
            ml.MondrianKernelFeatures(5, lifetime=2.0, random_state=0),
            {"lifetime": -1.0},
        ),
        "kernel_ridge": (ml.MondrianKernelRidge(5, lifetime=2.0, random_state=0), {"alpha": 0.0}),
        "kernel_ridge_cv": (
            ml.MondrianKernelRidgeCV(5, max_lifetime=3.0, lifetimes=5, random_state=0),
            {"solver": "lu"},
        ),
        "grid_ridge_cv": (
            ml.MondrianGridRidgeCV(5, max_iter=15, random_state=0),
            {"search": "greedy"},
        ),
        "partition_kernel": (
            partition.RandomPartitionKernel(cut, n_partitions=10, random_state=0),
            {"n_partitions": 0},
        ),
        "partition_gp": (
            partition.PartitionGPRegressor(cut, n_partitions=10, **fixed),
            {"noise_variance": -1.0},
        ),
        "partition_kpca": (
            partition.PartitionKernelPCA(2, sampler=cut, n_partitions=10, random_state=0),
            {"krylov_depth": 0},
        ),
        "partition_svc": (partition.PartitionSVC(cut, n_partitions=10, random_state=0), {"C": 0.0}),
        "fourier_features": (
            baselines.LaplaceFourierFeatures(10, random_state=0),
            {"n_components": 0},
        ),
        "binning_features": (
            baselines.RandomBinningFeatures(10, random_state=0),
            {"lifetime": np.inf},
        ),
        "laplace_ridge": (baselines.LaplaceKernelRidge(lifetime=1.0), {"alpha": -1.0}),
    }


def fit_data(estimator: Any, X: np.ndarray) -> Any:
    """The targets ``estimator`` takes for ``X``: continuous for regressors, two classes for
    classifiers, None otherwise."""
    from sklearn.base import is_classifier, is_regressor

    y = np.sin(4 * X[:, 0]) + X[:, 1]
    if is_regressor(estimator):
        return y
    return (y > np.median(y)).astype(int) if is_classifier(estimator) else None


def output(fitted: Any, X: Any) -> np.ndarray:
    """What a fitted estimator of ``estimator_zoo`` gives for ``X``, as a dense array."""
    for method in ("transform", "decision_function", "predict", "kernel_matrix"):
        if hasattr(fitted, method):
            result = getattr(fitted, method)(X)
            return result.toarray() if hasattr(result, "toarray") else np.asarray(result)
    raise AssertionError(f"no output method on {fitted!r}")


def traced_peak(call: Callable[[], Any]) -> int:
    """The peak of the memory Python allocators (numpy's included) trace during ``call()``."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
