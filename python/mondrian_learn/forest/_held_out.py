"""The regression forest's predictive chosen on held-out rows (the default of
``MondrianForestRegressor``; Lakshminarayanan, Roy & Teh, AISTATS 2016, eq. 3–5 for the
predictive it scores).

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
from collections.abc import Callable
from typing import Any

import numpy as np

from mondrian_learn._newton import differenced, newton_in_box
from mondrian_learn.forest._hyperparameters import FREE, log_bounds

#: The held-out rule's folds, of which as many are scored as reach ``HELD_OUT_ROWS`` rows (all
#: five below about 2,000 rows: every row is scored once; one fold, subsampled, from 10,000).
FOLDS = 5

#: Held-out rows scored at most: ρ and three log-scale hyper-parameters are placed to a few
#: per cent by this many log densities, and each evaluation reads every scored row.
HELD_OUT_ROWS = 2_000

#: Newton steps of the outer search at most (each costs 6 evaluations of the profile in two
#: variables; it took 10 to 16 where measured).
OUTER_STEPS = 30

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
    folds = []
    for k, (grown, held) in enumerate(held_out_folds(points, y, seed)):
        model = scoring_forest(k)
        w = None if weights is None else np.ascontiguousarray(weights[grown])
        model.fit(points[grown], y[grown], n_scoring, n_jobs, n_scoring, None, w)
        held_w = np.ones(held.size) if weights is None else weights[held]
        folds.append((model, np.ascontiguousarray(points[held]), y[held], held_w))
    total = sum(float(np.sum(w)) for *_, w in folds)
    if not (np.isfinite(total) and total > 0):
        # No fold both grows and scores rows (every row a copy of one, or weights that
        # underflow): nothing to hold out, the prior stays as it is.
        return {**start, "spread": 1.0}
    base = dict(start)
    if "noise_variance" in free:
        base["noise_variance"] = max(base["noise_variance"], base["gamma1"] / 200)
    origin = {**base, "spread": 0.5, **(initial or {})}
    search = _ProfiledSearch(folds, total, base, free, y_variance, origin, n_jobs)
    best = search.start
    if search.outer_names:
        best = newton_in_box(
            differenced(lambda theta: search.profile(theta)[0]),
            search.start,
            np.array(search.outer_bounds),
            # A change of 1e-9 per row is far below what the held-out rows resolve.
            tolerance=1e-9,
            max_steps=OUTER_STEPS,
        )[1]
    # No warning at the noise floor here: it is where near-deterministic targets put σ_y²
    # (held-out rows the trees never saw are scored by components that keep the prior's
    # variance from their branch-off time on), and where the criterion can spike on rounded
    # targets (a held-out row whose target equals its leaf's labels), which no warning fixes.
    prior = search.prior_at(best, search.profile(best)[1])
    prior["spread"] = spread_for(n_estimators, prior["spread"], n_scoring)
    return prior


class _ProfiledSearch:
    """The held-out criterion L maximised in two nested searches.

    Multiplying γ₁ and σ_y² by the same c leaves every posterior mean unchanged and
    multiplies every variance of the scoring forests' predictive by c, and ρ moves only the
    component means: so for each value of the outer variables — γ₂ and log(σ_y²/γ₁) when
    both γ₁ and σ_y² are free, else the free ones among γ₁, γ₂, σ_y² — belief propagation
    runs once, and the inner variables log γ₁ (when both are free) and ρ are maximised on
    the predictive mixtures it gives (``ScaledMixtures`` of the core, with exact gradient and
    Hessian) by Newton's method. The outer search, Newton's method on second differences,
    moves one or two variables where a search of all four needed five propagations per step.
    """

    def __init__(
        self,
        folds: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray]],
        total: float,
        base: dict[str, float],
        free: list[str],
        y_variance: float,
        origin: dict[str, float],
        n_jobs: int,
    ) -> None:
        """``origin``: where both searches start (its outer values clipped to the box)."""
        self.folds, self.total = folds, total
        self.base, self.n_jobs = base, n_jobs
        self.scaled = "gamma1" in free and "noise_variance" in free
        box = dict(zip(free, log_bounds(base, free, y_variance)))
        self.box = box
        if self.scaled:
            # ratio = log(σ_y²/γ₁); log γ₁ itself is searched inside.
            ratio = (
                box["noise_variance"][0] - box["gamma1"][1],
                box["noise_variance"][1] - box["gamma1"][0],
            )
            self.outer_names = [n for n in free if n == "gamma2"] + ["ratio"]
            box = {**box, "ratio": ratio}
        else:
            self.outer_names = list(free)
        self.outer_bounds = [box[n] for n in self.outer_names]
        self.memo: dict[bytes, tuple[float, np.ndarray]] = {}
        values = {
            **{n: np.log(origin[n]) for n in FREE if n in origin},
            "ratio": np.log(origin["noise_variance"] / origin["gamma1"]),
        }
        self.start = np.array([values[n] for n in self.outer_names], dtype=float)
        if self.outer_names:
            self.start = np.clip(self.start, *np.transpose(self.outer_bounds))
        # The inner search starts from where it ended at the last outer point.
        self.last_inner = np.array(
            [np.log(origin["gamma1"]), origin["spread"]] if self.scaled else [origin["spread"]]
        )

    def propagated(self, theta: np.ndarray) -> dict[str, float]:
        """The prior belief propagation runs under for outer values ``theta`` (γ₁ at the
        base's value when it is searched inside)."""
        prior = dict(self.base)
        for name, value in zip(self.outer_names, theta):
            if name == "ratio":
                prior["noise_variance"] = prior["gamma1"] * float(np.exp(value))
            else:
                prior[name] = float(np.exp(value))
        return prior

    def inner_bounds(self, theta: np.ndarray) -> list[tuple[float, float]]:
        """Bounds of (log γ₁, ρ), or of ρ alone: log γ₁ in its box, and σ_y² in its box."""
        if not self.scaled:
            return [SPREAD_BOUNDS]
        ratio = theta[self.outer_names.index("ratio")]
        (g_lo, g_hi), (n_lo, n_hi) = self.box["gamma1"], self.box["noise_variance"]
        low, high = max(g_lo, n_lo - ratio), min(g_hi, n_hi - ratio)
        return [(low, max(low, high)), SPREAD_BOUNDS]

    def profile(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """(−L maximised over the inner variables, where it is maximised) at outer ``theta``."""
        key = np.asarray(theta, dtype=float).tobytes()
        if key in self.memo:
            return self.memo[key]
        prior = self.propagated(theta)
        mixtures = []
        try:
            for model, x, target, w in self.folds:
                model.fix_prior(
                    prior["mean"],
                    prior["gamma1"],
                    prior["gamma2"],
                    prior["noise_variance"],
                    self.n_jobs,
                    cavities=False,  # the held-out rows compute theirs along their paths
                )
                mixtures.append(model.scaled_mixtures(x, target, w, self.n_jobs))
        except ValueError:  # a step left the valid range (a variance 0 or inf)
            self.memo[key] = (np.inf, self.last_inner)
            return self.memo[key]
        reference = np.log(prior["gamma1"])

        def loss(inner: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
            """−L/W at the inner variables, with its gradient and Hessian in them."""
            log_scale = float(inner[0] - reference) if self.scaled else 0.0
            value, gradient, hessian = 0.0, np.zeros(2), np.zeros((2, 2))
            for m in mixtures:
                v, g, h = m.score(log_scale, float(inner[-1]))
                value, gradient, hessian = value + v, gradient + g, hessian + np.array(h)
            used = slice(0, 2) if self.scaled else slice(1, 2)
            return (
                -value / self.total,
                -gradient[used] / self.total,
                -hessian[used, used] / self.total,
            )

        # From the inner optimum of the last outer point: the outer search moves in small
        # steps, and Newton's method from there takes two or three.
        bounds = np.array(self.inner_bounds(theta))
        found = newton_in_box(
            lambda inner, _: loss(inner), np.clip(self.last_inner, *bounds.T), bounds
        )
        self.memo[key] = found
        self.last_inner = found[1]
        return found

    def prior_at(self, theta: np.ndarray, inner: np.ndarray) -> dict[str, float]:
        """The hyper-parameters and ρ_S at outer ``theta`` and inner ``inner``."""
        prior = self.propagated(theta)
        if self.scaled:
            ratio = prior["noise_variance"] / prior["gamma1"]
            prior["gamma1"] = float(np.exp(inner[0]))
            prior["noise_variance"] = prior["gamma1"] * ratio
        prior["spread"] = float(inner[-1])
        return prior
