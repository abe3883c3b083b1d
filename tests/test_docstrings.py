"""Every public parameter and return value is documented (numpydoc's validation of the
public estimators, their public methods and the public functions)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from numpydoc import validate as numpydoc_validate

import mondrian_learn as ml
from mondrian_learn import bayesopt, calibration, datasets, partition, plotting
from mondrian_learn import dask as on_dask
from mondrian_learn.kernel import baselines

#: Parameters and returns: present (PR01, RT01), known (PR02), described (PR07, RT03).
CHECKS = {"PR01", "PR02", "PR07", "RT01", "RT03"}


def public_objects() -> list[str]:
    names, seen = [], set()
    for module in (ml, partition, baselines, calibration, datasets, bayesopt, plotting, on_dask):
        exported = getattr(module, "__all__", None)
        for name in exported or dir(module):
            obj: Any = getattr(module, name, None)
            if name.startswith("_") or id(obj) in seen:
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            # Without __all__, a module's own definitions only (not what it imports).
            if obj.__module__ != module.__name__ and not exported:
                continue
            seen.add(id(obj))
            names.append(f"{obj.__module__}.{obj.__qualname__}")
            if inspect.isclass(obj):
                for member, value in inspect.getmembers(obj, inspect.isfunction):
                    if not member.startswith("_") and value.__module__.startswith("mondrian_learn"):
                        names.append(f"{obj.__module__}.{obj.__qualname__}.{member}")
    return names


@pytest.mark.parametrize("name", public_objects())
def test_parameters_and_returns_are_documented(name: str) -> None:
    errors = [
        f"{code}: {message}"
        for code, message in numpydoc_validate.validate(name)["errors"]
        if code in CHECKS
    ]
    assert not errors, errors
