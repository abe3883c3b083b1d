"""Peak memory of a forest fit and prediction on float32 points (issue 16, item 13).

One measurement per process (``--stage fit`` or ``--stage predict``; without ``--stage``, both,
each in a fresh subprocess): the rise of the process's peak resident set size
(``ru_maxrss``) over its level once the float32 data exist, for ``MondrianForestRegressor``
(4 trees, ``min_samples_split=2000`` so that the trees stay small beside the points, n_jobs=1)
on ``--n`` × ``--d`` standard normal points. ``fit`` fits on them; ``predict`` fits on 10,000
rows first, then predicts (with standard deviations) at the big matrix. Run it with two
builds to compare them (RESULTS.md, issue 16).

Usage::

    python benches/experiments/forest_float32_memory.py --n 2000000 --d 20
"""

from __future__ import annotations

import resource
import subprocess
import sys

import numpy as np
from _common import experiment_parser, header

from mondrian_learn import MondrianForestRegressor


def float32_normal(n: int, d: int, seed: int) -> np.ndarray:
    """An n × d float32 matrix drawn in row blocks (no float64 matrix of that size)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, d), dtype=np.float32)
    for start in range(0, n, 100_000):
        out[start : start + 100_000] = rng.normal(size=(min(100_000, n - start), d))
    return out


def peak_mib() -> float:
    """The process's peak resident set size in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(stage: str, n: int, d: int) -> None:
    X = float32_normal(n, d, 0)
    y = X[:, 0].astype(np.float64) + np.sin(X[:, 1])
    model = MondrianForestRegressor(n_estimators=4, min_samples_split=2000, random_state=0)
    if stage == "predict":
        model.fit(X[:10_000], y[:10_000])
    base = peak_mib()
    if stage == "fit":
        model.fit(X, y)
    else:
        model.predict(X, return_std=True)
    rise = peak_mib() - base
    print(
        f"{stage:8s} n={n} d={d}: float32 data {X.nbytes / 2**20:7.1f} MiB, "
        f"peak rise {rise:7.1f} MiB ({rise * 2**20 / X.nbytes:.2f} × the data)"
    )


def main() -> None:
    parser = experiment_parser(__doc__, n=2_000_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--stage", choices=["fit", "predict"])
    args = parser.parse_args()
    if args.stage:
        measure(args.stage, args.n, args.d)
        return
    header()
    for stage in ("fit", "predict"):
        command = [sys.executable, __file__, "--stage", stage, "--n", str(args.n)]
        subprocess.run([*command, "--d", str(args.d)], check=True)


if __name__ == "__main__":
    main()
