"""Peak memory of the 10⁶-row fits and ``predict_proba`` CPU seconds against ExtraTrees.

One command (each fit in its own process, so that its peak resident memory is its own)::

    OPENBLAS_NUM_THREADS=1 python benches/experiments/forest_memory_profile.py

* ``mem``: per model, one process: the data, then ``VmHWM`` reset (``/proc/self/clear_refs``,
  Linux), the fit (wall and CPU seconds of all threads), the peak resident memory above the
  data's, the resident memory the fitted model keeps (after ``gc``), ``VmRSS`` sampled every
  50 ms during the fit (the peak's time and a coarse profile), the trees' node counts and the
  pickle's size. Models: the default ``MondrianForestRegressor`` and ``ExtraTreesRegressor()``
  on ``make_friedman1(10⁶ + 10⁵, 10)``; the default and the label-blind
  ``MondrianForestClassifier``, ``ExtraTreesClassifier()`` and ``ExtraTreesClassifier(
  max_features=1)`` on ``make_classification(10⁶ + 10⁵, 20)``. 10 trees, ``n_jobs=2``,
  ``random_state=0``; the first 10⁶ rows train. Each fitted model is pickled to ``--store``.
* ``predict``: one process per pair (ours, ExtraTrees'), both loaded from ``--store``:
  ``predict_proba`` on the last 10⁵ rows, alternating, best of ``--repeats``, CPU and wall
  seconds, ``n_jobs=2`` and ``n_jobs=1``; then, on 20,000 test rows, per row and tree: nodes on
  the root-to-leaf path (ours: depth of the leaf of ``apply`` + 1; ExtraTrees:
  ``decision_path``) and for ours the boxes read for the branch-off probabilities and the
  branch-off events.
* ``paths``: the last item alone, for each of ``--models``.
* ``--part predict_only NAME``: ``predict_proba`` alone, for ``perf record -g``.

The machine is shared: CPU seconds (``resource.getrusage``, all threads) are the figures to
compare; peak memory does not depend on the load.
"""

from __future__ import annotations

import gc
import pickle
import resource
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import answer_part, experiment_parser, header, resident_mb, run_part

N_TEST, TREES = 100_000, 10
REGRESSORS = ["MF regressor default", "ET regressor"]
CLASSIFIERS = ["MF default", "MF label-blind", "ET()", "ET(max_features=1)"]
PAIRS = [("MF default", "ET()"), ("MF label-blind", "ET(max_features=1)")]


