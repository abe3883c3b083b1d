"""Partition kernels on Dask (issue 18, item 2): kernel PCA and GP variances on a
``LocalCluster`` whose workers each have less memory than the data, the in-memory ratio where
the in-memory run fits, and the accuracy the subsample option costs. One command per part:

    python benches/experiments/dask_partition_scaling.py --parts kpca --n 10000000
    python benches/experiments/dask_partition_scaling.py --parts kpca_memory --n 1000000
    python benches/experiments/dask_partition_scaling.py --parts gp_variance --n 10000000
    python benches/experiments/dask_partition_scaling.py --parts subsample --samplers mondrian

Data: ``--n`` points uniform in [0, 1]^10 (Friedman-1 targets, noise 1, for the GP), generated
on the workers (``dask.array.random``; the in-memory runs compute the same array), m = 100
Mondrian partitions with λ = 1 (``scale_features=False``), sampler fitted on ``--subsample``
rows (default 100,000).

- ``kpca``: ``mondrian_learn.dask.PartitionKernelPCA(5)`` fit and training scores on a
  LocalCluster of ``--workers`` processes (1 thread each) with ``--memory-limit`` each: wall
  time (labelling, block Lanczos), block products, peak resident memory of every worker,
  bytes moved between workers (``transfer_outgoing_bytes_total``), and the client↔cluster
  bytes of the products (``C × block × 8`` each way per product).
- ``kpca_memory``: the in-memory ``PartitionKernelPCA(5)`` (sampler on every row) and the Dask
  one on the same cluster settings, same N: the ratio. ``kpca_in_memory``: the first alone.
- ``gp_variance``: ``mondrian_learn.dask.PartitionGPRegressor`` with σ² = 1 and s = var(y)
  fixed (CG to 1e-2, at most ``--max-iter`` iterations: the mean is not the point here), then
  ``predict(return_std=True)`` of ``--n-test`` points by the ``"lanczos"`` route (rank 100):
  the decomposition's distributed products and the prediction.
- ``subsample``: the accuracy the sampler fitted on a subsample costs against the sampler
  fitted on every row, at ``--n-accuracy`` points (both fit here): GP test RMSE (σ² = 1,
  s = var(y), CG to 1e-3, 10,000 test points) and kernel PCA eigenvalues, for ``subsample``
  in ``--subsamples`` (default None, 100,000, 30,000, 10,000; Dask's threaded scheduler: the
  accuracy does not depend on where the blocks run), for each sampler of ``--samplers``:
  ``mondrian`` (λ = 1), ``fast_cluster`` (``max_level=10``: at most 1,024 centres, so that
  placing every row stays cheap) and ``random_forest``
  (``RandomForestRegressor(min_samples_leaf=100)`` on the targets; the GP only, as the
  kernel is supervised).
"""

from __future__ import annotations

import os
import resource
import time

import numpy as np
from _common import experiment_parser, header
from _partition_setting import LIFETIME, D, M, in_memory_kpca


