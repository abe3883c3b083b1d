"""Online learning by progressive validation: Mondrian forests against river's forests.

What it measures
----------------
Every model reads each stream once, row by row: it predicts the row, then learns it
(progressive validation, as river's ``evaluate.progressive_val_score``), from the first row.
Models, 10 trees each, seeded, one thread, otherwise each with its own defaults:

* ours through the scikit-learn API, ``MondrianForestRegressor``/``MondrianForestClassifier``
  fed 1-row C-contiguous float64 arrays: ``predict(x, return_std=True)`` (classifier:
  ``predict_proba(x)``), then ``partial_fit(x, y)``. The classifier is given the stream's whole
  class list up front, in its first ``partial_fit(x, y, classes=...)`` (scikit-learn's rule for
  online classifiers; for river's bundled files, the labels found in the whole file); river's
  models learn classes as they come;
* ours through ``mondrian_learn.river`` (``predict_one``/``predict_proba_one``, then
  ``learn_one``), when that module is installed;
* river's ``forest.AMFRegressor``/``AMFClassifier`` (``n_estimators=10``) and
  ``forest.ARFRegressor``/``ARFClassifier`` (``n_models=10``).

The first row is predicted by river's convention for every model alike (our scikit-learn
estimators cannot predict before their first ``partial_fit``; river's AMF returns nothing):
0.0, or uniform probabilities.

Per stream and model: prequential MAE (regression); accuracy and log loss (classification:
probabilities renormalised to sum to 1, clipped at 1e-15; a class the model has not seen has
probability 1e-15); for our regressors the share of targets inside the central 90 % predictive
interval (``predict_interval(x, 0.9)``, ``predict_interval_one(x, 0.9)``: asked before the row
is learnt, timed apart) over the rows after the first 500; the cost of predict + learn per row,
wall (``time.perf_counter``) and CPU (``time.process_time``); and the ratios ours ÷ AMF and
ours ÷ ARF from the same run, with their medians over the streams. With ``--rows`` ≥ 10,000,
the wall cost per row over rows 500–1,500 and 9,000–10,000 shows whether it grows along the
stream. Synthetic streams run ``--seeds`` times (the table shows means over seeds).

Streams: regression — synth.Friedman, synth.Mv, synth.Planes2D and the files river ships,
TrumpApproval, ChickWeights, SP500Stocks, WaterFlow, AirlinePassengers; classification —
synth.Hyperplane, synth.Agrawal, synth.RandomRBF and the files Phishing, Bananas,
ImageSegments, Shuttle. river's other datasets (Bikes, Elec2, ...) download at first use and
are left out. The first ``--rows`` rows of each, in the file's order (shorter files whole).
Every model gets the same features: numbers as float64, string features one-hot over the
values in the rows streamed, datetimes as POSIX seconds. They are not scaled, except for river's
ARF regressor, which runs as river's documentation shows it, ``preprocessing.StandardScaler() |
forest.ARFRegressor(...)`` (the scaler learns online and is timed with it): bare, its leaves'
linear models diverge on large features such as POSIX seconds (``--bare-arf`` to see it).

Other modes
-----------
``--drift``: synth.FriedmanDrift, drift types 'lea' and 'gra' at the generator's default
positions (50,000 / 100,000 / 150,000 rows; 'gra' uses the first two; ``--drift-scale 0.1``
divides them by 10) over the last position plus half the first (``--rows`` to change):
MAE per window of ``--window`` rows, ours against ARF and AMF.
``--chunks``: ours predicting a chunk of ``--chunk-size`` rows, then ``partial_fit`` on it,
against river's predict_one + learn_one per row: cost per row, and errors over the rows after
the first chunk (the same rows for every model).
``--memory``: resident memory growth (psutil, else VmRSS in /proc/self/status: tracemalloc
cannot see the Rust core's allocations) of our regressor fed ``--rows`` (default 10^6) rows of
synth.Friedman in chunks of 10,000, beside river's AMFRegressor fed ``--memory-river-rows``
(default 20,000) rows one at a time — its growth per row is measured on those rows only and
extrapolated.

``--quick`` checks the script in about a minute: 600 rows, 1 seed, 2 streams per task
(the modes: scaled down likewise).

Usage
-----
    python benches/experiments/online_prequential.py --quick
    python benches/experiments/online_prequential.py             # 3,000 rows, 3 seeds
    python benches/experiments/online_prequential.py --rows 10000 --seeds 1
    python benches/experiments/online_prequential.py --drift [--drift-scale 0.1]
    python benches/experiments/online_prequential.py --chunks
    python benches/experiments/online_prequential.py --memory

Requires ``mondrian_learn`` installed (``pip install .`` from the repository root) and
``pip install river``.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import math
import os
import sys
import time
import warnings
from typing import Any

import numpy as np
from _common import experiment_parser, header, markdown_table
from _online_learners import (
    AMF,
    ARF,
    COST_WINDOWS,
    N_TREES,
    SklearnOnline,
    models,
    prequential,
    river_api_classes,
    score,
    summarise,
)
from _online_streams import ALL_STREAMS, QUICK, Stream, load_streams, make_stream
from river import __version__ as river_version
from river import forest
from river.datasets import synth

from mondrian_learn import MondrianForestRegressor

CHECKPOINTS = {10**4, 2 * 10**4, 5 * 10**4, 10**5, 2 * 10**5, 5 * 10**5, 10**6}


def cell(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def table(task: str, results: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """A markdown table for ``task``: each model's means over seeds and its ratios to river's
    models (error measures and CPU cost), then the ratios' medians over the streams."""
    if task == "regression":
        shown = {"mae": "MAE", "coverage": "cov. 90 %", "interval_us": "interval µs"}
        compared = {"mae": "MAE", "cpu_us": "CPU"}
    else:
        shown = {"accuracy": "accuracy", "log_loss": "log loss"}
        compared = {"accuracy": "accuracy", "log_loss": "log loss", "cpu_us": "CPU"}
    shown |= {"wall_us": "wall µs/row", "cpu_us": "CPU µs/row"}
    windows = {f"wall_us_{a}": f"wall µs rows {a:,}–{b:,}" for a, b in COST_WINDOWS}
    mean = {
        key: {m: float(np.mean([r.get(m, math.nan) for r in runs])) for m in shown | windows}
        for key, runs in results.items()
        if runs[0]["task"] == task
    }
    if not mean:
        return
    shown |= {m: label for m, label in windows.items() if any(v[m] > 0 for v in mean.values())}
    labels = [f"{label} ÷ {peer[6:]}" for label in compared.values() for peer in (AMF, ARF)]
    rows, ratios = [], {}
    for (stream, model), value in mean.items():
        size = f"{results[stream, model][0]['rows']:,} × {len(results[stream, model])}"
        ours = [value[m] / mean[stream, p][m] for m in compared for p in (AMF, ARF)]
        if model.startswith("ours"):
            for label, ratio in zip(labels, ours):
                ratios.setdefault(model, {}).setdefault(label, []).append(ratio)
        else:
            ours = [math.nan] * len(labels)
        rows.append([stream, size, model, *(cell(value[m]) for m in shown), *map(cell, ours)])
    print(f"\n{task}:\n")
    markdown_table(["stream", "rows × seeds", "model", *shown.values(), *labels], rows)
    for model, by_label in ratios.items():
        medians = ", ".join(f"{k} {cell(float(np.nanmedian(v)))}" for k, v in by_label.items())
        print(f"- {model}, medians over the streams: {medians}")


