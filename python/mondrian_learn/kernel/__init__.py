"""The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, UAI 2016): random
features from Mondrian trees, ridge regression on them, and the kernel width chosen along the
lifetime path; the Mondrian grid (a lifetime per dimension, Balog's report ch. 5) with its
lifetimes searched. The peers it is compared with are in :mod:`mondrian_learn.kernel.baselines`.

Modules: ``_base`` (what the kernel estimators share), ``_features``
(``MondrianKernelFeatures``), ``_ridge`` (``MondrianKernelRidge``, batch or online),
``_posterior`` (the ridges' Gaussian predictive), ``_evidence`` (the log marginal
likelihood), ``_path_cv`` (``MondrianKernelRidgeCV``, the lifetime path), ``_folds`` (the
rows the CV ridges' folds fit and score), ``_cells`` (occupied-cell features, shared with random
binning), ``_grid`` (``MondrianGridFeatures``), ``_grid_cv`` (``MondrianGridRidgeCV``) and
``_grid_search`` (its optimisers), ``baselines``.
"""

from mondrian_learn.kernel import baselines
from mondrian_learn.kernel._base import MondrianKernelBase
from mondrian_learn.kernel._features import MondrianKernelFeatures
from mondrian_learn.kernel._grid import MondrianGridFeatures
from mondrian_learn.kernel._grid_cv import MondrianGridRidgeCV
from mondrian_learn.kernel._path_cv import MondrianKernelRidgeCV
from mondrian_learn.kernel._ridge import MondrianKernelRidge

__all__ = [
    "MondrianGridFeatures",
    "MondrianGridRidgeCV",
    "MondrianKernelBase",
    "MondrianKernelFeatures",
    "MondrianKernelRidge",
    "MondrianKernelRidgeCV",
    "baselines",
]
