"""Progress reporting for long fits: tqdm when installed, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import Callable


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
