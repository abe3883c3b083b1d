"""The ``Examples`` sections of the Mondrian kernel modules run and give what they show."""

from __future__ import annotations

import doctest

import pytest

import mondrian_learn.kernel._features
import mondrian_learn.kernel._path_cv
import mondrian_learn.kernel._ridge
import mondrian_learn.kernel.baselines


@pytest.mark.parametrize(
    "module",
    [
        mondrian_learn.kernel._features,
        mondrian_learn.kernel._ridge,
        mondrian_learn.kernel._path_cv,
        mondrian_learn.kernel.baselines,
    ],
)
def test_examples(module: object) -> None:
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
