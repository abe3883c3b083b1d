"""Helpers shared by the experiment scripts: the import guard, the results header, the command
line, markdown tables and figures, and for the Mondrian kernel experiments (Balog et al., UAI
2016, §6) the CPU data and its split, the paper's error measure, exact ridge on any feature
matrix, the dense lifetime path and timing."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Callable

import numpy as np
import numpy.typing as npt
import scipy.linalg
import scipy.sparse
import sklearn

FloatArray = npt.NDArray[np.float64]

#: The CPU data (``cpu_act.csv``) beside the repository: ``../shared/data``.
DEFAULT_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def import_mondrian_forest_regressor() -> type:
    """Return ``mondrian_learn.MondrianForestRegressor`` or exit with a clear message."""
    try:
        from mondrian_learn import MondrianForestRegressor
    except ImportError as error:
        sys.exit(
            "error: cannot import MondrianForestRegressor from mondrian_learn "
            f"({error}).\nBuild and install the package first, e.g. "
            "`pip install .` from the repository root."
        )
    return MondrianForestRegressor


def machine_info(extra: str = "") -> str:
    """Date, machine, library versions (plus ``extra``), the command and the load average,
    for RESULTS.md."""
    import mondrian_learn

    versions = (
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, "
        f"mondrian_learn {getattr(mondrian_learn, '__version__', 'unknown')}"
    )
    return "\n".join(
        [
            f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"machine: {platform.platform()}, os.cpu_count()={os.cpu_count()}",
            versions + (f", {extra}" if extra else ""),
            f"command: {' '.join([sys.executable, *sys.argv])}",
            f"loadavg at start: {Path('/proc/loadavg').read_text().strip()}",
        ]
    )


def rmse(prediction: FloatArray, target: FloatArray) -> float:
    """Root mean squared error."""
    return float(np.sqrt(np.mean((np.asarray(prediction) - target) ** 2)))


def header(extra: str = "") -> None:
    """Print :func:`machine_info` (benchmarks are re-run when the 1-minute load was above
    ~1.5 on the 2-core machine)."""
    print(machine_info(extra))


def load_cpu(data_dir: str | Path, seed: int = 0) -> dict[str, np.ndarray]:
    """Delve comp-activ (``cpu_act.csv``, 8,192 × 21, target ``usr``), split at random into
    6,554 train / 819 validation / 819 test as in the paper; raw (unscaled) features."""
    path = Path(data_dir) / "cpu_act.csv"
    if not path.exists():
        sys.exit(f"error: {path} not found; pass --data DIR with cpu_act.csv in it")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    order = np.random.default_rng(seed).permutation(len(data))
    data = data[order]
    X, y = data[:, :-1], data[:, -1]
    cut = [6554, 6554 + 819]
    return {
        "X_train": X[: cut[0]],
        "y_train": y[: cut[0]],
        "X_val": X[cut[0] : cut[1]],
        "y_val": y[cut[0] : cut[1]],
        "X_test": X[cut[1] :],
        "y_test": y[cut[1] :],
    }


def start_cpu_experiment(data_dir: str | Path, held_out: str) -> tuple[np.ndarray, ...]:
    """Print the header and load the CPU data: training rows and targets, then the
    ``held_out`` split's ("val" or "test")."""
    header()
    d = load_cpu(data_dir)
    return d["X_train"], d["y_train"], d[f"X_{held_out}"], d[f"y_{held_out}"]


#: The classification sets of the label-guided-splits poster, plus a large one (datasets.md).
CLASSIFICATION_SETS = ("usps", "satimage", "letter", "dna", "sensorless")


def load_classification(
    name: str, data_dir: str | Path = DEFAULT_DATA, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train and test rows and labels (0…K−1) of a set in ``data_dir``: usps's two published
    halves; the others, which ship unsplit, by a fixed seeded 75/25 split (stratified)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    def read(file: str) -> tuple[np.ndarray, np.ndarray]:
        path = Path(data_dir) / file
        if not path.exists():
            sys.exit(f"error: {path} not found; pass --data DIR holding the benchmark sets")
        table = pd.read_csv(path).to_numpy(dtype=np.float64)
        return table[:, :-1], table[:, -1].astype(np.int64)

    if name == "usps":
        return (*read("usps_train.csv.gz"), *read("usps_test.csv.gz"))
    X, y = read(f"{name}.csv.gz")
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=seed, stratify=y
    )
    return X_train, y_train, X_test, y_test


#: The regression sets of the accuracy issue (``../shared/data``; "abolone" as spelt there).
REGRESSION_SETS = (
    "cpu_act",
    "house_16h",
    "naval",
    "elevators",
    "ailerons",
    "puma_32h",
    "abolone",
    "california_housing",
)


