"""The optimisers of the Mondrian grid's lifetimes (Balog, *The Mondrian Process in Machine
Learning*, §5.1–5.3) and the two criteria they minimise.

A *move* of dimension d sets how many of its cuts are active: its cuts over all M grids are
ordered by birth time, and λ_d is the birth time of the last active one, so adding the next
``cuts_per_move`` cuts raises λ_d to the next birth time(s) — one cut in one grid each, as the
report's §5.1 steps λ_d — and removing the last ones lowers it. Every grid shares λ_d: the
features estimate one ARD Laplace kernel, whichever grid a cut falls in.

- ``"add"``: greedy, add-only (§5.1): each step tries adding the next cuts of every
  dimension and keeps the move with the lowest criterion.
- ``"add_remove"``: greedy with removals (Fig. 5.6): the last cuts of every dimension may be
  removed too.
- ``"lookahead"``: K-step look-ahead (§5.3): each dimension is scored by its best criterion
  after 1, …, K consecutive add moves (removals as in ``"add_remove"``), and the best prefix
  is kept whole — a dimension whose first cut alone does not help can still be chosen.

A move never returns to a state already on the path (with removals, greedy search would
otherwise undo its last addition whenever every move makes things worse, and cycle). Each
step records the state it reaches; the search stops after ``max_iter`` steps, when no move is
left, or after ``n_iter_no_change`` steps without improving the best criterion, and the
caller keeps the best state of the path.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import scipy.sparse

from mondrian_learn._lifetime_path import pooled_scores
from mondrian_learn._progress import progress_callback
from mondrian_learn.kernel._evidence import EVIDENCE_MAX_SIZE, centre, weighted_evidence

#: What a scored state carries besides its criterion, recorded on the path.
RECORD = ("validation_mse", "train_mse", "log_evidence", "n_features", "cg_iterations")
EVIDENCE_RECORD = ("log_evidence_profiled", "alpha", "signal_variance", "noise_variance")


class ValidationCriterion:
    """Validation mean squared error of the ridge kept incrementally by the core's search
    state ``search`` (:class:`mondrian_learn._core.GridSearch`)."""

    def __init__(self, search: Any, n_jobs: int) -> None:
        self.search, self.n_jobs = search, n_jobs

    def active(self) -> list[int]:
        return list(self.search.active)

    def score(self, dim: int, counts: list[int]) -> list[dict[str, Any]]:
        return _rows(self.search.try_moves(dim, counts, self.n_jobs), "validation_mse")

    def commit(self, dim: int, count: int) -> dict[str, Any]:
        return _rows(self.search.move_to(dim, count, self.n_jobs), "validation_mse")[0]

    def current(self) -> dict[str, Any]:
        return _rows(self.search.evaluate(self.n_jobs), "validation_mse")[0]


class FoldMeanCriterion:
    """The mean over cross-validation folds of their :class:`ValidationCriterion`: one core
    search per fold, moved in step. Every fold's search holds all the points (its training
    and validation rows), so the gaps and the birth times of their cuts, drawn from the same
    seed, are the same in every fold, and a state (active cuts per feature) is the same
    lifetimes in all of them (checked)."""

    def __init__(self, folds: list[ValidationCriterion], sizes: list[float]) -> None:
        self.folds, self.sizes = folds, sizes
        first = folds[0].search
        for fold in folds[1:]:
            for d in range(len(first.active)):
                if fold.search.lifetime_after(d, 1) != first.lifetime_after(d, 1):
                    raise RuntimeError("the folds' searches drew different cuts")

    def active(self) -> list[int]:
        return self.folds[0].active()

    def _mean(self, per_fold: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """Per state, the first fold's record with the folds' validation error weighted by
        their validation rows (the pooled error: the criterion) and mean training error, and
        each fold's validation error (``split_scores``)."""
        rows = []
        for states in zip(*per_fold):
            row = dict(states[0])
            scores = [state["validation_mse"] for state in states]
            row["split_scores"] = np.asarray(scores)
            pooled = float(pooled_scores(scores, self.sizes))
            row["validation_mse"] = row["criterion"] = pooled
            row["train_mse"] = float(np.mean([state["train_mse"] for state in states]))
            rows.append(row)
        return rows

    def score(self, dim: int, counts: list[int]) -> list[dict[str, Any]]:
        return self._mean([fold.score(dim, counts) for fold in self.folds])

    def commit(self, dim: int, count: int) -> dict[str, Any]:
        return self._mean([[fold.commit(dim, count)] for fold in self.folds])[0]

    def current(self) -> dict[str, Any]:
        return self._mean([[fold.current()] for fold in self.folds])[0]


