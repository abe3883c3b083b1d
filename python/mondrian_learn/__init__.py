"""Mondrian processes, forests and kernels with scikit-learn estimators.

The heavy lifting is done by a Rust core (``mondrian_learn._core``); this package holds the
estimators: validation, parameters and orchestration, one subpackage per family
(:mod:`mondrian_learn.forest`, :mod:`mondrian_learn.kernel`, :mod:`mondrian_learn.partition`,
:mod:`mondrian_learn.density`).

Beside them: :mod:`mondrian_learn.dask` (forests and partition kernels on Dask),
:mod:`mondrian_learn.river` (river adapters, their shared base in ``_river_base``),
:mod:`mondrian_learn.plotting` (Displays; the maps they draw in ``_plot_maps``),
:mod:`mondrian_learn.calibration`, :mod:`mondrian_learn.datasets`,
:mod:`mondrian_learn.bayesopt` (its test functions in ``_test_functions``), and the command
line demo (``__main__``, ``_demo``). What every estimator shares: ``_base``
(``EstimatorBase`` and its mixins), ``_validation`` (the parameter checker and seeds),
``_points`` (user arrays as the core takes them), ``_unit_box`` (the map of the features to
the unit box), ``_targets`` (targets and ``sample_weight``), ``_memory`` (the memory check),
``_progress`` (progress bars), ``_lifetime_path`` (what the lifetime-path estimators share:
their checkpoints, validation splits and pooled scores), ``_newton`` (Newton in a box), and
``_core`` (the compiled Rust core).
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
