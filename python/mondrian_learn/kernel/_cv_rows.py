"""The rows the kernel's cross-validated ridges fit and score, with ``sample_weight`` (row i's
noise σ²/v_i, as :class:`MondrianKernelRidge` reads it: an integer weight is the row repeated,
a zero weight removes it)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from mondrian_learn._lifetime_path import kept_row_splits, validation_splits
from mondrian_learn._targets import check_sample_weight, check_weighted_target_scale

Splits = list[tuple[np.ndarray, np.ndarray]]


def weighted_rows(
    X: np.ndarray, y: np.ndarray, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    """``(X, y, weights, keep)``: the rows of positive weight, their weights (None when
    ``sample_weight`` is None or every kept weight is 1, so that such a fit is the
    unweighted one bit for bit) and the mask of kept rows (a slice for None)."""
    weights, keep = check_sample_weight(sample_weight, X.shape[0])
    X, y = X[keep], y[keep]
    check_weighted_target_scale(y, weights)
    if weights is not None and np.all(weights == 1.0):
        weights = None
    return X, y, weights, keep


def weighted_splits(
    cv: Any,
    X: np.ndarray,
    y: np.ndarray,
    given: tuple[np.ndarray, np.ndarray],
    keep: Any,
    weights: np.ndarray | None,
    fraction: float,
    random_state: Any,
) -> Splits:
    """:func:`validation_splits` of the kept rows ``X``, ``y``. A splitter or iterable ``cv``
    indexes the rows as ``given`` (before the rows of zero weight were dropped): its
    indices are renumbered among the kept rows. None or an int draws the split here, over
    the distinct rows when weighted (a row of integer weight splits as its copies would)."""
    if cv is not None and not isinstance(cv, numbers.Integral):
        return kept_row_splits(cv, *given, keep)
    return validation_splits(cv, X, y, fraction, random_state, distinct=weights is not None)


def split_weights(weights: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    """The weights of ``rows`` (None without weights)."""
    return None if weights is None else np.ascontiguousarray(weights[rows])


def total_weight(weights: np.ndarray | None, n_rows: int) -> float:
    """Σ v_i (``n_rows`` without weights): how much a fold's validation rows weigh in the
    pooled error."""
    return float(n_rows) if weights is None else float(np.sum(weights))
