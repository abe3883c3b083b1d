"""The Mondrian grid with its lifetimes searched (Balog, *The Mondrian Process in Machine
Learning*, §5.1–5.3): ridge regression on the grid features of the ARD Laplace kernel, one
lifetime per feature, chosen by validation error or by the evidence."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin

from mondrian_learn import _core
from mondrian_learn._base import (
    GaussianSampleMixin,
    restore_on_failure,
    store_parameters,
)
from mondrian_learn._lifetime_path import (
    CV,
    VALIDATION_FRACTION,
    best_index,
    keep_cv_results,
    split_results,
)
from mondrian_learn._memory import check_memory
from mondrian_learn._points import as_core_array
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    RUNTIME,
    SCALING,
    Options,
    Param,
    Real,
    draw_seed,
)
from mondrian_learn.kernel._folds import Fold, ValidationFoldsMixin
from mondrian_learn.kernel._grid_search import (
    EvidenceCriterion,
    FoldMeanCriterion,
    ValidationCriterion,
    run_search,
)
from mondrian_learn.kernel._posterior import check_return, refit_predictive


class MondrianGridRidgeCV(RegressorMixin, GaussianSampleMixin, ValidationFoldsMixin):
    """Mondrian grid ridge regression with a lifetime per feature, searched (Balog's report,
    chapter 5).

    M grids cut every feature d by an independent 1-D Poisson process of rate λ_d
    (:class:`.MondrianGridFeatures`); the indicator features of their occupied cells, scaled
    1/√M, estimate the ARD Laplace kernel ``exp(−Σ_d λ_d |x_d − x'_d|)``, and ridge regression on
    them is its kernel ridge. The lifetimes are searched from λ = 0 (one cell per grid): per
    feature and grid, every gap between neighbouring distinct coordinates (of the training and
    validation points) has the birth time of its first cut, Exp(gap width); a move of feature
    d activates its next cuts over all grids in birth order (raising λ_d) or deactivates its
    last ones. Adding a cut splits every cell it crosses that then holds training points on
    both sides; removing one merges the cells it separated; every column change updates the
    ridge solution (a Cholesky factor of ΦᵀΦ + αI updated by Givens rotations and triangular
    solves, O(C² + C·M + rows·M) per column, report appendix D; beyond
    ``max_dense_features`` conjugate gradients warm-started from the previous weights), and
    candidate moves are scored by applying them and restoring the state. Optimisers
    (``search``): greedy add-only (§5.1), greedy add/remove (Fig. 5.6), K-step look-ahead
    (§5.3). Features whose λ_d reaches ``lifetime_threshold`` are
    selected (§5.2). The model is refitted from scratch at the best lifetimes of the path.

    A later point between two knots of a cut gap lies on the side of the gap's first cut it
    falls on, and the process's later cuts there (born after that cut, before λ_d) are
    integrated out: its feature is the probability that none separates it from that side's
    knot (likewise past the ends of the range, at rate λ_d), so φ(x)·φ(x') estimates the
    kernel without bias for any x and training x'.

    Parameters
    ----------
    n_estimators : int, default=50
        Number of grids M. The grids estimate the ARD Laplace kernel with a variance that
        falls as 1/M, at a cost linear in M: on Friedman #1 (N = 10,000) the best
        validation error was 1.083× exact ARD ridge's at M = 50 and 1.039× at M = 200,
        while the exact kernel at the lifetimes each search chose was within 2.3 % of
        ARD's best (in our benchmarks).
    alpha : float, default=1.0
        Ridge penalty δ² > 0 (as in :class:`MondrianKernelRidge`).
    search : {"add", "add_remove", "lookahead"}, default="add_remove"
        The optimiser (see above).
    lookahead : int, default=3
        K, the moves looked ahead by ``search="lookahead"``.
    cuts_per_move : int or None, default=None
        Cuts a move adds or removes. 1 is the report's step (one cut in one grid); with many
        grids such steps barely change the model and greedy search stalls (Friedman #1,
        N = 2,000, M = 40: validation MSE 2.5–5.8 against 1.43 with M/4 in our
        benchmarks). None: max(1, M // 4), about a quarter of a cut per grid, so
        a move raises λ_d by about 1/4 per unit of the feature's range. Where the best
        lifetimes are large, raise it: on California longitude/latitude (N = 10,000, best
        λ ≈ 100) M // 4 ran out of ``max_iter`` at 1.128× exact ARD's error, M cuts per move
        reached 1.032× in 53 s.
    max_iter : int, default=300
        Most steps of the search.
    n_iter_no_change : int, default=20
        The search stops after this many steps without improving its best criterion.
    selection : {"validation", "evidence"}, default="validation"
        The criterion: validation mean squared error, or the log marginal likelihood of the GP
        ``y − ȳ ~ N(0, s² ΦΦᵀ + σ² I)`` with both variances estimated at every state (as
        :class:`MondrianKernelRidgeCV`; an eigendecomposition of size min(N, C) per candidate,
        where it is at most 2,048 — for small problems), which needs no held-out data; the
        model is then refitted with ``alpha_ = σ̂²/ŝ²``.
    validation_fraction : float, default=0.2
        Share of ``X`` held out for validation when ``fit`` gets no ``X_val`` and ``cv`` is
        None.
    cv : int, cross-validation splitter, iterable or None, default=None
        As scikit-learn's ``RidgeCV``: None — one hold-out of ``validation_fraction`` drawn by
        ``random_state``, added back for the final model; an int k ≥ 2 — k shuffled folds
        (``KFold``, seeded by ``random_state``); a splitter or an iterable of (train,
        validation) index arrays — used as given, provided each split puts every row of X
        in training or validation (``KFold``, ``StratifiedKFold`` and ``GroupKFold`` do;
        ``ShuffleSplit`` with a remainder and ``TimeSeriesSplit`` do not and are refused).
        With folds, one search per fold moves in step (every fold holds all the points, so a
        state is the same lifetimes in each), each candidate scored by the folds' validation
        error weighted by their validation rows (k times the work), and the
        model is refitted on all of ``X`` at the best state. Only for
        ``selection="validation"`` without ``X_val``.
    lifetime_threshold : float, default=0.5
        ε of the feature selection: features with λ_d ≥ ε (units of the scaled features) are
        ``selected_features_``.
    solver : {"auto", "cholesky", "inverse", "gradient"}, default="auto"
        How the ridge solution follows the moves: Cholesky factor; explicit inverse (the
        report's §5.1); conjugate gradients warm-started from the previous weights (to
        ``gradient_tol``: an approximation); auto = Cholesky while C ≤ ``max_dense_features``,
        then conjugate gradients.
    max_dense_features : int, default=256
        Largest C for the dense C × C factor under ``solver="auto"``. A cut changes every
        cell it crosses — tens to hundreds of columns at O(C²) each — while conjugate
        gradients cost O(N·M) per iteration whatever C: measured per trial move, the factor
        is faster only up to C of a few hundred (it loses between C = 143 and 365 for
        N = 1,000, M = 50, between 408 and 754 for N = 5,000, M = 20, in our benchmarks).
        It also bounds the dense routes asked for by name
        (``"cholesky"``, ``"inverse"``): a search that needs more columns is refused, and the
        refit beyond it uses conjugate gradients.
    gradient_tol : float, default=1e-6
        Conjugate gradients stop at ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ ...
    gradient_max_iter : int, default=300
        ... or after this many iterations per evaluation.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds the cuts and the validation split.
    n_jobs : int or None, default=None
        Threads (results do not depend on it).
    verbose : int, default=0
        Progress of the search.

    Attributes
    ----------
    lifetimes_ : ndarray of shape (n_features,)
        The chosen λ_d (units of the scaled features).
    selected_features_ : ndarray of int
        Indices of the features with λ_d ≥ ``lifetime_threshold``.
    path_ : dict of arrays
        Per state of the search (the start, then one per step): ``step``, ``dimension`` (the
        feature moved; −1 at the start), ``n_cuts`` and ``lifetimes`` (per feature),
        ``criterion`` (what the search minimises), ``validation_mse``, ``train_mse``,
        ``log_evidence`` (α fixed, σ² profiled; NaN on the gradient route), ``n_features``
        (C), ``cg_iterations``, ``solver`` and ``time`` (seconds since ``fit`` began); with
        ``cv`` folds ``validation_mse`` is the folds' mean weighted by their validation rows
        and ``train_mse`` their mean, the other records the first fold's; under
        ``selection="evidence"`` also ``log_evidence_profiled``, ``alpha``,
        ``signal_variance`` and ``noise_variance``.
    cv_results_ : dict of arrays
        Under ``selection="validation"`` only (``X_val`` or the held-out share is one
        split): ``lifetimes`` (each state's, n_states × n_features), ``split_scores`` (the
        validation mean squared error of each split in each state, n_splits × n_states),
        ``split_weights`` (each split's validation weight, n_splits) and ``mean_score``
        (their weighted mean; with one split, its scores).
    best_index_ : int
        The chosen state.
    n_iter_ : int
        Steps the search took.
    alpha_ : float
        The ridge penalty of ``model_``.
    model_ : mondrian_learn._core.GridRidge
        The ridge refitted at ``lifetimes_`` (on the training and held-out rows when those
        were split off ``X``).
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.kernel import MondrianGridRidgeCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(400, 2)); y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=400)
    >>> model = MondrianGridRidgeCV(10, alpha=0.1, random_state=0).fit(X, y)
    >>> bool(model.lifetimes_[0] > 5 * model.lifetimes_[1]), model.selected_features_
    (True, array([0]))
    """

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "alpha": Param(1.0, *POSITIVE),
        "search": Param("add_remove", Options({"add", "add_remove", "lookahead"})),
        "lookahead": Param(3, *COUNT),
        "cuts_per_move": Param(None, None, *COUNT),
        "max_iter": Param(300, *COUNT),
        "n_iter_no_change": Param(20, *COUNT),
        "selection": Param("validation", Options({"validation", "evidence"})),
        "validation_fraction": VALIDATION_FRACTION,
        "cv": CV,
        "lifetime_threshold": Param(0.5, Real(low=0)),
        "solver": Param("auto", Options.of_core("solver")),
        "max_dense_features": Param(256, *COUNT),
        "gradient_tol": Param(1e-6, *POSITIVE),
        "gradient_max_iter": Param(300, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        alpha: float = 1.0,
        search: str = "add_remove",
        lookahead: int = 3,
        cuts_per_move: int | None = None,
        max_iter: int = 300,
        n_iter_no_change: int = 20,
        selection: str = "validation",
        validation_fraction: float = 0.2,
        cv: Any = None,
        lifetime_threshold: float = 0.5,
        solver: str = "auto",
        max_dense_features: int = 256,
        gradient_tol: float = 1e-6,
        gradient_max_iter: int = 300,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    def fit(
        self,
        X: Any,
        y: Any,
        X_val: Any | None = None,
        y_val: Any | None = None,
        sample_weight: Any = None,
    ) -> MondrianGridRidgeCV:
        """Search the lifetimes, keep the best state of the path, refit there.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Their targets.
        X_val, y_val : array-like, optional
            Validation data for ``selection="validation"``. When given, they only score the
            search (the final model is fitted on ``X`` alone); otherwise
            ``validation_fraction`` of ``X`` is held out and added back for the final model.
            Their rows weigh 1 each.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights of ``X``, as :meth:`MondrianKernelRidge.fit` reads them (row i's
            noise σ²/v_i; an integer weight repeats the row, a zero weight removes it), in
            the search, its validation error (Σ v_i (y_i − ŷ_i)² / Σ v_i), the evidence and
            the refit; a split drawn for ``cv`` None or an int keeps equal rows together.

        Returns
        -------
        self : MondrianGridRidgeCV
            The fitted estimator.
        """
        start = time.perf_counter()
        self._validate_params()
        n_jobs, alpha = self._threads(), float(self.alpha)
        rows = self._validation_folds(X, y, X_val, y_val, sample_weight)
        X, y, weights, first = rows.X, rows.y, rows.weights, rows.folds[0]
        folds = rows.folds if self.cv is not None else None
        m, n_points = int(self.n_estimators), X.shape[0] + len(first.y_val)
        dense = min(int(self.max_dense_features), 2**31)
        check_memory("max_dense_features", self.max_dense_features, 4.0 * dense**2, "the factor")
        n_searches = 1 if folds is None else len(folds) + 1
        check_memory(
            "n_estimators",
            m,
            (8.0 + X.shape[1]) * m * n_points * n_searches,
            "each point's cell in every grid, each gap's state in every grid and feature"
            + ("" if folds is None else ", in one search per fold and one on all of X"),
        )
        seed = draw_seed(self.random_state)

        def searching(fold: Fold) -> Any:
            return _core.GridSearch(
                self._core_input(fold.X),
                as_core_array(fold.y),
                self._core_input(fold.X_val),
                as_core_array(fold.y_val),
                m,
                seed,
                alpha,
                self.solver,
                int(self.max_dense_features),
                float(self.gradient_tol),
                int(self.gradient_max_iter),
                n_jobs,
                fold.weights,
                fold.val_weights,
            )

        criterion: Any
        if folds is not None:
            for fold in folds:
                if len(fold.y) + len(fold.y_val) != X.shape[0]:
                    # Each fold's search must hold every point to draw the same cuts.
                    raise ValueError(
                        "cv must split every row of X into training or validation in each "
                        f"split (as KFold does); a split used {len(fold.y) + len(fold.y_val)} "
                        f"of {X.shape[0]} rows"
                    )
            criterion = FoldMeanCriterion(
                [ValidationCriterion(searching(fold), n_jobs) for fold in folds],
                rows.validation_weights(),
            )
            # The final model is refitted on all of X (no validation rows).
            search = searching(Fold.training_only(X, y, weights))
        else:
            search = searching(first)
            criterion = (
                ValidationCriterion(search, n_jobs)
                if self.selection == "validation"
                else EvidenceCriterion(search, first.y, n_jobs, first.weights)
            )
        cuts_per_move = max(1, m // 4) if self.cuts_per_move is None else int(self.cuts_per_move)
        path = run_search(
            criterion,
            self.search,
            cuts_per_move,
            int(self.lookahead),
            int(self.max_iter),
            int(self.n_iter_no_change),
            int(self.verbose),
            start=start,
        )
        best = best_index(path["criterion"])
        if not np.isfinite(path["criterion"][best]):
            raise ValueError(
                "selection='evidence' needs min(n_samples, n_features of the grid) ≤ 2048 "
                "at some state (an eigendecomposition of that size each): select by validation"
            )
        if self.selection == "evidence":
            alpha = float(path["alpha"][best])
        lifetimes = [float(v) for v in path["lifetimes"][best]]
        refit_y, refit_w = rows.refit_targets()
        refit_X = np.vstack([first.X, first.X_val]) if rows.held_out else X
        self.model_ = search.refit(as_core_array(refit_y), lifetimes, alpha, n_jobs, refit_w)
        # The refitted rows (unmapped), targets and weights, for ``predict(return_std=True)``.
        self._posterior_rows, self._posterior_weights = (refit_X, refit_y), refit_w
        results = None
        if self.selection == "validation":
            # One split (X_val or the held-out share) scored the path with its own error.
            scores = (
                path.pop("split_scores").T
                if folds is not None
                else path["validation_mse"][np.newaxis]
            )
            splits = split_results(scores, rows.validation_weights())
            results = {"lifetimes": path["lifetimes"], **splits}
        keep_cv_results(self, results)
        self.path_ = path
        self.best_index_ = best
        self.n_iter_ = len(path["step"]) - 1
        self.lifetimes_ = np.asarray(lifetimes)
        self.selected_features_ = np.flatnonzero(self.lifetimes_ >= self.lifetime_threshold)
        self.alpha_ = alpha
        return self

    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False) -> Any:
        """ȳ + φ(x)·w: the refitted weights on the grid features at ``lifetimes_`` (points
        between or beyond the training coordinates: see the class notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (finite values).
        return_std : bool, default=False
            Also return the predictive standard deviation of a new target in the Bayesian
            view of the ridge (as :class:`MondrianKernelRidge`: w ~ N(0, σ²/α I),
            y − ȳ ~ N(Φw, σ²I), σ² at its maximum-likelihood value
            σ̂² = (‖y − ȳ‖²_V − ‖L⁻¹ΦᵀV(y − ȳ)‖²)/N): ``sqrt(σ̂² (1 + φ(x)ᵀA⁻¹φ(x)))``
            with A = ΦᵀVΦ + ``alpha_`` I on the refitted rows' features (V their weights),
            from one C × C Cholesky factor of A computed for the call (the refit itself may
            have used conjugate gradients; this is exact); ȳ is treated as known.
        return_cov : bool, default=False
            Also return the joint predictive covariance of new targets at the rows, as
            :meth:`MondrianKernelRidge.predict` does, from the same factor of A (at most
            one of ``return_std`` and ``return_cov``).

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
        X = self._fitted_input(X)
        n_jobs = self._threads()
        mean = self.model_.predict(X, n_jobs)
        if not (return_std or return_cov):
            return mean
        rows, y = self._posterior_rows
        return refit_predictive(
            self.model_.transform,
            self._core_input(rows),
            y,
            getattr(self, "_posterior_weights", None),  # absent in models pickled before
            self.alpha_,
            X,
            mean,
            n_jobs,
            full=return_cov,
        )
