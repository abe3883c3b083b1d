"""float32 points on the forests (issue 16, item 13): read by the core a row block at a time,
widened exactly to float64, so every result equals that of the float64 copy bit for bit — and
no float64 copy of the matrix is made on the Python side (numpy's allocations are traced by
``tracemalloc``; the core's own float64 store of training points is not, and is meant)."""

from __future__ import annotations

import pickle

import numpy as np

from conftest import traced_peak
from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4)).astype(np.float32)
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=400)
    return X, y, rng.normal(size=(60, 4)).astype(np.float32)


def test_float32_results_equal_the_widened_float64_bit_for_bit() -> None:
    X, y, Q = _data()
    X64, Q64 = X.astype(np.float64), Q.astype(np.float64)
    make = lambda: MondrianForestRegressor(n_estimators=5, random_state=0)  # noqa: E731
    a, b = make().fit(X[:300], y[:300]), make().fit(X64[:300], y[:300])
    a.partial_fit(X[300:], y[300:])
    b.partial_fit(X64[300:], y[300:])
    assert pickle.dumps(a.model_) == pickle.dumps(b.model_)
    for method, args in [
        ("predict", {"return_std": True}),
        ("predict_quantiles", {"quantiles": [0.1, 0.9]}),
        ("apply", {}),
    ]:
        np.testing.assert_array_equal(
            getattr(a, method)(Q, **args), getattr(b, method)(Q64, **args)
        )
    np.testing.assert_array_equal(
        a.log_predictive_density(Q, y[:60]), b.log_predictive_density(Q64, y[:60])
    )
    labels = np.where(y > 0, "up", "down")
    c = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X, labels)
    d = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X64, labels)
    np.testing.assert_array_equal(c.predict_proba(Q), d.predict_proba(Q64))


def test_float32_predictions_make_no_float64_copy() -> None:
    """200,000 × 4 float32 points: a float64 copy would be 6.4 MB of numpy memory (the build
    before this one traced a peak of 8.0 MB here: the copy and the 1.6 MB standard
    deviations, which are all that is left now)."""
    X, y, _ = _data()
    model = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    Q = np.random.default_rng(1).normal(size=(200_000, 4)).astype(np.float32)
    copy_bytes = Q.size * 8
    peak = traced_peak(lambda: model.predict(Q, return_std=True))
    assert peak < copy_bytes / 2, f"peak {peak} bytes of numpy memory"
