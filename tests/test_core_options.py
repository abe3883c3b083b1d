"""The string options the core converts (solver, preconditioner, noise_variance, posterior,
hyperparameters): each list of names lives once, in the core, and the estimators' parameter
tables read it, so the check stays in Python and a name the table accepts is one the core
knows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from conftest import estimator_zoo, fit_data
from mondrian_learn import _core
from mondrian_learn._validation import Options

#: Names an estimator resolves itself before calling the core, by parameter.
RESOLVED_IN_PYTHON = {"hyperparameters": {"held_out", "heuristic"}}


def core_option_parameters() -> list[tuple[str, Any, str, Options]]:
    """(estimator's name, estimator, parameter, its Options) for every table entry that takes
    one of the core's string options."""
    found = []
    for name, (estimator, _) in estimator_zoo().items():
        for parameter, param in type(estimator)._parameters.items():
            for constraint in param.constraints:
                if parameter in _core.OPTIONS and isinstance(constraint, Options):
                    found.append((name, estimator, parameter, constraint))
    return found


CASES = core_option_parameters()
IDS = [f"{name}-{parameter}" for name, _, parameter, _ in CASES]


def test_every_core_option_reaches_a_table() -> None:
    """Each parameter the core names options for is a parameter of some estimator."""
    assert {parameter for _, _, parameter, _ in CASES} == set(_core.OPTIONS)


@pytest.mark.parametrize(("name", "estimator", "parameter", "options"), CASES, ids=IDS)
def test_the_table_accepts_the_core_names_and_no_others(
    name: str, estimator: Any, parameter: str, options: Options
) -> None:
    """A table's option set is the core's names, plus only the names the estimator resolves
    itself; where the estimator's docstring describes the parameter, it lists every one."""
    core_names = set(_core.OPTIONS[parameter])
    assert options.values == core_names | RESOLVED_IN_PYTHON.get(parameter, set())
    documented = type(estimator).__doc__ or ""
    if f"\n    {parameter} : " in documented:
        assert all(f'"{option}"' in documented for option in options.values)


@pytest.mark.parametrize(("name", "estimator", "parameter", "options"), CASES, ids=IDS)
def test_a_wrong_name_is_refused_in_python_naming_the_parameter(
    name: str, estimator: Any, parameter: str, options: Options
) -> None:
    """An unknown name gets the table's ValueError (the parameter, the allowed names, the
    value), before the core is called."""
    X = np.random.default_rng(0).uniform(size=(20, 2))
    bad = clone(estimator).set_params(**{parameter: "nope"})
    with pytest.raises(ValueError, match=rf"^{parameter} must be .*{options}.*, got 'nope'$"):
        bad.fit(X, fit_data(bad, X))
