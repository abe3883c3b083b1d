"""The Mondrian grid with its lifetimes searched (Balog, *The Mondrian Process in Machine
Learning*, §5.1–5.3): ridge regression on the grid features of the ARD Laplace kernel, one
lifetime per feature, chosen by validation error or by the evidence."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import validate_data

from mondrian_learn import _core
from mondrian_learn._base import UnitBoxMixin, document, restore_on_failure
from mondrian_learn._lifetime_path import VALIDATION_FRACTION, held_out_split
from mondrian_learn._validation import (
    COUNT,
    POSITIVE,
    RUNTIME,
    SCALE_FEATURES_DOC,
    SCALING,
    Options,
    Param,
    Real,
    as_core_array,
    check_memory,
    check_target_scale,
    draw_seed,
)
from mondrian_learn.kernel._grid_search import (
    EvidenceCriterion,
    ValidationCriterion,
    run_search,
)


class MondrianGridRidgeCV(RegressorMixin, UnitBoxMixin):
    """Mondrian grid ridge regression with a lifetime per feature, searched (Balog's report,
    ch. 5).

    M grids cut every feature d by an independent 1-D Poisson process of rate λ_d
    (:class:`MondrianGridFeatures`); the indicator features of their occupied cells, scaled
    1/√M, estimate the ARD Laplace kernel exp(−Σ_d λ_d |x_d − x'_d|), and ridge regression on
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
    (§5.3); see ``kernel/_grid_search.py``. Features whose λ_d reaches ``lifetime_threshold`` are
    selected (§5.2). The model is refitted from scratch at the best lifetimes of the path.

    A later point between two knots of a cut gap lies on the side of the gap's first cut it
    falls on, and the process's later cuts there (born after that cut, before λ_d) are
    integrated out: its feature is the probability that none separates it from that side's
    knot (likewise past the ends of the range, at rate λ_d), so φ(x)·φ(x') estimates the
    kernel without bias for any x and training x' (``kernel/grid/model.rs``).

    Parameters
    ----------
    n_estimators : int, default=50
        Number of grids M. The grids estimate the ARD Laplace kernel with a variance that
        falls as 1/M, at a cost linear in M: on Friedman #1 (N = 10,000) the best
        validation error was 1.083× exact ARD ridge's at M = 50 and 1.039× at M = 200,
        while the exact kernel at the lifetimes each search chose was within 2.3 % of
        ARD's best (``benches/RESULTS.md``, issue 17).
    alpha : float, default=1.0
        Ridge penalty δ² > 0 (as in :class:`MondrianKernelRidge`).
    search : {"add", "add_remove", "lookahead"}, default="add_remove"
        The optimiser (see above).
    lookahead : int, default=3
        K, the moves looked ahead by ``search="lookahead"``.
    cuts_per_move : int or None, default=None
        Cuts a move adds or removes. 1 is the report's step (one cut in one grid); with many
        grids such steps barely change the model and greedy search stalls (Friedman #1,
        N = 2,000, M = 40: validation MSE 2.5–5.8 against 1.43 with M/4, see
        ``benches/RESULTS.md``). None: max(1, M // 4), about a quarter of a cut per grid, so
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
        Share of ``X`` held out for validation when ``fit`` gets no ``X_val``.
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
        N = 1,000, M = 50, between 408 and 754 for N = 5,000, M = 20; ``benches/RESULTS.md``).
        It also bounds the dense routes asked for by name
        (``"cholesky"``, ``"inverse"``): a search that needs more columns is refused, and the
        refit beyond it uses conjugate gradients.
    gradient_tol : float, default=1e-6
        Conjugate gradients stop at ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ ...
    gradient_max_iter : int, default=300
        ... or after this many iterations per evaluation.
    {SCALE_FEATURES_DOC}
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
        (C), ``cg_iterations``, ``solver`` and ``time`` (seconds since ``fit`` began); under
        ``selection="evidence"`` also ``log_evidence_profiled``, ``alpha``,
        ``signal_variance`` and ``noise_variance``.
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

    __doc__ = (__doc__ or "").replace("{SCALE_FEATURES_DOC}", SCALE_FEATURES_DOC)

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
        "lifetime_threshold": Param(0.5, Real(low=0)),
        "solver": Param("auto", Options({"auto", "cholesky", "inverse", "gradient"})),
        "max_dense_features": Param(256, *COUNT),
        "gradient_tol": Param(1e-6, *POSITIVE),
        "gradient_max_iter": Param(300, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    @restore_on_failure
    def fit(
        self, X: Any, y: Any, X_val: Any | None = None, y_val: Any | None = None
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

        Returns
        -------
        self : MondrianGridRidgeCV
            The fitted estimator.
        """
        start = time.perf_counter()
        self._validate_params()
        n_jobs, alpha = self._threads(), float(self.alpha)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        check_target_scale(y)
        X = self._fit_unit_box(X)
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        held_out = self.selection == "validation" and X_val is None
        train_X, train_y = X, y
        if held_out:
            train, rows = held_out_split(X.shape[0], self.validation_fraction, self.random_state)
            train_X, train_y, X_val, y_val = X[train], y[train], X[rows], y[rows]
        elif self.selection == "validation":
            X_val, y_val = validate_data(
                self, X_val, y_val, dtype=np.float64, y_numeric=True, reset=False
            )
            X_val = self._to_unit_box(X_val)
        else:
            X_val, y_val = np.empty((0, X.shape[1])), np.empty(0)
        m, n_points = int(self.n_estimators), X.shape[0] + len(y_val)
        dense = min(int(self.max_dense_features), 2**31)
        check_memory("max_dense_features", self.max_dense_features, 4.0 * dense**2, "the factor")
        check_memory(
            "n_estimators",
            m,
            (8.0 + X.shape[1]) * m * n_points,
            "each point's cell in every grid, each gap's state in every grid and feature",
        )
        search = _core.GridSearch(
            as_core_array(train_X),
            as_core_array(train_y),
            as_core_array(X_val),
            as_core_array(y_val),
            m,
            draw_seed(self.random_state),
            alpha,
            self.solver,
            int(self.max_dense_features),
            float(self.gradient_tol),
            int(self.gradient_max_iter),
            n_jobs,
        )
        criterion: Any = (
            ValidationCriterion(search, n_jobs)
            if self.selection == "validation"
            else EvidenceCriterion(search, train_y, n_jobs)
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
        best = int(np.argmin(path["criterion"]))
        if not np.isfinite(path["criterion"][best]):
            raise ValueError(
                "selection='evidence' needs min(n_samples, n_features of the grid) ≤ 2048 "
                "at some state (an eigendecomposition of that size each): select by validation"
            )
        if self.selection == "evidence":
            alpha = float(path["alpha"][best])
        lifetimes = [float(v) for v in path["lifetimes"][best]]
        refit_y = np.concatenate([train_y, y_val]) if held_out else train_y
        self.model_ = search.refit(as_core_array(refit_y), lifetimes, alpha, n_jobs)
        self.path_ = path
        self.best_index_ = best
        self.n_iter_ = len(path["step"]) - 1
        self.lifetimes_ = np.asarray(lifetimes)
        self.selected_features_ = np.flatnonzero(self.lifetimes_ >= self.lifetime_threshold)
        self.alpha_ = alpha
        return self

    @document("X", returns="y_pred : ndarray of shape (n_samples,)")
    def predict(self, X: Any) -> np.ndarray:
        """ȳ + φ(x)·w: the refitted weights on the grid features at ``lifetimes_`` (points
        between or beyond the training coordinates: see the class notes)."""
        X = self._fitted_input(X)
        return self.model_.predict(X, self._threads())
