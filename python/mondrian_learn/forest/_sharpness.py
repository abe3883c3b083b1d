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
the regressor (:mod:`mondrian_learn.forest._hyperparameters`): the same folds of rows by a
seeded hash of their points; each fold used is scored by two scoring forests A and B of S/2
trees each grown on the other folds (seeded after the model's trees), and

    L_K(τ, d) = Σ_i w_i (−log p_K(y_i | x_i; τ, d)) / Σ w_i

is the held-out log loss of a forest of K trees. Averaging K trees' distributions errs from the
infinite forest's by a term of variance ∝ 1/K, so to second order L_K = L_∞ + b/K: with L_S the
loss of the average of A and B and L_{S/2} the mean of A's and B's own losses,

    L_M = L_S − (L_{S/2} − L_S) (1 − S/M),

the loss carried over to the model's M trees, is minimised: over τ ∈ ``SHARPNESS_BOUNDS``
(Brent's method on log τ) for each least discount in ``MIN_DISCOUNTS``. The trees do not depend
on τ or on the discounts, so every candidate is scored on the same trees.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from mondrian_learn import _core
from mondrian_learn.forest._hyperparameters import MIN_CRITERION_ROWS, held_out_folds

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


def _tempered_loss(log_p: np.ndarray, held: tuple[np.ndarray, np.ndarray], tau: float) -> float:
    """Weighted mean log loss of the rows' labels under ``sharpen(exp(log_p), tau)``;
    ``held``: (labels, weights)."""
    labels, weights = held
    z = tau * log_p
    top = np.max(z, axis=1)
    log_norm = top + np.log(np.sum(np.exp(z - top[:, None]), axis=1))
    picked = z[np.arange(len(labels)), labels]
    return float(np.dot(weights, log_norm - picked) / np.sum(weights))


def _held_out_loss(logs: dict[str, np.ndarray], held: tuple, tau: float, whole: bool) -> float:
    """The held-out log loss at sharpness ``tau`` of the folds' S-tree forests (the average of
    their two scoring forests; ``whole``) or of their S/2-tree forests (the mean of the two
    losses); ``logs``: the log probabilities of each at every held-out row."""
    if whole:
        return _tempered_loss(logs["whole"], held, tau)
    return (_tempered_loss(logs["a"], held, tau) + _tempered_loss(logs["b"], held, tau)) / 2


def _best_sharpness(logs: dict[str, np.ndarray], held: tuple, whole: bool) -> tuple[float, float]:
    """τ minimising :func:`_held_out_loss` in ``SHARPNESS_BOUNDS``, and that loss."""
    result = minimize_scalar(
        lambda log_tau: _held_out_loss(logs, held, math.exp(log_tau), whole),
        bounds=np.log(SHARPNESS_BOUNDS),
        method="bounded",
        options={"xatol": 1e-3},
    )
    return math.exp(float(result.x)), float(result.fun)


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
        with np.errstate(divide="ignore"):
            logs = {"whole": np.log((p_a + p_b) / 2), "a": np.log(p_a), "b": np.log(p_b)}
        if fixed["sharpness"] is not None:
            tau = float(fixed["sharpness"])
            whole = _held_out_loss(logs, held_rows, tau, whole=True)
            halves = _held_out_loss(logs, held_rows, tau, whole=False)
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
