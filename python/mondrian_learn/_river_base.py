"""The base the river adapters of the Mondrian forests share: named features read as the
forest's rows, and learning one row or a batch. It does not import river (``river`` does)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def feature_order(names: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """The names sorted; names that do not compare (say ``1`` and ``"a"``) by type, then
    ``repr``."""
    names = list(names)
    try:
        return tuple(sorted(names))  # type: ignore[type-var]
    except TypeError:
        return tuple(sorted(names, key=lambda name: (type(name).__name__, repr(name))))


class RiverForestBase:
    """Base of the river adapters: dicts (and data frames) of named features as the float64
    rows the wrapped forest takes (the names fixed at the first row learned, missing values
    imputed by running means), and river's ``learn_one`` and ``learn_many``."""

    _keys: tuple[Hashable, ...] | None

    def _reset_features(self) -> None:
        self._keys = None
        self._getter: Any = None
        self._sums = np.zeros(0)  # per feature: sum of its observed values
        self._n_missing = np.zeros(0)  # per feature: rows learned without it
        self._n_rows = 0  # rows learned

    def _fix_features(self, names: Iterable[Hashable]) -> None:
        self._keys = feature_order(names)
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
