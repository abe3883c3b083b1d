"""Shared helpers for the test suite."""

from __future__ import annotations

import os

# scikit-learn's array-API check (NumPy inputs with dispatch on) runs only with this set,
# and SciPy reads it at import.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402


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
