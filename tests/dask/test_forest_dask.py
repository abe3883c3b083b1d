"""Mondrian forests on Dask (mondrian_learn.dask): a fit on a LocalCluster of 2 worker processes
is exactly the forest one process streams from the same chunks, and that is the forest of
fit + partial_fit on them; predictions on Dask collections equal NumPy ones; a killed worker
stops the fit with an error; the cluster shuts down cleanly."""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

from dask_fixtures import process_cluster, sine_data  # noqa: E402

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor  # noqa: E402
from mondrian_learn.dask import (  # noqa: E402
    DaskMondrianForest,
    array_chunks,
    fit_chunks,
    parquet_chunks,
    tree_ranges,
)
from mondrian_learn.dask._parts import ForestPart  # noqa: E402

CHUNK = 250


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X, y = sine_data(rng, 1000)
    labels = np.where(X[:, 0] + 0.2 * rng.normal(size=len(X)) > X[:, 1], "up", "down")
    return X, y, labels


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with process_cluster() as client:
        yield client


def stepwise(estimator: Any, X: np.ndarray, y: np.ndarray, **first: Any) -> Any:
    """fit on the first chunk, partial_fit on each later one (the single-machine online fit)."""
    model = clone_of(estimator)
    model.partial_fit(X[:CHUNK], y[:CHUNK], **first) if first else model.fit(X[:CHUNK], y[:CHUNK])
    for a in range(CHUNK, len(X), CHUNK):
        model.partial_fit(X[a : a + CHUNK], y[a : a + CHUNK])
    return model


def clone_of(estimator: Any) -> Any:
    from sklearn.base import clone

    return clone(estimator)


