"""Helpers for the Mondrian kernel experiments (Balog et al., UAI 2016, §6): the CPU data and
its split, the paper's error measure, exact ridge on any feature matrix, timing."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.linalg
import scipy.sparse
from _common import machine_info

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def header(extra: str = "") -> None:
    """Machine, versions, command and the load average (benchmarks are re-run when the
    1-minute load was above ~1.5 on the 2-core machine)."""
    print(machine_info(extra))
    with open("/proc/loadavg") as f:
        print(f"loadavg at start: {f.read().strip()}")


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


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result
