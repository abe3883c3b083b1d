"""The ``Examples`` sections of the public docstrings run and give what they show."""

from __future__ import annotations

import doctest

import pytest

import mondrian_learn.bayesopt
import mondrian_learn.calibration
import mondrian_learn.forest


@pytest.mark.parametrize(
    "module", [mondrian_learn.forest, mondrian_learn.bayesopt, mondrian_learn.calibration]
)
def test_examples(module: object) -> None:
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
