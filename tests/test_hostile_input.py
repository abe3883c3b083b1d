"""Hostile and extreme input (issue 16): sizes that cannot be allocated, thread counts beyond the
machine, variances at the ends of float64 — a clear exception naming the parameter, never a
panic, an abort, a hang or a runaway thread count."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import mondrian_learn as ml
from mondrian_learn import partition
from mondrian_learn._validation import resolve_n_jobs

X = np.random.default_rng(0).uniform(size=(60, 3))
Y = np.sin(4 * X[:, 0])


@pytest.mark.parametrize("size", [2**63, 10**9])
@pytest.mark.parametrize(
    "make",
    [
        lambda n: ml.MondrianForestRegressor(n_estimators=n),
        lambda n: ml.MondrianForestClassifier(n_estimators=n),
        lambda n: ml.MondrianKernelFeatures(n_estimators=n),
        lambda n: ml.MondrianKernelRidge(n_estimators=n),
        lambda n: ml.MondrianKernelRidgeCV(n_estimators=n, max_lifetime=1.0),
        lambda n: ml.MondrianGridRidgeCV(n_estimators=n),
        lambda n: partition.RandomPartitionKernel(n_partitions=n),
        lambda n: partition.RandomPartitionKernel("random_forest", n_partitions=n),
    ],
)
def test_sizes_beyond_memory_are_refused_before_allocating(make: Any, size: int) -> None:
    model = make(size)
    name = "n_partitions" if isinstance(model, partition.RandomPartitionKernel) else "n_estimators"
    y = (Y > 0).astype(int) if isinstance(model, ml.MondrianForestClassifier) else Y
    with pytest.raises(MemoryError, match=f"{name}={size}"):
        model.fit(X, y)
    assert not hasattr(model, "model_")


@pytest.mark.parametrize(
    "make",
    [
        ml.MondrianForestRegressor,
        ml.MondrianForestClassifier,
        lambda **k: ml.MondrianForestRegressorCV(lifetimes=3, **k),
        lambda **k: ml.MondrianForestClassifierCV(lifetimes=3, **k),
    ],
    ids=["regressor", "classifier", "regressor-cv", "classifier-cv"],
)
def test_candidate_counts_beyond_the_data_are_the_data_s_counts(make: Any) -> None:
    # candidate_locations=2**63 panicked in a worker thread and hung the process, 2**31
    # allocated 16 GiB for 60 rows: locations beyond the rows are the rows' count,
    # dimensions beyond the features the features' count, with the same results.
    y = (Y > 0).astype(int) if "Classifier" in repr(make(n_estimators=1)) else Y
    X_test = X[:10] + 0.01

    def predict(dimensions: Any, locations: Any) -> np.ndarray:
        model = make(
            n_estimators=3,
            candidate_dimensions=dimensions,
            candidate_locations=locations,
            random_state=0,
        )
        model.fit(X, y)
        return getattr(model, "predict_proba", model.predict)(X_test)

    bound = predict(3, len(X))
    for locations in (2**63, np.int64(2**62), 2**31):
        np.testing.assert_array_equal(predict(3, locations), bound)
    np.testing.assert_array_equal(predict(2**31, len(X)), bound)
    np.testing.assert_array_equal(predict(2**63, 2**63), bound)


@pytest.mark.parametrize("gamma", [1e308, 2.0**63])
def test_density_with_the_strongest_prior_is_the_uniform_density(gamma: float) -> None:
    # γ = 1e308 overflowed the prior's strength γ (depth + 1)² and gave NaN log densities; as
    # γ → ∞ the shares of every cut are the uniform ones, so the density is 1 / volume.
    model = ml.MondrianDensityEstimator(n_estimators=3, gamma=gamma, random_state=0).fit(X)
    scores = model.score_samples(X[:20])
    volume = np.prod(1.2 * (X.max(axis=0) - X.min(axis=0)))  # the box: margins of 0.1
    np.testing.assert_allclose(scores, -np.log(volume), rtol=1e-9)


def test_thread_counts_are_capped_at_the_cpus() -> None:
    """``n_jobs=2**40`` started a thread per job (14,720 threads, 16 minutes on 2 cores)."""
    import os

    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    cpus = len(os.sched_getaffinity(0))
    assert resolve_n_jobs(2**40) == cpus
    assert resolve_n_jobs(-(2**40)) == 1
    assert resolve_n_jobs(-1) == cpus
    before = threads()
    model = ml.MondrianForestRegressor(4, n_jobs=2**40, random_state=0).fit(X, Y)
    assert threads() <= before + cpus  # the model's pool: one thread per CPU at most
    reference = ml.MondrianForestRegressor(4, n_jobs=1, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    core = ml.MondrianKernelFeatures(4, random_state=0).fit(X).model_
    before = threads()
    core.transform(X, 2**20)  # the core caps a direct caller too
    assert threads() <= before + cpus


def test_lanczos_steps_beyond_n_are_exact_and_cheap() -> None:
    """Lanczos on an N × N operator is exact after N steps: 10⁶ steps on N = 40 runs N."""
    cut = partition.MondrianPartitions(lifetime=2.0)
    start = time.perf_counter()
    big = partition.PartitionGPRegressor(cut, n_partitions=20, lanczos_steps=10**6, random_state=0)
    big.fit(X[:40], Y[:40])
    assert time.perf_counter() - start < 60  # 32 s and then a 7 TiB request before
    exact = partition.PartitionGPRegressor(cut, n_partitions=20, lanczos_steps=40, random_state=0)
    exact.fit(X[:40], Y[:40])
    np.testing.assert_array_equal(big.predict(X), exact.predict(X))


@pytest.mark.parametrize(
    "fixed, message",
    [
        ({"noise_variance": 1e308}, "noise_variance=1e\\+308 is too large"),
        ({"signal_variance": 5e-324}, "signal_variance=4.9.*e-324 is too small"),
        ({"signal_variance": 1e307}, "signal_variance=1e\\+307 is too large"),
    ],
)
def test_gp_variances_at_the_ends_of_float64_are_named(fixed: dict, message: str) -> None:
    cut = partition.MondrianPartitions(lifetime=2.0)
    gp = partition.PartitionGPRegressor(cut, n_partitions=10, random_state=0, **fixed)
    with pytest.raises(ValueError, match=message):
        gp.fit(X, Y)


def test_gp_with_both_variances_extreme_but_usable_is_finite() -> None:
    cut = partition.MondrianPartitions(lifetime=2.0)
    gp = partition.PartitionGPRegressor(
        cut, n_partitions=10, noise_variance=1e308, signal_variance=1.0, random_state=0
    ).fit(X, Y)
    mean, std = gp.predict(X, return_std=True)
    # All noise: the posterior mean is the data's mean, the std the noise's.
    np.testing.assert_allclose(mean, Y.mean(), rtol=1e-12)
    assert np.all(np.isfinite(std))


def test_checkpoint_counts_beyond_the_cuts_mean_every_cut() -> None:
    """``lifetimes=2**63`` checkpoints ran forever; more checkpoints than cuts is every cut."""
    every = ml.MondrianKernelRidgeCV(5, max_lifetime=2.0, lifetimes=None, random_state=0)
    huge = ml.MondrianKernelRidgeCV(5, max_lifetime=2.0, lifetimes=2**63, random_state=0)
    a, b = every.fit(X, Y).path_, huge.fit(X, Y).path_
    np.testing.assert_array_equal(a["lifetimes"], b["lifetimes"])
    forest = ml.MondrianForestRegressor(3, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(
        forest.lifetime_path(lifetimes=None)["train_mse"],
        forest.lifetime_path(lifetimes=2**63)["train_mse"],
    )


def far(*values: float) -> np.ndarray:
    """The first rows of X with feature 0 set to ``values``."""
    Z = X[: len(values)].copy()
    Z[:, 0] = values
    return Z


@pytest.mark.parametrize("values", [(1e308, -1e308), (1e308,)])
def test_points_whose_box_overflows_are_refused_online_as_in_batch(values: tuple) -> None:
    """``partial_fit`` accepted points at ±1e308 that ``fit`` rejects, and every prediction
    was NaN after; now both refuse them and the model is unchanged."""
    for model in (
        ml.MondrianForestRegressor(4, random_state=0).fit(X, Y),
        ml.MondrianForestClassifier(4, random_state=0).fit(X, Y > 0),
    ):
        before = model.predict(X)
        Z = far(*values)
        target = Y[: len(Z)] > 0 if isinstance(model, ml.MondrianForestClassifier) else Y[: len(Z)]
        with pytest.raises(ValueError, match="range"):
            model.partial_fit(Z, target)
        np.testing.assert_array_equal(model.predict(X), before)
    Z = np.vstack([X, far(*values)])
    with pytest.raises(ValueError, match="range"):
        ml.MondrianForestRegressor(4, scale_features=False).fit(Z, np.zeros(len(Z)))


@pytest.mark.parametrize(
    "model",
    [
        ml.MondrianKernelFeatures(5, lifetime=0.0, random_state=0),
        ml.MondrianKernelRidge(5, lifetime=1.0, random_state=0),
        ml.MondrianKernelRidgeCV(5, lifetimes=5, random_state=0),
    ],
)
def test_kernel_on_features_whose_range_overflows(model: Any) -> None:
    """Such features were cut even at lifetime 0; the ridge CV panicked (index out of
    bounds)."""
    Z = np.vstack([X, far(1e308, -1e308)])
    with pytest.raises(ValueError, match="range of feature 0 overflows"):
        model.fit(Z, np.zeros(len(Z)))


@pytest.mark.parametrize(
    "fixed",
    [
        {"prior_mean": 1e300},
        {"gamma1": 5e-324},
        {"noise_variance": 1e308},
        {"gamma2": 1e308},
        {"gamma1": 1e13},
        {"noise_variance": 1e-13},
    ],
)
def test_forest_hyper_parameters_beyond_what_stays_finite_are_named(fixed: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(fixed))):
        ml.MondrianForestRegressor(3, random_state=0, **fixed).fit(X, Y)


@pytest.mark.parametrize("name", ["gamma1", "noise_variance"])
@pytest.mark.parametrize("factor", [1.01e-12, 0.99e12])
def test_forest_hyper_parameters_at_their_bounds_give_finite_positive_std(
    name: str, factor: float
) -> None:
    value = factor * float(np.var(Y))
    model = ml.MondrianForestRegressor(3, random_state=0, **{name: value}).fit(X, Y)
    mean, std = model.predict(np.vstack([X, X + 3]), return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)


@pytest.mark.parametrize(
    "model",
    [
        ml.MondrianKernelRidge(5, lifetime=2.0, random_state=0),
        ml.MondrianKernelRidgeCV(5, max_lifetime=2.0, lifetimes=5, random_state=0),
        ml.MondrianGridRidgeCV(3, max_iter=5, random_state=0),
        partition.PartitionGPRegressor(partition.MondrianPartitions(lifetime=2.0), n_partitions=10),
        ml.kernel.baselines.LaplaceKernelRidge(),
        ml.MondrianForestRegressor(3),
    ],
)
def test_targets_whose_variance_overflows_are_refused(model: Any) -> None:
    """Kernel ridge on y alternating ±1e308 predicted NaN."""
    y = np.where(np.arange(len(X)) % 2, 1e308, -1e308)
    with pytest.raises(ValueError, match="y is too large"):
        model.fit(X, y)


def test_random_binning_refuses_bins_beyond_float_resolution() -> None:
    """At lifetime 1e300 the int64 cast overflowed: every point in one bin."""
    from mondrian_learn.kernel.baselines import RandomBinningFeatures

    with pytest.raises(ValueError, match="lifetime=1e\\+300 is too large"):
        RandomBinningFeatures(5, lifetime=1e300, random_state=0).fit(X)
    Z = RandomBinningFeatures(5, lifetime=1e6, random_state=0).fit_transform(X)
    assert Z.shape == (len(X), 5 * len(X))  # every point in its own bin, as it should be


def test_fourier_features_refuse_overflowing_projections() -> None:
    from mondrian_learn.kernel.baselines import LaplaceFourierFeatures

    model = LaplaceFourierFeatures(5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="overflows"):
        model.transform(far(1e308, -1e308))
    assert np.all(np.isfinite(model.transform(X)))


def test_mondrian_partitions_refuse_boxes_that_overflow() -> None:
    cut = partition.MondrianPartitions(lifetime=2.0)
    Z = np.vstack([X, far(1e308, -1e308)])
    with pytest.raises(ValueError, match="range of feature 0 overflows"):
        partition.RandomPartitionKernel(cut, n_partitions=5, random_state=0).fit(Z)


@pytest.mark.parametrize(
    "model",
    [
        ml.MondrianForestRegressor(3, random_state=0),
        ml.MondrianKernelRidge(3, lifetime=2.0, random_state=0),
        ml.MondrianKernelRidgeCV(3, max_lifetime=2.0, lifetimes=5, random_state=0),
        ml.MondrianGridRidgeCV(3, max_iter=5, random_state=0),
        partition.PartitionGPRegressor(partition.MondrianPartitions(lifetime=2.0), n_partitions=5),
    ],
)
def test_predictions_1e308_away_from_the_data_are_finite(model: Any) -> None:
    """Points whose distance outside a box overflows (η = ∞ times a zero time difference)
    gave NaN; found by the property tests."""
    model.fit(np.zeros((5, 3)) + np.arange(5)[:, None], np.arange(5.0))
    Q = np.full((4, 3), 1e308)
    Q[1] = -1e308
    assert np.all(np.isfinite(model.predict(Q)))
    if isinstance(model, ml.MondrianForestRegressor):
        mean, std = model.predict(Q, return_std=True)
        assert np.all(np.isfinite(std)) and np.all(std > 0)


def test_predictions_1e_310_outside_a_block_alive_1e308_are_finite() -> None:
    """A point a subnormal distance outside a leaf that lived ~1e308 (features of size 1e-301
    and 1e-310, constant targets): the expected birth time of its branch-off block was
    1/η − c/expm1(ηc) = ∞ − ∞ = NaN, and so was the prediction. The example hypothesis found
    (``MONDRIAN_PROPERTY_EXAMPLES``), column 1 all zeros."""
    first = [2.73923375e-301, -9.66944729e-301, 2.13271552e-301, 8.70144848e-301]
    first += [7.14808553e-301, -6.48688759e-301, -4.00576219e-301, -7.51433447e-301]
    first += [2.30770223e-301, 9.61670678e-301, 3.76893461e-301, 4.42976680e-301]
    first += [-2.83292823e-302, -2.84409607e-301, 1.88600060e-301, 7.80548704e-301]
    first += [-8.31969313e-301, 1e-310, 1e-310]
    third = [-1e-310, 1e-310, 8.72499829e-312, -9.94523e-311, 4.59310893e-311, 8.29224405e-312]
    third += [-9.43360658e-311, 2.94379023e-311, 9.94419872e-311, 3.00918553e-311]
    third += [-7.2980699e-311, -1e-310, 8.68087032e-311, -3.56261218e-311, -2.16761999e-311]
    third += [2.46374289e-311, 5.74196615e-311, -8.8286393e-311, 1e-310]
    X = np.column_stack([first, np.zeros(19), third])
    model = ml.MondrianForestRegressor(
        3, candidate_dimensions=1, candidate_locations=1, scale_features=False, random_state=0
    )
    model.fit(X, np.zeros(19))  # 19 rows: the heuristic prior (too few for the evidence)
    mean, std = model.predict(np.zeros((2, 3)), return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))
