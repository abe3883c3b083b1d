"""Pictures over a plane of two features (used by :mod:`mondrian_learn.plotting`, which
exports them): a classifier's confidence, a density and an embedding, each with the data."""

from __future__ import annotations

from typing import Any

import numpy as np


def axes_or_new(ax: Any) -> Any:
    """``ax``, or the axes of a new figure."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


def plain_log_ticks(axis: Any) -> None:
    """Label a log ``axis`` at 1, 2 and 5 × 10ᵏ in plain numbers and leave the minor ticks
    unlabelled: over less than two decades matplotlib labels every minor tick as a power of
    ten, and those labels run into each other."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FormatStrFormatter("%g"))
    axis.set_minor_formatter(NullFormatter())


def image(ax: Any, values: np.ndarray, extent: tuple, **style: Any) -> Any:
    """Draw ``values``, a grid from :func:`plane`, over ``extent`` on ``ax``."""
    return ax.imshow(values, origin="lower", extent=extent, aspect="auto", **style)


def plane(X: np.ndarray, margin: float, size: int = 300) -> tuple[tuple, np.ndarray]:
    """A ``size`` × ``size`` grid over the box of ``X`` widened by ``margin`` of its range on
    every side: its extent (left, right, bottom, top) and its points, row by row."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    lo, hi = lo - margin * (hi - lo), hi + margin * (hi - lo)
    u, v = np.meshgrid(np.linspace(lo[0], hi[0], size), np.linspace(lo[1], hi[1], size))
    return (lo[0], hi[0], lo[1], hi[1]), np.column_stack([u.ravel(), v.ravel()])


class DrawnDisplay:
    """What the displays here share: ``plot`` draws (``_draw``) and keeps where."""

    #: The attribute that keeps what ``_draw`` returns.
    _colours = "image_"

    def _draw(self, ax: Any) -> Any:
        raise NotImplementedError

    def plot(self, ax: Any = None) -> Any:
        """Draw the picture and the points on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : ConfidenceDisplay, DensityDisplay or EmbeddingDisplay
            Itself, with ``ax_`` and ``figure_``, and what carries the colours (for a colour
            bar) in ``image_`` (``points_`` for the embedding).
        """
        ax = axes_or_new(ax)
        setattr(self, self._colours, self._draw(ax))
        self.ax_, self.figure_ = ax, ax.figure
        return self


class PlaneDisplay(DrawnDisplay):
    """A picture of an estimator over the plane around the data (``from_estimator``)."""

    #: How many data ranges the plane reaches beyond the data when ``margin`` is None.
    default_margin = 0.0

    @classmethod
    def _on_plane(cls, estimator: Any, extent: tuple, points: np.ndarray, X: Any, y: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: Any, y: Any = None, margin: float | None = None, ax: Any = None
    ) -> Any:
        """Draw what ``estimator``, fitted on 2 features, gives over the plane around ``X``.

        Parameters
        ----------
        estimator : fitted estimator
            A classifier with ``predict_proba`` and ``classes_`` (:class:`ConfidenceDisplay`)
            or a density with ``score_samples`` such as
            :class:`~mondrian_learn.MondrianDensityEstimator` (:class:`DensityDisplay`).
        X : array-like of shape (n_samples, 2)
            Points to draw.
        y : array-like of shape (n_samples,) or None, default=None
            Their labels (:class:`ConfidenceDisplay`, which needs them).
        margin : float or None, default=None
            The plane reaches this many data ranges beyond the data on every side (None:
            ``default_margin``, 1 for the confidence, 0 for a density).
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : ConfidenceDisplay or DensityDisplay
            With ``ax_``, ``figure_`` and ``image_``.
        """
        X = np.asarray(X, dtype=np.float64)
        extent, points = plane(X, cls.default_margin if margin is None else margin)
        return cls._on_plane(estimator, extent, points, X, y).plot(ax)


class ConfidenceDisplay(PlaneDisplay):
    """A classifier's largest class probability over a plane around 2-D data, the training
    points on top with a marker per class: a Mondrian forest's confidence fades away from
    the data, a random forest's does not.

    Parameters
    ----------
    extent : tuple of 4 float
        The plane's (left, right, bottom, top).
    confidence : ndarray of shape (n_rows, n_columns)
        Largest class probability on a regular grid over ``extent``.
    X, y : ndarray
        The points (2 features) and their class indices (0, 1, …).
    class_names : list of str
        A name per class, for the legend.
    """

    def __init__(
        self, extent: tuple, confidence: np.ndarray, X: Any, y: Any, class_names: list
    ) -> None:
        self.extent, self.confidence, self.X, self.y = extent, confidence, X, y
        self.class_names = class_names

    default_margin = 1.0

    @classmethod
    def _on_plane(
        cls, estimator: Any, extent: tuple, points: np.ndarray, X: Any, y: Any
    ) -> ConfidenceDisplay:
        confidence = estimator.predict_proba(points).max(axis=1).reshape(300, 300)
        codes = np.searchsorted(estimator.classes_, np.asarray(y))
        names = [str(c) for c in estimator.classes_]
        return cls(extent, confidence, X, codes, names)

    def _draw(self, ax: Any) -> Any:
        """The confidence, from 1/n_classes (uniform) to 1, and the points by class."""
        low = 1 / len(self.class_names)
        picture = image(ax, self.confidence, self.extent, vmin=low, vmax=1, cmap="magma")
        for k, name in enumerate(self.class_names):
            points = self.X[self.y == k].T
            marker = "o^sDv<>p*h"[k % 10]
            ax.scatter(*points, s=12, marker=marker, c="white", ec="black", lw=0.4, label=name)
        return picture


class DensityDisplay(PlaneDisplay):
    """A density over a plane on a log colour scale (a linear one draws clusters of
    different heights as one bright spot and darkness), the data on top.

    Parameters
    ----------
    extent : tuple of 4 float
        The plane's (left, right, bottom, top).
    density : ndarray of shape (n_rows, n_columns)
        The density on a regular grid over ``extent``.
    X : ndarray of shape (n_samples, 2)
        Points to draw.
    decades : float
        Powers of ten of the colour scale below the largest density (lower values are
        drawn as the lowest).
    """

    def __init__(self, extent: tuple, density: np.ndarray, X: Any, decades: float = 4) -> None:
        self.extent, self.density, self.X, self.decades = extent, density, X, decades

    @classmethod
    def _on_plane(
        cls, estimator: Any, extent: tuple, points: np.ndarray, X: Any, y: Any
    ) -> DensityDisplay:
        density = np.exp(estimator.score_samples(points)).reshape(300, 300)
        return cls(extent, density, X)

    def _draw(self, ax: Any) -> Any:
        """The density on a log scale, and the points."""
        from matplotlib.colors import LogNorm

        top = float(self.density.max())
        norm = LogNorm(vmin=top * 10.0**-self.decades, vmax=top, clip=True)
        picture = image(ax, self.density, self.extent, cmap="viridis", norm=norm)
        ax.scatter(*self.X.T, s=8, c="white", ec="black", lw=0.3, label="data")
        return picture


class EmbeddingDisplay(DrawnDisplay):
    """Points projected on two components (e.g. by :class:`PartitionKernelPCA`), coloured
    by their class.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, 2)
        The projected points.
    y : ndarray of shape (n_samples,)
        Their integer classes (0 to 9 get distinct colours).
    """

    _colours = "points_"

    def __init__(self, Z: np.ndarray, y: np.ndarray) -> None:
        self.Z, self.y = Z, y

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, ax: Any = None) -> EmbeddingDisplay:
        """Draw ``estimator.transform(X)`` (its first two columns), coloured by ``y``.

        Parameters
        ----------
        estimator : fitted transformer
            With ``transform`` giving at least two columns.
        X : array-like of shape (n_samples, n_features)
            Points to project.
        y : array-like of shape (n_samples,)
            Their integer classes.
        ax : matplotlib Axes or None, default=None
            Where to draw (None: a new figure).

        Returns
        -------
        display : EmbeddingDisplay
            With ``ax_``, ``figure_`` and ``points_`` (for a colour bar).
        """
        return cls(np.asarray(estimator.transform(X))[:, :2], np.asarray(y)).plot(ax)

    def _draw(self, ax: Any) -> Any:
        """The points, coloured by class, and the axes' labels."""
        ax.set_xlabel("component 1")
        ax.set_ylabel("component 2")
        return ax.scatter(*self.Z.T, c=self.y, cmap="tab10", s=10, vmin=-0.5, vmax=9.5)
