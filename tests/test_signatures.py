"""Every estimator's ``__init__`` is written out, typed, and is its parameter table: the
table's names in order with its defaults, the first parameter positional-or-keyword and the
rest keyword-only (scikit-learn's style), so that a typo or a positional argument whose
meaning would move with the table is a ``TypeError``, and a class whose signature disagrees
with its table cannot even be created."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from types import ModuleType
from typing import Any

import pytest
from sklearn.base import BaseEstimator, clone

import mondrian_learn
from mondrian_learn._base import EstimatorBase, store_parameters
from mondrian_learn._validation import COUNT, Param, Real
from mondrian_learn.forest import MondrianForestRegressor


def _modules() -> list[ModuleType]:
    """Every module of the package but those that need an optional library that is not
    installed (dask's, river, matplotlib); any other import error fails the tests."""
    modules = [mondrian_learn]
    for info in pkgutil.walk_packages(mondrian_learn.__path__, "mondrian_learn."):
        try:
            modules.append(importlib.import_module(info.name))
        except ModuleNotFoundError as error:
            if (error.name or "").startswith("mondrian_learn"):
                raise
    return modules


def _classes() -> tuple[list[type], list[type]]:
    """The estimator classes (every class of the package with a parameter table, its own or
    inherited), and the public estimator classes (those in a module's ``__all__``)."""
    found: dict[type, None] = {}
    public: dict[type, None] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if not inspect.isclass(value) or not value.__module__.startswith("mondrian_learn"):
                continue
            if getattr(value, "_parameters", None):
                found[value] = None
            if name in getattr(module, "__all__", ()) and issubclass(value, BaseEstimator):
                public[value] = None
    return list(found), list(public)


ESTIMATORS, PUBLIC = _classes()


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _kinds(cls: type) -> list[Any]:
    """The kinds of ``cls.__init__``'s parameters after ``self``."""
    return [p.kind for p in list(inspect.signature(cls.__init__).parameters.values())[1:]]


def _style(n_parameters: int) -> list[Any]:
    """scikit-learn's style: the first parameter positional-or-keyword, the rest keyword-only."""
    rest = [inspect.Parameter.KEYWORD_ONLY] * (n_parameters - 1)
    return [inspect.Parameter.POSITIONAL_OR_KEYWORD] + rest if n_parameters else []


def test_every_public_estimator_is_checked_or_written_in_the_same_style() -> None:
    # The walk found the estimators (a broken walk must not pass every test vacuously).
    assert MondrianForestRegressor in ESTIMATORS and len(ESTIMATORS) >= 20
    for cls in PUBLIC:
        if cls in ESTIMATORS:
            continue
        if issubclass(cls, EstimatorBase):  # a base for estimators, that cannot be made
            assert cls.__init__ is EstimatorBase.__init__, _name(cls)
            with pytest.raises(TypeError, match="declares no parameters"):
                cls()
        else:  # a meta-estimator with no table of its own
            assert _kinds(cls) == _style(len(_kinds(cls))), _name(cls)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=_name)
def test_the_signature_is_the_table(cls: type) -> None:
    table = cls._parameters  # type: ignore[attr-defined]
    parameters = list(inspect.signature(cls.__init__).parameters.values())
    assert parameters[0].name == "self"
    parameters = parameters[1:]
    assert [p.name for p in parameters] == list(table)
    assert _kinds(cls) == _style(len(table))
    for p in parameters:
        default = table[p.name].default
        assert type(p.default) is type(default) and p.default == default, p.name
        # Typed: what mypy and IDEs read.
        assert p.annotation is not inspect.Parameter.empty, p.name
    assert inspect.signature(cls.__init__).return_annotation in ("None", None)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=_name)
def test_get_params_clone_and_pickle_keep_the_defaults(cls: type) -> None:
    defaults = {name: param.default for name, param in cls._parameters.items()}  # type: ignore[attr-defined]
    estimator = cls()
    params = estimator.get_params(deep=False)
    assert params == defaults
    # Stored unchanged: the very objects of the signature.
    signature = inspect.signature(cls.__init__).parameters
    assert all(params[name] is signature[name].default for name in defaults)
    for copy in (clone(estimator), pickle.loads(pickle.dumps(estimator))):
        assert type(copy) is cls and copy.get_params(deep=False) == defaults


@pytest.mark.parametrize("cls", ESTIMATORS, ids=_name)
def test_keywords_are_stored_and_a_second_positional_argument_is_refused(cls: type) -> None:
    names = list(cls._parameters)  # type: ignore[attr-defined]
    marker = object()
    estimator = cls(**{names[-1]: marker})
    assert getattr(estimator, names[-1]) is marker
    first = cls(marker)
    assert getattr(first, names[0]) is marker
    if len(names) > 1:
        with pytest.raises(TypeError, match="positional argument"):
            cls(marker, marker)


def test_a_misspelt_parameter_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_estimator'"):
        MondrianForestRegressor(n_estimator=5)  # type: ignore[call-arg]


TABLE = {"n_estimators": Param(10, *COUNT), "lifetime": Param(1.0, Real(low=0))}


def _refused(init: Any, table: dict[str, Param] | None = TABLE) -> str:
    """The message of the TypeError raised when a class with ``init`` and ``table`` is made
    (``init`` None: the class writes none; ``table`` None: it declares none)."""
    namespace: dict[str, Any] = {}
    if table is not None:
        namespace["_parameters"] = table
    if init is not None:
        namespace["__init__"] = init
    with pytest.raises(TypeError, match="^Disagreeing.__init__ must take the parameters") as error:
        type("Disagreeing", (EstimatorBase,), namespace)
    return str(error.value)


def test_a_class_whose_signature_disagrees_with_its_table_is_refused() -> None:
    def positional(self: Any, n_estimators: int = 10, lifetime: float = 1.0) -> None:
        store_parameters(self, locals())

    def reordered(self: Any, lifetime: float = 1.0, *, n_estimators: int = 10) -> None:
        store_parameters(self, locals())

    def other_default(self: Any, n_estimators: int = 10, *, lifetime: float = 2.0) -> None:
        store_parameters(self, locals())

    def int_for_float(self: Any, n_estimators: int = 10, *, lifetime: float = 1) -> None:
        store_parameters(self, locals())

    def missing(self: Any, n_estimators: int = 10) -> None:
        store_parameters(self, locals())

    def catch_all(self: Any, n_estimators: int = 10, **kwargs: Any) -> None:
        store_parameters(self, locals())

    message = _refused(positional)
    expected = "expected (n_estimators=10, *, lifetime=1.0), got (n_estimators=10, lifetime=1.0)"
    assert message.endswith(expected)
    for init in (reordered, other_default, int_for_float, missing, catch_all):
        _refused(init)
    # A table with no __init__ of its own (the base's takes anything), and an __init__
    # without a table (it would take parameters that fit never checks).
    assert _refused(None).endswith("got (*args, **kwargs)")
    assert _refused(positional, table=None).endswith(
        "expected (), got (n_estimators=10, lifetime=1.0)"
    )


def test_a_class_whose_signature_is_its_table_is_made() -> None:
    def init(self: Any, n_estimators: int = 10, *, lifetime: float = 1.0) -> None:
        store_parameters(self, locals())

    cls = type("Agreeing", (EstimatorBase,), {"_parameters": TABLE, "__init__": init})
    estimator = cls(3, lifetime=0.5)
    assert estimator.get_params() == {"n_estimators": 3, "lifetime": 0.5}
    # A subclass inherits both and is made as well.
    assert type("Inheriting", (cls,), {})(4).n_estimators == 4
