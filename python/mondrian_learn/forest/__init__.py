"""Mondrian forests: M Mondrian trees sampled on the data and extended online by the
conditional Mondrian, with Bayesian predictions — regression (Lakshminarayanan, Roy & Teh,
AISTATS 2016) and classification (NIPS 2014)."""

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
