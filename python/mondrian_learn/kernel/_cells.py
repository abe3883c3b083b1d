"""Indicator features of the grid cells that training points occupy: what random binning
(Rahimi & Recht 2007) and the Mondrian grid (Balog's report, ch. 5) share. A subclass says how
a point's cell index in each dimension is drawn (``_bins``); the occupied cells of each grid are
numbered on the training data, and a later point in a cell no training point occupies gets no
entry for that grid (its product with every training feature is 0, as it should be)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from mondrian_learn._base import document
from mondrian_learn._unit_box import UnitBoxMixin
from mondrian_learn.kernel._base import ColumnFeaturesMixin


class CellIndicatorFeatures(ColumnFeaturesMixin, UnitBoxMixin):
    """Base of the grid features: ``_bins(X, m)`` gives the integer cell coordinates of the
    (scaled) points ``X`` in grid ``m`` (n_samples × n_features); ``_number_cells(X)`` numbers
    the occupied cells at ``fit``."""

    bins_: list[np.ndarray]
    offsets_: np.ndarray

    def _bins(self, X: np.ndarray, m: int) -> np.ndarray:
        raise NotImplementedError

    def _number_cells(self, X: np.ndarray, n_grids: int) -> None:
        """Number the cells of the ``n_grids`` grids that the training points ``X`` occupy."""
        self.bins_ = [np.unique(self._bins(X, k), axis=0) for k in range(n_grids)]
        self.offsets_ = np.concatenate([[0], np.cumsum([len(b) for b in self.bins_])])
        self.n_columns_ = int(self.offsets_[-1])

    @document("X")
    def transform(self, X: Any) -> scipy.sparse.csr_matrix:
        """Indicator features of the occupied cells, 1/√M each.

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, ``n_columns_``)
            Indicator features of the occupied cells, 1/√M each.
        """
        X = self._fitted_input(X)
        rows, cols = [], []
        for k, bins in enumerate(self.bins_):
            # The distinct rows of [bins; X's bins] numbered together: a row of X whose
            # number is a training cell's gets that cell's column.
            _, number = np.unique(np.vstack([bins, self._bins(X, k)]), axis=0, return_inverse=True)
            number = number.reshape(-1)
            column = np.full(len(bins) + X.shape[0], -1)
            column[number[: len(bins)]] = np.arange(len(bins))
            at = column[number[len(bins) :]]
            found = at >= 0
            rows.append(np.flatnonzero(found))
            cols.append(self.offsets_[k] + at[found])
        row, col = np.concatenate(rows), np.concatenate(cols)
        values = np.full(len(row), 1.0 / np.sqrt(len(self.bins_)))
        return scipy.sparse.csr_matrix((values, (row, col)), shape=(X.shape[0], self.n_columns_))