def load_regression(
    name: str, data_dir: str | Path = DEFAULT_DATA, seed: int = 0, test_size: float = 0.2
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A seeded 80/20 split of a regression set (target: the last column). Text columns are
    one-hot encoded (abalone's sex, California's ocean proximity); rows with a missing value
    (207 of California's 20,640 lack ``total_bedrooms``) are dropped."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    path = Path(data_dir) / f"{name}.csv"
    if not path.exists():
        sys.exit(f"error: {path} not found; pass --data DIR holding the benchmark sets")
    table = pd.read_csv(path).dropna()
    target = table.columns[-1]
    y = table[target].to_numpy(dtype=np.float64)
    X = pd.get_dummies(table.drop(columns=target), dtype=np.float64).to_numpy(np.float64)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=seed
    )
    return X_train, y_train, X_test, y_test


def expected_calibration_error(proba: np.ndarray, y: np.ndarray, bins: int = 15) -> float:
    """ECE of the top-class probability: Σ_b (n_b / n) |accuracy_b − confidence_b| over
    ``bins`` equal-width confidence bins (Guo et al., ICML 2017)."""
    confidence = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return float(total)


def accuracy_and_log_loss(
    proba: np.ndarray, y: np.ndarray, classes: np.ndarray
) -> tuple[float, float]:
    """Accuracy and log loss on labels ``y`` of class probabilities ``proba`` (a column per
    entry of ``classes``); the loss counts a probability below 1e-15 as 1e-15."""
    from sklearn.metrics import log_loss

    accuracy = float(np.mean(classes[proba.argmax(axis=1)] == y))
    return accuracy, float(log_loss(y, np.clip(proba, 1e-15, 1.0), labels=classes))


def relative_error(prediction: np.ndarray, target: np.ndarray) -> float:
    """The paper's "error": 100 ‖ŷ − y‖₂ / ‖y‖₂ in percent."""
    return float(100 * np.linalg.norm(prediction - target) / np.linalg.norm(target))


def relative_from_mse(mse: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The same measure from a mean squared error over ``target``."""
    return 100 * np.sqrt(np.asarray(mse) * len(target)) / np.linalg.norm(target)


def ridge_predictions(Z: Any, y: np.ndarray, alpha: float, others: list[Any]) -> list[np.ndarray]:
    """Exact ridge with centred targets on features ``Z`` (dense or sparse, N × C):
    ȳ + Z' w for each Z' in ``others``, w = (ZᵀZ + αI)⁻¹ Zᵀ(y − ȳ) — by the C × C system when
    C ≤ N, else by the equivalent N × N one, w = Zᵀ(ZZᵀ + αI)⁻¹(y − ȳ)."""
    mean = float(y.mean())
    yc = y - mean
    dense = (lambda M: M.toarray()) if scipy.sparse.issparse(Z) else np.asarray
    n, c = Z.shape
    if c <= n:
        gram = dense(Z.T @ Z)
        gram[np.diag_indices_from(gram)] += alpha
        w = scipy.linalg.cho_solve(scipy.linalg.cho_factor(gram, overwrite_a=True), Z.T @ yc)
    else:
        gram = dense(Z @ Z.T)
        gram[np.diag_indices_from(gram)] += alpha
        h = scipy.linalg.cho_solve(scipy.linalg.cho_factor(gram, overwrite_a=True), yc)
        w = Z.T @ h
    return [mean + np.asarray(other @ w).ravel() for other in others]


def laplace_feature_maps(lifetime: float) -> dict[str, Callable[[int, int], Any]]:
    """The three random feature maps of the Laplace kernel the paper compares (Figs. 5–6),
    each ``make(m, seed)`` with m features, in the raw units of X (the figures' λ)."""
    from mondrian_learn import MondrianKernelFeatures
    from mondrian_learn.kernel.baselines import LaplaceFourierFeatures, RandomBinningFeatures

    raw = {"scale_features": False}
    return {
        "Mondrian": lambda m, s: MondrianKernelFeatures(
            m, lifetime=lifetime, random_state=s, **raw
        ),
        "random binning": lambda m, s: RandomBinningFeatures(
            m, lifetime=lifetime, random_state=s, **raw
        ),
        "Fourier": lambda m, s: LaplaceFourierFeatures(
            m // 2, lifetime=lifetime, random_state=s, **raw
        ),
    }


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[str]] = ()) -> None:
    """A markdown table: the header row of ``columns``, its rule, then ``rows``, each printed
    as soon as it comes (rows from a generator show a long run's progress)."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)


def print_rule_header(header: str) -> None:
    """A table's header line and a rule of dashes as long."""
    print(header)
    print("-" * len(header))


def best_of(repeats: int, call: Callable[[], Any]) -> tuple[float, float]:
    """Least wall and least CPU seconds of ``repeats`` calls (CPU: ``time.process_time``,
    every thread of the process)."""
    times = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return min(t[0] for t in times), min(t[1] for t in times)


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def experiment_parser(
    doc: str | None,
    out: str | None = None,
    data: bool = False,
    *,
    n: int | None = None,
    repeats: int | None = None,
    seed: int | None = None,
    part: bool = False,
) -> argparse.ArgumentParser:
    """A command line described by the first line of the script's docstring ``doc``, with
    ``--out`` (default ``out``: where the figure goes) and ``--data`` (the folder holding
    ``cpu_act.csv``) when asked for, the integer options ``--n`` (rows), ``--repeats`` and
    ``--seed`` for those given a default, and with ``part`` the hidden ``--part KIND [ARG ...]``
    by which :func:`run_part` asks the script for one part (:func:`answer_part`)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    if data:
        parser.add_argument("--data", default=str(DEFAULT_DATA))
    if out is not None:
        parser.add_argument("--out", default=out)
    for name, default in (("--n", n), ("--repeats", repeats), ("--seed", seed)):
        if default is not None:
            parser.add_argument(name, type=int, default=default)
    if part:
        parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    return parser


def add_forest_options(parser: argparse.ArgumentParser) -> None:
    """The options of the forest speed experiments: forest size, threads and the
    ``make_friedman1`` data."""
    parser.add_argument("--n-estimators", type=int, default=10)
    parser.add_argument("--min-samples-split", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.0, help="make_friedman1 noise")
    parser.add_argument("--seed", type=int, default=0, help="data and model seed")


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out: str | Path) -> None:
    """Save ``fig`` as ``out`` (folders created), 110 dpi, and say where."""
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"saved {out}")


def finish_figure(
    fig: Any,
    ax: Any,
    out: str | Path,
    xlabel: str,
    ylabel: str,
    title: str = "",
    legend_fontsize: float | None = None,
) -> None:
    """Log x axis, axis labels, title and legend on ``ax``, then save ``fig`` as ``out``."""
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=legend_fontsize)
    save_figure(fig, out)


def plot_errors_against_m(
    m: Any,
    errors: dict[str, np.ndarray],
    out: str | Path,
    ylabel: str,
    title: str,
    reference: tuple[float, str] | None = None,
) -> None:
    """Figures 5 and 6 of the Mondrian kernel paper: each method's error (rows: repeats,
    columns: M) as mean ± sd against M, with an optional horizontal ``(value, label)``."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for (name, e), marker in zip(errors.items(), "v^o"):
        ax.errorbar(m, e.mean(axis=0), yerr=e.std(axis=0), marker=marker, ls="-", label=name)
    if reference is not None:
        ax.axhline(reference[0], color="black", lw=2, label=reference[1])
    finish_figure(fig, ax, out, "M (non-zero features per point)", ylabel, title)


