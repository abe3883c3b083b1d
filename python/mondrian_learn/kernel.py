"""The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, UAI 2016): random
features from Mondrian trees and ridge regression on them, over the Rust core.

:class:`~mondrian_learn.kernel_cv.MondrianKernelRidgeCV` (the lifetime path) lives in
:mod:`mondrian_learn.kernel_cv`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn import _core
from mondrian_learn._progress import progress_callback
from mondrian_learn._validation import as_core_array, draw_seed, is_core_ready, resolve_n_jobs

_EXTENSION_NOTE = """
    Points outside the training data follow the conditional Mondrian process, integrated out
    analytically: a point x is separated from the training points of a node j on its path by
    a cut born while j was alive with probability 1 − exp(−η_j(x) Δτ_j), η_j(x) the distance
    (L1) by which x lies outside j's data box, Δτ_j the time j lived (up to λ for the leaf).
    Its feature in its leaf's column is therefore P(not separated)/√M instead of 1/√M, and 0
    elsewhere (a separated point is alone in a fresh cell, which no training point shares).
    So φ(x)·φ(x') is an unbiased estimate of exp(−λ‖x − x'‖₁) for any x and training x', and
    predictions are expectations over the extension (products of two such test points are
    not unbiased).
"""


def check_count(name: str, value: object) -> int:
    """``value`` as an int >= 1, else a ValueError naming ``name``."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_lifetime(name: str, value: object) -> float:
    """``value`` as a finite float >= 0, else a ValueError naming ``name``."""
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_alpha(value: object) -> float:
    """The ridge parameter as a finite float > 0, else a ValueError."""
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"alpha must be a finite number > 0, got {value!r}")
    return float(value)


def to_csr(parts: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> scipy.sparse.csr_matrix:
    """The core's (data, indices, indptr, n_columns) as a scipy CSR matrix (no copy)."""
    data, indices, indptr, n_columns = parts
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_columns))


