"""
The lifetime path
=================

A Mondrian tree pruned at a lifetime λ is a Mondrian tree of lifetime λ, so one forest grown
to Λ holds the forests of every λ ≤ Λ. Sweeping its cuts in birth-time order scores all of
them for about the cost of one prediction (Balog et al., UAI 2016, §4).
:class:`~mondrian_learn.MondrianForestRegressorCV` and
:class:`~mondrian_learn.MondrianKernelRidgeCV` use that path to choose λ on held-out rows;
here both paths on scikit-learn's diabetes data, with the chosen λ marked.
"""

# %%
# Two estimators that choose their lifetime
# -----------------------------------------
import matplotlib.pyplot as plt
from sklearn.datasets import load_diabetes

from mondrian_learn import MondrianForestRegressorCV, MondrianKernelRidgeCV
from mondrian_learn.plotting import LifetimePathDisplay

X, y = load_diabetes(return_X_y=True)
# The heuristic prior keeps the example fast; the default tunes it on held-out rows.
forest = MondrianForestRegressorCV(
    n_estimators=30, lifetimes=50, hyperparameters="heuristic", random_state=0
).fit(X, y)
ridge = MondrianKernelRidgeCV(50, alphas=1.0, random_state=0).fit(X, y)

# %%
# Training and validation error against λ
# ---------------------------------------
# Training error falls as the trees grow; validation error falls, then rises once the
# forest (or the kernel) resolves noise.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, (name, model) in zip(axes, [("Mondrian forest", forest), ("Mondrian kernel", ridge)]):
    LifetimePathDisplay.from_estimator(model, "mse", ax=ax)
    ax.set_title(f"{name}: chosen λ = {model.lifetime_:.3g}")
    ax.legend()
fig.tight_layout()
print(f"forest λ = {forest.lifetime_:.3g}, kernel λ = {ridge.lifetime_:.3g}")
plt.show()
