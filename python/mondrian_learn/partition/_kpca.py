"""Kernel PCA with a random partition kernel (Davies & Ghahramani 2014, §5.3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from mondrian_learn._base import EstimatorBase, document, restore_on_failure, store_parameters
from mondrian_learn._validation import COUNT, POSITIVE, RUNTIME, SCALING, Integer, Param
from mondrian_learn.partition._base import PartitionKernelEstimator
from mondrian_learn.partition._operator import LocalOperator, fit_eigenpairs
from mondrian_learn.partition._samplers import SAMPLING, check_training_data


class PartitionKernelPCA(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, PartitionKernelEstimator
):
    """Kernel PCA on a random partition kernel in O(m N) per block product.

    The top ``n_components`` eigenpairs ``(λ_j, u_j)`` of the centred kernel
    ``K̃ = H K̂ H`` (``H = I − 11ᵀ/N``; centring applied matrix-free, never forming ``K̂``) come
    from restarted block Lanczos with full reorthogonalisation (in the compiled core): each
    cycle builds a block Krylov
    basis of ``krylov_depth`` blocks of ``block_size`` vectors, every block product reading the
    partition labels once for the whole block. Training scores are ``u_j √λ_j``; a new point
    ``x`` gets ``Σ_i k̃(x, x_i) u_ij / √λ_j`` with ``k̃`` the kernel centred in feature space
    (as scikit-learn's ``KernelCenterer``).

    Parameters
    ----------
    n_components : int, default=5
        Number of principal components.
    sampler : str, sampler object or callable, default="mondrian"
        See :class:`RandomPartitionKernel`.
    n_partitions : int, default=100
        Number m of random partitions.
    block_size : int or None, default=None
        Lanczos block size (≥ 1); None: ``max(n_components + 5, 2 n_components)``.
    krylov_depth : int, default=6
        Blocks per Lanczos cycle (the basis holds ``krylov_depth · block_size`` vectors).
    tol : float, default=1e-6
        An eigenpair has converged when its residual ``‖K̃u − λu‖ ≤ tol · λ_1``.
    max_restarts : int, default=50
        Most restarts of the block Lanczos iteration.
    scale_features, random_state, n_jobs
        As for :class:`RandomPartitionKernel`; results are identical for any ``n_jobs``.
    verbose : int, default=0
        Report each stage of the fit (sampling, solves) with its time on stderr.

    Attributes
    ----------
    kernel_ : RandomPartitionKernel
    eigenvalues_ : ndarray of shape (n_components,)
        Of ``K̃``, decreasing (scikit-learn's ``KernelPCA.eigenvalues_``).
    eigenvectors_ : ndarray of shape (n_samples, n_components)
        Unit eigenvectors (sign: largest entry positive).
    explained_variance_ : ndarray of shape (n_components,)
        Variance of each component's training scores, ``λ_j / N``.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``λ_j / tr(K̃)``, with ``tr(K̃) = N − 1ᵀK̂1/N`` (``k̂(x, x) = 1``).
    n_products_ : int
        Block products used by Lanczos.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.partition import PartitionKernelPCA, MondrianPartitions
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> pca = PartitionKernelPCA(2, sampler=MondrianPartitions(lifetime=0.5), random_state=0)
    >>> Z = pca.fit_transform(X)
    >>> Z.shape
    (400, 2)
    >>> bool(np.allclose(pca.transform(X[:5]), Z[:5]))
    True
    """

    _parameters = {
        "n_components": Param(5, *COUNT),
        **SAMPLING,
        "block_size": Param(None, None, *COUNT),
        "krylov_depth": Param(6, *COUNT),
        "tol": Param(1e-6, *POSITIVE),
        "max_restarts": Param(50, Integer(low=0)),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_components: int = 5,
        *,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        n_partitions: int = 100,
        block_size: int | None = None,
        krylov_depth: int = 6,
        tol: float = 1e-6,
        max_restarts: int = 50,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y or None")
    def fit(self, X: Any, y: Any = None) -> PartitionKernelPCA:
        """Sample the partitions and compute the top eigenpairs of the centred kernel.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        k = int(self.n_components)
        X, y = check_training_data(self, X, y)
        if k > X.shape[0]:
            raise ValueError(f"n_components={k} exceeds the number of samples {X.shape[0]}")
        rng, stages = self._sample_kernel(X, y)
        operator = LocalOperator(self.kernel_, self._threads())
        self.eigenvectors_ = fit_eigenpairs(self, operator, rng, stages)
        n, values = X.shape[0], self.eigenvalues_
        # Row means of K̂ and their mean: the feature-space centring of new points' kernels.
        self.kernel_row_mean_ = self.kernel_.matmul(np.full(n, 1.0 / n))
        self.kernel_mean_ = float(self.kernel_row_mean_.mean())
        self.explained_variance_ = values / n
        self.explained_variance_ratio_ = values / (n - n * self.kernel_mean_)
        self._n_features_out = k
        return self

    def _coefficients(self) -> np.ndarray:
        """``u_j / √λ_j`` (0 for a non-positive eigenvalue)."""
        root = np.sqrt(np.where(self.eigenvalues_ > 0, self.eigenvalues_, np.inf))
        return self.eigenvectors_ / root

    @document("X")
    def transform(self, X: Any) -> np.ndarray:
        """Project points on the components: ``Σ_i k̃(x, x_i) u_ij / √λ_j``.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Project points on the components: ``Σ_i k̃(x, x_i) u_ij / √λ_j``.
        """
        X = self._fitted_input(X)  # feature names and width checked against this estimator
        coef = self._coefficients()
        n = coef.shape[0]
        block = np.column_stack([coef, np.full(n, 1.0 / n)])
        product = self.kernel_.cross_matmul(X, block)
        kx, row_mean = product[:, :-1], product[:, -1:]
        ones_coef = coef.sum(axis=0)
        return (
            kx
            - row_mean * ones_coef
            - (self.kernel_row_mean_ @ coef)[None, :]
            + self.kernel_mean_ * ones_coef[None, :]
        )

    def fit_transform(self, X: Any, y: Any = None, **params: Any) -> np.ndarray:
        """Fit, then return the training scores ``u_j √λ_j``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points (finite values).
        y : None
            Ignored; present for scikit-learn's API.
        **params : dict
            Ignored; present for scikit-learn's API.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The training points' scores.
        """
        self.fit(X, y)
        return self.eigenvectors_ * np.sqrt(np.maximum(self.eigenvalues_, 0.0))
