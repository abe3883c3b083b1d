"""Mondrian forests: M Mondrian trees sampled on the data and extended online by the
conditional Mondrian, with Bayesian predictions — regression (Lakshminarayanan, Roy & Teh,
AISTATS 2016) and classification (NIPS 2014).

Modules: ``_base`` (``MondrianForestBase``, what both forests share), ``_regressor``
(``MondrianForestRegressor``), ``_regression_prior`` (its prior checked, chosen and scored),
``_held_out`` and ``_hyperparameters`` (the predictive's hyper-parameters chosen from the
data), ``_conformal`` (split-conformal intervals), ``_inspection`` (``decision_path``,
``feature_importances_``), ``_classifier`` (``MondrianForestClassifier``), ``_sharpness``
(its probabilities calibrated on held-out rows), ``_lifetime_search`` (the CV estimators
that choose the lifetime)."""

from mondrian_learn.forest._base import MondrianForestBase
from mondrian_learn.forest._classifier import MondrianForestClassifier
from mondrian_learn.forest._lifetime_search import (
    MondrianForestClassifierCV,
    MondrianForestRegressorCV,
)
from mondrian_learn.forest._regressor import MondrianForestRegressor

__all__ = [
    "MondrianForestBase",
    "MondrianForestClassifier",
    "MondrianForestClassifierCV",
    "MondrianForestRegressor",
    "MondrianForestRegressorCV",
]