def main_mode(args: argparse.Namespace, api: dict[str, type]) -> None:
    streams = load_streams(args.streams, args.rows, args.seed_list)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    warned: dict[tuple[str, str], int] = {}
    for stream in streams:
        for name, make in models(stream, stream.seed, api, args.bare_arf).items():
            start = time.perf_counter()
            run = prequential(make(), stream)
            summary = summarise(stream, run)
            results.setdefault((stream.name, name), []).append(summary)
            for message in run.warned:
                warned[name, message] = warned.get((name, message), 0) + 1
            seconds = time.perf_counter() - start
            progress(f"{stream.name} seed {stream.seed}, {name}: {seconds:.1f} s")
    for task in ("regression", "classification"):
        table(task, results)
    for (name, message), runs in warned.items():
        print(f"\n{name} warned in {runs} run(s): {message}")


def progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def drift_mode(args: argparse.Namespace, api: dict[str, type]) -> None:
    default = inspect.signature(synth.FriedmanDrift).parameters["position"].default
    seed = args.seed_list[0]
    for drift_type, count in (("lea", 3), ("gra", 2)):
        position = tuple(max(1, round(p * args.drift_scale)) for p in default[:count])
        n_rows = args.rows or position[-1] + position[0] // 2
        rows = list(synth.FriedmanDrift(drift_type, position, seed=seed).take(n_rows))
        stream = make_stream(f"FriedmanDrift {drift_type}", "regression", rows, [], seed)
        errors, costs = {}, {}
        for name, make in models(stream, seed, api, args.bare_arf).items():
            run = prequential(make(), stream)
            errors[name], costs[name] = np.abs(run.predictions - stream.y), 1e6 * run.wall.mean()
            progress(f"{stream.name}, {name}: {run.wall.sum():.1f} s")
        print(
            f"\nFriedmanDrift(drift_type={drift_type!r}, position={position}, seed={seed}): "
            f"MAE per window of {args.window:,} rows\n"
        )
        lines = []
        for start in range(0, n_rows, args.window):
            stop = min(start + args.window, n_rows)
            mark = " (drift)" if any(start <= p < stop for p in position) else ""
            maes = [cell(e[start:stop].mean()) for e in errors.values()]
            lines.append([f"{start:,}–{stop:,}{mark}", *maes])
        lines.append(["all rows", *(cell(e.mean()) for e in errors.values())])
        lines.append(["wall µs/row", *map(cell, costs.values())])
        markdown_table(["rows", *errors], lines)