def dense_path(
    features: Any,
    y: np.ndarray,
    max_lifetime: float,
    alpha: float,
    n_jobs: int,
    validation: tuple[np.ndarray, np.ndarray] | None = None,
    n_checkpoints: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """The lifetime path of sampled trees (``_core.KernelFeatures``) by the Cholesky route
    to ``max_lifetime`` (no dense-size limit, CG settings unused), scored on ``validation``
    when given, at every cut or at ``n_checkpoints`` checkpoints."""
    x_val, y_val = (None, None) if validation is None else validation
    return features.path(
        y,
        x_val,
        y_val,
        max_lifetime,
        alpha,
        n_checkpoints,
        None,
        "cholesky",
        10**9,
        1e-6,
        300,
        False,
        n_jobs,
        progress,
    )


def answer_part(part: list[str] | None, parts: dict[str, Callable[..., dict]]) -> bool:
    """The script's side of :func:`run_part`: given ``--part KIND [ARG ...]``, print
    ``parts[KIND](*ARGS)`` as JSON and return True; without ``--part``, return False."""
    if not part:
        return False
    import json

    kind, *rest = part
    print(json.dumps(parts[kind](*rest)))
    return True


def run_part(script: str, *args: str) -> dict:
    """Runs ``script --part *args`` in a fresh process (its peak memory its own) and returns
    the JSON object its last line prints."""
    import json
    import subprocess

    result = subprocess.run(
        [sys.executable, script, "--part", *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"part {args} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def resident_mb(field: str) -> float:
    """``VmRSS`` or ``VmHWM`` of this process in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")
