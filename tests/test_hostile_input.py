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
    big = partition.PartitionGPRegressor(cut, 20, lanczos_steps=10**6, random_state=0)
    big.fit(X[:40], Y[:40])
    assert time.perf_counter() - start < 60  # 32 s and then a 7 TiB request before
    exact = partition.PartitionGPRegressor(cut, 20, lanczos_steps=40, random_state=0)
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
    gp = partition.PartitionGPRegressor(cut, 10, random_state=0, **fixed)
    with pytest.raises(ValueError, match=message):
        gp.fit(X, Y)


def test_gp_with_both_variances_extreme_but_usable_is_finite() -> None:
    cut = partition.MondrianPartitions(lifetime=2.0)
    gp = partition.PartitionGPRegressor(
        cut, 10, noise_variance=1e308, signal_variance=1.0, random_state=0
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
