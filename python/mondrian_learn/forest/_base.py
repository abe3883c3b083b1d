"""What every Mondrian forest estimator shares, whatever its leaves predict: the trees'
parameters, fitting in parallel with progress, online extension, routing and node arrays."""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._base import EstimatorBase, OnlineMixin, document, restore_on_failure
from mondrian_learn._lifetime_path import checkpoint_arguments
from mondrian_learn._memory import check_memory
from mondrian_learn._progress import PathProgress, grow_trees
from mondrian_learn._targets import check_sample_weight
from mondrian_learn._validation import (
    COUNT,
    RUNTIME,
    Boolean,
    InstanceOf,
    Integer,
    Options,
    Param,
    Real,
    _is_integer,
    check_tree_index,
    draw_seed,
)
from mondrian_learn.forest._inspection import InspectionMixin

#: The trees' parameters, first in every forest's table (the bases of the forests declare
#: none: only the forests themselves can be made).
FOREST_PARAMETERS = {
    "n_estimators": Param(100, *COUNT),
    "lifetime": Param(np.inf, Real(low=0, allow_inf=True)),
    "min_samples_split": Param(2, Integer(low=2)),
    **RUNTIME,
    "scale_features": Param(True, Boolean()),
    "candidate_dimensions": Param(
        1 / 3, Options({"sqrt"}), *COUNT, Real(low=0, high=1, closed="right")
    ),
    "candidate_locations": Param(6, *COUNT),
    "point_store": Param(
        "memory",
        Options({"memory", "disk"}),
        InstanceOf((str, os.PathLike), "a directory (str or path-like)"),
    ),
}


