"""Looking inside a fitted Mondrian forest as scikit-learn's forests allow: the nodes a point
passes (``decision_path``) and the mean decrease in impurity per feature
(``feature_importances_``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._base import document


class InspectionMixin:
    """``decision_path`` and ``feature_importances_`` from the node arrays of
    :meth:`tree_arrays` and each estimator's ``_impurity_decrease(index)``."""

    n_features_in_: int
    model_: Any
    tree_arrays: Any
    _check_input: Any

    @property
    def data_min_(self) -> np.ndarray:
        """Offset of the map to the unit box (the forest base defines it)."""
        raise NotImplementedError

    @property
    def data_scale_(self) -> np.ndarray:
        """Scale of the map to the unit box (the forest base defines it)."""
        raise NotImplementedError

    def _impurity_decrease(self, index: int) -> np.ndarray:
        """Per node of tree ``index``: n_j I(j) − n_l I(l) − n_r I(r) (0 for leaves)."""
        raise NotImplementedError

    @document("X")
    def decision_path(self, X: Any) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
        """The nodes each point passes from the root to its leaf in every tree, as
        scikit-learn's forests return them (routing by the cuts, as :meth:`apply`).

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            Entry (i, k) is 1 when point i passes node k, the nodes of tree m being columns
            ``n_nodes_ptr[m]`` to ``n_nodes_ptr[m + 1]`` (in the order of :meth:`tree_arrays`).
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Where each tree's columns start (the last entry: where the last ends).
        """
        check_is_fitted(self)
        X = self._check_input(X)
        if scipy.sparse.issparse(X):
            X = scipy.sparse.csr_matrix(X)

        def coordinates(rows: np.ndarray, dims: np.ndarray) -> np.ndarray:
            """X[rows, dims] mapped as the trees see them (the core's map, element-wise)."""
            if rows.size == 0:
                return np.zeros(0)
            values = np.asarray(X[rows, dims], dtype=np.float64).reshape(-1)
            return (values - self.data_min_[dims]) / self.data_scale_[dims]

        n = X.shape[0]
        rows, cols, offsets = [], [], [0]
        points = np.arange(n)
        for m in range(self.model_.n_trees):
            a = self.tree_arrays(m)
            node = np.full(n, a["root"], dtype=np.intp)
            active = points
            while active.size:
                rows.append(active)
                cols.append(offsets[-1] + node[active])
                dim = a["split_dim"][node[active]]
                inside = dim >= 0
                active, dim = active[inside], dim[inside]
                here = node[active]
                left = coordinates(active, dim) <= a["threshold"][here]
                node[active] = np.where(left, a["left"][here], a["right"][here])
            offsets.append(offsets[-1] + len(a["parent"]))
        row, col = np.concatenate(rows), np.concatenate(cols)
        indicator = scipy.sparse.csr_matrix(
            (np.ones(len(row), dtype=np.int8), (row, col)), shape=(n, offsets[-1])
        )
        return indicator, np.asarray(offsets, dtype=np.intp)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity per feature (scikit-learn's definition): per tree, each
        cut's n_j I(j) − n_l I(l) − n_r I(r) on the training points summed by its feature and
        normalised to 1, averaged over trees. I is the criterion the guided cuts maximise —
        the targets' variance (regression), the class entropy (classification).

        With label-blind cuts (``candidate_dimensions=candidate_locations=1``) features are cut
        in proportion to their extent whatever the targets, so the importances then say how
        much the random cuts along each feature happened to separate the targets — a weaker
        signal than with guided cuts, which choose the cut that separates them most.

        Returns
        -------
        importances : ndarray of shape (n_features,)
            Non-negative, summing to 1 (all zero when no cut reduces the impurity).
        """
        total = np.zeros(self.n_features_in_)
        for m in range(self.model_.n_trees):
            a = self.tree_arrays(m)
            decrease = np.asarray(self._impurity_decrease(m), dtype=np.float64)
            internal = a["split_dim"] >= 0
            tree = np.bincount(
                a["split_dim"][internal],
                weights=decrease[internal],
                minlength=self.n_features_in_,
            )
            if tree.sum() > 0:
                total += tree / tree.sum()
        return total / total.sum() if total.sum() > 0 else total
