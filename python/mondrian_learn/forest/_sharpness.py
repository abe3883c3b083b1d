"""The classification forest's probabilities calibrated on rows its trees were not grown on.

The forest predicts the equal average p̄ over its M trees of each tree's smoothed class
distribution (Lakshminarayanan, Roy & Teh, NIPS 2014, §4). The trees are draws from the
Mondrian prior, not from a posterior over partitions, and where they disagree their average
is flatter than the class frequencies warrant: the forest is under-confident (on the benchmark
sets its expected calibration error was 4–8× gradient boosting's). The discounts cannot
correct this: they shape each tree's distribution, and changing γ a thousandfold moved the
test log loss in the fourth digit. The prediction is therefore the tempered average

    p(k | x) = p̄_k(x)^τ / Σ_j p̄_j(x)^τ,

τ the sharpness (τ = 1 is the paper's average; τ > 1 sharpens it), the logarithmic
recalibration of an ensemble (temperature scaling, Guo et al., "On calibration of modern neural
networks", ICML 2017), chosen with the least discount ``min_discount`` by the held-out rule of
the regressor (:mod:`mondrian_learn.forest._held_out`): the same folds of rows by a
seeded hash of their points; each fold used is scored by two scoring forests A and B of S/2
trees each grown on the other folds (seeded after the model's trees), and

    L_K(τ, d) = Σ_i w_i (−log p_K(y_i | x_i; τ, d)) / Σ w_i

is the held-out log loss of a forest of K trees, convex in τ. Averaging K trees'
distributions errs from the infinite forest's by a term of variance ∝ 1/K, so to second order
L_K(τ) = L_∞(τ) + B(τ)/K, and its minimiser moves with K as τ*_K = τ*_∞ − c/K (on letter,
test set: τ* = 1.77, 2.19, 2.40, 2.53 at K = 8, 16, 32, 100). With τ_S the minimiser of the
loss L_S of the average of A and B and τ_{S/2} that of the mean L_{S/2} of A's and B's own
losses (Newton steps within ``SHARPNESS_BOUNDS``),

    τ_M = τ_S + (τ_S − τ_{S/2}) (1 − S/M)

is carried over to the model's M trees, and the least discount in ``MIN_DISCOUNTS`` is the
one of least L_M = L_S − (L_{S/2} − L_S)(1 − S/M) at those minima (the optimal loss follows
a + b/K as well). The trees do not depend on τ or on the discounts, so every candidate is
scored on the same trees.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mondrian_learn import _core
from mondrian_learn.forest._held_out import held_out_folds
from mondrian_learn.forest._hyperparameters import MIN_CRITERION_ROWS

#: Least discounts tried (the paper's rule is 0; 0.01 was the fixed default): larger floors
#: smooth pure leaves towards their parents, which a set with many weak features prefers.
MIN_DISCOUNTS = (0.001, 0.01, 0.03, 0.1, 0.3)

#: Search interval of τ.
SHARPNESS_BOUNDS = (0.25, 8.0)

#: The rows grow by this factor between two choices of a stream (as the regressor's prior).
GROWTH = 2


def half_scoring_trees(n_estimators: int) -> int:
    """S/2, the trees of each of a fold's two scoring forests: an eighth of the model's,
    between 1 and 4 (S = 8 at 100 trees, as the regressor's scoring forests)."""
    return max(1, min(4, math.ceil(n_estimators / 8)))


def sharpen(proba: np.ndarray, sharpness: float) -> np.ndarray:
    """``proba ** sharpness`` normalised per row (module docstring), computed as the core
    computes a classifier's predictions; ``proba`` as it is for τ = 1."""
    if sharpness == 1.0:
        return proba
    return _core.sharpen(np.ascontiguousarray(proba, dtype=np.float64), float(sharpness))


def _tempered(log_p: np.ndarray, held: tuple, tau: float) -> tuple[float, float, float]:
    """The weighted mean log loss of the rows' labels under ``sharpen(exp(log_p), tau)`` and
    its first two derivatives in τ; ``held``: (labels, weights); ``log_p`` finite (the
    caller floors probabilities at the smallest normal float).

    With z = τ log p and q = softmax(z), the loss of a row is logsumexp(z) − z_y, its
    derivative E_q[log p] − log p_y and its second derivative Var_q[log p] ≥ 0: the loss is
    convex in τ."""
    labels, weights = held
    z = tau * log_p
    top = np.max(z, axis=1)
    e = np.exp(z - top[:, None])
    total = np.sum(e, axis=1)
    q = e / total[:, None]
    mean = np.sum(q * log_p, axis=1)
    picked = log_p[np.arange(len(labels)), labels]
    norm = float(np.sum(weights))
    loss = float(np.dot(weights, top + np.log(total) - tau * picked)) / norm
    slope = float(np.dot(weights, mean - picked)) / norm
    curve = float(np.dot(weights, np.sum(q * log_p * log_p, axis=1) - mean * mean)) / norm
    return loss, slope, max(curve, 0.0)


def _best_sharpness(logs: dict[str, np.ndarray], held: tuple, whole: bool) -> tuple[float, float]:
    """τ in ``SHARPNESS_BOUNDS`` minimising the held-out log loss of the folds' S-tree forests
    (the average of their two scoring forests; ``whole``) or of their S/2-tree forests (the
    mean of the two losses), and that loss: safeguarded Newton steps on the convex loss
    (``logs``: the log probabilities of each forest at every held-out row)."""
    mats = [logs["whole"]] if whole else [logs["a"], logs["b"]]

    def at(tau: float) -> tuple[float, float, float]:
        parts = [_tempered(m, held, tau) for m in mats]
        return tuple(float(np.mean(values)) for values in zip(*parts))  # type: ignore[return-value]

    lo, hi = SHARPNESS_BOUNDS
    low, high = at(lo), at(hi)
    if low[1] >= 0:
        return lo, low[0]
    if high[1] <= 0:
        return hi, high[0]
    tau = min(max(1.0, lo), hi)
    for _ in range(100):
        loss, slope, curve = at(tau)
        if slope > 0:
            hi = tau
        else:
            lo = tau
        step = slope / curve if curve > 0 else np.inf
        new = tau - step
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - tau) <= 1e-6 * tau or hi - lo <= 1e-9 * tau:
            return new, at(new)[0]
        tau = new
    return tau, loss


