"""Progress reports: without tqdm a fit prints a bounded number of plain lines (a fifth of
each report at a time, nested fits quiet), and a search that stops early ends its report
at the steps it took."""

from __future__ import annotations

import builtins
import re
from typing import Any

import numpy as np
import pytest

from mondrian_learn import MondrianKernelRidgeCV
from mondrian_learn._progress import PLAIN_LINES, progress_callback
from mondrian_learn.kernel import MondrianGridRidgeCV


@pytest.fixture
def no_tqdm(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def refuse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    return X, np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=200)


def lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_plain_lines_are_a_fifth_of_the_report_at_a_time(no_tqdm, capsys) -> None:  # type: ignore[no-untyped-def]
    update, close = progress_callback(1000, "steps", 1)
    for done in range(1, 1001):
        update(done)
    close()
    assert lines(capsys) == [f"steps: {k * 200}/1000" for k in range(1, PLAIN_LINES + 1)]
    # Stopped early at 123 of 1000: the report ends at 123/123.
    update, close = progress_callback(1000, "steps", 1)
    for done in range(1, 124):
        update(done)
    close(123)
    assert lines(capsys) == ["steps: 123/123"]
    # A report opened while another is open (a nested fit) stays quiet.
    update, close = progress_callback(10, "outer", 1)
    inner, inner_close = progress_callback(10, "inner", 1)
    inner(10)
    inner_close()
    update(10)
    close()
    assert lines(capsys) == ["outer: 10/10"]


def test_a_path_fit_prints_at_most_ten_lines(no_tqdm, data, capsys) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    MondrianKernelRidgeCV(20, max_lifetime=4.0, lifetimes=5, verbose=1).fit(X, y)
    out = lines(capsys)
    trees = [line for line in out if line.startswith("trees: ")]
    cuts = [line for line in out if line.startswith("cuts: ")]
    assert len(out) <= 2 * PLAIN_LINES and trees and cuts and len(trees) + len(cuts) == len(out)
    assert trees[-1] == "trees: 20/20"
    done, total = map(int, re.fullmatch(r"cuts: (\d+)/(\d+)", cuts[-1]).groups())  # type: ignore[union-attr]
    # Three paths (one per α) on one report, ending complete.
    assert done == total and total % 3 == 0
    # With folds, one report of the folds; their trees and paths stay quiet.
    MondrianKernelRidgeCV(8, max_lifetime=4.0, lifetimes=5, cv=4, verbose=1).fit(X, y)
    assert lines(capsys) == [f"folds: {k}/4" for k in range(1, 5)]


def test_the_grid_search_report_ends_at_the_steps_taken(no_tqdm, data, capsys) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianGridRidgeCV(8, max_iter=300, n_iter_no_change=3, verbose=1, random_state=0)
    model.fit(X, y)
    out = lines(capsys)
    assert model.n_iter_ < 300 and 1 <= len(out) <= PLAIN_LINES
    assert out[-1] == f"lifetime search: {model.n_iter_}/{model.n_iter_}"


def test_tqdm_bar_of_an_early_stop_ends_complete(data, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("tqdm")
    X, y = data
    model = MondrianGridRidgeCV(8, max_iter=300, n_iter_no_change=3, verbose=1, random_state=0)
    model.fit(X, y)
    err = capsys.readouterr().err
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert f"{model.n_iter_}/{model.n_iter_}" in last and "100%" in last, last
