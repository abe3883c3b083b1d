"""A Mondrian forest grown on a Dask cluster from a Dask array or dataframe: the trees are cut
into parts (:mod:`mondrian_learn.dask._parts`), each part lives on one worker, every chunk of
the data streams through every part in order, and predictions fold the parts' trees into
running sums chunk by chunk (lazily, as Dask arrays)."""

from __future__ import annotations

import time
import uuid
from collections import deque
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._progress import progress_callback
from mondrian_learn._validation import COUNT, Integer, Param, check_parameter
from mondrian_learn.dask._parts import ForestPart, core_seed, tree_ranges
from mondrian_learn.dask._stream import check_forest
from mondrian_learn.forest import MondrianForestClassifier, MondrianForestRegressor

_PARAMETERS = {"n_parts": Param(None, None, *COUNT), "max_pending_chunks": Param(2, Integer(low=1))}


class DaskMondrianForest(BaseEstimator):
    """A Mondrian forest fitted on a Dask cluster, its trees spread over the workers.

    ``fit`` takes a Dask array or dataframe too large for one machine and streams its chunks
    through the trees where the trees live: the forest's ``n_estimators`` trees are cut into
    ``n_parts`` contiguous ranges, one per worker, and every worker reads every chunk (from
    the worker that read or computed it, never through the client) and extends its trees by
    the conditional Mondrian (Lakshminarayanan, Roy & Teh, NIPS 2014, §3). A forest extended
    chunk by chunk has the distribution of a batch fit, and tree m draws only from the stream
    ``(random_state, m)``, so the result is exactly — tree for tree, prediction for prediction
    — the forest that :func:`~mondrian_learn.dask.fit_chunks` grows on one machine from the
    same chunks, whose trees are those of ``fit`` on the first chunk followed by
    ``partial_fit`` on each later one.

    The regressor's hyper-parameters (γ₁, γ₂, σ_y²) are chosen once after the last chunk on
    all rows, by ``hyperparameters`` scored on the first 4 trees (which part 0 holds), as a
    batch ``fit`` chooses them, and fixed in every part. ``noise_variance="within_leaf"``
    pools over all trees and is refused with several parts. The input map to the unit box
    (``scale_features``) is fixed by the first chunk, as for ``partial_fit``.

    The trees, and the training points they store for later extension, stay on the workers
    (``parts_``: one Dask future per part); the client holds only their addresses.
    ``predict``, ``predict(return_std=True)``, ``predict_proba`` and ``apply`` return Dask
    arrays computed a chunk at a time: the chunk visits the parts in tree order, each adding
    its trees to running sums (the regressor's mixture moments about the prior mean, the
    classifier's class probabilities — 2 or K floats per row), and the sums are finished once
    with the whole forest's tree count: the same floating-point operations in the same order
    as the single forest's prediction. NumPy inputs give NumPy outputs.

    Parameters
    ----------
    estimator : MondrianForestRegressor or MondrianForestClassifier
        The forest to grow (its parameters; ``n_jobs`` is the threads each part uses on its
        worker, ``verbose`` prints one line per chunk on the client).
    n_parts : int or None, default=None
        Parts the trees are cut into (None: one per worker at ``fit``); part p lives on
        worker p modulo the number of workers.
    max_pending_chunks : int, default=2
        Chunks in flight at once: the client waits for every part to finish chunk k before
        it submits chunk k + max_pending_chunks, which bounds the chunks held in the workers'
        memory.

    Attributes
    ----------
    parts_ : list of distributed.Future
        Each part's trees on its worker.
    tree_ranges_ : list of (int, int)
        The trees ``[first, stop)`` of each part.
    n_rows_ : int
        Training rows seen.
    n_features_in_ : int
        Number of features.
    classes_ : ndarray of shape (n_classes,)
        The classes (classifiers).
    prior_ : dict
        The regressor's hyper-parameters in use.

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client
    >>> from mondrian_learn import MondrianForestRegressor
    >>> from mondrian_learn.dask import DaskMondrianForest
    >>> with Client(processes=False, n_workers=2, dashboard_address=":0") as client:
    ...     X = da.random.default_rng(0).uniform(size=(2000, 3), chunks=(500, 3))
    ...     y = X.sum(axis=1)
    ...     est = MondrianForestRegressor(n_estimators=4, random_state=0)
    ...     forest = DaskMondrianForest(est).fit(X, y)
    ...     forest.predict(X[:5]).compute().shape
    (5,)
    """

    def __init__(
        self, estimator: Any = None, n_parts: int | None = None, max_pending_chunks: int = 2
    ) -> None:
        self.estimator = estimator
        self.n_parts = n_parts
        self.max_pending_chunks = max_pending_chunks

    def fit(self, X: Any, y: Any, classes: Any = None) -> DaskMondrianForest:
        """Grow the forest on the cluster of the current Dask client (module notes).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
            Points, streamed a chunk (a row block or partition) at a time, in order.
        y : dask.array.Array of shape (n_samples,) or dask.dataframe.Series
            Targets, in chunks aligned with ``X``'s.
        classes : array-like or None, default=None
            Classifiers: every class (None: found by one pass over ``y``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        from distributed import get_client

        for name, param in _PARAMETERS.items():
            check_parameter(name, getattr(self, name), param.constraints)
        estimator = self.estimator
        check_forest(estimator)
        client = get_client()
        workers = sorted(client.scheduler_info()["workers"])
        ranges = tree_ranges(estimator.n_estimators, self.n_parts or len(workers))
        regressor = isinstance(estimator, MondrianForestRegressor)
        if regressor and len(ranges) > 1 and estimator.noise_variance == "within_leaf":
            raise ValueError(
                "noise_variance='within_leaf' pools over all trees, which live on several "
                "workers: fix it, or use n_parts=1"
            )
        if isinstance(estimator, MondrianForestClassifier) and classes is None:
            import dask.array as da

            classes = (y.unique() if hasattr(y, "unique") else da.unique(y)).compute()
        if isinstance(estimator, MondrianForestClassifier):
            classes = np.unique(np.asarray(classes))
        blocks = row_blocks(X, y)
        if not blocks:
            raise ValueError("X has no rows")
        places = [workers[p % len(workers)] for p in range(len(ranges))]
        token = uuid.uuid4().hex[:8]
        seed = core_seed(estimator.random_state)
        start = time.perf_counter()

        def submit(function: Any, *args: Any, key: str, place: str) -> Any:
            # Loose restrictions: a part whose worker died is grown again from its lineage
            # on another worker (a retried task) instead of waiting for a worker that is gone.
            return client.submit(
                function, *args, key=key, workers=[place], allow_other_workers=True, pure=False
            )

        parts = [
            submit(ForestPart, estimator, a, b, seed, key=f"mondrian-part-{p}-{token}", place=w)
            for p, ((a, b), w) in enumerate(zip(ranges, places))
        ]
        window: deque[list[Any]] = deque()
        update, close = progress_callback(len(blocks), "chunks", estimator.verbose)

        watch = _Watch(client, places, ranges)

        def settle_oldest() -> None:
            watch.settle(window.popleft())
            update(k + 1 - len(window))

        k = 0
        try:
            for k, (x_block, y_block) in enumerate(blocks):
                x_chunk, y_chunk = watch.track(client.compute([x_block, y_block]))
                parts = [
                    submit(
                        _update, part, x_chunk, y_chunk, classes,
                        key=f"mondrian-update-{p}-{k}-{token}", place=w,
                    )
                    for p, (part, w) in enumerate(zip(parts, places))
                ]  # fmt: skip
                window.append(watch.track(parts))
                while len(window) > self.max_pending_chunks:
                    settle_oldest()
            while window:
                settle_oldest()
        except BaseException:
            watch.cancel()
            raise
        finally:
            close()
        chosen = watch.settle([client.submit(_choose_prior, parts[0], pure=False)])
        prior = chosen[0].result()
        if prior is not None:
            parts[1:] = [
                submit(_fix_prior, part, prior, key=f"mondrian-prior-{p}-{token}", place=w)
                for p, (part, w) in enumerate(zip(parts[1:], places[1:]), start=1)
            ]
        described = watch.settle([client.submit(_summary, part, pure=False) for part in parts])
        summaries = client.gather(described)
        self._check_complete(summaries, ranges)
        self.parts_, self.tree_ranges_ = parts, ranges
        self.n_rows_ = summaries[0]["n_rows"]
        self.n_features_in_ = summaries[0]["n_features_in_"]
        if "feature_names_in_" in summaries[0]:
            self.feature_names_in_ = summaries[0]["feature_names_in_"]
        if regressor:
            self.prior_ = summaries[0]["prior"]
        else:
            self.classes_ = classes
        if estimator.verbose:
            print(
                f"DaskMondrianForest: {self.n_rows_} rows, {len(blocks)} chunks, "
                f"{len(parts)} parts in {time.perf_counter() - start:.2f} s",
                flush=True,
            )
        return self

    def _check_complete(self, summaries: list[dict[str, Any]], ranges: list[Any]) -> None:
        """Raise ``RuntimeError`` unless every part holds its trees, grown on the same rows
        under the same prior: a forest is never silently smaller than asked for."""
        for summary, (a, b) in zip(summaries, ranges):
            same = summary["n_rows"] == summaries[0]["n_rows"]
            same = same and summary.get("prior") == summaries[0].get("prior")
            if (summary["first"], summary["stop"], summary["n_trees"]) != (a, b, b - a) or not same:
                raise RuntimeError(
                    f"the part of trees [{a}, {b}) came back with {summary['n_trees']} trees on "
                    f"{summary['n_rows']} rows (part 0: {summaries[0]['n_rows']} rows): the fit "
                    "is incomplete; fit again"
                )

    def _folded(self, X: Any, width: int, finish: Any, out_width: int | None, dtype: Any) -> Any:
        """A Dask array of ``finish(sums)`` per chunk of ``X``, the sums (``width`` per row)
        folded through the parts in tree order."""
        check_is_fitted(self)
        from dask import delayed

        local = isinstance(X, np.ndarray) or not hasattr(X, "__dask_graph__")
        blocks, lengths = query_blocks(X)
        outs = []
        for block, n in zip(blocks, lengths):
            sums = delayed(_zeros, pure=True)(block, width)
            for part in self.parts_:
                sums = delayed(_fold, pure=True)(part, block, sums)
            outs.append((delayed(finish, pure=True)(sums), n))
        return _concatenate(outs, out_width, dtype, local)

    def predict(self, X: Any, return_std: bool = False) -> Any:
        """Regressors: mean (and standard deviation) of the forest's predictive mixture
        (AISTATS 2016, eq. 4–5); classifiers: the most probable class.

        Parameters
        ----------
        X : dask.array.Array, dask.dataframe.DataFrame or array-like
            Points (n_samples × n_features).
        return_std : bool, default=False
            Regressors: also return the predictive standard deviation.

        Returns
        -------
        mean : dask.array.Array of shape (n_samples,)
            Means (class labels for classifiers); an ndarray for an ndarray input.
        std : dask.array.Array of shape (n_samples,)
            Only when ``return_std`` is True.
        """
        check_is_fitted(self)
        if hasattr(self, "classes_"):
            if return_std:
                raise ValueError("return_std is for regressors")
            labels = self.classes_
            m = self._n_trees()
            return self._folded(X, len(labels), _Labels(labels, m), None, labels.dtype)
        moments = self._folded(X, 2, _Moments(self.prior_["mean"], self._n_trees()), 2, float)
        mean, std = moments[:, 0], moments[:, 1]
        return (mean, std) if return_std else mean

    def predict_proba(self, X: Any) -> Any:
        """Classifiers: class probabilities, the average over trees of each tree's
        branch-off mixture (NIPS 2014, §4); columns in the order of ``classes_``.

        Parameters
        ----------
        X : dask.array.Array, dask.dataframe.DataFrame or array-like
            Points (n_samples × n_features).

        Returns
        -------
        proba : dask.array.Array of shape (n_samples, n_classes)
            An ndarray for an ndarray input.
        """
        check_is_fitted(self, "classes_")
        k = len(self.classes_)
        return self._folded(X, k, _Average(self._n_trees()), k, float)

    def apply(self, X: Any) -> Any:
        """Leaf id of every point in every tree.

        Parameters
        ----------
        X : dask.array.Array, dask.dataframe.DataFrame or array-like
            Points (n_samples × n_features).

        Returns
        -------
        leaves : dask.array.Array of shape (n_samples, n_estimators), dtype intp
            Node ids, tree by tree; an ndarray for an ndarray input.
        """
        check_is_fitted(self)
        from dask import delayed

        local = isinstance(X, np.ndarray) or not hasattr(X, "__dask_graph__")
        blocks, lengths = query_blocks(X)
        outs = []
        for block, n in zip(blocks, lengths):
            columns = [delayed(_apply, pure=True)(part, block) for part in self.parts_]
            outs.append((delayed(np.hstack, pure=True)(columns), n))
        return _concatenate(outs, self._n_trees(), np.intp, local)

    def _n_trees(self) -> int:
        return int(self.tree_ranges_[-1][1])


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


def _concatenate(outs: list[Any], width: int | None, dtype: Any, local: bool) -> Any:
    import dask.array as da

    shape = (lambda n: (n,)) if width is None else (lambda n: (n, width))
    arrays = [da.from_delayed(value, shape=shape(n), dtype=dtype) for value, n in outs]
    result = da.concatenate(arrays) if arrays else da.empty(shape(0), dtype=dtype)
    return result.compute() if local else result


# The tasks (module-level so that workers unpickle them by name).

_TARGET = "__mondrian_learn_target__"


def _columns(piece: Any, features: list[Any]) -> Any:
    return piece[features]


def _column(piece: Any) -> Any:
    return piece[_TARGET].rename(None)


def _update(part: ForestPart, X: Any, y: Any, classes: Any) -> ForestPart:
    return part.update(X, y, classes)


def _choose_prior(part: ForestPart) -> dict[str, float] | None:
    return part.choose_prior()


def _fix_prior(part: ForestPart, prior: dict[str, float]) -> ForestPart:
    return part.fix_prior(prior)


def _summary(part: ForestPart) -> dict[str, Any]:
    summary = part.summary()
    summary["n_features_in_"] = part.estimator.n_features_in_
    if hasattr(part.estimator, "feature_names_in_"):
        summary["feature_names_in_"] = part.estimator.feature_names_in_
    return summary


def _zeros(block: Any, width: int) -> np.ndarray:
    return np.zeros((len(block), width))


def _fold(part: ForestPart, block: Any, sums: np.ndarray) -> np.ndarray:
    return part.fold(block, sums)


def _apply(part: ForestPart, block: Any) -> np.ndarray:
    return part.apply(block)


class _Moments:
    """Mean and standard deviation from the moment sums over ``n_trees`` trees about
    ``reference`` (the core's ``MomentsFold::finish``, operation for operation)."""

    def __init__(self, reference: float, n_trees: int) -> None:
        self.reference, self.n_trees = reference, float(n_trees)

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        offset = sums[:, 0] / self.n_trees
        var = np.maximum(sums[:, 1] / self.n_trees - offset * offset, 0.0)
        return np.column_stack([self.reference + offset, np.sqrt(var)])


class _Average:
    """Class probabilities from their sums over ``n_trees`` trees."""

    def __init__(self, n_trees: int) -> None:
        self.n_trees = float(n_trees)

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        return sums / self.n_trees


class _Labels(_Average):
    """The most probable class from the probability sums."""

    def __init__(self, classes: np.ndarray, n_trees: int) -> None:
        super().__init__(n_trees)
        self.classes = classes

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        return self.classes[np.argmax(super().__call__(sums), axis=1)]


class _Watch:
    """Waits for a fit's tasks while checking that the workers holding the parts are alive:
    a worker lost mid-fit (killed, out of memory) takes its part's trees with it, and the
    fit stops with an error naming it instead of waiting for a forest that would be smaller
    than asked for."""

    def __init__(self, client: Any, places: list[str], ranges: list[Any]) -> None:
        self.client, self.places, self.ranges = client, places, ranges
        self.pending: list[Any] = []

    def track(self, futures: list[Any]) -> list[Any]:
        """Remember ``futures`` (cancelled if the fit fails) and return them."""
        self.pending.extend(futures)
        return futures

    def settle(self, futures: list[Any]) -> list[Any]:
        """Wait for ``futures``; raise the first error among them, or ``RuntimeError`` when a
        part's worker has left the cluster. Returns their results."""
        from distributed import wait

        while True:
            try:
                wait(futures, timeout=1.0)
                break
            except TimeoutError:
                self.check_workers()
        self.check_workers()
        for future in futures:
            if future.status != "finished":
                future.result()
        return futures

    def check_workers(self) -> None:
        alive = set(self.client.run_on_scheduler(_worker_addresses))
        for place, (a, b) in zip(self.places, self.ranges):
            if place not in alive:
                self.cancel()
                raise RuntimeError(
                    f"the worker {place} holding trees [{a}, {b}) left the cluster during the "
                    "fit (killed or out of memory): those trees are lost, so the fit stopped "
                    "rather than return a smaller forest; fit again"
                )

    def cancel(self) -> None:
        self.client.cancel(self.pending)
        self.pending.clear()


def _worker_addresses(dask_scheduler: Any) -> list[str]:
    return list(dask_scheduler.workers)
