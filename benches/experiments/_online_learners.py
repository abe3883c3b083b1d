"""The learners of the online benchmark (``online_prequential.py``) and the prequential loop
that runs them: ours through the scikit-learn and river APIs, river's forests, each predicting a
row before learning it; the scores and costs of one pass."""

from __future__ import annotations

import importlib
import math
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from _online_streams import Stream  # before river: it exits cleanly without it
from river import forest, preprocessing

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor

N_TREES = 10
CONFIDENCE = 0.9
COVERAGE_FROM = 500
COST_WINDOWS = ((500, 1500), (9000, 10000))
PROBA_FLOOR = 1e-15
AMF, ARF = "river AMF", "river ARF"
NUMBER = r"\d+(\.\d+)?(e[-+]?\d+)?"


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
