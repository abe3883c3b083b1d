"""Input checks shared by the estimators: one declarative parameter checker, and the one place
that turns user arrays into what the core takes.

Every estimator declares ``_parameters``, a table from each of its parameters, in signature
order, to a :class:`Param`: its default and the kinds of value it accepts (a value is valid
when it satisfies any of them; ``None`` among them allows ``None``). Its ``__init__`` is made
from that table (``_base.EstimatorBase``), so a default and a domain are written once.
:func:`check_parameters` walks the table at the start of ``fit`` (as scikit-learn does) and
raises one ``ValueError`` naming the parameter, its value and what is allowed:
``n_estimators must be an integer >= 1, got 0``. The Rust core does not check
parameter domains again; it only checks what depends on the data (NaN, shapes, overflow).
"""

from __future__ import annotations

import functools
import math
import numbers
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse
from sklearn.utils import check_random_state

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

#: Its description, for the estimators' docstrings.
SCALE_FEATURES_DOC = """scale_features : bool, default=True
        Map each feature to [0, 1] by its range in the training data (``data_min_``,
        ``data_scale_``; a constant feature is only shifted) before anything else, so
        lifetimes are in the same units for every estimator of the package; False keeps the
        raw units of X."""


def check_parameters(estimator: Any) -> None:
    """Check every parameter of ``estimator`` against its class's ``_parameters``."""
    params = estimator.get_params(deep=False)
    for name, param in type(estimator)._parameters.items():
        check_parameter(name, params[name], param.constraints)


def as_core_array(X: Any, dtype: Any = np.float64) -> np.ndarray:
    """``X`` as the core takes arrays: C-contiguous, aligned, ``dtype`` (float64 by default;
    a tuple of dtypes keeps X's when it is one of them, else converts to the first); no copy
    when it already is one. Any array numpy can make is accepted (Fortran order, strided
    views, other dtypes, unaligned buffers)."""
    if isinstance(dtype, tuple):
        dtype = X.dtype if getattr(X, "dtype", None) in dtype else dtype[0]
    array = np.ascontiguousarray(X, dtype=dtype)
    return array if array.flags.aligned else array.copy()


#: How the core takes a sparse matrix: the parts of a canonical CSR matrix, its width, and the
#: optional map ``(offset, scale)`` its rows are read through.
SparsePoints = tuple[np.ndarray, np.ndarray, np.ndarray, int, Any]
#: Any matrix of points the core reads: dense, sparse, or dense with its map ``(x, (offset,
#: scale))``.
CorePoints = np.ndarray | SparsePoints | tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]


def as_core_points(
    X: Any, dtype: Any = np.float64, unit_box: tuple[np.ndarray, np.ndarray] | None = None
) -> CorePoints:
    """``X`` as the core reads points: a dense array as :func:`as_core_array` makes it, or a
    scipy sparse matrix as the parts of a canonical CSR matrix (float64 values, int32 column
    indices sorted within each row, int64 row pointers), which the core reads a row block at
    a time — the matrix is never densified whole. ``unit_box``: the map ``(offset, scale)``
    the rows are read through (by the core, as it reads them: no mapped copy, which would make
    a sparse matrix dense and a float32 one float64).

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        Checked points.
    dtype : dtype or tuple of dtypes, default=np.float64
        For dense ``X``, as in :func:`as_core_array`.
    unit_box : tuple of two ndarrays or None, default=None
        The map to read the rows through.

    Returns
    -------
    points : ndarray or tuple
        What the core's ``x`` arguments take.
    """
    if not scipy.sparse.issparse(X):
        dense = as_core_array(X, dtype=dtype)
        if unit_box is None:
            return dense
        return dense, (as_core_array(unit_box[0]), as_core_array(unit_box[1]))
    X = scipy.sparse.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.shape[1] > np.iinfo(np.int32).max:
        raise ValueError(f"sparse X has {X.shape[1]} columns, beyond the 32-bit column indices")
    return (
        as_core_array(X.data),
        as_core_array(X.indices, dtype=np.int32),
        as_core_array(X.indptr, dtype=np.int64),
        int(X.shape[1]),
        None if unit_box is None else tuple(as_core_array(v) for v in unit_box),
    )


