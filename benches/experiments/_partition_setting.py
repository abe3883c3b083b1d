"""The setting the partition-kernel benchmarks share (``partition_speed.py``,
``dask_partition_scaling.py``): points in [0, 1]^10, m = 100 Mondrian partitions with λ = 1 in
the points' raw units, and the in-memory kernel PCA both time."""

from __future__ import annotations

from typing import Any

import numpy as np

from mondrian_learn.partition import MondrianPartitions, PartitionKernelPCA

#: Features, partitions, and the Mondrian lifetime in raw units (``scale_features=False``).
D, M, LIFETIME = 10, 100, 1.0


def in_memory_kpca(X: np.ndarray) -> Any:
    """``PartitionKernelPCA(5)`` fitted on ``X`` in memory: M Mondrian partitions with
    λ = LIFETIME, seeded, 2 threads."""
    return PartitionKernelPCA(
        5,
        sampler=MondrianPartitions(LIFETIME),
        n_partitions=M,
        scale_features=False,
        random_state=0,
        n_jobs=2,
    ).fit(X)
