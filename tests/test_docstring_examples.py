"""The ``Examples`` sections of the public docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "forest._regressor",
    "forest._lifetime_search",
    "kernel._features",
    "kernel._ridge",
    "kernel._path_cv",
    "kernel._grid",
    "kernel._grid_cv",
    "kernel.baselines",
    "partition._kernel",
    "partition._samplers",
    "partition._gp",
    "partition._kpca",
    "partition._svc",
    "bayesopt",
    "_test_functions",
    "calibration",
    "dask._forest",
]


@pytest.mark.parametrize("module", MODULES)
def test_examples(module: str) -> None:
    mod = importlib.import_module(f"mondrian_learn.{module}")
    failures, attempted = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
