"""Support vector classification with a random partition kernel (Davies & Ghahramani 2014,
§5.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from mondrian_learn._base import EstimatorBase, document, restore_on_failure, store_parameters
from mondrian_learn._targets import check_sample_weight
from mondrian_learn._validation import (
    POSITIVE,
    RUNTIME,
    SCALING,
    Integer,
    Options,
    Param,
    draw_seed,
)
from mondrian_learn.partition._base import PartitionKernelEstimator
from mondrian_learn.partition._samplers import SAMPLING

#: The largest penalty per row, C × sample_weight, given to liblinear (its inverse the
#: least penalty of the heaviest row).
MAX_PENALTY = 1e12


class PartitionSVC(ClassifierMixin, PartitionKernelEstimator):
    """A kernel SVM with a random partition kernel, trained in the primal.

    ``k̂(a, b) = φ(a)·φ(b)`` for the sparse one-hot features ``φ`` (one column per cluster of
    each of the ``m`` partitions, value ``1/√m``), so the kernel SVM is a linear SVM on ``φ``:
    scikit-learn's :class:`~sklearn.svm.LinearSVC` on a CSR matrix with ``m`` non-zeros per
    row, O(m N) per pass instead of the O(N²) kernel matrix. The squared hinge is solved in
    the primal (liblinear's Newton method, ``dual=False``): its optimum does not depend on the
    order of the rows, so a row weighted k gives what k copies give (the dual coordinate
    descent, which the hinge loss needs, agrees only to about ``tol``).

    Parameters
    ----------
    sampler : str, sampler object or callable, default="mondrian"
        See :class:`RandomPartitionKernel` (``"random_forest"`` uses the class labels).
    n_partitions : int, default=100
        Number m of random partitions.
    C : float, default=1.0
        Inverse regularisation strength (> 0); C × the largest ``sample_weight`` within
        [1e-12, 1e12] (beyond, the margin is hard already, or the data ignored, and liblinear
        stalls).
    loss : {"hinge", "squared_hinge"}, default="squared_hinge"
        As scikit-learn's ``LinearSVC``.
    max_iter : int, default=1000
        As scikit-learn's ``LinearSVC`` (at most 2³¹ − 1, liblinear's integer).
    tol : float, default=1e-4
        As scikit-learn's ``LinearSVC``.
    scale_features, random_state, n_jobs
        As for :class:`RandomPartitionKernel`.
    verbose : int, default=0
        Report each stage of the fit (sampling, the linear SVM) with its time on stderr.

    Attributes
    ----------
    kernel_ : RandomPartitionKernel
    svm_ : sklearn.svm.LinearSVC
    classes_ : ndarray
    n_iter_ : int
        Iterations of the linear SVM solver.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrian_learn.partition import PartitionSVC, MondrianPartitions
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); y = (X ** 2).sum(axis=1) < 0.5
    >>> svc = PartitionSVC(MondrianPartitions(lifetime=3.0), random_state=0).fit(X, y)
    >>> bool(svc.score(X, y) > 0.9)
    True
    """

    _parameters = {
        **SAMPLING,
        "C": Param(1.0, *POSITIVE),
        "loss": Param("squared_hinge", Options({"hinge", "squared_hinge"})),
        "max_iter": Param(1000, Integer(low=1, high=2**31 - 1)),  # liblinear's C int
        "tol": Param(1e-4, *POSITIVE),
        **SCALING,
        **RUNTIME,
    }

    def __init__(
        self,
        sampler: str | EstimatorBase | Callable[..., Any] = "mondrian",
        *,
        n_partitions: int = 100,
        C: float = 1.0,
        loss: str = "squared_hinge",
        max_iter: int = 1000,
        tol: float = 1e-4,
        scale_features: bool = True,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool | int = 0,
    ) -> None:
        store_parameters(self, locals())

    @restore_on_failure
    @document("X", "y", "sample_weight")
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> PartitionSVC:
        """Sample the partitions on the rows of positive weight and fit the linear SVM on
        their one-hot features (each row's loss times its weight).

        Returns
        -------
        self : object
            The estimator itself.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=self._sparse_formats())
        check_classification_targets(y)
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        X, y = X[keep], y[keep]
        penalty = float(self.C) * (1.0 if weights is None else float(weights.max()))
        if not 1.0 / MAX_PENALTY <= penalty <= MAX_PENALTY:
            raise ValueError(
                f"C × the largest sample_weight is {penalty:g}, outside [{1 / MAX_PENALTY:g}, "
                f"{MAX_PENALTY:g}]: the SVM is a hard-margin one (or all margin) long before, "
                "and liblinear's solvers stop making progress (C = 1e120 and C = 1e-200 ran for "
                "minutes); change C or rescale sample_weight"
            )
        rng, stages = self._sample_kernel(X, y)
        self.svm_ = LinearSVC(
            C=self.C,
            loss=self.loss,
            dual=self.loss == "hinge",
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=draw_seed(rng) % 2**32,
        ).fit(self.kernel_.features(), y, sample_weight=weights)
        self.classes_ = self.svm_.classes_
        self.n_iter_ = self.svm_.n_iter_
        stages.done(f"linear SVM in {self.n_iter_} iterations")
        return self

    @document("X")
    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distance to the separating hyperplane in feature space.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Signed distance to the separating hyperplane in feature space.
        """
        X = self._fitted_input(X)
        return self.svm_.decision_function(self.kernel_.features(X))

    @document("X")
    def predict(self, X: Any) -> np.ndarray:
        """Class of each point.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Class of each point.
        """
        X = self._fitted_input(X)
        return self.svm_.predict(self.kernel_.features(X))
