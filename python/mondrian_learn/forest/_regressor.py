"""Mondrian forest regression: a hierarchical Gaussian posterior over the trees' node means
(Lakshminarayanan, Roy & Teh, AISTATS 2016, §3)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from mondrian_learn import _core
from mondrian_learn._base import document, restore_on_failure, store_parameters, warn
from mondrian_learn._points import as_core_array
from mondrian_learn._targets import check_numeric_target
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    Options,
    Param,
    Real,
    check_parameter,
)
from mondrian_learn.forest._base import FOREST_PARAMETERS, MondrianForestBase
from mondrian_learn.forest._conformal import ConformalIntervals
from mondrian_learn.forest._regression_prior import RegressionPrior


class MondrianForestRegressor(
    ConformalIntervals, RegressionPrior, RegressorMixin, MondrianForestBase
):
    """Mondrian forest regression, batch or online.

    Each tree is a Mondrian process restricted to the training points (Lakshminarayanan,
    Roy & Teh, AISTATS 2016, Alg. 1–2) with a lifetime λ: a block splits at time
    ``t + E``, ``E ~ Exp(linear dimension of its data box)``, unless that time exceeds
    ``lifetime``, the block holds fewer than ``min_samples_split`` points, or all its points
    coincide. Where it cuts is guided by the targets (the label-guided-splits poster, with
    CART's variance reduction for information gain): ``candidate_dimensions`` dimensions are
    drawn with probability ∝ extent and ``candidate_locations`` locations uniformly in each, and
    the candidate that reduces the squared deviations of the block's targets most is the cut.
    The split time is unchanged, so ``lifetime`` keeps its meaning; one candidate (1 × 1) is the
    label-blind Mondrian forest of the paper, whose trees do not depend on y. ``partial_fit``
    extends the trees by the conditional Mondrian (NIPS 2014, "ExtendMondrianBlock"); for the
    label-blind forest the result has the distribution of a batch fit on all points; with
    guidance, cuts that fall outside an old box cannot be guided (no old point lies there).

    Predictions follow §3 of the paper: node means have a hierarchical Gaussian prior
    ``μ_root ~ N(μ_H, φ_root)``, ``μ_j ~ N(μ_parent, φ_j)``,
    ``φ_j = γ₁ (σ(γ₂ τ_j) − σ(γ₂ τ_parent))``, labels are ``N(μ_leaf, σ_y²)``; the posterior
    of every node is exact (belief propagation), and a test point may branch off above any
    node on its path with probability ``1 − exp(−Δτ_j η_j(x))``, ``η_j(x)`` the linear
    dimension by which it lies outside node j's box. The predictive is the resulting mixture
    of Gaussians, averaged over trees: its standard deviation grows away from the data.

    The forest predicts with the mixture over trees, each component mean μ moved to
    ``m̄ + ρ (μ − m̄)``, ``m̄`` the forest's mean: ρ = 1 is the paper's equal mixture; ρ < 1
    narrows the spread of the trees' means, which carries the randomness of the partitions
    as well as uncertainty about y. By default (``hyperparameters="held_out"``) γ₁, γ₂, σ_y²
    and ρ maximise the forest's log density of rows its trees were not grown on: up to five
    folds of the rows (at most 2,000 rows scored), each scored by a few extra trees grown on
    the other folds and then discarded (Lakshminarayanan et al.'s model is kept; only what
    it is given is chosen out of sample); ρ chosen on those few trees is carried over to the
    model's ``n_estimators`` (so that a forest of any size keeps the calibration). μ_H is the
    mean target. The paper's closed-form heuristic and each tree's marginal likelihood remain
    available.

    What the intervals mean: :meth:`predict_interval` (``method="model"``) gives the exact
    central quantiles of that predictive, whose coverage is calibrated on held-out rows (on
    the benchmark sets within a few per cent of nominal) but not guaranteed;
    :meth:`conformalize` on rows not used to fit, then ``method="conformal"``, gives
    intervals that cover at least the asked fraction of new rows drawn like them (a
    finite-sample guarantee, marginal over rows). Use the model's intervals for
    uncertainty that grows away from the data and for densities; the conformal ones when a
    coverage promise matters.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees M (as scikit-learn's forests).
    lifetime : float, default=inf
        Lifetime λ of the Mondrian process, in the units of the features after scaling to the
        unit box (``scale_features=True``; raw units of X otherwise); ``np.inf`` grows until
        ``min_samples_split`` stops it.
    min_samples_split : int, default=2
        A block with fewer points does not split (it resumes when online updates bring more);
        at least 2.
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
        Points outside the training range are fine. The map is chosen again from the range of
        every row seen when ``partial_fit`` refits the forest (see :meth:`partial_fit`). False
        keeps raw coordinates.
    candidate_dimensions : int, float or "sqrt", default=1.0
        T: dimensions drawn per cut (an int; a fraction of n_features, at least 1; "sqrt"). The
        default draws as many as there are features (with replacement, ∝ extent).
    candidate_locations : int, default=6
        Q: locations drawn in each candidate dimension (the poster's 6). T = Q = 1:
        label-blind cuts.
    point_store : "memory", "disk" or path-like, default="memory"
        Where the trees keep their training points, which ``partial_fit`` reads again when a
        leaf splits: "memory", "disk" (a nameless temporary file) or a file in the given
        directory, with identical results (user guide: Online learning, "Where the training
        points live").
    hyperparameters : {"held_out", "evidence", "heuristic", "leave_one_out"}, \
default="held_out"
        How γ₁, γ₂ and σ_y² not fixed below (and ρ) are chosen: "held_out" maximises the
        forest's mean log predictive density of held-out rows, L = Σ_folds Σ_{i ∈ fold} w_i
        log p_S(y_i | x_i) / Σ w_i, p_S the predictive of S extra trees grown on the other
        folds (S = n_estimators/4 within [2, 8]; L-BFGS-B, the variances in log space), its
        cost about S·(number of folds) trees more; "evidence" maximises the trees' marginal
        likelihood (each tree's model, not the forest's mixture: its intervals come out too
        wide); "heuristic" is the paper's closed form (below); "leave_one_out" maximises the
        forest mixture's exact leave-one-out log density of the training targets (trees held
        fixed), which on targets with repeated values can drive σ_y² towards 0. Only
        "held_out" chooses ρ (1 otherwise). Rows go to folds by a hash of their values, so
        the choice depends neither on the rows' order nor on whether a row is repeated or
        weighted (copies share a fold and are never grown on and scored at once). A
        criterion needs rows to score: below 32 rows the heuristic is used. The prior follows a
        stream: ``partial_fit`` chooses it again, by the same rule on every row seen,
        whenever the number of rows has doubled since the last choice (1, 2, 4, 8, … rows
        for a stream that starts with one; each choice costs one pass over the trees, so
        O(1) per row over a stream); between choices it is kept (see ``prior_``).
    prior_mean, gamma1, gamma2 : float or None, default=None
        Fix μ_H, γ₁ or γ₂. The heuristic computes them from all targets seen so far:
        μ_H = mean(y), v = var(y), K = min(2N, 500), γ₁ = 2vK/(K + 2),
        γ₂ = D / (2 log₂ N) (the authors' code's divisor; the paper's text says 20, which
        measured worse). While fewer than 10 rows have been seen and their targets are all
        equal (a stream's first row), v = max(ȳ², 1): a variance from the targets' own scale,
        never 0.
    noise_variance : float, "heuristic", "within_leaf" or None, default=None
        Label noise σ_y²: a fixed value; the paper's heuristic v/K ("heuristic"); "within_leaf",
        the variance of the targets around their leaf means pooled over all trees; or None,
        chosen by ``hyperparameters`` (the heuristic's v/K under "heuristic").
    posterior : {"exact", "fast"}, default="exact"
        Deprecated, without effect: ``partial_fit`` keeps the exact posterior at O(depth) cost
        per new row and tree (the likelihoods on the new rows' paths are updated, and each
        prediction recomputes the messages from above along its own path, AISTATS 2016,
        §5.3), which is what "fast" approximated. "fast" warns and will be removed.

    Attributes
    ----------
    model_ : mondrian_learn._core.ForestRegressor
        The fitted Rust forest (node arrays via :meth:`tree_arrays`).
    log_marginal_likelihood_value_ : float
        Σ over trees of each tree's exact log marginal likelihood of the training targets
        under ``prior_`` (:meth:`log_marginal_likelihood`).
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

    _parameters = {
        **FOREST_PARAMETERS,
        "prior_mean": Param(None, None, Real()),
        "gamma1": Param(None, None, *POSITIVE),
        "gamma2": Param(None, None, *POSITIVE),
        "noise_variance": Param(None, None, Options.of_core("noise_variance"), *POSITIVE),
        "posterior": Param("exact", Options.of_core("posterior")),
        "candidate_dimensions": Param(
            1.0, Options({"sqrt"}), *COUNT, Real(low=0, high=1, closed="right")
        ),
        "hyperparameters": Param(
            "held_out", Options.of_core("hyperparameters", "held_out", "heuristic")
        ),
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        lifetime: float = np.inf,
        min_samples_split: int = 2,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
        scale_features: bool = True,
        candidate_dimensions: int | float | str = 1.0,
        candidate_locations: int = 6,
        point_store: str | os.PathLike[str] = "memory",
        prior_mean: float | None = None,
        gamma1: float | None = None,
        gamma2: float | None = None,
        noise_variance: float | str | None = None,
        posterior: str = "exact",
        hyperparameters: str = "held_out",
    ) -> None:
        store_parameters(self, locals())

    def _training_data(
        self, X: Any, y: Any, reset: bool, classes: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        X, y = self._check_input(X, y, reset=reset, y_numeric=True)
        check_numeric_target(y)
        if reset:
            self._check_fixed_prior(y)
        return X, as_core_array(y)

    def _new_model(self, n_features: int, seed: int, lifetime: float) -> Any:
        if self.posterior == "fast":
            warn(
                "posterior='fast' is deprecated and has no effect: online updates keep the "
                "exact posterior at O(depth) cost per row; the parameter will be removed",
                FutureWarning,
            )
        fixed = self._fixed_prior()
        return self._core_regressor(n_features, seed, lifetime, bool(self.scale_features), fixed)

    def _core_regressor(
        self, n_features: int, seed: int, lifetime: float, scale: bool, fixed: dict[str, Any]
    ) -> Any:
        return _core.ForestRegressor(
            n_features,
            lifetime,
            int(self.min_samples_split),
            seed,
            prior_mean=fixed["prior_mean"],
            gamma1=fixed["gamma1"],
            gamma2=fixed["gamma2"],
            noise_variance=fixed["noise_variance"],
            scale_features=scale,
            tries=self._candidates(n_features),
            locations=int(self.candidate_locations),
        )

    @restore_on_failure
    @document("X", "y", "sample_weight")
    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> MondrianForestRegressor:
        """Add points online: the trees are extended by the conditional Mondrian (NIPS 2014,
        "ExtendMondrianBlock") and the leaves' statistics updated (rows weighted as in
        :meth:`fit`), so the result has the distribution of a batch fit on all points seen so
        far. The posterior stays exact at O(depth) cost per row and tree; the prior is chosen
        again when the rows have doubled since its last choice (``hyperparameters``).
        Whenever the rows reach a power of two (up to 32,768), or an update at least doubles
        them, the forest is refitted on every row instead, so that it is then exactly the
        batch fit of the rows seen (user guide: Online learning, "What a stream gets"). The
        first call on an unfitted estimator is ``fit``. A conformal calibration
        (:meth:`conformalize`) is discarded.

        Returns
        -------
        self : object
            The estimator itself.
        """
        if not hasattr(self, "model_"):
            return self._update(X, y, sample_weight)
        self._update(X, y, sample_weight)
        self.__dict__.pop("conformity_scores_", None)
        if self.model_.prior_is_due:
            self._choose_prior_again()
        return self

    def predict(self, X: Any, return_std: bool = False, quantiles: Any = None) -> Any:
        """Mean (and standard deviation) of the forest's predictive mixture (eq. 4–5), or its
        quantiles.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        return_std : bool, default=False
            Also return the predictive standard deviation (label noise included).
        quantiles : float, sequence of float in (0, 1) or None, default=None
            Return these quantiles of the predictive instead (:meth:`predict_quantiles`; the
            way quantile-forest's ``predict`` takes them, so a ``Pipeline`` can pass them).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            Means of the predictive mixture.
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is True.
        values : ndarray of shape (n_samples,) or (n_samples, n_quantiles)
            Only when ``quantiles`` is given: one value per point for a single level given
            as a number, one column per level for a sequence.
        """
        if quantiles is not None:
            if return_std:
                raise ValueError("ask for return_std or for quantiles, not both")
            return self.predict_quantiles(X, quantiles)
        X = self._fitted_input(X)
        mean, var = self.model_.predict(X, self._threads())
        return (mean, np.sqrt(var)) if return_std else mean

    def predict_quantiles(self, X: Any, quantiles: Any) -> np.ndarray:
        """Quantiles of the predictive mixture at each point.

        Exact quantiles of the mixture of Gaussians (Halley–bisection on its CDF), not a
        Gaussian approximation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        quantiles : float or sequence of float, each in (0, 1)
            Levels of the quantiles.

        Returns
        -------
        values : ndarray of shape (n_samples,) or (n_samples, n_quantiles)
            The quantiles: for a level given as a number, one per point (as quantile-forest
            returns it); for a sequence, one column per level.
        """
        requested = np.asarray(quantiles, dtype=np.float64)
        if requested.ndim > 1:
            raise ValueError(
                f"quantiles must be a number or a 1-d sequence, got shape {requested.shape}"
            )
        levels = [float(q) for q in np.atleast_1d(requested)]
        if not levels:
            raise ValueError("quantiles must hold at least one level, got none")
        for q in levels:
            check_parameter("quantiles", q, [Real(low=0, high=1, closed="neither")])
        X = self._fitted_input(X)
        values = self.model_.quantiles(X, levels, self._threads())
        return values[:, 0] if requested.ndim == 0 else values

    def predict_interval(
        self, X: Any, confidence: float = 0.9, method: str = "model"
    ) -> np.ndarray:
        """Central interval holding ``confidence`` of the target at each point.

        ``method="model"``: the exact ``(1 − confidence)/2`` and ``(1 + confidence)/2``
        quantiles of the forest's predictive (:meth:`predict_quantiles`); their coverage is
        as good as the predictive's calibration (chosen on held-out rows by default), with no
        guarantee. ``method="conformal"``: m(x) ± q̂ σ(x) calibrated by :meth:`conformalize`
        on rows not used to fit, which covers at least ``confidence`` of new exchangeable
        rows (split-conformal guarantee, marginal over the rows).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        confidence : float, default=0.9
            Coverage of the interval, in (0, 1).
        method : {"model", "conformal"}, default="model"
            Where the bounds come from (above).

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
            Lower and upper bounds.
        """
        check_parameter("method", method, [Options({"model", "conformal"})])
        if method == "conformal":
            return self._conformal_interval(X, confidence)
        check_parameter("confidence", confidence, [Real(low=0, high=1, closed="neither")])
        return self.predict_quantiles(X, [(1 - confidence) / 2, (1 + confidence) / 2])

    @document("X", "y")
    def log_predictive_density(self, X: Any, y: Any) -> np.ndarray:
        """log p(y_i | x_i) under the predictive mixture (log-sum-exp over its Gaussians).

        The negative mean is the NLPD reported in the paper.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            log p(y_i | x_i) under the predictive mixture (log-sum-exp over its Gaussians).
        """
        check_is_fitted(self)
        X, y = self._training_data(X, y, reset=False)
        return self.model_.log_density(self._core_input(X), y, self._threads())

    def _impurity_decrease(self, index: int) -> np.ndarray:
        """Per node: the decrease in the training targets' sum of squared deviations."""
        return self.model_.impurity_decrease(self._check_tree_index(index))

    @document("index")
    def node_posterior(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of every node mean of tree ``index``.

        Returns
        -------
        mean, var : ndarray of shape (n_nodes,)
            In the node order of :meth:`tree_arrays`.
        """
        index = self._check_tree_index(index)
        return self.model_.node_posterior(index, self._threads())
