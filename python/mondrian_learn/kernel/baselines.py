"""The peers the Mondrian kernel is compared with (Balog et al., UAI 2016, §6): random
Fourier features and random binning for the Laplace kernel (Rahimi & Recht, NIPS 2007) and
exact Laplace kernel ridge regression. Users comparing kernels need them; the benchmarks use
them. Like every estimator of the package they map X to the unit
box first unless ``scale_features=False``: ``lifetime`` means the same everywhere."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist
from sklearn.base import ClassNamePrefixFeaturesOutMixin, RegressorMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from mondrian_learn._base import document, restore_on_failure, store_parameters
from mondrian_learn._memory import check_memory
from mondrian_learn._targets import check_target_scale
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    POSITIVE,
    RUNTIME,
    SCALING,
    Param,
    RealArray,
)
from mondrian_learn.kernel._base import MappedArrayMixin
from mondrian_learn.kernel._cells import CellIndicatorFeatures


class LaplaceFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, MappedArrayMixin):
    """Random Fourier features of the Laplace kernel exp(−λ‖x − x'‖₁) (Rahimi & Recht 2007).

    The kernel is a product over dimensions of exp(−λ|δ_d|), whose Fourier transform is the
    Cauchy density with scale λ: frequencies ω_m have independent Cauchy(0, λ) coordinates,
    and z(x) = [cos(ω_m·x), sin(ω_m·x)]_m / √M gives z(x)·z(x') = mean_m cos(ω_m·(x − x')),
    an unbiased estimate of the kernel.

    Parameters
    ----------
    n_components : int, default=50
        Number of frequencies M (2M dense features).
    lifetime : float, default=1.0
        λ ≥ 0, the inverse kernel width, in the units of the scaled features.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds the random draws.

    Attributes
    ----------
    frequencies_ : ndarray of shape (n_features, n_components)
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.kernel.baselines import LaplaceFourierFeatures
    >>> X = np.random.default_rng(0).uniform(size=(3, 2))
    >>> LaplaceFourierFeatures(n_components=10, random_state=0).fit_transform(X).shape
    (3, 20)
    """

    _parameters = {
        "n_components": Param(50, *COUNT),
        "lifetime": Param(1.0, *FINITE_LIFETIME),
        **SCALING,
        "random_state": RUNTIME["random_state"],
    }

    def __init__(
        self,
        n_components: int = 50,
        *,
        lifetime: float = 1.0,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y ignored")
    def fit(self, X: Any, y: Any = None) -> LaplaceFourierFeatures:
        """Draw the frequencies.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        m, lifetime = int(self.n_components), float(self.lifetime)
        X = self._fit_unit_box(validate_data(self, X, dtype=np.float64))
        check_memory("n_components", m, 8.0 * m * (X.shape[1] + 2 * X.shape[0]), "ω and Z")
        rng = check_random_state(self.random_state)
        with np.errstate(over="ignore"):
            frequencies = lifetime * rng.standard_cauchy(size=(X.shape[1], m))
        if not np.all(np.isfinite(frequencies)):
            raise ValueError(
                f"lifetime={self.lifetime} is too large: frequencies λ·Cauchy overflow float64"
            )
        self.frequencies_ = frequencies
        return self

    @property
    def _n_features_out(self) -> int:
        """Output width, for ``get_feature_names_out``."""
        return 2 * int(self.frequencies_.shape[1])

    @document("X")
    def transform(self, X: Any) -> np.ndarray:
        """Features [cos(Xω), sin(Xω)] / √M.

        Returns
        -------
        Z : ndarray of shape (n_samples, 2 * n_components)
            Features [cos(Xω), sin(Xω)] / √M.
        """
        X = self._fitted_input(X)
        with np.errstate(over="ignore", invalid="ignore"):
            projection = X @ self.frequencies_
        if not np.all(np.isfinite(projection)):
            raise ValueError(
                "X ω overflows float64: the values of X are too large for these frequencies "
                f"(lifetime={self.lifetime}); rescale X"
            )
        scale = 1.0 / np.sqrt(self.frequencies_.shape[1])
        return np.hstack([np.cos(projection), np.sin(projection)]) * scale


