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
import importlib
import inspect
import itertools
import math
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

import numpy as np
from _common import experiment_parser, header

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor

try:
    import river
    from river import datasets, forest, preprocessing
    from river.datasets import synth
except ImportError:
    sys.exit("error: this benchmark needs river (pip install river)")

N_TREES = 10
CONFIDENCE = 0.9
COVERAGE_FROM = 500
COST_WINDOWS = ((500, 1500), (9000, 10000))
PROBA_FLOOR = 1e-15
AMF, ARF = "river AMF", "river ARF"
SYNTHETIC: dict[str, tuple[str, Callable[[int], Any], int]] = {
    "Friedman": ("regression", lambda s: synth.Friedman(seed=s), 0),
    "Mv": ("regression", lambda s: synth.Mv(seed=s), 0),
    "Planes2D": ("regression", lambda s: synth.Planes2D(seed=s), 0),
    "Hyperplane": ("classification", lambda s: synth.Hyperplane(seed=s), 2),
    "Agrawal": ("classification", lambda s: synth.Agrawal(seed=s), 2),
    "RandomRBF": ("classification", lambda s: synth.RandomRBF(seed_model=s, seed_sample=s), 2),
}
#: river's bundled files (read offline; its other datasets download at first use).
REGRESSION_FILES = [
    "TrumpApproval",
    "ChickWeights",
    "SP500Stocks",
    "WaterFlow",
    "AirlinePassengers",
]
CLASSIFICATION_FILES = ["Phishing", "Bananas", "ImageSegments", "Shuttle"]
ALL_STREAMS = [*SYNTHETIC, *REGRESSION_FILES, *CLASSIFICATION_FILES]
CHECKPOINTS = {10**4, 2 * 10**4, 5 * 10**4, 10**5, 2 * 10**5, 5 * 10**5, 10**6}
NUMBER = r"\d+(\.\d+)?(e[-+]?\d+)?"
QUICK = ["Friedman", "TrumpApproval", "Hyperplane", "Phishing"]


@dataclass
class Stream:
    """The rows of one stream, as arrays (ours) and dicts (river): same features, same order."""

    name: str
    task: str
    X: np.ndarray
    y: np.ndarray  # targets, or class indices 0…K−1
    n_classes: int = 0
    seed: int = 0
    dicts: list[dict[str, float]] = field(default_factory=list)


def encode(rows: list[dict[Any, Any]]) -> tuple[np.ndarray, list[str]]:
    """Features of river rows as float64: strings one-hot over the values present, datetimes
    as POSIX seconds, other values (numbers, booleans) by ``float``."""
    columns: list[tuple[Any, str | None]] = []
    for key in rows[0]:
        values = {row[key] for row in rows}
        if any(isinstance(v, str) for v in values):
            columns += [(key, level) for level in sorted(map(str, values))]
        else:
            columns.append((key, None))
    X = np.empty((len(rows), len(columns)))
    for i, row in enumerate(rows):
        for j, (key, level) in enumerate(columns):
            value = row[key]
            if level is not None:
                X[i, j] = float(str(value) == level)
            else:
                X[i, j] = value.timestamp() if isinstance(value, datetime) else float(value)
    return X, [str(key) if level is None else f"{key}={level}" for key, level in columns]


def make_stream(
    name: str, task: str, rows: list[tuple[dict, Any]], classes: list, seed: int
) -> Stream:
    X, names = encode([x for x, _ in rows])
    if task == "classification":
        index = {label: k for k, label in enumerate(classes)}
        y = np.array([index[label] for _, label in rows], dtype=np.int64)
    else:
        y = np.array([float(target) for _, target in rows])
    dicts = [dict(zip(names, row)) for row in X.tolist()]
    return Stream(name, task, np.ascontiguousarray(X), y, len(classes), seed, dicts)


