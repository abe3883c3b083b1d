"""A random partition kernel on rows spread over a Dask cluster.

The partitions are sampled on a subsample (or on every row, ``subsample=None``) by the
in-memory :class:`~mondrian_learn.partition.RandomPartitionKernel`; its rules (Mondrian trees,
Random Forest trees cut at a depth, Fast Cluster centres) then label every row block on the
worker that holds it, and the labels stay there. With ``G`` the rows' one-hot labels
(``N × C``, ``C`` clusters over the ``m`` partitions), ``K̂ = G Gᵀ / m``:

- ``K̂ V`` (:meth:`DistributedPartitionKernel.matmul`): per block the cluster sums
  ``G_bᵀ V_b`` (``C × k``), a tree reduction of those sums (on each worker first, then
  across workers), and a per-block gather ``G_b S / m``: what moves between machines is one
  ``C × k`` array per worker, never a row. Every block's task runs on the worker that holds
  its labels.
- ``M = Gᵀ G / m`` (:meth:`DistributedPartitionKernel.gram`), the same two steps in the other
  order: the clusters' Gram matrix, on which the estimators of this package run the core's
  CG, Lanczos and block Lanczos unchanged (``_core.operator_*``: each product is one call back
  into Python). ``M``'s non-zero spectrum is ``K̂``'s, so the solvers' iterations are the same
  as on ``K̂``, while their vectors have ``C`` entries (at most ``m`` times the subsample) and
  live on the client: the client never holds an array with a value per row, except the
  results it asks for.

Rows are placed by the rules' cuts: a Mondrian tree fitted on the subsample extends to every
row by the cuts it routes it through (its conditional-extension weights, which matter for
rows outside the subsample's boxes, are not used), so every row is in exactly one cluster of
every partition (``K̂(x, x) = 1``, a partition of the whole space). New points at prediction
are placed the same way, so the kernel differs from the in-memory Mondrian kernel only for
points outside the boxes of the rows the trees were sampled on. A rule that leaves a
training row in no cluster (a callable sampler's label that no subsample row had) is
refused.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from mondrian_learn._progress import StageTimer
from mondrian_learn.partition import RandomPartitionKernel
from mondrian_learn.partition._samplers import FRESH

#: Partial sums added per node of the reduction tree.
SPLIT_EVERY = 8


def _labels(kernel: RandomPartitionKernel, rows: np.ndarray) -> np.ndarray:
    """Labels (``m × n_b``, uint32) of a block of rows, placed by the rules' cuts."""
    labels, _ = kernel.assign(rows)
    if np.any(labels == FRESH):
        raise ValueError(
            "the sampler left a row in no cluster of the subsample's partitions (a callable "
            "rule's label that no subsample row had); raise subsample or use subsample=None"
        )
    return np.ascontiguousarray(labels)


def _block_sums(model: Any, labels: np.ndarray, v: np.ndarray, n_jobs: int) -> np.ndarray:
    """``G_bᵀ V_b``: a block's cluster sums."""
    return model.cluster_sums(np.ascontiguousarray(v), n_jobs, labels)


def _block_gather(model: Any, labels: np.ndarray, sums: np.ndarray, n_jobs: int) -> np.ndarray:
    """``G_b S / m``: each row of a block gets the mean of its clusters' rows of ``S``."""
    return model.gather_sums(sums, n_jobs, labels)


def _block_gram(model: Any, labels: np.ndarray, u: np.ndarray, n_jobs: int) -> np.ndarray:
    """``G_bᵀ G_b U / m``: a block's part of the clusters' Gram matrix times ``U``."""
    return model.cluster_sums(model.gather_sums(u, n_jobs, labels), n_jobs, labels)


def _add(*parts: np.ndarray) -> np.ndarray:
    total = parts[0].copy()
    for p in parts[1:]:
        total += p
    return total


def share(obj: Any) -> Any:
    """``obj`` as an argument of delayed calls, sent to each worker once: scattered to every
    worker when a ``distributed`` client is active (a fitted kernel's rules are megabytes),
    else computed once by whatever scheduler runs the graphs."""
    import dask

    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        return dask.persist(dask.delayed(obj, pure=True))[0]
    return client.scatter(obj, broadcast=True, hash=False)


def _homes(blocks: list[Any]) -> list[str | None]:
    """The worker holding each persisted block (None without a ``distributed`` client)."""
    try:
        from distributed import default_client, futures_of, wait

        client = default_client()
    except (ImportError, ValueError):
        return [None] * len(blocks)
    futures = futures_of(blocks)
    wait(futures)  # persisting is asynchronous: where a block lives is known after
    who = client.who_has(futures)
    return [(list(who.get(b.key, ())) or [None])[0] for b in blocks]


def tree_sum(parts: list[Any]) -> Any:
    """The sum of delayed arrays by a tree of additions (``SPLIT_EVERY`` per node), so that
    partial sums meet on the workers rather than all on one."""
    import dask

    while len(parts) > 1:
        parts = [
            dask.delayed(_add, pure=True)(*parts[i : i + SPLIT_EVERY])
            for i in range(0, len(parts), SPLIT_EVERY)
        ]
    return parts[0]


