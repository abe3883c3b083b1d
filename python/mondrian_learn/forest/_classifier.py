"""Mondrian forest classification: hierarchically smoothed class distributions over the trees'
nodes (Lakshminarayanan, Roy & Teh, NIPS 2014), with cuts optionally guided by the labels
(the label-guided-splits poster)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from mondrian_learn import _core
from mondrian_learn._base import document, restore_on_failure, store_parameters
from mondrian_learn._points import as_core_array, is_core_ready
from mondrian_learn._targets import check_sample_weight
from mondrian_learn._validation import Param, Real
from mondrian_learn.forest._base import FOREST_PARAMETERS, MondrianForestBase
from mondrian_learn.forest._hyperparameters import MIN_CRITERION_ROWS
from mondrian_learn.forest._sharpness import (
    GROWTH,
    half_scoring_trees,
    select_sharpness,
)

#: The least discount until one is chosen (a stream's first rows), and the one the benchmark
#: sets gave the lowest log loss with before it was chosen.
DEFAULT_MIN_DISCOUNT = 0.01


class MondrianForestClassifier(ClassifierMixin, MondrianForestBase):
    """Mondrian forest classification, batch or online.

    The trees are the regressor's Mondrian trees (a block splits at time ``t + E``,
    ``E ~ Exp(linear dimension of its data box)``, until ``lifetime``), except that a block
    whose points all share one class pauses, and resumes when ``partial_fit`` brings another
    class (NIPS 2014, §3). ``partial_fit`` extends the trees by the conditional Mondrian, so a
    label-blind forest grown online has the same distribution as one fitted at once.

    Each tree's class distributions follow a hierarchical normalized stable process (§4):
    ``G_root ~ NSP(d_root, uniform)``, ``G_j | G_parent ~ NSP(d_j, G_parent)``, with discount
    ``d_j = exp(−γ Δ_j)``, Δ_j the time node j lived. The posterior mean is computed by
    interpolated Kneser–Ney smoothing as in the authors' code: a leaf's counts are its class
    counts, an internal node's the tables its children send up (at most one per class), and
    ``p_j = (c_j − d_j t_j + d_j T_j p_parent) / C_j``. A test point may branch off its path
    above node j (probability ``1 − exp(−η_j(x) Δ_j)``, ``η_j(x)`` how far it lies outside j's
    box): the new block's distribution uses j's counts, its parent's distribution as base and
    the discount expected at its birth time, ``d̄ = η/(η + γ) · (1 − e^{−(η+γ)Δ}) / (1 −
    e^{−ηΔ})``, as in the authors' code; where we differ, its tables are the expected number
    for that discount, ``E[t | c] = Γ(c + d̄) / (Γ(1 + d̄) Γ(c))``, instead of one per class.
    ``d̄ → 1`` far from the data, where that block's mean becomes its base, so the prediction
    falls back smoothly to the uniform prior instead of keeping a decision tree's confidence
    (with one table per class it would stop at the root's counts, ``(c − t + T/K) / C``; the
    two rules' accuracy and log loss agree to 4 digits on the benchmark sets).

    Every discount is at least ``min_discount`` (our addition): with an infinite lifetime a
    pure leaf's discount is ``exp(−γ · ∞) = 0`` and it would predict exact 0/1 probabilities
    (an infinite log loss on any point it misclassifies); the floor keeps every probability
    positive.

    Calibrated probabilities (our addition): the average p̄ of the trees' distributions is
    under-confident where the trees disagree (they are draws from the Mondrian prior, not its
    posterior), so the forest predicts ``p_k ∝ p̄_k^τ`` with the sharpness τ (τ = 1: the
    paper's average; temperature scaling, Guo et al., ICML 2017). τ and ``min_discount`` are
    chosen by the forest's log loss on rows its trees were not grown on, as the regressor
    chooses its prior: rows go to folds by a seeded hash of their points, each fold used is
    scored by a few extra trees grown on the others (a quarter of ``n_estimators``, at
    most 8 per fold; discarded after), and the best τ is carried over from their number to
    ``n_estimators`` trees by its 1/K dependence on the number of trees averaged. A stream
    chooses them again whenever its rows have doubled.

    Label-guided cuts (the poster): when a block's split time comes, ``candidate_dimensions``
    dimensions are drawn with probability ∝ extent and ``candidate_locations`` locations
    uniformly in each, and the block is cut where the information gain of its labels is
    largest. The split time is unchanged, so ``lifetime`` keeps its meaning; one candidate
    (1 × 1) is exactly the label-blind Mondrian forest. With guidance, online updates no longer
    have the batch distribution between refits (a conditional-Mondrian cut outside an old box
    cannot be guided; leaf splits are), as the poster notes; a refit restores it
    (:meth:`partial_fit`).

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees M (100, as scikit-learn's forests: log loss still falls from 50 to
        100 trees on the benchmark sets).
    lifetime : float, default=inf
        Lifetime λ, in the units of the features after scaling to the unit box
        (``scale_features=True``; raw units of X otherwise); ``np.inf`` grows every block until
        it is pure or too small.
    min_samples_split : int, default=2
        A block with fewer points does not split (it resumes when online updates bring more).
    random_state : int, RandomState or None, default=None
        Tree ``m`` draws from a stream derived from ``(seed, m)``: identical results for any
        ``n_jobs``.
    n_jobs : int or None, default=None
        Threads for fitting and prediction (None: 1, -1: all cores).
    verbose : int, default=0
        Show fit progress.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its range in the first fit (``data_min_``,
        ``data_scale_``), chosen again from the range of every row seen when ``partial_fit``
        refits the forest (see :meth:`partial_fit`); False keeps raw coordinates.
    discount_rate : float or None, default=None
        γ of the discounts, per unit of ``lifetime``; None: 10 · n_features, the paper's value
        (the probabilities barely depend on it: a thousandfold change moved the benchmark
        sets' log loss in the fourth digit).
    min_discount : float or None, default=None
        The least discount of any node, in [0, 1]; None: chosen on held-out rows (0.01 until
        a stream holds 32 rows).
    sharpness : float or None, default=None
        τ > 0 of ``p_k ∝ p̄_k^τ``; None: chosen on held-out rows (1 until a stream holds 32
        rows). ``sharpness=1, min_discount=0.01`` is the forest of NIPS 2014 with our floor.
    candidate_dimensions : int, float or "sqrt", default=1/3
        T: dimensions drawn per cut (an int; a fraction of n_features, at least 1; "sqrt":
        √n_features, the poster's choice). 1 with ``candidate_locations=1``: label-blind
        cuts. The default, a third of the features, matched the poster's √D in accuracy on
        five benchmark sets and gave a lower log loss on every one.
    candidate_locations : int, default=6
        Q: locations drawn in each candidate dimension (the poster's 6).
    point_store : "memory", "disk" or path-like, default="memory"
        Where the trees keep their training points, which ``partial_fit`` reads again when a
        leaf splits: "memory", "disk" (a nameless temporary file) or a file in the given
        directory, with identical results (user guide: Online learning, "Where the training
        points live").

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    sharpness_ : float
        τ in use.
    min_discount_ : float
        The least discount in use.
    model_ : mondrian_learn._core.ForestClassifier
        The fitted trees and class counts (node arrays via :meth:`tree_arrays`, counts via
        :meth:`node_counts`).
    data_min_, data_scale_ : ndarray of shape (n_features,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = np.where(X[:, 0] > X[:, 1], "up", "down")
    >>> model = MondrianForestClassifier(random_state=0).fit(X[:200], y[:200])
    >>> model = model.partial_fit(X[200:], y[200:])
    >>> str(model.predict([[0.9, 0.1]])[0]), model.predict_proba([[0.9, 0.1]]).shape
    ('up', (1, 2))
    """

    _parameters = {
        **FOREST_PARAMETERS,
        "discount_rate": Param(None, None, Real(low=0)),
        "min_discount": Param(None, None, Real(low=0, high=1)),
        "sharpness": Param(None, None, Real(low=0, closed="right")),
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
        candidate_dimensions: int | float | str = 1 / 3,
        candidate_locations: int = 6,
        point_store: str | os.PathLike[str] = "memory",
        discount_rate: float | None = None,
        min_discount: float | None = None,
        sharpness: float | None = None,
    ) -> None:
        store_parameters(self, locals())

    def _training_data(
        self, X: Any, y: Any, reset: bool, classes: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        X, y = self._check_input(X, y, reset=reset)
        if reset:
            check_classification_targets(y)
            self.classes_ = np.unique(y) if classes is None else np.unique(classes)
            if len(self.classes_) < 2:
                raise ValueError(
                    "MondrianForestClassifier needs at least 2 classes, got 1 class: "
                    f"{self.classes_[0]!r}"
                )
        return X, self._class_indices(y)

    def _class_indices(self, y: Any) -> np.ndarray:
        """The index in ``classes_`` of every label (a ValueError naming unknown ones)."""
        if type(y) is not np.ndarray or y.ndim != 1:
            y = column_or_1d(y, warn=True)  # 40 µs: too slow for one-row updates
        indices = np.searchsorted(self.classes_, y)
        indices = np.minimum(indices, len(self.classes_) - 1)
        unknown = self.classes_[indices] != y
        if np.any(unknown):
            raise ValueError(
                f"y contains labels not among classes_ {list(self.classes_)}: "
                f"{list(np.unique(y[unknown]))[:5]}"
            )
        return as_core_array(indices, dtype=np.uint32)

    def _new_model(self, n_features: int, seed: int, lifetime: float) -> Any:
        return self._core_classifier(n_features, seed, lifetime, bool(self.scale_features))

    def _core_classifier(self, n_features: int, seed: int, lifetime: float, scale: bool) -> Any:
        floor = self.min_discount
        return _core.ForestClassifier(
            n_features,
            lifetime,
            int(self.min_samples_split),
            seed,
            n_classes=len(self.classes_),
            discount_rate=self._discount_rate(n_features),
            min_discount=DEFAULT_MIN_DISCOUNT if floor is None else float(floor),
            scale_features=scale,
            tries=self._candidates(n_features),
            locations=int(self.candidate_locations),
        )

    def _discount_rate(self, n_features: int) -> float:
        rate = self.discount_rate
        return 10.0 * n_features if rate is None else float(rate)

    def _finish_fit(
        self, model: Any, y: np.ndarray, weights: np.ndarray | None, n_jobs: int
    ) -> None:
        self._weight_seen_ = float(len(y) if weights is None else np.sum(weights))
        self._choose_sharpness(model, n_jobs)

    def _choose_sharpness(self, model: Any, n_jobs: int) -> None:
        """Choose τ and ``min_discount`` where not fixed (class docstring) on every row the
        model holds, and set them; without a choice (too few rows to hold out) the values
        in use stand (the fixed ones, or 1 and 0.01 before any choice)."""
        fixed = {"min_discount": self.min_discount, "sharpness": self.sharpness}
        if self.sharpness is not None:
            model.set_sharpness(float(self.sharpness))
        if any(value is None for value in fixed.values()):
            choice = select_sharpness(
                model.training_rows(),
                lambda k: self._scoring_forest(model, k),
                self._forest_trees(),
                model.discounts[0],
                fixed,
                n_jobs,
                model.seed,
            )
            if choice is not None:
                model.set_discounts(model.discounts[0], choice["min_discount"])
                model.set_sharpness(choice["sharpness"])
        # Counted from the last attempt, made or not: a stream whose rows cannot be held out
        # (one class so far) is not retried on every row. Counted in weight, so that integer
        # weights choose when repeated rows would.
        seen = self._weight_seen_
        self._weight_at_choice_ = seen if seen >= MIN_CRITERION_ROWS else 0.0

    def _scoring_forest(self, model: Any, k: int) -> Any:
        """Scoring forest ``k`` of the held-out rule for ``model``: the same trees' law, on
        points already in its coordinates, its trees seeded after the model's."""
        scoring = self._core_classifier(model.n_features, model.seed, model.lifetime, False)
        m = self._forest_trees()
        scoring.offset_trees(m + k * half_scoring_trees(m))
        return scoring

    @property
    def sharpness_(self) -> float:
        """τ in use (chosen, or ``sharpness``)."""
        check_is_fitted(self)
        return float(self.model_.sharpness)

    @property
    def min_discount_(self) -> float:
        """The least discount in use (chosen, or ``min_discount``)."""
        check_is_fitted(self)
        return float(self.model_.discounts[1])

    @restore_on_failure
    def partial_fit(
        self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None
    ) -> MondrianForestClassifier:
        """Add points online: the trees are extended by the conditional Mondrian (NIPS 2014,
        "ExtendMondrianBlock"; a pure leaf that receives another class resumes splitting) and
        the class counts updated along the new points' paths (rows weighted as in
        :meth:`fit`): O(depth) per row and tree. Until a large prediction recomputes every
        node's smoothed distribution, predictions compute them along their own paths (the
        same values, O(depth · K) per tree). Whenever the rows reach a power of two (up to
        32,768), or an update at least doubles them, the forest is refitted on every row
        instead, so that it is then exactly the batch fit of the rows seen (user guide:
        Online learning, "What a stream gets").

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New points.
        y : array-like of shape (n_samples,)
            Their labels.
        classes : array-like of shape (n_classes,), default=None
            Every class the stream will hold: required on the first call (as for
            scikit-learn's online classifiers), ignored afterwards.
        sample_weight : float or array-like of shape (n_samples,), default=None
            Row weights (frequencies, see :meth:`fit`); a zero weight drops its row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if not hasattr(self, "model_"):
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            return self._fit(X, y, classes=classes, sample_weight=sample_weight)
        self._place_points(self.model_)
        ready = is_core_ready(X, None, self.n_features_in_, self._point_dtypes)
        if not ready or hasattr(self, "feature_names_in_"):
            X, y = self._check_input(X, y)
        if sample_weight is None:
            X = self._core_input(X)
            labels = self._class_indices(y)
            self.model_.partial_fit(X, labels, self._threads())
            self._weight_seen_ += len(labels)
        else:
            weights, keep = check_sample_weight(sample_weight, X.shape[0])
            if weights is not None and len(weights):
                X, y = self._core_input(X[keep]), self._class_indices(np.asarray(y)[keep])
                self.model_.partial_fit(X, y, self._threads(), weights)
                self._weight_seen_ += float(np.sum(weights))
        if self._weight_seen_ >= max(MIN_CRITERION_ROWS, GROWTH * self._weight_at_choice_):
            self._choose_sharpness(self.model_, self._threads())
        return self

    @document("X")
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities: the forest's average of each tree's branch-off mixture of
        smoothed class distributions, raised to the power ``sharpness_`` and normalised
        (class notes); columns in the order of ``classes_``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class probabilities: the forest's average of each tree's branch-off mixture of smoothed
            class distributions, raised to the power ``sharpness_`` and normalised (class notes);
            columns in the order of ``classes_``.
        """
        X = self._fitted_input(X)
        return self.model_.predict_proba(X, self._threads())

    @document("X")
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithms of :meth:`predict_proba` (finite when ``min_discount > 0``, except
        where a sharpness τ > 1 takes a probability below the smallest float, −inf there).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Logarithms of :meth:`predict_proba` (finite when ``min_discount > 0``, except where a
            sharpness τ > 1 takes a probability below the smallest float, −inf there).
        """
        return np.log(self.predict_proba(X))

    @document("X")
    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each point.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The most probable class of each point.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _impurity_decrease(self, index: int) -> np.ndarray:
        """Per node: n_j H(j) − n_l H(l) − n_r H(r), H the entropy of the class counts."""
        counts = self.model_.node_counts(self._check_tree_index(index))
        n = counts.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = counts / n[:, None]
            weighted = -n * np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
        a = self.tree_arrays(index)
        internal = a["split_dim"] >= 0
        decrease = np.zeros(len(n))
        decrease[internal] = (
            weighted[internal] - weighted[a["left"][internal]] - weighted[a["right"][internal]]
        )
        return decrease

    @document("index")
    def node_counts(self, index: int) -> np.ndarray:
        """Class counts of every node of tree ``index``.

        Returns
        -------
        counts : ndarray of shape (n_nodes, n_classes), dtype float64
            Training points of each class in each node, weighted by ``sample_weight`` (their
            number without weights; node order of :meth:`tree_arrays`, class order of
            ``classes_``).
        """
        check_is_fitted(self)
        return self.model_.node_counts(self._check_tree_index(index))
