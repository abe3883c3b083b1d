"""What every estimator accepts: each parameter is checked, once, in Python (the core does not
check parameter domains), and any array numpy can make gives the same result."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone

from conftest import estimator_zoo, fit_data, output
from mondrian_learn._points import as_core_array
from mondrian_learn._validation import N_JOBS, Integer, Options, Real, RealArray, check_parameter
from mondrian_learn.partition import (
    CallablePartitions,
    FastClusterPartitions,
    MondrianPartitions,
    RandomForestPartitions,
)

ZOO = estimator_zoo()
SAMPLERS = [MondrianPartitions(), RandomForestPartitions(), FastClusterPartitions()]


@pytest.mark.parametrize(
    "estimator", [e for e, _ in ZOO.values()] + SAMPLERS + [CallablePartitions()], ids=repr
)
def test_the_signature_is_the_parameter_table(estimator: object) -> None:
    # The written __init__ takes the table's parameters in order with equal defaults of the
    # same type, and every default satisfies the parameter's own constraints (but
    # CallablePartitions' function, which has no useful default and must be given).
    table = type(estimator)._parameters  # type: ignore[attr-defined]
    signature = inspect.signature(type(estimator).__init__).parameters
    assert list(signature)[1:] == list(table)
    for name, param in table.items():
        default = signature[name].default
        assert type(default) is type(param.default) and default == param.default
        if not isinstance(estimator, CallablePartitions):
            check_parameter(name, param.default, param.constraints)
    fresh = type(estimator)()
    assert fresh.get_params(deep=False) == {n: p.default for n, p in table.items()}


@pytest.mark.parametrize(
    ("name", "value", "constraints", "message"),
    [
        ("n_estimators", 0, [Integer(low=1)], "n_estimators must be an integer >= 1, got 0"),
        ("n_estimators", True, [Integer(low=1)], "an integer >= 1, got True"),
        ("level", 41, [None, Integer(0, 40)], "level must be None or an integer in [0, 40]"),
        ("n_jobs", 0, N_JOBS, "None, an integer >= 1 or an integer <= -1, got 0"),
        ("lifetime", np.nan, [Real(low=0)], "a finite number >= 0, got nan"),
        ("lifetime", np.inf, [Real(low=0)], "a finite number >= 0, got inf"),
        ("tol", 0.0, [Real(low=0, closed="neither")], "a finite number > 0, got 0.0"),
        ("p", 1.0, [Real(0, 1, closed="neither")], r"a finite number in \(0, 1\), got 1.0"),
        ("mode", "x", [Options({"b", "a"})], "one of 'a', 'b', got 'x'"),
        ("grid", [0.5, -1], [RealArray(low=0)], r"an array of finite numbers >= 0"),
    ],
)
def test_messages_name_the_parameter_the_value_and_what_is_allowed(
    name: str, value: object, constraints: list, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_parameter(name, value, constraints)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        ("kernel.MondrianGridFeatures", "lifetime"),
        ("kernel.baselines.LaplaceKernelRidge", "lifetime"),
        ("MondrianForestRegressorCV", "lifetimes"),
        ("MondrianForestClassifierCV", "lifetimes"),
        ("MondrianKernelRidgeCV", "lifetimes"),
    ],
)
@pytest.mark.parametrize("value", [True, np.bool_(False), [True, False], np.array([True])])
def test_booleans_are_not_numbers_in_any_parameter(make: str, name: str, value: object) -> None:
    # One rule for bools, as for n_estimators=True: the array-valued lifetimes are no exception.
    import importlib

    module, _, cls = ("mondrian_learn." + make).rpartition(".")
    estimator = getattr(importlib.import_module(module), cls)(**{name: value})
    X = np.random.default_rng(0).uniform(size=(20, 2))
    with pytest.raises(ValueError, match=f"^{name} must be .*got"):
        estimator.fit(X, fit_data(estimator, X))


def test_accepted_values_pass() -> None:
    check_parameter("lifetime", np.inf, [Real(low=0, allow_inf=True)])
    check_parameter("n_jobs", -1, N_JOBS)
    check_parameter("n", np.int64(3), [Integer(low=1)])
    check_parameter("x", np.float32(0.5), [Real(0, 1)])
    check_parameter("grid", np.array([0.0, 2.0]), [None, RealArray(low=0)])


def layouts(X: np.ndarray) -> dict[str, np.ndarray]:
    """The same float64 values as Fortran-ordered, strided, unaligned and float32 arrays."""
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    raw = np.zeros(X.size * 8 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64).reshape(X.shape)
    unaligned[:] = X
    assert not unaligned.flags.aligned
    return {
        "fortran": np.asfortranarray(X),
        "strided": wide[:, ::2],
        "reversed": X[::-1][::-1],
        "unaligned": unaligned,
        "float32": X.astype(np.float32),
    }


@pytest.mark.parametrize("name", sorted(ZOO))
def test_any_array_layout_gives_the_same_result(name: str) -> None:
    X = np.random.default_rng(3).uniform(size=(60, 3)).astype(np.float32).astype(np.float64)
    estimator = ZOO[name][0]
    y = fit_data(estimator, X)
    reference = output(clone(estimator).fit(X, y), X)
    for layout, data in layouts(X).items():
        targets = None if y is None else np.repeat(y, 2)[::2]  # a strided y too
        result = output(clone(estimator).fit(data, targets), data)
        np.testing.assert_array_equal(result, reference, err_msg=layout)


def test_core_arrays_are_c_ordered_aligned_float64_and_not_copied_when_they_are() -> None:
    X = np.random.default_rng(4).uniform(size=(5, 3))
    assert as_core_array(X) is X
    for data in layouts(X).values():
        array = as_core_array(data)
        assert array.flags.c_contiguous and array.flags.aligned and array.dtype == np.float64
        np.testing.assert_array_equal(array, X.astype(data.dtype))


@pytest.mark.parametrize("name", ["partition_kernel", "partition_svc"])
def test_verbose_reports_each_stage(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    estimator = clone(ZOO[name][0]).set_params(verbose=1)
    X = np.random.default_rng(5).uniform(size=(40, 2))
    estimator.fit(X, fit_data(estimator, X))
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith(f"{type(estimator).__name__}: sampled 10 partitions in ")
    if name == "partition_svc":
        assert "linear SVM in" in lines[-1] and len(lines) == 2


@pytest.mark.parametrize("name", sorted(ZOO))
def test_missing_values_and_sparse_input_get_the_documented_errors(name: str) -> None:
    """README ("Inputs"): NaN is refused (impute first: a Mondrian cut or a partition needs a
    coordinate), in dense and sparse X alike; sparse matrices are refused by the estimators
    that do not read them (``tests/test_sparse_input.py`` covers those that do), each with
    scikit-learn's message naming the problem — never a panic or a silent densification."""
    import scipy.sparse

    X = np.random.default_rng(4).uniform(size=(40, 3))
    estimator = ZOO[name][0]
    y = fit_data(estimator, X)
    with_nan = X.copy()
    with_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clone(estimator).fit(with_nan, y)
    if estimator._accepts_sparse:
        with pytest.raises(ValueError, match="NaN"):
            clone(estimator).fit(scipy.sparse.csr_matrix(with_nan), y)
    else:
        with pytest.raises(TypeError, match="dense data is required"):
            clone(estimator).fit(scipy.sparse.csr_matrix(X), y)
