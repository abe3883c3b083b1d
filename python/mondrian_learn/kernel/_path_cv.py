"""Kernel-width selection along the Mondrian kernel's lifetime path (Balog et al., UAI 2016,
§4; Balog's report §4.2 and appendix D)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import RegressorMixin

from mondrian_learn import _core
from mondrian_learn._base import restore_on_failure, store_parameters
from mondrian_learn._lifetime_path import (
    CV,
    LIFETIMES,
    VALIDATION_FRACTION,
    best_index,
    checkpoint_arguments,
    keep_cv_results,
    split_results,
)
from mondrian_learn._points import as_core_array
from mondrian_learn._progress import PathProgress, progress_callback
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    POSITIVE,
    RUNTIME,
    SCALING,
    Options,
    Param,
    RealArray,
)
from mondrian_learn.kernel._base import MondrianKernelBase, RidgePredictMixin
from mondrian_learn.kernel._evidence import EVIDENCE_MAX_SIZE, path_evidence
from mondrian_learn.kernel._folds import ValidationFolds, ValidationFoldsMixin, total_weight


class MondrianKernelRidgeCV(
    RegressorMixin, RidgePredictMixin, ValidationFoldsMixin, MondrianKernelBase
):
    """Mondrian kernel ridge with the lifetime λ (inverse kernel width) chosen on the path.

    M Mondrian trees are sampled once with lifetime Λ. Sweeping λ from 0 to Λ through all
    their cuts in birth-time order, each cut replaces one feature column by its two children;
    the ridge solution follows in O(C²) per cut (Cholesky factor of A = ΦᵀΦ + αI: the split
    column is deleted by Givens rotations and the children appended by one triangular solve;
    Balog et al., UAI 2016, §4; Balog's report §4.2, appendix D), so every λ in [0, Λ] is
    evaluated for about the price of one fit at Λ. λ is chosen by validation error, together
    with the ridge penalty α among ``alphas`` (as scikit-learn's ``RidgeCV``: one path per α
    on the same trees, so about ``len(alphas)`` fits' price), or by the log marginal
    likelihood (supplement B; the formula is in :class:`MondrianKernelRidge`), then the model
    is refitted at that (λ, α) on the same trees (extended by the conditional Mondrian with
    the held-out points when those were split off ``X``). With ``cv`` folds, each fold
    samples its own trees on its training rows and runs its paths at the first fold's
    checkpoints; the folds' validation error, weighted by their validation rows, chooses
    (λ, α), and the model is refitted on all of ``X`` (trees sampled on it at Λ, stopped at
    λ; Λ is the first fold's).

    When the number of features C exceeds ``max_dense_features`` (``solver="auto"``), the
    path continues by the gradient route of §4.2.2: the split column's weight is copied to
    both children and, at each checkpoint, conjugate gradients on A w = Φᵀy are warm-started
    from there (an approximation: no log marginal likelihood; ``path_["solver"]`` says which
    route produced each point). Each α of ``alphas`` runs its own path, so the gradient route
    scores every α as well, each to ``gradient_tol``.

    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M.
    max_lifetime : float or None, default=None
        Λ, the end of the path, in the units of the scaled features (the unit box unless
        ``scale_features=False``). None: the lifetime at which a Mondrian process on the data's
        bounding box has as many expected cells as there are training points,
        Π_d (1 + Λ r_d) = N (r_d the feature ranges).
    alphas : float or array-like of shape (n_alphas,), default=(0.1, 1.0, 10.0)
        Ridge penalties α > 0 (δ² of :class:`MondrianKernelRidge`) tried at every checkpoint
        under ``selection="validation"`` (scikit-learn's ``RidgeCV`` grid by default; each α
        costs one path). With K = ΦΦᵀ ≈ the Laplace kernel (K(x, x) = 1), α is the
        noise-to-signal variance ratio of the GP: 0.1 … 10 spans a signal ten times the noise
        to noise ten times the signal; where ``alpha_`` is an end of the grid (on the kernel
        paper's cpu_act data, 0.1), a wider grid may do better, at one path per α. Ties go to
        the first α in the given order. Under
        ``selection="evidence"``, α is estimated instead (``alpha_``), and the path's fixed-α
        columns are computed at the middle one of the sorted ``alphas``.
    lifetimes : int, array-like or None, default=100
        Where to evaluate: an int k — at λ = 0 and after every ⌈n_cuts/k⌉-th cut (k points,
        evenly spread over the number of features); an array — at those lifetimes (within
        [0, Λ]); None — after every cut.
    selection : {"validation", "evidence"}, default="validation"
        Choose λ by the validation mean squared error, or by the log marginal likelihood of
        the GP ``y − ȳ ~ N(0, s² ΦΦᵀ + σ² I)`` with both the signal variance s² and the noise
        σ² estimated at every checkpoint (an eigendecomposition of
        size min(N, C) per checkpoint, where it is at most 2,048), which needs no held-out
        data; the model is then refitted with ``alpha_ = σ̂²/ŝ²`` at the chosen λ. (With α
        fixed and only σ² profiled — ``path_["log_evidence"]`` — features that cannot fit y
        to its noise make the weights' prior far too broad, and the evidence prefers λ = 0.)
    validation_fraction : float, default=0.2
        Share of ``X`` held out for validation when ``fit`` gets no ``X_val`` and ``cv`` is
        None.
    cv : int, cross-validation splitter, iterable or None, default=None
        As scikit-learn's ``RidgeCV``: None — one hold-out of ``validation_fraction`` drawn by
        ``random_state``, its rows added back by extending the trees for the final model; an
        int k ≥ 2 — k shuffled folds (``KFold``, seeded by ``random_state``); a splitter or
        an iterable of (train, validation) index arrays — used as given. Only for
        ``selection="validation"`` without ``X_val``.
    solver : {"auto", "cholesky", "inverse", "gradient"}, default="auto"
        Path route: Cholesky factor; explicit inverse (the report's updates; a cross-check);
        gradient (§4.2.2); auto = Cholesky while C ≤ ``max_dense_features``, then gradient.
    max_dense_features : int, default=4096
        Largest C for the dense C × C factor under ``solver="auto"``.
    gradient_tol : float, default=1e-6
        Conjugate gradients stop at ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ ...
    gradient_max_iter : int, default=300
        ... or after this many iterations per checkpoint.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state, n_jobs, verbose
        As in :class:`MondrianKernelRidge`; ``random_state`` also draws the validation split.

    Attributes
    ----------
    path_ : dict of arrays
        Per checkpoint: ``lifetimes``, ``n_cuts``, ``n_features`` (C), ``train_mse``,
        ``validation_mse`` (NaN under ``selection="evidence"``), ``log_evidence`` (σ²
        profiled; NaN on the gradient route), ``log_det``, ``solver`` and ``cg_iterations``,
        all at ``alpha_`` (with ``cv`` folds: ``validation_mse`` is the folds' weighted
        mean, the rest the first fold's); under ``selection="evidence"`` also
        ``log_evidence_profiled``, ``alpha`` (σ̂²/ŝ²), ``signal_variance`` and
        ``noise_variance`` (NaN where min(N, C) exceeds 2,048).
    cv_results_ : dict of arrays
        Under ``selection="validation"`` only (``X_val`` or the held-out share is one
        split): ``lifetimes`` (the λ scored, n_checkpoints), ``alphas`` (n_alphas),
        ``split_scores`` (the validation mean squared error of each split at each λ and α,
        n_splits × n_checkpoints × n_alphas), ``split_weights`` (each split's validation
        weight, n_splits) and ``mean_score`` (their weighted mean, n_checkpoints × n_alphas,
        on which (λ, α) is chosen; with one split, its scores).
    best_index_ : int
        The chosen checkpoint.
    lifetime_ : float
        The chosen λ (units of the scaled features).
    alpha_ : float
        The ridge penalty of ``model_``: the chosen one of ``alphas``, or σ̂²/ŝ² at
        ``lifetime_`` under ``selection="evidence"``.
    max_lifetime_ : float
        Λ used.
    model_ : mondrian_learn._core.KernelRidge
        The refitted model at ``lifetime_``.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianKernelRidgeCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(500, 2)); y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> model = MondrianKernelRidgeCV(20, max_lifetime=10.0, lifetimes=30, random_state=0)
    >>> model = model.fit(X, y)
    >>> bool(0 < model.lifetime_ <= 10.0), len(model.path_["lifetimes"])
    (True, 31)
    """

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "max_lifetime": Param(None, None, *FINITE_LIFETIME),
        "alphas": Param((0.1, 1.0, 10.0), *POSITIVE, RealArray(low=0)),
        "lifetimes": LIFETIMES,
        "selection": Param("validation", Options({"validation", "evidence"})),
        "validation_fraction": VALIDATION_FRACTION,
        "cv": CV,
        "solver": Param("auto", Options.of_core("solver")),
        "max_dense_features": Param(4096, *COUNT),
        "gradient_tol": Param(1e-6, *POSITIVE),
        "gradient_max_iter": Param(300, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        max_lifetime: float | None = None,
        alphas: float | ArrayLike = (0.1, 1.0, 10.0),
        lifetimes: int | ArrayLike | None = 100,
        selection: str = "validation",
        validation_fraction: float = 0.2,
        cv: Any = None,
        solver: str = "auto",
        max_dense_features: int = 4096,
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
    ) -> MondrianKernelRidgeCV:
        """Run the path, choose (λ, α), refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Their targets.
        X_val, y_val : array-like, optional
            Validation data for ``selection="validation"``. When given, they are only used
            to choose (λ, α) (the final model is fitted on ``X`` alone); otherwise ``cv``
            says how ``X`` is split. Their rows weigh 1 each.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, as :meth:`MondrianKernelRidge.fit` reads them (row i's noise
            σ²/v_i; an integer weight repeats the row, a zero weight removes it), in every
            path, validation error (Σ v_i (y_i − ŷ_i)² / Σ v_i), evidence and refit, and in
            Λ (``max_lifetime=None``: as many cells as Σ v_i). Weighted rows are split by
            ``cv`` None or an int with equal rows kept together; weights all 1 fit exactly
            as None.

        Returns
        -------
        self : MondrianKernelRidgeCV
            The fitted estimator.
        """
        self._validate_params()
        alphas = np.atleast_1d(np.asarray(self.alphas, dtype=np.float64)).ravel()
        if not np.all(alphas > 0):
            raise ValueError(f"alphas must hold positive numbers, got {self.alphas!r}")
        rows = self._validation_folds(X, y, X_val, y_val, sample_weight)
        if self.selection == "evidence":
            self._fit_evidence(rows.X, rows.y, rows.weights, alphas)
        else:
            self._fit_validation(rows, alphas)
        return self

    def _path_settings(self) -> tuple[Any, ...]:
        """The core path's arguments after α."""
        return (
            self.solver,
            int(self.max_dense_features),
            float(self.gradient_tol),
            int(self.gradient_max_iter),
            False,
            self._threads(),
        )

    def _max_lifetime(self, X: np.ndarray, weights: np.ndarray | None) -> float:
        """Λ for trees sampled on the checked rows ``X`` (weighing ``weights``: as many cells
        as their total weight, what their repetitions would give)."""
        if self.max_lifetime is None:
            return self._lifetime_for_cells(X, total_weight(weights, X.shape[0]))
        return float(self.max_lifetime)

    def _features(self, X: np.ndarray, max_lifetime: float) -> Any:
        """The trees on the checked rows ``X`` (core ``KernelFeatures``, which reads them
        through the map) with lifetime ``max_lifetime``."""
        points = self._core_input(X)
        return self._sample_trees(
            lambda seed, n_jobs, slice_size, progress: _core.KernelFeatures(
                points, int(self.n_estimators), max_lifetime, seed, n_jobs, slice_size, progress
            ),
            X.shape[0],
        )

    def _fit_validation(self, rows: ValidationFolds, alphas: np.ndarray) -> None:
        """Choose (λ, α) by the folds' pooled validation error of one path per fold and α, at the
        first fold's checkpoints; refit (class notes). With a share of ``X`` held out, its rows
        extend the first fold's trees for the final model."""
        folds = rows.folds
        n_jobs, settings = self._threads(), self._path_settings()
        max_lifetime = self._max_lifetime(folds[0].X, folds[0].weights)
        n_checkpoints, grid = checkpoint_arguments(self.lifetimes, max_lifetime)
        several = len(folds) > 1
        # Several folds: one report for them all (their trees and paths stay quiet).
        update, close = progress_callback(len(folds), "folds", self.verbose if several else 0)
        paths: list[list[dict[str, Any]]] = []
        first_features: Any = None
        try:
            for k, (train_X, train_y, train_w, val_X, val_y, val_w) in enumerate(folds):
                features = self._features(train_X, max_lifetime)
                if k == 0:
                    first_features = features
                fold_paths, validation_points = [], self._core_input(val_X)
                with PathProgress("cuts", self.verbose, runs=len(alphas)) as progress:
                    for alpha in alphas:
                        try:
                            path = features.path(
                                as_core_array(train_y),
                                validation_points,
                                as_core_array(val_y),
                                max_lifetime,
                                float(alpha),
                                n_checkpoints,
                                grid,
                                *settings,
                                progress.callback,
                                weights=train_w,
                                val_weights=val_w,
                            )
                        except ValueError as error:  # the core names its own α "alpha"
                            raise ValueError(f"alphas: the path at α={alpha}: {error}") from error
                        fold_paths.append(path)
                        progress.next_run()
                if k == 0:
                    # Every fold and α is scored at the first path's checkpoints.
                    n_checkpoints = None
                    grid = [float(v) for v in fold_paths[0]["lifetimes"]]
                paths.append(fold_paths)
                update(k + 1)
            # With cv, the final model's trees on all of X, within the same report.
            everything = self._features(rows.X, max_lifetime) if self.cv is not None else None
        finally:
            close()
        scores = np.array([[p["validation_mse"] for p in fold] for fold in paths])
        # Folds weighted by their validation rows (the pooled error), as the CV forests do.
        splits = split_results(scores.transpose(0, 2, 1), rows.validation_weights())
        by_alpha = splits["mean_score"]
        # Ties: the first checkpoint (smallest λ), then the first α.
        best, which = np.unravel_index(best_index(by_alpha), by_alpha.shape)
        path = paths[0][which]
        path["solver"] = np.asarray(path["solver"])
        path["validation_mse"] = by_alpha[:, which].copy()
        results = {"lifetimes": np.asarray(path["lifetimes"]), "alphas": alphas, **splits}
        lifetime, alpha = float(path["lifetimes"][best]), float(alphas[which])
        refit_y, refit_w = rows.refit_targets()
        if everything is not None:
            model = everything.refit(as_core_array(refit_y), lifetime, alpha, n_jobs, None, refit_w)
        else:
            # A held-out share extends the trees with its points (None: X_val only scored).
            extension = self._core_input(folds[0].X_val) if rows.held_out else None
            model = first_features.refit(
                as_core_array(refit_y), lifetime, alpha, n_jobs, extension, refit_w
            )
        self._keep(path, int(best), alpha, max_lifetime, model, results)

    def _fit_evidence(
        self, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None, alphas: np.ndarray
    ) -> None:
        """Choose λ and α = σ̂²/ŝ² by the two-variance evidence at the checkpoints (rows
        weighted by ``weights``); refit."""
        n_jobs = self._threads()
        max_lifetime = self._max_lifetime(X, weights)
        n_checkpoints, grid = checkpoint_arguments(self.lifetimes, max_lifetime)
        features = self._features(X, max_lifetime)
        core_y = as_core_array(y)
        with PathProgress("cuts", self.verbose) as progress:
            path = features.path(
                core_y,
                None,
                None,
                max_lifetime,
                float(np.sort(alphas)[(len(alphas) - 1) // 2]),
                n_checkpoints,
                grid,
                *self._path_settings(),
                progress.callback,
                weights=weights,
            )
        path["solver"] = np.asarray(path["solver"])
        path.update(
            path_evidence(
                features,
                self._core_input(X),
                y,
                path["lifetimes"],
                EVIDENCE_MAX_SIZE,
                n_jobs,
                weights,
            )
        )
        if np.all(np.isnan(path["log_evidence_profiled"])):
            raise ValueError(
                "selection='evidence' needs min(n_samples, n_features of the path) ≤ "
                f"{EVIDENCE_MAX_SIZE} at some lifetime (an eigendecomposition of that "
                "size per checkpoint): lower max_lifetime or select by validation"
            )
        best = int(np.nanargmax(path["log_evidence_profiled"]))
        alpha = float(path["alpha"][best])
        model = features.refit(core_y, float(path["lifetimes"][best]), alpha, n_jobs, None, weights)
        self._keep(path, best, alpha, max_lifetime, model, None)

    def _keep(
        self,
        path: dict[str, Any],
        best: int,
        alpha: float,
        max_lifetime: float,
        model: Any,
        cv_results: dict[str, np.ndarray] | None,
    ) -> None:
        """Set the fitted attributes (no ``cv_results_`` without validation splits, not even
        a former fit's)."""
        keep_cv_results(self, cv_results)
        self.path_ = path
        self.best_index_ = best
        self.lifetime_ = float(path["lifetimes"][best])
        self.alpha_ = alpha
        self.max_lifetime_ = max_lifetime
        self.model_ = model