def assert_same_trees(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def remote_trees(client: Any, forest: DaskMondrianForest) -> list[dict[str, np.ndarray]]:
    """Every tree's node arrays, fetched from the parts on the workers, in tree order."""

    def arrays(part: Any) -> list[dict[str, np.ndarray]]:
        return [part.estimator.tree_arrays(m) for m in range(part.stop - part.first)]

    per_part = client.gather([client.submit(arrays, part) for part in forest.parts_])
    return [tree for trees in per_part for tree in trees]


def test_import_mondrian_learn_imports_nothing_of_dask() -> None:
    code = (
        "import sys, mondrian_learn; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_part_names_the_users_estimator_and_pickles(data) -> None:  # type: ignore[no-untyped-def]
    """scikit-learn's checks inside a part name the estimator the user gave (not an
    internal class), and a part survives pickling (Dask moves and spills parts so)."""
    X, y, _ = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    part = ForestPart(MondrianForestRegressor(n_estimators=2, random_state=0), 0, 2, 0)
    part.update(frame[:CHUNK], y[:CHUNK])
    with pytest.warns(UserWarning, match="but MondrianForestRegressor was fitted with feature"):
        sums = part.fold(X[:5], np.zeros((5, 3)))
    with pytest.raises(ValueError, match="MondrianForestRegressor is expecting 3 features"):
        part.fold(X[:5, :2], np.zeros((5, 3)))
    again = pickle.loads(pickle.dumps(part))
    with pytest.warns(UserWarning, match="MondrianForestRegressor"):
        np.testing.assert_array_equal(again.fold(X[:5], np.zeros((5, 3))), sums)


def test_a_parts_size_counts_its_points_only_when_they_are_in_memory(data) -> None:  # type: ignore[no-untyped-def]
    """Dask places tasks by the parts' sizes: a part whose points are on disk holds
    8 · n_rows · n_features bytes fewer."""
    X, y, _ = data
    sizes = {}
    for store in ("memory", "disk"):
        est = MondrianForestRegressor(n_estimators=2, random_state=0, point_store=store)
        part = ForestPart(est, 0, 2, 0).update(X, y)
        sizes[store] = sys.getsizeof(part)
    assert sizes["memory"] - sizes["disk"] == 8 * X.size


def test_tree_ranges_cover_the_forest_with_the_scored_trees_in_part_0() -> None:
    assert tree_ranges(10, 2) == [(0, 5), (5, 10)]
    assert tree_ranges(10, 4) == [(0, 4), (4, 6), (6, 8), (8, 10)]
    assert tree_ranges(3, 5) == [(0, 3)]
    assert tree_ranges(7, 3) == [(0, 4), (4, 6), (6, 7)]


def test_streamed_fit_has_the_trees_of_fit_then_partial_fit(data) -> None:  # type: ignore[no-untyped-def]
    """One machine: the chunks' stream is fit + partial_fit, tree for tree; with the heuristic
    prior (chosen from all targets either way) the predictions are the same bit for bit."""
    X, y, _ = data
    for hyperparameters in ("evidence", "heuristic"):
        est = MondrianForestRegressor(
            n_estimators=5, random_state=3, hyperparameters=hyperparameters
        )
        streamed = fit_chunks(est, array_chunks(X, y, CHUNK))
        online = stepwise(est, X, y)
        for m in range(5):
            assert_same_trees(streamed.tree_arrays(m), online.tree_arrays(m))
    mean, std = streamed.predict(X, return_std=True)
    reference_mean, reference_std = online.predict(X, return_std=True)
    np.testing.assert_array_equal(mean, reference_mean)
    np.testing.assert_array_equal(std, reference_std)
    assert type(streamed) is MondrianForestRegressor and streamed.get_params() == est.get_params()


def test_memmap_and_parquet_row_groups_stream_the_same_forest(data, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    est = MondrianForestRegressor(n_estimators=3, random_state=1)
    in_memory = fit_chunks(est, array_chunks(X, y, CHUNK))
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    from_disk = fit_chunks(est, array_chunks(mapped, y, CHUNK))
    table = pa.table({**{f"x{j}": X[:, j] for j in range(3)}, "target": y})
    pq.write_table(table, tmp_path / "data.parquet", row_group_size=CHUNK)
    from_parquet = fit_chunks(est, parquet_chunks(tmp_path / "data.parquet", "target"))
    expected = in_memory.predict(X, return_std=True)
    for model in (from_disk, from_parquet):
        for got, want in zip(model.predict(X, return_std=True), expected):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"target": "y"}, "target='y' names columns not in the file: ['y']"),
        (
            {"target": "t", "features": ["a", "missing", "b", "gone"]},
            "features=['a', 'missing', 'b', 'gone'] names columns not in the file: "
            "['missing', 'gone']",
        ),
    ],
)
def test_parquet_columns_not_in_the_file_are_refused_by_argument(
    arguments: dict[str, Any], message: str, tmp_path: Path
) -> None:
    # Both arguments are checked against the file's schema when the chunks are asked for
    # (an unknown feature is not left to pyarrow's KeyError at the first row group).
    path = tmp_path / "tiny.parquet"
    pq.write_table(pa.table({"a": [1.0, 2.0], "b": [3.0, 4.0], "t": [5.0, 6.0]}), path)
    with pytest.raises(
        ValueError, match=re.escape(message) + r" \(its columns: \['a', 'b', 't'\]\)"
    ):
        parquet_chunks(path, **arguments)
    # What the file does hold is read in the order asked for.
    ((X, y),) = parquet_chunks(path, "t", features=["b", "a"])
    np.testing.assert_array_equal(X, [[3.0, 1.0], [4.0, 2.0]])
    np.testing.assert_array_equal(y, [5.0, 6.0])


def _keys_in_memory(dask_scheduler: Any) -> list[str]:
    return [str(key) for key, task in dask_scheduler.tasks.items() if task.state == "memory"]


