"""river's interface for the Mondrian forests: online estimators that learn from one dict of
features at a time (``learn_one``, ``predict_one``), for river's pipelines and its
``evaluate.progressive_val_score``.

Each wraps the package's scikit-learn forest (Lakshminarayanan, Roy & Teh, NIPS 2014 and
AISTATS 2016), built at the first ``learn_one`` and extended by the conditional Mondrian with
every row after. Importing this module imports river; ``import mondrian_learn`` does not.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from river import base

import mondrian_learn

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor"]

_STREAM_NOTES = """
    Features are matched by name. Their order is fixed at the first ``learn_one`` (or
    ``learn_many``): the keys of that row, sorted (as river's random forests order them), so
    the order of a dict's keys never matters. The forest's dimensions cannot grow, so keys
    that first appear later are ignored. A missing key, and a value that is None, NaN or
    infinite, is imputed by the mean of that feature over the rows learned so far (0 before
    any), in ``learn_one`` and ``predict_one`` alike: prediction never fails on a missing key.
    Values must be numbers (encode categories first, e.g. with river's ``OneHotEncoder``).

    Features are mapped to the unit box of the rows seen, as the forests do: the forest is
    refitted on every row, the map chosen again from their range, whenever the number of
    rows reaches a power of two (up to 32,768), so a stream needs no scaler in front
    (``lifetime`` is in those units)."""


def _feature_order(names: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """The names sorted; names that do not compare (say ``1`` and ``"a"``) by type, then
    ``repr``."""
    names = list(names)
    try:
        return tuple(sorted(names))  # type: ignore[type-var]
    except TypeError:
        return tuple(sorted(names, key=lambda name: (type(name).__name__, repr(name))))


class _FeatureRows:
    """Dicts (and data frames) of named features as the float64 rows the forest takes: the
    names fixed at the first row learned, missing values imputed by running means."""

    _keys: tuple[Hashable, ...] | None

    def _reset_features(self) -> None:
        self._keys = None
        self._getter: Any = None
        self._sums = np.zeros(0)  # per feature: sum of its observed values
        self._n_missing = np.zeros(0)  # per feature: rows learned without it
        self._n_rows = 0  # rows learned

    def _fix_features(self, names: Iterable[Hashable]) -> None:
        self._keys = _feature_order(names)
        self._getter = operator.itemgetter(*self._keys)
        self._sums = np.zeros(len(self._keys))
        self._n_missing = np.zeros(len(self._keys))

    def _means(self) -> np.ndarray:
        counts = self._n_rows - self._n_missing
        return np.divide(self._sums, counts, out=np.zeros_like(self._sums), where=counts > 0)

    def _row(self, x: dict) -> tuple[np.ndarray, np.ndarray | None]:
        """``x`` as a (1, n_features) C-ordered float64 row, imputed; the mask of its imputed
        features, or None when it had them all."""
        try:
            values = self._getter(x)
            if len(self._keys) == 1:  # type: ignore[arg-type]
                values = (values,)
            total = sum(values)
            if total - total == 0.0:  # every value finite
                return np.array(values, dtype=np.float64, ndmin=2), None
        except (KeyError, TypeError):
            pass
        row = np.empty((1, len(self._keys)))  # type: ignore[arg-type]
        for j, key in enumerate(self._keys):  # type: ignore[arg-type]
            value = x.get(key)
            try:
                row[0, j] = np.nan if value is None else float(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"feature {key!r} is {value!r}, not a number: encode it first (for "
                    "instance with river's preprocessing.OneHotEncoder)"
                ) from None
        missing = ~np.isfinite(row)
        row[missing] = self._means()[missing[0]]
        return row, missing

    def _frame_rows(self, X: pd.DataFrame, learn: bool) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``X`` in the fixed order, imputed (when ``learn``: each by the means of
        the rows learned before it, as ``learn_one`` row by row would); the mask of imputed
        values."""
        frame = X.reindex(columns=list(self._keys))  # type: ignore[arg-type]
        try:
            rows = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as error:
            raise ValueError(f"features must be numbers: {error}") from None
        missing = ~np.isfinite(rows)
        if learn:
            observed = np.where(missing, 0.0, rows)
            n_missing = self._n_missing + np.cumsum(missing, axis=0) - missing
            counts = self._n_rows + np.arange(len(rows))[:, None] - n_missing
            sums = self._sums + np.cumsum(observed, axis=0) - observed
            means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        else:
            means = np.broadcast_to(self._means(), rows.shape)
        return np.ascontiguousarray(np.where(missing, means, rows)), missing

    #: The scikit-learn forest this estimator wraps.
    _forest_class: Any

    def _new_forest(self) -> Any:
        """The wrapped forest, with this estimator's parameters."""
        return self._forest_class(
            n_estimators=self.n_estimators,  # type: ignore[attr-defined]
            lifetime=self.lifetime,  # type: ignore[attr-defined]
            min_samples_split=self.min_samples_split,  # type: ignore[attr-defined]
            random_state=self.seed,  # type: ignore[attr-defined]
            candidate_dimensions=self.candidate_dimensions,  # type: ignore[attr-defined]
            candidate_locations=self.candidate_locations,  # type: ignore[attr-defined]
        )

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {"n_estimators": 3}
        yield {"n_estimators": 3, "candidate_dimensions": 1, "candidate_locations": 1}

    def _unit_test_skips(self) -> set[str]:
        # learn_many extends the trees by the batch at once, which is not the random draw
        # learn_one makes row by row (river's linear models skip this check likewise).
        return {"check_learn_many_matches_learn_one"}

    def _update(self, rows: np.ndarray, targets: list[Any]) -> None:
        raise NotImplementedError

    def learn_one(self, x: dict, y: Any) -> None:
        """Learn one row: extend the trees by the conditional Mondrian and update the leaves
        on its paths (see the class notes for new classes).

        Parameters
        ----------
        x : dict
            Features by name.
        y : float or hashable
            The target (regression) or label of any hashable type (classification).
        """
        self._learn(x, lambda: self._row(x), [y])

    def learn_many(self, X: pd.DataFrame, y: pd.Series) -> None:
        """Learn a batch of rows at once (one extension of the trees by all of them).

        Parameters
        ----------
        X : pandas.DataFrame
            Features by column name.
        y : pandas.Series
            The targets or labels.
        """
        if len(X):
            self._learn(X.columns, lambda: self._frame_rows(X, learn=True), list(y))

    def _learn(
        self,
        names: Iterable[Hashable],
        read: Callable[[], tuple[np.ndarray, np.ndarray | None]],
        targets: list[Any],
    ) -> None:
        """Learn the rows ``read()`` gives (fixing the features' order by ``names`` on the
        first call), then count them in the running means; a call that raises changes
        nothing."""
        first = self._keys is None
        if first:
            self._fix_features(names)
        try:
            rows, missing = read()
            self._update(rows, targets)
        except BaseException:
            if first:
                self._reset_features()
            raise
        if missing is None:
            self._sums += rows[0]
        else:
            self._sums += np.where(missing, 0.0, rows).sum(axis=0)
            self._n_missing += missing.sum(axis=0)
        self._n_rows += len(rows)


class MondrianForestRegressor(_FeatureRows, base.MiniBatchRegressor):
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
    {STREAM_NOTES}

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

    __doc__ = (__doc__ or "").replace("{STREAM_NOTES}", _STREAM_NOTES)
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


class MondrianForestClassifier(_FeatureRows, base.MiniBatchClassifier):
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
    per new class, after which each row again costs one update. ``learn_many`` extends the
    trees by the whole batch at once: faster per row, not the random draw that ``learn_one``
    row by row would make.
    {STREAM_NOTES}

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (10, as river's forests).
    lifetime : float, default=inf
        Lifetime λ of the Mondrian process, in the units of the features; ``inf`` grows every
        block until it is pure or too small.
    min_samples_split : int, default=2
        A block with fewer points does not split (it waits for more). On a stream the
        labels guide a cut among the points of a leaf only (a row outside a block's box is
        separated by an unguided Mondrian cut), so a larger value, letting leaves gather
        points first, can predict better.
    candidate_dimensions : int, float or "sqrt", default=1/3
        Dimensions drawn per cut (an int, a fraction of the features, at least 1, or
        "sqrt"); the cut is the candidate with the largest information gain of the block's
        labels.
    candidate_locations : int, default=6
        Locations drawn in each candidate dimension; 1 with ``candidate_dimensions=1``: the
        paper's label-blind cuts.
    seed : int or None, default=None
        Seed of the trees' random streams (None: not reproducible).

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

    __doc__ = (__doc__ or "").replace("{STREAM_NOTES}", _STREAM_NOTES)
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
