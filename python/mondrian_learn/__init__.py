"""Mondrian processes, forests and kernels with scikit-learn estimators.

The heavy lifting is done by a Rust core (``mondrian_learn._core``); this package holds the
estimators: validation, parameters and orchestration, one subpackage per family
(:mod:`mondrian_learn.forest`, :mod:`mondrian_learn.kernel`, :mod:`mondrian_learn.partition`,
:mod:`mondrian_learn.density`).
"""

from mondrian_learn import density, forest, kernel, partition
from mondrian_learn.density import MondrianDensityEstimator
from mondrian_learn.forest import (
    MondrianForestClassifier,
    MondrianForestClassifierCV,
    MondrianForestRegressor,
    MondrianForestRegressorCV,
)
from mondrian_learn.kernel import (
    MondrianGridRidgeCV,
    MondrianKernelFeatures,
    MondrianKernelRidge,
    MondrianKernelRidgeCV,
)
from mondrian_learn.partition import (
    PartitionGPRegressor,
    PartitionKernelPCA,
    PartitionSVC,
    RandomPartitionKernel,
)

__all__ = [
    "MondrianDensityEstimator",
    "MondrianForestClassifier",
    "MondrianForestClassifierCV",
    "MondrianForestRegressor",
    "MondrianForestRegressorCV",
    "MondrianGridRidgeCV",
    "MondrianKernelFeatures",
    "MondrianKernelRidge",
    "MondrianKernelRidgeCV",
    "PartitionGPRegressor",
    "PartitionKernelPCA",
    "PartitionSVC",
    "RandomPartitionKernel",
    "density",
    "forest",
    "kernel",
    "partition",
]


def _version() -> str:
    """The installed distribution's version (one source: ``Cargo.toml``, which maturin reads)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mondrian-learn")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


__version__ = _version()
