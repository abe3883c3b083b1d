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

    Predictions follow §3 of the paper: node means have a hierarchical Gaussian prior
    ``μ_root ~ N(μ_H, φ_root)``, ``μ_j ~ N(μ_parent, φ_j)``,
    ``φ_j = γ₁ (σ(γ₂ τ_j) − σ(γ₂ τ_parent))``, labels are ``N(μ_leaf, σ_y²)``; the posterior
    of every node is exact (belief propagation), and a test point may branch off above any
    node on its path with probability ``1 − exp(−Δτ_j η_j(x))``, ``η_j(x)`` the linear
    dimension by which it lies outside node j's box. The predictive is the resulting mixture
    of Gaussians, averaged over trees: its standard deviation grows away from the data.

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
    scale_features : bool, default=True
        Map each feature to [0, 1] by its range in the first fit, as the paper does; ``lifetime``,
        ``gamma2`` and the node boxes are then in those units (``data_min_``, ``data_scale_``).
        Points outside the training range are fine. False keeps raw coordinates.
    prior_mean, gamma1, gamma2 : float or None, default=None
        Fix μ_H, γ₁ or γ₂ instead of the paper's heuristic, recomputed from all targets
        seen so far: μ_H = mean(y), v = var(y), K = min(2N, 500), γ₁ = 2vK/(K + 2),
        γ₂ = D / (2 log₂ N) (the authors' code's divisor; the paper's text says 20, which
        measured worse: see benches/RESULTS.md).
    noise_variance : float, "heuristic", "within_leaf" or None, default=None
        Label noise σ_y²: a fixed value; the paper's heuristic v/K ("heuristic" or None); or
        "within_leaf", the variance of the targets around their leaf means pooled over all
        trees. The heuristic is often far below the real noise (v/500), which makes
        intervals overconfident; "within_leaf" estimates it from the data.
    posterior : {"exact", "fast"}, default="exact"
        How ``partial_fit`` updates the posterior. "exact": belief propagation over every
        node with the hyper-parameters recomputed, run once before the next prediction
        (O(nodes) per batch of updates). "fast" (paper §5.3): O(depth) per new point and tree —
        the likelihoods on the new points' root-to-leaf paths are exact and those paths'
        posteriors recomputed, while other nodes keep the messages of the last full pass and
        the hyper-parameters stay frozen; a full exact pass runs whenever the number of
        points has doubled since the last one. Batch ``fit`` is exact in both modes.

    Attributes
    ----------
    forest_ : mondrian_learn._core.ForestRegressor
        The fitted Rust forest (node arrays via :meth:`tree_arrays`).
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box, ``(X − data_min_) / data_scale_`` (identity when
        ``scale_features=False``).
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
        scale_features: bool = True,
        prior_mean: float | None = None,
        gamma1: float | None = None,
        gamma2: float | None = None,
        noise_variance: float | str | None = None,
        posterior: str = "exact",
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.scale_features = scale_features
        self.prior_mean = prior_mean
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.noise_variance = noise_variance
        self.posterior = posterior

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
        if self.prior_mean is not None and not np.isfinite(self.prior_mean):
            raise ValueError(f"prior_mean must be finite or None, got {self.prior_mean!r}")
        if self.posterior not in ("exact", "fast"):
            raise ValueError(f"posterior must be 'exact' or 'fast', got {self.posterior!r}")
        names = ["gamma1", "gamma2"]
        if not isinstance(self.noise_variance, str):
            names.append("noise_variance")
        elif self.noise_variance not in ("heuristic", "within_leaf"):
            raise ValueError(
                "noise_variance must be a number > 0, 'heuristic', 'within_leaf' or None, "
                f"got {self.noise_variance!r}"
            )
        for name in names:
            value = getattr(self, name)
            if value is not None and not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0 or None, got {value!r}")

    def _check_tree_index(self, index: Any) -> int:
        check_is_fitted(self)
        n_trees = self.forest_.n_trees
        if (
            not isinstance(index, numbers.Integral)
            or isinstance(index, bool)
            or not 0 <= index < n_trees
        ):
            raise ValueError(
                f"tree index {index!r} out of range: need an integer in [0, {n_trees})"
            )
        return int(index)

    def _new_forest(self, n_features: int) -> Any:
        def optional(value: float | None) -> float | None:
            return None if value is None else float(value)

        return _core.Forest.regressor(
            n_features,
            float(self.lifetime),
            int(self.min_samples_split),
            draw_seed(self.random_state),
            optional(self.prior_mean),
            optional(self.gamma1),
            optional(self.gamma2),
            self.noise_variance
            if isinstance(self.noise_variance, str)
            else optional(self.noise_variance),
            self.posterior,
            bool(self.scale_features),
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
        # validate_data sets n_features_in_ (and feature_names_in_): put them back if the fit
        # fails, so that a failed refit leaves a fitted model as it was.
        saved = {k: v for k, v in vars(self).items() if k.endswith("_in_")}
        try:
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
        except BaseException:
            for name in [k for k in vars(self) if k.endswith("_in_")]:
                delattr(self, name)
            vars(self).update(saved)
            raise
        # Stored only once the fit succeeded: a failed refit leaves the model as it was.
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

    def predict(self, X: Any, return_std: bool = False) -> Any:
        """Mean (and standard deviation) of the forest's predictive mixture (eq. 4–5).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the predictive standard deviation (label noise included).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is True.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean, var = self.forest_.predict(as_core_array(X), resolve_n_jobs(self.n_jobs))
        return (mean, np.sqrt(var)) if return_std else mean

    def predict_interval(self, X: Any, alpha: float = 0.1) -> np.ndarray:
        """Central ``1 − alpha`` interval of the predictive mixture at each point.

        The bounds are the exact ``alpha/2`` and ``1 − alpha/2`` quantiles of the mixture of
        Gaussians (Newton–bisection on its CDF), not a Gaussian approximation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        alpha : float, default=0.1
            Miscoverage level, in (0, 1).

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
            Lower and upper bounds.
        """
        check_is_fitted(self)
        if not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        levels = [alpha / 2, 1 - alpha / 2]
        return self.forest_.quantiles(as_core_array(X), levels, resolve_n_jobs(self.n_jobs))

    def log_predictive_density(self, X: Any, y: Any) -> np.ndarray:
        """log p(y_i | x_i) under the predictive mixture (log-sum-exp over its Gaussians).

        The negative mean is the NLPD reported in the paper.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        return self.forest_.log_density(
            as_core_array(X), as_core_array(y), resolve_n_jobs(self.n_jobs)
        )

    @property
    def prior_(self) -> dict[str, float]:
        """The hyper-parameters in use: ``mean`` (μ_H), ``gamma1``, ``gamma2``,
        ``noise_variance``."""
        check_is_fitted(self)
        return dict(self.forest_.prior(resolve_n_jobs(self.n_jobs)))

    def node_posterior(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of every node mean of tree ``index``.

        Returns
        -------
        mean, var : ndarray of shape (n_nodes,)
            In the node order of :meth:`tree_arrays`.
        """
        index = self._check_tree_index(index)
        return self.forest_.node_posterior(index, resolve_n_jobs(self.n_jobs))

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
        leaves = self.forest_.apply(as_core_array(X), resolve_n_jobs(self.n_jobs))
        return leaves.astype(np.intp)

    @property
    def data_min_(self) -> np.ndarray:
        """Offset of the map to the unit box, ``(X − data_min_) / data_scale_`` (zeros when
        ``scale_features=False``), shape (n_features,)."""
        check_is_fitted(self)
        mapping = self.forest_.input_map()
        return np.zeros(self.n_features_in_) if mapping is None else mapping[0]

    @property
    def data_scale_(self) -> np.ndarray:
        """Scale of the map to the unit box (ones when ``scale_features=False``)."""
        check_is_fitted(self)
        mapping = self.forest_.input_map()
        return np.ones(self.n_features_in_) if mapping is None else mapping[1]

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
        return self.forest_.tree_arrays(self._check_tree_index(index))
