"""Hyper-parameters of the regression forest's predictive chosen from the data, instead of the
closed-form heuristic of Lakshminarayanan, Roy & Teh (AISTATS 2016, §3.2): by the forest's
log density of rows its trees were not grown on (the default), by the trees' marginal
likelihood (type-II maximum likelihood) or by the forest's leave-one-out density.

The held-out rule is in ``_held_out``; this module holds the search box and the two
criteria on the model's own trees.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize

from mondrian_learn._base import warn

#: Trees scored per evaluation: the criteria are sums over trees of the same distribution, each
#: summing over every training point, so a few trees place the optimum about as well as all
#: of them at a fraction of the cost.
SCORED_TREES = 4

#: Below this total row weight the criteria are not used and the heuristic stands: with a
#: handful of rows the marginal likelihood and the leave-one-out density are maximised at
#: the search box's edges (γ₁ or σ² at 0), and a stream would be predicted by its first rows.
MIN_CRITERION_ROWS = 32

#: The free hyper-parameters, optimised in log space (the prior mean stays mean(y)).
FREE = ("gamma1", "gamma2", "noise_variance")


def log_bounds(start: dict[str, float], free: list[str], y_variance: float) -> list[tuple]:
    """The search box of ``free`` in log space (``RELATIVE_BOUNDS`` about their scales)."""
    # Constant targets have no scale of their own: take the resolution of their value (the
    # old floor, tiny/eps, made precision-weighted means overflow for targets around 1e150).
    resolution = np.finfo(float).eps * max(abs(start["mean"]), 1.0)
    scale = y_variance if y_variance > 0 else resolution**2
    reference = {"gamma1": scale, "gamma2": start["gamma2"], "noise_variance": scale}
    return [tuple(np.log(reference[name] * np.array(RELATIVE_BOUNDS[name]))) for name in free]


def _warn_at_noise_floor(rule: str, free: list[str], best: np.ndarray, bounds: list) -> None:
    """Warn when the search stopped with σ_y² at its floor."""
    if "noise_variance" not in free:
        return
    low = bounds[free.index("noise_variance")][0]
    if best[free.index("noise_variance")] <= low + 1e-3:
        warn(
            f"hyperparameters={rule!r}: the criterion grows without bound as "
            "noise_variance → 0 (leaves whose targets are all equal; a row of "
            "sample_weight > 1 alone in its leaf counts as that many equal targets); "
            f"noise_variance stopped at its floor {np.exp(low):.3g} (1e-6 × var(y)). Pass "
            "a noise_variance, a larger min_samples_split or hyperparameters='heuristic' "
            "(or 'leave_one_out' with sample_weight).",
            UserWarning,
        )


#: Search box, relative to the heuristic's value (γ₂) or to the targets' variance (γ₁, σ²).
#: Both criteria grow without bound as σ² → 0 when a leaf holds several equal targets (any
#: leaf of a tree that interpolates discrete targets); the box keeps the result a usable model,
#: and a warning says when the noise stopped at its floor.
RELATIVE_BOUNDS = {"gamma1": (1e-6, 1e6), "gamma2": (1e-4, 1e4), "noise_variance": (1e-6, 10.0)}


def select_prior(
    model: Any,
    rule: str,
    free: list[str],
    y_variance: float,
    n_jobs: int,
    n_rows: float,
    initial: dict[str, float] | None = None,
) -> dict[str, float]:
    """Maximise ``rule``'s criterion over the hyper-parameters ``free``, starting from the
    prior the model holds (the heuristic's values, and the caller's where fixed) or from
    ``initial``.

    Parameters
    ----------
    model : mondrian_learn._core.ForestRegressor
        A fitted regression forest; its trees do not depend on the prior, so every candidate
        prior is scored on the same trees.
    rule : {"evidence", "leave_one_out"}
        "evidence": Σ over trees of log p(y | tree, prior), the exact marginal likelihood of
        each tree's Gaussian model (belief propagation keeping its normalising constants).
        "leave_one_out": Σ_i log (1/M Σ_m p_m(y_i | y_−i, tree m)), the forest mixture's exact
        leave-one-out predictive density with the trees held fixed — it scores the predictive
        the forest reports (a mixture over trees), where the evidence scores single trees.
    free : list of str
        The names (from ``FREE``) the caller left to be chosen; the prior mean stays fixed.
    y_variance : float
        (Weighted) variance of the training targets (the scale of the search box).
    n_jobs : int
        Threads.
    n_rows : float
        Σ of the training rows' weights, their number when unweighted (to normalise the
        criterion).
    initial : dict or None, default=None
        Where the search starts (the values of ``free`` chosen before, when a stream chooses
        the prior again: the optimum moves little as rows arrive, and the search from there
        takes a fraction of the evaluations); None: the model's prior. The search box is
        placed by the model's prior either way.

    Returns
    -------
    prior : dict
        ``mean``, ``gamma1``, ``gamma2``, ``noise_variance``.
    """
    start = dict(model.prior(n_jobs))
    n_trees = min(SCORED_TREES, model.n_trees)

    def prior_at(theta: np.ndarray) -> dict[str, float]:
        prior = dict(start)
        prior.update(zip(free, np.exp(theta)))
        return prior

    def loss(theta: np.ndarray) -> float:
        p = prior_at(theta)
        try:
            value = model.prior_score(
                rule, p["mean"], p["gamma1"], p["gamma2"], p["noise_variance"], n_trees, n_jobs
            )
        except ValueError:  # a step left the valid range (a variance 0 or inf)
            return np.inf
        return -value / (n_rows * n_trees) if np.isfinite(value) else np.inf

    bounds = log_bounds(start, free, y_variance)
    # The heuristic's noise (var(y)/500) is often far below the real noise: start at least at
    # a hundredth of the prior scale so the simplex is not stuck in a spike of the likelihood.
    if "noise_variance" in free:
        start["noise_variance"] = max(start["noise_variance"], start["gamma1"] / 200)
    origin = start if initial is None else {**start, **initial}
    theta0 = np.clip(np.log([origin[name] for name in free]), *np.transpose(bounds))
    # L-BFGS-B on finite differences: the criteria are smooth in log space, and it needed 80
    # evaluations where Nelder–Mead needed 133 for the same optimum (Friedman #1, N = 50,000).
    result = minimize(
        loss, theta0, method="L-BFGS-B", bounds=bounds, options={"maxfun": 60 * len(free)}
    )
    best = result.x if np.isfinite(result.fun) and result.fun <= loss(theta0) else theta0
    _warn_at_noise_floor(rule, free, best, bounds)
    return prior_at(best)
