"""The one place that turns user arrays into what the core takes: C-ordered aligned dense
arrays and the parts of a canonical CSR matrix (each optionally with the map to the unit box
the core reads them through); and a sparse matrix made dense, a block of rows at a time, for
the numpy code that reads points."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse

from mondrian_learn._memory import check_memory


def as_core_array(X: Any, dtype: Any = np.float64) -> np.ndarray:
    """``X`` as the core takes arrays: C-contiguous, aligned, ``dtype`` (float64 by default;
    a tuple of dtypes keeps X's when it is one of them, else converts to the first); no copy
    when it already is one. Any array numpy can make is accepted (Fortran order, strided
    views, other dtypes, unaligned buffers)."""
    if isinstance(dtype, tuple):
        dtype = X.dtype if getattr(X, "dtype", None) in dtype else dtype[0]
    array = np.ascontiguousarray(X, dtype=dtype)
    return array if array.flags.aligned else array.copy()


#: How the core takes a sparse matrix: the parts of a canonical CSR matrix, its width, and the
#: optional map ``(offset, scale)`` its rows are read through.
SparsePoints = tuple[np.ndarray, np.ndarray, np.ndarray, int, Any]
#: Any matrix of points the core reads: dense, sparse, or dense with its map ``(x, (offset,
#: scale))``.
CorePoints = np.ndarray | SparsePoints | tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]


def as_core_points(
    X: Any, dtype: Any = np.float64, unit_box: tuple[np.ndarray, np.ndarray] | None = None
) -> CorePoints:
    """``X`` as the core reads points: a dense array as :func:`as_core_array` makes it, or a
    scipy sparse matrix as the parts of a canonical CSR matrix (float64 values, int32 column
    indices sorted within each row, int64 row pointers), which the core reads a row block at
    a time — the matrix is never densified whole. ``unit_box``: the map ``(offset, scale)``
    the rows are read through (by the core, as it reads them: no mapped copy, which would make
    a sparse matrix dense and a float32 one float64).

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        Checked points.
    dtype : dtype or tuple of dtypes, default=np.float64
        For dense ``X``, as in :func:`as_core_array`.
    unit_box : tuple of two ndarrays or None, default=None
        The map to read the rows through.

    Returns
    -------
    points : ndarray or tuple
        What the core's ``x`` arguments take.
    """
    if not scipy.sparse.issparse(X):
        dense = as_core_array(X, dtype=dtype)
        if unit_box is None:
            return dense
        return dense, (as_core_array(unit_box[0]), as_core_array(unit_box[1]))
    X = scipy.sparse.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.shape[1] > np.iinfo(np.int32).max:
        raise ValueError(f"sparse X has {X.shape[1]} columns, beyond the 32-bit column indices")
    return (
        as_core_array(X.data),
        as_core_array(X.indices, dtype=np.int32),
        as_core_array(X.indptr, dtype=np.int64),
        int(X.shape[1]),
        None if unit_box is None else tuple(as_core_array(v) for v in unit_box),
    )


#: Bytes of one dense block of rows when a sparse matrix is made dense (a few MiB: the blocks'
#: cost stays small next to any model's).
DENSE_BLOCK_BYTES = 8 * 2**20


def dense_row_blocks(X: Any, max_bytes: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
    """The rows of a checked scipy sparse matrix ``X`` as C-ordered float64 arrays, a block of
    at most ``max_bytes`` (one row at least) at a time, each with the slice of its rows.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Checked points (duplicates are summed, as in :func:`as_core_points`).
    max_bytes : int or None, default=None
        Most bytes of one dense block (None: ``DENSE_BLOCK_BYTES``).

    Yields
    ------
    rows : slice
        The block's rows in ``X``.
    block : ndarray of shape (rows, n_features)
        Their values.
    """
    X = scipy.sparse.csr_matrix(X)
    budget = DENSE_BLOCK_BYTES if max_bytes is None else max_bytes
    step = max(1, budget // (8 * max(X.shape[1], 1)))
    for start in range(0, X.shape[0], step):
        rows = slice(start, min(start + step, X.shape[0]))
        yield rows, as_core_array(X[rows].toarray())


def check_dense_memory(X: Any) -> None:
    """Refuse by name (``MemoryError``) a matrix ``X`` whose rows would not fit in the
    machine's memory dense, as float64, before anything is allocated.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Checked points.
    """
    n, d = X.shape
    check_memory("X", f"{n} × {d}", 8.0 * n * d, "its rows dense, float64")


def dense_points(X: Any, map_rows: Callable[[np.ndarray], Any] | None = None) -> np.ndarray:
    """A checked scipy sparse matrix ``X`` as one dense C-ordered float64 array, written a
    block of rows at a time through ``map_rows`` (e.g. the map to the unit box), for the numpy
    code that reads every row: no dense copy besides the result, which is refused by name
    (:func:`check_dense_memory`) before it is allocated.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Checked points.
    map_rows : callable or None, default=None
        Applied to each dense block (rows map independently); None: the values as they are.

    Returns
    -------
    points : ndarray of shape (n_samples, n_features)
        The (mapped) values.
    """
    check_dense_memory(X)
    points = np.empty(X.shape)
    for rows, block in dense_row_blocks(X):
        points[rows] = block if map_rows is None else map_rows(block)
    return points


def is_core_ready(
    X: object, y: object, n_features: int, dtypes: tuple[type, ...] = (np.float64,)
) -> bool:
    """True when ``X`` (and ``y``, unless None) are already what the core takes: non-empty
    C-ordered arrays (n × n_features of one of ``dtypes``, and n float64) of plain ndarray
    type. Finiteness is left to the core."""
    return (
        type(X) is np.ndarray
        and X.dtype in dtypes
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.flags.aligned
        and X.shape[0] > 0
        and X.shape[1] == n_features
        and (
            y is None
            or (
                type(y) is np.ndarray
                and y.dtype == np.float64
                and y.ndim == 1
                and X.shape[0] == y.shape[0]
            )
        )
    )
