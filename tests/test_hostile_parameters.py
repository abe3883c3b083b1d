"""Hostile values of every count and real parameter of every public estimator: each is either
refused with a ValueError or MemoryError naming the parameter, or fitted to a model whose
outputs are finite. Never a panic, an abort or a hang: each estimator's cases run in a
subprocess with a deadline, so a crash or a hang fails naming the case.

The parameters are read from each estimator's ``_parameters`` table, so a new parameter is
covered as soon as it is declared.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

import mondrian_learn
from conftest import estimator_zoo, fit_data, output
from mondrian_learn._validation import Integer, Real

HOSTILE: list[Any] = [
    0,
    1,
    2**31,
    2**63,
    np.int64(2**62),
    np.inf,
    -np.inf,
    np.nan,
    1e308,
    -1e308,
    1e-308,
    True,
]

#: Seconds a subprocess may take for its cases in all (well under a second each).
DEADLINE = 150


def estimators() -> dict[str, Any]:
    """Every public estimator, small, and RandomPartitionKernel with each sampler (whose
    parameters are set through it, as ``sampler__name``, under ``sampler_<class>``)."""
    import mondrian_learn as ml
    from mondrian_learn import partition

    zoo = {name: estimator for name, (estimator, _) in estimator_zoo().items()}
    zoo["density"] = ml.MondrianDensityEstimator(n_estimators=3, random_state=0)
    for sampler in (
        partition.MondrianPartitions(lifetime=2.0),
        partition.RandomForestPartitions(),
        partition.FastClusterPartitions(),
    ):
        name = "sampler_" + type(sampler).__name__
        zoo[name] = partition.RandomPartitionKernel(sampler, n_partitions=5, random_state=0)
    exported = {getattr(ml, n) for n in ml.__all__ if isinstance(getattr(ml, n), type)}
    assert exported <= {type(e) for e in zoo.values()}, "an exported estimator is not covered"
    return zoo


def numeric_parameters(estimator: Any, name: str) -> list[str]:
    """The parameters of ``estimator`` declared as counts or reals (of its sampler for the
    kernel-with-sampler cases)."""
    if name.startswith("sampler_"):
        table = type(estimator.sampler)._parameters
        prefix = "sampler__"
    else:
        table, prefix = type(estimator)._parameters, ""
    numeric = (Integer, Real)
    return [
        prefix + p
        for p, param in table.items()
        if any(isinstance(c, numeric) for c in param.constraints)
    ]


def small(estimator: Any, parameter: str) -> Any:
    """``estimator`` with few trees unless the parameter under test is the tree count."""
    params = estimator.get_params(deep=False)
    for count in ("n_estimators", "n_partitions"):
        if count in params and count != parameter and params[count] is not None:
            estimator = clone(estimator).set_params(**{count: min(params[count], 5)})
    return estimator


def run_case(estimator: Any, parameter: str, value: Any) -> str | None:
    """None when ``parameter=value`` is refused by name or fits to finite outputs; else what
    went wrong."""
    X = np.random.default_rng(0).uniform(size=(30, 3))
    model = clone(small(estimator, parameter)).set_params(**{parameter: value})
    try:
        model.fit(X, fit_data(model, X))
        scored = hasattr(model, "score_samples")  # a density: log densities inside the box
        out = model.score_samples(X[:5]) if scored else output(model, X[:5])
    except (ValueError, MemoryError) as e:
        short = parameter.removeprefix("sampler__")
        return None if short in str(e) else f"{type(e).__name__} not naming it: {e}"
    except BaseException as e:  # noqa: BLE001 (a panic is a BaseException)
        return f"{type(e).__module__}.{type(e).__name__}: {e}"
    out = np.asarray(out, dtype=np.float64)
    return None if np.isfinite(out).all() else "non-finite outputs"


def cases(names: list[str]) -> list[tuple[str, str, Any]]:
    """Every (estimator, parameter, value) of the estimators ``names``, in a fixed order."""
    zoo = estimators()
    return [
        (name, parameter, value)
        for name in names
        for parameter in numeric_parameters(zoo[name], name)
        for value in HOSTILE
    ]


def main(names: list[str], skip: int) -> None:
    """Runs the cases of ``names`` after the first ``skip``, one JSON line each, announcing
    each case before it runs (so a crash or a hang names it)."""
    import warnings

    warnings.simplefilter("ignore")
    zoo = estimators()
    for index, (name, parameter, value) in enumerate(cases(names)):
        if index < skip:
            continue
        case = f"{parameter}={value!r}"
        print(json.dumps({"start": index, "estimator": name, "case": case}), flush=True)
        problem = run_case(zoo[name], parameter, value)
        print(json.dumps({"estimator": name, "case": case, "problem": problem}), flush=True)


def run_all(names: list[str]) -> list[tuple[str, str]]:
    """(estimator, failure) for the cases of ``names``, run in a subprocess; after a crash or
    a hang, the case is a failure and a new subprocess goes on from the next case."""
    here = Path(__file__).parent
    # The package this process imported (installed, or a source tree on the path), not
    # whatever a checkout's python/ holds: a clone's sources have no compiled core.
    package = Path(mondrian_learn.__file__).parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), str(package)]))
    failures, skip = [], 0
    while True:
        code = f"import test_hostile_parameters as t; t.main({names!r}, {skip})"
        try:
            done = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env=env,
            )
            lines, crash = done.stdout, done.stderr[-1500:] if done.returncode else None
        except subprocess.TimeoutExpired as e:
            out = e.stdout or b""
            lines = out.decode() if isinstance(out, bytes) else out
            crash = f"no end within {DEADLINE} s"
        records = [json.loads(line) for line in lines.splitlines() if line.startswith("{")]
        failures += [
            (r["estimator"], f"{r['case']}: {r['problem']}") for r in records if r.get("problem")
        ]
        if crash is None:
            return failures
        started = [r for r in records if "start" in r]
        if not started:
            return [*failures, ("", f"the subprocess failed before its first case: {crash}")]
        last = started[-1]
        failures.append((last["estimator"], f"{last['case']}: crashed or hung ({crash})"))
        skip = last["start"] + 1


#: The estimators with a count or a real parameter (RandomForestPartitions has none).
NAMES = sorted(n for n, e in estimators().items() if numeric_parameters(e, n))


@pytest.fixture(scope="module")
def failures() -> list[tuple[str, str]]:
    # Two subprocesses at a time (the machine's two cores), each importing the package once.
    groups = [NAMES[0::2], NAMES[1::2]]
    with concurrent.futures.ThreadPoolExecutor(len(groups)) as pool:
        return [f for found in pool.map(run_all, groups) for f in found]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_numbers_are_refused_by_name_or_give_finite_outputs(
    name: str, failures: list[tuple[str, str]]
) -> None:
    assert [f for estimator, f in failures if estimator in (name, "")] == []


def test_every_estimator_has_numeric_parameters_under_test() -> None:
    # The introspection finds the tables' counts and reals (an empty list would test nothing).
    zoo = estimators()
    assert "candidate_locations" in numeric_parameters(zoo["forest"], "forest")
    assert "sampler__lifetime" in numeric_parameters(
        zoo["sampler_MondrianPartitions"], "sampler_MondrianPartitions"
    )
    assert len(NAMES) == len(zoo) - 1
