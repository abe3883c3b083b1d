"""What the estimators built on a sampled random partition kernel share (GP regression, kernel
PCA, SVC): the kernel's parameters, sampling it inside ``fit``, reading points through it
(dense or sparse), and stage reporting."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from mondrian_learn._base import EstimatorBase
from mondrian_learn._progress import StageTimer
from mondrian_learn._validation import draw_seed
from mondrian_learn.partition._kernel import RandomPartitionKernel


class PartitionKernelEstimator(EstimatorBase):
    """Base of the estimators that sample a :class:`.RandomPartitionKernel` on the training
    points (``kernel_``) and work with it through products (Davies & Ghahramani 2014, §5).

    A base, not an estimator: each estimator writes out its own parameters, among them the
    kernel's (``sampler``, ``n_partitions``, ``scale_features``, ``n_jobs``, as for
    :class:`.RandomPartitionKernel`: the kernel scales the features, so lifetimes are in the
    units of the unit box unless ``scale_features=False``), ``random_state`` (seeds the
    kernel, then whatever the estimator draws itself) and ``verbose`` (reports each stage of
    the fit with its time).

    Parameters
    ----------
    *args, **kwargs
        None accepted: making the base itself is a ``TypeError``.

    Notes
    -----
    X may be a scipy sparse matrix wherever points are taken: the kernel reads it (dense once
    for the samplers at ``fit``, a block of rows at a time afterwards), with the results of the
    same values given dense.
    """

    _accepts_sparse = True

    def _core_input(self, X: Any) -> Any:
        """Checked points as they are: the kernel maps and converts them itself (sparse ones
        a block of rows at a time)."""
        return X

    def _sample_kernel(self, X: np.ndarray, y: Any) -> tuple[np.random.RandomState, StageTimer]:
        """Sample ``kernel_`` on ``X`` (and ``y``, for supervised samplers).

        Returns the estimator's random state, to draw what comes next, and the stage timer.
        """
        rng = check_random_state(self.random_state)
        stages = StageTimer(self.verbose, type(self).__name__)
        # A seed for the kernel, usable as its random_state.
        seed = draw_seed(rng, 2**32 - 1)
        kernel = RandomPartitionKernel(
            self.sampler,
            n_partitions=self.n_partitions,
            scale_features=self.scale_features,
            random_state=seed,
            n_jobs=self.n_jobs,
        )
        self.kernel_ = kernel.fit(X, y)
        stages.done(f"sampled {self.n_partitions} partitions")
        return rng, stages

    @property
    def data_min_(self) -> np.ndarray:
        """Offset of the kernel's map to the unit box (zeros when ``scale_features=False``)."""
        return self.kernel_.data_min_

    @property
    def data_scale_(self) -> np.ndarray:
        """Scale of the kernel's map to the unit box (ones when ``scale_features=False``)."""
        return self.kernel_.data_scale_
