"""
Calibration of predictive intervals
===================================

A model's central p-interval should hold a share p of new targets. This example draws the
observed against the nominal coverage for a :class:`~mondrian_learn.MondrianForestRegressor`
(its own predictive distribution, a mixture over trees), for scikit-learn's
:class:`~sklearn.ensemble.RandomForestRegressor` with a Gaussian whose standard deviation is
the spread across trees, and for an NGBoost-style Gaussian: one gradient-boosted model for the
mean and a second one for the log of the squared residuals. Points below the diagonal are
over-confident.
"""

# %%
# Noisy data whose noise grows with x
# -----------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.model_selection import train_test_split

from mondrian_learn import MondrianForestRegressor
from mondrian_learn.calibration import LEVELS, gaussian_coverage_errors
from mondrian_learn.plotting import CalibrationDisplay

rng = np.random.default_rng(0)
X = rng.uniform(0, 1, size=(800, 3))
y = np.sin(6 * X[:, 0]) + X[:, 1] + (0.1 + 0.4 * X[:, 0]) * rng.normal(size=len(X))
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=0)

# %%
# Three predictive distributions
# ------------------------------
# The NGBoost-style Gaussian fits its variance model on held-out residuals of the mean model
# (half of the training rows each), so that the residuals are not those of points it saw.
mondrian = MondrianForestRegressor(n_estimators=30, random_state=0).fit(X_train, y_train)
forest = RandomForestRegressor(n_estimators=30, random_state=0).fit(X_train, y_train)
per_tree = np.stack([tree.predict(X_test) for tree in forest.estimators_])

half = len(y_train) // 2
mean_model = GradientBoostingRegressor(random_state=0).fit(X_train[:half], y_train[:half])
residuals = y_train[half:] - mean_model.predict(X_train[half:])
scale_model = GradientBoostingRegressor(max_depth=2, random_state=0)
scale_model.fit(X_train[half:], np.log(residuals**2 + 1e-6))
# E[log χ²₁] = −1.27: shift the mean log squared residual back to the log variance.
boosted_std = np.sqrt(np.exp(scale_model.predict(X_test) + 1.27))

# %%
# Coverage against nominal level
# ------------------------------
levels = np.asarray(LEVELS)
fig, ax = plt.subplots(figsize=(5, 5))
display = CalibrationDisplay.from_estimator(mondrian, X_test, y_test, levels, ax=ax)
display.line_.set_label("Mondrian forest")
for name, mean, std in [
    ("random forest, std across trees", per_tree.mean(axis=0), per_tree.std(axis=0)),
    ("boosted Gaussian (NGBoost-style)", mean_model.predict(X_test), boosted_std),
]:
    observed = levels + gaussian_coverage_errors(mean, std, y_test, levels)
    ax.plot(levels, observed, marker="s", label=name)
ax.legend(loc="upper left", fontsize="small")
ax.set_title("Observed against nominal coverage")
fig.tight_layout()

# %%
# What the picture says
# ---------------------
# The random forest's trees agree more than its errors warrant (they were all fitted on the
# same targets), so its intervals are too narrow. The Mondrian forest's posterior predictive
# adds the noise and the uncertainty about the leaf means to the spread of its trees, and
# errs, if anything, on the cautious side.
worst = np.abs(display.observed - levels).max()
print(f"largest coverage error of the Mondrian forest: {worst:.3f}")
plt.show()