def chunked(stream: Stream, size: int) -> dict[str, float]:
    """Ours predicting each chunk of ``size`` rows, then learning it (first chunk: 0.0 or
    uniform); error and cost per row."""
    n, k = len(stream.y), stream.n_classes
    model = SklearnOnline(stream, stream.seed).model
    predictions = np.full((n, k), 1.0 / k) if k else np.zeros(n)
    wall = cpu = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, n, size):
            X, y = stream.X[start : start + size], stream.y[start : start + size]
            w0, c0 = time.perf_counter(), time.process_time()
            if start:
                guess = model.predict_proba(X) if k else model.predict(X, return_std=True)[0]
                predictions[start : start + size] = guess
            model.partial_fit(X, y, **({"classes": np.arange(k)} if k and not start else {}))
            wall, cpu = wall + time.perf_counter() - w0, cpu + time.process_time() - c0
    return {**score(stream, predictions, size), "wall_us": 1e6 * wall / n, "cpu_us": 1e6 * cpu / n}


def chunks_mode(args: argparse.Namespace) -> None:
    lines = []
    for stream in load_streams(args.streams, args.rows, args.seed_list):
        found = {f"ours, chunks of {args.chunk_size:,}": chunked(stream, args.chunk_size)}
        for name, make in models(stream, stream.seed, {}, args.bare_arf).items():
            if name in (AMF, ARF):
                run = prequential(make(), stream)
                found[name] = summarise(stream, run) | score(
                    stream, run.predictions, args.chunk_size
                )
        progress(f"{stream.name} seed {stream.seed}")
        ours = next(iter(found.values()))["cpu_us"]
        for name, value in found.items():
            ratios = [ours / found[p]["cpu_us"] for p in (AMF, ARF)]
            ratios = ratios if name.startswith("ours") else [math.nan] * 2
            error = value.get("mae", value.get("accuracy"))
            costs = [value["wall_us"], value["cpu_us"], *ratios]
            lines.append([f"{stream.name} ({stream.seed})", name, cell(error), *map(cell, costs)])
    print(
        f"\nours: predict {args.chunk_size:,} rows, then learn them; river: one row at a time. "
        "Errors over the rows after the first chunk (none in shorter streams).\n"
    )
    columns = ["wall µs/row", "CPU µs/row", "CPU ÷ AMF", "CPU ÷ ARF"]
    markdown_table(["stream (seed)", "model", "MAE / accuracy", *columns], lines)


