"""Speed and memory goals of MondrianForestClassifier against ExtraTrees and river's AMF.

One command (each part in its own process, so that its peak resident memory is its own)::

    flock /tmp/mondrian-bench.lock python benches/experiments/forest_classifier_speed.py

Data: ``make_classification(n_samples=--n + 100,000, n_features=20, random_state=0)`` (two
classes); the first ``--n`` rows (default 10⁶) train, the last 10⁵ test. 10 trees, 2 threads.

* ``fit``: fit seconds (best of ``--repeats``) of the label-blind forest (T = Q = 1), the
  label-guided one with the poster's T = √D, Q = 6 and with our defaults (T = D/3, Q = 6),
  ``ExtraTreesClassifier(max_features=1)`` and ``ExtraTreesClassifier()``; ``predict_proba``
  seconds on the 10⁵ test rows (best of ``--repeats``); test accuracy; the fit's peak resident
  memory above the data's (``VmHWM`` after resetting it, Linux) and the pickled model's size.
  Goals: label-blind fit ≤ ExtraTrees(max_features=1), label-guided fit ≤ ExtraTrees(),
  ``predict_proba`` ≤ 2× ExtraTrees'.
* ``online``: ``partial_fit`` on chunks of 10,000 rows over all ``--n`` rows (rows/s) and one
  row per call on the first ``--n-single`` rows (calls/s), label-blind and default cuts,
  against river ``AMFClassifier(n_estimators=10).learn_one`` on its first ``--n-river`` rows
  (dict rows built outside the timing). Goals: one row per call ≥ 100× river, chunks of
  10,000 ≥ 1,000×.
"""

from __future__ import annotations

import pickle
import time
from typing import Any

import numpy as np
from _common import answer_part, experiment_parser, header, resident_mb, run_part
from sklearn.datasets import make_classification

N_TEST = 100_000
TREES = 10
CUTS = {
    "MF label-blind": {"candidate_dimensions": 1, "candidate_locations": 1},
    "MF guided sqrt(D)xQ=6": {"candidate_dimensions": "sqrt", "candidate_locations": 6},
    "MF default D/3xQ=6": {},
}


