"""Hyper-parameters of the regression forest's predictive chosen from the data, instead of the
closed-form heuristic of Lakshminarayanan, Roy & Teh (AISTATS 2016, §3.2): by the forest's
log density of rows its trees were not grown on (the default), by the trees' marginal
likelihood (type-II maximum likelihood) or by the forest's leave-one-out density.

The held-out rule
-----------------
The forest predicts with the equal mixture over its M trees of each tree's branch-off mixture
(eq. 4–5). Choosing the prior by each tree's marginal likelihood fits the trees, not that
mixture: its variance is a tree's own predictive variance plus the spread of the trees' means,
and it came out too wide on every benchmark set. The held-out rule scores the forest's
predictive itself, on rows it has not seen. The rows are split into ``FOLDS`` random folds;
for each fold used, ``S`` extra trees (the scoring forest, seeded apart from the model's
trees) are grown on the other folds, and

    L(γ₁, γ₂, σ_y², ρ) = Σ_folds Σ_{i ∈ fold} w_i log p_S(y_i | x_i) / Σ w_i,

p_S the scoring forest's predictive with the spread factor ρ: every component mean μ of the
mixture is moved to m̄ + ρ (μ − m̄), m̄ the mixture's mean (ρ = 1 is the paper's mixture). The
trees do not depend on the prior, so every candidate is scored on the same trees. The spread
of a forest's tree means is the partitions' randomness (the trees are draws from the Mondrian
prior, not its posterior) as well as uncertainty about y, and how much of it belongs in the
predictive is what ρ measures, as ensemble forecasts calibrate their spread (Gneiting et al.,
"Calibrated probabilistic forecasting using ensemble model output statistics and minimum CRPS
estimation", Monthly Weather Review 2005).

ρ chosen on S trees is carried over to the model's M trees. For a point, let the trees' means
have variance B across draws of the partition; a K-tree forest's mean then errs by E∞ + B/K
in squared expectation (E∞ the error of the infinite forest), and the sample spread of its K
means is B (K − 1)/K on average. Calibration W + ρ_K² B (K − 1)/K = E∞ + B/K (W the mean
within-tree variance) gives ρ_K² = (K a + 1)/(K − 1) with a = (E∞ − W)/B the same for every
K; so ρ_M² = max(0, (M a + 1)/(M − 1)) with a = (ρ_S² (S − 1) − 1)/S.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize

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

#: The held-out rule's folds, of which as many are scored as reach ``HELD_OUT_ROWS`` rows (all
#: five below about 2,000 rows: every row is scored once; one fold, subsampled, from 10,000).
FOLDS = 5

#: Held-out rows scored at most: ρ and three log-scale hyper-parameters are placed to a few
#: per cent by this many log densities, and each evaluation reads every scored row.
HELD_OUT_ROWS = 2_000

#: Search box of ρ: 0 keeps only the trees' own predictive variances about the forest's mean;
#: above 1 widens the spread.
SPREAD_BOUNDS = (0.0, 2.0)


def scoring_trees(n_estimators: int) -> int:
    """S, the trees of each scoring forest: a quarter of the model's, between 2 and 8 (at
    least 2 to see a spread; 8 place ρ about as well as more, at 8 % of a 100-tree fit)."""
    return max(2, min(8, math.ceil(n_estimators / 4)))


def spread_for(n_estimators: int, scored_spread: float, n_scoring: int) -> float:
    """ρ for the model's M trees from ρ_S chosen on S scoring trees (module docstring)."""
    m, s = n_estimators, n_scoring
    if m <= 1:
        return scored_spread  # no spread between trees: ρ acts within the tree only
    a = (scored_spread**2 * (s - 1) - 1) / s
    return math.sqrt(max(0.0, (m * a + 1) / (m - 1)))


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on uint64 words (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def row_hashes(points: np.ndarray, y: np.ndarray | None, seed: int) -> np.ndarray:
    """A seeded 64-bit hash of each row's values (point, and target unless ``y`` is None): the
    held-out folds depend on what the rows are, not on their order, and copies of a row share
    a fold (so a held-out row is never also grown on)."""
    h = _mix(np.full(points.shape[0], np.uint64(seed % 2**64)))
    columns = [points[:, k] for k in range(points.shape[1])] + ([] if y is None else [y])
    for column in columns:
        values = np.ascontiguousarray(column, dtype=np.float64) + 0.0  # −0.0 → 0.0
        with np.errstate(over="ignore"):
            h = _mix(h + values.view(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
    return h


def held_out_folds(
    points: np.ndarray, y: np.ndarray | None, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (grown-on, scored) row indices of each fold the held-out rule uses: rows go to
    ``FOLDS`` folds by their hash (:func:`row_hashes`; of the points alone when ``y`` is
    None), as many folds are used as reach
    ``HELD_OUT_ROWS`` scored rows, and the last fold's scored rows are those of smallest hash
    up to that count."""
    h = row_hashes(points, y, seed)
    fold = (h % np.uint64(FOLDS)).astype(np.int64)
    out, scored = [], 0
    for k in range(FOLDS):
        if scored >= HELD_OUT_ROWS:
            break
        held = np.flatnonzero(fold == k)
        if held.size == 0:
            continue
        if scored + held.size > HELD_OUT_ROWS:
            held = np.sort(held[np.argsort(h[held], kind="stable")[: HELD_OUT_ROWS - scored]])
        grown = np.flatnonzero(fold != k)
        if grown.size == 0:
            continue
        scored += held.size
        out.append((grown, held))
    return out


def select_held_out(
    rows: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    scoring_forest: Callable[[int], Any],
    n_estimators: int,
    start: dict[str, float],
    free: list[str],
    y_variance: float,
    n_jobs: int,
    seed: int,
    initial: dict[str, float] | None = None,
) -> dict[str, float]:
    """Maximise the held-out criterion L (module docstring) over the hyper-parameters ``free``
    and ρ.

    Parameters
    ----------
    rows : (points, targets, weights or None)
        Every training row as the model's trees see them (``training_rows`` of the core).
    scoring_forest : callable
        ``scoring_forest(k)`` returns an unfitted core regressor for scoring forest ``k``
        (same tree parameters as the model, points already in the trees' coordinates, trees
        seeded apart from the model's).
    n_estimators : int
        M, the model's trees (ρ is carried over to them).
    start : dict
        The model's prior (its values of the hyper-parameters not in ``free``, and where the
        search starts without ``initial``).
    free : list of str
        Names from ``FREE`` to choose; ρ is always chosen.
    y_variance : float
        (Weighted) variance of the targets (the scale of the search box).
    n_jobs : int
        Threads.
    seed : int
        Seeds the folds.
    initial : dict or None, default=None
        Where the search starts (the previous choice, when a stream chooses again).

    Returns
    -------
    prior : dict
        ``mean``, ``gamma1``, ``gamma2``, ``noise_variance`` and ``spread`` (ρ for M trees).
    """
    points, y, weights = rows
    n_scoring = scoring_trees(n_estimators)
    forests = []
    for k, (grown, held) in enumerate(held_out_folds(points, y, seed)):
        model = scoring_forest(k)
        w = None if weights is None else np.ascontiguousarray(weights[grown])
        model.fit(points[grown], y[grown], n_scoring, n_jobs, n_scoring, None, w)
        held_w = np.ones(held.size) if weights is None else weights[held]
        forests.append((model, np.ascontiguousarray(points[held]), y[held], held_w))
    total = sum(float(np.sum(w)) for *_, w in forests)
    if not (np.isfinite(total) and total > 0):
        # No fold both grows and scores rows (every row a copy of one, or weights that
        # underflow): nothing to hold out, the prior stays as it is.
        return {**start, "spread": 1.0}
    names = [*free, "spread"]
    base = {**start, "spread": 1.0}

    def prior_at(theta: np.ndarray) -> dict[str, float]:
        prior = dict(base)
        for name, value in zip(names, theta):
            prior[name] = float(value if name == "spread" else np.exp(value))
        return prior

    def loss(theta: np.ndarray) -> float:
        p = prior_at(theta)
        score = 0.0
        for model, x, target, w in forests:
            try:
                model.fix_prior(p["mean"], p["gamma1"], p["gamma2"], p["noise_variance"], n_jobs)
                model.set_spread(p["spread"])
                score += float(np.dot(w, model.log_density(x, target, n_jobs)))
            except ValueError:  # a step left the valid range (a variance 0 or inf)
                return np.inf
        return -score / total if np.isfinite(score) else np.inf

    bounds = _log_bounds(start, free, y_variance) + [SPREAD_BOUNDS]
    if "noise_variance" in free:
        base["noise_variance"] = max(base["noise_variance"], base["gamma1"] / 200)
    origin = {**base, "spread": 0.5, **(initial or {})}
    theta0 = np.array(
        [origin[n] if n == "spread" else np.log(origin[n]) for n in names], dtype=float
    )
    theta0 = np.clip(theta0, *np.transpose(bounds))
    result = minimize(
        loss,
        theta0,
        method="L-BFGS-B",
        bounds=bounds,
        # The criterion is a mean log density: a change of 1e-6 per row is far below what
        # the held-out rows resolve.
        options={"maxfun": 40 * len(names), "ftol": 1e-6},
    )
    best = result.x if np.isfinite(result.fun) and result.fun <= loss(theta0) else theta0
    # No warning at the noise floor here: rows the trees never saw cannot make the criterion
    # grow without bound (a new point's component carries the prior's variance from its
    # branch-off time on), so σ_y² at its floor only means the data do not need it.
    prior = prior_at(best)
    prior["spread"] = spread_for(n_estimators, prior["spread"], n_scoring)
    return prior


def _log_bounds(start: dict[str, float], free: list[str], y_variance: float) -> list[tuple]:
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
        warnings.warn(
            f"hyperparameters={rule!r}: the criterion grows without bound as "
            "noise_variance → 0 (leaves whose targets are all equal; a row of "
            "sample_weight > 1 alone in its leaf counts as that many equal targets); "
            f"noise_variance stopped at its floor {np.exp(low):.3g} (1e-6 × var(y)). Pass "
            "a noise_variance, a larger min_samples_split or hyperparameters='heuristic' "
            "(or 'leave_one_out' with sample_weight).",
            UserWarning,
            stacklevel=7,
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
    model : mondrian_learn._core.Forest
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

    bounds = _log_bounds(start, free, y_variance)
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