class DistributedPartitionKernel:
    """The labels of a Dask array's row blocks under a fitted kernel's partitions, computed
    and kept on the workers, and the products built from them (module notes).

    Parameters
    ----------
    kernel : RandomPartitionKernel
        Fitted (on a subsample or on every row).
    X : dask.array.Array of shape (N, n_features)
        The rows; its row chunks are the blocks (one chunk across the features).
    n_jobs : int
        Threads of each block's call into the core on a worker.
    verbose : int
        Report each product with its time on stderr.
    """

    def __init__(self, kernel: RandomPartitionKernel, X: Any, n_jobs: int, verbose: int) -> None:
        import dask

        X = X.rechunk({1: -1})
        self.kernel = kernel
        self.model = kernel.model_
        self.n_jobs = n_jobs
        self.chunks = X.chunks[0]
        self.n_rows = int(X.shape[0])
        self.n_partitions = int(self.model.n_partitions)
        self.n_clusters = int(self.model.cluster_offsets()[-1])
        self._stages = StageTimer(verbose, "DistributedPartitionKernel")
        self.n_products = 0
        self._model, self._kernel = share(self.model), share(kernel)
        blocks = [b for row in X.to_delayed() for b in row]
        labels = [dask.delayed(_labels, pure=True)(self._kernel, b) for b in blocks]
        self.labels = list(dask.persist(*labels))
        self._homes = _homes(self.labels)
        self.sizes = self.cluster_sums_of(
            [self._ones(n) for n in self.chunks]  # the clusters' sizes, Gᵀ1
        )[:, 0]
        self._stages.done(f"labelled {self.n_rows} rows in {len(self.chunks)} blocks")

    def _at_home(self, block: int, f: Callable[..., Any], *args: Any) -> Any:
        """The delayed call ``f(*args)`` for row block ``block``, pinned to the worker that
        holds the block's labels (a block's labels are hundreds of megabytes; moving them,
        as Dask's work stealing would, costs more than the product)."""
        import dask

        home = self._homes[block]
        if home is None:
            return dask.delayed(f, pure=True)(*args)
        with dask.annotate(workers=[home], allow_other_workers=False):
            return dask.delayed(f, pure=True)(*args)

    def _reduce(self, parts: list[Any]) -> Any:
        """The sum of the blocks' delayed partial sums: first on each worker (pinned there),
        then across workers, so each product moves one ``C × k`` array per worker."""
        import dask

        by_home: dict[Any, list[Any]] = {}
        for home, part in zip(self._homes, parts):
            by_home.setdefault(home, []).append(part)
        local = []
        for home, group in by_home.items():
            if home is None:
                local.append(tree_sum(group))
                continue
            with dask.annotate(workers=[home], allow_other_workers=False):
                local.append(tree_sum(group))
        return tree_sum(local)

    @staticmethod
    def _ones(n: int) -> Any:
        import dask

        return dask.delayed(np.ones, pure=True)((n, 1))

    def cluster_sums_of(self, blocks: list[Any]) -> np.ndarray:
        """``Gᵀ V`` (``C × k``) for ``V`` given as one delayed ``n_b × k`` array per block."""
        import dask

        parts = [
            self._at_home(i, _block_sums, self._model, lab, v, self.n_jobs)
            for i, (lab, v) in enumerate(zip(self.labels, blocks))
        ]
        return np.asarray(dask.compute(self._reduce(parts))[0])

    def matmul(self, V: Any) -> Any:
        """``K̂ V`` for a Dask array ``V`` (``N × k``, or ``N``), as a Dask array chunked like
        the rows: per-block cluster sums, their tree reduction, a per-block gather."""
        import dask.array as da

        vector = V.ndim == 1
        V = (V[:, None] if vector else V).rechunk({0: self.chunks, 1: -1})
        k = int(V.shape[1])
        sums = self.cluster_sums_of([b for row in V.to_delayed() for b in row])
        shared = share(sums)
        out = da.concatenate(
            [
                da.from_delayed(
                    self._at_home(i, _block_gather, self._model, lab, shared, self.n_jobs),
                    shape=(n, k),
                    dtype=np.float64,
                )
                for i, (lab, n) in enumerate(zip(self.labels, self.chunks))
            ]
        )
        return out[:, 0] if vector else out

    def gram(self, U: np.ndarray) -> np.ndarray:
        """``M U = Gᵀ G U / m`` for ``U`` on the client (``C × k``): what the core's solvers
        call once per iteration."""
        import dask

        # U travels inside the graph (one round trip per product; C × k values per worker).
        shared = dask.delayed(np.ascontiguousarray(U), pure=True)
        parts = [
            self._at_home(i, _block_gram, self._model, lab, shared, self.n_jobs)
            for i, lab in enumerate(self.labels)
        ]
        out = np.ascontiguousarray(dask.compute(self._reduce(parts))[0])
        self.n_products += 1
        self._stages.done(f"product {self.n_products} ({U.shape[1]} columns)")
        return out

    def per_block(self, f: Callable[..., np.ndarray], *args: Any, width: int) -> Any:
        """A Dask array of ``f(model, labels_b, *args, n_jobs)`` per block (``n_b × width``)."""
        import dask.array as da

        shared = [share(a) for a in args]
        return da.concatenate(
            [
                da.from_delayed(
                    self._at_home(i, f, self._model, lab, *shared, self.n_jobs),
                    shape=(n, width),
                    dtype=np.float64,
                )
                for i, (lab, n) in enumerate(zip(self.labels, self.chunks))
            ]
        )

    def release(self) -> None:
        """Drop the labels held on the workers."""
        self.labels = []
