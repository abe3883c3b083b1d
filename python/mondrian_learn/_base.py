"""What every estimator of the package shares: its parameter table, one failure behaviour,
threads, and the checks of inputs after fitting."""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
import warnings
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from mondrian_learn._memory import check_memory
from mondrian_learn._points import (
    CorePoints,
    as_core_array,
    as_core_points,
    is_core_ready,
)
from mondrian_learn._targets import (
    check_numeric_target,
    check_sample_weight,
    check_weighted_target_scale,
)
from mondrian_learn._validation import (
    COUNT,
    Param,
    check_parameter,
    check_parameters,
    resolve_n_jobs,
)

Method = TypeVar("Method", bound=Callable[..., Any])


def _package_directory(module: Any) -> str:
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


@functools.cache
def _library_directories() -> tuple[str, ...]:
    """The directories whose frames a warning skips: this package's, and those of the
    libraries that call a user's estimator for them (a ``Pipeline``, ``GridSearchCV``,
    joblib's workers), so that the warning names the user's own line."""
    import joblib
    import sklearn

    import mondrian_learn

    return tuple(_package_directory(m) for m in (mondrian_learn, sklearn, joblib))


#: The warnings issued so far in the outermost ``fit``/``partial_fit`` under way in this
#: thread or task (None outside one): (category, where the package issued it).
_FIT_WARNINGS: contextvars.ContextVar[set[tuple[type, str, int]] | None] = contextvars.ContextVar(
    "mondrian_learn_fit_warnings", default=None
)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning of the package: attributed to the first frame outside this package,
    scikit-learn and joblib (the user's line, also under a ``Pipeline`` or a search), and
    issued once per outermost ``fit``/``partial_fit`` for each place in the package that
    warns (a cross-validated fit, or a fit calling fits, warns once, not once per fold).

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        Its class.
    """
    caller = sys._getframe(1)
    issued = _FIT_WARNINGS.get()
    if issued is not None:
        key = (category, caller.f_code.co_filename, caller.f_lineno)
        if key in issued:
            return
        issued.add(key)
    skipped = _library_directories()
    # stacklevel 1 is this function, 2 its caller; count up to the first frame outside.
    frame: Any = caller
    level = 2
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        skipped
    ):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def restore_on_failure(method: Method) -> Method:
    """Wrap ``fit``/``partial_fit`` so that a call that raises — any exception, a
    ``KeyboardInterrupt`` included — leaves the estimator exactly as it was; the outermost
    such call issues each of the package's warnings once (:func:`warn`).

    A shallow copy of ``vars(self)`` suffices: fits build new core handles and assign them at
    the end, and the core's own updates (``partial_fit``) check their input before changing
    anything. Attributes a failed call added (``n_features_in_`` from a first ``fit``) are
    removed again.
    """

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved = dict(vars(self))
        # The outermost fit collects the package's warnings (see ``warn``).
        scope = _FIT_WARNINGS.set(set()) if _FIT_WARNINGS.get() is None else None
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise
        finally:
            if scope is not None:
                _FIT_WARNINGS.reset(scope)

    return guarded  # type: ignore[return-value]


#: The standard arguments of the estimators' methods, documented once (see :func:`document`).
ARGUMENTS = {
    "X": "X : array-like of shape (n_samples, n_features)\n    Points (finite values).",
    "X dask": (
        "X : dask.array.Array, dask.dataframe.DataFrame or array-like\n"
        "    Points (n_samples × n_features)."
    ),
    "y": "y : array-like of shape (n_samples,)\n    Targets of the points.",
    "y ignored": "y : None\n    Ignored; present for scikit-learn's API.",
    "sample_weight": (
        "sample_weight : float or array-like of shape (n_samples,), default=None\n"
        "    Row weights (non-negative): a weight multiplies the row's likelihood precision, "
        "an\n    integer weight is the row repeated, a zero weight removes it. None: all 1."
    ),
    "y or None": (
        "y : array-like of shape (n_samples,) or None\n"
        "    Only used by supervised samplers (Random Forest)."
    ),
    "index": "index : int\n    The tree, 0 ≤ index < n_estimators.",
}


def document(*arguments: str) -> Callable[[Method], Method]:
    """Insert a method's numpydoc ``Parameters`` section (the standard arguments, by key of
    :data:`ARGUMENTS`) before the ``Returns`` section its docstring writes out.

    Parameters
    ----------
    *arguments : str
        Keys of :data:`ARGUMENTS`, in signature order.

    Returns
    -------
    decorate : callable
        The decorator; it raises ``ValueError`` on a docstring without a ``Returns`` section.
    """

    def decorate(method: Method) -> Method:
        parameters = "\n".join(ARGUMENTS[name] for name in arguments)
        summary, heading, returns = inspect.cleandoc(method.__doc__ or "").partition(
            "\n\nReturns\n-------\n"
        )
        if not heading:
            raise ValueError(f"{method.__qualname__}: the docstring has no Returns section")
        method.__doc__ = (
            f"{summary}\n\nParameters\n----------\n{parameters}\n\nReturns\n-------\n{returns}\n"
        )
        return method

    return decorate


def store_parameters(estimator: Any, arguments: dict[str, Any]) -> None:
    """Store each parameter of ``estimator``'s class under its own name, unchanged, from
    ``arguments``: its ``__init__``'s ``locals()``. All an ``__init__`` does in scikit-learn's
    convention; the signature itself is written out in each class, where IDEs, mypy and
    ``get_params`` read it."""
    for name in type(estimator)._parameters:
        setattr(estimator, name, arguments[name])


def _same_default(written: Any, declared: Any) -> bool:
    """Whether a signature's default is the table's: the same value of the same type (so
    ``1`` is not ``1.0`` and ``True`` is not ``1``)."""
    if written is declared:
        return True
    if type(written) is not type(declared):
        return False
    try:
        return bool(written == declared)
    except (TypeError, ValueError):  # values with no single truth value, such as arrays
        return False


def check_signature(cls: type) -> None:
    """Raise ``TypeError`` naming ``cls`` unless its ``__init__`` takes exactly the parameters
    of its ``_parameters`` table, in the table's order, with the table's defaults, the first
    positional-or-keyword and the rest keyword-only (scikit-learn's style)."""
    table: dict[str, Param] = cls._parameters  # type: ignore[attr-defined]
    first, rest = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    expected = [
        inspect.Parameter(name, rest if i else first, default=param.default)
        for i, (name, param) in enumerate(table.items())
    ]
    written = list(inspect.signature(cls.__init__).parameters.values())[1:]  # type: ignore[misc]
    if len(written) != len(expected) or any(
        w.name != e.name or w.kind != e.kind or not _same_default(w.default, e.default)
        for w, e in zip(written, expected)
    ):
        bare = [w.replace(annotation=inspect.Parameter.empty) for w in written]
        raise TypeError(
            f"{cls.__name__}.__init__ must take the parameters of {cls.__name__}._parameters "
            f"in order, with their defaults, the first positional and the rest keyword-only: "
            f"expected {inspect.Signature(expected)}, got {inspect.Signature(bare)}"
        )


class EstimatorBase(BaseEstimator):
    """Base of the package's estimators (scikit-learn conventions: ``__init__`` stores the
    parameters, ``fit`` checks them). A subclass declares ``_parameters`` (name → default and
    accepted values, in signature order) and writes out an ``__init__`` taking exactly those
    parameters, which stores them (:func:`store_parameters`); the two are checked against each
    other when the class is created (:func:`check_signature`)."""

    #: Each parameter, in signature order: default and accepted values (see ``_validation``).
    _parameters: ClassVar[dict[str, Param]] = {}

    #: The dtypes of X the core reads as they are (others are converted to the first).
    _point_dtypes: ClassVar[tuple[type, ...]] = (np.float64,)

    #: Whether the core refuses non-finite points itself, so that predictions on arrays
    #: already in its layout may skip scikit-learn's checks.
    _core_checks_points: ClassVar[bool] = False

    #: Whether X may be a scipy sparse matrix (the core reads it a row block at a time).
    _accepts_sparse: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Overridden by every estimator (its own signature, see ``__init_subclass__``); only
        # the bases and mixins that declare no parameters keep this one.
        raise TypeError(f"{type(self).__name__} declares no parameters")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every class that can be made, whether it declares its table and __init__ or
        # inherits them (from one parent each, possibly two different ones), is checked.
        if cls._parameters or cls.__init__ is not EstimatorBase.__init__:
            check_signature(cls)

    def _validate_params(self) -> None:
        check_parameters(self)

    def _threads(self) -> int:
        """Threads for the core (``n_jobs`` with scikit-learn's meaning)."""
        return resolve_n_jobs(getattr(self, "n_jobs", None))

    def _sparse_formats(self) -> str | bool:
        """``accept_sparse`` for scikit-learn's checks: any sparse format is converted to CSR
        when the estimator reads sparse X, else sparse X is refused."""
        return "csr" if self._accepts_sparse else False

    def _check_input(
        self, X: Any, y: Any = "no_validation", *, reset: bool = False, **checks: Any
    ) -> Any:
        """``X`` checked (dense or, where accepted, sparse), not yet in the core's layout; with
        ``y``, the pair ``(X, y)`` checked together (``checks``: more of scikit-learn's
        ``validate_data`` options, such as ``y_numeric``)."""
        return validate_data(
            self,
            X,
            y,
            dtype=list(self._point_dtypes),
            accept_sparse=self._sparse_formats(),
            reset=reset,
            **checks,
        )

    def _fitted_input(self, X: Any) -> CorePoints:
        """``X`` checked against the fitted estimator, in the core's layout.

        An array already in the core's layout (:func:`is_core_ready`) skips scikit-learn's
        checks, which cost far more than predicting a few rows; the core itself rejects
        NaN/inf with a ``ValueError`` (estimators whose core does: ``_core_checks_points``).
        Estimators fitted on named features always check."""
        n_features = vars(self).get("n_features_in_")
        if (
            self._core_checks_points
            and n_features is not None
            and "feature_names_in_" not in vars(self)
            and is_core_ready(X, None, n_features, self._point_dtypes)
        ):
            return self._core_input(X)
        check_is_fitted(self)
        return self._core_input(self._check_input(X))

    def _core_input(self, X: Any) -> CorePoints:
        """Checked points as the core takes them."""
        return as_core_points(X, dtype=self._point_dtypes)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse
        return tags


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
        than a small update; the core itself rejects NaN/inf with a ``ValueError``.

        Returns
        -------
        self : object
            The estimator itself.
        """
        return self._update(X, y)

    def _update(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """``partial_fit``'s work, with row weights for the models that take them."""
        if not hasattr(self, "model_"):
            weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
            return self.fit(X, y, **weighted)
        ready = is_core_ready(X, y, self.n_features_in_, self._point_dtypes)
        if not ready or hasattr(self, "feature_names_in_"):
            X, y = self._check_input(X, y, y_numeric=True)
            check_numeric_target(y)
        if sample_weight is None:
            self.model_.partial_fit(self._core_input(X), as_core_array(y), self._threads())
            return self
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        if weights is not None and len(weights):
            X, y = self._core_input(X[keep]), as_core_array(np.asarray(y)[keep])
            check_weighted_target_scale(y, weights)
            self.model_.partial_fit(X, y, self._threads(), weights)
        return self


class GaussianSampleMixin:
    """``sample_y`` for a model with a Gaussian predictive: draws from
    ``predict(X, return_cov=True)``."""

    def sample_y(self, X: Any, n_samples: int = 1, random_state: Any = 0) -> np.ndarray:
        """Draw new targets at ``X`` jointly from the predictive N(mean, cov) of
        ``predict(X, return_cov=True)``, as scikit-learn's
        ``GaussianProcessRegressor.sample_y`` does (``rng.multivariate_normal``).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Points (finite values).
        n_samples : int, default=1
            Draws per point.
        random_state : int, RandomState or None, default=0
            Seeds the draws.

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples)
            One column per draw.
        """
        check_parameter("n_samples", n_samples, COUNT)
        check_memory("n_samples", n_samples, 8.0 * n_samples * np.shape(X)[0], "the draws")
        mean, cov = self.predict(X, return_cov=True)  # type: ignore[attr-defined]
        rng = check_random_state(random_state)
        return rng.multivariate_normal(mean, cov, int(n_samples)).T