def resident_bytes() -> int:
    """Resident set size of this process (psutil when installed, else /proc/self/status)."""
    try:
        import psutil
    except ImportError:
        with open("/proc/self/status") as status:
            line = next(line for line in status if line.startswith("VmRSS:"))
        return int(line.split()[1]) * 1024
    return int(psutil.Process().memory_info().rss)


def memory_mode(args: argparse.Namespace) -> None:
    """Resident memory growth of ours fed chunks of 10,000 rows, then of river's AMF fed
    ``--memory-river-rows`` rows one at a time (its figure for ``--rows`` extrapolated)."""
    seed, chunk, lines = args.seed_list[0], 10_000, []
    rows = synth.Friedman(seed=seed).take(args.rows)
    model = MondrianForestRegressor(N_TREES, random_state=seed, n_jobs=1)
    before, seen, last = resident_bytes(), 0, (0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while seen < args.rows:
            part = list(itertools.islice(rows, chunk))
            model.partial_fit(np.array([list(x.values()) for x, _ in part]), [y for _, y in part])
            seen += len(part)
            if seen in CHECKPOINTS or seen >= args.rows:
                grown = resident_bytes() - before
                since = (grown - last[1]) / (seen - last[0])
                lines.append([f"{seen:,}", cell(grown / 2**20), cell(grown / seen), cell(since)])
                last = (seen, grown)
    print(f"\nsynth.Friedman (seed {seed}), {N_TREES} trees, partial_fit on chunks of {chunk:,}\n")
    columns = ["RSS growth MiB", "bytes/row", "bytes/row since the line above"]
    markdown_table(["rows learnt", *(f"ours: {c}" for c in columns)], lines)
    data = list(synth.Friedman(seed=seed).take(args.memory_river_rows))
    amf = forest.AMFRegressor(n_estimators=N_TREES, seed=seed)
    before = resident_bytes()
    for x, y in data:
        amf.learn_one(x, y)
    per_row = (resident_bytes() - before) / len(data)
    total = cell(per_row * args.rows / 2**20)
    print(
        f"\nriver AMFRegressor, learn_one on {len(data):,} rows: {cell(per_row)} bytes/row; "
        f"extrapolated, not measured, to {args.rows:,} rows: {total} MiB"
    )


def main() -> None:
    parser = experiment_parser(__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--drift", action="store_true", help="FriedmanDrift, MAE per window")
    mode.add_argument("--chunks", action="store_true", help="ours in chunks vs river per row")
    mode.add_argument("--memory", action="store_true", help="resident memory growth per row")
    parser.add_argument("--rows", type=int, help="rows per stream (default 3,000; --memory 10^6)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds of the synthetic streams")
    parser.add_argument("--streams", nargs="+", default=ALL_STREAMS, choices=ALL_STREAMS)
    parser.add_argument("--window", type=int, default=500, help="--drift: rows per window")
    parser.add_argument("--drift-scale", type=float, default=1.0, help="--drift: positions × this")
    parser.add_argument("--chunk-size", type=int, default=1000, help="--chunks: rows per chunk")
    parser.add_argument("--memory-river-rows", type=int, default=20_000)
    parser.add_argument(
        "--bare-arf", action="store_true", help="river's ARF regressor without StandardScaler"
    )
    parser.add_argument("--quick", action="store_true", help="a tiny run that checks the script")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.streams = 1, list(QUICK)
        args.rows = args.rows or (20_000 if args.memory else None if args.drift else 600)
        args.drift_scale, args.window, args.chunk_size = 0.01, 250, 100
        args.memory_river_rows = 2_000
    args.rows = args.rows or (10**6 if args.memory else None if args.drift else 3_000)
    args.seed_list = list(range(args.seeds))
    api = river_api_classes()
    found = ", ".join(f"{t}: {c.__name__}" for t, c in api.items()) or "absent"
    header(f"river {river_version}, mondrian_learn.river {found}")
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.drift:
        drift_mode(args, api)
    elif args.chunks:
        chunks_mode(args)
    elif args.memory:
        memory_mode(args)
    else:
        main_mode(args, api)
    print(f"\nload average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
