"""The demo's density part: the Mondrian density of iris petals, against a kernel density."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neighbors import KernelDensity

from mondrian_learn.density import MondrianDensityEstimator


def run(out_dir: str | Path, seed: int = 0) -> None:
    """Fit the density of iris petal length × width (150 flowers, three species' clusters) on
    100 flowers, print the held-out log-likelihood beside ``KernelDensity`` with a
    cross-validated bandwidth, and save the picture (``density_iris.png``) when matplotlib is
    there."""
    X = load_iris().data[:, 2:]
    X_train, X_test = train_test_split(X, test_size=50, random_state=seed)
    model = MondrianDensityEstimator(100, random_state=seed).fit(X_train)
    kde = GridSearchCV(KernelDensity(), {"bandwidth": np.geomspace(0.02, 2.0, 25)}, cv=5)
    kde = kde.fit(X_train).best_estimator_
    scores = model.score_samples(X_test)
    inside = np.isfinite(scores)
    print("\nIris petals (length × width, cm), 100 train / 50 test flowers")
    print(f"{'density':<44}{'held-out log-likelihood per flower':>36}")
    print(
        f"{'Mondrian (100 trees, λ = ' + format(model.lifetime_, '.3g') + ')':<44}"
        f"{scores[inside].mean():>36.3f}"
    )
    print(f"{'KernelDensity (CV bandwidth)':<44}{kde.score_samples(X_test[inside]).mean():>36.3f}")
    print(f"({np.mean(~inside):.0%} of the test flowers lie outside the training box: density 0)")
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mondrian_learn.plotting import DensityDisplay

    fig, ax = plt.subplots(figsize=(7, 5))
    # On the model's box (the training range widened by box_margin), where the density is
    # positive; on a log scale (the display's), as one cluster is far denser than the others.
    display = DensityDisplay.from_estimator(model, X_train, margin=model.box_margin, ax=ax)
    display.ax_.collections[-1].set_label("training flowers")
    ax.scatter(X_test[:, 0], X_test[:, 1], s=12, c="red", marker="x", label="held-out")
    ax.set_xlabel("petal length (cm)")
    ax.set_ylabel("petal width (cm)")
    ax.set_title(f"Mondrian density, {model.n_estimators} trees, λ = {model.lifetime_:.3g}")
    ax.legend(loc="upper left")
    fig.colorbar(display.image_, ax=ax, label="density (log scale)")
    path = Path(out_dir) / "density_iris.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"saved {path}")
