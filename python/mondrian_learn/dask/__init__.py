"""mondrian-learn beyond one machine's memory, on Dask (``pip install "mondrian-learn[dask]"``).

:class:`DaskMondrianForest` grows a forest on a Dask cluster from a Dask array or dataframe,
its trees spread over the workers, and predicts lazily on Dask collections;
:func:`fit_chunks` grows the same forest on one machine from chunks read one at a time
(:func:`array_chunks` over a numpy memory map, :func:`parquet_chunks` over parquet row groups).
:class:`PartitionGPRegressor` and :class:`PartitionKernelPCA` take Dask arrays and keep their
data (and the partitions' labels) on the workers. Nothing of Dask is imported by
``import mondrian_learn``; this module imports it where a Dask path needs it.

Modules: ``_forest`` (``DaskMondrianForest``), ``_parts`` (a part: a range of its trees),
``_tasks`` (what it runs on the workers), ``_chunks`` (collections cut into chunks),
``_stream`` (``fit_chunks`` and the chunk readers on one machine); ``_partition`` (the
partition kernel with its labels on the workers), ``_operator`` (its operator and the GP's
system), ``_estimator`` (the base of the partition estimators on Dask) and
``_partition_models`` (``PartitionGPRegressor``, ``PartitionKernelPCA``).
"""

from mondrian_learn.dask._forest import DaskMondrianForest
from mondrian_learn.dask._partition_models import PartitionGPRegressor, PartitionKernelPCA
from mondrian_learn.dask._parts import tree_ranges
from mondrian_learn.dask._stream import array_chunks, fit_chunks, parquet_chunks

__all__ = [
    "DaskMondrianForest",
    "PartitionGPRegressor",
    "PartitionKernelPCA",
    "array_chunks",
    "fit_chunks",
    "parquet_chunks",
    "tree_ranges",
]
