"""
Bayesian optimisation of the Branin function
============================================

A Mondrian forest's predictive standard deviation makes it a cheap surrogate for Bayesian
optimisation, updated online with each evaluation (Lakshminarayanan, Roy & Teh, AISTATS
2016, §5.3). :func:`mondrian_learn.bayesopt.optimize_box` minimises a function over a box by
the lower confidence bound mean − κ·std, here on the Branin function (minimum 0.398 at three
points), against random search with the same number of evaluations.
"""

# %%
# The search
# ----------
import matplotlib.pyplot as plt
import numpy as np

from mondrian_learn.bayesopt import BRANIN_DOMAIN, branin, optimize_box

n_evaluations = 40
result = optimize_box(branin, BRANIN_DOMAIN, n_evaluations, n_candidates=5000, random_state=0)
rng = np.random.default_rng(0)
random_points = rng.uniform(BRANIN_DOMAIN[:, 0], BRANIN_DOMAIN[:, 1], size=(n_evaluations, 2))
random_best = np.minimum.accumulate(branin(random_points))

# %%
# Where it looked, and how fast it got close
# ------------------------------------------
u, v = np.meshgrid(np.linspace(*BRANIN_DOMAIN[0], 200), np.linspace(*BRANIN_DOMAIN[1], 200))
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
contours = left.contourf(u, v, np.log(branin(np.dstack([u, v]))), levels=20, cmap="viridis")
fig.colorbar(contours, ax=left, label="log Branin")
order = np.arange(n_evaluations)
points = left.scatter(*result.X.T, c=order, cmap="autumn", s=18, ec="black", lw=0.3)
left.plot(*result.x_best, marker="*", ms=14, c="white", mec="black", label="best found")
left.set_xlabel("x₁")
left.set_ylabel("x₂")
left.legend(loc="upper right")
left.set_title("evaluations (yellow: later)")
right.semilogy(order + 1, result.best_so_far - 0.397887, label="Mondrian forest UCB")
right.semilogy(order + 1, random_best - 0.397887, label="random search")
right.set_xlabel("evaluations")
right.set_ylabel("best value − minimum")
right.legend()
fig.tight_layout()

# %%
# After its random start the search concentrates on one basin of the minimum and gets
# within a small fraction of a unit of it, where random search with the same budget stays
# further off.
print(f"Mondrian forest search: best {result.y_best:.4f} at {np.round(result.x_best, 3)}")
print(f"random search:          best {random_best[-1]:.4f}")
plt.show()
