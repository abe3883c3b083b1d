"""
Uncertainty away from the data
==============================

A Mondrian forest's predictive standard deviation grows away from the training points,
towards the prior's, as a Gaussian process's does; a random forest's spread across trees does
not. Here, as in Fig. 2 of Lakshminarayanan, Roy & Teh (AISTATS 2016), a 1-D regression with
a gap in the training inputs: the mean ± 2 standard deviations of a
:class:`~mondrian_learn.MondrianForestRegressor`, next to the spread across the trees of
scikit-learn's :class:`~sklearn.ensemble.RandomForestRegressor`.
"""

# %%
# Data with a gap
# ---------------
# Noisy observations of a smooth function on [0, 1], none between 0.4 and 0.7.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestRegressor

from mondrian_learn import MondrianForestRegressor
from mondrian_learn.plotting import PredictiveBandDisplay

rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(0.0, 0.4, 100), rng.uniform(0.7, 1.0, 80)])
y = np.sin(8 * x) + 0.1 * rng.normal(size=x.size)
X = x[:, None]
grid = np.linspace(-0.2, 1.2, 400)

# %%
# Fit both forests
# ----------------
# The Mondrian forest's ``predict(X, return_std=True)`` is the standard deviation of its
# Bayesian predictive (a mixture over trees); for the random forest we take the standard
# deviation of the trees' predictions, the usual stand-in.
mondrian = MondrianForestRegressor(n_estimators=50, random_state=0).fit(X, y)
forest = RandomForestRegressor(n_estimators=50, random_state=0).fit(X, y)
per_tree = np.stack([tree.predict(grid[:, None]) for tree in forest.estimators_])

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
PredictiveBandDisplay.from_estimator(mondrian, grid, X=x, y=y, ax=left)
left.set_title("Mondrian forest: mean ± 2 std")
PredictiveBandDisplay(grid, per_tree.mean(axis=0), per_tree.std(axis=0), X=x, y=y).plot(ax=right)
right.set_title("Random forest: mean ± 2 std across trees")
for ax in (left, right):
    ax.axvspan(0.4, 0.7, color="0.9", zorder=0)
    ax.set_xlabel("x")
left.set_ylabel("y")
fig.tight_layout()

# %%
# What the picture says
# ---------------------
# Inside the gap and beyond the training range the Mondrian forest's band widens (a test
# point may "branch off" above any node whose box does not contain it, and then falls back
# to the prior), while the random forest's trees agree there and its band stays narrow.
_, std = mondrian.predict(grid[:, None], return_std=True)
inside = (grid > 0.1) & (grid < 0.3)
gap = (grid > 0.5) & (grid < 0.6)
print(f"Mondrian std: {std[inside].mean():.3f} near the data, {std[gap].mean():.3f} in the gap")
plt.show()
