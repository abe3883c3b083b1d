"""How honest a predictive distribution is: coverage of central intervals and NLPD.

The measures of Lakshminarayanan, Roy & Teh (AISTATS 2016, Table 2): for each level ``c``, the
fraction of test targets inside the central ``c`` interval minus ``c`` (0 is perfect calibration,
negative is over-confident), and the negative log predictive density.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

#: The paper's levels, 10 % … 90 %.
LEVELS = np.round(np.arange(0.1, 1.0, 0.1), 1)


def coverage_errors(model: Any, X: Any, y: Any, levels: Any = LEVELS) -> np.ndarray:
    """Observed minus ideal coverage of a model's central predictive intervals.

    Parameters
    ----------
    model : estimator with ``predict_interval(X, confidence)``
        E.g. a fitted :class:`~mondrian_learn.MondrianForestRegressor` (exact mixture
        quantiles).
    X : array-like of shape (n_samples, n_features)
        Test points.
    y : array-like of shape (n_samples,)
        Their targets.
    levels : sequence of float in (0, 1), default 0.1, 0.2, …, 0.9
        Nominal coverages of the central intervals.

    Returns
    -------
    errors : ndarray of shape (n_levels,)
        Observed minus nominal coverage at each level.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn import MondrianForestRegressor
    >>> from mondrian_learn.calibration import coverage_errors
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2)); y = X[:, 0] + rng.normal(scale=0.1, size=2000)
    >>> model = MondrianForestRegressor(random_state=0).fit(X[:1500], y[:1500])
    >>> bool(np.all(np.abs(coverage_errors(model, X[1500:], y[1500:], [0.5, 0.9])) < 0.05))
    True
    """
    y = np.asarray(y, dtype=np.float64)
    levels = [float(level) for level in np.atleast_1d(levels)]
    if hasattr(model, "predict_quantiles"):  # every bound in one pass over X
        bounds = [q for c in levels for q in ((1 - c) / 2, (1 + c) / 2)]
        quantiles = model.predict_quantiles(X, bounds)
        intervals = [quantiles[:, 2 * k : 2 * k + 2] for k in range(len(levels))]
    else:
        intervals = [model.predict_interval(X, confidence=c) for c in levels]
    errors = [
        float(np.mean((interval[:, 0] <= y) & (y <= interval[:, 1]))) - c
        for interval, c in zip(intervals, levels)
    ]
    return np.asarray(errors)


def gaussian_coverage_errors(mean: Any, std: Any, y: Any, levels: Any = LEVELS) -> np.ndarray:
    """:func:`.coverage_errors` of Gaussian predictions ``N(mean, std²)`` (e.g. a random forest
    with the spread across its trees, as the paper evaluates them).

    Parameters
    ----------
    mean, std : array-like of shape (n_samples,)
        The Gaussians' means and standard deviations.
    y, levels
        As in :func:`coverage_errors`.

    Returns
    -------
    errors : ndarray of shape (n_levels,)
        Observed minus nominal coverage at each level.
    """
    mean, std, y = (np.asarray(a, dtype=np.float64) for a in (mean, std, y))
    errors = []
    for level in levels:
        half_width = norm.ppf(0.5 + float(level) / 2) * std
        errors.append(float(np.mean(np.abs(y - mean) <= half_width)) - float(level))
    return np.asarray(errors)


def gaussian_nlpd(mean: Any, std: Any, y: Any) -> float:
    """Mean negative log density of ``y`` under ``N(mean, std²)``.

    A zero ``std`` where the target misses the mean makes the NLPD infinite, as it should: a
    point prediction claimed certainty and was wrong. Points predicted with zero ``std`` and
    hit exactly (an infinite density) are left out of the mean.

    Parameters
    ----------
    mean, std : array-like of shape (n_samples,)
        The Gaussians' means and standard deviations.
    y : array-like of shape (n_samples,)
        The targets.

    Returns
    -------
    nlpd : float
        The mean negative log predictive density.
    """
    mean, std, y = (np.asarray(a, dtype=np.float64) for a in (mean, std, y))
    if np.any((std <= 0) & (y != mean)):
        return float("inf")
    spread = std > 0
    return float(-np.mean(norm.logpdf(y[spread], loc=mean[spread], scale=std[spread])))
