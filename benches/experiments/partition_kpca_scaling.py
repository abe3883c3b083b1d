"""Kernel PCA run time against N (Davies & Ghahramani 2014, Fig. 6), one command:

    flock /tmp/mondrian-bench.lock python benches/experiments/partition_kpca_scaling.py

Top 5 components of points uniform in [0, 1]^10, m = 100 Mondrian partitions (λ = 1),
2 threads, end to end (sampling included), for N = 10⁴ … 10⁶ (and 10⁷ with ``--max-n 1e7``,
which needs about 13 GB of memory). scikit-learn's ``KernelPCA`` with the RBF kernel (exact
kernel matrix; ARPACK, its default eigen-solver for 5 components) is the reference at the sizes
it can hold (its N × N matrix: 8 N² bytes). Prints a table and the exponents of
``time ∝ N^a`` fitted by least squares on the log-log points, and saves the plot.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import experiment_parser, finish_figure, header, pyplot


def _time_ours(n: int) -> float:
    from mondrian_learn.partition import MondrianPartitions, PartitionKernelPCA

    X = np.random.default_rng(n).uniform(size=(n, 10))
    start = time.perf_counter()
    PartitionKernelPCA(
        5,
        sampler=MondrianPartitions(1.0),
        n_partitions=100,
        scale_features=False,
        random_state=0,
        n_jobs=2,
    ).fit(X)
    return time.perf_counter() - start


def _time_sklearn(n: int) -> float:
    from sklearn.decomposition import KernelPCA

    X = np.random.default_rng(n).uniform(size=(n, 10))
    start = time.perf_counter()
    KernelPCA(5, kernel="rbf", gamma=0.1, random_state=0).fit(X)
    return time.perf_counter() - start


def _in_child(which: str, n: int) -> float:
    """Time one fit in a fresh process (no memory left over from larger runs)."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import partition_kpca_scaling as b; print(b._time_{which}({n}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _exponent(ns: list[int], times: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(times), 1)[0])


def main() -> None:
    parser = experiment_parser(__doc__, out="benches/out/partition_kpca_scaling.png")
    parser.add_argument("--max-n", type=float, default=1e6)
    parser.add_argument("--sklearn-max-n", type=float, default=16_000)
    args = parser.parse_args()
    header()
    ours_n = [
        n
        for n in [10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000]
        if n <= args.max_n
    ]
    sk_n = [n for n in [1_000, 2_000, 4_000, 8_000, 16_000] if n <= args.sklearn_max_n]
    ours = []
    print(f"{'N':>10} {'partition KPCA s':>17} {'points/min':>12}")
    for n in ours_n:
        ours.append(_in_child("ours", n))
        print(f"{n:>10,} {ours[-1]:>17.2f} {n / ours[-1] * 60:>12,.0f}", flush=True)
    sk = []
    print(f"{'N':>10} {'sklearn RBF KPCA s':>19}")
    for n in sk_n:
        sk.append(_in_child("sklearn", n))
        print(f"{n:>10,} {sk[-1]:>19.2f}", flush=True)
    fit_from = [i for i, n in enumerate(ours_n) if n >= 100_000]
    a_ours = _exponent([ours_n[i] for i in fit_from], [ours[i] for i in fit_from])
    a_sk = _exponent(sk_n[1:], sk[1:])
    print(
        f"fitted exponent, partition kernel PCA (N ≥ 1e5): {a_ours:.2f}; "
        f"scikit-learn RBF KernelPCA (N ≥ 2,000): {a_sk:.2f}"
    )
    common = [n for n in sk_n if n in ours_n]
    for n in common:
        print(
            f"at N = {n:,}: scikit-learn / ours = {sk[sk_n.index(n)] / ours[ours_n.index(n)]:.1f}"
        )
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.loglog(
        ours_n, ours, "o-", label=f"random partition kernel PCA (m = 100), slope {a_ours:.2f}"
    )
    ax.loglog(sk_n, sk, "s-", label=f"scikit-learn KernelPCA (RBF), slope {a_sk:.2f}")
    ref = np.array([sk_n[0], ours_n[-1]], dtype=float)
    ax.loglog(ref, sk[0] * (ref / sk_n[0]) ** 3, ":", color="grey", label="∝ N³")
    ax.set_ylim(min(ours + sk) / 2, max(ours) * 5)
    finish_figure(
        fig,
        ax,
        args.out,
        "N (points, D = 10)",
        "seconds, top 5 components (2 cores)",
        "Kernel PCA run time against N",
        legend_fontsize=8,
    )


if __name__ == "__main__":
    main()
