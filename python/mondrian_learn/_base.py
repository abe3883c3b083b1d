"""What every estimator of the package shares: its parameter table, one failure behaviour,
threads, and the checks of inputs after fitting."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn._validation import (
    as_core_array,
    check_parameters,
    is_core_ready,
    resolve_n_jobs,
)

Method = TypeVar("Method", bound=Callable[..., Any])


def restore_on_failure(method: Method) -> Method:
    """Wrap ``fit``/``partial_fit`` so that a call that raises — any exception, a
    ``KeyboardInterrupt`` included — leaves the estimator exactly as it was.

    A shallow copy of ``vars(self)`` suffices: fits build new core handles and assign them at
    the end, and the core's own updates (``partial_fit``) check their input before changing
    anything. Attributes a failed call added (``n_features_in_`` from a first ``fit``) are
    removed again.
    """

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved = dict(vars(self))
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    return guarded  # type: ignore[return-value]


#: The standard arguments of the estimators' methods, documented once (see :func:`document`).
ARGUMENTS = {
    "X": "X : array-like of shape (n_samples, n_features)",
    "y": "y : array-like of shape (n_samples,)",
    "y ignored": "y : ignored",
    "y or None": (
        "y : array-like of shape (n_samples,) or None\n"
        "    Only used by supervised samplers (Random Forest)."
    ),
}


def document(*arguments: str, returns: str = "self") -> Callable[[Method], Method]:
    """Complete a method's docstring with its numpydoc ``Parameters`` (the standard
    arguments, by key of :data:`ARGUMENTS`) and ``Returns`` sections."""

    def decorate(method: Method) -> Method:
        parameters = "\n".join(ARGUMENTS[name] for name in arguments)
        method.__doc__ = (
            f"{inspect.cleandoc(method.__doc__ or '')}\n\nParameters\n----------\n"
            f"{parameters}\n\nReturns\n-------\n{returns}\n"
        )
        return method

    return decorate


def store_params(estimator: Any, params: dict[str, Any]) -> None:
    """All an ``__init__`` does in scikit-learn's convention: store each of its arguments
    (``locals()``) under its own name, unchanged."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class EstimatorBase(BaseEstimator):
    """Base of the package's estimators (scikit-learn conventions: ``__init__`` stores the
    parameters, ``fit`` checks them against ``_parameter_constraints``)."""

    #: Each ``__init__`` parameter and the kinds of value it accepts (see ``_validation``).
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}

    def _validate_params(self) -> None:
        check_parameters(self)

    def _threads(self) -> int:
        """Threads for the core (``n_jobs`` with scikit-learn's meaning)."""
        return resolve_n_jobs(getattr(self, "n_jobs", None))

    def _fitted_input(self, X: Any) -> np.ndarray:
        """``X`` checked against the fitted estimator, in the core's layout."""
        check_is_fitted(self)
        return as_core_array(validate_data(self, X, dtype=np.float64, reset=False))


class OnlineMixin(EstimatorBase):
    """``partial_fit`` for estimators whose core handle ``model_`` updates itself online."""

    fit: Callable[..., Any]
    n_features_in_: int

    @restore_on_failure
    @document("X", "y")
    def partial_fit(self, X: Any, y: Any) -> Any:
        """Add points online: the trees are extended by the conditional Mondrian (NIPS 2014,
        "ExtendMondrianBlock") and the model updated with them (see the class notes), so the
        result has the distribution of a batch fit on all points seen so far.

        The first call on an unfitted estimator is ``fit``. Inputs already in the core's
        layout (C-ordered float64 ndarrays) skip scikit-learn's checks, which cost far more
        than a small update; the core itself rejects NaN/inf with a ``ValueError``."""
        if not hasattr(self, "model_"):
            return self.fit(X, y)
        if not is_core_ready(X, y, self.n_features_in_) or hasattr(self, "feature_names_in_"):
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        self.model_.partial_fit(as_core_array(X), as_core_array(y), self._threads())
        return self
