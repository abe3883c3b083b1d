"""What the estimators built on a lifetime path share (the Mondrian kernel's, Balog et al.,
UAI 2016 §4; the forests', Balog's report §4.1): where the path is evaluated, and the share
of the data held out to score it."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn._validation import Integer, Param, Real, RealArray, check_parameter

#: ``lifetimes``: an int k (λ = 0 and every ⌈n_cuts/k⌉-th cut), an array of λ, or None.
LIFETIMES = Param(100, None, Integer(low=1), RealArray(low=0))
#: ``validation_fraction``: the share of ``X`` held out to score the path.
VALIDATION_FRACTION = Param(0.2, Real(low=0, high=1, closed="neither"))


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


def held_out_rows(
    X: np.ndarray, y: np.ndarray, fraction: float, random_state: Any
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`held_out_split` of the distinct rows of ``(X, y)``, taken in lexicographic order:
    rows that repeat one another fall in the same share, so that no row is scored against its
    own copy, and neither the order of the rows nor their repetition moves the split (a row of
    integer weight w splits as the row repeated w times)."""
    distinct, group = np.unique(np.column_stack([X, y]), axis=0, return_inverse=True)
    train, held_out = held_out_split(len(distinct), fraction, random_state)
    group = group.reshape(-1)
    return np.flatnonzero(np.isin(group, train)), np.flatnonzero(np.isin(group, held_out))


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
