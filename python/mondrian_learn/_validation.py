"""Input checks shared by the estimators: one place turns user input into what the core takes."""

from __future__ import annotations

import numbers
import os

import numpy as np
from sklearn.utils import check_random_state

_MAX_SEED = np.iinfo(np.int64).max


def as_core_array(X: np.ndarray) -> np.ndarray:
    """C-contiguous float64 view or copy of an already validated array (the core's layout)."""
    return np.ascontiguousarray(X, dtype=np.float64)


def is_core_ready(X: object, y: object, n_features: int) -> bool:
    """True when ``X`` and ``y`` are already what the core takes: non-empty C-ordered float64
    arrays (n × n_features and n) of plain ndarray type. Finiteness is left to the core."""
    return (
        type(X) is np.ndarray
        and type(y) is np.ndarray
        and X.dtype == np.float64
        and y.dtype == np.float64
        and X.ndim == 2
        and y.ndim == 1
        and X.flags.c_contiguous
        and X.shape[0] == y.shape[0] > 0
        and X.shape[1] == n_features
    )


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Number of threads for ``n_jobs`` with scikit-learn's meaning (None → 1, −1 → all cores).

    Raises
    ------
    ValueError
        If ``n_jobs`` is 0 or not an integer.
    """
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs > 0:
        return int(n_jobs)
    # os.cpu_count() reads /sys on every call: only when a negative n_jobs needs it.
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


def draw_seed(random_state: int | np.random.RandomState | None) -> int:
    """A 63-bit seed for the core drawn once from ``random_state``."""
    return int(check_random_state(random_state).randint(0, _MAX_SEED, dtype=np.int64))
