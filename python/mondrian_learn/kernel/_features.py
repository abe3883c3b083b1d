"""Random features of the Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh,
UAI 2016, §3)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
from sklearn.utils.validation import validate_data

from mondrian_learn import _core
from mondrian_learn._base import document, restore_on_failure, store_parameters
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    RUNTIME,
    SCALING,
    Param,
)
from mondrian_learn.kernel._base import (
    ColumnFeaturesMixin,
    CorePointsKernelBase,
)
from mondrian_learn.kernel._posterior import to_csr


class MondrianKernelFeatures(ColumnFeaturesMixin, CorePointsKernelBase):
    """Random features of the Mondrian kernel, an approximation of the Laplace kernel.

    ``fit`` samples M Mondrian trees with lifetime λ on the data (each block splits at
    rate equal to its linear dimension until time λ; Balog et al., UAI 2016, §3). The feature
    vector of x has one entry per leaf of every tree: 1/√M in the leaf x falls into (eq. 2), so
    φ(x)·φ(x') is the fraction of trees in which x and x' share a leaf, whose expectation is
    the Laplace kernel exp(−λ‖x − x'‖₁) (Prop. 1).

    Points outside the training data follow the conditional Mondrian process, integrated out
    analytically: a point x is separated from the training points of a node j on its path by
    a cut born while j was alive with probability 1 − exp(−η_j(x) Δτ_j), η_j(x) the distance
    (L1) by which x lies outside j's data box, Δτ_j the time j lived (up to λ for the leaf).
    Its feature in its leaf's column is therefore P(not separated)/√M instead of 1/√M, and 0
    elsewhere (a separated point is alone in a fresh cell, which no training point shares).
    So φ(x)·φ(x') is an unbiased estimate of exp(−λ‖x − x'‖₁) for any x and training x', and
    predictions are expectations over the extension (products of two such test points are
    not unbiased).

    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M (each feature row has exactly M stored entries).
    lifetime : float or None, default=None
        Lifetime λ ≥ 0 (finite), the inverse kernel width, in the units of the scaled
        features (the unit box unless ``scale_features=False``). None: the λ at which a
        Mondrian process on the training data's box has 128 expected cells per tree,
        Π_d (1 + λ r_d) = 128 — about as many feature columns in any dimension, and the same
        λ for a row weighted k and the row repeated k times (``lifetime_``).
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Tree m draws from a stream seeded by (seed, m): results do not depend on ``n_jobs``.
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores).
    verbose : int, default=0
        Report progress while sampling trees.

    Attributes
    ----------
    model_ : mondrian_learn._core.KernelFeatures
        The sampled trees.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box, ``(X − data_min_) / data_scale_`` (identity when
        ``scale_features=False``).
    n_columns_ : int
        Number C of feature columns (leaves over all trees).
    lifetime_ : float
        λ used.
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

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "lifetime": Param(None, None, *FINITE_LIFETIME),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        lifetime: float | None = None,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y ignored")
    def fit(self, X: Any, y: Any = None) -> MondrianKernelFeatures:
        """Sample the trees on ``X``.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        X = validate_data(
            self, X, dtype=list(self._point_dtypes), accept_sparse=self._sparse_formats()
        )
        points = self._fit_unit_box(X)
        self.lifetime_ = lifetime = self._lifetime(X)
        self.model_ = self._sample_trees(
            lambda seed, n_jobs, slice_size, progress: _core.KernelFeatures(
                points, int(self.n_estimators), lifetime, seed, n_jobs, slice_size, progress
            ),
            X.shape[0],
        )
        self.n_columns_ = self.model_.n_columns()
        return self

    @document("X")
    def transform(self, X: Any) -> scipy.sparse.csr_matrix:
        """Features of ``X``: an N × C CSR matrix with M stored entries per row.

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, ``n_columns_``)
            Features of ``X``: an N × C CSR matrix with M stored entries per row.
        """
        X = self._fitted_input(X)
        return to_csr(self.model_.transform(X, self._threads()))