def test_distributed_regressor_is_the_streamed_forest(client, data) -> None:  # type: ignore[no-untyped-def]
    """Trees [0, 4) on one worker, [4, 6) on the other, every chunk through both, the
    workers' training points on disk (``point_store="disk"``): the same trees, prior, means,
    standard deviations and leaves as one process streaming the chunks with its points in
    memory; predictions are lazy Dask arrays, and NumPy inputs give the same NumPy outputs.
    After the fit the cluster holds the parts and nothing else: no chunk stays in memory."""
    X, y, _ = data
    est = MondrianForestRegressor(n_estimators=6, random_state=3)
    X_dask, y_dask = da.from_array(X, chunks=(CHUNK, 3)), da.from_array(y, chunks=CHUNK)
    forest = DaskMondrianForest(clone_of(est).set_params(point_store="disk")).fit(X_dask, y_dask)
    # Released futures reach the scheduler a moment later: wait up to 10 s for the chunks.
    deadline = time.monotonic() + 10
    while True:
        held = client.run_on_scheduler(_keys_in_memory)
        chunks = [key for key in held if not key.startswith(("mondrian-", "('mondrian-"))]
        if not chunks or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not chunks, held
    stores = client.gather([client.submit(lambda p: p.estimator.model_.points_directory, part)
                            for part in forest.parts_])  # fmt: skip
    assert all(store is not None for store in stores)
    local = fit_chunks(est, array_chunks(X, y, CHUNK))
    assert forest.tree_ranges_ == [(0, 4), (4, 6)]
    holders = client.who_has(forest.parts_).values()
    assert len({worker for workers in holders for worker in workers}) == 2  # a part per worker
    for m, arrays in enumerate(remote_trees(client, forest)):
        assert_same_trees(arrays, local.tree_arrays(m))
    assert forest.prior_ == local.prior_
    mean, std = forest.predict(X_dask, return_std=True)
    assert isinstance(mean, da.Array) and isinstance(std, da.Array)
    reference_mean, reference_std = local.predict(X, return_std=True)
    np.testing.assert_array_equal(mean.compute(), reference_mean)
    np.testing.assert_array_equal(std.compute(), reference_std)
    np.testing.assert_array_equal(forest.predict(X[:7]), reference_mean[:7])
    leaves = forest.apply(X_dask)
    assert isinstance(leaves, da.Array)
    np.testing.assert_array_equal(leaves.compute(), local.apply(X))
    assert forest.n_rows_ == len(X) and forest.n_features_in_ == 3


class _ChunksInMemory(distributed.diagnostics.plugin.SchedulerPlugin):  # type: ignore[misc]
    """Counts the keys in memory on the cluster that are not the forest's (the chunks' data
    and the arrays they come from), and the most at any moment."""

    name = "chunks-in-memory"

    def __init__(self) -> None:
        self.held: set[Any] = set()
        self.most = 0

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if str(key).startswith(("mondrian-", "('mondrian-", "done-")):
            return
        if finish == "memory":
            self.held.add(key)
        elif start == "memory":
            self.held.discard(key)
        self.most = max(self.most, len(self.held))


def _most_chunk_keys(dask_scheduler: Any) -> int:
    return int(dask_scheduler.plugins[_ChunksInMemory.name].most)


def test_a_fit_holds_only_the_chunks_in_flight(client, data) -> None:  # type: ignore[no-untyped-def]
    """10 chunks, at most 1 waiting: the cluster holds at most the data of 2 chunks at a time
    (an X and a y key each) besides the array they come from — not every chunk until the fit
    ends (which held the data once more per worker: 2·10⁷ rows needed 4.3 GB workers)."""
    X, y, _ = data
    est = MondrianForestRegressor(n_estimators=2, random_state=0)
    X_dask, y_dask = da.from_array(X, chunks=(100, 3)), da.from_array(y, chunks=100)
    client.register_plugin(_ChunksInMemory())
    DaskMondrianForest(est, max_pending_chunks=1).fit(X_dask, y_dask)
    # 2 chunks × (X, y) + the 2 arrays from_array holds whole; the fit held 22 before.
    assert client.run_on_scheduler(_most_chunk_keys) <= 6


