"""The validation folds of the kernel's cross-validated ridges: the training and validation
rows each fold fits and scores (from ``X_val``, from ``cv`` or one share of ``X`` held out),
with their weights, and the rows the final model is refitted on."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from sklearn.utils.validation import validate_data

from mondrian_learn._lifetime_path import kept_row_splits, validation_splits
from mondrian_learn._targets import weighted_targets
from mondrian_learn._unit_box import UnitBoxMixin

Splits = list[tuple[np.ndarray, np.ndarray]]


def weighted_rows(
    X: np.ndarray, y: np.ndarray, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    """``(X, y, weights, keep)``: the rows of positive weight, their weights (None when
    ``sample_weight`` is None or every kept weight is 1, so that such a fit is the
    unweighted one bit for bit) and the mask of kept rows (a slice for None)."""
    X, y, weights, keep = weighted_targets(X, y, sample_weight)
    if weights is not None and np.all(weights == 1.0):
        weights = None
    return X, y, weights, keep


def weighted_splits(
    cv: Any,
    X: np.ndarray,
    y: np.ndarray,
    given: tuple[np.ndarray, np.ndarray],
    keep: Any,
    weights: np.ndarray | None,
    fraction: float,
    random_state: Any,
) -> Splits:
    """:func:`validation_splits` of the kept rows ``X``, ``y``. A splitter or iterable ``cv``
    indexes the rows as ``given`` (before the rows of zero weight were dropped): its
    indices are renumbered among the kept rows. None or an int draws the split here, over
    the distinct rows when weighted (a row of integer weight splits as its copies would)."""
    if cv is not None and not isinstance(cv, numbers.Integral):
        return kept_row_splits(cv, *given, keep)
    return validation_splits(cv, X, y, fraction, random_state, distinct=weights is not None)


def split_weights(weights: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    """The weights of ``rows`` (None without weights)."""
    return None if weights is None else np.ascontiguousarray(weights[rows])


def total_weight(weights: np.ndarray | None, n_rows: int) -> float:
    """Σ v_i (``n_rows`` without weights): how much a fold's validation rows weigh in the
    pooled error."""
    return float(n_rows) if weights is None else float(np.sum(weights))


class Fold(NamedTuple):
    """One fold's rows (as checked: the core reads them through the map to the unit box)
    and their weights (None: all 1)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None
    X_val: np.ndarray
    y_val: np.ndarray
    val_weights: np.ndarray | None

    @classmethod
    def training_only(cls, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None) -> Fold:
        """A fold with no validation rows: all of ``X`` fitted, nothing scored."""
        return cls(X, y, weights, np.empty((0, X.shape[1])), np.empty(0), None)


@dataclass
class ValidationFolds:
    """The kept rows of ``X`` (unmapped), their targets and weights, and the folds scored on
    them. ``held_out``: one share of ``X`` was held out (``cv`` None), to be added back for
    the final model. Under ``selection="evidence"`` the one fold is all of ``X`` with no
    validation rows."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None
    folds: list[Fold]
    held_out: bool

    def validation_weights(self) -> list[float]:
        """Each fold's validation weight, by which the folds' errors are pooled."""
        return [total_weight(fold.val_weights, len(fold.y_val)) for fold in self.folds]

    def refit_targets(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The targets and weights of the final model's rows: all of ``X`` (in order), or,
        when a share was held out, the first fold's training rows then its validation rows.
        """
        if not self.held_out:
            return self.y, self.weights
        first = self.folds[0]
        weights = None
        if self.weights is not None:
            weights = np.concatenate([first.weights, first.val_weights])
        return np.concatenate([first.y, first.y_val]), weights


class ValidationFoldsMixin(UnitBoxMixin):
    """``fit``'s checks and folds for a kernel ridge that chooses its lifetimes by
    validation (``X_val``, ``cv`` or ``validation_fraction``) or by the evidence."""

    cv: Any
    selection: str
    validation_fraction: float
    random_state: Any

    def _validation_folds(
        self, X: Any, y: Any, X_val: Any, y_val: Any, sample_weight: Any
    ) -> ValidationFolds:
        """Check ``fit``'s arguments, fix the map to the unit box on ``X`` and split it."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        given = (X, y)
        X, y, weights, keep = weighted_rows(X, y, sample_weight)
        # The folds index the rows as checked; the core maps them as it reads them.
        self._fix_unit_box(X)
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if self.cv is not None and (X_val is not None or self.selection == "evidence"):
            raise ValueError(
                "cv splits X for selection='validation'; it cannot be combined with X_val "
                "or selection='evidence': leave cv=None"
            )
        if self.selection == "evidence":
            return ValidationFolds(X, y, weights, [Fold.training_only(X, y, weights)], False)
        if X_val is not None:
            X_val, y_val = validate_data(
                self, X_val, y_val, dtype=np.float64, y_numeric=True, reset=False
            )
            self._check_images(X_val)
            return ValidationFolds(X, y, weights, [Fold(X, y, weights, X_val, y_val, None)], False)
        splits = weighted_splits(
            self.cv, X, y, given, keep, weights, self.validation_fraction, self.random_state
        )
        folds = [
            Fold(X[t], y[t], split_weights(weights, t), X[v], y[v], split_weights(weights, v))
            for t, v in splits
        ]
        return ValidationFolds(X, y, weights, folds, self.cv is None)
