"""Progress on long Dask runs (issue 18, item 4): Dask's own progress bar follows our lazy
predictions, and ``verbose`` prints our lines — one per labelled block set and per
distributed product for the partition kernels. In-process clusters: the progress mechanics do not
depend on where the tasks run (the other Dask tests use worker processes)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from dask_fixtures import sine_data  # noqa: E402

from mondrian_learn import MondrianForestRegressor  # noqa: E402
from mondrian_learn.dask import (  # noqa: E402
    DaskMondrianForest,
    PartitionGPRegressor,
    array_chunks,
    fit_chunks,
)
from mondrian_learn.partition import MondrianPartitions  # noqa: E402


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    return sine_data(np.random.default_rng(3), 800)


def test_dasks_progress_bar_follows_a_lazy_prediction(data, capsys) -> None:  # type: ignore[no-untyped-def]
    """predict on a Dask array of 4 blocks is a graph of at least a task per block that
    distributed's progress bar follows to 100 %; the values are those of the forest one
    process streams from the same chunks."""
    X, y = data
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1) as client:
        forest = DaskMondrianForest(MondrianForestRegressor(n_estimators=4, random_state=0))
        forest.fit(da.from_array(X, chunks=(200, 3)), da.from_array(y, chunks=200))
        lazy = forest.predict(da.from_array(X, chunks=(200, 3)))
        assert len(lazy.__dask_graph__()) >= 4
        future = client.compute(lazy)
        distributed.progress(future, notebook=False, multi=False, interval="10ms")
        mean = future.result()
    out = capsys.readouterr().out
    assert re.search(r"\[#+\s*\] \| 100% Completed", out), out
    streamed = fit_chunks(
        MondrianForestRegressor(n_estimators=4, random_state=0), array_chunks(X, y, 200)
    )
    np.testing.assert_array_equal(mean, streamed.predict(X))


def test_verbose_prints_the_labelling_and_every_product(data, capsys) -> None:  # type: ignore[no-untyped-def]
    """The partition GP on Dask with ``verbose=1``: a line for the labelling of the 4 row
    blocks and one per distributed product, numbered without gaps; silent at verbose=0."""
    X, y = data
    params: dict[str, Any] = dict(
        n_partitions=10,
        subsample=None,
        noise_variance=0.01,
        signal_variance=1.0,
        random_state=0,
    )
    rows = da.from_array(X, chunks=(200, -1))
    with dask.config.set(scheduler="threads"):
        PartitionGPRegressor(MondrianPartitions(3.0), verbose=0, **params).fit(rows, y)
        assert capsys.readouterr().err == ""
        PartitionGPRegressor(MondrianPartitions(3.0), verbose=1, **params).fit(rows, y)
    err = capsys.readouterr().err
    assert re.search(r"labelled 800 rows in 4 blocks in \d+\.\d\d s", err), err
    numbers = [int(n) for n in re.findall(r"product (\d+) \(", err)]
    assert numbers and numbers == list(range(1, len(numbers) + 1)), err
