"""Kernel-width selection along the Mondrian kernel's lifetime path (Balog et al., UAI 2016,
§4; Balog's report §4.2 and appendix D)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import validate_data

from mondrian_learn import _core
from mondrian_learn._base import restore_on_failure
from mondrian_learn._lifetime_path import (
    LIFETIMES,
    VALIDATION_FRACTION,
    checkpoint_arguments,
    held_out_split,
)
from mondrian_learn._progress import PathProgress
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    POSITIVE,
    RUNTIME,
    SCALE_FEATURES_DOC,
    SCALING,
    Options,
    Param,
    as_core_array,
    check_target_scale,
)
from mondrian_learn.kernel._base import MondrianKernelBase, RidgePredictMixin, lifetime_for_cells
from mondrian_learn.kernel._evidence import EVIDENCE_MAX_SIZE, path_evidence


class MondrianKernelRidgeCV(RegressorMixin, RidgePredictMixin, MondrianKernelBase):
    """Mondrian kernel ridge with the lifetime λ (inverse kernel width) chosen on the path.

    M Mondrian trees are sampled once with lifetime Λ. Sweeping λ from 0 to Λ through all
    their cuts in birth-time order, each cut replaces one feature column by its two children;
    the ridge solution follows in O(C²) per cut (Cholesky factor of A = ΦᵀΦ + αI: the split
    column is deleted by Givens rotations and the children appended by one triangular solve;
    Balog et al., UAI 2016, §4; Balog's report §4.2, appendix D), so every λ in [0, Λ] is
    evaluated for about the price of one fit at Λ. λ is chosen by validation error or by the
    log marginal likelihood (supplement B; the formula is in :class:`MondrianKernelRidge`),
    then the model is refitted at that λ on the same trees (extended by the conditional
    Mondrian with the held-out points when those were split off ``X``).

    When the number of features C exceeds ``max_dense_features`` (``solver="auto"``), the
    path continues by the gradient route of §4.2.2: the split column's weight is copied to
    both children and, at each checkpoint, conjugate gradients on A w = Φᵀy are warm-started
    from there (an approximation: no log marginal likelihood; ``path_["solver"]`` says which
    route produced each point).

    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M.
    max_lifetime : float or None, default=None
        Λ, the end of the path, in the units of the scaled features (the unit box unless
        ``scale_features=False``). None: the lifetime at which a Mondrian process on the data's
        bounding box has as many expected cells as there are training points,
        Π_d (1 + Λ r_d) = N (r_d the feature ranges).
    alpha : float, default=1.0
        Ridge penalty δ² > 0 (as in :class:`MondrianKernelRidge`).
    lifetimes : int, array-like or None, default=100
        Where to evaluate: an int k — at λ = 0 and after every ⌈n_cuts/k⌉-th cut (k points,
        evenly spread over the number of features); an array — at those lifetimes (within
        [0, Λ]); None — after every cut.
    selection : {"validation", "evidence"}, default="validation"
        Choose λ by the validation mean squared error, or by the log marginal likelihood of
        the GP ``y − ȳ ~ N(0, s² ΦΦᵀ + σ² I)`` with both the signal variance s² and the noise
        σ² estimated at every checkpoint (``kernel/_evidence.py``: an eigendecomposition of
        size min(N, C) per checkpoint, where it is at most 2,048), which needs no held-out
        data; the model is then refitted with ``alpha_ = σ̂²/ŝ²`` at the chosen λ. (With α
        fixed and only σ² profiled — ``path_["log_evidence"]`` — features that cannot fit y
        to its noise make the weights' prior far too broad, and the evidence prefers λ = 0.)
    validation_fraction : float, default=0.2
        Share of ``X`` held out for validation when ``fit`` gets no ``X_val``.
    solver : {"auto", "cholesky", "inverse", "gradient"}, default="auto"
        Path route: Cholesky factor; explicit inverse (the report's updates; a cross-check);
        gradient (§4.2.2); auto = Cholesky while C ≤ ``max_dense_features``, then gradient.
    max_dense_features : int, default=4096
        Largest C for the dense C × C factor under ``solver="auto"``.
    gradient_tol : float, default=1e-6
        Conjugate gradients stop at ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ ...
    gradient_max_iter : int, default=300
        ... or after this many iterations per checkpoint.
    {SCALE_FEATURES_DOC}
    random_state, n_jobs, verbose
        As in :class:`MondrianKernelRidge`; ``random_state`` also draws the validation split.

    Attributes
    ----------
    path_ : dict of arrays
        Per checkpoint: ``lifetimes``, ``n_cuts``, ``n_features`` (C), ``train_mse``,
        ``validation_mse`` (NaN under ``selection="evidence"``), ``log_evidence`` (at
        ``alpha``, σ² profiled; NaN on the gradient route), ``log_det``, ``solver`` and
        ``cg_iterations``; under ``selection="evidence"`` also ``log_evidence_profiled``,
        ``alpha`` (σ̂²/ŝ²), ``signal_variance`` and ``noise_variance`` (NaN where min(N, C)
        exceeds 2,048).
    best_index_ : int
        The chosen checkpoint.
    lifetime_ : float
        The chosen λ (units of the scaled features).
    alpha_ : float
        The ridge penalty of ``model_``: ``alpha``, or σ̂²/ŝ² at ``lifetime_`` under
        ``selection="evidence"``.
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

    __doc__ = __doc__.replace("{SCALE_FEATURES_DOC}", SCALE_FEATURES_DOC)

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "max_lifetime": Param(None, None, *FINITE_LIFETIME),
        "alpha": Param(1.0, *POSITIVE),
        "lifetimes": LIFETIMES,
        "selection": Param("validation", Options({"validation", "evidence"})),
        "validation_fraction": VALIDATION_FRACTION,
        "solver": Param("auto", Options({"auto", "cholesky", "inverse", "gradient"})),
        "max_dense_features": Param(4096, *COUNT),
        "gradient_tol": Param(1e-6, *POSITIVE),
        "gradient_max_iter": Param(300, *COUNT),
        **SCALING,
        **RUNTIME,
    }

    @restore_on_failure
    def fit(
        self, X: Any, y: Any, X_val: Any | None = None, y_val: Any | None = None
    ) -> MondrianKernelRidgeCV:
        """Run the path, choose λ, refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Their targets.
        X_val, y_val : array-like, optional
            Validation data for ``selection="validation"``. When given, they are only used
            to choose λ (the final model is fitted on ``X`` alone); otherwise
            ``validation_fraction`` of ``X`` is held out and added back for the final model.

        Returns
        -------
        self : MondrianKernelRidgeCV
            The fitted estimator.
        """
        self._validate_params()
        alpha, n_jobs = float(self.alpha), self._threads()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        check_target_scale(y)
        X = self._fit_unit_box(X)
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        held_out = None
        train_X, train_y = X, y
        if self.selection == "validation" and X_val is None:
            train, held_out = held_out_split(
                X.shape[0], self.validation_fraction, self.random_state
            )
            train_X, train_y = X[train], y[train]
            X_val, y_val = X[held_out], y[held_out]
        elif self.selection == "validation":
            X_val, y_val = validate_data(
                self, X_val, y_val, dtype=np.float64, y_numeric=True, reset=False
            )
            X_val = self._to_unit_box(X_val)
        else:
            X_val = y_val = None
        max_lifetime = (
            lifetime_for_cells(train_X, train_X.shape[0])
            if self.max_lifetime is None
            else float(self.max_lifetime)
        )
        n_checkpoints, grid = checkpoint_arguments(self.lifetimes, max_lifetime)
        train_X = as_core_array(train_X)
        features = self._sample_trees(
            lambda seed, n_jobs, slice_size, progress: _core.KernelFeatures(
                train_X, int(self.n_estimators), max_lifetime, seed, n_jobs, slice_size, progress
            ),
            train_X.shape[0],
        )
        with PathProgress("cuts", self.verbose) as progress:
            path = features.path(
                as_core_array(train_y),
                None if X_val is None else as_core_array(X_val),
                None if y_val is None else as_core_array(y_val),
                max_lifetime,
                alpha,
                n_checkpoints,
                grid,
                self.solver,
                int(self.max_dense_features),
                float(self.gradient_tol),
                int(self.gradient_max_iter),
                False,
                n_jobs,
                progress.callback,
            )
        path["solver"] = np.asarray(path["solver"])
        if self.selection == "validation":
            best = int(np.argmin(path["validation_mse"]))
        else:
            path.update(
                path_evidence(
                    features, train_X, train_y, path["lifetimes"], EVIDENCE_MAX_SIZE, n_jobs
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
        self.path_ = path
        self.best_index_ = best
        self.lifetime_ = float(path["lifetimes"][best])
        self.alpha_ = alpha
        self.max_lifetime_ = max_lifetime
        if held_out is None:
            self.model_ = features.refit(as_core_array(train_y), self.lifetime_, alpha, n_jobs)
        else:
            all_y = np.concatenate([train_y, y_val])
            self.model_ = features.refit(
                as_core_array(all_y), self.lifetime_, alpha, n_jobs, as_core_array(X_val)
            )
        return self
