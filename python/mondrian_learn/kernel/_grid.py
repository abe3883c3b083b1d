"""The Mondrian grid (Balog, *The Mondrian Process in Machine Learning*, ch. 5): random features
of the ARD Laplace kernel ``exp(−Σ_d λ_d |x_d − x'_d|)``, a lifetime per dimension."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from mondrian_learn._base import document, restore_on_failure, store_parameters
from mondrian_learn._memory import check_memory
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    RUNTIME,
    SCALING,
    Param,
    RealArray,
)
from mondrian_learn.kernel._base import MappedArrayMixin
from mondrian_learn.kernel._cells import CellIndicatorFeatures


class MondrianGridFeatures(MappedArrayMixin, CellIndicatorFeatures):
    """Mondrian grid features of the ARD Laplace kernel (Balog's report, chapter 5).

    Each of M grids cuts every dimension d by its own 1-D Mondrian (Poisson) process of rate
    λ_d — independent dimensions, a lifetime each, where a Mondrian tree would nest its cuts —
    so two points share a cell with probability Π_d ``exp(−λ_d |x_d − x'_d|)``, and the indicator
    features of the cells the training points occupy, scaled by 1/√M, estimate the ARD Laplace
    kernel ``exp(−Σ_d λ_d |x_d − x'_d|)``. Cuts are drawn inside the training range and, past each
    end, the first cut of the process beyond it (Exp(λ_d) away): a later point farther out
    shares no cell with a training point, and one nearer shares the end cell, each with the
    right probability (tested in and out of the box). A feature with λ_d = 0 is never cut: it
    does not enter the kernel (feature selection by λ_d ≥ ε, report §5.2).

    Parameters
    ----------
    n_estimators : int, default=50
        Number of grids M.
    lifetime : float or array-like of shape (n_features,), default=1.0
        λ_d ≥ 0 per dimension (one number: the same for all), in the units of the scaled
        features.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds the cuts.

    Attributes
    ----------
    lifetimes_ : ndarray of shape (n_features,)
        λ_d used.
    cuts_ : list of list of ndarray
        Per grid, per dimension, the sorted cut positions (scaled units).
    n_columns_ : int
        Number of occupied cells over all grids.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.kernel import MondrianGridFeatures
    >>> X = np.random.default_rng(0).uniform(size=(100, 2))
    >>> grid = MondrianGridFeatures(200, lifetime=[5.0, 0.0], random_state=0).fit(X)
    >>> Z = grid.transform(X[:2])
    >>> float((Z @ Z.T).toarray()[0, 1].round(2))  # ≈ exp(−5 |x₀ − x₀'|) = 0.049: x₁ ignored
    0.05
    """

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        # A number, or one per feature (their count is checked against X in fit).
        "lifetime": Param(1.0, *FINITE_LIFETIME, RealArray(low=0)),
        **SCALING,
        "random_state": RUNTIME["random_state"],
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        lifetime: float | ArrayLike = 1.0,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        store_parameters(self, locals())

    def _lifetimes(self, n_features: int) -> np.ndarray:
        """``lifetime`` as one finite λ_d ≥ 0 per feature (a ValueError naming it otherwise)."""
        try:
            values = np.broadcast_to(np.asarray(self.lifetime, dtype=np.float64), (n_features,))
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"lifetime must be a number or {n_features} numbers (one per feature), got "
                f"{self.lifetime!r}"
            ) from error
        if not np.all(np.isfinite(values) & (values >= 0)):
            raise ValueError(f"lifetime must hold finite values >= 0, got {self.lifetime!r}")
        return values.copy()

    def _bins(self, X: np.ndarray, m: int) -> np.ndarray:
        # A point equal to a cut is below it (as the Mondrian trees' x ≤ cut goes left).
        columns = [np.searchsorted(cuts, X[:, d]) for d, cuts in enumerate(self.cuts_[m])]
        return np.column_stack(columns).astype(np.int64)

    @restore_on_failure
    @document("X", "y ignored")
    def fit(self, X: Any, y: Any = None) -> MondrianGridFeatures:
        """Draw the grids' cuts on the training range and number the occupied cells.

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        X = self._fit_unit_box(validate_data(self, X, dtype=np.float64))
        lifetimes = self._lifetimes(X.shape[1])
        low, high = X.min(axis=0), X.max(axis=0)
        m = int(self.n_estimators)
        expected = float(np.sum(lifetimes * (high - low)) + 2 * X.shape[1])
        check_memory("lifetime", self.lifetime, 8.0 * expected, "one grid's cuts")
        check_memory("n_estimators", m, 8.0 * m * (expected + 2 * X.shape[0]), "cuts and cells")
        rng = check_random_state(self.random_state)
        self.cuts_ = []
        for _ in range(m):
            grid = []
            for d, rate in enumerate(lifetimes):
                if rate == 0:
                    grid.append(np.empty(0))
                    continue
                inner = rng.uniform(low[d], high[d], size=rng.poisson(rate * (high[d] - low[d])))
                ends = [low[d] - rng.exponential(1 / rate), high[d] + rng.exponential(1 / rate)]
                grid.append(np.sort(np.concatenate([inner, ends])))
            self.cuts_.append(grid)
        self.lifetimes_ = lifetimes
        self._number_cells(X, m)
        return self
