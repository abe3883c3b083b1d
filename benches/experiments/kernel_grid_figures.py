"""The Mondrian grid's lifetime search (Balog, *The Mondrian Process in Machine Learning*,
ch. 5; issue 17, item 2): Figs. 5.3–5.6, feature selection, and the goal against exact ARD
Laplace kernel ridge.

One command per figure (``--figure``):

- ``5.3`` (Figs. 5.3–5.4): toy 2-D data whose target depends on x₀ only; every optimiser's
  lifetimes along its path, the cuts of the chosen state per dimension, the chosen grid.
- ``5.5``: a real low-dimensional set with N_train = 10,000 — the report's 3D Road Network is
  not reachable offline, so the longitude/latitude columns of ``california_housing.csv`` (the
  target: median house value); validation error against time for the grid search, the single-λ
  Mondrian kernel path (:class:`MondrianKernelRidgeCV`) and exact ARD Laplace ridge with λ
  searched by L-BFGS-B (``_ard_laplace.py``).
- ``5.6``: greedy add-only, greedy add/remove and K-step look-ahead on the same data
  (Friedman #1, N_train = 2,000): validation error against step and time.
- ``friedman``: the goal — ``make_friedman1`` (5 of 10 features are noise), N_train = 10,000:
  the time the grid search takes to come within 5 % of exact ARD ridge's best validation
  error against the time ARD's search takes to reach its best; the single-λ path's best;
  the features selected (λ_d ≥ ε).
- ``gap``: the grid search at M = 50, 100, 200 (or ``--grids``) on the ``friedman`` data,
  and exact ARD ridge evaluated at each search's lifetimes: how much of the gap to ARD is the
  grid's Monte Carlo estimate and how much the search; with ``--level``, when the grid first
  reaches that validation MSE.
- ``cpu``: feature selection on ``cpu_act`` (21 features; the kernel paper's 6,554 / 819
  split).

Errors are validation mean squared errors (the criterion every method minimises) and, for the
5 % goal, the paper's relative error 100‖ŷ − y‖/‖y‖ ("within 5 %": relative error at most
1.05 × ARD's, i.e. RMSE within 5 %). All methods use the same ridge penalty α.

Usage::

    python benches/experiments/kernel_grid_figures.py --figure friedman [--budget 1800]
        [--n-train 10000] [--grids 50]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from _ard_laplace import ard_search, validation_objective
from _common import experiment_parser, header, load_cpu
from sklearn.datasets import make_friedman1

from mondrian_learn import MondrianGridRidgeCV, MondrianKernelRidgeCV

OUT = Path(__file__).resolve().parents[1] / "out"


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def unit_box(*arrays: np.ndarray) -> list[np.ndarray]:
    """Every array mapped by the first one's range (what the estimators do by default), so the
    exact ARD reference sees the same units."""
    low, span = arrays[0].min(axis=0), np.ptp(arrays[0], axis=0)
    span[span == 0] = 1.0
    return [(a - low) / span for a in arrays]


def relative(mse: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The paper's relative error (percent) from a mean squared error on targets ``y``."""
    return 100 * np.sqrt(np.asarray(mse) / np.mean(y**2))


def first_time(times: np.ndarray, errors: np.ndarray, level: float) -> float:
    """When the running best of ``errors`` first reaches ``level`` (inf if never)."""
    reached = np.flatnonzero(np.minimum.accumulate(errors) <= level)
    return float(times[reached[0]]) if len(reached) else float("inf")


