"""Every pickled core model refuses corrupted bytes on load (issue 16, item 6g): its bytes
carry a CRC-32 of the body, so any flipped byte, truncation or extension is a ValueError —
never a panic, never a model that silently predicts something else."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import mondrian_learn as ml
from mondrian_learn import partition

X = np.random.default_rng(0).uniform(size=(80, 3))
Y = np.sin(4 * X[:, 0])

MODELS: dict[str, Any] = {
    "density": lambda: ml.MondrianDensityEstimator(3, lifetime=3.0, random_state=0).fit(X),
    "forest": lambda: ml.MondrianForestRegressor(3, lifetime=5.0, random_state=0).fit(X, Y),
    "forest_classifier": lambda: ml.MondrianForestClassifier(3, random_state=0).fit(X, Y > 0),
    "kernel_features": lambda: ml.MondrianKernelFeatures(4, lifetime=2.0, random_state=0).fit(X),
    "kernel_ridge": lambda: ml.MondrianKernelRidge(4, lifetime=2.0, random_state=0).fit(X, Y),
    "grid_ridge": lambda: ml.MondrianGridRidgeCV(3, max_iter=10, random_state=0).fit(X, Y),
    "partition_kernel": lambda: partition.RandomPartitionKernel(
        partition.MondrianPartitions(lifetime=2.0), n_partitions=5, random_state=0
    ).fit(X),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_corruption_is_refused(name: str) -> None:
    core = MODELS[name]().model_
    blob = bytes(core.to_bytes())
    restore = type(core).from_bytes
    assert type(restore(blob)).__name__ == type(core).__name__  # intact bytes load
    rng = np.random.default_rng(1)
    for _ in range(300):
        corrupt = bytearray(blob)
        for position in rng.choice(len(blob), size=rng.integers(1, 4), replace=False):
            corrupt[position] ^= int(rng.integers(1, 256))  # a real change of that byte
        with pytest.raises(ValueError):
            restore(bytes(corrupt))
    for cut in rng.integers(0, len(blob), size=50):
        with pytest.raises(ValueError):
            restore(blob[:cut])
    with pytest.raises(ValueError):
        restore(blob + b"\x00")


def test_corrupted_pickle_of_an_estimator_is_refused() -> None:
    model = MODELS["forest"]()
    raw = bytearray(pickle.dumps(model))
    core = bytes(model.model_.to_bytes())
    at = raw.find(core[12:40])  # inside the core's body in the pickle stream
    assert at > 0
    raw[at + 5] ^= 0x40
    with pytest.raises(ValueError, match="checksum"):
        pickle.loads(bytes(raw))


def test_forests_store_no_data_boxes_and_rebuild_them_exactly() -> None:
    """Issue 16, item 17: the boxes (2·D floats per node, 60 % of a grown forest) are the
    min/max of each node's points, so they are not stored but rebuilt on load — bit for bit,
    after online updates too."""
    rng = np.random.default_rng(3)
    X8 = rng.uniform(size=(4000, 8))
    y8 = np.sin(4 * X8[:, 0])
    model = ml.MondrianForestRegressor(4, random_state=0).fit(X8[:3000], y8[:3000])
    model.partial_fit(X8[3000:], y8[3000:])
    n_nodes = sum(len(model.tree_arrays(t)["parent"]) for t in range(4))
    size = len(pickle.dumps(model))
    assert size < n_nodes * 2 * 8 * 8 / 2  # under half of what the boxes alone would take
    loaded = pickle.loads(pickle.dumps(model))
    for t in range(4):
        a, b = model.tree_arrays(t), loaded.tree_arrays(t)
        for key in ("lower", "upper", "tau", "threshold", "n_samples"):
            np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(
        model.predict(X8[:50] * 2 - 0.5, return_std=True),
        loaded.predict(X8[:50] * 2 - 0.5, return_std=True),
    )
