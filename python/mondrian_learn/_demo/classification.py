"""The demo's classification part: a table on scikit-learn's digits, and the confidence
picture of the label-guided-splits poster (max class probability over the plane)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from mondrian_learn.forest import MondrianForestClassifier


def table(seed: int) -> None:
    """Test accuracy, log loss and fit time on scikit-learn's bundled digits (1,797 8×8
    images, 10 classes), 100 trees each."""
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=seed, stratify=y
    )
    models = {
        "Mondrian forest (batch)": MondrianForestClassifier(random_state=seed),
        "Mondrian forest (online, 10 chunks)": None,
        "Extra trees": ExtraTreesClassifier(100, random_state=seed),
        "Random forest": RandomForestClassifier(100, random_state=seed),
    }
    print(f"\nDigits (scikit-learn's load_digits), {len(y_train)} train / {len(y_test)} test")
    print(f"{'model':<38}{'accuracy':>10}{'log loss':>10}{'fit s':>9}")
    for name, model in models.items():
        start = time.perf_counter()
        if model is None:
            model = MondrianForestClassifier(random_state=seed)
            for i, chunk in enumerate(np.array_split(np.arange(len(y_train)), 10)):
                model.partial_fit(
                    X_train[chunk], y_train[chunk], classes=np.arange(10) if i == 0 else None
                )
        else:
            model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        proba = model.predict_proba(X_test)
        accuracy = float((proba.argmax(axis=1) == y_test).mean())
        loss = log_loss(y_test, np.clip(proba, 1e-15, 1), labels=np.arange(10))
        print(f"{name:<38}{accuracy:>10.4f}{loss:>10.4f}{seconds:>9.3f}")


def confidence_plot(path: Path, seed: int) -> None:
    """Max class probability over the plane around iris's petal measurements (three
    classes) for a Mondrian forest, a decision tree and a random forest: the Mondrian
    forest's confidence fades away from the data, the others' stays (the poster's Fig. 1–2)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = load_iris(return_X_y=True)
    X = X[:, 2:]  # petal length and width (cm)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    u, v = np.meshgrid(
        np.linspace(lo[0] - span[0], hi[0] + span[0], 300),
        np.linspace(lo[1] - span[1], hi[1] + span[1], 300),
    )
    grid = np.column_stack([u.ravel(), v.ravel()])
    models = [
        ("Mondrian forest", MondrianForestClassifier(random_state=seed)),
        ("Decision tree", DecisionTreeClassifier(random_state=seed)),
        ("Random forest", RandomForestClassifier(100, random_state=seed)),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, (name, model) in zip(axes, models):
        confidence = model.fit(X, y).predict_proba(grid).max(axis=1).reshape(u.shape)
        image = ax.imshow(
            confidence,
            origin="lower",
            extent=(u.min(), u.max(), v.min(), v.max()),
            aspect="auto",
            vmin=1 / 3,
            vmax=1,
            cmap="magma",
        )
        for k, marker in enumerate("o^s"):
            ax.scatter(*X[y == k].T, s=12, marker=marker, c="white", edgecolors="black", lw=0.4)
        ax.set_title(name)
        ax.set_xlabel("petal length (cm)")
    axes[0].set_ylabel("petal width (cm)")
    fig.colorbar(image, ax=axes, label="max class probability (1/3: uniform)")
    fig.suptitle("Confidence away from the data: iris, three classes")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
