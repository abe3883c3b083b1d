"""The m-approximate random partition kernel (Davies & Ghahramani 2014, §3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from mondrian_learn import _core
from mondrian_learn._base import EstimatorBase, document, restore_on_failure, store_parameters
from mondrian_learn._memory import check_memory
from mondrian_learn._points import as_core_array, check_dense_memory
from mondrian_learn._progress import StageTimer
from mondrian_learn._unit_box import UnitBoxMixin
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    RUNTIME,
    SCALING,
    Options,
    check_parameter,
    draw_seed,
)
from mondrian_learn.partition._samplers import (
    FRESH,
    SAMPLING,
    CallablePartitions,
    assign_by_rules,
    check_training_data,
    resolve_sampler,
)

#: The preconditioners of :meth:`RandomPartitionKernel.solve`.
PRECONDITIONER: list[Any] = [Options.of_core("preconditioner")]


def as_block(V: Any, n: int, name: str = "V") -> tuple[np.ndarray, bool]:
    """``V`` as a C-ordered float64 (n, k) block, and whether it was one-dimensional."""
    V = np.asarray(V, dtype=np.float64)
    vector = V.ndim == 1
    V = V.reshape(-1, 1) if vector else V
    if V.ndim != 2 or V.shape[0] != n or V.shape[1] == 0:
        raise ValueError(f"{name} must have shape ({n},) or ({n}, k), got {np.shape(V)}")
    if not np.isfinite(V).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return as_core_array(V), vector


class RandomPartitionKernel(UnitBoxMixin):
    """``k̂(a, b)``: the fraction of ``m`` random partitions that put ``a`` and ``b`` in the
    same cluster (Davies & Ghahramani 2014, equations 4–5), never formed as a matrix.

    ``fit`` draws the partitions of the training points and stores them as ``m`` label
    vectors (``u32``). A product ``K̂ V`` costs O(m N) per column of ``V``: per partition, sum
    ``V``'s rows within each cluster, then give each point its cluster's sum; the columns of a
    block share one read of the labels. Results are identical for any ``n_jobs``.

    X may be a scipy sparse matrix. The samplers read the training points' coordinates (cuts
    in their boxes, centres, a forest's splits), so ``fit`` holds them dense once (the memory
    of the same points given dense; refused by name beyond the machine's); the core labels
    new points a block of rows at a time, never dense whole (a callable sampler's rule gets
    them dense, as the sampler got the training points). Results equal those on the same
    values given dense.

    Parameters
    ----------
    sampler : {"mondrian", "random_forest", "fast_cluster"}, sampler object or callable, \