def grid_run(
    data: tuple[np.ndarray, ...], label: str, **params: Any
) -> tuple[MondrianGridRidgeCV, float]:
    """Fit the grid search on (X, y) scored on (X_val, y_val); print its summary."""
    X, y, Xv, yv = data
    model = MondrianGridRidgeCV(scale_features=False, random_state=0, **params)
    start = time.perf_counter()
    model.fit(X, y, Xv, yv)
    seconds = time.perf_counter() - start
    path, best = model.path_, model.best_index_
    print(
        f"{label}: {len(path['step']) - 1} steps in {seconds:.1f} s; best validation MSE "
        f"{path['validation_mse'][best]:.4f} "
        f"(relative {relative(path['validation_mse'][best], yv):.2f} %) "
        f"at step {best} ({path['time'][best]:.1f} s), C = {path['n_features'][best]}, "
        f"solver {path['solver'][best]}"
    )
    print(f"  λ = {np.array2string(model.lifetimes_, precision=2)}")
    print(f"  cuts = {path['n_cuts'][best].tolist()}; selected {model.selected_features_.tolist()}")
    return model, seconds


def kernel_path_run(
    data: tuple[np.ndarray, ...], n_estimators: int, alpha: float, max_lifetime: float | None
) -> dict[str, Any]:
    """The single-λ Mondrian kernel path on the same split, timed per checkpoint."""
    X, y, Xv, yv = data
    model = MondrianKernelRidgeCV(
        n_estimators,
        max_lifetime=max_lifetime,
        alphas=alpha,
        lifetimes=100,
        scale_features=False,
        random_state=0,
    )
    start = time.perf_counter()
    model.fit(X, y, Xv, yv)
    seconds = time.perf_counter() - start
    path = model.path_
    best = int(np.argmin(path["validation_mse"]))
    print(
        f"single-λ Mondrian kernel path (M = {n_estimators}, Λ = {model.max_lifetime_:.3g}): "
        f"{seconds:.1f} s;"
        f" best validation MSE {path['validation_mse'][best]:.4f} "
        f"(relative {relative(path['validation_mse'][best], yv):.2f} %) at λ = "
        f"{path['lifetimes'][best]:.3g}, C = {path['n_features'][best]}"
    )
    return {"seconds": seconds, "mse": path["validation_mse"], "lifetimes": path["lifetimes"]}


def ard_run(data: tuple[np.ndarray, ...], alpha: float, budget: float) -> dict[str, np.ndarray]:
    """Exact ARD Laplace ridge, λ searched from 1 by L-BFGS-B on the validation MSE."""
    X, y, Xv, yv = data
    record = ard_search(X, y, Xv, yv, alpha, np.ones(X.shape[1]), budget)
    best = int(np.argmin(record["mse"]))
    print(
        f"exact ARD Laplace ridge, L-BFGS-B over log λ from λ = 1: {len(record['mse'])} "
        f"evaluations in {record['time'][-1]:.1f} s; best validation MSE "
        f"{record['mse'][best]:.4f} (relative {relative(record['mse'][best], yv):.2f} %) after "
        f"{record['time'][best]:.1f} s, "
        f"λ = {np.array2string(record['lifetimes'][best], precision=2)}"
    )
    return record


