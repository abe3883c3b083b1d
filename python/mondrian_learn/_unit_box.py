"""The map of an estimator's inputs to the unit box, fixed on the training points: how the
estimators without it in the core hand their points over with it, and map them for numpy code."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
from sklearn.utils.sparsefuncs import min_max_axis

from mondrian_learn import _core
from mondrian_learn._base import EstimatorBase
from mondrian_learn._points import CorePoints, as_core_array, as_core_points, dense_points


def refuse_overflow(images: np.ndarray) -> None:
    """The ``ValueError`` (as the core's) naming the first feature of which some image in
    the rows ``images`` is not finite."""
    overflow = ~np.isfinite(images).all(axis=0)
    if overflow.any():
        raise ValueError(
            f"X holds values of feature {int(np.argmax(overflow))} so far outside the "
            "training range that they overflow float64 once scaled"
        )


class UnitBoxMixin(EstimatorBase):
    """Inputs mapped to the unit box by the range of the training data when
    ``scale_features`` is True (the map the forests apply inside the core, Lakshminarayanan
    et al., AISTATS 2016, §5), so that a lifetime means the same in every estimator. The map
    is fixed by ``fit``; later points (``partial_fit``, ``predict``) may fall outside [0, 1].
    The core applies the map as it reads rows (no mapped copy: a sparse X stays sparse, a
    float32 one float32); numpy code takes :meth:`_mapped_array`."""

    scale_features: bool
    data_min_: np.ndarray
    data_scale_: np.ndarray

    def _fix_unit_box(self, X: Any) -> None:
        """Fix the map on the training points ``X`` (checked)."""
        if self.scale_features:
            points = as_core_points(X, dtype=self._point_dtypes)
            self.data_min_, self.data_scale_ = _core.unit_box(points)
        else:
            self.data_min_, self.data_scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])

    def _fit_unit_box(self, X: Any) -> Any:
        """Fix the map on the training points ``X`` (checked) and return them as this
        estimator reads points (:meth:`_core_input`)."""
        self._fix_unit_box(X)
        return self._core_input(X)

    def _is_identity(self) -> bool:
        return not self.data_min_.any() and bool((self.data_scale_ == 1.0).all())

    def _to_unit_box(self, X: Any) -> CorePoints:
        """Checked points in the core's layout, handed over with the fitted map (none when
        it is the identity), which the core applies as it reads the rows."""
        box = None if self._is_identity() else self._unit_box()
        return as_core_points(X, dtype=self._point_dtypes, unit_box=box)

    def _mapped_array(self, X: Any) -> np.ndarray:
        """Images ``(X − data_min_) / data_scale_`` of checked points as one float64 array for
        numpy code: the core's arithmetic, so its values bit for bit, and its ``ValueError``
        when an image overflows float64 (identity: a float64 ``X`` itself, no copy)."""
        if scipy.sparse.issparse(X):
            return dense_points(X, self._mapped_array)
        X = as_core_array(X)
        if self._is_identity():
            return X
        with np.errstate(over="ignore", invalid="ignore"):
            images = (X - self.data_min_) / self.data_scale_
        refuse_overflow(images)
        return images

    def _check_images(self, X: Any) -> None:
        """Refuse checked points ``X`` whose images overflow float64, with
        :meth:`_mapped_array`'s ``ValueError`` (read from each feature's extremes: no mapped
        copy), before any work on them: the core refuses them too, but only as it reads them."""
        with np.errstate(over="ignore", invalid="ignore"):
            refuse_overflow(np.vstack(self._mapped_bounds(X)))

    def _unit_box(self) -> tuple[np.ndarray, np.ndarray]:
        return self.data_min_, self.data_scale_

    def _mapped_bounds(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each feature's least and greatest image over checked points ``X``, with no mapped
        copy: the images of its extremes (the map is increasing: the same bit for bit)."""
        if scipy.sparse.issparse(X):
            low, high = min_max_axis(scipy.sparse.csr_matrix(X), axis=0)
        else:
            low, high = np.min(X, axis=0), np.max(X, axis=0)
        offset, scale = self.data_min_, self.data_scale_
        return (low - offset) / scale, (high - offset) / scale

    def _core_input(self, X: Any) -> CorePoints:
        """Checked points mapped as the training data was, in the core's layout."""
        return self._to_unit_box(X)
