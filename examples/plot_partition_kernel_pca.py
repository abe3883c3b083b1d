"""
Partition-kernel PCA of handwritten digits
==========================================

A random partition kernel counts how often two points share a cell across random
partitions of the space. :class:`~mondrian_learn.PartitionKernelPCA` projects the data on
the leading principal components of that kernel without forming the N × N matrix. Here the
8 × 8 digits of scikit-learn on two components: linear PCA, the unsupervised Mondrian
partition kernel (close to a Laplace kernel), and the Random Forest partition kernel, which
is fitted with the labels and so separates the classes by construction. Held-out digits
are projected with ``transform``. ``python -m mondrian_learn demo`` draws the same picture.
"""

# %%
# Three projections
# -----------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

from mondrian_learn import PartitionKernelPCA
from mondrian_learn.partition import MondrianPartitions, RandomForestPartitions
from mondrian_learn.plotting import EmbeddingDisplay

X, y = load_digits(return_X_y=True)
X = X / 16.0  # every pixel in [0, 1]: one unit, so no per-feature scaling
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
projections = {
    "PCA (linear)": PCA(2, random_state=0).fit(X_train),
    "Mondrian partition kernel, λ = 0.1": PartitionKernelPCA(
        2, sampler=MondrianPartitions(0.1), n_partitions=100, scale_features=False, random_state=0
    ).fit(X_train),
    "Random Forest partition kernel": PartitionKernelPCA(
        2, sampler=RandomForestPartitions(), n_partitions=100, scale_features=False, random_state=0
    ).fit(X_train, y_train),
}

# %%
# Held-out digits in each plane
# -----------------------------
fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
for ax, (name, model) in zip(axes, projections.items()):
    display = EmbeddingDisplay.from_estimator(model, X_test, y_test, ax=ax)
    ax.set_title(name, fontsize=10)
for ax in axes[1:]:
    ax.set_ylabel("")  # the left panel's says it
fig.colorbar(display.points_, ax=axes, ticks=np.arange(10), label="digit")

# %%
# How well the plane separates digits
# -----------------------------------
# Accuracy of a 10-nearest-neighbour classifier in each plane (chance: 0.1).
for name, model in projections.items():
    knn = KNeighborsClassifier(10).fit(model.transform(X_train), y_train)
    print(f"{name:<36} {knn.score(model.transform(X_test), y_test):.3f}")
plt.show()
