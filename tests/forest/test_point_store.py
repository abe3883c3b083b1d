"""``point_store``: a forest whose training points live in a file on disk is the forest whose
points live in memory, bit for bit, through fit, partial_fit (leaves that split read their
points back), sparse and float32 input, pickling and refusals."""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(1200, 4))
    y = np.sin(5 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=len(X))
    labels = (X[:, 0] + 0.3 * rng.normal(size=len(X)) > X[:, 3]).astype(int)
    return X, y, labels


def _stream(model: Any, X: Any, y: np.ndarray, chunk: int = 200, **first: Any) -> Any:
    """fit on the first chunk (a first partial_fit when ``first`` has the classes), then
    partial_fit chunk by chunk: leaves paused by min_samples_split resume and split."""
    if first:
        model.partial_fit(X[:chunk], y[:chunk], **first)
    else:
        model.fit(X[:chunk], y[:chunk])
    for a in range(chunk, X.shape[0], chunk):
        model.partial_fit(X[a : a + chunk], y[a : a + chunk])
    return model


def _assert_same_trees(a: Any, b: Any) -> None:
    assert a.model_.n_trees == b.model_.n_trees
    for m in range(a.model_.n_trees):
        left, right = a.tree_arrays(m), b.tree_arrays(m)
        assert left.keys() == right.keys()
        for name in left:
            np.testing.assert_array_equal(left[name], right[name], err_msg=name)


@pytest.mark.parametrize("store", ["disk", "directory", "path"])
def test_a_regressor_on_disk_is_the_regressor_in_memory(store: str, tmp_path: Path) -> None:
    X, y, _ = _data()
    where = {"disk": "disk", "directory": str(tmp_path), "path": tmp_path}[store]
    est = MondrianForestRegressor(n_estimators=4, min_samples_split=30, random_state=2)
    memory = _stream(clone(est), X, y)
    disk = _stream(clone(est).set_params(point_store=where), X, y)
    expected_directory = Path(tempfile.gettempdir()) if store == "disk" else tmp_path
    assert disk.model_.points_directory == expected_directory
    assert memory.model_.points_directory is None
    _assert_same_trees(disk, memory)
    for got, want in zip(disk.predict(X, return_std=True), memory.predict(X, return_std=True)):
        np.testing.assert_array_equal(got, want)
    if sys.platform != "win32" and store != "disk":
        # The file was unlinked when created: nothing is left in the directory.
        assert os.listdir(tmp_path) == []


def test_a_classifier_on_disk_from_sparse_and_float32_input() -> None:
    X, _, labels = _data()
    est = MondrianForestClassifier(n_estimators=3, min_samples_split=20, random_state=5)
    memory = _stream(clone(est), X, labels, classes=[0, 1])
    for X_in in (sp.csr_matrix(X), X.astype(np.float32)):
        disk = _stream(clone(est).set_params(point_store="disk"), X_in, labels, classes=[0, 1])
        reference = (
            memory
            if X_in.dtype == np.float64
            else _stream(clone(est), X_in, labels, classes=[0, 1])
        )
        _assert_same_trees(disk, reference)
        np.testing.assert_array_equal(disk.predict_proba(X), reference.predict_proba(X))


def test_a_pickled_forest_holds_its_points_and_moves_them_back_to_disk() -> None:
    X, y, _ = _data()
    est = MondrianForestRegressor(n_estimators=3, min_samples_split=30, random_state=1)
    disk = clone(est).set_params(point_store="disk").fit(X[:600], y[:600])
    memory = clone(est).fit(X[:600], y[:600])
    assert pickle.dumps(disk.model_) == pickle.dumps(memory.model_)  # the same file bytes
    loaded = pickle.loads(pickle.dumps(disk))
    assert loaded.model_.points_directory is None  # read back into memory
    np.testing.assert_array_equal(loaded.predict(X), memory.predict(X))
    loaded.partial_fit(X[600:], y[600:])
    memory.partial_fit(X[600:], y[600:])
    assert loaded.model_.points_directory == Path(tempfile.gettempdir())
    _assert_same_trees(loaded, memory)
    np.testing.assert_array_equal(loaded.predict(X), memory.predict(X))


def test_a_bad_point_store_is_refused_by_name_and_changes_nothing(tmp_path: Path) -> None:
    X, y, _ = _data()
    model = MondrianForestRegressor(n_estimators=2, point_store=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="point_store.*is not a directory"):
        model.fit(X, y)
    assert not hasattr(model, "model_")
    with pytest.raises(ValueError, match="point_store must be one of 'disk', 'memory' or a "):
        MondrianForestRegressor(point_store=3).fit(X, y)
    fitted = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    before = fitted.predict(X)
    fitted.set_params(point_store=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="is not a directory"):
        fitted.partial_fit(X[:10], y[:10])
    assert fitted.model_.points_directory is None and fitted.model_.n_rows == len(X)
    np.testing.assert_array_equal(fitted.predict(X), before)
