"""Online-learning throughput of ``MondrianForestRegressor.partial_fit`` against river's AMF.

What it measures
----------------
Wall-clock throughput (``time.perf_counter``, best of ``--repeats``), each run
starting from an unfitted model, on one stream of ``make_friedman1`` points
(D=10, ``random_state=0``), 10 trees, ``min_samples_split=10``, ``lifetime=inf``,
``n_jobs=2``:

* ours, chunked: ``partial_fit`` on consecutive chunks of ``--chunk-size``
  points (default 10,000) over ``--n`` points (default 1,000,000) -> samples/s;
* ours, one point per call: ``partial_fit(X[i:i+1], y[i:i+1])`` for the first
  ``--n-single`` points (default 100,000) -> calls/s (= samples/s), which
  includes the per-call overhead of validation and crossing into Rust, once with
  ``posterior="exact"`` (recomputed once, by the final prediction inside the timed
  region) and once with ``posterior="fast"`` (updated along each point's paths);
* peer: ``river.forest.AMFRegressor(n_estimators=10, seed=0).learn_one(x, y)``
  with ``x`` a ``dict`` row, on the same first ``--n-river`` points (default
  100,000) -> samples/s. Building the dicts is not timed.

Prints samples/s for each, the held-out RMSE on ``--n-test`` points as a sanity
check, and the ratios ours / river. The single-point run and river see the same
prefix of the stream, so that ratio compares like with like; the chunked run
sees a longer stream (deeper trees), which only makes it harder for ours.
If river is not installed the river row and ratios are skipped with a message.

Issues served
-------------
The foundation issue's goal: ``partial_fit`` throughput at least 1000x river's
``AMFRegressor.learn_one``; issue 3's: 100,000 one-point calls at least 100x faster than
river. Results and the measured ratios are in RESULTS.md.

Usage
-----
    python benches/experiments/forest_partial_fit_speed.py                   # full size
    python benches/experiments/forest_partial_fit_speed.py --n 100000 --n-single 2000 --n-river 2000

Requires ``mondrian_learn`` to be installed (``pip install .`` from the
repository root); ``pip install river`` for the peer.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from _common import (
    FloatArray,
    add_forest_options,
    experiment_parser,
    import_mondrian_forest_regressor,
    machine_info,
    print_rule_header,
    rmse,
)
from sklearn.datasets import make_friedman1

N_FEATURES = 10


@dataclass
class StreamResult:
    """Throughput and sanity figures for one way of learning the stream."""

    name: str
    n_points: int
    best_seconds: float
    test_rmse: float
    n_leaves: int | None

    @property
    def samples_per_second(self) -> float:
        """Points learned per wall-clock second (best run)."""
        return self.n_points / self.best_seconds


def import_river_amf() -> tuple[type | None, str]:
    """Return ``(river.forest.AMFRegressor, version)`` or ``(None, reason)``."""
    try:
        import river
        from river.forest import AMFRegressor
    except ImportError as error:
        return None, str(error)
    return AMFRegressor, river.__version__


def best_of(repeats: int, name: str, learn_stream: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``learn_stream`` (which builds and trains a fresh model) ``repeats`` times.

    Returns the best wall-clock seconds and the model of the last run.
    """
    seconds: list[float] = []
    model = None
    for _ in range(repeats):
        model = None  # free the previous run's model outside the timed region
        start = time.perf_counter()
        model = learn_stream()
        seconds.append(time.perf_counter() - start)
        print(f"  {name}: {seconds[-1]:.3f} s", flush=True)
    return min(seconds), model


def timed_stream(
    name: str,
    learn_stream: Callable[[], Any],
    y: FloatArray,
    test: tuple[FloatArray, FloatArray],
    repeats: int,
) -> StreamResult:
    """The best of ``repeats`` runs of ``learn_stream`` over the ``len(y)`` points, with the
    held-out RMSE and the leaves of the last model."""
    seconds, model = best_of(repeats, name, learn_stream)
    test_rmse = rmse(model.predict(test[0]), test[1])
    return StreamResult(name, len(y), seconds, test_rmse, int(np.sum(model.n_leaves_)))


def bench_ours_chunked(
    make_model: Callable[[], Any],
    stream: tuple[FloatArray, FloatArray],
    test: tuple[FloatArray, FloatArray],
    chunk_size: int,
    repeats: int,
) -> StreamResult:
    """``partial_fit`` on consecutive chunks of the whole stream."""
    X, y = stream

    def learn_stream() -> Any:
        model = make_model()
        for begin in range(0, len(y), chunk_size):
            model.partial_fit(X[begin : begin + chunk_size], y[begin : begin + chunk_size])
        return model

    return timed_stream(f"ours partial_fit, chunks of {chunk_size}", learn_stream, y, test, repeats)


def bench_ours_single(
    make_model: Callable[[], Any],
    stream: tuple[FloatArray, FloatArray],
    test: tuple[FloatArray, FloatArray],
    repeats: int,
    posterior: str,
) -> StreamResult:
    """``partial_fit`` one point (a 1-row array) per call, then one prediction inside the
    timed region, so that the model ends ready to predict (the exact mode recomputes its
    posterior there, once)."""
    X, y = stream

    def learn_stream() -> Any:
        model = make_model(posterior)
        for i in range(len(y)):
            model.partial_fit(X[i : i + 1], y[i : i + 1])
        model.predict(X[:1])
        return model

    name = f"ours partial_fit, 1 point per call, posterior={posterior}"
    return timed_stream(name, learn_stream, y, test, repeats)


