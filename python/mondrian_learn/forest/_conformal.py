"""Split-conformal intervals on top of the regression forest's own predictive: normalised
residuals of rows the forest was not fitted on give intervals with a finite-sample coverage
guarantee (Vovk, Gammerman & Shafer, "Algorithmic Learning in a Random World", 2005; the
normalised score of Papadopoulos et al. 2002 and Lei et al., "Distribution-free predictive
inference for regression", JASA 2018, §5.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._validation import Real, check_parameter


def conformal_quantile(scores: np.ndarray, confidence: float) -> float:
    """The ⌈(n + 1) c⌉-th smallest of the n calibration ``scores`` (sorted), ∞ when that rank
    exceeds n: the interval that then covers a new exchangeable row with probability ≥ c."""
    n = scores.size
    rank = math.ceil((n + 1) * confidence - 1e-12)
    return float(scores[rank - 1]) if rank <= n else math.inf


class ConformalIntervals:
    """``conformalize`` and the conformal branch of ``predict_interval`` for a regressor with
    ``predict(X, return_std=True)``."""

    def conformalize(self, X: Any, y: Any) -> Any:
        """Calibrate conformal intervals on rows the forest was not fitted on.

        Stores the normalised residuals s_i = | y_i − m(x_i) | / σ(x_i) of the calibration rows,
        m and σ the predictive mean and standard deviation. Afterwards
        ``predict_interval(X, confidence=c, method="conformal")`` returns m(x) ± q̂ σ(x), q̂
        the ⌈(n + 1) c⌉-th smallest of the n scores: if the calibration rows and a new row
        are exchangeable (drawn alike, none of them used to fit), the interval covers the new
        row's target with probability at least c, whatever the model — the split-conformal
        guarantee (Vovk et al. 2005; the normalised score of Lei et al. 2018, §5.2), which
        adapts the widths to the forest's own uncertainty. With n rows, levels above
        n/(n + 1) give infinite intervals. ``fit`` and ``partial_fit`` discard the
        calibration (the residuals were of the previous model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration points, not used to fit the forest.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        check_is_fitted(self)
        X, y = self._training_data(X, y, reset=False)  # type: ignore[attr-defined]
        if y.size == 0:
            raise ValueError("conformalize needs at least one calibration row")
        mean, std = self.predict(X, return_std=True)  # type: ignore[attr-defined]
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.abs(y - mean) / std
        scores[(std == 0) & (y == mean)] = 0.0
        self.conformity_scores_ = np.sort(scores)
        return self

    def _conformal_interval(self, X: Any, confidence: float) -> np.ndarray:
        """m(x) ± q̂ σ(x) from the calibration of :meth:`conformalize`."""
        scores = getattr(self, "conformity_scores_", None)
        if scores is None:
            raise ValueError(
                "method='conformal' needs calibration rows: call conformalize(X_calibration, "
                "y_calibration) after fit, with rows not used to fit"
            )
        check_parameter("confidence", confidence, [Real(low=0, high=1, closed="neither")])
        mean, std = self.predict(X, return_std=True)  # type: ignore[attr-defined]
        q = conformal_quantile(scores, confidence)
        with np.errstate(invalid="ignore"):
            half = np.where(std > 0, q * std, 0.0) if math.isfinite(q) else np.inf
        return np.column_stack([mean - half, mean + half])
