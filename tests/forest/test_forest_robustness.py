"""MondrianForestRegressor under misuse: threads, failed updates, corrupt state."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mondrian_learn import MondrianForestRegressor


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 3))
    return X, np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=600)


def test_concurrent_predictions_after_an_online_update(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianForestRegressor(random_state=0).fit(X[:500], y[:500])
    model.partial_fit(X[500:], y[500:])  # leaves the exact posterior to be recomputed
    expected = MondrianForestRegressor(random_state=0).fit(X[:500], y[:500])
    expected.partial_fit(X[500:], y[500:])
    reference = expected.predict(X, return_std=True)
    results: list[tuple[np.ndarray, np.ndarray]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(model.predict(X, return_std=True))
        except BaseException as error:  # noqa: BLE001 - any failure must reach the assert
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for mean, std in results:
        np.testing.assert_array_equal(mean, reference[0])
        np.testing.assert_array_equal(std, reference[1])


def test_failed_refit_leaves_the_model_as_it_was(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianForestRegressor(random_state=0).fit(X, y)
    before = model.predict(X)
    with pytest.raises(ValueError, match="overflows"):
        model.fit(np.array([[-1e308, 0.0], [1e308, 1.0]]), [0.0, 1.0])
    with pytest.raises(ValueError):
        model.fit(X[:5] * 1e5, [1e300, -1e300, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(model.predict(X), before)


def test_targets_whose_variance_overflows_are_rejected_online(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianForestRegressor(random_state=0).fit(X, y)
    before = model.predict(X)
    with pytest.raises(ValueError, match="y is too large"):
        model.partial_fit(X[:2], np.array([1e300, -1e300]))
    np.testing.assert_array_equal(model.predict(X), before)


def test_tree_index_must_be_in_range(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    for bad in (-1, 2, 1.0, "0"):
        with pytest.raises(ValueError, match="out of range"):
            model.tree_arrays(bad)
        with pytest.raises(ValueError, match="out of range"):
            model.node_posterior(bad)


def test_corrupted_bytes_never_crash(data) -> None:  # type: ignore[no-untyped-def]
    """Random byte flips in a stored model's body, with the checksum recomputed (a crafted
    file, which the CRC-32 cannot catch): loading raises ValueError or gives a model whose
    every method runs (a Rust panic would surface as a BaseException here)."""
    import zlib

    X, y = data
    model = MondrianForestRegressor(n_estimators=2, lifetime=4.0, random_state=0)
    model.fit(X[:60], y[:60])
    blob = bytearray(model.model_.to_bytes())
    restore = type(model.model_).from_bytes
    rng = np.random.default_rng(1)
    accepted = 0
    for _ in range(400):
        corrupt = blob.copy()
        for position in rng.integers(12, len(blob), size=rng.integers(1, 4)):
            corrupt[position] = int(rng.integers(0, 256))
        corrupt[8:12] = zlib.crc32(bytes(corrupt[12:])).to_bytes(4, "little")
        try:
            forest = restore(bytes(corrupt))
        except ValueError:
            continue
        accepted += 1
        mean, var = forest.predict(X[:20], 1)
        assert np.isfinite(mean).all() and (var >= 0).all()
        forest.apply(X[:20], 1)
        forest.partial_fit(X[60:70], y[60:70], 1)
        forest.predict(X[:20], 1)
    # Flips in the stored points and targets change values without breaking structure.
    assert accepted > 0


def test_unknown_posterior_is_refused(data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    with pytest.raises(ValueError, match="posterior"):
        MondrianForestRegressor(posterior="approximate").fit(X, y)
