"""Mondrian forests (Lakshminarayanan, Roy & Teh, AISTATS 2016): M Mondrian trees sampled on
the data, extended online by the conditional Mondrian, with Bayesian predictions."""

from mondrian_learn.forest._base import MondrianForestBase
from mondrian_learn.forest._regressor import MondrianForestRegressor

__all__ = ["MondrianForestBase", "MondrianForestRegressor"]
