"""Speed and memory goals of the random partition kernels (issue 5), one command:

    flock /tmp/mondrian-bench.lock python benches/experiments/partition_speed.py

N = 1,000,000 points uniform in [0, 1]^10 (``make_friedman1``, noise 1), m = 100 Mondrian
partitions with lifetime λ = 1, 2 threads. Each part runs in its own process so that its peak
resident memory (``ru_maxrss``) is its own:

- ``product``: the bandwidth yardstick (one parallel read of the 400 MB of labels, in Rust, and
  a NumPy sum over an array of the same size) next to one product ``K̂ v`` and one ``K̂ V`` with
  8 columns (best of 5 each), and the sampling time.
- ``kpca``: ``PartitionKernelPCA(5)`` end to end (sampling included). Goal ≤ 60 s, ≤ 2 GB.
- ``gp``: ``PartitionGPRegressor`` posterior mean end to end (sampling, CG to relative
  residual 1e-2 with σ² = 1 and s = var(y), prediction at 10,000 test points), without a
  preconditioner, with Jacobi and with the preconditioner of eq. 9–10. Goal ≤ 120 s.
- ``preconditioners``: CG iterations and seconds to relative residual 1e-3 for no
  preconditioner, Jacobi and eq. 9–10, on N = 100,000 of the same points (targets centred),
  Mondrian, Random Forest and Fast Cluster partitions (m = 100), s = var(y) and
  σ² ∈ {1, 0.1, 0.01} (noise relative to a signal of variance ≈ 24: the smaller σ², the
  worse conditioned the system).

``--parts`` runs a subset (each part is a few minutes on 2 cores).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import numpy as np
from _common import experiment_parser, header
from _partition_setting import LIFETIME, D, M, in_memory_kpca
from sklearn.datasets import make_friedman1

N = 1_000_000


def _best(f: object, repeats: int = 5) -> float:
    """Best wall time of ``repeats`` calls (the least disturbed by other processes)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def _cpu(f: object, repeats: int = 5) -> float:
    """Mean CPU seconds (all threads) per call: what the work costs whatever the load."""
    start = time.process_time()
    for _ in range(repeats):
        f()  # type: ignore[operator]
    return (time.process_time() - start) / repeats


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def part_product() -> dict:
    from mondrian_learn.partition import MondrianPartitions, RandomPartitionKernel

    X, _ = make_friedman1(N, n_features=D, random_state=0)
    start = time.perf_counter()
    kernel = RandomPartitionKernel(
        MondrianPartitions(LIFETIME), n_partitions=M, scale_features=False, random_state=0, n_jobs=2
    ).fit(X)
    sampling = time.perf_counter() - start
    core = kernel.model_
    stream = _best(lambda: core.stream_labels(2))
    array = np.ones(N * M // 2)  # float64: the same 400 MB as the u32 labels
    numpy_sum = _best(lambda: array.sum())
    v = np.random.default_rng(0).normal(size=(N, 1))
    V = np.random.default_rng(1).normal(size=(N, 8))
    product = _best(lambda: core.matmul(v, 2))
    product8 = _best(lambda: core.matmul(V, 2))
    cpu = {
        "stream_labels_cpu_s": _cpu(lambda: core.stream_labels(2)),
        "product_k1_cpu_s": _cpu(lambda: core.matmul(v, 2)),
        "product_k8_cpu_s": _cpu(lambda: core.matmul(V, 2)),
    }
    return {
        "sampling_s": sampling,
        "clusters_per_partition": float(kernel.n_clusters_.mean()),
        "tree_nodes_per_partition": float(core.tree_nodes().mean()),
        "label_bytes": 4 * N * M,
        "stream_labels_s": stream,
        "numpy_sum_s": numpy_sum,
        "product_k1_s": product,
        "product_k8_s": product8,
        **cpu,
        "peak_mb": _peak_mb(),
    }


def part_kpca() -> dict:
    X, _ = make_friedman1(N, n_features=D, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    pca = in_memory_kpca(X)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_s": time.process_time() - cpu,
        "block_products": pca.n_products_,
        "eigenvalues": pca.eigenvalues_.tolist(),
        "max_relative_residual": float(np.max(pca.residuals_) / pca.eigenvalues_[0]),
        "peak_mb": _peak_mb(),
    }


def part_gp(preconditioner: str = "none") -> dict:
    from mondrian_learn.partition import MondrianPartitions, PartitionGPRegressor

    X, y = make_friedman1(N + 10_000, n_features=D, noise=1.0, random_state=0)
    X_train, y_train, X_test, y_test = X[:N], y[:N], X[N:], y[N:]
    start, cpu = time.perf_counter(), time.process_time()
    gp = PartitionGPRegressor(
        MondrianPartitions(LIFETIME),
        n_partitions=M,
        scale_features=False,
        noise_variance=1.0,
        signal_variance=float(np.var(y_train)),
        preconditioner=preconditioner,
        tol=1e-2,
        max_iter=3000,
        random_state=0,
        n_jobs=2,
    ).fit(X_train, y_train)
    fit = time.perf_counter() - start
    mean = gp.predict(X_test)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_s": time.process_time() - cpu,
        "fit_s": fit,
        "cg_iterations": gp.n_iter_,
        "test_rmse": float(np.sqrt(np.mean((mean - y_test) ** 2))),
        "std_y": float(np.std(y_test)),
        "peak_mb": _peak_mb(),
    }


