"""How a Dask collection is cut into the chunks a :class:`DaskMondrianForest` streams or
predicts at: aligned row blocks of a Dask array (one column block) or the partitions of a
Dask dataframe, as delayed objects in row order."""

from __future__ import annotations

from typing import Any

import numpy as np


def row_blocks(X: Any, y: Any) -> list[tuple[Any, Any]]:
    """The aligned chunks of ``X`` and ``y`` as Dask delayed objects, in row order."""
    if hasattr(X, "to_delayed") and hasattr(X, "columns"):  # a dataframe
        from dask import delayed

        # One frame, so that X's and y's rows come from the same partitions (a column read
        # alone may be cut into partitions of its own).
        frame = X.assign(**{_TARGET: y})
        pieces = frame.to_delayed()
        features = list(X.columns)
        return [
            (delayed(_columns, pure=True)(piece, features), delayed(_column, pure=True)(piece))
            for piece in pieces
        ]
    if not (hasattr(X, "chunks") and hasattr(y, "chunks")):
        raise ValueError("X and y must be Dask arrays, or a Dask dataframe and series")
    if X.ndim != 2 or y.ndim != 1:
        raise ValueError(f"X must be 2-D and y 1-D, got {X.ndim}-D and {y.ndim}-D")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    X = X.rechunk({1: -1})
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk({0: X.chunks[0]})
    return list(zip(X.to_delayed()[:, 0], y.to_delayed()))


def query_blocks(X: Any) -> tuple[list[Any], list[float]]:
    """Chunks of ``X`` to predict at (delayed) and their row counts (NaN when unknown)."""
    import dask.array as da

    if hasattr(X, "to_delayed") and hasattr(X, "columns"):
        blocks = X.to_delayed()
        return blocks, [np.nan] * len(blocks)
    if not hasattr(X, "chunks"):
        X = np.asarray(X)
        X = da.from_array(X, chunks=(max(1, min(len(X), 100_000)), -1))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim}-D")
    X = X.rechunk({1: -1})
    return list(X.to_delayed()[:, 0]), list(X.chunks[0])


def concatenate(outs: list[Any], width: int | None, dtype: Any, local: bool) -> Any:
    import dask.array as da

    shape = (lambda n: (n,)) if width is None else (lambda n: (n, width))
    arrays = [da.from_delayed(value, shape=shape(n), dtype=dtype) for value, n in outs]
    result = da.concatenate(arrays) if arrays else da.empty(shape(0), dtype=dtype)
    return result.compute() if local else result


_TARGET = "__mondrian_learn_target__"


def _columns(piece: Any, features: list[Any]) -> Any:
    return piece[features]


def _column(piece: Any) -> Any:
    return piece[_TARGET].rename(None)
