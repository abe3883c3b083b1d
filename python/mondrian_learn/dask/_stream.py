"""Fitting a Mondrian forest on one machine from data that is read a chunk at a time (a numpy
memory map, parquet row groups, any iterable of chunks): the distributed fit's path with one
part holding every tree (:mod:`mondrian_learn.dask._parts`), so only one chunk of the data is
in memory besides the forest itself."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from mondrian_learn._progress import progress_callback
from mondrian_learn._validation import COUNT, check_parameter
from mondrian_learn.dask._parts import FORESTS, ForestPart, core_seed, fitted_copy
from mondrian_learn.forest import MondrianForestClassifier


def check_forest(estimator: Any) -> None:
    """Raise ``ValueError`` unless ``estimator`` is an unfitted-parameters Mondrian forest."""
    if not isinstance(estimator, FORESTS):
        raise ValueError(
            "estimator must be a MondrianForestRegressor or MondrianForestClassifier, got "
            f"{type(estimator).__name__}"
        )
    estimator._validate_params()


def fit_chunks(estimator: Any, chunks: Iterable[tuple[Any, Any]], classes: Any = None) -> Any:
    """Fit a Mondrian forest on chunks of rows read one at a time.

    The first chunk fits the trees and every later one extends them (the conditional Mondrian
    of Lakshminarayanan, Roy & Teh, NIPS 2014, §3), so the forest has the distribution of a
    batch fit on all rows, and its trees are exactly those of ``estimator.fit(first chunk)``
    followed by ``partial_fit`` on each later chunk. The regressor's hyper-parameters are then
    chosen once on all rows by ``hyperparameters`` (a batch ``fit``'s rule), not on the first
    chunk. Memory: the forest (which stores every training point, float64, in memory or with
    the estimator's ``point_store="disk"`` in a file) plus one chunk.

    Parameters
    ----------
    estimator : MondrianForestRegressor or MondrianForestClassifier
        The forest's parameters (not modified).
    chunks : iterable of (X, y)
        The rows in order, a chunk at a time (:func:`array_chunks`, :func:`parquet_chunks`).
    classes : array-like or None, default=None
        Every class the stream holds; required for a classifier.

    Returns
    -------
    fitted : estimator
        A fitted clone of ``estimator``.
    """
    check_forest(estimator)
    if isinstance(estimator, MondrianForestClassifier) and classes is None:
        raise ValueError("a classifier streamed in chunks needs classes= (every class)")
    part = ForestPart(estimator, 0, estimator.n_estimators, core_seed(estimator.random_state))
    total = len(chunks) if isinstance(chunks, Sequence) else 0
    update, close = progress_callback(total, "chunks", estimator.verbose)
    try:
        for done, (X, y) in enumerate(chunks, start=1):
            part.update(X, y, classes)
            update(done)
    finally:
        close()
    if not hasattr(part.estimator, "model_"):
        raise ValueError("chunks held no rows")
    part.choose_prior()
    return fitted_copy(estimator, part)


class array_chunks(Sequence):  # noqa: N801 (a function-like name for an iterable of chunks)
    """Chunks of ``chunk_rows`` rows of arrays ``X`` and ``y`` — numpy memory maps read
    from disk a chunk at a time (``np.load(path, mmap_mode="r")``), or any arrays.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points, sliced by rows.
    y : array-like of shape (n_samples,)
        Targets.
    chunk_rows : int
        Rows per chunk (the last may be shorter).
    """

    def __init__(self, X: Any, y: Any, chunk_rows: int) -> None:
        check_parameter("chunk_rows", chunk_rows, COUNT)
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        self.X, self.y, self.chunk_rows = X, y, int(chunk_rows)

    def __len__(self) -> int:
        return -(-len(self.X) // self.chunk_rows)

    def __getitem__(self, k: Any) -> Any:
        if not 0 <= k < len(self):
            raise IndexError(k)
        rows = slice(k * self.chunk_rows, (k + 1) * self.chunk_rows)
        return np.ascontiguousarray(self.X[rows]), np.asarray(self.y[rows])


def parquet_chunks(
    path: Any, target: str, features: Sequence[str] | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The row groups of a parquet file as ``(X, y)`` chunks, read one at a time (pyarrow).

    Parameters
    ----------
    path : str or path-like
        The parquet file.
    target : str
        The column of y.
    features : sequence of str or None, default=None
        The columns of X, in order (None: every other column).

    Returns
    -------
    chunks : iterator of (X, y)
        Per row group: ``X`` of shape (n_rows, n_features), float64, and ``y`` of shape
        (n_rows,).

    Raises
    ------
    ValueError
        When ``target`` or ``features`` names a column the file does not hold (checked
        against its schema here, before any row is read).
    """
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    names = file.schema_arrow.names
    columns = [c for c in names if c != target] if features is None else list(features)
    for argument, value, asked in (("target", target, [target]), ("features", features, columns)):
        missing = [c for c in asked if c not in names]
        if missing:
            raise ValueError(
                f"{argument}={value!r} names columns not in the file: {missing} "
                f"(its columns: {names})"
            )
    return _row_groups(file, target, columns)


def _row_groups(file: Any, target: str, columns: list[str]) -> Iterator[tuple[Any, Any]]:
    """The row groups of the opened parquet ``file`` as ``(X, y)``, one at a time (the
    columns checked)."""
    for group in range(file.num_row_groups):
        table = file.read_row_group(group, columns=[*columns, target])
        X = np.empty((table.num_rows, len(columns)))
        for j, name in enumerate(columns):
            X[:, j] = table.column(name).to_numpy()
        yield X, table.column(target).to_numpy()
