"""Predictive variances of ``PartitionGPRegressor`` (issue 18, item 3), one command per case:

    python benches/experiments/partition_gp_variance.py --cases cpu_act smooth50k large

Routes, all on the same fitted GP, timed in the same process:

- ``legacy``: the route before issue 18 (re-implemented here from its public parts): one CG
  solve per point on the training points' system ``(s K̂ + σ² V⁻¹) z = k*``, 64 points per
  call into the core, ``var = s + σ² − k*ᵀ z`` (``--legacy``: it is slow).
- ``exact``: ``variance="exact"``, one call into the core: ``φ*ᵀ (M + ρI)⁻¹ φ*`` by CG in the
  clusters' space, blocks of points in parallel, ``var = σ² + s (1 − ‖φ*‖²) + σ² q``.
- ``lanczos r``: ``variance="lanczos", variance_rank=r`` (LOVE): first call (decomposition
  included) and a second call, and its errors against ``exact`` (the exact route at
  ``tol=1e-8``, so that its own error does not count), with the certified bracket of
  ``predict_std_bounds``.

Cases:

- ``cpu_act``: the whole training split of cpu_act (7,692 × 21, the 842 s case of
  ``partition_gp_accuracy.py``: Random Forest partitions, m = 200, variances by marginal
  likelihood, features and targets standardised), its 500 test points.
- ``smooth50k``: N = 50,000 points uniform in [0, 1]², y = sin(6 x₁) cos(4 x₂) + N(0, 0.01),
  the default GP (Mondrian λ = 1, m = 100), 200 test points (the issue's "2.5 minutes").
- ``large``: N = ``--n-large`` (10⁶) Friedman-1 points in [0, 1]^10 (noise 1), Mondrian λ = 1,
  m = 100, σ² = 1 and s = var(y) fixed, fit to CG relative residual 1e-2 (as
  ``partition_speed.py``); variances of ``--n-test-large`` (10⁵) new points by ``lanczos``; the
  exact route on the first ``--n-exact`` of them for the errors (and its time per point).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from _common import experiment_parser, header
from scipy.stats import norm


def legacy_std(gp: object, X: np.ndarray) -> np.ndarray:
    """The predictive standard deviations as ``PartitionGPRegressor.predict`` computed them
    before issue 18 (one CG solve per point on the training points, 64 per call)."""
    kernel, s, noise = gp.kernel_, gp.signal_variance_, gp.noise_variance_  # type: ignore[attr-defined]
    labels, weights = kernel.assign(X)
    threads = gp._threads()  # type: ignore[attr-defined]
    var = np.empty(X.shape[0])
    for start in range(0, X.shape[0], 64):
        part = slice(start, start + 64)
        w = None if weights is None else np.ascontiguousarray(weights[:, part])
        k_star = s * kernel.model_.cross_columns(np.ascontiguousarray(labels[:, part]), w, threads)
        z, _ = kernel.solve(
            k_star,
            noise,
            s,
            gp.preconditioner,  # type: ignore[attr-defined]
            gp.tol,  # type: ignore[attr-defined]
            gp.max_iter,  # type: ignore[attr-defined]
            gp.sample_weight_,  # type: ignore[attr-defined]
        )
        var[part] = s + noise - np.einsum("ij,ij->j", k_star, z)
    return np.sqrt(np.maximum(var, noise))


def timed(f: object) -> tuple[object, float]:
    start = time.perf_counter()
    out = f()  # type: ignore[operator]
    return out, time.perf_counter() - start


def compare(
    gp: object, X: np.ndarray, y: np.ndarray | None, ranks: list[int], legacy: bool
) -> None:
    """Time every route on ``X`` and print the errors of the fast ones against the exact."""
    gp.set_params(variance="exact")  # type: ignore[attr-defined]
    (mean, std), exact_seconds = timed(lambda: gp.predict(X, return_std=True))  # type: ignore[attr-defined]
    seconds = exact_seconds
    print(f"  exact (tol={gp.tol}): {seconds:.2f} s ({1e3 * seconds / len(X):.2f} ms/point)")  # type: ignore[attr-defined]
    tol = gp.tol  # type: ignore[attr-defined]
    gp.set_params(tol=1e-8)  # type: ignore[attr-defined]
    (_, reference), seconds = timed(lambda: gp.predict(X, return_std=True))  # type: ignore[attr-defined]
    gp.set_params(tol=tol)  # type: ignore[attr-defined]
    print(
        f"  exact (tol=1e-8): {seconds:.2f} s; the tol={tol} route's largest relative std "
        f"error {np.max(np.abs(std / reference - 1)):.2e}"
    )
    rows = [("exact", std, exact_seconds)]
    if legacy:
        old, seconds = timed(lambda: legacy_std(gp, X))
        print(
            f"  legacy (before issue 18): {seconds:.2f} s; largest relative std error "
            f"{np.max(np.abs(old / reference - 1)):.2e}"
        )
        rows.append(("legacy", old, seconds))
    for rank in ranks:
        gp.set_params(variance="lanczos", variance_rank=rank)  # type: ignore[attr-defined]
        (_, fast), first = timed(lambda: gp.predict(X, return_std=True))  # type: ignore[attr-defined]
        _, again = timed(lambda: gp.predict(X, return_std=True))  # type: ignore[attr-defined]
        (lower, upper), _ = timed(lambda: gp.predict_std_bounds(X))  # type: ignore[attr-defined]
        error = fast / reference - 1
        inside = bool(
            np.all(lower <= reference * (1 + 1e-6)) and np.all(upper >= reference * (1 - 1e-6))
        )
        print(
            f"  lanczos rank {rank}: {first:.2f} s first call, {again:.3f} s again; std error "
            f"median {np.median(error):+.4f}, 90 % {np.quantile(error, 0.9):+.4f}, max "
            f"{np.max(error):+.4f}; bracket width median "
            f"{np.median(upper / lower - 1):.4f}, exact inside: {inside}"
        )
        rows.append((f"lanczos {rank}", fast, first))
    if y is not None:
        print("  | route | seconds | test MSE | test log-lik |")
        for name, s, seconds in rows:
            print(
                f"  | {name} | {seconds:.2f} | {np.mean((mean - y) ** 2):.4f} | "
                f"{np.mean(norm.logpdf(y, mean, s)):+.4f} |"
            )
    gp.set_params(variance="exact")  # type: ignore[attr-defined]


def case_cpu_act(args: object) -> None:
    import pandas as pd

    from mondrian_learn.partition import PartitionGPRegressor, RandomForestPartitions

    frame = pd.read_csv(Path(args.data) / "cpu_act.csv")  # type: ignore[attr-defined]
    X, y = frame.iloc[:, :-1].to_numpy(float), frame.iloc[:, -1].to_numpy(float)
    order = np.random.default_rng(0).permutation(len(y))
    test, train = order[:500], order[500:]
    mu, sd = X[train].mean(0), X[train].std(0)
    sd = np.where(sd > 0, sd, 1.0)
    Xs, Xt = (X[train] - mu) / sd, (X[test] - mu) / sd
    ys, yt = (
        (y[train] - y[train].mean()) / y[train].std(),
        (y[test] - y[train].mean()) / y[train].std(),
    )
    gp, seconds = timed(
        lambda: PartitionGPRegressor(
            RandomForestPartitions(),
            n_partitions=200,
            tol=1e-3,
            scale_features=False,
            random_state=0,
            n_jobs=2,
        ).fit(Xs, ys)
    )
    print(
        f"cpu_act: N = {len(train)}, fit {seconds:.1f} s, σ² = {gp.noise_variance_:.3g}, "
        f"s = {gp.signal_variance_:.3g}, clusters {gp.kernel_.n_clusters_.sum()}"
    )
    compare(gp, Xt, yt, args.ranks, args.legacy)  # type: ignore[attr-defined]


def case_smooth50k(args: object) -> None:
    from mondrian_learn.partition import PartitionGPRegressor

    rng = np.random.default_rng(0)
    n = 50_000
    X = rng.uniform(size=(n + 200, 2))
    y = np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1]) + 0.1 * rng.normal(size=n + 200)
    gp, seconds = timed(lambda: PartitionGPRegressor(random_state=0, n_jobs=2).fit(X[:n], y[:n]))
    print(
        f"smooth50k: N = {n}, fit {seconds:.1f} s ({gp.n_iter_} CG iterations), "
        f"σ² = {gp.noise_variance_:.3g}, s = {gp.signal_variance_:.3g}, "
        f"clusters {gp.kernel_.n_clusters_.sum()}"
    )
    compare(gp, X[n:], y[n:], args.ranks, args.legacy)  # type: ignore[attr-defined]


def case_large(args: object) -> None:
    from sklearn.datasets import make_friedman1

    from mondrian_learn.partition import MondrianPartitions, PartitionGPRegressor

    n, n_test = args.n_large, args.n_test_large  # type: ignore[attr-defined]
    X, y = make_friedman1(n + n_test, n_features=10, noise=1.0, random_state=0)
    gp, seconds = timed(
        lambda: PartitionGPRegressor(
            MondrianPartitions(1.0),
            n_partitions=100,
            scale_features=False,
            noise_variance=1.0,
            signal_variance=float(np.var(y[:n])),
            tol=1e-2,
            max_iter=3000,
            random_state=0,
            n_jobs=2,
        ).fit(X[:n], y[:n])
    )
    print(
        f"large: N = {n}, fit {seconds:.1f} s ({gp.n_iter_} CG iterations), clusters "
        f"{gp.kernel_.n_clusters_.sum()}, load {os.getloadavg()[0]:.2f}"
    )
    X_test = X[n:]
    _, mean_seconds = timed(lambda: gp.predict(X_test))
    print(f"  means of {n_test} points: {mean_seconds:.2f} s")
    few = X_test[: args.n_exact]  # type: ignore[attr-defined]
    gp.set_params(variance="exact")
    (_, exact), seconds = timed(lambda: gp.predict(few, return_std=True))
    print(
        f"  exact on {len(few)} of them: {seconds:.1f} s ({seconds / len(few):.2f} s/point, "
        f"so {seconds / len(few) * n_test / 3600:.1f} h for all {n_test})"
    )
    for rank in args.ranks:  # type: ignore[attr-defined]
        gp.set_params(variance="lanczos", variance_rank=rank)
        (_, fast), first = timed(lambda: gp.predict(X_test, return_std=True))
        _, again = timed(lambda: gp.predict(X_test, return_std=True))
        lower, upper = gp.predict_std_bounds(few)
        error = fast[: len(few)] / exact - 1
        print(
            f"  lanczos rank {rank}, {n_test} points: {first:.1f} s first call "
            f"(decomposition included), {again:.2f} s again; load {os.getloadavg()[0]:.2f}; "
            f"on the {len(few)}: std error median {np.median(error):+.4f}, max "
            f"{np.max(error):+.4f}, bracket width median {np.median(upper / lower - 1):.4f}"
        )


CASES = {"cpu_act": case_cpu_act, "smooth50k": case_smooth50k, "large": case_large}


def main() -> None:
    parser = experiment_parser(__doc__, data=True)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--ranks", nargs="*", type=int, default=[100, 400, 1600])
    parser.add_argument("--legacy", action="store_true", help="also time the route before")
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--n-test-large", type=int, default=100_000)
    parser.add_argument("--n-exact", type=int, default=32)
    args = parser.parse_args()
    header()
    for case in args.cases:
        CASES[case](args)


if __name__ == "__main__":
    main()
