"""The regression forest's prior (Lakshminarayanan, Roy & Teh, AISTATS 2016, §3): the values
a caller fixes checked against what the posterior's arithmetic resolves, the free ones chosen
by the forest's ``hyperparameters`` rule after a fit (and again as a stream's rows double),
and the trees' marginal likelihood under it."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from mondrian_learn._validation import Integer, check_parameter
from mondrian_learn.forest._held_out import scoring_trees, select_held_out
from mondrian_learn.forest._hyperparameters import FREE, MIN_CRITERION_ROWS, select_prior


class RegressionPrior:
    """The prior of :class:`MondrianForestRegressor`'s hierarchical Gaussian node means:
    checked, chosen and scored on its fitted core forest ``model_``."""

    def _check_fixed_prior(self, y: np.ndarray) -> None:
        """Raise ``ValueError`` naming a fixed hyper-parameter outside what the posterior's
        arithmetic resolves: γ₁ and σ_y² within 1e±12 × var(y) (below, the mixture's variance
        E[μ² + v] − E[μ]² is lost to rounding and the std comes out 0), γ₂ within 1e±100, μ_H
        within 1e100 standard deviations of mean(y) (``prior_mean=1e300`` gave zero standard
        deviations, ``gamma1=5e-324`` NaN means, ``noise_variance=1e308`` infinite ones)."""
        with np.errstate(over="ignore", invalid="ignore"):
            var = float(np.var(y)) if y.size else 1.0
        scale = var if np.isfinite(var) and var > 0 else 1.0
        ranges = {
            "gamma1": (1e-12 * scale, 1e12 * scale, "1e±12 × var(y)"),
            "noise_variance": (1e-12 * scale, 1e12 * scale, "1e±12 × var(y)"),
            "gamma2": (1e-100, 1e100, "1e±100"),
        }
        for name, (low, high, what) in ranges.items():
            value = getattr(self, name)
            if value is not None and not isinstance(value, str) and not low <= value <= high:
                raise ValueError(
                    f"{name}={value!r} is outside [{low:.3g}, {high:.3g}] ({what}), where the "
                    "posterior's arithmetic stays finite and resolved"
                )
        if self.prior_mean is not None:
            offset = abs(float(self.prior_mean) - float(np.mean(y)))
            if not offset <= 1e100 * np.sqrt(scale):
                raise ValueError(
                    f"prior_mean={self.prior_mean!r} lies more than 1e100 standard deviations "
                    f"of y from its mean {float(np.mean(y)):.6g}: the posterior would not be finite"
                )

    def _fixed_prior(self) -> dict[str, Any]:
        """The hyper-parameters the caller fixed (None: free), as the core takes them."""

        def optional(value: Any) -> Any:
            return value if value is None or isinstance(value, str) else float(value)

        names = ("prior_mean", "gamma1", "gamma2", "noise_variance")
        return {name: optional(getattr(self, name)) for name in names}

    def _scoring_forest(self, model: Any, k: int) -> Any:
        """Scoring forest ``k`` of the held-out rule for ``model``: the same trees' law, on
        points already in its coordinates, its trees seeded after the model's."""
        # Nothing fixed: the search sets every hyper-parameter of the scoring forests itself.
        unset = dict.fromkeys(("prior_mean", "gamma1", "gamma2", "noise_variance"))
        scoring = self._core_regressor(model.n_features, model.seed, model.lifetime, False, unset)
        m = self._forest_trees()
        scoring.offset_trees(m + k * scoring_trees(m))
        return scoring

    def _choose_prior_again(self) -> None:
        """The prior chosen again on every row seen, as ``fit`` chooses it."""
        if self.hyperparameters == "heuristic" or (
            self.hyperparameters != "held_out" and not self._free_hyperparameters()
        ):
            return  # the core applies the heuristic itself when the rows have doubled
        n_jobs = self._threads()
        before = self.model_.reset_prior(n_jobs, **self._fixed_prior())
        variance, total = self.model_.target_moments()
        self._select_prior(self.model_, variance, total, n_jobs, initial=before)

    def _free_hyperparameters(self) -> list[str]:
        return [name for name in FREE if getattr(self, name) is None]

    def _finish_fit(
        self, model: Any, y: np.ndarray, weights: np.ndarray | None, n_jobs: int
    ) -> None:
        variance, total = model.target_moments()
        self._select_prior(model, variance, total, n_jobs)
        self.__dict__.pop("conformity_scores_", None)

    def _select_prior(
        self,
        model: Any,
        variance: float,
        total: float,
        n_jobs: int,
        initial: dict[str, float] | None = None,
    ) -> dict[str, float] | None:
        """Choose the free hyper-parameters by ``hyperparameters`` on the fitted ``model``
        (targets of (weighted) variance ``variance`` and total weight ``total``), the search
        starting from ``initial`` when given, and fix them in it; the chosen prior, or None
        when nothing is chosen (the heuristic, or all fixed).
        """
        free = self._free_hyperparameters()
        if self.hyperparameters == "heuristic" or total < MIN_CRITERION_ROWS:
            return None
        if self.hyperparameters == "held_out":
            prior = select_held_out(
                model.training_rows(),
                lambda k: self._scoring_forest(model, k),
                self._forest_trees(),
                dict(model.prior(n_jobs)),
                free,
                variance,
                n_jobs,
                model.seed,
                initial=initial,
            )
        elif free:
            prior = select_prior(
                model, self.hyperparameters, free, variance, n_jobs, total, initial=initial
            )
        else:
            return None
        model.fix_prior(
            prior["mean"], prior["gamma1"], prior["gamma2"], prior["noise_variance"], n_jobs
        )
        model.set_spread(prior.get("spread", 1.0))
        return prior

    @property
    def prior_(self) -> dict[str, float]:
        """The hyper-parameters in use: ``mean`` (μ_H), ``gamma1``, ``gamma2``,
        ``noise_variance``, and ``spread`` (ρ of the forest's predictive; 1 unless
        ``hyperparameters="held_out"`` chose it)."""
        check_is_fitted(self)
        return {**self.model_.prior(self._threads()), "spread": self.model_.spread}

    def log_marginal_likelihood(self, n_trees: int | None = None) -> float:
        """Σ over trees of log p(y | tree, ``prior_``): each tree's exact marginal likelihood of
        the training targets under the hierarchical Gaussian prior in use (the criterion of
        ``hyperparameters="evidence"``).

        Parameters
        ----------
        n_trees : int or None, default=None
            Sum over the first ``n_trees`` trees (None: all).

        Returns
        -------
        log_likelihood : float
            The sum over the trees.
        """
        check_is_fitted(self)
        k = self.model_.n_trees if n_trees is None else n_trees
        check_parameter("n_trees", k, [Integer(low=1)])
        p = self.prior_
        return float(
            self.model_.prior_score(
                "evidence",
                p["mean"],
                p["gamma1"],
                p["gamma2"],
                p["noise_variance"],
                int(k),
                self._threads(),
            )
        )

    @property
    def log_marginal_likelihood_value_(self) -> float:
        """The :meth:`log_marginal_likelihood` over every tree, scikit-learn's
        ``GaussianProcessRegressor`` spelling (current after ``partial_fit``)."""
        return self.log_marginal_likelihood()
