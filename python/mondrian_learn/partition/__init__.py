"""Random partition kernels (Davies & Ghahramani 2014, "The Random Forest Kernel and other
kernels for big data from random partitions"): ``k(a, b)`` is the probability that a random
partition puts ``a`` and ``b`` in the same cluster. Stored as ``m`` label vectors, the kernel
is only ever applied through O(m N) products, so GP regression, kernel PCA and SVMs scale
linearly in the number of points.

Modules: ``_kernel`` (``RandomPartitionKernel``), ``_samplers`` (the partition samplers),
``_base`` (``PartitionKernelEstimator``, sampling the kernel inside ``fit``), ``_operator``
(the solvers' orchestration over a local or distributed kernel), ``_gp``
(``PartitionGPRegressor``) with ``_marginal_likelihood`` (stochastic Lanczos quadrature)
and ``_variance`` (its predictive variances), ``_kpca`` (``PartitionKernelPCA``), ``_svc``
(``PartitionSVC``)."""

from mondrian_learn.partition._base import PartitionKernelEstimator
from mondrian_learn.partition._gp import PartitionGPRegressor
from mondrian_learn.partition._kernel import RandomPartitionKernel
from mondrian_learn.partition._kpca import PartitionKernelPCA
from mondrian_learn.partition._samplers import (
    FRESH,
    CallablePartitions,
    FastClusterPartitions,
    MondrianPartitions,
    RandomForestPartitions,
)
from mondrian_learn.partition._svc import PartitionSVC

__all__ = [
    "FRESH",
    "CallablePartitions",
    "FastClusterPartitions",
    "MondrianPartitions",
    "PartitionGPRegressor",
    "PartitionKernelEstimator",
    "PartitionKernelPCA",
    "PartitionSVC",
    "RandomForestPartitions",
    "RandomPartitionKernel",
]
