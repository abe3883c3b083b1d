"""Checks of what supervised fits take besides the points: targets ``y`` (numbers whose
variance stays finite) and row weights ``sample_weight``."""

from __future__ import annotations

from typing import Any

import numpy as np

from mondrian_learn._points import as_core_array


def check_numeric_target(y: np.ndarray) -> None:
    """Raise ``ValueError`` when a regressor's targets ``y`` (checked by scikit-learn's
    ``validate_data(..., y_numeric=True)``, which converts only object arrays) are not
    numbers: strings or bytes would otherwise fail deep inside with a numpy ``TypeError``.
    The message is scikit-learn's for targets it cannot convert; strings that read as
    numbers are refused too (the estimators read y as it is), with how to convert them."""
    if np.asarray(y).dtype.kind in "biuf":
        return
    try:
        np.asarray(y).astype(np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"y must be numeric for regression: {error}") from None
    raise ValueError(
        f"y must be numeric for regression, got dtype {np.asarray(y).dtype}; convert it "
        "with y.astype(float)"
    )


def check_target_scale(y: np.ndarray) -> None:
    """Raise ``ValueError`` when the targets ``y`` are not numbers
    (:func:`check_numeric_target`) or their variance overflows float64: every model centres
    and scales by it, and would return NaN."""
    check_numeric_target(y)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = bool(np.isfinite(np.var(y))) if y.size else True
    if not finite:
        raise ValueError("y is too large: the variance of the targets overflows float64; rescale y")


#: The largest row weight (the core's bound on |y| and on weights alike).
MAX_WEIGHT = 1e150
#: The smallest positive row weight (its reciprocal: the same margin below 1).
MIN_WEIGHT = 1 / MAX_WEIGHT


def check_weighted_target_scale(y: np.ndarray, weights: np.ndarray | None) -> None:
    """Raise ``ValueError`` when the weighted squared deviations of ``y`` overflow float64 (the
    models' sums of v_i (y_i − ȳ)² would be infinite and their predictions NaN)."""
    if weights is None or not y.size:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        centred = y - np.average(y, weights=weights)
        finite = bool(np.isfinite(np.sum(weights * centred * centred)))
    if not finite:
        raise ValueError(
            "sample_weight times the squared deviations of y overflows float64; rescale "
            "sample_weight or y"
        )


def check_sample_weight(sample_weight: Any, n_rows: int) -> tuple[np.ndarray | None, Any]:
    """``sample_weight`` (None, a number or n_rows values) checked: finite, non-negative, not
    all zero, positive ones within [``MIN_WEIGHT``, ``MAX_WEIGHT``]. Returns the positive
    weights and the rows to keep — a zero weight removes its
    row, as scikit-learn's weight semantics ask — or ``(None, slice(None))`` for None."""
    if sample_weight is None:
        return None, slice(None)
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.ndim == 0:
        weights = np.full(n_rows, float(weights))
    if weights.shape != (n_rows,):
        raise ValueError(
            f"sample_weight must be a number or have shape ({n_rows},), got {weights.shape}"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("sample_weight must hold finite, non-negative values")
    if np.any(weights > MAX_WEIGHT):
        raise ValueError(
            f"sample_weight must hold values up to {MAX_WEIGHT:g} (the weighted sums of the "
            f"models stay finite), got {weights.max():g}; rescale sample_weight"
        )
    keep = weights > 0
    if n_rows and not keep.any():
        raise ValueError("sample_weight is zero for every row: nothing to fit")
    if np.any(weights[keep] < MIN_WEIGHT):
        # Subnormal sums of weights lose their precision: a forest's 1e-310 total gave NaN.
        raise ValueError(
            f"sample_weight must hold values of at least {MIN_WEIGHT:g} where positive (the "
            f"weighted sums keep their precision), got {weights[keep].min():g}; rescale "
            "sample_weight or set such rows to 0"
        )
    return as_core_array(weights[keep]), keep


def weighted_targets(
    X: Any, y: np.ndarray, sample_weight: Any
) -> tuple[Any, np.ndarray, np.ndarray | None, Any]:
    """The rows a weighted regression fits: ``sample_weight`` checked
    (:func:`check_sample_weight`), the rows of zero weight dropped from ``X`` and ``y``, and
    the targets checked (:func:`check_target_scale`, :func:`check_weighted_target_scale`).
    Returns ``(X, y, weights, keep)``: the kept rows, their weights (None when
    ``sample_weight`` is None) and the mask of kept rows (a slice for None)."""
    weights, keep = check_sample_weight(sample_weight, X.shape[0])
    X, y = X[keep], y[keep]
    check_target_scale(y)
    check_weighted_target_scale(y, weights)
    return X, y, weights, keep
