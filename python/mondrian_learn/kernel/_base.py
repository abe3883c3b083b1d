"""What the Mondrian kernel estimators share: M Mondrian trees sampled in parallel, with
progress, from ``random_state``."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from mondrian_learn._base import GaussianSampleMixin
from mondrian_learn._memory import check_memory
from mondrian_learn._progress import grow_trees
from mondrian_learn._unit_box import UnitBoxMixin
from mondrian_learn._validation import draw_seed
from mondrian_learn.kernel._posterior import (
    check_return,
    predictive,
)

T = TypeVar("T")

#: Expected cells per tree that the default lifetime aims at (``lifetime=None``).
DEFAULT_CELLS = 128


def lifetime_for_cells(X: np.ndarray, cells: float) -> float:
    """The lifetime λ at which a Mondrian process on the bounding box of ``X`` has, in
    expectation, ``cells`` cells: Π_d (1 + λ r_d) = cells, r_d the range of feature d (Roy &
    Teh 2009: cuts along d form a Poisson process of rate λ per unit length). 0 when the box
    is a point or ``cells`` ≤ 1.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The points whose bounding box is cut.
    cells : float
        Expected number of cells.

    Returns
    -------
    lifetime : float
        λ, found by bisection on the increasing left-hand side.
    """
    return lifetime_for_ranges(np.ptp(X, axis=0) if X.shape[0] else np.zeros(0), cells)


def lifetime_for_ranges(ranges: np.ndarray, cells: float) -> float:
    """:func:`lifetime_for_cells` for a box with these side lengths ``ranges``.

    Parameters
    ----------
    ranges : ndarray of shape (n_features,)
        Side lengths r_d ≥ 0 of the box.
    cells : float
        Expected number of cells.

    Returns
    -------
    lifetime : float
        λ with Π_d (1 + λ r_d) = cells.
    """
    ranges = ranges[ranges > 0]
    if cells <= 1 or ranges.size == 0:
        return 0.0

    def log_cells(lifetime: float) -> float:
        return float(np.log1p(lifetime * ranges).sum())

    target = np.log(cells)
    low, high = 0.0, 1.0 / ranges.max()
    while log_cells(high) < target:
        high *= 2.0
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if log_cells(middle) < target else (low, middle)
    return high


class MondrianKernelBase(UnitBoxMixin):
    """Base of the Mondrian kernel estimators (Balog et al., UAI 2016): ``n_estimators``
    trees, tree ``m`` drawn from a stream seeded by ``(seed, m)``, so results do not depend
    on ``n_jobs``; features mapped to the unit box unless ``scale_features=False``."""

    def _lifetime(self, X: Any) -> float:
        """The lifetime to sample with on the checked training points ``X`` (before the map
        to the unit box, dense or sparse)."""
        if self.lifetime is None:
            return self._lifetime_for_cells(X, DEFAULT_CELLS)
        return float(self.lifetime)

    def _lifetime_for_cells(self, X: Any, cells: float) -> float:
        """:func:`lifetime_for_cells` of the images of the checked points ``X`` under the map to
        the unit box, read from the images of each feature's extremes (the map is increasing:
        the same ranges bit for bit, with no mapped copy)."""
        low, high = self._mapped_bounds(X)
        return lifetime_for_ranges(high - low, cells)

    def _sample_trees(self, make: Callable[[int, int, int, Any], T], n_rows: int) -> T:
        """``make(seed, n_jobs, slice_size, progress)``: the core object that samples the
        trees on ``n_rows`` points, built with a ``"trees"`` progress bar when ``verbose``."""
        check_memory(
            "n_estimators",
            self.n_estimators,
            self.n_estimators * (16.0 * n_rows + 40.0),
            "every tree holds its points' ids and gives each point a feature (index and value)",
        )
        n_jobs = self._threads()
        return grow_trees(
            self.n_estimators,
            n_jobs,
            self.verbose,
            lambda slice_size, progress: make(
                draw_seed(self.random_state), n_jobs, slice_size, progress
            ),
        )


class CorePointsKernelBase(MondrianKernelBase):
    """A Mondrian kernel estimator whose core reads X itself: sparse X a row block at a time
    and float32 X as float32, mapped to the unit box as it is read (``points`` in the core),
    so that no converted copy of X is made; the trees store the training points dense."""

    _accepts_sparse = True
    _point_dtypes = (np.float64, np.float32)


class MappedArrayMixin(UnitBoxMixin):
    """For the estimators whose work on points is numpy code, not the core: every point
    they read (training points included) is the mapped float64 array."""

    def _core_input(self, X: Any) -> Any:
        return self._mapped_array(X)


class ColumnFeaturesMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """A transformer to ``n_columns_`` feature columns (leaves or occupied cells), named
    after the class by ``get_feature_names_out``."""

    n_columns_: int

    @property
    def _n_features_out(self) -> int:
        """Output width, for ``get_feature_names_out``."""
        return self.n_columns_


class RidgePredictMixin(GaussianSampleMixin):
    """``predict`` and ``sample_y`` for the estimators whose ``model_`` is a core
    ``KernelRidge`` (its Cholesky factor gives ``return_std`` and ``return_cov``)."""

    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False) -> Any:
        """ȳ + φ(x)·w for every row: the fitted weights on the Mondrian kernel features (at
        ``lifetime_`` for the path; out-of-box points: see the class notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        return_std : bool, default=False
            Also return the predictive standard deviation of a new target in the Bayesian
            view of the ridge (w ~ N(0, σ²/α I), y − ȳ ~ N(Φw, σ²I), σ² at its
            maximum-likelihood value σ̂²): ``sqrt(σ̂² (1 + φ(x)ᵀ(ΦᵀΦ + αI)⁻¹φ(x)))``, one
            triangular solve with the Cholesky factor per row (O(C²)); ȳ is treated as known.
        return_cov : bool, default=False
            Also return the joint predictive covariance of new targets at the rows,
            ``σ̂² (I + Φ* A⁻¹ Φ*ᵀ)`` (A = ΦᵀVΦ + αI, V the training rows' weights), by
            triangular solves with A's Cholesky factor: O(C²) per row, memory
            C · n_samples + n_samples². Its diagonal is ``return_std`` squared. At most one
            of ``return_std`` and ``return_cov``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions ȳ + φ(x)·w.
        y_std : ndarray of shape (n_samples,)
            Only when ``return_std`` is True.
        y_cov : ndarray of shape (n_samples, n_samples)
            Only when ``return_cov`` is True.
        """
        check_return(return_std, return_cov)
        X = self._fitted_input(X)  # type: ignore[attr-defined]
        n_jobs = self._threads()  # type: ignore[attr-defined]
        model = self.model_  # type: ignore[attr-defined]
        mean = model.predict(X, n_jobs)
        if return_std:
            return mean, np.sqrt(model.predict_variance(X, n_jobs))
        if not return_cov:
            return mean
        n, c = len(mean), int(model.n_columns)
        check_memory("X", n, 8.0 * n * (c + n), "return_cov holds n_samples × (C + n_samples)")
        factor_rows = model.whitened(X, n_jobs).T
        return predictive(mean, model.noise_variance, factor_rows, full=True)
