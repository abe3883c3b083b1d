"""What the partition-kernel estimators on Dask arrays share: their parameters (the
in-memory estimators' and ``subsample``), the kernel sampled on a subsample with its labels
of every row block kept on the workers, and reading new points a row block at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._base import EstimatorBase, store_parameters
from mondrian_learn._progress import StageTimer
from mondrian_learn._validation import COUNT, Param, draw_seed
from mondrian_learn.dask._operator import ClusterOperator
from mondrian_learn.dask._partition import DistributedPartitionKernel, share
from mondrian_learn.partition import RandomPartitionKernel

#: Rows the sampler is fitted on by default (``subsample``): measured in the project's
#: benchmarks against the sampler fitted on every row.
SUBSAMPLE = 100_000

#: The parameters every estimator here adds to the in-memory one's.
DISTRIBUTED = {"subsample": Param(SUBSAMPLE, None, *COUNT)}


def distributed_parameters(
    parameters: dict[str, Param], without: tuple[str, ...] = ()
) -> dict[str, Param]:
    """An in-memory estimator's table for its twin on Dask: :data:`DISTRIBUTED` after
    ``n_partitions``, less the parameters ``without`` that the distributed solvers lack."""
    table: dict[str, Param] = {}
    for name, param in parameters.items():
        if name not in without:
            table[name] = param
        if name == "n_partitions":
            table.update(DISTRIBUTED)
    return table


def as_rows(X: Any, name: str = "X") -> Any:
    """``X`` as a 2-D float64 Dask array with one chunk across its columns (a NumPy array
    becomes one chunk of rows per 100,000)."""
    import dask.array as da

    if not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X), chunks=(100_000, -1))
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {X.shape}")
    return X.astype(np.float64).rechunk({1: -1})


def as_targets(y: Any, X: Any) -> Any:
    """``y`` as a 1-D float64 Dask array chunked like the rows of ``X``."""
    import dask.array as da

    y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y, dtype=np.float64))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    return y.astype(np.float64).rechunk((X.chunks[0],))


class DistributedPartitionEstimator(EstimatorBase):
    """What the Dask estimators share: the kernel sampled on a subsample (``subsample``
    rows drawn at random; None: every row, gathered on the client) and its labels of every
    row block kept on the workers (``kernel_`` and the private distributed kernel).

    Parameters
    ----------
    sampler, n_partitions, scale_features, random_state, n_jobs, verbose
        As for :class:`~mondrian_learn.partition.RandomPartitionKernel` (``n_jobs``: threads
        of each block's call into the core on a worker).
    subsample : int or None, default=100000
        Rows the sampler is fitted on (all of them when fewer): its partitions of those rows
        are extended to every row by their cuts (see :mod:`mondrian_learn.dask._partition`).
        A sampler whose cells are sized in rows (a Random Forest's ``min_samples_leaf``, or
        its default fully grown trees) makes coarser cells on fewer rows: scale its leaf
        size with the subsample (our benchmarks measure the accuracy each sampler loses).
    """

    _parameters = distributed_parameters(RandomPartitionKernel._parameters)

    def __init__(
        self,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        *,
        n_partitions: int = 100,
        subsample: int | None = SUBSAMPLE,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    def _distribute(self, X: Any, y: Any = None) -> tuple[np.random.RandomState, Any, StageTimer]:
        """Sample ``kernel_`` and label every row block; returns the estimator's random state
        (to draw what comes next), ``y`` as a Dask array (None without) and the fit's stage
        timer."""
        self._validate_params()
        stages = StageTimer(self.verbose, type(self).__name__)
        X = as_rows(X)
        y = None if y is None else as_targets(y, X)
        n = int(X.shape[0])
        rng = check_random_state(self.random_state)
        # The kernel's seed as the in-memory estimators draw it: with subsample=None both
        # sample the same partitions.
        seed = draw_seed(rng, 2**32 - 1)
        if self.subsample is None or int(self.subsample) >= n:
            rows, targets = X.compute(), None if y is None else y.compute()
        else:
            pick = np.sort(
                np.random.default_rng(draw_seed(rng)).choice(n, int(self.subsample), replace=False)
            )
            rows, targets = X[pick].compute(), None if y is None else y[pick].compute()
        if not np.isfinite(rows).all():
            raise ValueError("X contains NaN or infinity")
        self.kernel_ = RandomPartitionKernel(
            self.sampler,
            n_partitions=self.n_partitions,
            scale_features=self.scale_features,
            random_state=seed,
            n_jobs=self.n_jobs,
        ).fit(rows, targets)
        self.n_features_in_ = int(X.shape[1])
        self.n_subsample_ = int(rows.shape[0])
        self._distributed_kernel = DistributedPartitionKernel(
            self.kernel_, X, self._threads(), self.verbose
        )
        return rng, y, stages

    def _operator(self) -> ClusterOperator:
        """The training rows' kernel as the shared solvers' operator."""
        return ClusterOperator(self._rows(), self._threads())

    def _rows(self) -> DistributedPartitionKernel:
        """The training rows' labels on the workers (not pickled: a Dask cluster's data)."""
        check_is_fitted(self)
        rows = self.__dict__.get("_distributed_kernel")
        if rows is None:
            raise ValueError(
                "this estimator was restored from a pickle: the training rows' labels on the "
                "Dask workers are gone; fit it again"
            )
        return rows

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_distributed_kernel", None)
        return state

    def _checked(self, X: Any) -> np.ndarray:
        """New points gathered here as a float64 ndarray, checked."""
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n_samples, {self.n_features_in_}), got {X.shape}")
        return X

    def _per_row_block(self, X: Any, f: Any, *args: Any, width: int) -> Any:
        """``f(kernel, rows, *args)`` (``n × width``) on every row block of a Dask ``X``, as a
        Dask array; on an ndarray, computed here."""
        import dask
        import dask.array as da

        check_is_fitted(self)
        if not isinstance(X, da.Array):
            return f(self.kernel_, self._checked(X), *args)
        X = as_rows(X)
        kernel, shared = share(self.kernel_), [share(a) for a in args]
        blocks = [b for row in X.to_delayed() for b in row]
        return da.concatenate(
            [
                da.from_delayed(
                    dask.delayed(f, pure=True)(kernel, b, *shared),
                    shape=(n, width),
                    dtype=np.float64,
                )
                for b, n in zip(blocks, X.chunks[0])
            ]
        )


def _assignment(kernel: RandomPartitionKernel, rows: np.ndarray) -> tuple[Any, None]:
    """Labels of new points, placed by the rules' cuts as the training rows are (the
    conditional Mondrian's weights are not used on Dask, see the module notes of
    :mod:`mondrian_learn.dask._partition`); a point in no cluster (a callable rule's unseen
    label) is alone there (``FRESH``)."""
    return np.ascontiguousarray(kernel.assign(rows)[0]), None


def assignment(kernel: RandomPartitionKernel, rows: np.ndarray) -> tuple[Any, None]:
    """Labels of new points, placed by the rules' cuts as the training rows are (the
    conditional Mondrian's weights are not used on Dask, see the module notes of
    :mod:`mondrian_learn.dask._partition`); a point in no cluster (a callable rule's unseen
    label) is alone there (``FRESH``)."""
    return np.ascontiguousarray(kernel.assign(rows)[0]), None