def friedman(n_train: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``make_friedman1`` (noise 1), ``n_train`` training and 2,500 validation rows."""
    X, y = make_friedman1(n_train + 2500, noise=1.0, random_state=seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def figure_toy(args: Any) -> None:
    """Figs. 5.3–5.4: y = sin(6 x₀) + noise (sd 0.1), x₁ irrelevant; 2,000 training and 500
    validation points, M = 20 grids, α = 0.1, the three optimisers."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2500, 2))
    y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=len(X))
    data = (X[:2000], y[:2000], X[2000:], y[2000:])
    plt = pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    chosen = None
    for search in ("add", "add_remove", "lookahead"):
        model, _ = grid_run(data, search, n_estimators=20, alpha=0.1, search=search)
        path = model.path_
        cuts = path["n_cuts"][model.best_index_]
        print(
            f"  share of the cuts per dimension: {np.round(cuts / max(cuts.sum(), 1), 3).tolist()}"
        )
        for d, style in ((0, "-"), (1, ":")):
            axes[0].plot(path["step"], path["lifetimes"][:, d], style, label=f"{search}: λ{d}")
        axes[1].plot(path["step"], path["validation_mse"], label=search)
        chosen = model if search == "add_remove" else chosen
    axes[0].set(xlabel="step", ylabel="lifetime", title="lifetimes along the search (Fig. 5.3)")
    axes[1].set(xlabel="step", ylabel="validation MSE", yscale="log", title="validation error")
    for ax in axes[:2]:
        ax.legend(fontsize=7)
    # Fig. 5.4: grid 0 of the state add/remove chose, over the training data.
    axes[2].scatter(data[0][:, 0], data[0][:, 1], c=data[1], s=3, cmap="coolwarm")
    locations = chosen.model_.cuts(0)
    for location in locations[0]:
        axes[2].axvline(location, color="k", lw=0.6)
    for location in locations[1]:
        axes[2].axhline(location, color="k", lw=0.6)
    axes[2].set(xlim=(0, 1), ylim=(0, 1), xlabel="x₀", ylabel="x₁ (irrelevant)")
    axes[2].set_title("grid 0 of the chosen state (Fig. 5.4)")
    figure.tight_layout()
    save(figure, args, "grid_fig5_3.png")


def save(figure: Any, args: Any, name: str) -> None:
    path = Path(args.out) / name
    figure.savefig(path, dpi=120)
    print(f"saved {path}")


def california(args: Any) -> tuple[np.ndarray, ...]:
    """Longitude and latitude of ``california_housing.csv`` → median house value / 100,000;
    a seeded split, ``--n-train`` (10,000) training and 2,500 validation rows, mapped to the
    unit box."""
    import pandas as pd

    table = pd.read_csv(Path(args.data) / "california_housing.csv")
    X = table[["longitude", "latitude"]].to_numpy(np.float64)
    y = table["median_house_value"].to_numpy(np.float64) / 1e5
    order = np.random.default_rng(0).permutation(len(X))
    n_train = args.n_train or 10_000
    train, val = order[:n_train], order[n_train : n_train + 2500]
    X_train, X_val = unit_box(X[train], X[val])
    return X_train, y[train], X_val, y[val]


def race(data: tuple[np.ndarray, ...], args: Any, grid: dict, kernel: dict, name: str) -> None:
    """The grid search, the single-λ Mondrian kernel path and exact ARD Laplace ridge on one
    split, all with α = ``args.alpha``: best validation errors, when each was reached, and
    the goal's ratios; the validation error (best so far) against time as ``name``."""
    yv = data[3]
    model, grid_seconds = grid_run(data, "grid search", alpha=args.alpha, **grid)
    path = kernel_path_run(data, alpha=args.alpha, **kernel)
    ard = ard_run(data, args.alpha, args.budget)
    grid_best = float(model.path_["validation_mse"].min())
    ard_best = float(ard["mse"].min())
    ard_best_time = float(ard["time"][int(np.argmin(ard["mse"]))])
    # Within 5 % in relative error (RMSE) is within 1.05² in MSE.
    level = 1.05**2 * ard_best
    grid_at = first_time(model.path_["time"], model.path_["validation_mse"], level)
    ard_at = first_time(ard["time"], ard["mse"], level)
    print(
        f"relative error: grid {relative(grid_best, yv):.3f} %, ARD {relative(ard_best, yv):.3f} %,"
        f" single-λ path {relative(path['mse'].min(), yv):.3f} %"
    )
    print(f"grid best / ARD best (relative error): {np.sqrt(grid_best / ard_best):.4f}")
    print(
        "grid best / single-λ path best (relative error): "
        f"{np.sqrt(grid_best / path['mse'].min()):.4f}"
    )
    print(f"grid within 5 % of ARD's best after: {grid_at:.1f} s; ARD itself after {ard_at:.1f} s;")
    print(
        f"ARD reached its best after {ard_best_time:.1f} s; ratio ARD-best time / grid time: "
        f"{ard_best_time / grid_at if np.isfinite(grid_at) else 0.0:.2f}"
    )
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    gp = model.path_
    ax.step(
        gp["time"],
        relative(np.minimum.accumulate(gp["validation_mse"]), yv),
        where="post",
        label=f"Mondrian grid search (M = {model.n_estimators})",
    )
    ax.step(
        ard["time"],
        relative(np.minimum.accumulate(ard["mse"]), yv),
        where="post",
        label="exact ARD Laplace, L-BFGS-B",
    )
    ax.axhline(
        relative(path["mse"].min(), yv),
        color="gray",
        ls=":",
        label=f"single-λ Mondrian kernel path, best ({path['seconds']:.0f} s)",
    )
    ax.axhline(
        1.05 * relative(ard_best, yv), color="black", ls="--", lw=0.8, label="ARD best + 5 %"
    )
    ax.set(xscale="log", xlabel="seconds", ylabel="validation relative error (%)")
    ax.legend(fontsize=8)
    save(figure, args, name)


