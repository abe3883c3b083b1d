"""The demo's Mondrian-forest part: a table on scikit-learn's diabetes data, one tree's
partition at three lifetimes, and the predictive uncertainty away from the data."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy.stats import norm
from sklearn.datasets import load_diabetes
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.model_selection import train_test_split

from mondrian_learn.calibration import gaussian_nlpd
from mondrian_learn.forest import MondrianForestRegressor


def table(seed: int) -> None:
    """Test RMSE and fit time on scikit-learn's bundled diabetes data (442 patients)."""
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=seed)
    models = {
        "Mondrian forest (batch)": MondrianForestRegressor(random_state=seed),
        "Mondrian forest (online, 10 chunks)": None,
        "Mondrian forest, paper (label-blind)": MondrianForestRegressor(
            min_samples_split=10,
            candidate_dimensions=1,
            candidate_locations=1,
            hyperparameters="heuristic",
            random_state=seed,
        ),
        "Extra trees": ExtraTreesRegressor(100, random_state=seed),
        "Random forest": RandomForestRegressor(100, random_state=seed),
    }
    print("Diabetes progression (scikit-learn's load_diabetes), 309 train / 133 test, 100 trees;")
    print("every model's defaults; NLPD and the central 90 % interval of scikit-learn's forests:")
    print("a Gaussian with the across-tree std; 'in 90 %': test targets inside it (ideal 0.90)")
    print(f"{'model':<38}{'test RMSE':>10}{'NLPD':>8}{'in 90 %':>9}{'fit s':>9}")
    for name, model in models.items():
        start = time.perf_counter()
        if model is None:
            model = MondrianForestRegressor(random_state=seed)
            for chunk in np.array_split(np.arange(len(y_train)), 10):
                model.partial_fit(X_train[chunk], y_train[chunk])
        else:
            model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        rmse = float(np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2)))
        nlpd, inside = _nlpd(model, X_test, y_test), _coverage(model, X_test, y_test)
        print(f"{name:<38}{rmse:>10.2f}{nlpd:>8.3f}{inside:>9.2f}{seconds:>9.3f}")
    print(f"{'predicting the training mean':<38}{np.std(y_test - y_train.mean()):>10.2f}")


def _nlpd(model: object, X: np.ndarray, y: np.ndarray) -> float:
    """Negative mean log predictive density: the Mondrian forest's mixture, or a Gaussian
    with the spread across trees for scikit-learn's forests."""
    if isinstance(model, MondrianForestRegressor):
        return float(-np.mean(model.log_predictive_density(X, y)))
    per_tree = np.stack([tree.predict(X) for tree in model.estimators_])  # type: ignore[attr-defined]
    return gaussian_nlpd(per_tree.mean(axis=0), np.maximum(per_tree.std(axis=0), 1e-9), y)


def _coverage(model: object, X: np.ndarray, y: np.ndarray, level: float = 0.9) -> float:
    """Fraction of ``y`` inside the central ``level`` interval: the Mondrian forest's
    predictive quantiles, or a Gaussian with the spread across trees."""
    if isinstance(model, MondrianForestRegressor):
        low, high = model.predict_interval(X, confidence=level).T
    else:
        per_tree = np.stack([tree.predict(X) for tree in model.estimators_])  # type: ignore[attr-defined]
        half = norm.ppf((1 + level) / 2) * per_tree.std(axis=0)
        low, high = per_tree.mean(axis=0) - half, per_tree.mean(axis=0) + half
    return float(np.mean((low <= y) & (y <= high)))


def _partition_plot(path: Path, seed: int) -> None:
    """One Mondrian tree on two diabetes features: its cells, coloured by the leaf mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mondrian_learn.plotting import PartitionDisplay

    X, y = load_diabetes(return_X_y=True)
    X2 = X[:, [2, 8]]  # body-mass index and s5 (log serum triglycerides)
    # Shared y axis: the inner panels' tick labels ran into the panel to their left.
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
    # One tree grown to the end; pruning it at a lifetime λ gives the tree with lifetime λ
    # (the Mondrian process observed up to time λ), so the three panels are nested.
    model = MondrianForestRegressor(n_estimators=1, min_samples_split=5, random_state=seed)
    model.fit(X2, y)
    for ax, lifetime in zip(axes, [20.0, 60.0, np.inf]):
        PartitionDisplay.from_estimator(model, X2, y, lifetime=lifetime, ax=ax)
        ax.set_xlabel("body-mass index (scaled)")
    axes[0].set_ylabel("s5 (scaled)")
    norm = plt.Normalize(y.min(), y.max())
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=axes, label="leaf mean")
    fig.suptitle("One Mondrian tree on two diabetes features, observed up to three lifetimes")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _uncertainty_plot(path: Path, seed: int) -> None:
    """Predictive mean ± 2 std on 1-D data with a gap, for the Mondrian forest (its defaults)
    and for scikit-learn forests (std across trees), as in Fig. 2 of Lakshminarayanan et al.
    (2016). The noise is 0.15, so inside the data an honest band is about ±0.3 wide."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mondrian_learn.plotting import PredictiveBandDisplay

    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(0, 0.35, 150), rng.uniform(0.65, 1, 150)])
    y = np.sin(2 * np.pi * x) + rng.normal(scale=0.15, size=x.size)
    grid = np.linspace(-0.75, 1.75, 600)
    X, G = x[:, None], grid[:, None]
    mondrian = MondrianForestRegressor(n_estimators=50, random_state=seed)  # the defaults
    mean, std = mondrian.fit(X, y).predict(G, return_std=True)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharey=True)
    panels = [("Mondrian forest (posterior predictive)", mean, std)]
    for name, model in [
        ("Random forest (std across trees)", RandomForestRegressor(50, random_state=seed)),
        ("Extra trees (std across trees)", ExtraTreesRegressor(50, random_state=seed)),
    ]:
        per_tree = np.stack([t.predict(G) for t in model.fit(X, y).estimators_])
        panels.append((name, per_tree.mean(axis=0), per_tree.std(axis=0)))
    for ax, (name, m, s) in zip(axes, panels):
        PredictiveBandDisplay(grid, m, s, x, y).plot(ax)
        ax.axvspan(-0.75, 0, color="grey", alpha=0.08)
        ax.axvspan(1, 1.75, color="grey", alpha=0.08)
        ax.set_title(name)
        ax.set_xlabel("x")
    axes[0].set_ylabel("y")
    axes[0].legend(loc="lower left")
    fig.suptitle("Uncertainty away from the data (shaded: no training points)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plots(folder: Path, seed: int) -> None:
    """Save ``tree_partition.png`` and ``uncertainty.png`` into ``folder`` (needs matplotlib)."""
    for name, plot in [
        ("tree_partition.png", _partition_plot),
        ("uncertainty.png", _uncertainty_plot),
    ]:
        plot(folder / name, seed)
        print(f"saved {folder / name}")
