"""
Online learning curve against river
===================================

:class:`mondrian_learn.river.MondrianForestRegressor` wraps the Mondrian forest for river's
one-row-at-a-time API.
Each row extends the trees by the conditional Mondrian process, so the forest after n rows
is distributed as one fitted on those n rows in a batch. Here progressive validation
(predict each row, then learn it) on river's synthetic Friedman stream, against river's
Hoeffding tree regressor and its adaptive random forest.
"""

# %%
# Progressive validation on a synthetic stream
# --------------------------------------------
import itertools

import matplotlib.pyplot as plt
from river import datasets, evaluate, forest, metrics, tree

from mondrian_learn.river import MondrianForestRegressor

n_rows, step = 1000, 50
models = {
    "Mondrian forest (10 trees)": MondrianForestRegressor(seed=0),
    "river Hoeffding tree": tree.HoeffdingTreeRegressor(),
    "river adaptive random forest (10 trees)": forest.ARFRegressor(n_models=10, seed=0),
}
curves = {}
for name, model in models.items():
    stream = itertools.islice(datasets.synth.Friedman(seed=0), n_rows)
    checkpoints = evaluate.iter_progressive_val_score(stream, model, metrics.MAE(), step=step)
    curves[name] = [(c["Step"], c["MAE"].get()) for c in checkpoints]

# %%
# Mean absolute error of the predictions so far
# ---------------------------------------------
fig, ax = plt.subplots(figsize=(7, 4))
for name, curve in curves.items():
    ax.plot(*zip(*curve), label=name)
ax.set_xlabel("rows seen")
ax.set_ylabel("progressive MAE")
ax.set_title("Friedman stream (river.datasets.synth)")
ax.legend()
fig.tight_layout()
# %%
# Progressive validation scores each row before the model learns it, so every curve is an
# honest test error. The Mondrian forest's error keeps falling with the stream, since its
# trees keep growing where the new rows fall.
for name, curve in curves.items():
    print(f"{name:<42} MAE after {curve[-1][0]} rows: {curve[-1][1]:.3f}")
plt.show()
