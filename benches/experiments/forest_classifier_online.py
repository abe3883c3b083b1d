"""NIPS 2014 Fig. 3: test accuracy against the fraction of training data seen and against
training time, with log loss and calibration at the end.

Methods, all with ``--trees`` trees (100, as the paper) except river's AMF (10, its default;
it is the slowest by far):

* Mondrian forest online, ``partial_fit`` on each new slice: the paper's label-blind forest
  (T = Q = 1) and ours as it comes (``MondrianForestClassifier()``'s cuts);
* scikit-learn ``ExtraTreesClassifier`` (``max_features="sqrt"`` and ``1``) and
  ``RandomForestClassifier``, refitted from scratch on each fraction (their training time
  adds up, as in the paper);
* river ``AMFClassifier.learn_one`` on each new row (dict rows built outside the timing).

Fractions: ``--steps`` equal slices of the training rows in a fixed shuffled order. After the
last slice: accuracy, log loss, expected calibration error (15 bins) and the reliability
table (accuracy against mean confidence per bin) of every method. With ``--out``, the
accuracy curves (fraction and time) and reliability curves of each set are saved.

Usage::

    python benches/experiments/forest_classifier_online.py
    python benches/experiments/forest_classifier_online.py --sets dna \
        --out benches/out/nips_fig3.png
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _common import (
    expected_calibration_error,
    experiment_parser,
    header,
    load_classification,
    pyplot,
    save_figure,
)
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.metrics import log_loss

from mondrian_learn import MondrianForestClassifier


def river_amf(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, slices: list) -> Any:
    """(cumulative seconds, test probabilities) after each slice for river's AMF, or None."""
    try:
        from river.forest import AMFClassifier
    except ImportError:
        print("river not installed: AMFClassifier skipped (pip install river)")
        return None
    model = AMFClassifier(n_estimators=10, seed=0)
    rows = [dict(enumerate(r)) for r in X]
    test_rows = [dict(enumerate(r)) for r in X_test]
    classes = np.unique(y)
    elapsed, out = 0.0, []
    for part in slices:
        start = time.perf_counter()
        for i in part:
            model.learn_one(rows[i], int(y[i]))
        elapsed += time.perf_counter() - start
        proba = np.zeros((len(X_test), len(classes)))
        for r, row in enumerate(test_rows):
            for label, p in model.predict_proba_one(row).items():
                proba[r, int(label)] = p
        proba /= np.maximum(proba.sum(axis=1, keepdims=True), 1e-300)
        out.append((elapsed, proba))
    return out


