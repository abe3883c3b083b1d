"""
Density of a 2-D point set
==========================

:class:`~mondrian_learn.MondrianDensityEstimator` averages the piecewise-constant densities
of Mondrian trees (a Pólya-tree-style mass per cell, spread over its volume). On two
interleaved half moons with a dense blob, its density beside scikit-learn's
:class:`~sklearn.neighbors.KernelDensity` with a cross-validated bandwidth, both on a log
colour scale, which keeps the thin moons visible beside the blob.
"""

# %%
# Data: two moons and a tight cluster
# -----------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.neighbors import KernelDensity

from mondrian_learn import MondrianDensityEstimator
from mondrian_learn.plotting import DensityDisplay

moons, _ = make_moons(600, noise=0.08, random_state=0)
blob = np.random.default_rng(0).normal([0.5, 0.25], 0.05, size=(200, 2))
X = np.vstack([moons, blob])
X_train, X_test = train_test_split(X, test_size=0.25, random_state=0)

# %%
# Fit both densities
# ------------------
# Both are drawn over the Mondrian density's box: the training range widened by 10 %
# (``box_margin``) on every side.
mondrian = MondrianDensityEstimator(50, random_state=0).fit(X_train)
search = GridSearchCV(KernelDensity(), {"bandwidth": np.geomspace(0.02, 0.5, 12)}, cv=3)
kde = search.fit(X_train).best_estimator_

fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, (name, model) in zip(axes, [("Mondrian density", mondrian), ("KernelDensity", kde)]):
    display = DensityDisplay.from_estimator(model, X_train, margin=0.1, ax=ax)
    ax.set_title(name)
    ax.set_xlabel("x₁")
    fig.colorbar(display.image_, ax=ax, label="density (log scale)")
axes[0].set_ylabel("x₂")

# %%
# Held-out log-likelihood
# -----------------------
# The Mondrian density is zero outside the training box, so the few test points there are
# left out of both means.
scores = mondrian.score_samples(X_test)
inside = np.isfinite(scores)
print(f"Mondrian density: {scores[inside].mean():.3f} per point")
print(f"KernelDensity:    {kde.score_samples(X_test[inside]).mean():.3f} per point")
plt.show()
