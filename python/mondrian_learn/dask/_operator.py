"""The partition kernel's operator and the GP's system with the labels on Dask workers:
the solvers of :mod:`mondrian_learn.partition._operator` run on the clusters' Gram matrix
``M = GᵀG/m`` (``C × C``, ``G`` the rows' one-hot labels), whose products
:meth:`~mondrian_learn.dask._partition.DistributedPartitionKernel.gram` computes on the
workers; the solvers' vectors have a value per cluster and stay on the client."""

from __future__ import annotations

from typing import Any

import numpy as np

from mondrian_learn import _core
from mondrian_learn.dask._partition import DistributedPartitionKernel
from mondrian_learn.partition._marginal_likelihood import ClusterSpaceLikelihood
from mondrian_learn.partition._operator import GaussianSystem, PartitionOperator
from mondrian_learn.partition._variance import lanczos_start


class ClusterOperator(PartitionOperator):
    """``M = GᵀG/m`` of the rows a :class:`DistributedPartitionKernel` labelled: its
    non-zero spectrum is ``K̂``'s, and ``K̂ = G Gᵀ/m`` maps to it by push-through."""

    def __init__(self, rows: DistributedPartitionKernel, n_jobs: int) -> None:
        self.rows, self.n_jobs = rows, n_jobs

    def cluster_sizes(self) -> np.ndarray:
        return self.rows.sizes

    def variance_factors(
        self, rank: int, seed: int, signal: float, noise: float
    ) -> tuple[np.ndarray, np.ndarray]:
        rows = self.rows
        return _core.operator_variance_factors(
            rows.gram,
            lanczos_start(rows.sizes, rank, seed),
            rank,
            seed,
            signal,
            noise,
            rows.n_partitions,
            self.n_jobs,
        )

    def top_eigen(
        self, k: int, block: int, depth: int, tol: float, max_restarts: int, seed: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
        """On ``ΦᵀHΦ = M − g gᵀ/(N m)`` (``Φ = G/√m``, ``g = Gᵀ1``, ``H`` the centring), which
        has the centred kernel's non-zero eigenvalues; the vectors have a value per
        cluster."""
        rows = self.rows
        n, m, g = rows.n_rows, rows.n_partitions, rows.sizes

        def centred(U: np.ndarray) -> np.ndarray:
            return rows.gram(U) - np.outer(g, g @ U) / (n * m)

        return _core.operator_top_eigen(
            centred, rows.n_clusters, k, block, depth, tol, max_restarts, seed, self.n_jobs
        )

    def solve_shifted(
        self, B: np.ndarray, rho: float, tol: float, max_iter: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(M + ρI) X = B`` by CG with Jacobi (the diagonal: the clusters' sizes over m,
        plus ρ), each column to the relative residual ``tol``."""
        rows = self.rows
        return _core.operator_solve(
            lambda U: rows.gram(U) + rho * U,
            B,
            tol,
            max_iter,
            self.n_jobs,
            rows.sizes / rows.n_partitions + rho,
        )


class ClusterSystem(GaussianSystem):
    """The GP's system in the clusters' space: with ``c = Gᵀ(y − ȳ)/m``, the posterior
    mean's coefficients ``u`` solve ``(M + ρI) u = c`` (``ρ = σ²/s``, push-through of
    ``s K̂ (s K̂ + σ² I)⁻¹``), the dual weights of the training points' system being
    ``α = (y − ȳ − G u)/σ²``.

    Parameters
    ----------
    operator : ClusterOperator
        ``M`` of the training rows.
    y : dask.array.Array of shape (N,)
        Targets, chunked like the rows.
    y_mean : float
        ``ȳ``.
    tol, max_iter : float, int
        CG's tolerance on the training points' residual and its iteration cap.
    """

    unknowns = "the clusters' weights"

    def __init__(
        self, operator: ClusterOperator, y: Any, y_mean: float, tol: float, max_iter: int
    ) -> None:
        import dask

        rows = operator.rows
        self.operator, self.tol, self.max_iter = operator, tol, max_iter
        centred = [b - y_mean for b in y.to_delayed()]
        sums = rows.cluster_sums_of([dask.delayed(np.reshape)(b, (-1, 1)) for b in centred])
        self.c = sums[:, 0] / rows.n_partitions
        self.y_norm2 = float(((y - y_mean) ** 2).sum().compute())
        self.has_signal = self.y_norm2 > 0

    def likelihood(self, n_probes: int, steps: int, seed: int) -> ClusterSpaceLikelihood:
        rows, threads = self.operator.rows, self.operator.n_jobs
        return ClusterSpaceLikelihood(
            lambda starts, steps: _core.operator_lanczos(rows.gram, starts, steps, threads),
            self.c,
            self.y_norm2,
            rows.n_rows,
            rows.n_partitions,
            n_probes,
            steps,
            seed,
        )

    def solve(self, signal: float, noise: float) -> tuple[np.ndarray, int, float, bool]:
        """``(M + ρI) u = c`` by CG with Jacobi, to the in-memory estimator's criterion: the
        training points' residual ``r = y − ȳ − (s K̂ + σ² I) α`` of the dual weights ``α``
        that ``u`` implies, ``‖r‖ ≤ tol ‖y − ȳ‖``. That residual is ``−G r_c / ρ`` for the
        clusters' residual ``r_c = c − (M + ρI) u``, so ``‖r‖² = m r_cᵀ M r_c / ρ²``: one
        product per check. CG's own criterion (``‖r_c‖ ≤ tol ‖c‖``) is a different norm, so
        the solve is refined (CG on the residual, its tolerance scaled by the ratio of the
        two norms) until the criterion holds."""
        rows, c, tol = self.operator.rows, self.c, self.tol
        m, rho = rows.n_partitions, noise / signal
        y_norm = np.sqrt(self.y_norm2)
        u, residual, spent = np.zeros_like(c), c.copy(), 0
        relative, inner = np.inf, tol
        for _refinement in range(8):
            relative = np.sqrt(max(m * residual @ rows.gram(residual[:, None])[:, 0], 0.0))
            relative /= rho * max(y_norm, np.finfo(float).tiny)
            norm = np.linalg.norm(residual)
            if relative <= tol or spent >= self.max_iter or norm == 0.0:
                break
            if spent:
                # The clusters' residual that meets tol, from the ratio of the two norms.
                inner = min(0.5, 0.5 * tol / relative)
            step, iterations, _, _ = self.operator.solve_shifted(
                np.ascontiguousarray(residual[:, None]), rho, inner, self.max_iter - spent
            )
            spent += int(iterations[0])
            u = u + step[:, 0]
            residual = c - rows.gram(u[:, None])[:, 0] - rho * u
        return u, spent, float(relative), bool(relative <= tol)

    def quadratic(self, coef: np.ndarray, noise: float) -> float:
        """``(y − ȳ)ᵀ(s K̂ + σ² I)⁻¹(y − ȳ) = (‖y − ȳ‖² − m cᵀu)/σ²`` (push-through)."""
        return (self.y_norm2 - self.operator.rows.n_partitions * float(self.c @ coef)) / noise