def figure_california(args: Any) -> None:
    """Fig. 5.5 on California longitude/latitude (the report's road network is offline)."""
    data = california(args)
    # The single-λ path to Λ = 40: (1 + Λ)² ≈ 1,700 expected cells per tree.
    kernel = {"n_estimators": 50, "max_lifetime": 40.0}
    race(data, args, {"n_estimators": args.grids or 50}, kernel, "grid_fig5_5.png")


def figure_optimisers(args: Any) -> None:
    """Fig. 5.6: the three optimisers, and single-cut moves, on Friedman #1 (N = 2,000)."""
    X, y = make_friedman1(3000, noise=1.0, random_state=0)
    data = (X[:2000], y[:2000], X[2000:], y[2000:])
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for search in ("add", "add_remove", "lookahead"):
        for cuts in (None, 1):
            label = f"{search}, {'M/4' if cuts is None else 1} cuts per move"
            model, _ = grid_run(
                data, label, n_estimators=40, alpha=args.alpha, search=search, cuts_per_move=cuts
            )
            path = model.path_
            axes[0].plot(path["step"], path["validation_mse"], label=label)
            axes[1].plot(path["time"], np.minimum.accumulate(path["validation_mse"]), label=label)
    axes[0].set(xlabel="step", ylabel="validation MSE", yscale="log")
    axes[1].set(xlabel="seconds", ylabel="best validation MSE so far", yscale="log")
    axes[0].legend(fontsize=7)
    save(figure, args, "grid_fig5_6.png")


def figure_solvers(args: Any) -> None:
    """Cholesky updates (appendix D), the explicit inverse (§5.1) and conjugate gradients on
    Friedman #1 (``--n-train``, 5,000; ``--grids``, 20): seconds per trial move (M/4 cuts,
    best of 3) against the number of columns C, and the largest relative deviation of the
    validation predictions from a fit from scratch."""
    from mondrian_learn import _core

    n_train, m = args.n_train or 5000, args.grids or 20
    X, y = make_friedman1(n_train + 1000, noise=1.0, random_state=0)
    X, y, Xv, yv = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    print(f"N = {n_train}, M = {m}, α = {args.alpha}")
    for solver, tol in (
        ("cholesky", 0.0),
        ("inverse", 0.0),
        ("gradient", 1e-6),
        ("gradient", 1e-10),
    ):
        search = _core.GridSearch(
            X, y, Xv, yv, m, 1, args.alpha, solver, 10**6, tol or 1e-6, 10_000, 1
        )
        cells, worst = [], 0.0
        for step in range(40):
            d = step % 5
            count = search.active[d] + m // 4
            seconds = float("inf")
            for _ in range(3):  # a trial move restores the state: repeatable
                start = time.perf_counter()
                search.try_moves(d, [count], 1)
                seconds = min(seconds, time.perf_counter() - start)
            point = search.move_to(d, count, 1)
            c = int(point["n_features"][0])
            if step % 5 == 4:
                cells.append(f"C={c}: {seconds:.3f} s")
                lifetimes = list(point["lifetimes"][0])
                reference = search.refit(y, lifetimes, args.alpha, 1).predict(Xv, 1)
                deviation = np.abs(search.validation_predictions() - reference).max()
                worst = max(worst, deviation / np.abs(reference).max())
            if solver == "inverse" and c > 2500:
                break
        label = solver + (f" (tol {tol:g})" if solver == "gradient" else "")
        print(f"{label}: {'; '.join(cells)}; max deviation from scratch {worst:.1e}")


