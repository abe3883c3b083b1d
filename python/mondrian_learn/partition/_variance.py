"""Predictive variances of the partition-kernel GP (``PartitionGPRegressor``), by two routes.

With ``φ*`` a new point's features (``K̂(x*, X) = φ*ᵀΦᵀ``, ``Φ`` the training points' one-hot
features over the ``C`` clusters of all partitions, scaled by ``1/√m``), ``M = ΦᵀVΦ`` and
``ρ = σ²/s``, Woodbury turns ``s + σ² − k*ᵀ (s K̂ + σ² V⁻¹)⁻¹ k*`` into

    ``var(x*) = σ² + s (1 − ‖φ*‖²) + σ² φ*ᵀ (M + ρI)⁻¹ φ*``,

non-negative terms that do not cancel (``s K̂(x*, x*) = s``; ``1 − ‖φ*‖²`` is the part of a
new point alone in a cluster), and two new points' covariance is ``σ² φ_iᵀ (M + ρI)⁻¹ φ_j``.

- ``"exact"``: one CG solve per point (blocks of points in parallel, in the core): for
  ``φ*ᵀ (M + ρI)⁻¹ φ*`` in the clusters' space when there are at most as many clusters as
  training points, else for ``k*ᵀ A⁻¹ k*`` in the training points' space, run until the
  cancellation in ``s + σ² − k*ᵀ A⁻¹ k*`` costs at most a relative ``tol``.
- ``"lanczos"`` (LOVE, Pleiss et al. 2018): one block Lanczos decomposition of ``M`` of
  dimension ``variance_rank`` serves every point. Two Galerkin approximations on its Krylov
  space bracket the exact variance: LOVE's own (on ``k*ᵀ A⁻¹ k*`` over the training points'
  Krylov space ``D Φ P``) from above, the one on ``φ*ᵀ (M + ρI)⁻¹ φ*`` over ``P`` from below.
  The estimator returns the upper bound (never optimistic); both close as the rank grows and
  meet once the space holds every ``φ*``. See ``mondrian_learn``'s ``partition::variance``
  for the derivations.

The decomposition starts from the clusters' sizes (LOVE's start, the mean of the training
points' kernel columns, in the clusters' space) and ``block − 1`` random multiples of them:
a block of 16 columns reads the labels once per product, so the same rank costs a quarter
of the time of one column at a time (measured: the bounds depend on the dimension, not on
the block).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mondrian_learn._validation import Options
from mondrian_learn.partition._samplers import FRESH

#: The routes of ``variance``.
VARIANCE: list[Any] = [Options({"lanczos", "exact"})]

#: Columns of the block Lanczos decomposition.
BLOCK = 16


def feature_norms(labels: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``‖φ*‖²`` of each new point: its squared weights over the partitions where it shares a
    cluster with training points, over m (1 for a point placed in every partition)."""
    shared = labels != FRESH
    squares = shared if weights is None else np.where(shared, weights**2, 0.0)
    # Partition by partition, so that a point's value does not depend on the points beside
    # it (numpy sums a single column pairwise, several columns row by row).
    total = np.zeros(labels.shape[1])
    for row in squares:
        total += row
    return total / labels.shape[0]


def lanczos_start(sizes: np.ndarray, rank: int, seed: int) -> np.ndarray:
    """The ``C × b`` start (``b = min(BLOCK, rank)``): the clusters' sizes, then sizes times
    independent standard normal draws."""
    block = min(BLOCK, rank, len(sizes))
    noise = np.random.default_rng(seed).standard_normal((len(sizes), block - 1))
    return np.ascontiguousarray(np.column_stack([sizes, sizes[:, None] * noise]))


def lanczos_upper_variances(upper_rows: np.ndarray, signal: float, noise: float) -> np.ndarray:
    """The ``"lanczos"`` route's predictive variances (LOVE's, the upper bound) from the new
    points' rows of the upper factor: ``s + σ² − ‖row‖²`` (unclipped)."""
    return signal + noise - np.einsum("ij,ij->i", upper_rows, upper_rows)


def lanczos_variances_from_rows(
    upper_rows: np.ndarray,
    lower_rows: np.ndarray,
    norms: np.ndarray,
    signal: float,
    noise: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the new points' predictive variances from their rows of
    the two LOVE factors (each point's gather: the mean over partitions of its clusters'
    rows, weighted) and ``‖φ*‖²``."""
    upper = lanczos_upper_variances(upper_rows, signal, noise)
    lower = noise + signal * (1.0 - norms) + noise * np.einsum("ij,ij->i", lower_rows, lower_rows)
    # Rounding only: the bracket holds exactly in exact arithmetic.
    return np.minimum(lower, upper), upper
