"""Mondrian density estimation (Balog, *The Mondrian Process in Machine Learning*, ch. 2 and
appendix C), with the API of scikit-learn's ``KernelDensity``."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import DensityMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn import _core
from mondrian_learn._base import EstimatorBase, document, restore_on_failure, store_parameters
from mondrian_learn._lifetime_path import best_index
from mondrian_learn._memory import check_memory
from mondrian_learn._targets import check_sample_weight
from mondrian_learn._unit_box import UnitBoxMixin
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    POSITIVE,
    RUNTIME,
    SCALING,
    Integer,
    Options,
    Param,
    Real,
    check_parameter,
    check_tree_index,
    draw_seed,
)
from mondrian_learn.kernel._base import lifetime_for_cells

#: Bytes a tree node takes in the core (cut: dimension, location, time, children; a count).
NODE_BYTES = 40

#: Checkpoints of the leave-one-out path when ``lifetime="leave_one_out"``.
PATH_CHECKPOINTS = 50

#: Nodes of all trees at the end Λ of that path (about 0.4 GB): Π(1 + Λ w_d) =
#: min(1000 N, max(N, this / n_estimators)) expected cells per tree.
SEARCH_NODES = 1e7


class MondrianDensityEstimator(DensityMixin, UnitBoxMixin, EstimatorBase):
    """Density estimation by Mondrian trees with a Pólya-tree prior (Balog's report, appendix C).

    Each of the M trees is a Mondrian process with lifetime λ on a bounding box — the
    training range widened by ``box_margin`` of its width on each side — instantiated in full,
    empty regions included (the density needs every cell's volume: the report's option 1).
    Every cut splits its block's probability mass between its two children: the lower child
    takes ``ε ~ Beta(γ q (d+1)², γ (1 − q)(d+1)²)``, q its share of the block's volume, d the
    block's depth (a Pólya-tree prior centred on the uniform density over the box). Given the
    training counts each share has a Beta–binomial posterior, independent of the others, so
    the posterior mean density at x is the product of the posterior mean shares along x's
    path, ``(γ q (d+1)² + n_lower) / (γ (d+1)² + n_block)``, over the volume of its leaf; the
    estimate averages the M trees' densities. It is 0 outside the box.

    Cost and limits: a tree has ``Π_d (1 + λ w_d)`` cells in expectation (w_d the box's
    widths), growing as λ^D; ``fit`` refuses (``MemoryError`` naming ``lifetime``) what would
    not fit in memory rather than approximate it. The trees do not depend on the data, so
    ``partial_fit`` only adds counts: online equals batch exactly (points must lie in the box
    fixed by the first fit).

    X may be a scipy sparse matrix: the core reads its rows a block at a time, mapped to the
    unit box as they are read, so X is never dense whole. Results equal those on the same
    values given dense.

    Parameters
    ----------
    n_estimators : int, default=50
        Number of trees M.
    lifetime : float, None or "leave_one_out", default=None
        Lifetime λ ≥ 0 of the Mondrian processes, in the units of the scaled features (the
        training range is [0, 1] when ``scale_features=True``); 0 gives the uniform density
        on the box. None: the λ at which a tree has as many expected cells as there are
        training points, Π_d (1 + λ w_d) = N (the rule of ``MondrianKernelRidgeCV``'s
        ``max_lifetime``; the trees' average smooths what one tree's cells would overfit).
        "leave_one_out": fit at Λ with min(1000 N, max(N, 10⁷ / n_estimators)) expected
        cells per tree, then keep the λ of 51 in [0, Λ] with the best leave-one-out
        log-likelihood on :meth:`lifetime_path` (``path_``); the forest at that λ is the one
        at Λ pruned, refitted exactly.
    gamma : float, default=0.01
        Strength γ > 0 of the Pólya-tree prior (larger: closer to uniform within each block).
        Measured on normal samples (D = 2, 5) and iris setosa: held-out log-likelihood rises
        as γ falls from 1 to 0.01 (setosa 0.195 → 0.437 per point) and is flat below. Any
        finite γ is usable: as γ grows the density tends to the uniform one on the box.
    box_margin : float, default=0.1
        Width added to the training range on each side, as a fraction of that range (a
        constant feature gets ± ``box_margin`` in its units); ≥ 0.
    scale_features : bool, default=True
        Map each feature to [0, 1] by its training range first; False keeps the raw units
        (user guide: Conventions, "Inputs are scaled to the unit box").
    random_state : int, RandomState or None, default=None
        Seeds tree m with a stream derived from ``(seed, m)``: results are identical for any
        ``n_jobs``.
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores).
    verbose : int, default=0
        Unused (fits are fast); kept for the package's common parameters.

    Attributes
    ----------
    model_ : mondrian_learn._core.Density
        The trees and their counts.
    lifetime_ : float
        The lifetime used (``lifetime``, or the rule above).
    path_ : dict of arrays
        With ``lifetime="leave_one_out"``: ``lifetimes`` and their ``leave_one_out`` mean
        log-likelihoods (in the scaled units).
    box_ : ndarray of shape (2, n_features)
        Lower and upper corners of the bounding box, in the units of X.
    data_min_, data_scale_ : ndarray of shape (n_features,)
        The map to the unit box (identity when ``scale_features=False``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.density import MondrianDensityEstimator
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> model = MondrianDensityEstimator(n_estimators=20, random_state=0).fit(X)
    >>> model.score_samples([[0.0, 0.0], [9.0, 9.0]]).round(2)
    array([-1.87,  -inf])
    """

    _accepts_sparse = True

    _parameters = {
        "n_estimators": Param(50, *COUNT),
        "lifetime": Param(None, None, Options({"leave_one_out"}), *FINITE_LIFETIME),
        "gamma": Param(0.01, *POSITIVE),
        "box_margin": Param(0.1, Real(low=0)),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        n_estimators: int = 50,
        *,
        lifetime: float | str | None = None,
        gamma: float = 0.01,
        box_margin: float = 0.1,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y ignored", "sample_weight")
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MondrianDensityEstimator:
        """Sample the trees on the bounding box of ``X`` and count the points in every node
        (``y`` is ignored; row weights count a row w times).

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        X = validate_data(self, X, dtype=np.float64, accept_sparse=self._sparse_formats())
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        X = X[keep]
        points = self._fit_unit_box(X)
        low, high = self._mapped_bounds(X)
        width = np.where(high > low, high - low, 1.0)
        lower, upper = low - self.box_margin * width, high + self.box_margin * width
        if not np.all(np.isfinite(upper - lower)):
            if np.all(np.isfinite(high - low)):  # the data fit; the margin is what overflows
                raise ValueError(
                    f"box_margin={self.box_margin} widens the box of X beyond float64: "
                    "use a smaller box_margin"
                )
            raise ValueError("the bounding box of X overflows float64: rescale X")
        by_path, n_trees, n = self.lifetime == "leave_one_out", int(self.n_estimators), X.shape[0]
        if by_path:  # the path's end: as many cells as the search's budget of nodes allows
            cells = min(1000.0 * n, max(float(n), SEARCH_NODES / n_trees))
            lifetime = lifetime_for_cells(np.vstack([lower, upper]), cells)
        elif self.lifetime is None:
            lifetime = lifetime_for_cells(np.vstack([lower, upper]), n)
        else:
            lifetime = float(self.lifetime)
        expected = float(np.prod(1.0 + lifetime * (upper - lower)))
        check_memory(
            "lifetime",
            lifetime,
            2 * expected * NODE_BYTES,
            f"Π(1 + λ w_d) = {expected:.3g} expected cells in one tree",
        )
        check_memory(
            "n_estimators",
            n_trees,
            n_trees * 2 * expected * NODE_BYTES,
            f"{expected:.3g} expected cells in each of {n_trees} trees",
        )
        max_nodes = int(min(max(1_000.0, 20.0 * 2 * expected), 2**32 - 2))
        seed = draw_seed(self.random_state)

        def forest(at: float) -> Any:
            model = _core.Density(
                list(lower),
                list(upper),
                at,
                float(self.gamma),
                n_trees,
                seed,
                max_nodes,
                self._threads(),
            )
            model.add_points(points, self._threads(), weights)
            return model

        model = forest(lifetime)
        if by_path:
            # The forest at λ is the one at Λ pruned (each block draws from its own stream),
            # so the refit at the chosen λ is the pruned forest itself.
            grid = np.linspace(0.0, lifetime, PATH_CHECKPOINTS + 1)
            scores, _ = model.lifetime_path(
                points, [float(v) for v in grid], True, self._threads(), weights
            )
            self.path_ = {"lifetimes": grid, "leave_one_out": np.asarray(scores)}
            lifetime = float(grid[best_index(scores, larger_is_better=True)])
            model = forest(lifetime)
        self.model_, self.lifetime_ = model, lifetime
        self.box_ = np.vstack(
            [lower * self.data_scale_ + self.data_min_, upper * self.data_scale_ + self.data_min_]
        )
        return self

    @restore_on_failure
    @document("X", "y ignored", "sample_weight")
    def partial_fit(
        self, X: Any, y: Any = None, sample_weight: Any = None
    ) -> MondrianDensityEstimator:
        """Add points to the counts (the trees do not depend on the data, so this equals a
        batch fit on all points seen, with the box of the first fit, which the points must lie
        in). The first call on an unfitted estimator is ``fit``.

        Returns
        -------
        self : object
            The estimator itself.
        """
        if not hasattr(self, "model_"):
            return self.fit(X, sample_weight=sample_weight)
        X = validate_data(
            self, X, dtype=np.float64, accept_sparse=self._sparse_formats(), reset=False
        )
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        self.model_.add_points(self._to_unit_box(X[keep]), self._threads(), weights)
        return self

    @document("X")
    def score_samples(self, X: Any) -> np.ndarray:
        """Log of the posterior mean density at each point, in the units of X (−inf outside
        the bounding box ``box_``).

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Log of the posterior mean density at each point, in the units of X (−inf outside the
            bounding box ``box_``).
        """
        check_is_fitted(self)
        X = self._check_input(X)
        log_density = self.model_.log_density(self._to_unit_box(X), self._threads())
        return log_density - float(np.sum(np.log(self.data_scale_)))

    @document("X", "y ignored")
    def score(self, X: Any, y: Any = None) -> float:
        """Total log density of ``X`` (``y`` ignored), as ``KernelDensity.score``.

        Returns
        -------
        log_likelihood : float
            Total log density of ``X`` (``y`` ignored), as ``KernelDensity.score``.
        """
        return float(np.sum(self.score_samples(X)))

    def sample(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray:
        """Draws from the posterior mean density.

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws.
        random_state : int, RandomState or None, default=None
            Seeds the draws.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            A tree chosen uniformly, then its cuts followed by the posterior mean shares, then
            a point uniform in the leaf's box.
        """
        check_is_fitted(self)
        check_parameter("n_samples", n_samples, [Integer(low=0)])
        seed = draw_seed(random_state, 2**62)
        Z = self.model_.draw(int(n_samples), seed)
        return Z * self.data_scale_ + self.data_min_

    def lifetime_path(
        self,
        X: Any,
        lifetimes: Any = 50,
        leave_one_out: bool = False,
        sample_weight: Any = None,
    ) -> dict[str, Any]:
        """Mean log-likelihood of ``X`` under the forest pruned at every λ of a grid in
        [0, ``lifetime_``] (Balog's report §4.1, Fig. 4.2), for the cost of one walk per point
        and tree: a tree pruned at λ is the tree sampled with lifetime λ (each block draws from
        its own stream), and pruning keeps every node's posterior share, so a point's log
        density is a step function of λ with steps at the cut times on its path. Equal to
        refitting at each λ with the same ``random_state`` (tested).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points (validation data, or with ``leave_one_out`` the training data).
        lifetimes : int or array-like, default=50
            An int k: k + 1 evenly spaced lifetimes from 0 to ``lifetime_``; an array: those
            (within that range).
        leave_one_out : bool, default=False
            Each row is taken out of the counts on its path before it is scored: with the
            training rows (and their ``sample_weight``), the leave-one-out log-likelihood,
            which selects λ without held-out data.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the means (and, with ``leave_one_out``, what is taken out).

        Returns
        -------
        path : dict
            ``lifetimes``, ``log_likelihood`` (mean per point over the rows inside the box, in
            the units of X) and ``outside`` (the weighted share of rows outside the box, whose
            density is 0).
        """
        check_is_fitted(self)
        X = self._check_input(X)
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        if np.ndim(lifetimes) == 0:
            if not isinstance(lifetimes, (int, np.integer)) or lifetimes < 1:
                raise ValueError(
                    f"lifetimes must be an integer >= 1 or an array, got {lifetimes!r}"
                )
            grid = np.linspace(0.0, self.lifetime_, int(lifetimes) + 1)
        else:
            grid = np.asarray(lifetimes, dtype=np.float64)
            if grid.ndim != 1 or not np.all((grid >= 0) & (grid <= self.lifetime_)):
                raise ValueError(
                    f"lifetimes must lie in [0, lifetime_ = {self.lifetime_:.6g}], got {grid!r}"
                )
            grid = np.sort(grid)
        means, outside = self.model_.lifetime_path(
            self._to_unit_box(X[keep]),
            [float(v) for v in grid],
            bool(leave_one_out),
            self._threads(),
            weights,
        )
        log_likelihood = means - float(np.sum(np.log(self.data_scale_)))
        return {"lifetimes": grid, "log_likelihood": log_likelihood, "outside": outside}

    @document("index")
    def leaf_masses(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean probability mass and volume (in the scaled units) of every leaf of
        tree ``index``.

        Returns
        -------
        mass, volume : ndarray of shape (n_leaves,)
            The masses sum to 1 and the volumes to the box's.
        """
        check_is_fitted(self)
        return self.model_.leaf_masses(check_tree_index(index, self.model_.n_trees))