class MondrianForestBase(InspectionMixin, OnlineMixin, EstimatorBase):
    """Base of the Mondrian forest estimators (Lakshminarayanan, Roy & Teh, AISTATS 2016).

    M Mondrian trees with lifetime λ, sampled in parallel on the training points (tree ``m``
    from a stream derived from ``(seed, m)``) and extended online by the conditional Mondrian
    (NIPS 2014). ``lifetime`` is in the units of the features after the estimator's own
    scaling to the unit box (``scale_features=True``, the default), raw units otherwise.

    A subclass says what the leaves predict: ``_new_model(n_features, seed, lifetime)`` builds
    its core forest (whose ``fit``, ``partial_fit``, ``apply``, ``tree_arrays``, ``n_leaves``,
    ``input_map`` and ``lifetime_path`` this class calls) and ``_training_data(X, y, reset)``
    checks its targets and returns them as the core takes them.
    """

    #: float32 X is read by the core a row block at a time (no float64 copy of the matrix;
    #: the trees' own store of training points is float64, widened exactly).
    _point_dtypes = (np.float64, np.float32)
    #: Sparse X is read by the core a row block at a time (module ``points``); the trees'
    #: store of training points is dense float64, as for dense X.
    _accepts_sparse = True
    #: The core refuses NaN and infinite coordinates with a ValueError.
    _core_checks_points = True

    def _points_in_memory(self) -> bool:
        """Whether ``point_store`` keeps the training points in memory."""
        return isinstance(self.point_store, str) and self.point_store == "memory"

    def _place_points(self, model: Any) -> None:
        """Move ``model``'s training points to disk when ``point_store`` asks for it and they
        are in memory (a new model, or one loaded from a pickle)."""
        if self._points_in_memory() or model.points_directory is not None:
            return
        store = self.point_store
        directory = tempfile.gettempdir() if store == "disk" else os.fspath(store)
        model.move_points_to_disk(directory)

    def _candidates(self, n_features: int) -> int:
        """T, the dimensions drawn per label-guided cut, for ``n_features`` features."""
        t = self.candidate_dimensions
        if t == "sqrt":
            return max(1, int(math.sqrt(n_features)))
        if _is_integer(t):
            return int(t)
        return max(1, int(float(t) * n_features))  # a fraction (any real type)

    def _new_model(self, n_features: int, seed: int, lifetime: float) -> Any:
        raise NotImplementedError

    def _training_data(
        self, X: Any, y: Any, reset: bool, classes: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Checked ``X`` and the targets as the core takes them; ``classes``: the labels a
        stream declares on its first ``partial_fit`` (classifiers only)."""
        raise NotImplementedError

    @restore_on_failure
    @document("X", "y", "sample_weight")
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Sample ``n_estimators`` Mondrian trees on ``X`` (in parallel) and fit the leaves.

        Row weights are frequencies: a row of weight w counts as w copies of itself in
        every statistic of the leaves (sums and class counts, the label-guided cuts'
        impurities, the prior's hyper-parameters), so integer weights equal repeated rows; the
        trees' boxes depend on the rows of positive weight only, and ``min_samples_split``
        counts rows, as scikit-learn's trees do.

        Returns
        -------
        self : object
            The estimator itself.
        """
        return self._fit(X, y, sample_weight=sample_weight)

    def _fit(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        lifetime: float | None = None,
        sample_weight: Any = None,
    ) -> Any:
        """``fit``, with the classes a stream declares (classifiers' first ``partial_fit``) and
        a lifetime other than the parameter's (the refit of a lifetime search)."""
        self._validate_params()
        n_jobs = self._threads()
        X, y = self._training_data(X, y, reset=True, classes=classes)
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        X, y = X[keep], y[keep]
        n, d = X.shape
        if self._points_in_memory():
            check_memory("X", f"{n} × {d}", 8.0 * n * d, "the trees' float64 store of the points")
        check_memory(
            "n_estimators",
            self.n_estimators,
            self.n_estimators * (4.0 * n + 40.0 + 16.0 * d),
            "every tree holds its points' ids and a root node",
        )
        lifetime = float(self.lifetime if lifetime is None else lifetime)
        model = self._new_model(X.shape[1], draw_seed(self.random_state), lifetime)
        self._place_points(model)
        X = self._core_input(X)
        grow_trees(
            self.n_estimators,
            n_jobs,
            self.verbose,
            lambda slice_size, progress: model.fit(
                X, y, self.n_estimators, n_jobs, slice_size, progress, weights
            ),
        )
        self._finish_fit(model, y, weights, n_jobs)
        self.model_ = model
        return self

    def _forest_trees(self) -> int:
        """M, the trees of the whole forest (a Dask part holds some of them)."""
        return int(getattr(self, "_forest_trees_whole", self.n_estimators))

    def _update(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        if hasattr(self, "model_"):
            self._place_points(self.model_)
        return super()._update(X, y, sample_weight)

    def _finish_fit(
        self, model: Any, y: np.ndarray, weights: np.ndarray | None, n_jobs: int
    ) -> None:
        """Work on the fitted core model (rows weighted by ``weights``) before it is kept
        (none by default)."""

    def lifetime_path(
        self, X: Any = None, y: Any = None, lifetimes: Any = 100, sample_weight: Any = None
    ) -> dict[str, Any]:
        """Scores of the forest pruned at every lifetime λ ∈ [0, Λ] (Balog's report §4.1).

        The forest at λ keeps the cuts born by λ (a Mondrian tree pruned at λ is a Mondrian
        tree of lifetime λ). Sweeping all trees' cuts in birth-time order, each cut moves its
        block's points to the children, O(1) per point and cut: the whole path costs about
        one routing of the points through the trees. That needs a prediction per node that
        depends neither on λ nor on the nodes below, which the hierarchical posteriors do not
        give, so the path scores simpler predictors of the same pruned forests: leaf means
        with a Gaussian N(mean over trees, σ_y² + variance over trees) for regression (σ_y²
        from ``prior_``), leaf class frequencies smoothed towards the parent's by one
        pseudo-count for classification.

        Parameters
        ----------
        X, y : array-like, optional
            Validation points and targets (both or neither).
        lifetimes : int, array-like or None, default=100
            An int k: at λ = 0 and after every ⌈n_cuts/k⌉-th cut; an array: at those
            lifetimes (within the forest's); None: after every cut.
        sample_weight : float or array-like of shape (n_samples,), default=None
            Weights of the validation rows in the validation scores (weighted means; a zero
            weight drops its row). The training scores weigh the rows as ``fit`` did.

        Returns
        -------
        path : dict of arrays
            ``lifetimes``, ``n_cuts``, ``n_leaves`` (all trees) and the training and
            validation scores (NaN without ``X``): ``train_mse``, ``train_nlpd``,
            ``validation_mse``, ``validation_nlpd`` for regression; ``train_log_loss``,
            ``train_accuracy``, ``validation_log_loss``, ``validation_accuracy`` for
            classification.
        """
        check_is_fitted(self)
        n_checkpoints, grid = checkpoint_arguments(lifetimes, self.model_.lifetime)
        if (X is None) != (y is None):
            raise ValueError("give both X and y for validation, or neither")
        if X is None and sample_weight is not None:
            raise ValueError("sample_weight weighs validation rows: give X and y too")
        weights = None
        if X is not None:
            X, y = self._training_data(X, y, reset=False)
            weights, keep = check_sample_weight(sample_weight, X.shape[0])
            X, y = self._core_input(X[keep]), y[keep]
        with PathProgress("cuts", self.verbose) as progress:
            return dict(
                self.model_.lifetime_path(
                    X, y, n_checkpoints, grid, self._threads(), progress.callback, weights
                )
            )

    def _check_tree_index(self, index: Any) -> int:
        check_is_fitted(self)
        return check_tree_index(index, self.model_.n_trees)

    @document("X")
    def apply(self, X: Any) -> np.ndarray:
        """Leaf id of every point in every tree (node ids, as used by :meth:`tree_arrays`).

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_estimators), dtype intp
            Leaf id of every point in every tree (node ids, as used by :meth:`tree_arrays`).
        """
        X = self._fitted_input(X)
        return self.model_.apply(X, self._threads()).astype(np.intp)

    @document("index")
    def tree_arrays(self, index: int) -> dict[str, np.ndarray]:
        """Node arrays of tree ``index``.

        Returns
        -------
        arrays : dict
            ``parent``, ``left``, ``right``, ``split_dim`` (−1 for none), ``threshold``,
            ``tau`` (cut birth time; the lifetime for a leaf), ``lower``/``upper`` (data box,
            n_nodes × n_features), ``n_samples`` and ``root``; in the units the trees see
            (the unit box when ``scale_features=True``).
        """
        return self.model_.tree_arrays(self._check_tree_index(index))

    @property
    def n_leaves_(self) -> np.ndarray:
        """Number of leaves of each tree, shape (n_estimators,)."""
        check_is_fitted(self)
        return self.model_.n_leaves().astype(np.intp)

    @property
    def data_min_(self) -> np.ndarray:
        """Offset of the map to the unit box, ``(X − data_min_) / data_scale_`` (zeros when
        ``scale_features=False``), shape (n_features,)."""
        check_is_fitted(self)
        mapping = self.model_.input_map()
        return np.zeros(self.n_features_in_) if mapping is None else mapping[0]

    @property
    def data_scale_(self) -> np.ndarray:
        """Scale of the map to the unit box (ones when ``scale_features=False``)."""
        check_is_fitted(self)
        mapping = self.model_.input_map()
        return np.ones(self.n_features_in_) if mapping is None else mapping[1]