class MondrianKernelFeatures(TransformerMixin, BaseEstimator):
    """Random features of the Mondrian kernel, an approximation of the Laplace kernel.

    ``fit`` samples M Mondrian trees with lifetime λ on the data (each block splits at
    rate equal to its linear dimension until time λ; Balog et al., UAI 2016, §3). The feature
    vector of x has one entry per leaf of every tree: 1/√M in the leaf x falls into (eq. 2), so
    φ(x)·φ(x') is the fraction of trees in which x and x' share a leaf, whose expectation is
    the Laplace kernel exp(−λ‖x − x'‖₁) (Prop. 1).
    """

    __doc__ += (
        _EXTENSION_NOTE
        + """
    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M (each row has exactly M stored entries).
    lifetime : float, default=1.0
        Lifetime λ, the inverse kernel width, in the units of X.
    random_state : int, RandomState or None, default=None
        Tree m draws from a stream seeded by (seed, m): results do not depend on ``n_jobs``.
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores).
    verbose : int, default=0
        Report progress while sampling trees.

    Attributes
    ----------
    features_ : mondrian_learn._core.KernelFeatures
        The sampled trees.
    n_columns_ : int
        Number C of feature columns (leaves over all trees).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianKernelFeatures
    >>> X = np.random.default_rng(0).uniform(size=(500, 2))
    >>> Z = MondrianKernelFeatures(n_estimators=200, lifetime=2.0, random_state=0).fit_transform(X)
    >>> Z.shape[0], int(Z.getnnz(axis=1).max())
    (500, 200)
    >>> k = (Z[0] @ Z[1].T).toarray()[0, 0]
    >>> bool(abs(k - np.exp(-2.0 * np.abs(X[0] - X[1]).sum())) < 0.15)
    True
    """
    )

    def __init__(
        self,
        n_estimators: int = 50,
        lifetime: float = 1.0,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None) -> MondrianKernelFeatures:
        """Sample the trees on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : MondrianKernelFeatures
        """
        n_trees = check_count("n_estimators", self.n_estimators)
        lifetime = check_lifetime("lifetime", self.lifetime)
        n_jobs = resolve_n_jobs(self.n_jobs)
        X = validate_data(self, X, dtype=np.float64)
        update, close = progress_callback(n_trees, "trees", self.verbose)
        try:
            self.features_ = _core.KernelFeatures(
                as_core_array(X),
                n_trees,
                lifetime,
                draw_seed(self.random_state),
                n_jobs,
                n_trees if not self.verbose else 4 * n_jobs,
                update if self.verbose else None,
            )
        finally:
            close()
        self.n_columns_ = self.features_.n_columns()
        return self

    def transform(self, X: Any) -> scipy.sparse.csr_matrix:
        """Features of ``X``: an N × C CSR matrix with M stored entries per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, n_columns_)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return to_csr(self.features_.transform(as_core_array(X), resolve_n_jobs(self.n_jobs)))


class MondrianKernelRidge(RegressorMixin, BaseEstimator):
    """Ridge regression on Mondrian kernel features, batch or online.

    Primal ridge / Bayesian linear regression (Balog et al., UAI 2016, §4): with Φ the N × C
    feature matrix and ȳ the mean target, the weights solve (ΦᵀΦ + αI) w = Φᵀ(y − ȳ) by a
    Cholesky factor of the C × C matrix, the only C × C object kept; predictions are
    ȳ + φ(x)·w. ``partial_fit`` extends the trees by the conditional Mondrian (§5): new leaves
    become new columns, zero for the old rows, and each new row is a rank-one update of the
    factor, so the result equals a batch fit on the same trees.

    The log marginal likelihood (``log_marginal_likelihood_``) is that of the Bayesian view
    w ~ N(0, σ²/α I), y − ȳ ~ N(Φw, σ²I), with σ² at its maximum-likelihood value
    σ̂² = (‖y − ȳ‖² − ‖z‖²)/N, z = L⁻¹Φᵀ(y − ȳ), L the Cholesky factor:
    log p = −N/2 log(2πσ̂²) − N/2 + C/2 log α − 1/2 log det(ΦᵀΦ + αI).
    """

    __doc__ += (
        _EXTENSION_NOTE
        + """
    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M.
    lifetime : float, default=1.0
        Lifetime λ (inverse kernel width) in the units of X.
    alpha : float, default=1e-4
        Ridge parameter δ² (the paper's experiments use 1e-4).
    random_state : int, RandomState or None, default=None
    n_jobs : int or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    model_ : mondrian_learn._core.KernelRidge
        Trees, feature columns, Cholesky factor and weights.
    n_columns_ : int
        Number C of feature columns.
    intercept_ : float
        ȳ.
    log_marginal_likelihood_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianKernelRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); y = np.sin(4 * X[:, 0]) + X[:, 1]
    >>> model = MondrianKernelRidge(lifetime=5.0, random_state=0).fit(X[:300], y[:300])
    >>> model = model.partial_fit(X[300:], y[300:])
    >>> bool(np.sqrt(np.mean((model.predict(X) - y) ** 2)) < 0.1)
    True
    """
    )

    def __init__(
        self,
        n_estimators: int = 50,
        lifetime: float = 1.0,
        alpha: float = 1e-4,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.alpha = alpha
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X: Any, y: Any) -> MondrianKernelRidge:
        """Sample the trees on ``X`` and solve for the weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : MondrianKernelRidge
        """
        n_trees = check_count("n_estimators", self.n_estimators)
        lifetime = check_lifetime("lifetime", self.lifetime)
        alpha = check_alpha(self.alpha)
        n_jobs = resolve_n_jobs(self.n_jobs)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        update, close = progress_callback(n_trees, "trees", self.verbose)
        try:
            self.model_ = _core.KernelRidge(
                as_core_array(X),
                as_core_array(y),
                n_trees,
                lifetime,
                alpha,
                draw_seed(self.random_state),
                n_jobs,
                n_trees if not self.verbose else 4 * n_jobs,
                update if self.verbose else None,
            )
        finally:
            close()
        return self

    def partial_fit(self, X: Any, y: Any) -> MondrianKernelRidge:
        """Add points: extend the trees, append new columns, rank-one updates (§5).

        The first call on an unfitted estimator is ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : MondrianKernelRidge
        """
        if not hasattr(self, "model_"):
            return self.fit(X, y)
        if not is_core_ready(X, y, self.n_features_in_) or hasattr(self, "feature_names_in_"):
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        self.model_.partial_fit(as_core_array(X), as_core_array(y), resolve_n_jobs(self.n_jobs))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """ȳ + φ(x)·w for every row (out-of-box points: see the class notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.model_.predict(as_core_array(X), resolve_n_jobs(self.n_jobs))

    @property
    def n_columns_(self) -> int:
        """Number C of feature columns."""
        check_is_fitted(self)
        return int(self.model_.n_columns)

    @property
    def intercept_(self) -> float:
        """ȳ, the mean training target."""
        check_is_fitted(self)
        return float(self.model_.intercept)

    @property
    def log_marginal_likelihood_(self) -> float:
        """log p(y) with the noise variance profiled out (class notes)."""
        check_is_fitted(self)
        return float(self.model_.log_marginal_likelihood)