def test_distributed_classifier_on_a_dataframe_is_fit_then_partial_fit(client, data) -> None:  # type: ignore[no-untyped-def]
    """Dask dataframe partitions, classes found by a pass over y, three parts on two workers:
    the probabilities of fit + partial_fit on the same partitions, bit for bit."""
    X, _, labels = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    X_dask = dd.from_pandas(frame, npartitions=4, sort=False)
    y_dask = dd.from_pandas(pd.Series(labels, name="label"), npartitions=4, sort=False)
    assert list(X_dask.map_partitions(len).compute()) == [CHUNK] * 4
    est = MondrianForestClassifier(n_estimators=7, random_state=5)
    forest = DaskMondrianForest(est, n_parts=3).fit(X_dask, y_dask)
    assert forest.tree_ranges_ == [(0, 4), (4, 6), (6, 7)]
    online = stepwise(est, frame, labels, classes=np.unique(labels))
    np.testing.assert_array_equal(forest.classes_, online.classes_)
    proba = forest.predict_proba(X_dask).compute()
    np.testing.assert_array_equal(proba, online.predict_proba(frame))
    np.testing.assert_array_equal(forest.predict(X_dask).compute(), online.predict(frame))
    np.testing.assert_array_equal(list(forest.feature_names_in_), ["a", "b", "c"])


def test_verbose_reports_every_chunk(client, data, capsys) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    est = MondrianForestRegressor(n_estimators=5, random_state=0, verbose=1)
    DaskMondrianForest(est).fit(da.from_array(X, chunks=(CHUNK, 3)), da.from_array(y, chunks=CHUNK))
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("chunks")]
    assert lines[-1].endswith("4/4") or "4/4" in err
    assert "1000 rows, 4 chunks, 2 parts" in out


def test_bad_input_is_refused_by_name(client, data) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    X_dask, y_dask = da.from_array(X, chunks=(CHUNK, 3)), da.from_array(y, chunks=CHUNK)
    with pytest.raises(ValueError, match="X has 1000 rows but y has 999"):
        DaskMondrianForest(MondrianForestRegressor()).fit(X_dask, y_dask[:-1])
    with pytest.raises(ValueError, match="within_leaf"):
        DaskMondrianForest(MondrianForestRegressor(noise_variance="within_leaf")).fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="MondrianForestRegressor or MondrianForestClassifier"):
        DaskMondrianForest(object()).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="max_pending_chunks"):
        DaskMondrianForest(MondrianForestRegressor(), max_pending_chunks=0).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="classes="):
        fit_chunks(MondrianForestClassifier(), array_chunks(X, y > 1, CHUNK))
    broken = X.copy()
    broken[600] = np.nan  # in the third chunk: the error of partial_fit reaches the client
    with pytest.raises(ValueError, match="NaN"):
        DaskMondrianForest(MondrianForestRegressor(n_estimators=2)).fit(
            da.from_array(broken, chunks=(CHUNK, 3)), y_dask
        )


def _exit_on_third_chunk(block: np.ndarray, flag: str, block_info: Any = None) -> np.ndarray:
    """Kill the worker process computing the third chunk, once."""
    if block_info[None]["chunk-location"][0] == 2 and not os.path.exists(flag):
        Path(flag).touch()
        os._exit(1)
    return block


def test_a_worker_killed_mid_fit_gives_an_error_or_the_whole_forest(
    client, data, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The killed worker held some trees. Either the fit raises, naming them, or Dask recomputed
    the lost part from its lineage (a retried task) before the loss was seen, and the forest is
    the whole one — never a smaller forest. Afterwards the nanny's new worker fits again."""
    X, y, _ = data
    flag = str(tmp_path / "killed")
    X_dask = da.from_array(X, chunks=(CHUNK, 3)).map_blocks(_exit_on_third_chunk, flag, dtype=float)
    y_dask = da.from_array(y, chunks=CHUNK)
    # Trees [0, 4) and [4, 6): whichever worker computes the third chunk holds a part.
    est = MondrianForestRegressor(n_estimators=6, random_state=0, hyperparameters="heuristic")
    local = fit_chunks(est, array_chunks(X, y, CHUNK))
    try:
        forest = DaskMondrianForest(est).fit(X_dask, y_dask)
    except RuntimeError as error:
        assert re.search(r"holding trees \[\d, \d\) left the cluster", str(error))
    else:
        assert forest.tree_ranges_ == [(0, 4), (4, 6)] and forest.n_rows_ == len(X)
        np.testing.assert_array_equal(forest.predict(X), local.predict(X))
    assert os.path.exists(flag)
    client.wait_for_workers(2, timeout=60)
    forest = DaskMondrianForest(est).fit(X_dask, y_dask)
    np.testing.assert_array_equal(forest.predict(X), local.predict(X))
