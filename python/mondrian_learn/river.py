"""river's interface for the Mondrian forests: online estimators that learn from one dict of
features at a time (``learn_one``, ``predict_one``), for river's pipelines and its
``evaluate.progressive_val_score``.

Each wraps the package's scikit-learn forest (Lakshminarayanan, Roy & Teh, NIPS 2014 and
AISTATS 2016), built at the first ``learn_one`` and extended by the conditional Mondrian with
every row after. Importing this module imports river; ``import mondrian_learn`` does not.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from river import base

import mondrian_learn
from mondrian_learn._river_base import RiverForestBase

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor"]


class MondrianForestRegressor(RiverForestBase, base.MiniBatchRegressor):
    """Mondrian forest regression for river: predictive standard deviations and intervals
    besides the mean, and an update per row that costs O(depth) per tree.

    A :class:`mondrian_learn.MondrianForestRegressor` (Lakshminarayanan, Roy & Teh, AISTATS
    2016) fitted on the first row and extended by the conditional Mondrian with each later
    one (NIPS 2014, "ExtendMondrianBlock"). Its predictive is a mixture of Gaussians: besides
    its mean (``predict_one``) it gives a standard deviation (``predict_std_one``) and exact
    intervals (``predict_interval_one``), which grow away from the data seen.

    The hyper-parameters of the Gaussian prior are chosen as the scikit-learn estimator
    chooses them, again whenever the rows seen have doubled, so they follow the stream
    (the heuristic below 32 rows, the held-out log density of the rows seen beyond). ``predict_one``
    returns 0.0 before any ``learn_one`` (river's convention). ``learn_many`` extends the
    trees by the whole batch at once: faster per row, not the random draw that ``learn_one``
    row by row would make.

    Features are matched by name (the first row's keys, sorted; later new keys are ignored; a
    missing or non-finite value is imputed by the feature's running mean) and mapped to the
    unit box of the rows seen (user guide: Online learning, "The river adapter").

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (10, as river's forests).
    lifetime : float, default=inf
        Lifetime λ of the Mondrian process, in the units of the features; ``inf`` grows every
        block until it is too small.
    min_samples_split : int, default=2
        A block with fewer points does not split (it waits for more). On a stream the
        targets guide a cut among the points of a leaf only (a row outside a block's box is
        separated by an unguided Mondrian cut), so a larger value, letting leaves gather
        points first, can predict better.
    candidate_dimensions : int, float or "sqrt", default=1.0
        Dimensions drawn per cut (an int, a fraction of the features, or "sqrt"); the cut is
        the candidate that reduces the squared deviations of the block's targets most.
    candidate_locations : int, default=6
        Locations drawn in each candidate dimension; 1 with ``candidate_dimensions=1``: the
        paper's label-blind cuts.
    seed : int or None, default=None
        Seed of the trees' random streams (None: not reproducible).

    Examples
    --------
    >>> from river import datasets
    >>> from mondrian_learn.river import MondrianForestRegressor
    >>> model = MondrianForestRegressor(seed=0)
    >>> model.predict_one({"x": 1.0})
    0.0
    >>> for x, y in datasets.synth.Friedman(seed=0).take(200):
    ...     model.learn_one(x, y)
    >>> low, high = model.predict_interval_one(x, confidence=0.9)
    >>> bool(low < model.predict_one(x) < high)
    True
    """

    _forest_class = mondrian_learn.MondrianForestRegressor

    def __init__(
        self,
        n_estimators: int = 10,
        *,
        lifetime: float = math.inf,
        min_samples_split: int = 2,
        candidate_dimensions: int | float | str = 1.0,
        candidate_locations: int = 6,
        seed: int | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.candidate_dimensions = candidate_dimensions
        self.candidate_locations = candidate_locations
        self.seed = seed
        self._forest: mondrian_learn.MondrianForestRegressor | None = None
        self._reset_features()

    def _update(self, rows: np.ndarray, targets: list[Any]) -> None:
        y = np.array(targets, dtype=np.float64)
        if self._forest is None:
            forest = self._new_forest()
            forest.partial_fit(rows, y)
            self._forest = forest
        else:
            self._forest.partial_fit(rows, y)

    def _predictive(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._forest.predict(rows, return_std=True)  # type: ignore[union-attr]

    def predict_one(self, x: dict) -> float:
        """Mean of the forest's predictive mixture (AISTATS 2016, eq. 4–5).

        Parameters
        ----------
        x : dict
            Features by name.

        Returns
        -------
        mean : float
            The prediction (0.0 before any ``learn_one``).
        """
        if self._forest is None:
            return 0.0
        mean, _ = self._predictive(self._row(x)[0])
        return float(mean[0])

    def predict_std_one(self, x: dict) -> float:
        """Standard deviation of the forest's predictive mixture, label noise included.

        Parameters
        ----------
        x : dict
            Features by name.

        Returns
        -------
        std : float
            The standard deviation (``inf`` before any ``learn_one``).
        """
        if self._forest is None:
            return math.inf
        _, std = self._predictive(self._row(x)[0])
        return float(std[0])

    def predict_interval_one(self, x: dict, confidence: float = 0.9) -> tuple[float, float]:
        """Central interval holding ``confidence`` of the predictive mixture: its exact
        ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles.

        Parameters
        ----------
        x : dict
            Features by name.
        confidence : float, default=0.9
            Coverage of the interval, in (0, 1).

        Returns
        -------
        interval : tuple of float
            Lower and upper bounds (``(-inf, inf)`` before any ``learn_one``).
        """
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
        if self._forest is None:
            return -math.inf, math.inf
        levels = [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]
        bounds = self._forest.predict_quantiles(self._row(x)[0], levels)
        return float(bounds[0, 0]), float(bounds[0, 1])

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        """Means of the predictive mixture for a batch of rows.

        Parameters
        ----------
        X : pandas.DataFrame
            Features by column name.

        Returns
        -------
        means : pandas.Series
            The predictions, indexed as ``X``.
        """
        import pandas as pd

        if self._forest is None or len(X) == 0:
            return pd.Series(0.0, index=X.index, dtype=np.float64)
        mean, _ = self._predictive(self._frame_rows(X, learn=False)[0])
        return pd.Series(mean, index=X.index)


class MondrianForestClassifier(RiverForestBase, base.MiniBatchClassifier):
    """Mondrian forest classification for river: labels of any hashable type, new classes at
    any point of the stream.

    A :class:`mondrian_learn.MondrianForestClassifier` (Lakshminarayanan, Roy & Teh, NIPS
    2014): Mondrian trees extended by the conditional Mondrian with each row, whose class
    distributions are smoothed along each path by a hierarchical normalized stable process,
    so probabilities fall back smoothly to the prior away from the data; their average is
    calibrated by the forest's sharpness, chosen on held-out rows.

    The forest is built once the stream has shown two classes: before any ``learn_one``,
    ``predict_proba_one`` returns ``{}`` and ``predict_one`` None (river's convention); with
    one class seen, that class with probability 1. The forest's classes are fixed when it is
    built, so a class that appears later refits it on every row learned so far (kept for this
    purpose: 8 bytes per feature and row), with the same seed: a one-off cost of a batch fit
    per new class, after which each row again costs one update. ``learn_many`` and the
    features (matched by name, imputed, mapped to the unit box of the rows seen) are as in
    :class:`MondrianForestRegressor` of this module.

    Parameters
    ----------
    n_estimators, lifetime, min_samples_split, candidate_locations, seed
        As in :class:`MondrianForestRegressor` of this module, the labels guiding the cuts
        (with ``lifetime=inf`` a block grows until it is pure or too small).
    candidate_dimensions : int, float or "sqrt", default=1/3
        Dimensions drawn per cut (an int, a fraction of the features, at least 1, or
        "sqrt"); the cut is the candidate with the largest information gain of the block's
        labels.

    Examples
    --------
    >>> from mondrian_learn.river import MondrianForestClassifier
    >>> model = MondrianForestClassifier(seed=0)
    >>> model.predict_proba_one({"x": 0.5})
    {}
    >>> for i in range(60):
    ...     model.learn_one({"x": i / 60}, "low" if i < 30 else "high")
    >>> model.predict_one({"x": 0.1}), model.predict_one({"x": 0.9})
    ('low', 'high')
    >>> model.learn_one({"x": 2.0}, "off the scale")  # a new class
    >>> sorted(model.predict_proba_one({"x": 2.0}))
    ['high', 'low', 'off the scale']
    """

    _forest_class = mondrian_learn.MondrianForestClassifier

    def __init__(
        self,
        n_estimators: int = 10,
        *,
        lifetime: float = math.inf,
        min_samples_split: int = 2,
        candidate_dimensions: int | float | str = 1 / 3,
        candidate_locations: int = 6,
        seed: int | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.candidate_dimensions = candidate_dimensions
        self.candidate_locations = candidate_locations
        self.seed = seed
        self._forest: mondrian_learn.MondrianForestClassifier | None = None
        self._labels: list[Any] = []  # the classes, in order of first appearance
        self._codes: dict[Any, int] = {}  # class -> its index in _labels
        self._rows = np.zeros((0, 0))  # the rows learned (the first _n_rows), for refits
        self._row_codes = np.zeros(0, dtype=np.intp)
        self._reset_features()

    @property
    def _multiclass(self) -> bool:
        return True

    def _fix_features(self, names: Iterable[Hashable]) -> None:
        super()._fix_features(names)
        self._rows = np.zeros((0, len(self._keys)))  # type: ignore[arg-type]

    def _update(self, rows: np.ndarray, labels: list[Any]) -> None:
        """Learn ``rows`` of classes ``labels``: extend the forest, or build it again on every
        row when the classes are new (or it has none yet); then keep the rows."""
        new = [label for label in dict.fromkeys(labels) if label not in self._codes]
        n_classes = len(self._labels) + len(new)
        codes_of = {**self._codes, **{label: len(self._labels) + i for i, label in enumerate(new)}}
        codes = np.fromiter((codes_of[label] for label in labels), np.intp, len(labels))
        if new or self._forest is None:
            forest = None
            if n_classes >= 2:
                forest = self._new_forest()
                forest.partial_fit(
                    np.concatenate([self._rows[: self._n_rows], rows]),
                    np.concatenate([self._row_codes[: self._n_rows], codes]),
                    classes=np.arange(n_classes),
                )
            self._forest = forest
            self._codes = codes_of
            self._labels.extend(new)
        else:
            self._forest.partial_fit(rows, codes)
        self._keep(rows, codes)

    def _keep(self, rows: np.ndarray, codes: np.ndarray) -> None:
        end = self._n_rows + len(rows)
        if end > len(self._rows):  # grow by doubling: amortised O(1) per row
            capacity = max(end, 2 * len(self._rows), 16)
            grown = np.zeros((capacity, rows.shape[1]))
            grown[: self._n_rows] = self._rows[: self._n_rows]
            grown_codes = np.zeros(capacity, dtype=np.intp)
            grown_codes[: self._n_rows] = self._row_codes[: self._n_rows]
            self._rows, self._row_codes = grown, grown_codes
        self._rows[self._n_rows : end] = rows
        self._row_codes[self._n_rows : end] = codes

    def _proba(self, rows: np.ndarray) -> np.ndarray:
        return self._forest.predict_proba(rows)  # type: ignore[union-attr]

    def predict_proba_one(self, x: dict, **kwargs: Any) -> dict[base.typing.ClfTarget, float]:
        """Class probabilities: the forest's average of each tree's smoothed class
        distribution at ``x`` (NIPS 2014, §4), sharpened as the wrapped forest's (its
        ``sharpness_``, chosen on held-out rows whenever the stream's rows double).

        Parameters
        ----------
        x : dict
            Features by name.
        **kwargs : dict
            Ignored (river's signature).

        Returns
        -------
        proba : dict
            Probability of every class seen (``{}`` before any ``learn_one``).
        """
        if self._forest is None:
            return {label: 1.0 for label in self._labels}
        return dict(zip(self._labels, self._proba(self._row(x)[0])[0].tolist()))

    def predict_one(self, x: dict, **kwargs: Any) -> base.typing.ClfTarget | None:
        """The most probable class.

        Parameters
        ----------
        x : dict
            Features by name.
        **kwargs : dict
            Ignored (river's signature).

        Returns
        -------
        label : hashable or None
            The class (None before any ``learn_one``).
        """
        if self._forest is None:
            return self._labels[0] if self._labels else None
        return self._labels[int(np.argmax(self._proba(self._row(x)[0])[0]))]

    def predict_proba_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """Class probabilities for a batch of rows.

        Parameters
        ----------
        X : pandas.DataFrame
            Features by column name.

        Returns
        -------
        proba : pandas.DataFrame
            One column per class seen, indexed as ``X`` (no column before any ``learn_one``).
        """
        import pandas as pd

        if self._forest is None:
            return pd.DataFrame(1.0, index=X.index, columns=self._labels)
        if len(X) == 0:
            return pd.DataFrame(index=X.index, columns=self._labels, dtype=np.float64)
        proba = self._proba(self._frame_rows(X, learn=False)[0])
        return pd.DataFrame(proba, index=X.index, columns=self._labels)