#: Bytes of one dense block of rows when a sparse matrix goes to a core function that reads
#: dense rows only (a few MiB: the blocks' cost stays small next to any model's).
DENSE_BLOCK_BYTES = 8 * 2**20


def dense_row_blocks(X: Any, max_bytes: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
    """The rows of a checked scipy sparse matrix ``X`` as C-ordered float64 arrays, a block of
    at most ``max_bytes`` (one row at least) at a time, each with the slice of its rows: for the
    core functions without a sparse path whose rows are independent (labels, densities), so
    that ``X`` is never dense whole and the results are those of the same rows given dense.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Checked points (duplicates are summed, as in :func:`as_core_points`).
    max_bytes : int or None, default=None
        Most bytes of one dense block (None: ``DENSE_BLOCK_BYTES``).

    Yields
    ------
    rows : slice
        The block's rows in ``X``.
    block : ndarray of shape (rows, n_features)
        Their values.
    """
    X = scipy.sparse.csr_matrix(X)
    budget = DENSE_BLOCK_BYTES if max_bytes is None else max_bytes
    step = max(1, budget // (8 * max(X.shape[1], 1)))
    for start in range(0, X.shape[0], step):
        rows = slice(start, min(start + step, X.shape[0]))
        yield rows, as_core_array(X[rows].toarray())


def dense_points(X: Any, map_rows: Callable[[np.ndarray], Any] | None = None) -> np.ndarray:
    """A checked scipy sparse matrix ``X`` as one dense C-ordered float64 array, written a
    block of rows at a time through ``map_rows`` (e.g. the map to the unit box), for the core
    functions that read every row at once: no dense copy besides the result, which is refused
    by name (``MemoryError``) beyond the machine's memory before it is allocated.

    Parameters
    ----------
    X : scipy sparse matrix of shape (n_samples, n_features)
        Checked points.
    map_rows : callable or None, default=None
        Applied to each dense block (rows map independently); None: the values as they are.

    Returns
    -------
    points : ndarray of shape (n_samples, n_features)
        The (mapped) values.
    """
    n, d = X.shape
    check_memory("X", f"{n} × {d}", 8.0 * n * d, "its rows dense, float64")
    points = np.empty((n, d))
    for rows, block in dense_row_blocks(X):
        points[rows] = block if map_rows is None else map_rows(block)
    return points


def is_core_ready(
    X: object, y: object, n_features: int, dtypes: tuple[type, ...] = (np.float64,)
) -> bool:
    """True when ``X`` (and ``y``, unless None) are already what the core takes: non-empty
    C-ordered arrays (n × n_features of one of ``dtypes``, and n float64) of plain ndarray
    type. Finiteness is left to the core."""
    return (
        type(X) is np.ndarray
        and X.dtype in dtypes
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.flags.aligned
        and X.shape[0] > 0
        and X.shape[1] == n_features
        and (
            y is None
            or (
                type(y) is np.ndarray
                and y.dtype == np.float64
                and y.ndim == 1
                and X.shape[0] == y.shape[0]
            )
        )
    )


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


def check_numeric_target(y: np.ndarray) -> None:
    """Raise ``ValueError`` when a regressor's targets ``y`` (checked by scikit-learn's
    ``validate_data(..., y_numeric=True)``, which converts only object arrays) are not
    numbers: strings or bytes would otherwise fail deep inside with a numpy ``TypeError``.
    The message is scikit-learn's for targets it cannot convert; strings that read as
    numbers are refused too (the estimators read y as it is), with how to convert them."""
    if np.asarray(y).dtype.kind in "biuf":
        return
    try:
        np.asarray(y).astype(np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"y must be numeric for regression: {error}") from None
    raise ValueError(
        f"y must be numeric for regression, got dtype {np.asarray(y).dtype}; convert it "
        "with y.astype(float)"
    )


def check_target_scale(y: np.ndarray) -> None:
    """Raise ``ValueError`` when the targets ``y`` are not numbers
    (:func:`check_numeric_target`) or their variance overflows float64: every model centres
    and scales by it, and would return NaN."""
    check_numeric_target(y)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = bool(np.isfinite(np.var(y))) if y.size else True
    if not finite:
        raise ValueError("y is too large: the variance of the targets overflows float64; rescale y")


#: The largest row weight (the core's bound on |y| and on weights alike).
MAX_WEIGHT = 1e150
#: The smallest positive row weight (its reciprocal: the same margin below 1).
MIN_WEIGHT = 1 / MAX_WEIGHT


def check_weighted_target_scale(y: np.ndarray, weights: np.ndarray | None) -> None:
    """Raise ``ValueError`` when the weighted squared deviations of ``y`` overflow float64 (the
    models' sums of v_i (y_i − ȳ)² would be infinite and their predictions NaN)."""
    if weights is None or not y.size:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        centred = y - np.average(y, weights=weights)
        finite = bool(np.isfinite(np.sum(weights * centred * centred)))
    if not finite:
        raise ValueError(
            "sample_weight times the squared deviations of y overflows float64; rescale "
            "sample_weight or y"
        )


def check_sample_weight(sample_weight: Any, n_rows: int) -> tuple[np.ndarray | None, Any]:
    """``sample_weight`` (None, a number or n_rows values) checked: finite, non-negative, not
    all zero, positive ones within [``MIN_WEIGHT``, ``MAX_WEIGHT``]. Returns the positive
    weights and the rows to keep — a zero weight removes its
    row, as scikit-learn's weight semantics ask — or ``(None, slice(None))`` for None."""
    if sample_weight is None:
        return None, slice(None)
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.ndim == 0:
        weights = np.full(n_rows, float(weights))
    if weights.shape != (n_rows,):
        raise ValueError(
            f"sample_weight must be a number or have shape ({n_rows},), got {weights.shape}"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("sample_weight must hold finite, non-negative values")
    if np.any(weights > MAX_WEIGHT):
        raise ValueError(
            f"sample_weight must hold values up to {MAX_WEIGHT:g} (the weighted sums of the "
            f"models stay finite), got {weights.max():g}; rescale sample_weight"
        )
    keep = weights > 0
    if n_rows and not keep.any():
        raise ValueError("sample_weight is zero for every row: nothing to fit")
    if np.any(weights[keep] < MIN_WEIGHT):
        # Subnormal sums of weights lose their precision: a forest's 1e-310 total gave NaN.
        raise ValueError(
            f"sample_weight must hold values of at least {MIN_WEIGHT:g} where positive (the "
            f"weighted sums keep their precision), got {weights[keep].min():g}; rescale "
            "sample_weight or set such rows to 0"
        )
    return as_core_array(weights[keep]), keep


@functools.cache
def physical_memory() -> int:
    """Bytes of physical memory on this machine (read once)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return 2**62


def check_memory(name: str, value: Any, n_bytes: float, what: str) -> None:
    """Raise ``MemoryError`` naming the parameter ``name=value`` when a call would need
    ``n_bytes`` (at least: ``what``, e.g. "a leaf's point ids per tree") and that exceeds the
    machine's physical memory: refused before anything is allocated, instead of an abort by
    the allocator or hours of swapping."""
    if n_bytes > physical_memory():
        raise MemoryError(
            f"{name}={value} needs at least {n_bytes / 2**30:.3g} GiB ({what}), more than this "
            f"machine's {physical_memory() / 2**30:.3g} GiB of memory: lower {name}"
        )


def draw_seed(random_state: int | np.random.RandomState | None) -> int:
    """A 63-bit seed for the core drawn once from ``random_state``."""
    return int(check_random_state(random_state).randint(0, _MAX_SEED, dtype=np.int64))