def bench_river(
    amf_regressor: type,
    stream: tuple[FloatArray, FloatArray],
    test: tuple[FloatArray, FloatArray],
    n_estimators: int,
    seed: int,
    repeats: int,
) -> StreamResult:
    """Time river's ``AMFRegressor.learn_one`` on dict rows (dict building not timed)."""
    names = [f"x{j}" for j in range(stream[0].shape[1])]
    rows = [dict(zip(names, row)) for row in stream[0].tolist()]
    targets = stream[1].tolist()
    test_rows = [dict(zip(names, row)) for row in test[0].tolist()]

    def learn_stream() -> Any:
        model = amf_regressor(n_estimators=n_estimators, seed=seed)
        for x, target in zip(rows, targets):
            model.learn_one(x, target)
        return model

    name = f"river AMFRegressor learn_one (n_estimators={n_estimators})"
    seconds, model = best_of(repeats, name, learn_stream)
    prediction = np.array([model.predict_one(x) for x in test_rows], dtype=np.float64)
    return StreamResult(name, len(targets), seconds, rmse(prediction, test[1]), None)


def print_table(results: list[StreamResult]) -> None:
    """One row per way of learning: points, seconds, samples/s, test RMSE, leaves."""
    print_rule_header(
        f"{'method':<52} {'points':>9} {'seconds':>9} {'samples/s':>11} "
        f"{'test RMSE':>9} {'leaves':>9}"
    )
    for result in results:
        leaves = "-" if result.n_leaves is None else str(result.n_leaves)
        print(
            f"{result.name:<52} {result.n_points:>9d} {result.best_seconds:>9.3f} "
            f"{result.samples_per_second:>11.0f} {result.test_rmse:>9.4f} {leaves:>9}"
        )


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    parser = experiment_parser(__doc__)
    parser.add_argument(
        "--n", type=int, default=1_000_000, help="points streamed in chunks (0: skip)"
    )
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--n-single", type=int, default=100_000, help="1-point partial_fit calls")
    parser.add_argument(
        "--n-river", type=int, default=100_000, help="river learn_one points (0 skips river)"
    )
    parser.add_argument("--n-test", type=int, default=2_000, help="held-out points for RMSE")
    parser.add_argument("--repeats", type=int, default=1, help="runs per method (best kept)")
    add_forest_options(parser)
    args = parser.parse_args()
    if min(args.chunk_size, args.n_single, args.n_test, args.repeats) < 1:
        parser.error("--chunk-size, --n-single, --n-test and --repeats must be >= 1")
    if args.n < 0:
        parser.error("--n must be >= 0 (0 skips the chunked run)")
    if args.n_river < 0:
        parser.error("--n-river must be >= 0")
    return args


def main() -> None:
    """Run the three throughput measurements and print the table and ratios."""
    args = parse_args()
    mondrian_forest_regressor = import_mondrian_forest_regressor()
    amf_regressor, river_version = import_river_amf()
    if amf_regressor is None:
        print(f"river is NOT available ({river_version}); skipping river and ratios.")
        print("Install it with `pip install river` to compare.")
        river_version = "not installed"
    print(machine_info(f"river {river_version}"))

    n_stream = max(args.n, args.n_single, args.n_river)
    X, y = make_friedman1(
        n_samples=n_stream + args.n_test,
        n_features=N_FEATURES,
        noise=args.noise,
        random_state=args.seed,
    )
    X = np.ascontiguousarray(X, dtype=np.float64)
    test = (X[n_stream:], y[n_stream:])
    print(
        f"data: make_friedman1 stream, D={N_FEATURES}, noise={args.noise}, "
        f"N_test={args.n_test}; {args.n_estimators} trees, "
        f"min_samples_split={args.min_samples_split}, lifetime=inf, "
        f"n_jobs={args.n_jobs}, best of {args.repeats}\n",
        flush=True,
    )

    def make_model(posterior: str = "exact") -> Any:
        return mondrian_forest_regressor(
            n_estimators=args.n_estimators,
            min_samples_split=args.min_samples_split,
            lifetime=float("inf"),
            random_state=args.seed,
            n_jobs=args.n_jobs,
            posterior=posterior,
        )

    results = []
    if args.n > 0:
        results.append(
            bench_ours_chunked(
                make_model, (X[: args.n], y[: args.n]), test, args.chunk_size, args.repeats
            )
        )
    for posterior in ("exact", "fast"):
        results.append(
            bench_ours_single(
                make_model, (X[: args.n_single], y[: args.n_single]), test, args.repeats, posterior
            )
        )
    ours = list(results)
    river_result = None
    if amf_regressor is not None and args.n_river > 0:
        river_result = bench_river(
            amf_regressor,
            (X[: args.n_river], y[: args.n_river]),
            test,
            args.n_estimators,
            args.seed,
            args.repeats,
        )
        results.append(river_result)

    print()
    print_table(results)
    print()
    if river_result is None:
        print("ratios ours / river: skipped (river not run).")
        return
    for result in ours:
        ratio = result.samples_per_second / river_result.samples_per_second
        print(f"samples/s ratio ({result.name}) / river = {ratio:8.2f}")


if __name__ == "__main__":
    main()
