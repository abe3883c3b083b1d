"""The ``Examples`` sections of the public docstrings run and give what they show."""

from __future__ import annotations

import doctest

import pytest

import mondrian_learn._test_functions
import mondrian_learn.bayesopt
import mondrian_learn.calibration
import mondrian_learn.forest._regressor


@pytest.mark.parametrize(
    "module",
    [
        mondrian_learn.forest._regressor,
        mondrian_learn.bayesopt,
        mondrian_learn._test_functions,
        mondrian_learn.calibration,
    ],
)
def test_examples(module: object) -> None:
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
