"""Mondrian forest estimators (scikit-learn API) over the Rust core."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn import _core
from mondrian_learn._progress import progress_callback
from mondrian_learn._validation import as_core_array, draw_seed, is_core_ready, resolve_n_jobs


class MondrianForestRegressor(RegressorMixin, BaseEstimator):
    """Mondrian forest regression, batch or online.

    Each tree is a Mondrian process restricted to the training points (Lakshminarayanan,
    Roy & Teh, AISTATS 2016, Alg. 1–2) with a lifetime λ: a block splits at time
    ``t + E``, ``E ~ Exp(linear dimension of its data box)``, on a dimension drawn in
    proportion to its extent at a uniform location, unless that time exceeds ``lifetime``,
    the block holds fewer than ``min_samples_split`` points, or all its points coincide.
    ``partial_fit`` extends the trees by the conditional Mondrian (NIPS 2014,
    "ExtendMondrianBlock"), so a forest grown online has the same distribution as one fitted
    on all points at once.

    A leaf predicts the mean of its targets smoothed towards the global mean with the scale of
    the paper's prior (pseudo-count ``(K + 2) / (2 K²)``, ``K = min(2N, 500)``); the forest
    predicts the mean over trees.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees M.
    lifetime : float, default=inf
        Lifetime λ of the Mondrian process; ``np.inf`` grows until ``min_samples_split``
        stops it.
    min_samples_split : int, default=10
        A block with fewer points does not split (it resumes when online updates bring more).
    random_state : int, RandomState or None, default=None
        Seeds tree ``m`` with a stream derived from ``(seed, m)``: results are identical for
        any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads for fitting and prediction (None: 1, -1: all cores).
    verbose : int, default=0
        Show fit progress (tqdm when installed, else lines on stderr).

    Attributes
    ----------
    forest_ : mondrian_learn._core.ForestRegressor
        The fitted Rust forest (node arrays via :meth:`tree_arrays`).
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 2)); y = X[:, 0] + X[:, 1]
    >>> model = MondrianForestRegressor(random_state=0).fit(X[:100], y[:100])
    >>> model = model.partial_fit(X[100:], y[100:])
    >>> model.predict(X[:3]).shape
    (3,)
    """

    def __init__(
        self,
        n_estimators: int = 10,
        lifetime: float = np.inf,
        min_samples_split: int = 10,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_params(self) -> None:
        if (
            not isinstance(self.n_estimators, numbers.Integral)
            or isinstance(self.n_estimators, bool)
            or self.n_estimators < 1
        ):
            raise ValueError(f"n_estimators must be an integer >= 1, got {self.n_estimators!r}")
        if (
            not isinstance(self.min_samples_split, numbers.Integral)
            or isinstance(self.min_samples_split, bool)
            or self.min_samples_split < 2
        ):
            raise ValueError(
                f"min_samples_split must be an integer >= 2, got {self.min_samples_split!r}"
            )
        if not isinstance(self.lifetime, numbers.Real) or not self.lifetime >= 0:
            raise ValueError(f"lifetime must be a number >= 0 or np.inf, got {self.lifetime!r}")

    def _new_forest(self, n_features: int) -> Any:
        return _core.ForestRegressor(
            n_features,
            float(self.lifetime),
            int(self.min_samples_split),
            draw_seed(self.random_state),
        )

    def fit(self, X: Any, y: Any) -> MondrianForestRegressor:
        """Sample ``n_estimators`` Mondrian trees on ``X`` (in parallel) and fit the leaves.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points (finite values).
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : MondrianForestRegressor
        """
        self._check_params()
        n_jobs = resolve_n_jobs(self.n_jobs)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        forest = self._new_forest(X.shape[1])
        update, close = progress_callback(self.n_estimators, "trees", self.verbose)
        # Slices of 4 trees per thread show progress without starving the pool.
        slice_size = self.n_estimators if not self.verbose else 4 * n_jobs
        try:
            forest.fit(
                as_core_array(X),
                as_core_array(y),
                self.n_estimators,
                n_jobs,
                slice_size,
                update if self.verbose else None,
            )
        finally:
            close()
        self.forest_ = forest
        return self

    def partial_fit(self, X: Any, y: Any) -> MondrianForestRegressor:
        """Add points to the trees by the conditional Mondrian extension.

        The first call on an unfitted estimator fits the forest on its points. The result has
        the distribution of a batch fit on all points seen so far.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : MondrianForestRegressor
        """
        if not hasattr(self, "forest_"):
            return self.fit(X, y)
        if not is_core_ready(X, y, self.n_features_in_) or hasattr(self, "feature_names_in_"):
            # Inputs already in the core's layout skip scikit-learn's checks, which cost far
            # more than a small update; the core itself rejects NaN/inf with a ValueError.
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        self.forest_.partial_fit(as_core_array(X), as_core_array(y), resolve_n_jobs(self.n_jobs))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Mean over trees of the leaf predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.forest_.predict(as_core_array(X), resolve_n_jobs(self.n_jobs))

    def apply(self, X: Any) -> np.ndarray:
        """Leaf id of every point in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_estimators), dtype intp
            Node ids, as used by :meth:`tree_arrays`.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.forest_.apply(as_core_array(X), resolve_n_jobs(self.n_jobs)).astype(np.intp)

    @property
    def n_leaves_(self) -> np.ndarray:
        """Number of leaves of each tree, shape (n_estimators,)."""
        check_is_fitted(self)
        return self.forest_.n_leaves().astype(np.intp)

    def tree_arrays(self, index: int) -> dict[str, np.ndarray]:
        """Node arrays of tree ``index``.

        Returns
        -------
        arrays : dict
            ``parent``, ``left``, ``right``, ``split_dim`` (−1 for none), ``threshold``,
            ``tau`` (cut birth time; the lifetime for a leaf), ``lower``/``upper`` (data box,
            n_nodes × n_features), ``n_samples`` and ``root``.
        """
        check_is_fitted(self)
        return self.forest_.tree_arrays(index)