def _rss_mb() -> float:
    """Peak resident memory of this process (VmHWM), in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _moved(client: object) -> int:
    return int(
        sum(
            client.run(  # type: ignore[attr-defined]
                lambda dask_worker: dask_worker.transfer_outgoing_bytes_total
            ).values()
        )
    )


def _cluster(args: object) -> tuple[object, object]:
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=args.workers,  # type: ignore[attr-defined]
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,  # type: ignore[attr-defined]
        dashboard_address=None,
    )
    return cluster, Client(cluster)


def _points(n: int, chunk: int) -> tuple[object, object]:
    """Friedman-1 on uniform points, generated block by block (seeded)."""
    import dask.array as da

    X = da.random.RandomState(0).random_sample((n, D), chunks=(chunk, D))
    y = (
        10 * da.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
        + da.random.RandomState(1).standard_normal((n,), chunks=(chunk,))
    )
    return X, y


def part_kpca(args: object) -> None:
    from mondrian_learn.dask import PartitionKernelPCA
    from mondrian_learn.dask._partition_models import _train_scores
    from mondrian_learn.partition import MondrianPartitions

    cluster, client = _cluster(args)
    X, _ = _points(args.n, args.chunk)  # type: ignore[attr-defined]
    start = time.perf_counter()
    pca = PartitionKernelPCA(
        5,
        sampler=MondrianPartitions(LIFETIME),
        n_partitions=M,
        subsample=args.subsample,  # type: ignore[attr-defined]
        scale_features=False,
        random_state=0,
        verbose=1,
    )
    pca.fit(X)
    fit = time.perf_counter() - start
    moved_fit = _moved(client)
    scores = pca._rows().per_block(_train_scores, pca.components_, pca.score_offset_, width=5)
    mean_abs = np.abs(scores).mean(axis=0).compute()
    total = time.perf_counter() - start
    rss = client.run(_rss_mb)  # type: ignore[attr-defined]
    clusters = pca._rows().n_clusters
    block = max(5 + 5, 2 * 5)
    print(
        f"kpca on Dask: N = {args.n}, {args.workers} workers × {args.memory_limit}, chunks "  # type: ignore[attr-defined]
        f"{args.chunk}, C = {clusters}, fit {fit:.1f} s, fit + scores {total:.1f} s, "  # type: ignore[attr-defined]
        f"{pca.n_products_} block products, eigenvalues {np.round(pca.eigenvalues_, 1)}, "
        f"|score| means {np.round(mean_abs, 4)}"
    )
    print(f"  peak RSS per worker (MB): {sorted(round(v) for v in rss.values())}")
    print(
        f"  bytes moved between workers: fit {moved_fit / 1e6:.1f} MB, with the scores "
        f"{_moved(client) / 1e6:.1f} MB; client↔cluster per product ≈ "
        f"{2 * clusters * block * 8 / 1e6:.2f} MB (C × block × 8, each way)"
    )
    print(f"  load {os.getloadavg()[0]:.2f}")
    client.close()  # type: ignore[attr-defined]
    cluster.close()  # type: ignore[attr-defined]


def part_kpca_in_memory(args: object) -> None:
    X, _ = _points(args.n, args.chunk)  # type: ignore[attr-defined]
    X = np.asarray(X.compute())
    start = time.perf_counter()
    pca = in_memory_kpca(X)
    seconds = time.perf_counter() - start
    print(
        f"kpca in memory: N = {args.n}, {seconds:.1f} s, {pca.n_products_} block products, "  # type: ignore[attr-defined]
        f"eigenvalues {np.round(pca.eigenvalues_, 1)}, peak RSS {_rss_mb():.0f} MB, "
        f"load {os.getloadavg()[0]:.2f}"
    )


def part_kpca_memory(args: object) -> None:
    part_kpca_in_memory(args)
    part_kpca(args)


def part_gp_variance(args: object) -> None:
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from mondrian_learn.dask import PartitionGPRegressor
    from mondrian_learn.partition import MondrianPartitions

    cluster, client = _cluster(args)
    X, y = _points(args.n, args.chunk)  # type: ignore[attr-defined]
    var_y = float(y.var().compute())
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp = PartitionGPRegressor(
            MondrianPartitions(LIFETIME),
            n_partitions=M,
            subsample=args.subsample,  # type: ignore[attr-defined]
            noise_variance=1.0,
            signal_variance=var_y,
            tol=1e-2,
            max_iter=args.max_iter,  # type: ignore[attr-defined]
            variance="lanczos",
            variance_rank=100,
            scale_features=False,
            random_state=0,
        ).fit(X, y)
    fit = time.perf_counter() - start
    X_test = np.random.default_rng(2).uniform(size=(args.n_test, D))  # type: ignore[attr-defined]
    dk = gp._rows()
    before = dk.n_products
    start = time.perf_counter()
    gp._variance_factors()
    factor = time.perf_counter() - start
    start = time.perf_counter()
    _, std = gp.predict(X_test, return_std=True)
    predict = time.perf_counter() - start
    print(
        f"gp variances on Dask: N = {args.n}, C = {dk.n_clusters}, fit {fit:.1f} s "  # type: ignore[attr-defined]
        f"({gp.n_iter_} CG iterations, capped at {args.max_iter}); lanczos rank 100: "  # type: ignore[attr-defined]
        f"decomposition {factor:.1f} s ({dk.n_products - before} distributed block products), "
        f"then {args.n_test} points {predict:.1f} s; std range {std.min():.3f}–{std.max():.3f}; "  # type: ignore[attr-defined]
        f"peak RSS per worker (MB) {sorted(round(v) for v in client.run(_rss_mb).values())}; "  # type: ignore[attr-defined]
        f"load {os.getloadavg()[0]:.2f}"
    )
    client.close()  # type: ignore[attr-defined]
    cluster.close()  # type: ignore[attr-defined]


def _sampler(name: str) -> object:
    from sklearn.ensemble import RandomForestRegressor

    from mondrian_learn.partition import (
        FastClusterPartitions,
        MondrianPartitions,
        RandomForestPartitions,
    )

    return {
        "mondrian": lambda: MondrianPartitions(LIFETIME),
        "fast_cluster": lambda: FastClusterPartitions(max_level=10),
        "random_forest": lambda: RandomForestPartitions(
            RandomForestRegressor(min_samples_leaf=100)
        ),
    }[name]()


def part_subsample(args: object) -> None:
    import dask

    from mondrian_learn.dask import PartitionGPRegressor, PartitionKernelPCA

    n = args.n_accuracy  # type: ignore[attr-defined]
    X, y = _points(n + 10_000, 50_000)
    with dask.config.set(scheduler="threads"):
        X, y = X.persist(), y.persist()
        X_train, y_train = X[:n], y[:n]
        X_test, y_test = X[n:].compute(), y[n:].compute()
        var_y = float(y_train.var().compute())
        for name in args.samplers:  # type: ignore[attr-defined]
            print(f"subsample accuracy: N = {n}, m = {M}, sampler {_sampler(name)}")
            print("| subsample | clusters C | GP test RMSE | CG iterations | KPCA eigenvalues |")
            print("|---|---:|---:|---:|---|")
            for subsample in args.subsamples:  # type: ignore[attr-defined]
                gp = PartitionGPRegressor(
                    _sampler(name),
                    n_partitions=M,
                    subsample=subsample,
                    noise_variance=1.0,
                    signal_variance=var_y,
                    tol=1e-3,
                    max_iter=3000,
                    scale_features=False,
                    random_state=0,
                    n_jobs=2,
                ).fit(X_train, y_train)
                rmse = float(np.sqrt(np.mean((gp.predict(X_test) - y_test) ** 2)))
                eigenvalues = "—"
                if name != "random_forest":
                    pca = PartitionKernelPCA(
                        5,
                        sampler=_sampler(name),
                        n_partitions=M,
                        subsample=subsample,
                        scale_features=False,
                        random_state=0,
                        n_jobs=2,
                    ).fit(X_train)
                    eigenvalues = str(np.round(pca.eigenvalues_, 1))
                print(
                    f"| {subsample} | {gp._rows().n_clusters} | {rmse:.4f} | {gp.n_iter_} | "
                    f"{eigenvalues} |",
                    flush=True,
                )
            print(f"  load {os.getloadavg()[0]:.2f}", flush=True)


PARTS = {
    "kpca": part_kpca,
    "kpca_memory": part_kpca_memory,
    "kpca_in_memory": part_kpca_in_memory,
    "gp_variance": part_gp_variance,
    "subsample": part_subsample,
}


def main() -> None:
    parser = experiment_parser(__doc__, n=10_000_000)
    parser.add_argument("--parts", nargs="*", default=["subsample"])
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3.5GiB")
    parser.add_argument("--subsample", type=int, default=100_000)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--max-iter", type=int, default=20)
    parser.add_argument("--n-accuracy", type=int, default=200_000)
    parser.add_argument(
        "--subsamples",
        nargs="*",
        type=lambda v: None if v == "None" else int(v),
        default=[None, 100_000, 30_000, 10_000],
    )
    parser.add_argument(
        "--samplers",
        nargs="*",
        default=["mondrian"],
        choices=["mondrian", "fast_cluster", "random_forest"],
    )
    args = parser.parse_args()
    header()
    for part in args.parts:
        PARTS[part](args)


if __name__ == "__main__":
    main()
