"""What the Dask tests share: a cluster of worker processes, and the noisy sine data they fit.

A module of its own, not a ``conftest.py``: a second ``conftest`` module would shadow the
suite's, which other test modules import by that name."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest


def sine_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows uniform on the unit cube of 3 dimensions, then their targets
    y = sin(4 x₀) + x₁ + 0.1 ε with ε standard normal, both drawn from ``rng``."""
    X = rng.uniform(size=(n, 3))
    return X, np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=n)


@contextmanager
def process_cluster() -> Iterator[Any]:
    """A client of a LocalCluster of 2 worker processes with a small memory limit each; on
    leaving, every worker process of the cluster must be gone."""
    distributed = pytest.importorskip("distributed")
    psutil = pytest.importorskip("psutil")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        memory_limit="1GiB",
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    yield client
    # A test may kill a worker: its nanny starts another, which must go too.
    client.wait_for_workers(2, timeout=60)
    # The nannies run in this process; each worker in a process of its own.
    started = set(client.run(os.getpid).values()) - {os.getpid()}
    client.close()
    cluster.close()

    def running(pid: int) -> bool:
        # A zombie (exited, not yet reaped) counts as gone.
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 10
    while any(running(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in started if running(pid)]
    assert len(started) == 2 and not alive, f"worker processes left behind: {alive}"
