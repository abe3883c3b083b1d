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

    from mondrian_learn.plotting import ConfidenceDisplay

    iris = load_iris()
    X, y = iris.data[:, 2:], iris.target_names[iris.target]  # petal length and width (cm)
    models = [
        ("Mondrian forest", MondrianForestClassifier(random_state=seed)),
        ("Decision tree", DecisionTreeClassifier(random_state=seed)),
        ("Random forest", RandomForestClassifier(100, random_state=seed)),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, (name, model) in zip(axes, models):
        display = ConfidenceDisplay.from_estimator(model.fit(X, y), X, y, ax=ax)
        ax.set_title(name)
        ax.set_xlabel("petal length (cm)")
    axes[0].set_ylabel("petal width (cm)")
    axes[0].legend(title="species", loc="upper left", fontsize="small")
    fig.colorbar(display.image_, ax=axes, label="max class probability (1/3: uniform)")
    fig.suptitle("Confidence away from the data: iris, three classes")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
