"""A Mondrian forest cut into parts — contiguous ranges of trees — each grown where it lives by
streaming every chunk of the data through it.

A Mondrian forest grown by ``partial_fit`` over chunks has the distribution of a batch fit
(Lakshminarayanan, Roy & Teh, NIPS 2014, §3: the conditional Mondrian extends a tree without
changing its law), and its trees are independent given the data: tree ``m`` draws only from
the stream ``(seed, m)``. So the trees ``[a, b)`` of a forest can be grown in one process and
the others elsewhere, each part seeing every chunk in the same order, and together they are
the forest one process would grow from the same chunks — tree for tree, bit for bit.

What is not per tree is settled here. The regressor's hyper-parameters are chosen once, after
the last chunk, on all rows, by the criterion of ``hyperparameters`` on the first
``SCORED_TREES`` trees — the rule of a batch ``fit`` — and fixed in every part; part 0 holds
those trees (:func:`tree_ranges`). The classifier's sharpness and least discount are chosen as
a stream chooses them (on the first chunk, then whenever the rows have doubled), by every part
alike: each holds the same rows and seeds the same scoring trees, so each makes the same
choice. Predictions fold the parts' trees in tree order into
running sums (:mod:`mondrian_learn.dask._forest`). Nothing here imports Dask: the same parts
stream a memory map or parquet row groups on one machine (:func:`fit_chunks`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import clone

from mondrian_learn._validation import draw_seed
from mondrian_learn.forest import MondrianForestClassifier, MondrianForestRegressor
from mondrian_learn.forest._hyperparameters import SCORED_TREES

FORESTS = (MondrianForestRegressor, MondrianForestClassifier)


def tree_ranges(n_estimators: int, n_parts: int) -> list[tuple[int, int]]:
    """Contiguous tree ranges ``[a, b)`` of ``n_estimators`` trees over at most ``n_parts``
    parts, as even as possible, with the first ``min(SCORED_TREES, n_estimators)`` trees (those
    the regressor's hyper-parameter criterion scores) in part 0.

    Parameters
    ----------
    n_estimators : int
        Trees of the forest.
    n_parts : int
        Parts wanted (fewer when there are fewer trees).

    Returns
    -------
    ranges : list of (int, int)
        ``(first, stop)`` per part, covering ``range(n_estimators)`` in order.
    """
    n_parts = max(1, min(n_parts, n_estimators))
    first = max(math.ceil(n_estimators / n_parts), min(SCORED_TREES, n_estimators))
    rest = n_estimators - first
    n_rest = min(n_parts - 1, rest)
    sizes = [first] + [rest // n_rest + (i < rest % n_rest) for i in range(n_rest)]
    stops = np.cumsum(sizes).tolist()
    return [(int(stop - size), int(stop)) for size, stop in zip(sizes, stops)]


def core_seed(random_state: Any) -> int:
    """The ``random_state`` every part gets: an int as it is (so a part grows the trees of a
    forest with that ``random_state``), anything else drawn once into an int."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return draw_seed(random_state, 2**32 - 1)


class _Part:
    """The forest estimator of one part: its core forest grows trees with the indices they
    have in the whole forest; a regressor's ``fit`` leaves the hyper-parameters to
    :meth:`ForestPart.choose_prior` (chosen once on all rows, not on the first chunk)."""

    _tree_offset: int = 0

    def _new_model(self, n_features: int, seed: int, lifetime: float) -> Any:
        model = super()._new_model(n_features, seed, lifetime)  # type: ignore[misc]
        model.offset_trees(self._tree_offset)
        return model


class _PartRegressor(_Part, MondrianForestRegressor):
    def _finish_fit(self, *args: Any) -> None:
        """Nothing at the first chunk (see :meth:`ForestPart.choose_prior`)."""


class _PartClassifier(_Part, MondrianForestClassifier):
    pass


# scikit-learn's checks inside a part (feature names, feature counts) name the estimator's
# class: name the one the user gave. ``__qualname__`` stays, so pickle still finds the class.
_PartRegressor.__name__ = MondrianForestRegressor.__name__
_PartClassifier.__name__ = MondrianForestClassifier.__name__


class ForestPart:
    """Trees ``[first, stop)`` of the forest ``estimator`` describes, grown on every chunk.

    Parameters
    ----------
    estimator : MondrianForestRegressor or MondrianForestClassifier
        The whole forest's parameters (unfitted; not modified).
    first, stop : int
        The part's trees.
    random_state : int
        The whole forest's seed (:func:`core_seed`).
    """

    def __init__(self, estimator: Any, first: int, stop: int, random_state: int) -> None:
        kind = _PartRegressor if isinstance(estimator, MondrianForestRegressor) else _PartClassifier
        params = estimator.get_params(deep=False)
        params.update(n_estimators=stop - first, random_state=random_state, verbose=0)
        self.estimator = kind(**params)
        self.estimator._tree_offset = first
        # ρ of the held-out rule is carried over to the whole forest's trees, not the part's.
        self.estimator._forest_trees_whole = int(estimator.n_estimators)
        self.first, self.stop = first, stop
        # Count, mean and sum of squared deviations of the targets seen (Chan et al.'s merge):
        # the scale of the regressor's hyper-parameter search.
        self.target = (0, 0.0, 0.0)

    def update(self, X: Any, y: Any, classes: Any = None) -> ForestPart:
        """Grow the trees on the chunk ``(X, y)``: the first chunk fits them, later ones
        extend them (``partial_fit``). A failed call leaves the part as it was.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            The chunk's points (ndarray or pandas DataFrame).
        y : array-like of shape (n_rows,)
            Their targets.
        classes : array-like or None, default=None
            Every class of the stream (classifiers; used by the first chunk).

        Returns
        -------
        self : ForestPart
            The part itself.
        """
        estimator = self.estimator
        if isinstance(estimator, MondrianForestClassifier):
            estimator.partial_fit(X, y, classes=classes)
            return self
        if hasattr(estimator, "model_"):
            estimator.partial_fit(X, y)
        else:
            estimator.fit(X, y)
        values = np.asarray(y, dtype=np.float64)
        count, mean, squares = self.target
        n, m = len(values), float(np.mean(values))
        total = count + n
        delta = m - mean
        self.target = (
            total,
            mean + delta * n / total,
            squares + float(np.sum((values - m) ** 2)) + delta**2 * count * n / total,
        )
        return self

    def choose_prior(self) -> dict[str, float] | None:
        """The regressor's hyper-parameters chosen on all rows by ``hyperparameters`` (on
        this part's first trees, the whole forest's first trees when this is part 0) and fixed
        here; None when there is nothing to choose (classifiers, the heuristic, all fixed).

        Returns
        -------
        prior : dict or None
            ``mean``, ``gamma1``, ``gamma2``, ``noise_variance``.
        """
        estimator = self.estimator
        if not isinstance(estimator, MondrianForestRegressor):
            return None
        count, _, squares = self.target
        variance = squares / count
        return estimator._select_prior(
            estimator.model_, variance, float(count), estimator._threads()
        )

    def fix_prior(self, prior: dict[str, float]) -> ForestPart:
        """Fix the hyper-parameters chosen on part 0.

        Parameters
        ----------
        prior : dict
            ``mean``, ``gamma1``, ``gamma2``, ``noise_variance``.

        Returns
        -------
        self : ForestPart
            The part itself.
        """
        p = prior
        self.estimator.model_.fix_prior(
            p["mean"], p["gamma1"], p["gamma2"], p["noise_variance"], self.estimator._threads()
        )
        self.estimator.model_.set_spread(p.get("spread", 1.0))
        return self

    def summary(self) -> dict[str, Any]:
        """What the part holds, for the completeness check after a fit.

        Returns
        -------
        summary : dict
            ``first``, ``stop``, ``n_trees``, ``n_rows`` and ``prior`` (the regressor's
            hyper-parameters; the classifier's ``min_discount`` and ``sharpness``).
        """
        estimator = self.estimator
        model = estimator.model_
        out = {"first": self.first, "stop": self.stop, "n_trees": model.n_trees}
        out["n_rows"] = model.n_rows
        if isinstance(estimator, MondrianForestRegressor):
            out["prior"] = estimator.prior_
        else:
            out["prior"] = {
                "min_discount": estimator.min_discount_,
                "sharpness": estimator.sharpness_,
            }
        return out

    def fold(self, X: Any, sums: np.ndarray) -> np.ndarray:
        """Add this part's trees to the running prediction sums at the rows ``X``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Points.
        sums : ndarray
            Regressors: shape (n_rows, 3), Σ w (mean − prior mean), Σ w (mean − prior mean)²
            and Σ w var over the components of the trees before this part; classifiers:
            shape (n_rows, n_classes), Σ over those trees of the class probabilities.

        Returns
        -------
        sums : ndarray
            The same sums with this part's trees added, in tree order.
        """
        estimator = self.estimator
        points = estimator._fitted_input(X)
        threads = estimator._threads()
        if isinstance(estimator, MondrianForestRegressor):
            return estimator.model_.fold_moments(points, np.ascontiguousarray(sums), threads)
        return estimator.model_.fold_proba(points, np.ascontiguousarray(sums), threads)

    def apply(self, X: Any) -> np.ndarray:
        """Leaf ids of the rows ``X`` in this part's trees (columns ``first`` to ``stop − 1``
        of the whole forest's ``apply``).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Points.

        Returns
        -------
        leaves : ndarray of shape (n_rows, stop − first), dtype intp
            Node ids.
        """
        return self.estimator.apply(X)

    def __sizeof__(self) -> int:
        """Bytes held, estimated from the core forest's size (stored points unless they are on
        disk, targets, each tree's point ids and nodes): Dask's scheduler places the tasks that
        read a part where its bytes are, instead of moving it."""
        model = getattr(self.estimator, "model_", None)
        if model is None:
            return 1024
        n, d = model.n_rows, self.estimator.n_features_in_
        nodes = 2 * int(np.sum(model.n_leaves()))
        points = 8 * d if model.points_directory is None else 0  # none in memory on disk
        return int(n * (points + 16) + 4 * n * model.n_trees + nodes * (16 * d + 48))


def fitted_copy(estimator: Any, part: ForestPart) -> Any:
    """A clone of ``estimator`` (its own parameters) holding the fitted state of ``part``,
    which must hold all its trees.

    Parameters
    ----------
    estimator : MondrianForestRegressor or MondrianForestClassifier
        The estimator the user gave.
    part : ForestPart
        The part of trees ``[0, n_estimators)``.

    Returns
    -------
    fitted : estimator
        The fitted clone.
    """
    fitted = clone(estimator)
    for name, value in vars(part.estimator).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(fitted, name, value)
    return fitted
