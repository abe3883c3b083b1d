"""float32 points on the Mondrian kernel features and ridge (issue 16, item 13): the core reads
them through the map to the unit box as it reads each row block (no mapped float64 copy in
Python), so every result equals that of the float64 copy bit for bit; numpy's allocations
are traced by ``tracemalloc`` to show that no copy of the matrix is made."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from conftest import traced_peak
from mondrian_learn import MondrianKernelFeatures, MondrianKernelRidge


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = (3.0 * rng.normal(size=(400, 4)) + 10.0).astype(np.float32)  # mapped: not the identity
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=400)
    return X, y, (3.0 * rng.normal(size=(60, 4)) + 10.0).astype(np.float32)


@pytest.mark.parametrize("scale_features", [True, False])
def test_float32_results_equal_the_widened_float64_bit_for_bit(scale_features: bool) -> None:
    X, y, Q = _data()
    X64, Q64 = X.astype(np.float64), Q.astype(np.float64)
    params = dict(n_estimators=5, lifetime=1.0, random_state=0, scale_features=scale_features)
    a, b = MondrianKernelRidge(**params).fit(X[:300], y[:300]), MondrianKernelRidge(**params)
    b.fit(X64[:300], y[:300])
    a.partial_fit(X[300:], y[300:])
    b.partial_fit(X64[300:], y[300:])
    assert pickle.dumps(a.model_) == pickle.dumps(b.model_)
    np.testing.assert_array_equal(a.data_min_, b.data_min_)
    for mean_a, mean_b in zip(a.predict(Q, return_std=True), b.predict(Q64, return_std=True)):
        np.testing.assert_array_equal(mean_a, mean_b)
    f, g = MondrianKernelFeatures(**params).fit(X), MondrianKernelFeatures(**params).fit(X64)
    assert (f.transform(Q) != g.transform(Q64)).nnz == 0
    assert f.transform(Q).shape == g.transform(Q64).shape


def test_float32_and_mapped_points_make_no_float64_copy() -> None:
    """200,000 × 4 float32 points mapped to the unit box: a mapped float64 copy would be 6.4
    MB of numpy memory (the build before this one made it, and a float64 widening first);
    what remains is the result (1.6 MB of means, 1.6 MB of standard deviations)."""
    X, y, _ = _data()
    model = MondrianKernelRidge(n_estimators=2, lifetime=1.0, random_state=0).fit(X, y)
    Q = (3.0 * np.random.default_rng(1).normal(size=(200_000, 4)) + 10.0).astype(np.float32)
    copy_bytes = Q.size * 8
    peak = traced_peak(lambda: model.predict(Q, return_std=True))
    assert peak < copy_bytes * 0.6, f"peak {peak} bytes of numpy memory"


def test_points_whose_image_overflows_are_refused_by_name() -> None:
    """A value so far outside the training range that its image overflows float64 is refused
    (as the mapped copy refused it), not read as inf."""
    X, y, _ = _data()
    narrow = (X - 10.0) * np.float32(1e-3)  # ranges of about 0.02: scales of about 0.02
    model = MondrianKernelRidge(n_estimators=2, lifetime=1.0, random_state=0).fit(narrow, y)
    far = np.full((1, 4), 1e308)
    with pytest.raises(ValueError, match="overflow float64 once scaled"):
        model.predict(far)
