"""Sparse input to the forests (issue 16, item 13): one-hot categories, as a
``ColumnTransformer`` hands them over, against the same values densified by the user first.

Data: ``--n`` rows of ``--categories`` one-hot columns (one category per row) and 4 uniform
numeric columns; y = a per-category effect + sin(6 x₀) + noise. ``MondrianForestRegressor``
(10 trees, defaults otherwise, n_jobs=2) fitted on the first ``--train`` rows and asked for
means and standard deviations at all ``--n`` rows, from the CSR matrix and from
``X.toarray()``; scikit-learn's ``ExtraTreesRegressor`` (10 trees, which reads CSR/CSC
natively) on the same rows as the peer. Times are the best of ``--repeats``; memory is the
rise of the peak resident set over the level before the call, one measurement per process.
Results must be equal (the sparse route is bit-identical).

Usage::

    python benches/experiments/forest_sparse_input.py --n 1000000 --train 100000
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import numpy as np
import scipy.sparse
from _common import experiment_parser, header
from sklearn.ensemble import ExtraTreesRegressor

from mondrian_learn import MondrianForestRegressor


def one_hot_table(n: int, categories: int, seed: int) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    category = rng.integers(0, categories, n)
    numeric = rng.uniform(size=(n, 4))
    effect = rng.normal(size=categories)
    y = effect[category] + np.sin(6 * numeric[:, 0]) + 0.1 * rng.normal(size=n)
    one_hot = scipy.sparse.csr_matrix((np.ones(n), (np.arange(n), category)), shape=(n, categories))
    return scipy.sparse.hstack([one_hot, numeric], format="csr"), y


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(route: str, n: int, train: int, categories: int, repeats: int) -> None:
    X, y = one_hot_table(n, categories, 0)
    base = peak_mib()
    best_fit = best_predict = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        if route == "dense":
            # What a user must do without sparse support: densify, then fit and predict.
            queries = X.toarray()
            fit_on = queries[:train]
        else:
            queries, fit_on = X, X[:train]
        if route == "extra_trees":
            model = ExtraTreesRegressor(10, n_jobs=2, random_state=0).fit(fit_on, y[:train])
        else:
            model = MondrianForestRegressor(10, n_jobs=2, random_state=0).fit(fit_on, y[:train])
        fitted = time.perf_counter()
        if route == "extra_trees":
            mean = model.predict(queries)
        else:
            mean, _ = model.predict(queries, return_std=True)
        done = time.perf_counter()
        best_fit, best_predict = min(best_fit, fitted - start), min(best_predict, done - fitted)
        del queries, fit_on
    rmse = float(np.sqrt(np.mean((mean - y)[train:] ** 2)))
    print(
        f"{route:11s} fit {best_fit:7.2f} s  predict {best_predict:7.2f} s  "
        f"peak rise {peak_mib() - base:8.1f} MiB  test RMSE {rmse:.4f}  "
        f"checksum {float(np.sum(mean)):.12e}",
        flush=True,
    )


def main() -> None:
    parser = experiment_parser(__doc__, n=1_000_000, repeats=3)
    parser.add_argument("--train", type=int, default=100_000)
    parser.add_argument("--categories", type=int, default=200)
    parser.add_argument("--route", choices=["sparse", "dense", "extra_trees"])
    args = parser.parse_args()
    if args.route:
        measure(args.route, args.n, args.train, args.categories, args.repeats)
        return
    header(f"load {os.getloadavg()[0]:.1f}")
    X, _ = one_hot_table(args.n, args.categories, 0)
    print(
        f"X: {args.n} × {X.shape[1]} CSR, {X.nnz} non-zeros: "
        f"{(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20:.1f} MiB sparse, "
        f"{args.n * X.shape[1] * 8 / 2**20:.1f} MiB dense"
    )
    for route in ("sparse", "dense", "extra_trees"):
        command = [sys.executable, __file__, "--route", route, "--n", str(args.n)]
        command += ["--train", str(args.train), "--categories", str(args.categories)]
        subprocess.run([*command, "--repeats", str(args.repeats)], check=True)


if __name__ == "__main__":
    main()
