"""Choosing MondrianForestClassifier's defaults by measurement: one parameter at a time.

From a base setting (``--trees`` trees, label-guided cuts with T = √D and Q = 6, γ = 10·D,
``min_samples_split=2``, infinite lifetime, ``min_discount=0.01``), each row changes one
parameter and reports test accuracy, log loss and fit seconds on each set, with the mean
rank over sets at the end of the row (1 = best log loss). Sets: the poster's usps, satimage,
letter, dna and the large sensorless (``../shared/data``; usps has its published halves, the
others a fixed seeded 75/25 split). ExtraTrees and RandomForest with the same number of trees
are printed first for scale.

Usage::

    python benches/experiments/forest_classifier_defaults.py
    python benches/experiments/forest_classifier_defaults.py --sets dna satimage --trees 10
"""

from __future__ import annotations

import numpy as np
from _common import (
    CLASSIFICATION_SETS,
    accuracy_and_log_loss,
    experiment_parser,
    header,
    load_classification,
    timed,
)
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from mondrian_learn import MondrianForestClassifier

#: One change from the base per row: (label, parameters).
VARIANTS: list[tuple[str, dict]] = [
    ("base: T=sqrt Q=6", {}),
    ("label-blind T=1 Q=1", {"candidate_dimensions": 1, "candidate_locations": 1}),
    ("T=sqrt Q=1", {"candidate_locations": 1}),
    ("T=sqrt Q=3", {"candidate_locations": 3}),
    ("T=sqrt Q=12", {"candidate_locations": 12}),
    ("T=D/3 Q=6", {"candidate_dimensions": 1 / 3}),
    ("T=D Q=6", {"candidate_dimensions": 1.0}),
    ("T=D/3 Q=3", {"candidate_dimensions": 1 / 3, "candidate_locations": 3}),
    ("T=D/3 Q=12", {"candidate_dimensions": 1 / 3, "candidate_locations": 12}),
    ("T=sqrt Q=24", {"candidate_locations": 24}),
    ("T=2sqrt Q=6", {"candidate_dimensions": "2sqrt"}),
    ("gamma=D", {"discount_rate": "D"}),
    ("gamma=100D", {"discount_rate": "100D"}),
    ("min_samples_split=5", {"min_samples_split": 5}),
    ("lifetime=D (unit box)", {"lifetime": "D"}),
    ("lifetime=10D (unit box)", {"lifetime": "10D"}),
    ("min_discount=0", {"min_discount": 0.0}),
    ("min_discount=0.05", {"min_discount": 0.05}),
]


def resolve(params: dict, n_features: int) -> dict:
    """Parameters given as multiples of D or √D ("10D", "2sqrt") in numbers for this set."""
    out = {}
    for key, value in params.items():
        if isinstance(value, str) and value.endswith("D"):
            value = float(value[:-1] or 1) * n_features
        elif isinstance(value, str) and value.endswith("sqrt") and value != "sqrt":
            value = int(float(value[:-4]) * np.sqrt(n_features))
        out[key] = value
    return out


def main() -> None:
    parser = experiment_parser(__doc__, data=True)
    parser.add_argument("--sets", nargs="+", default=list(CLASSIFICATION_SETS))
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--variants", nargs="*", type=int, help="row numbers to run")
    args = parser.parse_args()
    header()
    data = {name: load_classification(name, args.data) for name in args.sets}
    print(f"{args.trees} trees, n_jobs={args.n_jobs}; cells: accuracy / log loss / fit s")
    print(f"{'setting':<26}" + "".join(f"{name:>25}" for name in args.sets) + "  mean rank")

    def row(label: str, make) -> list[float]:  # type: ignore[no-untyped-def]
        cells, losses = [], []
        for X, y, X_test, y_test in data.values():
            model = make(X.shape[1])
            seconds, _ = timed(lambda m=model, X=X, y=y: m.fit(X, y))
            proba = model.predict_proba(X_test)
            accuracy, loss = accuracy_and_log_loss(proba, y_test, np.unique(y))
            cells.append(f"{accuracy:.4f} / {loss:.4f} / {seconds:5.1f}")
            losses.append(loss)
        print(f"{label:<26}" + "".join(f"{c:>25}" for c in cells), end="", flush=True)
        return losses

    common = {"n_jobs": args.n_jobs, "random_state": 0}
    for peer in (ExtraTreesClassifier, RandomForestClassifier):
        row(f"{peer.__name__[:-10]}({args.trees})", lambda d, p=peer: p(args.trees, **common))
        print()
    table = []
    chosen = [v for i, v in enumerate(VARIANTS) if args.variants is None or i in args.variants]
    for label, params in chosen:
        table.append(
            row(
                label,
                lambda d, p=params: MondrianForestClassifier(args.trees, **common, **resolve(p, d)),
            )
        )
        print()
    ranks = np.argsort(np.argsort(np.array(table), axis=0), axis=0) + 1
    print("\nmean rank by log loss (1 = best):")
    for (label, _), r in zip(chosen, ranks.mean(axis=1)):
        print(f"  {label:<26}{r:5.2f}")


if __name__ == "__main__":
    main()