def load_streams(names: list[str], n_rows: int, seeds: list[int]) -> list[Stream]:
    """The streams asked for, synthetic ones once per seed."""
    streams = []
    for name in names:
        if name in SYNTHETIC:
            task, make, n_classes = SYNTHETIC[name]
            for seed in seeds:
                rows = list(make(seed).take(n_rows))
                streams.append(make_stream(name, task, rows, list(range(n_classes)), seed))
            continue
        task = "regression" if name in REGRESSION_FILES else "classification"
        rows = list(getattr(datasets, name)())
        classes = sorted({label for _, label in rows}, key=str) if task != "regression" else []
        streams.append(make_stream(name, task, rows[:n_rows], classes, 0))
    return streams


class SklearnOnline:
    """Our estimator through the scikit-learn API, one 1-row array per call."""

    def __init__(self, stream: Stream, seed: int) -> None:
        regression = stream.task == "regression"
        kind = MondrianForestRegressor if regression else MondrianForestClassifier
        self.model = kind(N_TREES, random_state=seed, n_jobs=1)
        self.x = [stream.X[i : i + 1] for i in range(len(stream.X))]
        self.y = [stream.y[i : i + 1] for i in range(len(stream.y))]
        self.classes = None if regression else np.arange(stream.n_classes)
        self.interval = self._interval if regression else None

    def predict(self, i: int) -> Any:
        if self.classes is not None:
            return self.model.predict_proba(self.x[i])[0]
        mean, _ = self.model.predict(self.x[i], return_std=True)
        return mean[0]

    def _interval(self, i: int) -> Any:
        return self.model.predict_interval(self.x[i], CONFIDENCE)[0]

    def learn(self, i: int) -> None:
        if self.classes is not None and not hasattr(self.model, "classes_"):
            self.model.partial_fit(self.x[i], self.y[i], classes=self.classes)
        else:
            self.model.partial_fit(self.x[i], self.y[i])


class RiverOnline:
    """A model with river's ``learn_one``/``predict_one``/``predict_proba_one``."""

    def __init__(self, model: Any, stream: Stream) -> None:
        self.model, self.x, self.y = model, stream.dicts, stream.y.tolist()
        self.n_classes = stream.n_classes
        has_interval = stream.task == "regression" and hasattr(model, "predict_interval_one")
        self.interval = self._interval if has_interval else None

    def predict(self, i: int) -> Any:
        if not self.n_classes:
            value = self.model.predict_one(self.x[i])
            return 0.0 if value is None else value
        proba = np.zeros(self.n_classes)
        for label, p in self.model.predict_proba_one(self.x[i]).items():
            proba[int(label)] = p
        return proba

    def _interval(self, i: int) -> Any:
        return tuple(self.model.predict_interval_one(self.x[i], CONFIDENCE))

    def learn(self, i: int) -> None:
        self.model.learn_one(self.x[i], self.y[i])


def river_api_classes() -> dict[str, type]:
    """Our estimators' river face (``mondrian_learn.river``) by task; empty when absent."""
    try:
        module = importlib.import_module("mondrian_learn.river")
    except ImportError:
        return {}
    return {
        "regression": module.MondrianForestRegressor,
        "classification": module.MondrianForestClassifier,
    }


def models(
    stream: Stream, seed: int, api: dict[str, type], bare_arf: bool = False
) -> dict[str, Callable[[], Any]]:
    """The models compared on ``stream``, each as a maker of a fresh one. river's ARF regressor
    runs as river's documentation shows it, behind a ``StandardScaler`` (unless ``bare_arf``):
    bare, its leaves' linear models diverge on large unscaled features."""
    regression = stream.task == "regression"
    amf = forest.AMFRegressor if regression else forest.AMFClassifier

    def arf() -> Any:
        if not regression:
            return forest.ARFClassifier(n_models=N_TREES, seed=seed)
        bare = forest.ARFRegressor(n_models=N_TREES, seed=seed)
        return bare if bare_arf else preprocessing.StandardScaler() | bare

    made: dict[str, Callable[[], Any]] = {"ours (sklearn API)": lambda: SklearnOnline(stream, seed)}
    if stream.task in api:
        made["ours (river API)"] = lambda: RiverOnline(api[stream.task](N_TREES, seed=seed), stream)
    made[AMF] = lambda: RiverOnline(amf(n_estimators=N_TREES, seed=seed), stream)
    made[ARF] = lambda: RiverOnline(arf(), stream)
    return made