def data(name: str, n: int) -> tuple[np.ndarray, ...]:
    from sklearn.datasets import make_classification, make_friedman1

    if name in REGRESSORS:
        X, y = make_friedman1(n + N_TEST, n_features=10, noise=1.0, random_state=0)
    else:
        X, y = make_classification(n + N_TEST, n_features=20, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def make(name: str) -> Any:
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor

    common = {"random_state": 0, "n_jobs": 2}
    return {
        "MF regressor default": lambda: MondrianForestRegressor(TREES, **common),
        "ET regressor": lambda: ExtraTreesRegressor(TREES, **common),
        "MF default": lambda: MondrianForestClassifier(TREES, **common),
        "MF label-blind": lambda: MondrianForestClassifier(
            TREES, candidate_dimensions=1, candidate_locations=1, **common
        ),
        "ET()": lambda: ExtraTreesClassifier(TREES, **common),
        "ET(max_features=1)": lambda: ExtraTreesClassifier(TREES, max_features=1, **common),
    }[name]()


def cpu_s() -> float:
    """CPU seconds of this process, all threads (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def node_counts(name: str, model: Any) -> list[int]:
    if name.startswith("MF"):
        return [len(model.tree_arrays(m)["parent"]) for m in range(TREES)]
    return [int(e.tree_.node_count) for e in model.estimators_]


def part_mem(name: str, n: int, store: Path) -> dict:
    X, y, _, _ = data(name, n)
    gc.collect()
    before = resident_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:
        start = time.perf_counter()
        while not done.wait(0.05):
            samples.append((time.perf_counter() - start, resident_mb("VmRSS") - before))

    sampler = threading.Thread(target=sample)
    model = make(name)
    sampler.start()
    wall, cpu = time.perf_counter(), cpu_s()
    model.fit(X, y)
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    done.set()
    sampler.join()
    peak = resident_mb("VmHWM") - before
    gc.collect()
    kept = resident_mb("VmRSS") - before
    blob = pickle.dumps(model)
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{name}.pkl").write_bytes(blob)
    t_peak = max(samples, key=lambda s: s[1])[0] if samples else float("nan")
    # the profile: the largest sample in each tenth of the fit
    tenths = [
        max(
            (s[1] for s in samples if k * wall / 10 <= s[0] < (k + 1) * wall / 10),
            default=float("nan"),
        )
        for k in range(10)
    ]
    return {
        "fit_wall": wall,
        "fit_cpu": cpu,
        "data_mb": (X.nbytes + y.nbytes) / 2**20,
        "peak_mb": peak,
        "kept_mb": kept,
        "peak_at": t_peak,
        "profile_mb": tenths,
        "nodes": node_counts(name, model),
        "pickle_mb": len(blob) / 2**20,
    }


def path_lengths(name: str, model: Any, X: np.ndarray) -> dict[str, float]:
    """Per test row and tree, means of: nodes on the root-to-leaf path; for ours also the
    boxes the branch-off probabilities read (the leaf's, then each parent's until one holds
    the row) and the branch-off events (boxes not holding it)."""
    if not name.startswith("MF"):
        indicator, _ = model.decision_path(X)
        return {"nodes": float(indicator.sum()) / (len(X) * TREES)}
    leaves = model.apply(X)
    mapped = (X - model.data_min_) / model.data_scale_  # the trees' coordinates
    nodes = boxes = events = 0.0
    for m in range(TREES):
        a = model.tree_arrays(m)
        parent, lower, upper = a["parent"].astype(np.int64), a["lower"], a["upper"]
        # depth by pointer jumping: one vectorised pass per level
        depth = np.zeros(len(parent), dtype=np.int64)
        above = parent.copy()
        while (alive := above >= 0).any():
            depth += alive
            above[alive] = parent[above[alive]]
        node = leaves[:, m].astype(np.int64)
        nodes += float(np.sum(depth[node] + 1))
        active = np.arange(len(X))
        while active.size:
            j = node[active]
            boxes += active.size
            outside = ((mapped[active] < lower[j]) | (mapped[active] > upper[j])).any(axis=1)
            events += float(outside.sum())
            up = outside & (parent[j] >= 0)
            active = active[up]
            node[active] = parent[j[up]]
    n = len(X) * TREES
    return {"nodes": nodes / n, "boxes read": boxes / n, "events": events / n}


def part_paths(name: str, n: int, store: Path) -> dict[str, float]:
    """:func:`path_lengths` of the stored model ``name`` on 20,000 of its test rows."""
    _, _, X_test, _ = data(name, n)
    model = pickle.loads((store / f"{name}.pkl").read_bytes())
    return path_lengths(name, model, X_test[:20_000])


def part_predict(ours: str, theirs: str, n: int, store: Path, repeats: int) -> dict:
    _, _, X_test, _ = data(ours, n)
    models = {n: pickle.loads((store / f"{n}.pkl").read_bytes()) for n in (ours, theirs)}
    out: dict[str, Any] = {}
    for jobs in (2, 1):
        times: dict[str, list[tuple[float, float]]] = {n: [] for n in models}
        for m in models.values():
            m.set_params(n_jobs=jobs)
            m.predict_proba(X_test)  # warm-up: a loaded classifier computes its node means once
        for _ in range(repeats):
            for n, m in models.items():
                wall, cpu = time.perf_counter(), cpu_s()
                m.predict_proba(X_test)
                times[n].append((cpu_s() - cpu, time.perf_counter() - wall))
        for n in models:
            out[f"{n} n_jobs={jobs}"] = {
                "cpu": min(t[0] for t in times[n]),
                "wall": min(t[1] for t in times[n]),
            }
    for n, m in models.items():
        out[f"{n} path"] = path_lengths(n, m, X_test[:20_000])
    return out


def part_predict_only(name: str, n: int, store: Path, repeats: int) -> dict:
    """Only ``predict_proba`` (for ``perf record``): load, predict ``repeats`` times."""
    _, _, X_test, _ = data(name, n)
    model = pickle.loads((store / f"{name}.pkl").read_bytes())
    cpu = cpu_s()
    for _ in range(repeats):
        model.predict_proba(X_test)
    return {"cpu_per_call": (cpu_s() - cpu) / repeats}


def describe(counts: dict[str, float]) -> str:
    return ", ".join(f"{k} {x:.2f}" for k, x in counts.items())


def main() -> None:
    parser = experiment_parser(__doc__, repeats=3, part=True)
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--parts", nargs="+", default=["mem", "predict"])
    parser.add_argument("--models", nargs="+", default=[*REGRESSORS, *CLASSIFIERS])
    parser.add_argument("--store", type=Path, default=Path("/tmp/forest_memory_profile"))
    args = parser.parse_args()
    parts = {
        "mem": lambda name: part_mem(name, args.n, args.store),
        "paths": lambda name: part_paths(name, args.n, args.store),
        "predict": lambda ours, theirs: part_predict(
            ours, theirs, args.n, args.store, args.repeats
        ),
        "predict_only": lambda name: part_predict_only(name, args.n, args.store, args.repeats),
    }
    if answer_part(args.part, parts):
        return
    header()
    common = ["--n", str(args.n), "--store", str(args.store), "--repeats", str(args.repeats)]
    if "mem" in args.parts:
        print(
            f"\n{'model':<22}{'fit wall/cpu s':>16}{'peak MB':>9}{'kept MB':>9}"
            f"{'nodes':>11}{'pickle MB':>11}  peak at s; max MB per tenth of the fit"
        )
        for name in args.models:
            r = run_part(__file__, "mem", name, *common)
            print(
                f"{name:<22}{r['fit_wall']:>8.1f}/{r['fit_cpu']:<7.1f}{r['peak_mb']:>9.0f}"
                f"{r['kept_mb']:>9.0f}{sum(r['nodes']):>11,}{r['pickle_mb']:>11.1f}  "
                f"{r['peak_at']:.1f}; " + " ".join(f"{v:.0f}" for v in r["profile_mb"]),
                flush=True,
            )
    if "paths" in args.parts:
        for name in args.models:
            r = run_part(__file__, "paths", name, *common)
            print(f"{name}, per row and tree: {describe(r)}")
    if "predict" in args.parts:
        for ours, theirs in PAIRS:
            r = run_part(__file__, "predict", ours, theirs, *common)
            print(f"\npredict_proba, 10⁵ rows, best of {args.repeats} (cpu / wall s):")
            for key, v in r.items():
                if "path" in key:
                    print(f"  {key}, per row and tree: {describe(v)}")
                else:
                    print(f"  {key}: {v['cpu']:.2f} / {v['wall']:.2f}")
            for jobs in (2, 1):
                ratio = r[f"{ours} n_jobs={jobs}"]["cpu"] / r[f"{theirs} n_jobs={jobs}"]["cpu"]
                print(f"  {ours} / {theirs}, n_jobs={jobs}: {ratio:.2f}× CPU", flush=True)


if __name__ == "__main__":
    main()