def data(n: int) -> tuple[np.ndarray, ...]:
    X, y = make_classification(n_samples=n + N_TEST, n_features=20, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def best(call: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def make(name: str) -> Any:
    from sklearn.ensemble import ExtraTreesClassifier

    from mondrian_learn import MondrianForestClassifier

    if name in CUTS:
        return MondrianForestClassifier(TREES, random_state=0, n_jobs=2, **CUTS[name])
    if name == "ExtraTrees(max_features=1)":
        return ExtraTreesClassifier(TREES, max_features=1, random_state=0, n_jobs=2)
    return ExtraTreesClassifier(TREES, random_state=0, n_jobs=2)


def part_fit(name: str, n: int, repeats: int) -> dict:
    X, y, X_test, y_test = data(n)
    before = resident_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    model = make(name)
    start = time.perf_counter()
    model.fit(X, y)
    first = time.perf_counter() - start
    peak = resident_mb("VmHWM") - before
    fit_s = min(first, best(lambda: model.fit(X, y), repeats - 1) if repeats > 1 else first)
    predict_s = best(lambda: model.predict_proba(X_test), repeats)
    accuracy = float((model.predict(X_test) == y_test).mean())
    return {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "accuracy": accuracy,
        "peak_mb": peak,
        "pickle_mb": len(pickle.dumps(model)) / 2**20,
    }


def part_online(n: int, n_single: int) -> dict:
    from mondrian_learn import MondrianForestClassifier

    X, y, X_test, y_test = data(n)
    out: dict[str, Any] = {}
    for name, cuts in CUTS.items():
        if name == "MF guided sqrt(D)xQ=6":
            continue
        model = MondrianForestClassifier(TREES, random_state=0, n_jobs=2, **cuts)
        start = time.perf_counter()
        for i, lo in enumerate(range(0, n, 10_000)):
            model.partial_fit(
                X[lo : lo + 10_000], y[lo : lo + 10_000], classes=[0, 1] if i == 0 else None
            )
        chunked = n / (time.perf_counter() - start)
        accuracy = float((model.predict(X_test) == y_test).mean())
        model = MondrianForestClassifier(TREES, random_state=0, n_jobs=2, **cuts)
        model.partial_fit(X[:1], y[:1], classes=[0, 1])
        start = time.perf_counter()
        for i in range(1, n_single):
            model.partial_fit(X[i : i + 1], y[i : i + 1])
        single = (n_single - 1) / (time.perf_counter() - start)
        out[name] = {"chunked_rows_s": chunked, "single_calls_s": single, "accuracy": accuracy}
    return out


def part_river(n_river: int) -> dict:
    try:
        from river.forest import AMFClassifier
    except ImportError:
        return {"error": "river not installed (pip install river)"}
    X, y, X_test, y_test = data(n_river)
    rows = [dict(enumerate(r)) for r in X]
    labels = [int(v) for v in y]
    model = AMFClassifier(n_estimators=TREES, seed=0)
    start = time.perf_counter()
    for row, label in zip(rows, labels):
        model.learn_one(row, label)
    seconds = time.perf_counter() - start
    test = [model.predict_one(dict(enumerate(r))) for r in X_test[:5000]]
    accuracy = float(np.mean(np.array(test) == y_test[:5000]))
    return {"rows_s": n_river / seconds, "accuracy_5k": accuracy}


def main() -> None:
    parser = experiment_parser(__doc__, n=1_000_000, repeats=3, part=True)
    parser.add_argument("--n-single", type=int, default=100_000)
    parser.add_argument("--n-river", type=int, default=20_000)
    parser.add_argument("--parts", nargs="+", default=["fit", "online"])
    args = parser.parse_args()
    parts = {
        "fit": lambda name: part_fit(name, args.n, args.repeats),
        "online": lambda: part_online(args.n, args.n_single),
        "river": lambda: part_river(args.n_river),
    }
    if answer_part(args.part, parts):
        return
    header()
    print(f"N={args.n} train, {N_TEST} test, D=20, 2 classes, {TREES} trees, n_jobs=2")
    common = ["--n", str(args.n), "--repeats", str(args.repeats)]
    if "fit" in args.parts:
        names = [*CUTS, "ExtraTrees(max_features=1)", "ExtraTrees()"]
        fits = {name: run_part(__file__, "fit", name, *common) for name in names}
        print(
            f"\n{'model':<28}{'fit s':>8}{'proba s':>9}{'accuracy':>10}{'peak MB':>9}"
            f"{'pickle MB':>11}"
        )
        for name, r in fits.items():
            print(
                f"{name:<28}{r['fit_s']:>8.2f}{r['predict_s']:>9.2f}{r['accuracy']:>10.4f}"
                f"{r['peak_mb']:>9.0f}{r['pickle_mb']:>11.1f}"
            )
        one, default = fits["ExtraTrees(max_features=1)"], fits["ExtraTrees()"]
        print("\ngoals (ratio = ExtraTrees time / ours; ≥ 1 met):")
        print(
            f"  label-blind fit vs ET(max_features=1): "
            f"{one['fit_s'] / fits['MF label-blind']['fit_s']:.2f}"
        )
        for name in ("MF guided sqrt(D)xQ=6", "MF default D/3xQ=6"):
            print(f"  {name} fit vs ET(): {default['fit_s'] / fits[name]['fit_s']:.2f}")
        for name in CUTS:
            print(
                f"  {name} predict_proba / ET()'s: "
                f"{fits[name]['predict_s'] / default['predict_s']:.2f} (goal ≤ 2)"
            )
    if "online" in args.parts:
        ours = run_part(__file__, "online", *common, "--n-single", str(args.n_single))
        river = run_part(__file__, "river", "--n-river", str(args.n_river))
        print(
            f"\nonline: chunks of 10,000 over {args.n} rows; one row per call over "
            f"{args.n_single}; river AMFClassifier over {args.n_river}"
        )
        if "error" in river:
            print(f"  {river['error']}")
            return
        print(
            f"  river learn_one: {river['rows_s']:,.0f} rows/s "
            f"(accuracy on 5,000 test rows {river['accuracy_5k']:.4f})"
        )
        for name, r in ours.items():
            print(
                f"  {name}: chunks {r['chunked_rows_s']:,.0f} rows/s "
                f"= {r['chunked_rows_s'] / river['rows_s']:,.0f}× river (goal ≥ 1,000×); "
                f"one row per call {r['single_calls_s']:,.0f} calls/s "
                f"= {r['single_calls_s'] / river['rows_s']:,.0f}× (goal ≥ 100×); "
                f"accuracy {r['accuracy']:.4f}"
            )


if __name__ == "__main__":
    main()
