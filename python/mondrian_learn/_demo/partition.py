"""The demo's random-partition-kernel part: kernel PCA of handwritten digits."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

from mondrian_learn.partition import MondrianPartitions, PartitionKernelPCA, RandomForestPartitions


def _models(seed: int) -> dict:
    return {
        "PCA (linear)": PCA(2, random_state=seed),
        # Pixels share one unit (X / 16 is already in [0, 1]): scaling each by its own range
        # would stretch the rarely inked ones (0.52 instead of 0.60 held-out accuracy).
        "partition kernel PCA, Mondrian λ=0.1": PartitionKernelPCA(
            2,
            sampler=MondrianPartitions(0.1),
            n_partitions=200,
            scale_features=False,
            random_state=seed,
        ),
        "partition kernel PCA, Random Forest": PartitionKernelPCA(
            2,
            sampler=RandomForestPartitions(),
            n_partitions=200,
            scale_features=False,
            random_state=seed,
        ),
    }


def run(out_dir: str | Path, seed: int = 0) -> None:
    """Project scikit-learn's digits (1,797 images, 8 × 8 pixels) on two kernel principal
    components, print how well a 10-nearest-neighbour classifier separates held-out digits in
    that plane, and save the picture (``kernel_pca_digits.png``) when matplotlib is there.

    The Mondrian kernel is unsupervised (≈ Laplace kernel, λ = 0.1 on pixels in [0, 1]); the
    Random Forest kernel is fitted with the training labels (§4.3.1), so its plane separates
    classes by construction; test points are projected with ``transform``.
    """
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=seed)
    print("\nDigits (scikit-learn's load_digits), 1,257 train / 540 test, 2 components")
    print(f"{'projection':<40}{'held-out 10-NN accuracy':>25}{'fit s':>8}")
    planes = {}
    for name, model in _models(seed).items():
        start = time.perf_counter()
        if "Random Forest" in name:
            Z_train = model.fit_transform(X_train, y_train)
        else:
            Z_train = model.fit_transform(X_train)
        seconds = time.perf_counter() - start
        Z_test = model.transform(X_test)
        knn = KNeighborsClassifier(10).fit(Z_train, y_train)
        print(f"{name:<40}{knn.score(Z_test, y_test):>25.3f}{seconds:>8.2f}")
        planes[name] = Z_test
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mondrian_learn.plotting import EmbeddingDisplay

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    for ax, (name, Z_test) in zip(axes, planes.items()):
        display = EmbeddingDisplay(Z_test, y_test).plot(ax)
        ax.set_title(f"{name}\n(held-out digits)", fontsize=10)
    for ax in axes[1:]:
        ax.set_ylabel("")  # the left panel's says it; here it ran into the ticks beside
    fig.colorbar(display.points_, ax=axes, ticks=np.arange(10), label="digit")
    path = Path(out_dir) / "kernel_pca_digits.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"saved {path}")
