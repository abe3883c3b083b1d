"""The demo's Mondrian-kernel part: kernel width chosen along the lifetime path, and a width per
feature searched on the Mondrian grid."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from mondrian_learn.kernel import MondrianGridRidgeCV, MondrianKernelRidgeCV
from mondrian_learn.kernel.baselines import LaplaceKernelRidge


def _rmse(prediction: np.ndarray, target: np.ndarray) -> float:
    return float(np.sqrt(np.mean((prediction - target) ** 2)))


def run(out_dir: str | Path, seed: int = 0) -> None:
    """Choose the Laplace kernel's inverse width λ on scikit-learn's diabetes data (309 train
    / 133 test) with :class:`MondrianKernelRidgeCV` — 100 Mondrian trees, every λ up to Λ
    evaluated on one path (Balog et al., UAI 2016, §4) — print the chosen λ and test RMSE beside
    exact Laplace kernel ridge at that λ and the Mondrian grid with a λ per feature searched
    (:class:`MondrianGridRidgeCV`, Balog's report ch. 5), and save the path (validation RMSE
    and log marginal likelihood against λ) as ``kernel_path.png`` and the grid's search as
    ``grid_search.png`` when matplotlib is there.

    δ² = 1: the targets are noisy (a linear model explains about half their variance), so the
    near-interpolating δ² = 10⁻⁴ of the paper's CPU experiments would overfit.
    """
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=seed)
    start = time.perf_counter()
    model = MondrianKernelRidgeCV(100, alphas=1.0, random_state=seed).fit(X_train, y_train)
    seconds = time.perf_counter() - start
    path = model.path_
    lifetimes = path["lifetimes"]
    by_evidence = float(lifetimes[np.nanargmax(path["log_evidence"])])
    start = time.perf_counter()
    exact = LaplaceKernelRidge(model.lifetime_, alpha=1.0).fit(X_train, y_train)
    exact_seconds = time.perf_counter() - start
    print(
        f"\nMondrian kernel ridge on diabetes, λ chosen on the path to Λ = "
        f"{model.max_lifetime_:.3g} ({len(lifetimes)} points, C up to {path['n_features'][-1]})"
    )
    print(f"{'model':<44}{'test RMSE':>10}{'fit s':>9}")
    print(
        f"{f'MondrianKernelRidgeCV, λ = {model.lifetime_:.3g} (validation)':<44}"
        f"{_rmse(model.predict(X_test), y_test):>10.2f}{seconds:>9.3f}"
    )
    print(
        f"{f'exact Laplace kernel ridge, λ = {model.lifetime_:.3g}':<44}"
        f"{_rmse(exact.predict(X_test), y_test):>10.2f}{exact_seconds:>9.3f}"
    )
    start = time.perf_counter()
    grid = MondrianGridRidgeCV(alpha=1.0, random_state=seed).fit(X_train, y_train)
    grid_seconds = time.perf_counter() - start
    print(
        f"{'MondrianGridRidgeCV, a λ per feature':<44}"
        f"{_rmse(grid.predict(X_test), y_test):>10.2f}{grid_seconds:>9.3f}"
    )
    print(f"{'predicting the training mean':<44}{_rmse(y_train.mean(), y_test):>10.2f}")
    print(f"λ with the largest log marginal likelihood on the same path: {by_evidence:.3g}")
    names = load_diabetes().feature_names
    print(
        f"Mondrian grid (50 grids), λ per feature at the chosen step {grid.best_index_} "
        f"of {grid.n_iter_}: "
        + ", ".join(f"{n} {v:.2g}" for n, v in zip(names, grid.lifetimes_))
        + f"; selected (λ ≥ {grid.lifetime_threshold}): "
        + ", ".join(names[d] for d in grid.selected_features_)
    )
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mondrian_learn.plotting import LifetimeSearchDisplay, plain_log_ticks

    fig, ax = plt.subplots(figsize=(7, 4))
    shown = lifetimes > 0  # λ = 0 (one cell per tree: the training mean) is off a log axis
    ax.step(
        lifetimes[shown],
        np.sqrt(path["validation_mse"][shown]),
        where="post",
        label="validation RMSE",
    )
    ax.axvline(
        model.lifetime_, ls="--", color="tab:blue", label=f"chosen λ = {model.lifetime_:.3g}"
    )
    ax.set_xscale("log")
    ax.set_xlabel("lifetime λ (inverse kernel width)")
    ax.set_ylabel("validation RMSE")
    plain_log_ticks(ax.xaxis)
    twin = ax.twinx()
    twin.step(
        lifetimes[shown],
        path["log_evidence"][shown],
        where="post",
        color="tab:green",
        label="log marginal likelihood",
    )
    twin.set_ylabel("log marginal likelihood", color="tab:green")
    # One legend for both axes, below them: inside, it covered a curve.
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    ax.set_title("Every kernel width from one path: 100 Mondrian trees, diabetes data")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    out = Path(out_dir) / "kernel_path.png"
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"saved {out}")
    fig, ax = plt.subplots(figsize=(7, 4))
    display = LifetimeSearchDisplay.from_estimator(grid, ax, feature_names=list(names))
    display.ax_.set_title("A kernel width per feature: the Mondrian grid's search, diabetes data")
    out = Path(out_dir) / "grid_search.png"
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"saved {out}")
