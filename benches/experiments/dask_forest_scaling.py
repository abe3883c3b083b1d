"""Issue 18 (1): a 10-tree Mondrian forest on N × 10 rows stored as parquet, fitted four ways,
each in a process of its own so that peak memories are its own:

- ``dask``: ``DaskMondrianForest`` on a ``LocalCluster`` of 2 worker processes (one thread
  each, ``--memory-limit`` each) from ``dask.dataframe.read_parquet`` (one partition per row
  group): wall time, peak RSS of each worker process (sampled every 0.2 s), bytes moved
  between workers (the workers' ``transfer_outgoing_bytes_total``);
- ``stream-parquet``: ``fit_chunks`` over ``parquet_chunks`` in one process (peak RSS);
- ``stream-memmap``: ``fit_chunks`` over ``array_chunks`` of a ``.npy`` memory map;
- ``in-memory``: ``MondrianForestRegressor.fit`` on the whole table read into memory
  (``n_jobs=2``).

``--point-store disk`` keeps every forest's training points in a file on disk
(``point_store="disk"``) instead of memory.

The data, y = sin(6 x₀) + x₁ x₂ + N(0, 0.3²) on uniform x, is generated once under
``--out`` (outside the repository by default). Run:

    python benches/experiments/dask_forest_scaling.py --rows 20000000

"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info  # noqa: E402

FEATURES = [f"x{j}" for j in range(10)]
GROUP_ROWS = 1_000_000


def generate(out: Path, rows: int, group_rows: int = GROUP_ROWS) -> tuple[Path, Path, Path]:
    """The parquet file (row groups of ``group_rows``) and the same data as .npy files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if group_rows == GROUP_ROWS else f"_groups{group_rows}"
    parquet = out / f"data_{rows}{suffix}.parquet"
    x_npy, y_npy = out / f"X_{rows}{suffix}.npy", out / f"y_{rows}{suffix}.npy"
    if parquet.exists() and x_npy.exists() and y_npy.exists():
        return parquet, x_npy, y_npy
    rng = np.random.default_rng(0)
    X = np.lib.format.open_memmap(x_npy, mode="w+", shape=(rows, 10))
    y = np.lib.format.open_memmap(y_npy, mode="w+", shape=(rows,))
    schema = pa.schema([(name, pa.float64()) for name in [*FEATURES, "y"]])
    with pq.ParquetWriter(parquet, schema) as writer:
        for a in range(0, rows, group_rows):
            n = min(group_rows, rows - a)
            x = rng.uniform(size=(n, 10))
            target = np.sin(6 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)
            X[a : a + n], y[a : a + n] = x, target
            columns = {name: x[:, j] for j, name in enumerate(FEATURES)}
            writer.write_table(pa.table({**columns, "y": target}, schema=schema))
    X.flush()
    y.flush()
    return parquet, x_npy, y_npy


def estimator(args: argparse.Namespace, n_jobs: int | None = None) -> Any:
    from mondrian_learn import MondrianForestRegressor

    return MondrianForestRegressor(
        n_estimators=10,
        min_samples_split=args.min_samples_split,
        random_state=0,
        n_jobs=n_jobs,
        point_store=args.point_store,
    )


def probe(parquet: Path) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(parquet).read_row_group(0)
    X = np.column_stack([table.column(c).to_numpy() for c in FEATURES])[:20_000]
    return X, table.column("y").to_numpy()[:20_000]


def score(model: Any, parquet: Path) -> dict[str, float]:
    """Predictions on 20,000 training rows (a fingerprint the runs must share)."""
    X, y = probe(parquet)
    mean = model.predict(X)
    return {"probe_rmse": float(np.sqrt(np.mean((mean - y) ** 2))), "probe_sum": float(mean.sum())}


