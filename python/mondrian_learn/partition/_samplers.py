"""Distributions over partitions (Davies & Ghahramani 2014, §4): each sampler draws ``m``
partitions of the training points and knows how to place new points in them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from mondrian_learn import _core
from mondrian_learn._base import EstimatorBase, store_parameters
from mondrian_learn._unit_box import UnitBoxMixin
from mondrian_learn._validation import (
    COUNT,
    FINITE_LIFETIME,
    InstanceOf,
    Integer,
    IsCallable,
    Options,
    Param,
)

#: Label of a new point that shares its cluster with no training point.
FRESH = np.iinfo(np.uint32).max


def check_training_data(estimator: EstimatorBase, X: Any, y: Any) -> tuple[Any, Any]:
    """The training points checked (sparse ones as CSR where the estimator reads them) and
    ``y`` with them when given: only supervised samplers read it, as it is (classes or
    numbers)."""
    sparse = estimator._sparse_formats()
    if y is None:
        return validate_data(estimator, X, dtype=np.float64, accept_sparse=sparse), None
    return validate_data(estimator, X, y, dtype=np.float64, accept_sparse=sparse, y_numeric=False)


_FORESTS = (
    RandomForestRegressor,
    RandomForestClassifier,
    ExtraTreesRegressor,
    ExtraTreesClassifier,
)


class MondrianPartitions(EstimatorBase):
    """Leaves of Mondrian trees with lifetime λ: the kernel estimates ``exp(−λ ‖a − b‖₁)``.

    Partition ρ is a Mondrian tree sampled on the training points (Balog et al. 2016,
    Prop. 1: two points share a leaf with probability ``exp(−λ ‖a − b‖₁)``). New points are
    placed by the conditional Mondrian: a point routed to leaf ℓ shares ℓ's cell with
    probability ``Π_j exp(−η_j(x) (τ_j − τ_parent(j)))`` over its path (η_j(x): how far x lies
    outside node j's box), else it sits alone. That probability is used as the weight of the
    point's cluster, which integrates the random extension out: the cross-kernel stays an
    unbiased estimate of the Laplace kernel, with lower variance than sampling the extension.

    Parameters
    ----------
    lifetime : float, default=1.0
        λ ≥ 0 (finite), in the units of the points the kernel samples on: the unit box
        unless the estimator has ``scale_features=False``.
    """

    _parameters = {"lifetime": Param(1.0, *FINITE_LIFETIME)}

    def __init__(self, lifetime: float = 1.0) -> None:
        store_parameters(self, locals())

    def _sample(
        self, unit_box: UnitBoxMixin, X: Any, y: Any, n_partitions: int, seed: int, n_jobs: int
    ) -> Any:
        points = unit_box._to_unit_box(X)
        return _core.PartitionKernel.mondrian(
            points, n_partitions, float(self.lifetime), seed, n_jobs
        )


class RandomForestPartitions(EstimatorBase):
    """Random Forest partitions (§4.3.1): a tree of a forest fitted on (X, y), cut at a
    random depth ``d ~ U{0, …, h}`` (h: the tree's height); clusters are the nodes at depth d.

    The forest has one tree per partition (each an independent draw of the randomised
    tree-growing process, standing in for "a tree sampled from the forest"). The kernel is
    supervised: it needs ``y``.

    Parameters
    ----------
    forest : scikit-learn forest or None, default=None
        An unfitted ``RandomForestRegressor``/``Classifier`` or ``ExtraTrees*`` to clone;
        ``n_estimators``, ``random_state`` and ``n_jobs`` are set by the kernel. None:
        ``RandomForestRegressor()`` for continuous targets, ``RandomForestClassifier()``
        otherwise (scikit-learn's defaults: fully grown trees).
    """

    _parameters = {
        "forest": Param(
            None,
            None,
            InstanceOf(_FORESTS, "a scikit-learn RandomForest or ExtraTrees estimator"),
        )
    }

    def __init__(
        self,
        forest: RandomForestRegressor
        | RandomForestClassifier
        | ExtraTreesRegressor
        | ExtraTreesClassifier
        | None = None,
    ) -> None:
        store_parameters(self, locals())

    def _fit_forest(
        self, X: np.ndarray, y: np.ndarray | None, n_partitions: int, seed: int, n_jobs: int
    ) -> Any:
        if y is None:
            raise ValueError("RandomForestPartitions is supervised: fit the kernel with y")
        if self.forest is None:
            continuous = type_of_target(y) == "continuous"
            forest = RandomForestRegressor() if continuous else RandomForestClassifier()
        else:
            forest = clone(self.forest)
        forest.set_params(n_estimators=n_partitions, random_state=seed % 2**32, n_jobs=n_jobs)
        if is_classifier(forest) and type_of_target(y) == "continuous":
            raise ValueError("a classification forest needs class labels, got continuous y")
        return forest.fit(X, y)

    def _sample(
        self, unit_box: UnitBoxMixin, X: Any, y: Any, n_partitions: int, seed: int, n_jobs: int
    ) -> Any:
        X = unit_box._mapped_array(X)  # scikit-learn's forest reads it too
        forest = self._fit_forest(X, y, n_partitions, seed, n_jobs)
        trees = [
            (
                t.tree_.children_left.astype(np.int64),
                t.tree_.children_right.astype(np.int64),
                t.tree_.feature.astype(np.int64),
                t.tree_.threshold.astype(np.float64),
            )
            for t in forest.estimators_
        ]
        return _core.PartitionKernel.random_forest(X, trees, seed, n_jobs)


class FastClusterPartitions(EstimatorBase):
    """Fast Cluster partitions (§4.3.2, Algorithm 2): keep each dimension with probability ½,
    draw ``s ~ U{0, …, h}``, pick ``2^s`` distinct training points as centres, and cluster every
    point with its nearest centre (Euclidean, kept dimensions). Cost ``N · 2^s`` per partition.

    Parameters
    ----------
    max_level : int or None, default=None
        h, in [0, 40]; None uses ``floor(log2 N)`` (up to one centre per point).
    """

    _parameters = {"max_level": Param(None, None, Integer(low=0, high=40))}

    def __init__(self, max_level: int | None = None) -> None:
        store_parameters(self, locals())

    def _sample(
        self, unit_box: UnitBoxMixin, X: Any, y: Any, n_partitions: int, seed: int, n_jobs: int
    ) -> Any:
        level = self.max_level
        if level is None:
            level = int(np.floor(np.log2(X.shape[0])))
        points = unit_box._to_unit_box(X)
        return _core.PartitionKernel.fast_cluster(points, n_partitions, int(level), seed, n_jobs)


class CallablePartitions(EstimatorBase):
    """Partitions defined by a program (the paper's "distributions defined by programs").

    ``function(X, y, rng)`` is called once per partition with a NumPy ``Generator`` seeded
    from ``(seed, ρ)`` and returns a rule: a callable mapping an array of points to integer
    cluster labels. The rule labels the training points and, later, new points (a new point
    whose label no training point has sits alone).

    Parameters
    ----------
    function : callable
        ``function(X, y, rng) -> rule``, ``rule(Z) -> labels`` of shape (n,).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.cluster import KMeans
    >>> def kmeans(X, y, rng):
    ...     k = int(rng.integers(2, 8))
    ...     return KMeans(k, n_init=1, random_state=int(rng.integers(2**31))).fit(X).predict
    >>> sampler = CallablePartitions(kmeans)
    """

    _parameters = {"function": Param(None, IsCallable())}

    def __init__(self, function: Callable[..., Any] | None = None) -> None:
        store_parameters(self, locals())

    def _rules(self, X: np.ndarray, y: np.ndarray | None, n_partitions: int, seed: int) -> tuple:
        rules, uniques, labels = [], [], np.empty((n_partitions, X.shape[0]), dtype=np.uint32)
        for rho in range(n_partitions):
            rule = self.function(X, y, np.random.default_rng([seed, rho]))
            if not callable(rule):
                raise ValueError("the partition function must return a callable rule")
            raw = np.asarray(rule(X))
            if raw.shape != (X.shape[0],):
                raise ValueError(f"a rule must return one label per point, got shape {raw.shape}")
            values, inverse = np.unique(raw, return_inverse=True)
            rules.append(rule)
            uniques.append(values)
            labels[rho] = inverse.reshape(-1)
        return rules, uniques, labels

    def _sample(
        self, unit_box: UnitBoxMixin, X: Any, y: Any, n_partitions: int, seed: int, n_jobs: int
    ) -> tuple[Any, list, list]:
        rules, uniques, labels = self._rules(unit_box._mapped_array(X), y, n_partitions, seed)
        return _core.PartitionKernel.from_labels(labels), rules, uniques


def assign_by_rules(rules: list, uniques: list, X: np.ndarray) -> np.ndarray:
    """Labels of new points under callable rules, mapped to the training clusters' ids
    (``FRESH`` for a label no training point has)."""
    out = np.full((len(rules), X.shape[0]), FRESH, dtype=np.uint32)
    for rho, (rule, values) in enumerate(zip(rules, uniques)):
        raw = np.asarray(rule(X))
        at = np.clip(np.searchsorted(values, raw), 0, len(values) - 1)
        found = values[at] == raw
        out[rho, found] = at[found]
    return out


_NAMED = {
    "mondrian": MondrianPartitions,
    "random_forest": RandomForestPartitions,
    "fast_cluster": FastClusterPartitions,
}


_SAMPLERS = (MondrianPartitions, RandomForestPartitions, FastClusterPartitions, CallablePartitions)

#: What the ``sampler`` parameter of the partition estimators accepts.
SAMPLER: list[Any] = [
    Options(set(_NAMED)),
    InstanceOf(_SAMPLERS, "a sampler object"),
    IsCallable(),
]

#: The parameters of every estimator that samples a random partition kernel.
SAMPLING = {
    "sampler": Param("mondrian", *SAMPLER),
    "n_partitions": Param(100, *COUNT),
}


def resolve_sampler(sampler: Any) -> Any:
    """The sampler object for a name, a sampler, or a bare callable (checked against
    :data:`SAMPLER` by the estimator), with its own parameters checked."""
    if isinstance(sampler, str):
        resolved = _NAMED[sampler]()
    elif isinstance(sampler, _SAMPLERS):
        resolved = sampler
    else:
        resolved = CallablePartitions(sampler)
    resolved._validate_params()
    return resolved