class EvidenceCriterion:
    """Minus the log marginal likelihood of ``y − ȳ ~ N(0, s² ΦΦᵀ + σ² I)`` with both
    variances estimated (``kernel/_evidence.py``), Φ the grid features of the first ``n_rows``
    points of ``search`` at the candidate lifetimes, the rows weighted by ``weights`` (None:
    all 1): O(min(N, C)³) per state, refused beyond ``EVIDENCE_MAX_SIZE`` (criterion +inf)."""

    def __init__(
        self, search: Any, y: np.ndarray, n_jobs: int, weights: np.ndarray | None = None
    ) -> None:
        self.search, self.n_jobs, self.weights = search, n_jobs, weights
        self.centred = centre(y, weights)
        self.counts = [0] * len(search.active)

    def active(self) -> list[int]:
        return list(self.counts)

    def _state(self, counts: list[int]) -> dict[str, Any]:
        lifetimes = [float(self.search.lifetime_after(d, c)) for d, c in enumerate(counts)]
        n = len(self.centred)
        data, indices, indptr, n_columns = self.search.transform(lifetimes, n, self.n_jobs)
        row: dict[str, Any] = {
            "lifetimes": np.asarray(lifetimes),
            "n_features": n_columns,
            "validation_mse": np.nan,
            "train_mse": np.nan,
            "log_evidence": np.nan,
            "cg_iterations": 0,
            "solver": "spectrum",
        }
        if min(n, n_columns) > EVIDENCE_MAX_SIZE:
            row.update(dict.fromkeys(EVIDENCE_RECORD, np.nan), criterion=np.inf)
            return row
        phi = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n_columns))
        value, ratio, signal = weighted_evidence(phi, self.centred, self.weights)
        row.update(
            log_evidence_profiled=value,
            alpha=ratio,
            signal_variance=signal,
            noise_variance=ratio * signal,
            criterion=-value,
        )
        return row

    def score(self, dim: int, counts: list[int]) -> list[dict[str, Any]]:
        rows = []
        for count in counts:
            if self.search.lifetime_after(dim, count) is None:
                break
            state = list(self.counts)
            state[dim] = count
            rows.append(self._state(state))
        return rows

    def commit(self, dim: int, count: int) -> dict[str, Any]:
        self.counts[dim] = count
        return self._state(self.counts)

    def current(self) -> dict[str, Any]:
        return self._state(self.counts)


def _rows(points: dict[str, Any], criterion: str) -> list[dict[str, Any]]:
    """The core's dict of arrays as one dict per state, with its criterion."""
    rows = []
    for k in range(len(points["validation_mse"])):
        row = {name: points[name][k] for name in ("lifetimes", "solver", *RECORD)}
        row["criterion"] = float(points[criterion][k])
        rows.append(row)
    return rows


def candidates(active: list[int], search: str, cuts_per_move: int, lookahead: int) -> list[Any]:
    """Per candidate dimension, the counts of active cuts to try in turn (module docs)."""
    steps = lookahead if search == "lookahead" else 1
    out: list[tuple[int, list[int]]] = []
    for d, count in enumerate(active):
        out.append((d, [count + cuts_per_move * k for k in range(1, steps + 1)]))
    if search != "add":
        out += [(d, [max(count - cuts_per_move, 0)]) for d, count in enumerate(active) if count]
    return out


def run_search(
    criterion: Any,
    search: str,
    cuts_per_move: int,
    lookahead: int,
    max_iter: int,
    n_iter_no_change: int,
    verbose: int,
    clock: Callable[[], float] = time.perf_counter,
    start: float | None = None,
) -> dict[str, Any]:
    """Run the optimiser ``search`` on ``criterion`` (module docs) and return its path: per
    state (the start, then one per step) ``step``, ``dimension`` (moved; −1 at the start),
    ``n_cuts`` (active cuts per dimension), ``lifetimes``, the criterion and what the criterion
    records, and ``time`` (seconds since ``start``)."""
    start = clock() if start is None else start
    rows = [criterion.current()]
    rows[0].update(step=0, dimension=-1, n_cuts=criterion.active(), time=clock() - start)
    visited = {tuple(criterion.active())}
    best, stale = rows[0]["criterion"], 0
    update, close = progress_callback(max_iter, "lifetime search", verbose)
    finished = False
    try:
        for step in range(1, max_iter + 1):
            trials = []
            active = criterion.active()
            for dim, counts in candidates(active, search, cuts_per_move, lookahead):
                # A state already on the path is not visited again (a removal would otherwise
                # undo the last addition whenever every move makes things worse, and cycle).
                states = [(*active[:dim], c, *active[dim + 1 :]) for c in counts]
                fresh = [c for c, s in zip(counts, states) if s not in visited]
                for count, row in zip(fresh, criterion.score(dim, fresh) if fresh else []):
                    trials.append((row["criterion"], dim, count))
            if not trials:
                break
            # The lowest criterion (NaN last); ties to the first candidate (lowest dimension,
            # adding before removing).
            _, dim, count = min(trials, key=lambda t: (np.isnan(t[0]), t[0]))
            row = criterion.commit(dim, count)
            visited.add(tuple(criterion.active()))
            row.update(step=step, dimension=dim, n_cuts=criterion.active(), time=clock() - start)
            rows.append(row)
            update(step)
            if row["criterion"] < best:
                best, stale = row["criterion"], 0
            else:
                stale += 1
                if stale >= n_iter_no_change:
                    break
        finished = True
    finally:
        # A search that stops early ends its report at the steps it took.
        close(len(rows) - 1 if finished else None)
    return _path(rows)


def _path(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The states as a dict of arrays."""
    path: dict[str, Any] = {}
    for name in rows[0]:
        values = [row[name] for row in rows]
        path[name] = values if name == "solver" else np.asarray(values)
    path["solver"] = np.asarray(path["solver"])
    return path
