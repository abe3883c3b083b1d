"""The streams of the online benchmark (``online_prequential.py``): river's synthetic
generators and bundled files, as float64 arrays for our estimators and as dicts for river's,
with the same features in the same order."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

import numpy as np

try:
    from river import datasets
    from river.datasets import synth
except ImportError:
    sys.exit("error: this benchmark needs river (pip install river)")

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
