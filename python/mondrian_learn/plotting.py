"""Pictures of the models, in scikit-learn's ``Display`` style (``from_estimator`` builds one and
draws it; ``plot(ax=None)`` draws again; ``ax_`` and ``figure_`` hold where): a Mondrian tree's
2-D partition, a predictive band, a calibration curve, lifetime paths and searches, a
classifier's confidence, a density and a 2-D embedding. Needs matplotlib (``pip install
"mondrian-learn[demo]"``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mondrian_learn._plot_maps import ConfidenceDisplay as ConfidenceDisplay
from mondrian_learn._plot_maps import DensityDisplay as DensityDisplay
from mondrian_learn._plot_maps import EmbeddingDisplay as EmbeddingDisplay
from mondrian_learn._plot_maps import axes_or_new, plain_log_ticks
from mondrian_learn.calibration import LEVELS, coverage_errors


def tree_cells(arrays: dict[str, np.ndarray], region: np.ndarray, lifetime: float) -> list:
    """The cells into which the cuts of a tree born by ``lifetime`` divide ``region``.

    Parameters
    ----------
    arrays : dict of ndarray
        The tree's node arrays (``tree_arrays``).
    region : ndarray of shape (2, n_features)
        Lower and upper corner of the region, in the tree's coordinates.
    lifetime : float
        Cuts born later are left out (the tree pruned at ``lifetime``).

    Returns
    -------
    cells : list of ndarray of shape (2, n_features)
        Lower and upper corner of each cell.
    """
    cells, stack = [], [(int(arrays["root"]), region)]
    while stack:
        node, box = stack.pop()
        dim = arrays["split_dim"][node]
        if dim < 0 or arrays["tau"][node] > lifetime:
            cells.append(box)
            continue
        left, right = box.copy(), box.copy()
        left[1, dim] = right[0, dim] = arrays["threshold"][node]
        stack.extend([(int(arrays["right"][node]), right), (int(arrays["left"][node]), left)])
    return cells


class PartitionDisplay:
    """The cells of one tree of a forest fitted on two features, pruned at a lifetime (the
    Mondrian process observed up to that time), coloured by the mean target of the training
    points inside.

    Parameters
    ----------
    cells : list of ndarray of shape (2, 2)
        Lower and upper corners, in the units of X.
    values : ndarray of shape (n_cells,)
        The colour of each cell.
    X, y : ndarray
        The points drawn on top, and their targets.
    lifetime : float
        The lifetime at which the tree was pruned.
    """

    def __init__(
        self, cells: list, values: np.ndarray, X: np.ndarray, y: np.ndarray, lifetime: float
    ) -> None:
        self.cells, self.values, self.X, self.y, self.lifetime = cells, values, X, y, lifetime

    @classmethod
    def from_estimator(
        cls, forest: Any, X: Any, y: Any, tree: int = 0, lifetime: float = np.inf, ax: Any = None
    ) -> PartitionDisplay:
        """Draw tree ``tree`` of ``forest`` (fitted on 2 features) over the points ``X``.

        Parameters
        ----------
        forest : MondrianForestRegressor or MondrianForestClassifier
            Fitted on two features.
        X : array-like of shape (n_samples, 2)
            Points to draw, in the units the forest was fitted in.
        y : array-like of shape (n_samples,)
            Their targets (numbers), which colour the cells.
        tree : int, default=0
            Which tree.
        lifetime : float, default=inf
            Prune the tree there.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : PartitionDisplay
            With ``ax_``, ``figure_`` and ``patches_``.
        """
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2 or forest.n_features_in_ != 2:
            raise ValueError("PartitionDisplay draws forests fitted on exactly 2 features")
        lo, hi = X.min(axis=0), X.max(axis=0)
        pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
        scale, offset = forest.data_scale_, forest.data_min_
        # The tree's cuts are in its own (unit-box) coordinates: map the region there and the
        # cells back.
        region = (np.array([lo - pad, hi + pad]) - offset) / scale
        cells = [c * scale + offset for c in tree_cells(forest.tree_arrays(tree), region, lifetime)]
        values = []
        for c in cells:
            inside = ((X >= c[0]) & (X <= c[1])).all(axis=1)
            values.append(y[inside].mean() if inside.any() else y.mean())
        return cls(cells, np.asarray(values), X, y, lifetime).plot(ax)

    def plot(self, ax: Any = None) -> PartitionDisplay:
        """Draw the cells, coloured by their values, and the points on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            The axes to draw on, or None for a new figure.

        Returns
        -------
        display : PartitionDisplay
            Itself, with ``patches_``, ``ax_`` and ``figure_`` set.
        """
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        ax = axes_or_new(ax)
        norm = plt.Normalize(self.y.min(), self.y.max())
        self.patches_ = [
            ax.add_patch(
                Rectangle(
                    c[0],
                    *(c[1] - c[0]),
                    facecolor=plt.cm.viridis(norm(v)),
                    edgecolor="black",
                    linewidth=0.8,
                )
            )
            for c, v in zip(self.cells, self.values)
        ]
        ax.scatter(self.X[:, 0], self.X[:, 1], s=6, c="white", edgecolors="black", linewidths=0.3)
        corners = np.array([c for cell in self.cells for c in cell])
        ax.set_xlim(corners[:, 0].min(), corners[:, 0].max())
        ax.set_ylim(corners[:, 1].min(), corners[:, 1].max())
        ax.set_title(f"pruned at λ = {self.lifetime:g}: {len(self.cells)} cells")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class PredictiveBandDisplay:
    """A 1-D predictive mean with a band of ± ``k`` standard deviations, and the data.

    Parameters
    ----------
    grid, mean, std : ndarray of shape (n_points,)
        Where, the predictive mean and its standard deviation.
    X, y : ndarray or None
        Training points (1-D) and targets to draw, if any.
    k : float
        Half-width of the band in standard deviations.
    """

    def __init__(
        self,
        grid: np.ndarray,
        mean: np.ndarray,
        std: np.ndarray,
        X: Any = None,
        y: Any = None,
        k: float = 2.0,
    ) -> None:
        self.grid, self.mean, self.std, self.X, self.y, self.k = grid, mean, std, X, y, k

    @classmethod
    def from_estimator(
        cls, estimator: Any, grid: Any, X: Any = None, y: Any = None, k: float = 2.0, ax: Any = None
    ) -> PredictiveBandDisplay:
        """Predict on the 1-D ``grid`` (``predict(return_std=True)``) and draw.

        Parameters
        ----------
        estimator : fitted regressor with ``predict(X, return_std=True)``
            On one feature.
        grid : array-like of shape (n_points,)
            Where to predict.
        X, y : array-like or None, default=None
            Training points and targets to draw.
        k : float, default=2.0
            Half-width of the band in standard deviations.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : PredictiveBandDisplay
            With ``ax_``, ``figure_``, ``line_`` and ``band_``.
        """
        grid = np.asarray(grid, dtype=np.float64).ravel()
        mean, std = estimator.predict(grid[:, None], return_std=True)
        return cls(grid, mean, std, X, y, k).plot(ax)

    def plot(self, ax: Any = None, label: str = "mean") -> PredictiveBandDisplay:
        """Draw (again) on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).
        label : str, default="mean"
            Legend label of the mean.

        Returns
        -------
        display : PredictiveBandDisplay
            Itself.
        """
        ax = axes_or_new(ax)
        low, high = self.mean - self.k * self.std, self.mean + self.k * self.std
        self.band_ = ax.fill_between(self.grid, low, high, alpha=0.3, label=f"± {self.k:g} std")
        (self.line_,) = ax.plot(self.grid, self.mean, lw=1.5, label=label)
        if self.X is not None and self.y is not None:
            ax.scatter(np.ravel(self.X), self.y, s=4, c="black", label="training data")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class CalibrationDisplay:
    """Observed against nominal coverage of the central predictive intervals: a calibrated
    model lies on the diagonal.

    Parameters
    ----------
    levels, observed : ndarray of shape (n_levels,)
        Nominal and observed coverage.
    """

    def __init__(self, levels: np.ndarray, observed: np.ndarray) -> None:
        self.levels, self.observed = levels, observed

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: Any, y: Any, levels: Any = LEVELS, ax: Any = None
    ) -> CalibrationDisplay:
        """Coverage of ``estimator``'s intervals on ``(X, y)`` (:func:`.coverage_errors`).

        Parameters
        ----------
        estimator : fitted regressor with ``predict_interval``
            E.g. :class:`~mondrian_learn.MondrianForestRegressor`.
        X : array-like of shape (n_samples, n_features)
            Test points.
        y : array-like of shape (n_samples,)
            Their targets.
        levels : sequence of float in (0, 1), default 0.1, …, 0.9
            Nominal coverages.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : CalibrationDisplay
            With ``ax_``, ``figure_`` and ``line_``.
        """
        levels = np.asarray(levels, dtype=np.float64)
        observed = levels + coverage_errors(estimator, X, y, levels)
        return cls(levels, observed).plot(ax)

    def plot(self, ax: Any = None) -> CalibrationDisplay:
        """Draw the observed coverage against the nominal one on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where the curve goes (None: a new figure).

        Returns
        -------
        display : CalibrationDisplay
            Itself, its curve in ``line_``.
        """
        ax = axes_or_new(ax)
        ax.plot([0, 1], [0, 1], color="grey", ls=":", label="calibrated")
        (self.line_,) = ax.plot(self.levels, self.observed, marker="o", label="observed")
        ax.set_xlabel("nominal coverage")
        ax.set_ylabel("observed coverage")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class LifetimePathDisplay:
    """Training and validation score against the lifetime λ (log axis), the chosen λ marked.

    Parameters
    ----------
    path : dict of arrays
        A lifetime path (``path_`` of a CV estimator, or ``lifetime_path()``).
    score : str
        The score to draw: ``train_<score>`` and ``validation_<score>`` of ``path``.
    chosen : float or None
        The chosen lifetime, if any.
    """

    def __init__(self, path: dict, score: str, chosen: float | None = None) -> None:
        self.path, self.score, self.chosen = path, score, chosen

    @classmethod
    def from_estimator(
        cls, estimator: Any, score: str = "mse", ax: Any = None
    ) -> LifetimePathDisplay:
        """Draw the ``path_`` of a fitted CV estimator (:class:`.MondrianKernelRidgeCV`,
        :class:`.MondrianForestRegressorCV`, :class:`.MondrianForestClassifierCV`).

        Parameters
        ----------
        estimator : fitted CV estimator
            With ``path_`` and ``lifetime_``.
        score : str, default="mse"
            ``"mse"`` (or ``"nlpd"``, ``"log_loss"``, ``"accuracy"`` for the forests).
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : LifetimePathDisplay
            With ``ax_``, ``figure_`` and ``lines_``.
        """
        return cls(estimator.path_, score, float(estimator.lifetime_)).plot(ax)

    def plot(self, ax: Any = None) -> LifetimePathDisplay:
        """Draw the training and validation scores against λ on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes for the curves, λ on a log scale (None: a new figure).

        Returns
        -------
        display : LifetimePathDisplay
            Itself, its curves in ``lines_``.
        """
        ax = axes_or_new(ax)
        lifetimes = np.asarray(self.path["lifetimes"])
        shown = lifetimes > 0  # λ = 0 is off the log axis
        self.lines_ = [
            ax.plot(
                lifetimes[shown], np.asarray(self.path[f"{part}_{self.score}"])[shown], label=part
            )[0]
            for part in ("train", "validation")
        ]
        if self.chosen is not None and np.isfinite(self.chosen):
            ax.axvline(self.chosen, color="black", ls=":", label="chosen λ")
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.set_xlabel("lifetime λ")
        ax.set_ylabel(self.score)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class LifetimeSearchDisplay:
    """The Mondrian grid's lifetime search (:class:`.MondrianGridRidgeCV`): each feature's λ_d
    against the step, the criterion on a second axis, the chosen step marked.

    Parameters
    ----------
    path : dict of arrays
        ``path_`` of a fitted :class:`.MondrianGridRidgeCV`.
    chosen : int or None
        The chosen step (``best_index_``), if any.
    feature_names : list of str or None
        Labels of the features (None: x0, x1, …).
    criterion : str
        What the search minimised, for the axis and legend of its curve.
    """

    def __init__(
        self,
        path: dict,
        chosen: int | None = None,
        feature_names: list[str] | None = None,
        criterion: str = "criterion",
    ) -> None:
        self.path, self.chosen, self.feature_names = path, chosen, feature_names
        self.criterion = criterion

    @classmethod
    def from_estimator(
        cls, estimator: Any, ax: Any = None, feature_names: list[str] | None = None
    ) -> LifetimeSearchDisplay:
        """Draw the search of a fitted :class:`.MondrianGridRidgeCV`.

        Parameters
        ----------
        estimator : MondrianGridRidgeCV
            Fitted.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).
        feature_names : list of str or None, default=None
            Labels of the features (None: ``feature_names_in_`` if any, else x0, x1, …).

        Returns
        -------
        display : LifetimeSearchDisplay
            With ``ax_``, ``figure_``, ``lines_`` (one per feature) and ``criterion_line_``.
        """
        names = feature_names or getattr(estimator, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        evidence = estimator.selection == "evidence"
        criterion = "−log marginal likelihood" if evidence else "validation MSE"
        return cls(estimator.path_, int(estimator.best_index_), names, criterion).plot(ax)

    def plot(self, ax: Any = None) -> LifetimeSearchDisplay:
        """Draw each feature's λ_d and the criterion against the step on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes for the λ_d curves; the criterion goes on a twin axis (None: a new figure).

        Returns
        -------
        display : LifetimeSearchDisplay
            Itself, with ``lines_`` and ``criterion_line_``.
        """
        ax = axes_or_new(ax)
        steps, lifetimes = np.asarray(self.path["step"]), np.asarray(self.path["lifetimes"])
        names = self.feature_names or [f"x{d}" for d in range(lifetimes.shape[1])]
        self.lines_ = [
            ax.plot(steps, lifetimes[:, d], label=names[d])[0] for d in range(len(names))
        ]
        ax.set_xlabel("step of the search")
        ax.set_ylabel("lifetime λ_d")
        twin = ax.twinx()
        (self.criterion_line_,) = twin.plot(
            steps, self.path["criterion"], color="black", ls="--", label=self.criterion
        )
        twin.set_ylabel(self.criterion)
        handles = [*self.lines_, self.criterion_line_]
        if self.chosen is not None:
            handles.append(ax.axvline(self.chosen, color="gray", ls=":", label="chosen step"))
        # Below the axes: inside, the legend would hide the curves' start, where they all begin.
        below = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.15)}
        ax.legend(handles=handles, fontsize="small", ncol=min(len(handles), 5), **below)
        self.ax_, self.figure_ = ax, ax.figure
        return self
