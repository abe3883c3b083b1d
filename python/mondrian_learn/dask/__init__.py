"""mondrian-learn on Dask (``pip install "mondrian-learn[dask]"``): estimators that take Dask
arrays and keep their data on the workers. Importing :mod:`mondrian_learn` imports nothing of
Dask; this module does."""

from mondrian_learn.dask._partition_models import PartitionGPRegressor, PartitionKernelPCA

__all__ = ["PartitionGPRegressor", "PartitionKernelPCA"]