class RandomBinningFeatures(MappedArrayMixin, CellIndicatorFeatures):
    """Random binning features of the Laplace kernel (Rahimi & Recht 2007, §4).

    Each of M grids has, per dimension, a pitch δ_d ~ Gamma(2, scale 1/λ) and a shift
    u_d ~ Uniform[0, δ_d]; a point's bin is (⌈(x_d − u_d)/δ_d⌉)_d. Two points share a bin with
    probability exp(−λ‖x − x'‖₁), so the indicator features of the occupied bins, scaled by
    1/√M, estimate the kernel (the occupied cells are numbered as in
    :class:`.MondrianGridFeatures`).

    Parameters
    ----------
    n_estimators : int, default=50
        Number of grids M.
    lifetime : float, default=1.0
        λ ≥ 0, the inverse kernel width, in the units of the scaled features.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds the random draws.

    Attributes
    ----------
    pitch_, shift_ : ndarray of shape (n_estimators, n_features)
    n_columns_ : int
        Number of occupied bins over all grids.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.kernel.baselines import RandomBinningFeatures
    >>> X = np.random.default_rng(0).uniform(size=(4, 2))
    >>> Z = RandomBinningFeatures(n_estimators=5, random_state=0).fit_transform(X)
    >>> int(Z.getnnz(axis=1).max())
    5
    """

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "lifetime": Param(1.0, *FINITE_LIFETIME),
        **SCALING,
        "random_state": RUNTIME["random_state"],
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        lifetime: float = 1.0,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        store_parameters(self, locals())

    def _bins(self, X: np.ndarray, m: int) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            coordinates = np.ceil((X - self.shift_[m]) / self.pitch_[m])
        # λ = 0 gives infinite pitches: one bin for everything.
        coordinates[~np.isfinite(coordinates)] = 0
        if coordinates.size and np.abs(coordinates).max() >= 2.0**53:
            raise ValueError(
                f"lifetime={self.lifetime} is too large for the range of X: bin indices pass "
                "2^53, beyond which float64 cannot tell neighbouring bins apart; lower lifetime "
                "or rescale X"
            )
        return coordinates.astype(np.int64)

    @restore_on_failure
    @document("X", "y ignored")
    def fit(self, X: Any, y: Any = None) -> RandomBinningFeatures:
        """Draw the grids and number the bins the training points occupy.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        m, lifetime = int(self.n_estimators), float(self.lifetime)
        X = self._fit_unit_box(validate_data(self, X, dtype=np.float64))
        check_memory(
            "n_estimators", m, 8.0 * m * (2 * X.shape[1] + 2 * X.shape[0]), "grids and bins"
        )
        rng = check_random_state(self.random_state)
        scale = np.inf if lifetime == 0 else 1.0 / lifetime
        self.pitch_ = rng.gamma(shape=2.0, scale=scale, size=(m, X.shape[1]))
        self.shift_ = rng.uniform(size=(m, X.shape[1])) * np.where(
            np.isfinite(self.pitch_), self.pitch_, 0.0
        )
        self._number_cells(X, m)
        return self


class LaplaceKernelRidge(RegressorMixin, MappedArrayMixin):
    """Exact kernel ridge regression with the Laplace kernel exp(−λ‖x − x'‖₁), the limit the
    random features approximate: h = (K + αI)⁻¹(y − ȳ), predictions ȳ + K(x, X) h, as the
    Mondrian kernel paper's reference line (targets centred). O(N²) memory, O(N³) time. With
    one lifetime per feature it is the ARD Laplace kernel ``exp(−Σ_d λ_d |x_d − x'_d|)``, the limit
    of the Mondrian grid (Balog's report, ch. 5).

    It is scikit-learn's ``KernelRidge(kernel="laplacian", gamma=lifetime, alpha=alpha)`` fitted
    on the scaled X and ``y − ȳ`` with ȳ added back (tested equal to 1e-10); kept as a small
    class so that the baselines share the Mondrian estimators' ``lifetime`` vocabulary and
    the centring the paper's comparisons use.

    Parameters
    ----------
    lifetime : float or array-like of shape (n_features,), default=1.0
        λ ≥ 0, the inverse kernel width, in the units of the scaled features; one per
        feature for the ARD kernel.
    alpha : float, default=1.0
        Ridge penalty δ² > 0 (as in :class:`.MondrianKernelRidge`).
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,)
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training points, scaled.
    intercept_ : float
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.kernel.baselines import LaplaceKernelRidge
    >>> X = np.linspace(0, 1, 20)[:, None]; y = np.sin(3 * X[:, 0])
    >>> model = LaplaceKernelRidge(lifetime=2.0, alpha=1e-4).fit(X, y)  # noiseless: interpolate
    >>> bool(np.abs(model.predict(X) - y).max() < 1e-2)
    True
    """

    _parameters = {
        "lifetime": Param(1.0, *FINITE_LIFETIME, RealArray(low=0)),
        "alpha": Param(1.0, *POSITIVE),
        **SCALING,
    }

    def __init__(
        self,
        lifetime: float | ArrayLike = 1.0,
        *,
        alpha: float = 1.0,
        scale_features: bool = True,
    ) -> None:
        store_parameters(self, locals())

    def _distances(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Σ_d λ_d |a_d − b_d| between the rows of ``A`` and ``B`` (scaled points)."""
        lifetime = np.asarray(self.lifetime, dtype=np.float64)
        if not lifetime.ndim:
            return float(lifetime) * cdist(A, B, "cityblock")
        if lifetime.shape != (self.n_features_in_,):
            raise ValueError(
                f"lifetime must be a number or {self.n_features_in_} numbers (one per "
                f"feature), got {lifetime.size}"
            )
        # The ARD distance is the plain L1 distance between the points scaled by λ.
        return cdist(A * lifetime, B * lifetime, "cityblock")

    @restore_on_failure
    @document("X", "y")
    def fit(self, X: Any, y: Any) -> LaplaceKernelRidge:
        """Solve for the dual coefficients by a Cholesky factor of K + αI.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        alpha = float(self.alpha)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        check_target_scale(y)
        X = self._fit_unit_box(X)
        gram = np.exp(-self._distances(X, X))
        gram[np.diag_indices_from(gram)] += alpha
        self.intercept_ = float(y.mean())
        factor = scipy.linalg.cho_factor(gram, overwrite_a=True)
        self.dual_coef_ = scipy.linalg.cho_solve(factor, y - self.intercept_)
        self.X_fit_ = X
        return self

    @document("X")
    def predict(self, X: Any) -> np.ndarray:
        """ȳ + K(x, X_fit) h.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ȳ + K(x, X_fit) h.
        """
        X = self._fitted_input(X)
        cross = np.exp(-self._distances(X, self.X_fit_))
        return self.intercept_ + cross @ self.dual_coef_