def figure_friedman(args: Any) -> None:
    """The goal on Friedman #1 (``--n-train``, 10,000) and its feature selection."""
    data = friedman(args.n_train or 10_000)
    # The single-λ path to Λ = 0.7: (1 + Λ)^10 ≈ 200 expected cells per tree (C ≈ 10,000).
    kernel = {"n_estimators": 50, "max_lifetime": 0.7}
    race(data, args, {"n_estimators": args.grids or 50}, kernel, "grid_friedman.png")


def figure_cpu(args: Any) -> None:
    """Feature selection on cpu_act (scaled features, the paper's 6,554 / 819 split)."""
    d = load_cpu(args.data)
    X, Xv = unit_box(d["X_train"], d["X_val"])
    data = (X, d["y_train"], Xv, d["y_val"])
    model, _ = grid_run(data, "grid search", n_estimators=args.grids or 50, alpha=args.alpha)
    order = np.argsort(-model.lifetimes_)
    print(
        "features by λ (header index: λ): "
        + ", ".join(f"{k + 1}: {model.lifetimes_[k]:.2f}" for k in order)
    )
    kernel_path_run(data, 50, args.alpha, None)


def figure_gap(args: Any) -> None:
    """Where the grid's gap to exact ARD on Friedman #1 comes from: the grid search at M =
    50, 100, 200 grids (the Monte Carlo estimate's variance falls as 1/M), and the exact ARD
    Laplace ridge evaluated at each search's lifetimes (the search's choice scored without
    the estimate's error)."""
    data = friedman(args.n_train or 10_000)
    yv = data[3]
    exact = validation_objective(*data, args.alpha)
    for m in [args.grids] if args.grids else [50, 100, 200]:
        model, _ = grid_run(data, f"grid search, M = {m}", n_estimators=m, alpha=args.alpha)
        mse, _ = exact(np.log(np.maximum(model.lifetimes_, 1e-300)))
        print(
            f"  exact ARD ridge at these λ: validation MSE {mse:.4f} "
            f"(relative {relative(mse, yv):.2f} %)"
        )
        if args.level:
            path = model.path_
            reached = first_time(path["time"], path["validation_mse"], args.level)
            print(f"  validation MSE ≤ {args.level} first after {reached:.1f} s")


def main() -> None:
    parser = experiment_parser(__doc__, out=str(OUT), data=True)
    figures = {
        "5.3": figure_toy,
        "5.5": figure_california,
        "5.6": figure_optimisers,
        "solvers": figure_solvers,
        "friedman": figure_friedman,
        "cpu": figure_cpu,
        "gap": figure_gap,
    }
    parser.add_argument("--figure", required=True, choices=sorted(figures))
    parser.add_argument("--budget", type=float, default=1800.0, help="ARD search seconds")
    parser.add_argument("--alpha", type=float, default=1.0, help="ridge penalty, every method")
    parser.add_argument("--grids", type=int, help="M of the grid search (default per figure)")
    parser.add_argument("--n-train", type=int, help="training rows (default per figure)")
    parser.add_argument("--level", type=float, help="gap: report when the grid reaches this MSE")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    header()
    figures[args.figure](args)


if __name__ == "__main__":
    main()
