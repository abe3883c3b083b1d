"""The one declarative parameter checker of the estimators, and the rules every estimator
shares: threads (``n_jobs``) and seeds (``random_state``).

Every estimator declares ``_parameters``, a table from each of its parameters, in signature
order, to a :class:`Param`: its default and the kinds of value it accepts (a value is valid
when it satisfies any of them; ``None`` among them allows ``None``). Each class writes its
``__init__`` out (typed, keyword-only after the first argument) and the class is refused when
it is made if that signature disagrees with the table. :func:`check_parameters` walks the
table at the start of ``fit`` (as scikit-learn does) and raises one ``ValueError`` naming the
parameter, its value and what is allowed: ``n_estimators must be an integer >= 1, got 0``.
Each parameter's domain is stated here only. The Rust core converts the checked values (the
names of its string options come from it, through :meth:`Options.of_core`, so a name is
listed once), refuses only what depends on the data or on the fitted model (NaN, shapes,
overflow, a lifetime beyond the trees', a size past a budget), and keeps guards against
values it cannot run with (a zero count, a non-positive tolerance), which a value checked
here never reaches. Arrays are checked in ``_points``, targets and weights in ``_targets``.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn import _core

_MAX_SEED = np.iinfo(np.int64).max


def _is_integer(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Constraint:
    """One kind of value a parameter accepts; ``str()`` says which, in words."""

    def is_satisfied_by(self, value: object) -> bool:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


class Integer(Constraint):
    """An integer (not a bool) in ``[low, high]``; a bound of None is open."""

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low, self.high = low, high

    def is_satisfied_by(self, value: object) -> bool:
        return (
            _is_integer(value)
            and (self.low is None or value >= self.low)  # type: ignore[operator]
            and (self.high is None or value <= self.high)  # type: ignore[operator]
        )

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "an integer"


class Real(Constraint):
    """A real number (not NaN, not a bool) between ``low`` and ``high``.

    ``closed`` says which bounds belong to the interval ("both", "left", "right" or
    "neither"); infinity is accepted only with ``allow_inf``.
    """

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        closed: str = "both",
        allow_inf: bool = False,
    ) -> None:
        self.low, self.high, self.closed, self.allow_inf = low, high, closed, allow_inf

    def is_satisfied_by(self, value: object) -> bool:
        if not _is_real(value):
            return False
        v = float(value)  # type: ignore[arg-type]
        if math.isnan(v) or (math.isinf(v) and not self.allow_inf):
            return False
        left_closed = self.closed in ("both", "left")
        right_closed = self.closed in ("both", "right")
        if self.low is not None and not (v >= self.low if left_closed else v > self.low):
            return False
        return self.high is None or (v <= self.high if right_closed else v < self.high)

    def __str__(self) -> str:
        kind = "a number" if self.allow_inf else "a finite number"
        left = ">=" if self.closed in ("both", "left") else ">"
        right = "<=" if self.closed in ("both", "right") else "<"
        if self.low is not None and self.high is not None:
            brackets = ("[" if left == ">=" else "(", "]" if right == "<=" else ")")
            text = f"{kind} in {brackets[0]}{self.low}, {self.high}{brackets[1]}"
        elif self.low is not None:
            text = f"{kind} {left} {self.low}"
        elif self.high is not None:
            text = f"{kind} {right} {self.high}"
        else:
            text = kind
        return text + (" (inf allowed)" if self.allow_inf else "")


class Options(Constraint):
    """One of a fixed set of values (strings)."""

    def __init__(self, values: set[str] | frozenset[str]) -> None:
        self.values = frozenset(values)

    @classmethod
    def of_core(cls, parameter: str, *resolved_here: str) -> Options:
        """The names the core gives ``parameter``'s options (the list lives once, in the core,
        which converts the name checked here), with ``resolved_here``, the names an estimator
        resolves itself before calling the core."""
        return cls(frozenset(_core.OPTIONS[parameter]).union(resolved_here))

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in sorted(self.values))


class Boolean(Constraint):
    """``True`` or ``False`` (numpy bools too)."""

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, (bool, np.bool_))

    def __str__(self) -> str:
        return "a bool"


class IsCallable(Constraint):
    """Anything callable."""

    def is_satisfied_by(self, value: object) -> bool:
        return callable(value)

    def __str__(self) -> str:
        return "a callable"


class InstanceOf(Constraint):
    """An instance of one of ``types``, described as ``description``."""

    def __init__(self, types: type | tuple[type, ...], description: str) -> None:
        self.types, self.description = types, description

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return self.description


class IsSplitter(Constraint):
    """A cross-validation splitter: an object with ``split`` and ``get_n_splits`` (a
    scikit-learn splitter), or an iterable of (train, validation) index pairs."""

    def is_satisfied_by(self, value: object) -> bool:
        if isinstance(value, (str, bytes, numbers.Number, np.bool_)):
            return False
        return (hasattr(value, "split") and hasattr(value, "get_n_splits")) or hasattr(
            value, "__iter__"
        )

    def __str__(self) -> str:
        return "a cross-validation splitter or an iterable of (train, validation) splits"


class RealArray(Constraint):
    """A non-empty array-like of finite numbers, each ``>= low`` (not bools: as for
    :class:`Real`, ``True`` is not the number 1)."""

    def __init__(self, low: float) -> None:
        self.low = low

    def is_satisfied_by(self, value: object) -> bool:
        if isinstance(value, (str, bytes, bool, np.bool_)) or _is_real(value):
            return False
        try:
            array = np.asarray(value)
            if array.dtype == np.bool_:
                return False
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            return False
        return bool(array.size > 0 and np.isfinite(array).all() and array.min() >= self.low)

    def __str__(self) -> str:
        return f"an array of finite numbers >= {self.low}"


class Param:
    """One estimator parameter: its default and the kinds of value it accepts."""

    def __init__(self, default: Any, *constraints: Any) -> None:
        self.default, self.constraints = default, list(constraints)


#: Shared kinds of value.
N_JOBS: list[Any] = [None, Integer(low=1), Integer(high=-1)]
RANDOM_STATE: list[Any] = [
    None,
    Integer(low=0, high=2**32 - 1),
    InstanceOf(np.random.RandomState, "a numpy RandomState"),
]
VERBOSE: list[Any] = [Boolean(), Integer(low=0)]
POSITIVE: list[Any] = [Real(low=0, closed="neither")]
COUNT: list[Any] = [Integer(low=1)]
#: A Mondrian lifetime λ where the estimator needs a finite one.
FINITE_LIFETIME: list[Any] = [Real(low=0)]


def check_parameter(name: str, value: object, constraints: list[Any]) -> None:
    """Raise ``ValueError`` unless ``value`` satisfies one of ``constraints`` (``None`` in the
    list allows ``None``)."""
    for constraint in constraints:
        if constraint is None:
            if value is None:
                return
        elif constraint.is_satisfied_by(value):
            return
    allowed = ["None" if c is None else str(c) for c in constraints]
    text = allowed[0] if len(allowed) == 1 else ", ".join(allowed[:-1]) + " or " + allowed[-1]
    raise ValueError(f"{name} must be {text}, got {value!r}")


def check_tree_index(index: Any, n_trees: int) -> int:
    """``index`` as an int, or a ``ValueError`` unless it is an integer in [0, n_trees)."""
    if not Integer(low=0, high=n_trees - 1).is_satisfied_by(index):
        raise ValueError(f"tree index {index!r} out of range: need an integer in [0, {n_trees})")
    return int(index)


#: The parameters of every estimator that samples at random on several threads and reports
#: progress, last in its signature.
RUNTIME = {
    "random_state": Param(None, *RANDOM_STATE),
    "n_jobs": Param(None, *N_JOBS),
    "verbose": Param(0, *VERBOSE),
}


#: Feature scaling, the same parameter with the same meaning in every estimator.
SCALING = {"scale_features": Param(True, Boolean())}


def check_parameters(estimator: Any) -> None:
    """Check every parameter of ``estimator`` against its class's ``_parameters``."""
    params = estimator.get_params(deep=False)
    for name, param in type(estimator)._parameters.items():
        check_parameter(name, params[name], param.constraints)


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Number of threads for ``n_jobs`` with scikit-learn's meaning (None → 1, −1 → all cores),
    at most the number of CPUs: more threads than cores only add switching (``n_jobs=2**40``
    must not start 2⁴⁰ threads), and results never depend on the count.

    Raises
    ------
    ValueError
        If ``n_jobs`` is 0 or not an integer.
    """
    check_parameter("n_jobs", n_jobs, N_JOBS)
    if n_jobs is None or n_jobs == 1:
        return 1
    cpus = _cpu_count()
    if n_jobs > 0:
        return min(int(n_jobs), cpus)
    return max(1, cpus + 1 + max(int(n_jobs), -cpus))


@functools.cache
def _cpu_count() -> int:
    """CPUs this process may use (read once: ``os.cpu_count()`` reads /sys on every call)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def draw_seed(random_state: int | np.random.RandomState | None, high: int = _MAX_SEED) -> int:
    """A seed in ``[0, high)`` drawn once from ``random_state`` (an int, a RandomState, which
    advances, or None): by default a 63-bit seed for the core; a smaller ``high`` where the
    seed goes elsewhere (scikit-learn's splitters take 32-bit ones). Every seed of the package
    is drawn here, as ``randint(0, high)`` with an int64 dtype."""
    return int(check_random_state(random_state).randint(0, high, dtype=np.int64))
