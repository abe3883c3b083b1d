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

from mondrian_learn._base import document
from mondrian_learn._progress import progress_callback
from mondrian_learn._validation import COUNT, Integer, Param, check_parameter
from mondrian_learn.dask._chunks import concatenate, query_blocks, row_blocks
from mondrian_learn.dask._parts import ForestPart, core_seed, tree_ranges
from mondrian_learn.dask._stream import check_forest
from mondrian_learn.dask._tasks import (
    Average,
    Labels,
    Moments,
    Watch,
    apply_part,
    choose_prior,
    done,
    fix_prior,
    fold,
    summary,
    update,
    zeros,
)
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

    The regressor's hyper-parameters (γ₁, γ₂, σ_y² and the spread ρ) are chosen once after
    the last chunk on all rows by part 0 (which sees every row, and holds the first 4 trees
    that the evidence scores), by ``hyperparameters`` as a batch ``fit`` chooses them (ρ
    carried over to the whole forest's trees), and fixed in every part.
    ``noise_variance="within_leaf"`` pools over all trees and is refused with several parts.
    The input map to the unit box (``scale_features``) is fixed by the first chunk and then
    follows the rows' range, as for ``partial_fit``.

    The trees, and the training points they store for later extension, stay on the workers
    (``parts_``: one Dask future per part); the client holds only their addresses.
    ``predict``, ``predict(return_std=True)``, ``predict_proba`` and ``apply`` return Dask
    arrays computed a chunk at a time: the chunk visits the parts in tree order, each adding
    its trees to running sums (the regressor's mixture moments about the prior mean, the
    classifier's class probabilities — 2 or K floats per row), and the sums are finished once
    with the whole forest's tree count: the same floating-point operations in the same order
    as the single forest's prediction. NumPy inputs give NumPy outputs.

    Memory: every part stores every training point (float64: the conditional Mondrian
    resamples a paused leaf from its points), so with the estimator's default
    ``point_store="memory"`` each worker needs more than the data (1.6 times it at 2·10⁷
    rows); with ``point_store="disk"`` the points are in a file on each worker's disk and a
    worker needed 0.72 times the data, at 2.7 times the fit's time. Turn Dask's
    spilling off on the workers (``distributed.worker.memory.target``, ``.spill`` and
    ``.pause`` set to False): spilling a part pickles it whole, a second copy for a moment,
    which pushed workers over their limit.

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
        The regressor's hyper-parameters in use; the classifier's ``min_discount`` and
        ``sharpness``.

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
        self, estimator: Any = None, *, n_parts: int | None = None, max_pending_chunks: int = 2
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
        # Per chunk in flight: the markers of its updates, and the futures of its data.
        window: deque[tuple[list[Any], list[Any]]] = deque()
        watch = Watch(client, places, ranges)
        # Opened last: nothing between it and the ``try`` that closes it can raise.
        report, close = progress_callback(len(blocks), "chunks", estimator.verbose)

        def settle_oldest() -> None:
            markers, chunk = window.popleft()
            watch.settle(markers)
            # Every part has read the chunk: its data may go (kept, every chunk stayed in the
            # workers' memory until the fit ended — the data once more per worker).
            watch.forget([*markers, *chunk])
            report(k + 1 - len(window))

        k = 0
        try:
            for k, (x_block, y_block) in enumerate(blocks):
                x_chunk, y_chunk = watch.track(client.compute([x_block, y_block]))
                parts = [
                    submit(
                        update, part, x_chunk, y_chunk, classes,
                        key=f"mondrian-update-{p}-{k}-{token}", place=w,
                    )
                    for p, (part, w) in enumerate(zip(parts, places))
                ]  # fmt: skip
                # The window holds small markers, not the parts' futures: the chunks' keys
                # would all name the same part, and Dask would count (and spill) it each time.
                markers = watch.track([client.submit(done, part) for part in parts])
                window.append((markers, [x_chunk, y_chunk]))
                while len(window) > self.max_pending_chunks:
                    settle_oldest()
            while window:
                settle_oldest()
        except BaseException:
            watch.cancel()
            raise
        finally:
            close()
        chosen = watch.settle([client.submit(choose_prior, parts[0], pure=False)])
        prior = chosen[0].result()
        if prior is not None:
            parts[1:] = [
                submit(fix_prior, part, prior, key=f"mondrian-prior-{p}-{token}", place=w)
                for p, (part, w) in enumerate(zip(parts[1:], places[1:]), start=1)
            ]
        described = watch.settle([client.submit(summary, part, pure=False) for part in parts])
        summaries = client.gather(described)
        self._check_complete(summaries, ranges)
        self.parts_, self.tree_ranges_ = parts, ranges
        self.n_rows_ = summaries[0]["n_rows"]
        self.n_features_in_ = summaries[0]["n_features_in_"]
        if "feature_names_in_" in summaries[0]:
            self.feature_names_in_ = summaries[0]["feature_names_in_"]
        self.prior_ = summaries[0]["prior"]
        if not regressor:
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
        for held, (a, b) in zip(summaries, ranges):
            same = held["n_rows"] == summaries[0]["n_rows"]
            same = same and held.get("prior") == summaries[0].get("prior")
            if (held["first"], held["stop"], held["n_trees"]) != (a, b, b - a) or not same:
                raise RuntimeError(
                    f"the part of trees [{a}, {b}) came back with {held['n_trees']} trees on "
                    f"{held['n_rows']} rows (part 0: {summaries[0]['n_rows']} rows): the fit "
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
            sums = delayed(zeros, pure=True)(block, width)
            for part in self.parts_:
                sums = delayed(fold, pure=True)(part, block, sums)
            outs.append((delayed(finish, pure=True)(sums), n))
        return concatenate(outs, out_width, dtype, local)

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
            return self._folded(X, len(labels), Labels(labels, m), None, labels.dtype)
        finish = Moments(self.prior_["mean"], self._n_trees(), self.prior_.get("spread", 1.0))
        moments = self._folded(X, 3, finish, 2, float)
        mean, std = moments[:, 0], moments[:, 1]
        return (mean, std) if return_std else mean

    @document("X dask")
    def predict_proba(self, X: Any) -> Any:
        """Classifiers: class probabilities, the average over trees of each tree's
        branch-off mixture (NIPS 2014, §4) raised to the power ``prior_["sharpness"]`` and
        normalised, as :class:`~mondrian_learn.MondrianForestClassifier` predicts; columns in the
        order of ``classes_``.

        Returns
        -------
        proba : dask.array.Array of shape (n_samples, n_classes)
            An ndarray for an ndarray input.
        """
        check_is_fitted(self, "classes_")
        k = len(self.classes_)
        return self._folded(X, k, Average(self._n_trees(), self.prior_["sharpness"]), k, float)

    @document("X dask")
    def apply(self, X: Any) -> Any:
        """Leaf id of every point in every tree.

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
            columns = [delayed(apply_part, pure=True)(part, block) for part in self.parts_]
            outs.append((delayed(np.hstack, pure=True)(columns), n))
        return concatenate(outs, self._n_trees(), np.intp, local)

    def _n_trees(self) -> int:
        return int(self.tree_ranges_[-1][1])