default="mondrian"
        The distribution over partitions: :class:`.MondrianPartitions`,
        :class:`.RandomForestPartitions`, :class:`.FastClusterPartitions`,
        :class:`.CallablePartitions`, or a bare callable ``f(X, y, rng) -> rule``.
    n_partitions : int, default=100
        Number m of random partitions.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
        Samplers see the scaled points, dense (a callable sampler and its rule as one
        float64 array).
    random_state : int, RandomState or None, default=None
        Partition ρ draws from a stream derived from ``(seed, ρ)``.
    n_jobs : int or None, default=None
        Threads (None: 1, −1: all cores).
    verbose : int, default=0
        Report the sampling stage with its time on stderr.

    Attributes
    ----------
    model_ : mondrian_learn._core.PartitionKernel
        The labels and the rule for new points, held by Rust.
    n_clusters_ : ndarray of shape (n_partitions,)
        Clusters per partition.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.partition import RandomPartitionKernel, MondrianPartitions
    >>> X = np.random.default_rng(0).uniform(size=(500, 2))
    >>> kernel = RandomPartitionKernel(MondrianPartitions(lifetime=3.0), n_partitions=2000,
    ...                                random_state=0).fit(X)
    >>> K = kernel.kernel_matrix(X[:2])  # K̂(X[:2], X): close to exp(−3 ‖a − b‖₁)
    >>> bool(abs(K[0, 1] - np.exp(-3 * np.abs(X[0] - X[1]).sum())) < 0.05)
    True
    """

    _parameters = {**SAMPLING, **SCALING, **RUNTIME}

    def __init__(
        self,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        *,
        n_partitions: int = 100,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    _accepts_sparse = True

    @restore_on_failure
    @document("X", "y or None")
    def fit(self, X: Any, y: Any = None) -> RandomPartitionKernel:
        """Draw ``n_partitions`` partitions of ``X`` (``y`` is used by supervised samplers).

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        m, n_jobs = int(self.n_partitions), self._threads()
        sampler = resolve_sampler(self.sampler)
        stages = StageTimer(self.verbose, type(self).__name__)
        X, y = check_training_data(self, X, y)
        check_memory(
            "n_partitions",
            m,
            4.0 * m * X.shape[0],
            "a 4-byte cluster label per point and partition",
        )
        seed = draw_seed(self.random_state)
        if sp.issparse(X):  # every sampler reads the training points' rows dense
            check_dense_memory(X)
        self._fix_unit_box(X)
        for name in ("rules_", "uniques_"):  # from an earlier fit with a callable sampler
            self.__dict__.pop(name, None)
        if isinstance(sampler, CallablePartitions):
            self.model_, self.rules_, self.uniques_ = sampler._sample(self, X, y, m, seed, n_jobs)
        else:
            self.model_ = sampler._sample(self, X, y, m, seed, n_jobs)
        stages.done(f"sampled {m} partitions")
        return self

    @property
    def n_clusters_(self) -> np.ndarray:
        check_is_fitted(self)
        return self.model_.n_clusters().astype(np.intp)

    @property
    def n_points_(self) -> int:
        """Number of training points."""
        check_is_fitted(self)
        return int(self.model_.n_points)

    def assign(self, X: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """Cluster of every point of ``X`` in every partition.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points (finite values); the core reads a sparse matrix a block of rows at a
            time.

        Returns
        -------
        labels : ndarray of shape (n_partitions, n_samples), dtype uint32
            Cluster ids; ``FRESH`` (2³² − 1) for a point alone in its cluster.
        weights : ndarray of the same shape or None
            Probability that the point shares its cluster (Mondrian sampler), None when 1.
        """
        check_is_fitted(self)
        X = self._check_input(X)
        if hasattr(self, "rules_"):
            return assign_by_rules(self.rules_, self.uniques_, self._mapped_array(X)), None
        return self.model_.assign(self._to_unit_box(X), self._threads())

    def matmul(self, V: Any) -> np.ndarray:
        """``K̂ V`` over the training points.

        Parameters
        ----------
        V : array-like of shape (n_train,) or (n_train, k)
            Vector(s) indexed by the training points.

        Returns
        -------
        KV : ndarray shaped like ``V``
            The product.
        """
        check_is_fitted(self)
        V, vector = as_block(V, self.n_points_)
        out = self.model_.matmul(V, self._threads())
        return out[:, 0] if vector else out

    def cross_matmul(self, X: Any, V: Any) -> np.ndarray:
        """``K̂(X, X_train) V``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points (finite values).
        V : array-like of shape (n_train,) or (n_train, k)
            Vector(s) indexed by the training points.

        Returns
        -------
        KV : ndarray of shape (n_samples,) or (n_samples, k)
            The product.
        """
        labels, weights = self.assign(X)
        V, vector = as_block(V, self.n_points_)
        out = self.model_.cross_matmul(labels, weights, V, self._threads())
        return out[:, 0] if vector else out

    def kernel_matrix(self, X: Any = None) -> np.ndarray:
        """Dense ``K̂(X, X_train)`` (``K̂(X_train, X_train)`` when ``X`` is None), for small
        problems and checks: O(n · n_train) memory.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or None, \
default=None
            Points (finite values); None: the training points.

        Returns
        -------
        K : ndarray of shape (n_samples, n_train)
            The kernel estimates.
        """
        check_is_fitted(self)
        if X is None:
            return self.matmul(np.eye(self.n_points_))
        labels, weights = self.assign(X)
        return self.model_.cross_columns(labels, weights, self._threads()).T.copy()

    def features(self, X: Any = None) -> sp.csr_matrix:
        """Sparse one-hot features ``φ`` with ``φ(a)·φ(b) = k̂(a, b)``: one column per cluster
        of every partition, value ``1/√m`` (times the weight for new points), so a linear
        model on them is a kernel machine with ``k̂``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or None
            None: the training points.

        Returns
        -------
        phi : scipy.sparse.csr_matrix of shape (n_samples, total clusters)
            The indicator features.
        """
        check_is_fitted(self)
        offsets = self.model_.cluster_offsets().astype(np.int64)
        m = int(self.model_.n_partitions)
        if X is None:
            labels, weights = self.model_.labels(), None
        else:
            labels, weights = self.assign(X)
        n = labels.shape[1]
        # Rows in point order: (n, m) before masking out points alone in their cluster.
        cols_nm = labels.T.astype(np.int64) + offsets[None, :-1]
        mask_nm = labels.T != FRESH
        columns = cols_nm[mask_nm]
        values = np.full(columns.shape, 1 / np.sqrt(m))
        if weights is not None:
            values = values * weights.T[mask_nm]
        indptr = np.concatenate([[0], np.cumsum(mask_nm.sum(axis=1))])
        return sp.csr_matrix((values, columns, indptr), shape=(n, int(offsets[-1])))

    def solve(
        self,
        B: Any,
        noise_variance: float,
        signal_variance: float = 1.0,
        preconditioner: str = "partition",
        tol: float = 1e-6,
        max_iter: int = 1000,
        sample_weight: np.ndarray | None = None,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Solve ``(s K̂ + σ² I) A = B`` by preconditioned conjugate gradients (``(s K̂ +
        σ² V⁻¹) A = B`` with row weights V).

        Parameters
        ----------
        B : array-like of shape (n_train,) or (n_train, k)
            Right-hand sides.
        noise_variance, signal_variance : float
            σ² > 0 and s > 0 (finite).
        preconditioner : {"partition", "jacobi", "none"}, default="partition"
            "partition": ``(1/m) Σ_ρ (s K_ρ + σ² I)⁻¹`` (eq. 9), each inverse in closed form
            (eq. 10, Sherman–Morrison per cluster); "jacobi": the diagonal, which is
            ``s + σ²`` everywhere for a partition kernel, so it runs exactly like "none".
        tol : float, default=1e-6
            Stop a column when ``‖b − A x‖ ≤ tol ‖b‖`` (tol > 0).
        max_iter : int, default=1000
            At least 1.
        sample_weight : ndarray of shape (n_train,) or None, default=None
            Positive row weights v: point i's noise is σ²/v_i. Solved as
            ``A = D (s D K̂ D + σ² I)⁻¹ D B`` with ``D = diag(√v)``, a symmetric system with the
            same preconditioner (the clusters' weights replace their sizes); ``tol`` and the
            reported residuals refer to that system.

        Returns
        -------
        A : ndarray, shaped like ``B``
            The solutions.
        info : dict
            ``iterations``, ``residual`` (relative) and ``converged`` per column.
        """
        check_is_fitted(self)
        for name, value, constraints in [
            ("noise_variance", noise_variance, POSITIVE),
            ("signal_variance", signal_variance, POSITIVE),
            ("preconditioner", preconditioner, PRECONDITIONER),
            ("tol", tol, POSITIVE),
            ("max_iter", max_iter, COUNT),
        ]:
            check_parameter(name, value, constraints)
        B, vector = as_block(B, self.n_points_, "B")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (self.n_points_,):
                raise ValueError(
                    f"sample_weight must have shape ({self.n_points_},), got {sample_weight.shape}"
                )
        root = None if sample_weight is None else np.sqrt(sample_weight)[:, None]
        x, iterations, residual, converged = _core.solve(
            self.model_,
            B if root is None else as_core_array(root * B),
            float(signal_variance),
            float(noise_variance),
            preconditioner,
            float(tol),
            int(max_iter),
            self._threads(),
            None if sample_weight is None else as_core_array(sample_weight),
        )
        if root is not None:
            x = root * x
        info = {"iterations": iterations, "residual": residual, "converged": converged}
        return (x[:, 0] if vector else x), info
