"""Row weights on the Mondrian forests (issue 16, item 11), on the benchmark sets.

Default mode, per set (``--regression`` / ``--classification`` sets in ``../shared/data``,
at most ``--max-rows`` training rows): integer weights w_i ~ U{0..3} against the rows repeated
w_i times — the largest difference between the two forests' test predictions (regression
means over the test targets' standard deviation, class probabilities) — and the fit time of
the weighted forest against the unweighted one on the same rows (best of ``--repeats``),
20 trees, ``n_jobs=2``, default parameters.

``--accuracy``: only the default forests' test RMSE (regression) and accuracy
(classification), 20 trees — run it with two builds to compare them (RESULTS.md, issue 16).

``--criteria``: regression only, at most 6,000 training rows: test RMSE / std(y) and the
chosen σ_y² / var(y) without weights and with weights w_i ~ U(0.5, 2) under each
hyper-parameter rule, and under the evidence with the weights divided by their maximum
(a row of weight > 1 alone in its leaf counts as repeated equal targets: see RESULTS.md).

Usage::

    python benches/experiments/forest_weights.py
    python benches/experiments/forest_weights.py --accuracy
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _common import (
    CLASSIFICATION_SETS,
    REGRESSION_SETS,
    experiment_parser,
    header,
    load_classification,
    load_regression,
    rmse,
)

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def best_time(make: Any, X: np.ndarray, y: np.ndarray, w: Any, repeats: int) -> float:
    """The least wall time of ``repeats`` fits of ``make()`` on ``X``, ``y`` with weights ``w``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        make().fit(X, y, sample_weight=w)
        times.append(time.perf_counter() - start)
    return min(times)


def criteria(names: list[str], data: str) -> None:
    """The ``--criteria`` table (module docs)."""
    w_max = "evidence, w/max w"
    rules = [("evidence", "none"), ("evidence", "w"), ("leave_one_out", "w"), ("heuristic", "w")]
    rules.append(("evidence", "w/max"))
    print(f"{'set':20s} " + " ".join(f"{r[:9] + ' ' + k:>24s}" for r, k in rules))
    print(f"{'':20s} " + " ".join(f"{'RMSE/sd  σ²/var':>24s}" for _ in rules), w_max)
    for name in names:
        X, y, X_test, y_test = load_regression(name, data)
        X, y = X[:6000], y[:6000]
        w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
        cells = []
        for rule, kind in rules:
            weights = {"none": None, "w": w, "w/max": w / w.max()}[kind]
            model = MondrianForestRegressor(
                n_estimators=20, random_state=0, n_jobs=2, hyperparameters=rule
            ).fit(X, y, sample_weight=weights)
            error = rmse(model.predict(X_test), y_test) / np.std(y_test)
            noise = model.prior_["noise_variance"] / np.var(y)
            cells.append(f"{error:10.4f} {noise:9.1e}")
        print(f"{name:20s} " + " ".join(f"{c:>24s}" for c in cells), flush=True)


def main() -> None:
    parser = experiment_parser(__doc__, data=True, repeats=3)
    parser.add_argument("--regression", nargs="*", default=list(REGRESSION_SETS))
    parser.add_argument(
        "--classification", nargs="*", default=[s for s in CLASSIFICATION_SETS if s != "sensorless"]
    )
    parser.add_argument("--max-rows", type=int, default=10_000)
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--criteria", action="store_true")
    args = parser.parse_args()
    header()
    if args.criteria:
        criteria(args.regression, args.data)
        return
    sets = [(name, "regression") for name in args.regression]
    sets += [(name, "classification") for name in args.classification]
    if args.accuracy:
        print(f"{'set':20s} {'metric':>9s} {'value':>9s}")
    else:
        print(
            f"{'set':20s} {'rows':>6s} {'max |weighted − repeated|':>26s} "
            f"{'fit s (weighted / plain)':>26s}"
        )
    for name, kind in sets:
        if kind == "regression":
            X, y, X_test, y_test = load_regression(name, args.data)
            make: Any = lambda: MondrianForestRegressor(  # noqa: E731
                n_estimators=20, random_state=0, n_jobs=2
            )
        else:
            X, y, X_test, y_test = load_classification(name, args.data)
            make = lambda: MondrianForestClassifier(  # noqa: E731
                n_estimators=20, random_state=0, n_jobs=2
            )
        X, y = X[: args.max_rows], y[: args.max_rows]
        out = "predict" if kind == "regression" else "predict_proba"
        if args.accuracy:
            prediction = make().fit(X, y).predict(X_test)
            value = (
                rmse(prediction, y_test) if kind == "regression" else np.mean(prediction == y_test)
            )
            print(f"{name:20s} {'RMSE' if kind == 'regression' else 'accuracy':>9s} {value:9.4f}")
            continue
        counts = np.random.default_rng(0).integers(0, 4, size=len(y))
        weighted = make().fit(X, y, sample_weight=counts)
        repeated = make().fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
        gap = np.max(np.abs(getattr(weighted, out)(X_test) - getattr(repeated, out)(X_test)))
        gap /= np.std(y_test) if kind == "regression" else 1.0
        w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
        t_weighted = best_time(make, X, y, w, args.repeats)
        t_plain = best_time(make, X, y, None, args.repeats)
        print(
            f"{name:20s} {len(y):6d} {gap:26.2e} "
            f"{t_weighted:12.3f} / {t_plain:.3f} = {t_weighted / t_plain:4.2f}"
        )


if __name__ == "__main__":
    main()