def part_preconditioners() -> dict:
    from mondrian_learn.partition import (
        FastClusterPartitions,
        MondrianPartitions,
        RandomForestPartitions,
        RandomPartitionKernel,
    )

    n = 100_000
    X, y = make_friedman1(n, n_features=D, noise=1.0, random_state=0)
    y = y - y.mean()
    s = float(np.var(y))
    samplers = {
        "Mondrian λ=1": MondrianPartitions(LIFETIME),
        "Random Forest": RandomForestPartitions(),
        "Fast Cluster": FastClusterPartitions(),
    }
    rows = []
    for name, sampler in samplers.items():
        kernel = RandomPartitionKernel(
            sampler, n_partitions=M, scale_features=False, random_state=0, n_jobs=2
        ).fit(X, y)
        for noise in (1.0, 0.1, 0.01):
            for pre in ("none", "jacobi", "partition"):
                start = time.perf_counter()
                _, info = kernel.solve(y, noise, s, pre, tol=1e-3, max_iter=3000)
                seconds = time.perf_counter() - start
                rows.append(
                    [
                        name,
                        noise,
                        pre,
                        int(info["iterations"][0]),
                        bool(info["converged"][0]),
                        seconds,
                    ]
                )
    return {"n": n, "signal_variance": s, "rows": rows, "peak_mb": _peak_mb()}


PARTS = {
    "product": part_product,
    "kpca": part_kpca,
    "gp": part_gp,
    "gp_jacobi_preconditioner": lambda: part_gp("jacobi"),
    "gp_partition_preconditioner": lambda: part_gp("partition"),
    "preconditioners": part_preconditioners,
}


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--part", choices=sorted(PARTS), help="run one part (internal)")
    parser.add_argument("--parts", nargs="*", choices=list(PARTS), default=list(PARTS))
    args = parser.parse_args()
    if args.part:
        print(json.dumps(PARTS[args.part]()))
        return
    header()
    results = {}
    for part in args.parts:
        out = subprocess.run(
            [sys.executable, __file__, "--part", part], capture_output=True, text=True, check=True
        )
        results[part] = json.loads(out.stdout.strip().splitlines()[-1])
        print(part, json.dumps(results[part]), flush=True)
    _report(results)


def _report(results: dict) -> None:
    """The goals' lines for whichever parts ran."""
    if "product" in results:
        _report_product(results["product"])
    if "kpca" in results:
        k = results["kpca"]
        print(
            f"kernel PCA top 5: {k['seconds']:.1f} s (CPU {k['cpu_s']:.1f} s; goal ≤ 60 s), "
            f"peak {k['peak_mb']:.0f} MB (goal ≤ 2048 MB), {k['block_products']} block products"
        )
    for part, label in [
        ("gp", "no"),
        ("gp_jacobi_preconditioner", "Jacobi"),
        ("gp_partition_preconditioner", "eq. 9–10"),
    ]:
        if part not in results:
            continue
        g = results[part]
        print(
            f"GP posterior mean, {label} preconditioner: {g['seconds']:.1f} s (CPU "
            f"{g['cpu_s']:.1f} s; goal ≤ 120 s; fit {g['fit_s']:.1f} s, {g['cg_iterations']} "
            f"CG iterations to tol 1e-2), peak {g['peak_mb']:.0f} MB, test RMSE "
            f"{g['test_rmse']:.3f} (std of y {g['std_y']:.3f}, noise 1)"
        )
    if "preconditioners" in results:
        r = results["preconditioners"]
        print(
            f"\nCG to tol 1e-3, N = {r['n']:,}, m = {M}, s = {r['signal_variance']:.2f}: "
            "iterations (seconds)"
        )
        print("| partitions | σ² | none | Jacobi | eq. 9–10 |")
        print("|---|---:|---:|---:|---:|")
        for i in range(0, len(r["rows"]), 3):
            cells = [
                f"{its}{'' if ok else ' (not converged)'} ({sec:.1f} s)"
                for _, _, _, its, ok, sec in r["rows"][i : i + 3]
            ]
            name, noise = r["rows"][i][:2]
            print(f"| {name} | {noise:g} | " + " | ".join(cells) + " |")


def _report_product(p: dict) -> None:
    gb = p["label_bytes"] / 1e9
    print(
        f"\nlabels: {gb:.1f} GB ({M} partitions × {N:,} points, u32); "
        f"{p['clusters_per_partition']:.0f} clusters and {p['tree_nodes_per_partition']:.0f} "
        f"tree nodes per partition; sampling {p['sampling_s']:.1f} s"
    )
    print(
        f"bandwidth yardstick: read labels once {p['stream_labels_s'] * 1e3:.1f} ms "
        f"({gb / p['stream_labels_s']:.1f} GB/s); NumPy sum of 400 MB "
        f"{p['numpy_sum_s'] * 1e3:.1f} ms ({0.4 / p['numpy_sum_s']:.1f} GB/s, one thread)"
    )
    ratio = p["product_k1_s"] / p["stream_labels_s"]
    print(
        f"one product K̂v: {p['product_k1_s'] * 1e3:.1f} ms = {ratio:.2f}× the read "
        f"(goal ≤ 3×); K̂V with 8 columns: {p['product_k8_s'] * 1e3:.1f} ms "
        f"({p['product_k8_s'] / p['product_k1_s']:.2f}× one column)"
    )
    print(
        f"CPU time per call (both threads): read {p['stream_labels_cpu_s'] * 1e3:.1f} ms, "
        f"K̂v {p['product_k1_cpu_s'] * 1e3:.1f} ms, K̂V (8) {p['product_k8_cpu_s'] * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
