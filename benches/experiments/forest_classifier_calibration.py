"""Calibrated class probabilities: the classifier's sharpness and least discount chosen on
held-out rows, against the paper's average and the scikit-learn peers.

On each set (usps's published halves, the others a fixed seeded 75/25 split, as
``forest_classifier_defaults.py``): test accuracy, log loss and expected calibration error
(top class, 15 bins) of MondrianForestClassifier with its defaults (τ and ``min_discount``
chosen), the same forest with the paper's average (``sharpness=1, min_discount=0.01``, the
defaults before), ExtraTrees, RandomForest (``--trees`` trees each) and
HistGradientBoostingClassifier (defaults); fit wall and CPU seconds, and what the choice
adds to the fit (same trees, same run).

Usage::

    python benches/experiments/forest_classifier_calibration.py
    python benches/experiments/forest_classifier_calibration.py --sets dna satimage --trees 20
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _common import (
    CLASSIFICATION_SETS,
    accuracy_and_log_loss,
    expected_calibration_error,
    experiment_parser,
    header,
    load_classification,
)
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from mondrian_learn import MondrianForestClassifier


def models(trees: int, n_jobs: int, seed: int) -> dict[str, Any]:
    """The compared classifiers, unfitted."""
    common = {"n_estimators": trees, "n_jobs": n_jobs, "random_state": seed}
    return {
        "MF default": MondrianForestClassifier(**common),
        "MF paper average": MondrianForestClassifier(**common, sharpness=1.0, min_discount=0.01),
        "ExtraTrees": ExtraTreesClassifier(**common),
        "RandomForest": RandomForestClassifier(**common),
        "HistGradientBoosting": HistGradientBoostingClassifier(random_state=seed),
    }


def main() -> None:
    parser = experiment_parser(__doc__, data=True, seed=0)
    parser.add_argument("--sets", nargs="+", default=list(CLASSIFICATION_SETS))
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    header(f"{args.trees} trees, n_jobs={args.n_jobs}")
    print(
        "| set | model | accuracy | log loss | ECE | fit s | fit cpu-s | τ | min_discount |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name in args.sets:
        X, y, X_test, y_test = load_classification(name, args.data, seed=args.seed)
        seconds: dict[str, tuple[float, float]] = {}
        for label, model in models(args.trees, args.n_jobs, args.seed).items():
            wall, cpu = time.perf_counter(), time.process_time()
            model.fit(X, y)
            seconds[label] = (time.perf_counter() - wall, time.process_time() - cpu)
            proba = model.predict_proba(X_test)
            accuracy, loss = accuracy_and_log_loss(proba, y_test, model.classes_)
            # Clipping, as the loss does, moves neither the top probability nor its class.
            ece = expected_calibration_error(proba, np.searchsorted(model.classes_, y_test))
            chosen = (
                f"{model.sharpness_:.3f} | {model.min_discount_:.3g}"
                if isinstance(model, MondrianForestClassifier)
                else "— | —"
            )
            print(
                f"| {name} | {label} | {accuracy:.4f} | {loss:.5f} | {ece:.5f} | "
                f"{seconds[label][0]:.2f} | {seconds[label][1]:.2f} | {chosen} |",
                flush=True,
            )
        (wall, cpu), (wall0, cpu0) = seconds["MF default"], seconds["MF paper average"]
        print(
            f"| {name} | the choice adds (wall / cpu) | {wall / wall0 - 1:+.0%} / "
            f"{cpu / cpu0 - 1:+.0%} | | | | | | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
