"""Ridge regression on Mondrian kernel features, batch or online (Balog et al., UAI 2016,
§4–5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn import _core
from mondrian_learn._base import OnlineMixin, document, restore_on_failure, store_parameters, warn
from mondrian_learn._points import as_core_array
from mondrian_learn._targets import weighted_targets
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    POSITIVE,
    RUNTIME,
    SCALING,
    Param,
)
from mondrian_learn.kernel._base import (
    CorePointsKernelBase,
    RidgePredictMixin,
)

#: A first ``partial_fit`` with fewer rows chooses ``lifetime=None``'s value from too little.
FEW_FIRST_ROWS = 32


class MondrianKernelRidge(RegressorMixin, RidgePredictMixin, OnlineMixin, CorePointsKernelBase):
    """Ridge regression on Mondrian kernel features, batch or online.

    Primal ridge / Bayesian linear regression (Balog et al., UAI 2016, §4): with Φ the N × C
    feature matrix and ȳ the mean target, the weights solve (ΦᵀΦ + αI) w = Φᵀ(y − ȳ) by a
    Cholesky factor of the C × C matrix, the only C × C object kept; predictions are
    ȳ + φ(x)·w. With ``sample_weight`` v, row i's noise is σ²/v_i (an integer weight is the
    row repeated): A = ΦᵀVΦ + αI, ȳ the weighted mean, and the evidence gains ½ Σ log v_i.
    ``partial_fit`` extends the trees by the conditional Mondrian (§5): new leaves
    become new columns, zero for the old rows, and each new row is a rank-one update of the
    factor, so the result equals a batch fit on the same trees.

    The log marginal likelihood (``log_marginal_likelihood_value_``, as scikit-learn's
    ``GaussianProcessRegressor``) is that of the Bayesian view
    w ~ N(0, σ²/α I), y − ȳ ~ N(Φw, σ²I), with σ² at its maximum-likelihood value
    σ̂² = (‖y − ȳ‖² − ‖z‖²)/N, z = L⁻¹Φᵀ(y − ȳ), L the Cholesky factor:
    log p = −N/2 log(2πσ̂²) − N/2 + C/2 log α − 1/2 log det(ΦᵀΦ + αI).

    Points outside the training data are read as :class:`MondrianKernelFeatures` reads them:
    through the conditional Mondrian process, integrated out analytically.

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
    alpha : float, default=1.0
        Ridge penalty δ² > 0: the prior precision of the weights relative to the noise,
        σ²/α per weight. With K = ΦΦᵀ ≈ the Laplace kernel (K(x, x) = 1), α plays the
        noise-to-signal ratio of a GP; 1 (scikit-learn's ``KernelRidge`` default) cross-validated
        best among 1e-4, 1e-2 and 1 on 8 data sets. The paper's
        experiments use 1e-4, which interpolates noisy targets.
    max_dense_features : int, default=4096
        Largest number of feature columns C for the dense C × C factor (memory ∝ C², time
        ∝ C³); more raise a ``ValueError`` before the factor is allocated, saying what to
        change (:class:`MondrianKernelRidgeCV` switches to conjugate gradients instead).
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds the trees (identical results for any ``n_jobs``).
    n_jobs : int or None, default=None
        Threads (None: 1, −1: all cores; at most the CPUs).
    verbose : int, default=0
        Show the progress of the tree sampling.

    Attributes
    ----------
    model_ : mondrian_learn._core.KernelRidge
        Trees, feature columns, Cholesky factor and weights.
    n_columns_ : int
        Number C of feature columns.
    lifetime_ : float
        λ used.
    intercept_ : float
        ȳ.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    log_marginal_likelihood_value_ : float
        log p(y) at the fitted α, σ² profiled (see above).
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

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "lifetime": Param(None, None, *FINITE_LIFETIME),
        "alpha": Param(1.0, *POSITIVE),
        "max_dense_features": Param(4096, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        lifetime: float | None = None,
        alpha: float = 1.0,
        max_dense_features: int = 4096,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y", "sample_weight")
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MondrianKernelRidge:
        """Sample the trees on ``X`` (the rows of positive weight) and solve for the weights
        (rows weighted: A = ΦᵀVΦ + αI, ȳ the weighted mean; class notes).

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        X, y = validate_data(
            self,
            X,
            y,
            dtype=list(self._point_dtypes),
            accept_sparse=self._sparse_formats(),
            y_numeric=True,
        )
        X, y, weights, _ = weighted_targets(X, y, sample_weight)
        points, y = self._fit_unit_box(X), as_core_array(y)
        self.lifetime_ = lifetime = self._lifetime(X)
        self.model_ = self._sample_trees(
            lambda seed, n_jobs, slice_size, progress: _core.KernelRidge(
                points,
                y,
                int(self.n_estimators),
                lifetime,
                float(self.alpha),
                seed,
                n_jobs,
                slice_size,
                progress,
                int(self.max_dense_features),
                weights,
            ),
            X.shape[0],
        )
        return self

    @restore_on_failure
    @document("X", "y", "sample_weight")
    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> MondrianKernelRidge:
        """Add points online: the trees are extended by the conditional Mondrian and each
        new row is a rank-one update of the factor (of √v φ with a weight v), so the result
        equals a batch fit on the same trees. The first call on an unfitted estimator is
        ``fit``; with ``lifetime=None`` it chooses the lifetime and the map to the unit box
        from that call's rows, kept afterwards (a warning says so when they are fewer than
        32: from one row the lifetime is 0, one cell per tree).

        Returns
        -------
        self : object
            The estimator itself.
        """
        first = not hasattr(self, "model_")
        self._update(X, y, sample_weight)
        if first and self.lifetime is None and self.model_.n_rows < FEW_FIRST_ROWS:
            warn(
                f"partial_fit chose lifetime_={self.lifetime_:.3g} and the map to the unit "
                f"box from the first {self.model_.n_rows} rows, and keeps them: pass a "
                "lifetime (in unit-box units) or fit on more rows first",
                UserWarning,
            )
        return self

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
    def log_marginal_likelihood_value_(self) -> float:
        """log p(y) with the noise variance profiled out (class notes)."""
        check_is_fitted(self)
        return float(self.model_.log_marginal_likelihood)
