"""The ``Examples`` sections of the public docstrings run and give what they show: every module
of the package that has one (found by walking the package, so a new module cannot be missed)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import mondrian_learn


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(mondrian_learn.__path__, "mondrian_learn."):
        if ".__main__" in info.name or "._demo" in info.name:
            continue
        module = importlib.import_module(info.name)
        if doctest.DocTestFinder().find(module) and any(
            t.examples for t in doctest.DocTestFinder().find(module)
        ):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_the_walk_finds_the_estimators_modules() -> None:
    expected = {"forest._regressor", "forest._classifier", "density", "river", "kernel._grid_cv"}
    assert {f"mondrian_learn.{m}" for m in expected} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_examples(module: str) -> None:
    mod = importlib.import_module(module)
    failures, attempted = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
