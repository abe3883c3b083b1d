"""What the estimators built on a lifetime path share (the Mondrian kernel's, Balog et al.,
UAI 2016 §4; the forests', Balog's report §4.1): where the path is evaluated, the share
of the data held out to score it, and how the splits' scores choose a point of the path."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils import check_random_state

from mondrian_learn._validation import (
    Integer,
    IsSplitter,
    Param,
    Real,
    RealArray,
    check_parameter,
    draw_seed,
)

#: ``lifetimes``: an int k (λ = 0 and every ⌈n_cuts/k⌉-th cut), an array of λ, or None.
LIFETIMES = Param(100, None, Integer(low=1), RealArray(low=0))
#: ``validation_fraction``: the share of ``X`` held out to score the path.
VALIDATION_FRACTION = Param(0.2, Real(low=0, high=1, closed="neither"))
#: ``cv``: None (one hold-out of ``validation_fraction``), k ≥ 2 folds, or a scikit-learn
#: splitter (an object with ``split``, or an iterable of (train, validation) index pairs).
CV = Param(None, None, Integer(low=2), IsSplitter())


def checkpoint_arguments(
    lifetimes: Any, max_lifetime: float
) -> tuple[int | None, list[float] | None]:
    """The core's ``(n_checkpoints, lifetimes)`` for a ``lifetimes`` parameter, checked against
    the end of the path ``max_lifetime``."""
    check_parameter("lifetimes", lifetimes, LIFETIMES.constraints)
    if lifetimes is None:
        return None, None
    if Integer(low=1).is_satisfied_by(lifetimes):
        return int(lifetimes), None
    grid = np.asarray(lifetimes, dtype=np.float64).ravel()
    if grid.max() > max_lifetime:
        raise ValueError(
            f"lifetimes must not exceed max_lifetime ({max_lifetime}), got {grid.max()}"
        )
    return None, [float(v) for v in grid]


def pooled_scores(split_scores: Any, split_weights: Any) -> Any:
    """The validation scores of several splits (the first axis) averaged with weights
    ``split_weights``, each split's validation weight: the score of all their validation rows
    pooled. One split's are its own scores, bit for bit (a weighted mean of one may round).

    The terms are added split after split, so that a checkpoint's pooled score has the same
    bits whether its splits' scores come alone (the grid search pools one state at a time)
    or as a column of a table (``cv_results_``), whatever the table's width: ``np.average``
    adds a lone column's terms in another order (for a table of two or more columns its sum
    is this one exactly).
    """
    if len(split_scores) == 1:
        return split_scores[0]
    scores = np.asarray(split_scores, dtype=np.float64)
    weights = np.asarray(split_weights, dtype=np.float64)
    total = scores[0] * weights[0]
    for score, weight in zip(scores[1:], weights[1:]):
        total = total + score * weight
    return total / weights.sum()


def split_results(split_scores: Any, split_weights: Any) -> dict[str, np.ndarray]:
    """The per-split record of a cross-validated path (``cv_results_``): ``split_scores``
    (the splits first), ``split_weights`` (each split's validation weight) and
    ``mean_score``, their :func:`pooled_scores`."""
    scores = np.asarray(split_scores, dtype=np.float64)
    weights = np.asarray(split_weights, dtype=np.float64)
    return {
        "split_scores": scores,
        "split_weights": weights,
        "mean_score": pooled_scores(scores, weights),
    }


def keep_cv_results(estimator: Any, results: dict[str, np.ndarray] | None) -> None:
    """Set ``estimator.cv_results_`` to ``results``, or, for a fit that scored no splits
    (None), remove it: no record of a former fit is left behind."""
    if results is None:
        estimator.__dict__.pop("cv_results_", None)
    else:
        estimator.cv_results_ = results


def best_index(scores: Any, *, larger_is_better: bool = False) -> int:
    """The index of the best of ``scores`` (flat, for an array of several axes); ties go to
    the first, the smallest λ of a path."""
    return int(np.argmax(scores) if larger_is_better else np.argmin(scores))


def distinct_rows(X: Any, y: np.ndarray) -> np.ndarray:
    """The index of each row of ``(X, y)`` among the distinct rows, numbered in lexicographic
    order (``np.unique(..., axis=0, return_inverse=True)``); for a sparse ``X`` the same
    numbers, computed from its stored entries without a dense copy."""
    if not scipy.sparse.issparse(X):
        _, group = np.unique(np.column_stack([X, y]), axis=0, return_inverse=True)
        return group.reshape(-1)
    rows = scipy.sparse.hstack(
        [scipy.sparse.csr_matrix(X), scipy.sparse.csr_matrix(np.reshape(y, (-1, 1)))],
        format="csr",
        dtype=np.float64,
    )
    rows.sum_duplicates()
    rows.eliminate_zeros()  # also −0.0, equal to 0 as in the dense comparison
    rows.sort_indices()
    return _lexicographic_groups(rows.indptr, rows.indices, rows.data)


def _lexicographic_groups(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> np.ndarray:
    """:func:`distinct_rows` of a canonical CSR matrix (sorted indices, no zeros stored).

    Two dense rows first differ in the first column where their lists of stored entries
    (column j, value v) differ, so rows compare as those lists do under this order of
    entries: a negative entry is below an absent one (a 0) and a positive one above, so
    (j, v < 0) sorts as (0, j, v), (j, v > 0) as (1, −j, v), and a list's end as (½,) —
    above every negative entry still to come in the other row, below every positive one.
    The rows are sorted one entry at a time, refining the groups of equal prefixes, and only
    the groups still holding more than one row and not yet at their end are sorted again.
    """
    n = indptr.size - 1
    length = np.diff(indptr)
    start = np.zeros(n, dtype=np.int64)  # rank of each row's group: where it begins in order
    for position in range(int(length.max(initial=0)) + 1):
        size = np.bincount(start, minlength=n)[start]
        rows = np.flatnonzero((size > 1) & (length >= position))
        if rows.size == 0:
            break
        stored = length[rows] > position
        at = indptr[rows] + np.where(stored, position, 0)
        value = np.where(stored, data[np.minimum(at, max(data.size - 1, 0))], 0.0)
        column = np.where(stored, indices[np.minimum(at, max(indices.size - 1, 0))], 0)
        kind = np.where(stored, np.where(value > 0, 1.0, 0.0), 0.5)
        key = np.where(value > 0, -column, column)
        order = np.lexsort((value, key, kind, start[rows]))
        rows, group = rows[order], start[rows][order]
        kind, key, value = kind[order], key[order], value[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (
            (group[1:] != group[:-1])
            | (kind[1:] != kind[:-1])
            | (key[1:] != key[:-1])
            | (value[1:] != value[:-1])
        )
        # A row's new rank: its old group's start plus how many rows of that group sort
        # before its new group.
        first_of_old = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        old_index = np.cumsum(np.r_[True, group[1:] != group[:-1]]) - 1
        first_of_new = np.maximum.accumulate(np.where(new, np.arange(rows.size), 0))
        start[rows] = group + (first_of_new - first_of_old[old_index])
    _, group = np.unique(start, return_inverse=True)
    return group.reshape(-1)


def held_out_split(n: int, fraction: float, random_state: Any) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of the training and the held-out rows among ``n``: ``fraction`` of them
    (at least one of each) held out, drawn by ``random_state``."""
    if n < 2:
        raise ValueError(
            "selection by validation holds out part of X, which needs at least 2 samples, "
            f"got n_samples={n}"
        )
    n_val = min(n - 1, max(1, int(round(fraction * n))))
    order = check_random_state(random_state).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def validation_splits(
    cv: Any,
    X: Any,
    y: np.ndarray,
    fraction: float,
    random_state: Any,
    *,
    classifier: bool = False,
    distinct: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (training, validation) row indices a lifetime path is scored on, for the ``cv``
    parameter (:data:`CV`).

    ``None``: one split holding out ``fraction`` of the rows. An int k: k folds, shuffled by
    ``random_state`` (stratified by label when ``classifier``). With ``distinct``, both take
    the distinct rows of ``(X, y)`` as the units to split, taken in lexicographic order
    (:func:`distinct_rows`): rows that repeat one another fall in the same share, so that no
    row is scored against its own copy, and neither the order of the rows nor their
    repetition moves the split (a row of integer weight w splits as its w copies). A splitter or an
    iterable of index pairs is used as given (scikit-learn's ``check_cv``).
    """
    n = int(y.shape[0])
    if cv is not None and not isinstance(cv, numbers.Integral):
        splits = [
            (np.asarray(train, dtype=np.intp), np.asarray(held_out, dtype=np.intp))
            for train, held_out in check_cv(cv, y, classifier=classifier).split(X, y)
        ]
        if not splits:
            raise ValueError(
                "cv gave no splits (an iterator is used up by one fit: pass a list or a splitter)"
            )
        for train, held_out in splits:
            if train.size == 0 or held_out.size == 0:
                raise ValueError("cv gave a split with no training or no validation rows")
        return splits
    if distinct:
        group = distinct_rows(X, y)
        unit_y = np.empty(group.max() + 1 if n else 0, dtype=np.asarray(y).dtype)
        unit_y[group] = y
    else:
        group, unit_y = np.arange(n), y
    n_units = group.max() + 1 if n else 0
    if cv is None:
        train, held_out = held_out_split(n_units, fraction, random_state)
        unit_splits = [(train, held_out)]
    else:
        if int(cv) > n_units:
            raise ValueError(
                f"cv={int(cv)} folds need at least as many distinct samples, got {n_units}"
            )
        folds = StratifiedKFold if classifier else KFold
        seed = draw_seed(random_state, np.iinfo(np.int32).max)
        splitter = folds(int(cv), shuffle=True, random_state=seed)
        unit_splits = list(splitter.split(np.zeros((n_units, 1)), unit_y))
    if not distinct:
        return [(np.sort(t), np.sort(v)) for t, v in unit_splits]
    return [
        (np.flatnonzero(np.isin(group, t)), np.flatnonzero(np.isin(group, v)))
        for t, v in unit_splits
    ]


def kept_row_splits(
    cv: Any, X: Any, y: np.ndarray, keep: Any, *, classifier: bool = False
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The splits of a splitter or iterable ``cv``, which index the rows of ``X`` as given,
    among the rows ``keep`` keeps (a mask; a slice keeps all): the others (rows of zero
    ``sample_weight``) left out, and the kept ones renumbered as after the others are dropped.
    """
    splits = validation_splits(cv, X, y, 0.0, None, classifier=classifier)
    if isinstance(keep, slice):
        return splits
    position = np.cumsum(keep) - 1
    splits = [(position[t[keep[t]]], position[v[keep[v]]]) for t, v in splits]
    if any(t.size == 0 or v.size == 0 for t, v in splits):
        raise ValueError(
            "cv gave a split with no training or no validation rows of positive sample_weight"
        )
    return splits