def select_sharpness(
    rows: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    scoring_forest: Callable[[int], Any],
    n_estimators: int,
    discount_rate: float,
    fixed: dict[str, float | None],
    n_jobs: int,
    seed: int,
) -> dict[str, float] | None:
    """Choose ``min_discount`` and the sharpness τ on held-out rows (module docstring).

    Parameters
    ----------
    rows : (points, labels, weights or None)
        Every training row as the model's trees see it (``training_rows`` of the core;
        labels are class indices).
    scoring_forest : callable
        ``scoring_forest(k)`` returns an unfitted core classifier seeded as scoring forest
        ``k`` (same tree parameters as the model, trees seeded after the model's).
    n_estimators : int
        M, the model's trees.
    discount_rate : float
        γ of the discounts (not chosen: the trees' distributions barely depend on it).
    fixed : dict
        ``min_discount`` and ``sharpness``: a value fixes it, None leaves it to be chosen.
    n_jobs : int
        Threads.
    seed : int
        Seeds the folds.

    Returns
    -------
    choice : dict or None
        ``min_discount`` and ``sharpness``; None when there are too few rows to hold out
        (below ``MIN_CRITERION_ROWS`` of weight, or no fold both grows and scores rows).
    """
    points, labels, weights = rows
    total = float(len(labels) if weights is None else np.sum(weights))
    if not total >= MIN_CRITERION_ROWS:
        return None
    n_half = half_scoring_trees(n_estimators)
    n_scoring = 2 * n_half
    folds = []
    # Folds by the points alone: the choice does not depend on how the classes are coded.
    for k, (grown, held) in enumerate(held_out_folds(points, None, seed)):
        if np.unique(labels[grown]).size < 2:
            continue  # a forest grown on one class scores nothing
        w = None if weights is None else np.ascontiguousarray(weights[grown])
        pair = []
        for h in range(2):
            model = scoring_forest(2 * k + h)
            model.fit(points[grown], labels[grown], n_half, n_jobs, n_half, None, w)
            pair.append(model)
        folds.append((pair, np.ascontiguousarray(points[held]), held))
    if not folds:
        return None
    rows_held = np.concatenate([held for *_, held in folds])
    held_rows = (
        labels[rows_held].astype(np.intp),
        np.ones(rows_held.size) if weights is None else weights[rows_held],
    )
    if not np.sum(held_rows[1]) > 0:
        return None
    floors = MIN_DISCOUNTS if fixed["min_discount"] is None else (fixed["min_discount"],)
    carry = 1.0 - n_scoring / n_estimators
    best: tuple[float, float, float] | None = None
    for floor in floors:
        a, b = [], []
        for (first, second), x, _ in folds:
            for model, out in ((first, a), (second, b)):
                model.set_discounts(discount_rate, floor)
                out.append(model.predict_proba(x, n_jobs))
        p_a, p_b = np.concatenate(a), np.concatenate(b)
        # A probability 0 (a fixed min_discount of 0) counts as the smallest normal float:
        # the loss stays finite, and large where the forest rules a held-out label out.
        tiny = np.finfo(np.float64).tiny
        logs = {
            "whole": np.log(np.maximum((p_a + p_b) / 2, tiny)),
            "a": np.log(np.maximum(p_a, tiny)),
            "b": np.log(np.maximum(p_b, tiny)),
        }
        if fixed["sharpness"] is not None:
            tau = float(fixed["sharpness"])
            whole = _tempered(logs["whole"], held_rows, tau)[0]
            halves = (
                _tempered(logs["a"], held_rows, tau)[0] + _tempered(logs["b"], held_rows, tau)[0]
            ) / 2
        else:
            tau_whole, whole = _best_sharpness(logs, held_rows, whole=True)
            tau_half, halves = _best_sharpness(logs, held_rows, whole=False)
            tau = tau_whole + (tau_whole - tau_half) * carry
            tau = float(np.clip(tau, *SHARPNESS_BOUNDS))
        value = whole - (halves - whole) * carry
        if np.isfinite(value) and (best is None or value < best[0]):
            best = (value, floor, tau)
    if best is None:
        return None
    return {"min_discount": best[1], "sharpness": best[2]}
