"""The tasks a :class:`DaskMondrianForest` runs on the workers (module-level, so workers
unpickle them by name), the finishing steps of its predictions, and the watch over a fit's
workers."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mondrian_learn.dask._parts import ForestPart
from mondrian_learn.forest._sharpness import sharpen


def update(part: ForestPart, X: Any, y: Any, classes: Any) -> ForestPart:
    return part.update(X, y, classes)


def done(part: ForestPart) -> int:
    return part.estimator.model_.n_rows


def choose_prior(part: ForestPart) -> dict[str, float] | None:
    return part.choose_prior()


def fix_prior(part: ForestPart, prior: dict[str, float]) -> ForestPart:
    return part.fix_prior(prior)


def summary(part: ForestPart) -> dict[str, Any]:
    summary = part.summary()
    summary["n_features_in_"] = part.estimator.n_features_in_
    if hasattr(part.estimator, "feature_names_in_"):
        summary["feature_names_in_"] = part.estimator.feature_names_in_
    return summary


def zeros(block: Any, width: int) -> np.ndarray:
    return np.zeros((len(block), width))


def fold(part: ForestPart, block: Any, sums: np.ndarray) -> np.ndarray:
    return part.fold(block, sums)


def apply_part(part: ForestPart, block: Any) -> np.ndarray:
    return part.apply(block)


class Moments:
    """Mean and standard deviation from the moment sums over ``n_trees`` trees about
    ``reference``, the spread of the component means scaled by ``spread`` (the core's
    ``MomentsFold::finish``, operation for operation)."""

    def __init__(self, reference: float, n_trees: int, spread: float = 1.0) -> None:
        self.reference, self.n_trees, self.spread = reference, float(n_trees), spread

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        offset = sums[:, 0] / self.n_trees
        between = np.maximum(sums[:, 1] / self.n_trees - offset * offset, 0.0)
        var = sums[:, 2] / self.n_trees + self.spread * self.spread * between
        return np.column_stack([self.reference + offset, np.sqrt(var)])


class Average:
    """Class probabilities from their sums over ``n_trees`` trees, sharpened by τ."""

    def __init__(self, n_trees: int, sharpness: float = 1.0) -> None:
        self.n_trees, self.sharpness = float(n_trees), sharpness

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        return sharpen(sums / self.n_trees, self.sharpness)


class Labels(Average):
    """The most probable class from the probability sums."""

    def __init__(self, classes: np.ndarray, n_trees: int) -> None:
        super().__init__(n_trees)
        self.classes = classes

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        return self.classes[np.argmax(super().__call__(sums), axis=1)]


class Watch:
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

    def forget(self, futures: list[Any]) -> None:
        """Stop holding ``futures`` (settled ones, whose data may now be released)."""
        gone = {id(future) for future in futures}
        self.pending = [future for future in self.pending if id(future) not in gone]

    def settle(self, futures: list[Any]) -> list[Any]:
        """Wait for ``futures``; raise the first error among them, or ``RuntimeError`` when a
        part's worker has left the cluster. Returns their results."""
        # Polled rather than ``distributed.wait(timeout=…)``: its TimeoutError's traceback
        # forms a reference cycle with the frames up to the fit's, which kept every future
        # the fit held (chunks' data among them) alive until Python's cycle collector ran.
        checked = time.monotonic()
        while not all(future.done() for future in futures):
            time.sleep(0.002)
            if time.monotonic() - checked >= 1.0:
                self.check_workers()
                checked = time.monotonic()
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
