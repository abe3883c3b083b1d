"""Progress reporting for long fits: tqdm when installed, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def progress_callback(
    total: int, desc: str, verbose: int
) -> tuple[Callable[[int], None], Callable[[], None]]:
    """A ``(update(done), close())`` pair reporting ``done`` of ``total`` steps.

    Nothing is reported when ``verbose`` is 0.
    """
    if not verbose:
        return (lambda done: None), (lambda: None)
    try:
        from tqdm.auto import tqdm
    except ImportError:

        def plain(done: int) -> None:
            print(f"{desc}: {done}/{total}", file=sys.stderr, flush=True)

        return plain, (lambda: None)
    bar = tqdm(total=total, desc=desc)

    def update(done: int) -> None:
        bar.update(done - bar.n)

    return update, bar.close


def grow_trees(
    n_trees: int,
    n_jobs: int,
    verbose: int,
    grow: Callable[[int, Callable[[int], None] | None], T],
) -> T:
    """Run ``grow(slice_size, progress)``, the core sampling ``n_trees`` trees in slices of
    ``slice_size`` and calling ``progress(done)`` after each slice, with a ``"trees"``
    progress bar when ``verbose``.

    Quiet fits grow every tree in one slice; verbose ones in slices of 4 trees per thread,
    which show progress without starving the pool. Results do not depend on the slices (tree
    ``m`` draws from its own stream).
    """
    update, close = progress_callback(n_trees, "trees", verbose)
    try:
        return grow(4 * n_jobs if verbose else n_trees, update if verbose else None)
    finally:
        close()


class PathProgress:
    """``progress(done, total)`` for a path whose length the core learns as it runs: the bar
    (``desc``) opens at the first call. Use as a context manager; ``callback`` is None when
    quiet."""

    def __init__(self, desc: str, verbose: int) -> None:
        self.desc, self.verbose = desc, verbose
        self._update: Callable[[int], None] | None = None
        self._close: Callable[[], None] = lambda: None
        self.callback = self._progress if verbose else None

    def _progress(self, done: int, total: int) -> None:
        if self._update is None:
            self._update, self._close = progress_callback(total, self.desc, self.verbose)
        self._update(done)

    def __enter__(self) -> PathProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._close()


class StageTimer:
    """Prints ``name: stage in seconds`` lines to stderr when ``verbose``, one per finished
    stage of a fit (for fits made of a few long steps rather than many equal ones)."""

    def __init__(self, verbose: int, name: str) -> None:
        self.verbose, self.name, self.start = verbose, name, time.perf_counter()

    def done(self, stage: str) -> None:
        """Report ``stage`` with the seconds since the previous one (or the start)."""
        if self.verbose:
            now = time.perf_counter()
            print(f"{self.name}: {stage} in {now - self.start:.2f} s", file=sys.stderr, flush=True)
            self.start = now
