"""
Classifier confidence away from the data
========================================

A classifier should not be sure of a class far from every training point. Over the plane
around iris's petal measurements (three species), this example colours each point by the
largest class probability: a :class:`~mondrian_learn.MondrianForestClassifier` grows less
sure with the distance from the flowers in most directions (its hierarchical smoothing falls
back towards the prior where a test point branches off the trees), while a decision tree and
a random forest stay certain wherever their axis-aligned regions reach. ``python -m
mondrian_learn demo`` draws the same picture.
"""

# %%
# Three classifiers on two features
# ---------------------------------
import matplotlib.pyplot as plt
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from mondrian_learn import MondrianForestClassifier
from mondrian_learn.plotting import ConfidenceDisplay

iris = load_iris()
X, y = iris.data[:, 2:], iris.target_names[iris.target]  # petal length and width (cm)
models = {
    "Mondrian forest": MondrianForestClassifier(n_estimators=50, random_state=0),
    "Decision tree": DecisionTreeClassifier(random_state=0),
    "Random forest": RandomForestClassifier(50, random_state=0),
}

# %%
# Largest class probability over the plane
# ----------------------------------------
# The plane reaches one data range beyond the flowers on every side (``margin=1``).
fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
for ax, (name, model) in zip(axes, models.items()):
    display = ConfidenceDisplay.from_estimator(model.fit(X, y), X, y, margin=1.0, ax=ax)
    ax.set_title(name)
    ax.set_xlabel("petal length (cm)")
axes[0].set_ylabel("petal width (cm)")
axes[0].legend(title="species", loc="upper left", fontsize="small")
fig.colorbar(display.image_, ax=axes, label="largest class probability (1/3: uniform)")

# %%
# Far from the flowers (the corner at 12 cm × 5 cm) the Mondrian forest is close to
# uniform; the others pick a species with certainty.
corner = [[12.0, 5.0]]
for name, model in models.items():
    print(f"{name:<16} largest probability at (12, 5): {model.predict_proba(corner).max():.2f}")
plt.show()