def run_dask(args: argparse.Namespace, parquet: Path) -> dict[str, Any]:
    import dask
    import dask.dataframe as dd
    import psutil
    from distributed import Client, LocalCluster

    from mondrian_learn.dask import DaskMondrianForest

    # Spilling a part to disk pickles it whole (a second copy of its points for a moment):
    # at a limit near twice the part, Dask's spill is what pushes a worker over it. Without
    # spilling, a worker paused at 80 % of its limit stays paused (a 4 GiB run stalled so):
    spilling = {"target": False, "spill": False, "pause": False} if not args.spill else {}
    with dask.config.set({f"distributed.worker.memory.{k}": v for k, v in spilling.items()}):
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=":0",
        )
    client = Client(cluster)
    try:
        pids = client.run(os.getpid)
        peaks = dict.fromkeys(pids, 0)
        stop = threading.Event()

        def sample() -> None:
            processes = {w: psutil.Process(pid) for w, pid in pids.items()}
            while not stop.is_set():
                for w, process in processes.items():
                    try:
                        peaks[w] = max(peaks[w], process.memory_info().rss)
                    except psutil.Error:
                        pass
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        frame = dd.read_parquet(parquet, split_row_groups=True)
        X, y = frame[FEATURES], frame["y"]
        start = time.perf_counter()
        forest = DaskMondrianForest(estimator(args)).fit(X, y)
        wall = time.perf_counter() - start
        stop.set()
        sampler.join()
        moved = client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
        X_probe, y_probe = probe(parquet)
        mean = forest.predict(X_probe)
        result = {
            "wall_s": wall,
            "partitions": frame.npartitions,
            "peak_rss_per_worker_mb": sorted(p / 2**20 for p in peaks.values()),
            "bytes_moved_between_workers_mb": sum(moved.values()) / 2**20,
            "memory_limit": args.memory_limit,
            "spill": args.spill,
            "point_store": args.point_store,
            "probe_rmse": float(np.sqrt(np.mean((mean - y_probe) ** 2))),
            "probe_sum": float(mean.sum()),
        }
        print(json.dumps(result), flush=True)  # kept even if the shutdown below fails
        del forest  # the parts' futures: the workers free their trees before shutting down
        start = time.perf_counter()
        client.close()
        cluster.close(timeout=300)
        result["shutdown_s"] = time.perf_counter() - start
        return result
    finally:
        client.close()
        cluster.close(timeout=300)


def run_local(args: argparse.Namespace, how: str, parquet: Path, x_npy: Path, y_npy: Path) -> Any:
    from mondrian_learn.dask import array_chunks, fit_chunks, parquet_chunks

    start = time.perf_counter()
    if how == "stream-parquet":
        model = fit_chunks(estimator(args), parquet_chunks(parquet, "y", FEATURES))
    elif how == "stream-memmap":
        X, y = np.load(x_npy, mmap_mode="r"), np.load(y_npy, mmap_mode="r")
        model = fit_chunks(estimator(args), array_chunks(X, y, args.group_rows))
    else:  # in-memory: the table read whole, then one batch fit
        import pyarrow.parquet as pq

        table = pq.read_table(parquet)
        X = np.column_stack([table.column(c).to_numpy() for c in FEATURES])
        y = table.column("y").to_numpy()
        del table
        model = estimator(args, n_jobs=2).fit(X, y)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"wall_s": wall, "peak_rss_mb": peak, "point_store": args.point_store}
    return {**result, **score(model, parquet)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--min-samples-split", type=int, default=1000)
    parser.add_argument("--memory-limit", default="4GiB", help="per worker")
    parser.add_argument(
        "--group-rows",
        type=int,
        default=GROUP_ROWS,
        help="rows per parquet row group: the chunk streamed (a Dask partition)",
    )
    parser.add_argument(
        "--spill",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="let Dask spill the workers' data to disk (its default; off here: see run_dask)",
    )
    parser.add_argument(
        "--point-store",
        default="memory",
        help="the forests' point_store: memory, disk (the system's temporary directory) or a "
        "directory",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/mondrian_dask_bench"))
    parser.add_argument("--runs", default="dask,stream-parquet,stream-memmap,in-memory")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    parquet, x_npy, y_npy = generate(args.out, args.rows, args.group_rows)
    if args.child:
        if args.child == "dask":
            result = run_dask(args, parquet)
        else:
            result = run_local(args, args.child, parquet, x_npy, y_npy)
        print(json.dumps(result))
        return
    print(machine_info())
    data_mb = args.rows * 11 * 8 / 2**20
    print(f"data: {args.rows} rows x 10 features + y, float64: {data_mb:.0f} MiB ({parquet})")
    results = {}
    for how in args.runs.split(","):
        command = [sys.executable, __file__, *sys.argv[1:], "--child", how]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        (args.out / f"{how}_{args.rows}.stderr").write_text(done.stderr)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            print(f"{how}: failed\n{done.stderr[-3000:]}")
            continue
        if done.returncode:
            print(f"{how}: measured, then failed (see {how}_{args.rows}.stderr)")
        results[how] = json.loads(lines[-1])
        print(f"{how}: {json.dumps(results[how])}", flush=True)
    if "in-memory" in results:
        base = results["in-memory"]
        for how, result in results.items():
            peak = max(result.get("peak_rss_per_worker_mb", [result.get("peak_rss_mb", 0)]))
            print(
                f"{how}: wall / in-memory {result['wall_s'] / base['wall_s']:.2f}, "
                f"peak RSS (per process) / in-memory {peak / base['peak_rss_mb']:.2f}, "
                f"peak RSS / data {peak / data_mb:.2f}"
            )
    print(f"loadavg at end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