def run_set(name: str, data: tuple, args: Any) -> dict[str, list]:
    X, y, X_test, y_test = data
    order = np.random.default_rng(0).permutation(len(X))
    X, y = X[order], y[order]
    slices = np.array_split(np.arange(len(X)), args.steps)
    classes = np.unique(y)
    jobs = {"n_jobs": args.n_jobs, "random_state": 0}
    results: dict[str, list] = {}
    for label, cuts in (
        ("MF original (online)", {"candidate_dimensions": 1, "candidate_locations": 1}),
        ("MF default (online)", {}),
    ):
        model, elapsed, curve = MondrianForestClassifier(args.trees, **jobs, **cuts), 0.0, []
        for i, part in enumerate(slices):
            start = time.perf_counter()
            model.partial_fit(X[part], y[part], classes=classes if i == 0 else None)
            elapsed += time.perf_counter() - start
            curve.append((elapsed, model.predict_proba(X_test)))
        results[label] = curve
    for label, make in (
        ("ExtraTrees sqrt (refit)", lambda: ExtraTreesClassifier(args.trees, **jobs)),
        ("ExtraTrees 1 (refit)", lambda: ExtraTreesClassifier(args.trees, max_features=1, **jobs)),
        ("RandomForest (refit)", lambda: RandomForestClassifier(args.trees, **jobs)),
    ):
        elapsed, curve = 0.0, []
        for i in range(1, args.steps + 1):
            seen = np.concatenate(slices[:i])
            model = make()
            start = time.perf_counter()
            model.fit(X[seen], y[seen])
            elapsed += time.perf_counter() - start
            proba = np.zeros((len(X_test), len(classes)))
            proba[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(X_test)
            curve.append((elapsed, proba))
        results[label] = curve
    amf = river_amf(X, y, X_test, slices)
    if amf is not None:
        results["river AMF, 10 trees"] = amf

    print(f"\n{name}: {len(X)} training rows in {args.steps} slices, {len(X_test)} test rows")
    print(
        f"{'method':<26}"
        + "".join(f"{(i + 1) / args.steps:>7.1f}" for i in range(args.steps))
        + f"{'time s':>9}{'log loss':>10}{'ECE':>7}"
    )
    for label, curve in results.items():
        accuracy = [float((p.argmax(axis=1) == y_test).mean()) for _, p in curve]
        proba = curve[-1][1]
        loss = log_loss(y_test, np.clip(proba, 1e-15, 1), labels=classes)
        ece = expected_calibration_error(proba, y_test)
        print(
            f"{label:<26}"
            + "".join(f"{a:>7.3f}" for a in accuracy)
            + f"{curve[-1][0]:>9.2f}{loss:>10.4f}{ece:>7.3f}"
        )
    print("reliability after the last slice (accuracy / mean confidence, 5 bins of confidence):")
    for label, curve in results.items():
        print(f"  {label:<26}" + reliability(curve[-1][1], y_test))
    return {label: curve for label, curve in results.items()}


def reliability(proba: np.ndarray, y: np.ndarray, bins: int = 5) -> str:
    confidence, correct = proba.max(axis=1), proba.argmax(axis=1) == y
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    cells = []
    for b in range(bins):
        inside = which == b
        cells.append(
            f"{correct[inside].mean():.2f}/{confidence[inside].mean():.2f} (n={inside.sum()})"
            if inside.any()
            else "—"
        )
    return "  ".join(cells)


def plot(all_results: dict, test_labels: dict, out: str) -> None:
    plt = pyplot()
    if plt is None or not out:
        return
    fig, axes = plt.subplots(
        3, len(all_results), figsize=(4.5 * len(all_results), 11), squeeze=False
    )
    for col, (name, results) in enumerate(all_results.items()):
        y_test = test_labels[name]
        for label, curve in results.items():
            steps = len(curve)
            accuracy = [float((p.argmax(axis=1) == y_test).mean()) for _, p in curve]
            axes[0, col].plot(np.arange(1, steps + 1) / steps, accuracy, marker=".", label=label)
            axes[1, col].plot([t for t, _ in curve], accuracy, marker=".", label=label)
            proba = curve[-1][1]
            confidence, correct = proba.max(axis=1), proba.argmax(axis=1) == y_test
            edges = np.linspace(0, 1, 11)
            which = np.clip(np.digitize(confidence, edges) - 1, 0, 9)
            points = [
                (confidence[which == b].mean(), correct[which == b].mean())
                for b in range(10)
                if (which == b).any()
            ]
            axes[2, col].plot(*zip(*points), marker="o", label=label)
        axes[0, col].set_title(name)
        axes[0, col].set_xlabel("fraction of training data")
        axes[1, col].set_xscale("log")
        axes[1, col].set_xlabel("training time (s)")
        axes[2, col].plot([0, 1], [0, 1], "k:", lw=1)
        axes[2, col].set_xlabel("confidence")
        for row in range(2):
            axes[row, col].set_ylabel("test accuracy")
        axes[2, col].set_ylabel("accuracy in bin")
    axes[0, 0].legend(fontsize=7)
    save_figure(fig, out)


def main() -> None:
    parser = experiment_parser(__doc__, out="", data=True)
    parser.add_argument("--sets", nargs="+", default=["usps", "satimage", "letter", "dna"])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    header()
    all_results, test_labels = {}, {}
    for name in args.sets:
        data = load_classification(name, args.data)
        all_results[name] = run_set(name, data, args)
        test_labels[name] = data[3]
    plot(all_results, test_labels, args.out)


if __name__ == "__main__":
    main()
