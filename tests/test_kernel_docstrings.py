"""The ``Examples`` sections of the Mondrian kernel modules run and give what they show."""

from __future__ import annotations

import doctest

import pytest

import mondrian_learn.baselines
import mondrian_learn.kernel
import mondrian_learn.kernel_cv


@pytest.mark.parametrize(
    "module", [mondrian_learn.kernel, mondrian_learn.kernel_cv, mondrian_learn.baselines]
)
def test_examples(module: object) -> None:
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
