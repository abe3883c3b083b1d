"""Mondrian forests with the lifetime λ chosen on the lifetime path (Balog's report §4.1):
fit at Λ on part of the data, score every λ ∈ [0, Λ] on the rest in one sweep, refit at the
best λ on all of it."""

from __future__ import annotations

import numbers
import os
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from mondrian_learn._base import restore_on_failure, store_parameters
from mondrian_learn._lifetime_path import (
    CV,
    LIFETIMES,
    VALIDATION_FRACTION,
    best_index,
    kept_row_splits,
    split_results,
    validation_splits,
)
from mondrian_learn._targets import check_numeric_target, check_sample_weight
from mondrian_learn._validation import Options, Param
from mondrian_learn.forest._base import MondrianForestBase
from mondrian_learn.forest._classifier import MondrianForestClassifier
from mondrian_learn.forest._regressor import MondrianForestRegressor


class LifetimeSearchMixin(MondrianForestBase):
    """``fit`` by the lifetime path (user guide: Choosing the lifetime, "The CV estimators").
    A subclass names its validation scores in ``_selections``: score name → whether larger is
    better."""

    _selections: ClassVar[dict[str, bool]] = {}

    @restore_on_failure
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Fit on each split's training rows at Λ, choose λ on the validation rows' paths,
        refit on all rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Targets (regression) or labels (classification).
        sample_weight : float or array-like of shape (n_samples,), default=None
            Row weights (frequencies, as the forest's ``fit`` reads them), in every fit and
            in the validation scores; rows of zero weight are dropped before the split.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        regression = self._is_regression()
        X, y = self._check_input(X, y, reset=True, y_numeric=regression)
        if regression:
            check_numeric_target(y)
        # The fits below see arrays without names: the names of X are set again at the end.
        names = vars(self).get("feature_names_in_")
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        splits = self._splits_as_given(X, y, keep)
        X, y = X[keep], y[keep]
        classes = None if regression else np.unique(y)
        codes = y if classes is None else np.searchsorted(classes, y)
        if splits is None:
            splits = validation_splits(
                self.cv,
                X,
                codes,
                self.validation_fraction,
                self.random_state,
                classifier=not regression,
            )
        results, path = self._score_splits(X, y, classes, weights, splits)
        larger_is_better = self._selections[self.selection]
        best = best_index(results["mean_score"], larger_is_better=larger_is_better)
        every_cut = bool(results.pop("every_cut")[best])
        lifetime = float(self.lifetime) if every_cut else float(path["lifetimes"][best])
        self._fit(X, y, lifetime=lifetime, sample_weight=weights)
        if names is not None:
            self.feature_names_in_ = names
        self.path_, self.cv_results_ = path, results
        self.best_index_, self.lifetime_ = best, lifetime
        return self

    def _splits_as_given(
        self, X: Any, y: np.ndarray, keep: Any
    ) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """The splits of a ``cv`` splitter or iterable, which index the rows of ``X`` as
        given, with the rows of zero weight (not in ``keep``) left out and the others
        renumbered as after they are dropped; None for ``cv`` None or an int (split after
        the rows are dropped)."""
        if self.cv is None or isinstance(self.cv, numbers.Integral):
            return None
        return kept_row_splits(self.cv, X, y, keep, classifier=not self._is_regression())

    def _score_splits(
        self,
        X: Any,
        y: np.ndarray,
        classes: np.ndarray | None,
        weights: np.ndarray | None,
        splits: list[tuple[np.ndarray, np.ndarray]],
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Fit at Λ on each split's training rows and score the path on its validation rows
        at the first split's checkpoints; ``cv_results_`` (with ``every_cut``: whether each
        checkpoint holds every cut of the first split's forest) and the first split's path.
        """
        key = f"validation_{self.selection}"
        grid: Any = self.lifetimes
        scores, split_weights = [], []
        for train, held_out in splits:
            w_train, w_held_out = (
                (None, None) if weights is None else (weights[train], weights[held_out])
            )
            self._fit(X[train], y[train], classes=classes, sample_weight=w_train)
            path = self.lifetime_path(X[held_out], y[held_out], grid, w_held_out)
            if not scores:
                first = path
                n_cuts = int(np.sum(self.model_.n_leaves())) - self.model_.n_trees
                every_cut = np.asarray(path["n_cuts"]) == n_cuts
                # The other splits' forests are scored at the same λ, the forest with every
                # cut (Λ, or past every birth time when Λ = ∞) where the first's held all.
                end = float(self.lifetime) if np.isfinite(self.lifetime) else np.finfo(float).max
                grid = np.where(every_cut, end, np.asarray(path["lifetimes"], dtype=float))
            scores.append(np.asarray(path[key], dtype=float))
            split_weights.append(float(len(held_out) if weights is None else w_held_out.sum()))
        results = {
            "lifetimes": np.asarray(first["lifetimes"], dtype=float),
            **split_results(np.vstack(scores), split_weights),
            "every_cut": every_cut,
        }
        return results, first

    def _is_regression(self) -> bool:
        return "mse" in self._selections


def search_parameters(forest: type, selections: dict[str, bool]) -> dict[str, Param]:
    """The parameter table of a CV estimator: the forest's, then the search's; the first of
    ``selections`` is the default."""
    return {
        **forest._parameters,  # type: ignore[attr-defined]
        "lifetimes": LIFETIMES,
        "validation_fraction": VALIDATION_FRACTION,
        "selection": Param(next(iter(selections)), Options(set(selections))),
        "cv": CV,
    }


class MondrianForestRegressorCV(LifetimeSearchMixin, MondrianForestRegressor):
    """Mondrian forest regression with the lifetime chosen on the lifetime path.

    ``fit`` fits the forest at Λ = ``lifetime`` on part of the rows, scores every λ ∈ [0, Λ] on
    the others in one sweep (:meth:`lifetime_path`, Balog's report §4.1) and refits on all rows
    at the λ of the best validation score (user guide: Choosing the lifetime, "The CV
    estimators"). The path scores leaf means, Gaussian with σ_y² plus the spread
    over trees, a simpler predictor than the refitted hierarchical posterior: λ is chosen for it.

    Parameters
    ----------
    n_estimators, lifetime, min_samples_split, random_state, n_jobs, verbose, \
scale_features, candidate_dimensions, candidate_locations, point_store, prior_mean, gamma1, \
gamma2, noise_variance, posterior, hyperparameters
        As in :class:`MondrianForestRegressor`, for every fit; ``lifetime`` is Λ, where the
        path ends.
    lifetimes : int, array-like or None, default=100
        Where the path is scored: an int k, at λ = 0 and after every ⌈n_cuts/k⌉-th cut; an
        array, at those λ; None, after every cut (of the first split's forest; the other
        splits' forests are scored at the same λ).
    validation_fraction : float, default=0.2
        Share of the distinct rows held out to score the path when ``cv=None`` (drawn by
        ``random_state``).
    selection : {"mse", "nlpd"}, default="mse"
        The validation score that picks λ.
    cv : int, cross-validation generator, iterable or None, default=None
        How the rows are split to score the path (as ``cv`` of scikit-learn's ``RidgeCV``):
        None, one split holding out ``validation_fraction`` of the distinct rows; an int
        k ≥ 2, k folds of the distinct rows (copies of a row share a fold) shuffled by
        ``random_state``, as ``KFold``; a splitter (with ``split`` and ``get_n_splits``) or
        an iterable of (train, validation) index arrays of the rows of ``X``, used as given
        (rows of zero ``sample_weight`` leave both shares).

    Attributes
    ----------
    model_, log_marginal_likelihood_value_, data_min_, data_scale_, n_features_in_
        As in :class:`MondrianForestRegressor`, for the forest refitted at ``lifetime_``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen in ``fit``, when ``X`` has string column names.
    path_ : dict of arrays
        :meth:`lifetime_path` of the forest fitted on the first split's training rows.
    cv_results_ : dict of arrays
        ``lifetimes`` (the λ scored, n_checkpoints), ``split_scores`` (the ``selection``
        score of each split at each λ, n_splits × n_checkpoints), ``split_weights`` (each
        split's validation weight, n_splits) and ``mean_score`` (their weighted mean, on
        which λ is chosen; with one split, its scores).
    best_index_ : int
        The chosen checkpoint.
    lifetime_ : float
        The chosen λ, with which ``model_`` was refitted (``lifetime`` when the best
        checkpoint holds every cut).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = np.sin(6 * X[:, 0]) + 0.3 * rng.normal(size=300)
    >>> from mondrian_learn.forest import MondrianForestRegressorCV
    >>> model = MondrianForestRegressorCV(n_estimators=10, lifetimes=20, random_state=0)
    >>> model = model.fit(X, y)
    >>> len(model.path_["lifetimes"]), bool(model.lifetime_ >= 0)
    (21, True)
    """

    _selections = {"mse": False, "nlpd": False}
    _parameters = search_parameters(MondrianForestRegressor, _selections)

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
        lifetimes: int | ArrayLike | None = 100,
        validation_fraction: float = 0.2,
        selection: str = "mse",
        cv: Any = None,
    ) -> None:
        store_parameters(self, locals())


class MondrianForestClassifierCV(LifetimeSearchMixin, MondrianForestClassifier):
    """Mondrian forest classification with the lifetime chosen on the lifetime path.

    ``fit`` chooses λ as :class:`MondrianForestRegressorCV` does, on the validation log loss
    or accuracy. The path scores leaf class frequencies smoothed towards the parent's, a
    simpler predictor than the refitted forest's: λ is chosen for it.

    Parameters
    ----------
    n_estimators, lifetime, min_samples_split, random_state, n_jobs, verbose, \
scale_features, candidate_dimensions, candidate_locations, point_store, discount_rate, \
min_discount, sharpness
        As in :class:`MondrianForestClassifier`, for every fit; ``lifetime`` is Λ, where the
        path ends.
    lifetimes, validation_fraction
        As in :class:`MondrianForestRegressorCV`.
    selection : {"log_loss", "accuracy"}, default="log_loss"
        The validation score that picks λ.
    cv : int, cross-validation generator, iterable or None, default=None
        As in :class:`MondrianForestRegressorCV`, except that an int k gives k folds
        stratified by label (``StratifiedKFold``).

    Attributes
    ----------
    classes_, sharpness_, min_discount_, model_, data_min_, data_scale_, n_features_in_
        As in :class:`MondrianForestClassifier`, for the forest refitted at ``lifetime_``.
    feature_names_in_, path_, cv_results_, best_index_, lifetime_
        As in :class:`MondrianForestRegressorCV`.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.forest import MondrianForestClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> model = MondrianForestClassifierCV(n_estimators=10, lifetimes=20, random_state=0)
    >>> model = model.fit(X, y)
    >>> len(model.path_["lifetimes"]), model.classes_.tolist()
    (21, [0, 1])
    """

    _selections = {"log_loss": False, "accuracy": True}
    _parameters = search_parameters(MondrianForestClassifier, _selections)

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
        candidate_dimensions: int | float | str = 1 / 3,
        candidate_locations: int = 6,
        point_store: str | os.PathLike[str] = "memory",
        discount_rate: float | None = None,
        min_discount: float | None = None,
        sharpness: float | None = None,
        lifetimes: int | ArrayLike | None = 100,
        validation_fraction: float = 0.2,
        selection: str = "log_loss",
        cv: Any = None,
    ) -> None:
        store_parameters(self, locals())