@dataclass
class Run:
    """One model's pass over one stream."""

    predictions: np.ndarray
    wall: np.ndarray  # seconds of predict + learn, per row
    cpu: np.ndarray
    bounds: np.ndarray | None
    interval_wall: float
    warned: set[str]


def prequential(model: Any, stream: Stream) -> Run:
    """Predict each row, then learn it; the first row's prediction is 0.0 or uniform."""
    n = len(stream.y)
    k = stream.n_classes
    predictions = np.full((n, k), 1.0 / k) if k else np.zeros(n)
    bounds = np.full((n, 2), np.nan) if model.interval is not None else None
    wall, cpu = np.zeros(n), np.zeros(n)
    interval_wall = 0.0
    clock, cpu_clock = time.perf_counter, time.process_time
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(n):
            w0, c0 = clock(), cpu_clock()
            if i:
                predictions[i] = model.predict(i)
            w1, c1 = clock(), cpu_clock()
            if i and bounds is not None:
                bounds[i] = model.interval(i)
            w2, c2 = clock(), cpu_clock()
            model.learn(i)
            w3, c3 = clock(), cpu_clock()
            wall[i], cpu[i] = (w1 - w0) + (w3 - w2), (c1 - c0) + (c3 - c2)
            interval_wall += w2 - w1
    # one line per kind of warning: its numbers blanked out
    warned = {re.sub(NUMBER, "…", f"{w.category.__name__}: {w.message}") for w in caught}
    return Run(predictions, wall, cpu, bounds, interval_wall / max(n - 1, 1), warned)


def score(stream: Stream, predictions: np.ndarray, skip: int = 0) -> dict[str, float]:
    """MAE, or accuracy and log loss, of prequential predictions (after the first ``skip``
    rows; NaN when none is left)."""
    y, predictions = stream.y[skip:], predictions[skip:]
    if not len(y):
        return {"mae": math.nan} if not stream.n_classes else {"accuracy": math.nan}
    if not stream.n_classes:
        return {"mae": float(np.mean(np.abs(predictions - y)))}
    total = predictions.sum(axis=1, keepdims=True)
    proba = np.divide(predictions, total, out=np.zeros_like(predictions), where=total > 0)
    truth = np.clip(proba[np.arange(len(y)), y], PROBA_FLOOR, 1.0)
    return {
        "accuracy": float(np.mean(proba.argmax(axis=1) == y)),
        "log_loss": float(-np.mean(np.log(truth))),
    }


def summarise(stream: Stream, run: Run) -> dict[str, Any]:
    """Scores, coverage and costs (µs per row) of one run."""
    result: dict[str, Any] = {"task": stream.task, "rows": len(stream.y)}
    result |= score(stream, run.predictions)
    result["wall_us"], result["cpu_us"] = 1e6 * run.wall.mean(), 1e6 * run.cpu.mean()
    if run.bounds is not None:
        rows = slice(COVERAGE_FROM, None)
        lower, upper, y = run.bounds[rows, 0], run.bounds[rows, 1], stream.y[rows]
        result["coverage"] = float(np.mean((lower <= y) & (y <= upper))) if len(y) else math.nan
        result["interval_us"] = 1e6 * run.interval_wall
    if len(run.wall) >= COST_WINDOWS[-1][1]:
        for low, high in COST_WINDOWS:
            result[f"wall_us_{low}"] = 1e6 * run.wall[low:high].mean()
    return result


def cell(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def markdown(columns: list[str], rows: list[list[str]]) -> None:
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


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
    markdown(["stream", "rows × seeds", "model", *shown.values(), *labels], rows)
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
        markdown(["rows", *errors], lines)


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
    markdown(["stream (seed)", "model", "MAE / accuracy", *columns], lines)


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
    markdown(["rows learnt", *(f"ours: {c}" for c in columns)], lines)
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
    header(f"river {river.__version__}, mondrian_learn.river {found}")
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
