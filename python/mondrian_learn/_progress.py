"""Progress reporting for long fits: tqdm when installed, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from contextvars import ContextVar
from typing import Any, Callable, TypeVar

T = TypeVar("T")


#: Most lines a report prints without tqdm: one at each fifth of the total (the last at the
#: end), so a fit of many small steps does not flood the terminal.
PLAIN_LINES = 5

#: Whether a report is open in this context: reports opened inside it (the fits a search or
#: a cross-validation runs) stay quiet, so only the outer one is shown.
_REPORTING: ContextVar[bool] = ContextVar("mondrian_learn_reporting", default=False)


def progress_callback(
    total: int, desc: str, verbose: int
) -> tuple[Callable[[int], None], Callable[..., None]]:
    """A ``(update(done), close(done=None))`` pair reporting ``done`` of ``total`` steps.

    Nothing is reported when ``verbose`` is 0, or while another report is open in this
    context (a nested fit). Without tqdm, plain lines to stderr: at most :data:`PLAIN_LINES`,
    at each fifth of ``total`` (with an unknown ``total`` ≤ 0, at every power of two).
    ``close(done)`` ends a run that stopped early at ``done`` steps: that becomes the total,
    so the report ends at ``done/done``.
    """
    if not verbose or _REPORTING.get():
        return (lambda done: None), (lambda done=None: None)
    token = _REPORTING.set(True)
    closed = False

    def release() -> None:
        nonlocal closed
        if not closed:
            closed = True
            try:
                _REPORTING.reset(token)
            except ValueError:
                # Opened from a callback of the core, which runs in a context of its own:
                # the mark never reached the caller's context.
                pass

    try:
        from tqdm.auto import tqdm
    except ImportError:
        state = {"total": total, "mark": 0}

        def line(done: int) -> None:
            print(f"{desc}: {done}/{state['total']}", file=sys.stderr, flush=True)

        def plain(done: int) -> None:
            known = state["total"]
            if known > 0:
                mark = min(done, known) * PLAIN_LINES // known
                if mark > state["mark"]:
                    state["mark"] = mark
                    line(done)
            elif done > 0 and done & (done - 1) == 0:
                line(done)

        def finish(done: int | None = None) -> None:
            if done is not None and done != state["total"]:
                # The last line said done/total: end at done/done.
                state["total"] = done
                line(done)
            release()

        return plain, finish
    bar = tqdm(total=total if total > 0 else None, desc=desc)

    def update(done: int) -> None:
        bar.update(done - bar.n)

    def close(done: int | None = None) -> None:
        if done is not None and not closed:
            bar.total = done
            bar.update(done - bar.n)
        bar.close()
        release()

    return update, close


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
    (``desc``) opens at the first call. ``runs`` paths in a row (one per ridge penalty or
    fold, :meth:`next_run` between them) share one bar of ``runs`` times the first one's
    length, ending at what ran. Use as a context manager; ``callback`` is None when quiet."""

    def __init__(self, desc: str, verbose: int, runs: int = 1) -> None:
        self.desc, self.verbose, self.runs = desc, verbose, runs
        self._update: Callable[[int], None] | None = None
        self._close: Callable[..., None] = lambda done=None: None
        self._offset = self._done = self._run_done = 0
        # Decided here, in the caller's context: the core calls back from a context of its own.
        self.callback = self._progress if verbose and not _REPORTING.get() else None

    def _progress(self, done: int, total: int) -> None:
        if self._update is None:
            self._update, self._close = progress_callback(
                total * self.runs, self.desc, self.verbose
            )
        self._run_done = done
        self._done = self._offset + done
        self._update(self._done)

    def next_run(self) -> None:
        """The next path starts: its steps count after those of the paths before."""
        self._offset += self._run_done
        self._run_done = 0

    def __enter__(self) -> PathProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._close(None if exc[0] is not None else self._done)


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
