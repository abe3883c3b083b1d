"""What a prediction costs after a long stream of one-row updates, against the same forest
fitted at once: a stream leaves the messages from above (the classifier's smoothed
distributions) to be computed along each prediction's path, and its trees' nodes in the
order the stream created them.

    python benches/experiments/online_predict_cost.py [--rows 100000]

Prints, for the regressor and the classifier (10 trees, defaults, 5 features), the wall
time of the stream and of a 50-row and a 1-row prediction on the streamed forest and on a
batch fit of the same rows, measured in the same run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np
from _common import experiment_parser, header, markdown_table

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def microseconds(call: Callable[[], Any], repeats: int) -> float:
    """Mean wall time of ``call`` in µs."""
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1e6


def main() -> None:
    parser: argparse.ArgumentParser = experiment_parser(__doc__)
    parser.add_argument("--rows", type=int, default=100_000, help="rows streamed")
    args = parser.parse_args()
    header()
    rng = np.random.default_rng(0)
    n = args.rows
    X = rng.uniform(size=(n, 5))
    y = 10 * X[:, 0] + np.sin(6 * X[:, 1]) + 0.1 * rng.normal(size=n)
    probes = rng.uniform(size=(50, 5))
    tasks = [
        ("regressor", MondrianForestRegressor, y, {}, "predict"),
        (
            "classifier",
            MondrianForestClassifier,
            (y > 5).astype(int),
            {"classes": [0, 1]},
            "predict_proba",
        ),
    ]

    def rows() -> Iterator[list[str]]:
        for name, make, target, first, method in tasks:
            stream = make(10, random_state=0)
            stream.partial_fit(X[:1], target[:1], **first)
            start = time.perf_counter()
            for i in range(1, n):
                stream.partial_fit(X[i : i + 1], target[i : i + 1])
            streamed = time.perf_counter() - start
            batch = make(10, random_state=0).fit(X, target)
            for label, model in [
                (f"{n:,} one-row updates ({streamed:.1f} s)", stream),
                ("a batch fit", batch),
            ]:
                predict = getattr(model, method)
                many = microseconds(lambda: predict(probes), 50)  # noqa: B023
                one = microseconds(lambda: predict(probes[:1]), 500)  # noqa: B023
                yield [name, label, f"{many:,.0f}", f"{one:,.0f}"]

    print()
    markdown_table(["forest", "after", "50-row prediction µs", "1-row prediction µs"], rows())


if __name__ == "__main__":
    main()
