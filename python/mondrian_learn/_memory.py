"""The one check of a call's memory need against the machine's memory, made before anything
is allocated."""

from __future__ import annotations

import functools
import os
from typing import Any


@functools.cache
def physical_memory() -> int:
    """Bytes of physical memory on this machine (read once)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return 2**62


def check_memory(name: str, value: Any, n_bytes: float, what: str) -> None:
    """Raise ``MemoryError`` naming the parameter ``name=value`` when a call would need
    ``n_bytes`` (at least: ``what``, e.g. "a leaf's point ids per tree") and that exceeds the
    machine's physical memory: refused before anything is allocated, instead of an abort by
    the allocator or hours of swapping."""
    if n_bytes > physical_memory():
        raise MemoryError(
            f"{name}={value} needs at least {n_bytes / 2**30:.3g} GiB ({what}), more than this "
            f"machine's {physical_memory() / 2**30:.3g} GiB of memory: lower {name}"
        )
