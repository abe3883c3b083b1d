"""decision_path and feature_importances_ of both forests against from-scratch computations."""

from __future__ import annotations

import numpy as np
import pytest

from mondrian_learn import MondrianForestClassifier, MondrianForestRegressor


def data(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 5, size=(n, 4))
    return X, np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=n)


@pytest.mark.parametrize("estimator", [MondrianForestRegressor, MondrianForestClassifier])
def test_decision_path_is_the_route_to_the_leaf(estimator: type) -> None:
    X, y = data()
    model = estimator(4, random_state=0).fit(
        X, y if estimator is MondrianForestRegressor else y > 0
    )
    indicator, ptr = model.decision_path(X[:40])
    leaves = model.apply(X[:40])
    for m in range(4):
        a = model.tree_arrays(m)
        block = indicator[:, ptr[m] : ptr[m + 1]].toarray()
        for i in range(40):
            nodes = np.flatnonzero(block[i])
            # The root, the leaf apply() finds, and every node's parent on the path.
            chain, node = [], leaves[i, m]
            while node != a["root"]:
                chain.append(node)
                node = a["parent"][node]
            chain.append(a["root"])
            np.testing.assert_array_equal(nodes, np.sort(chain))


def test_regression_importances_equal_cart_mdi_from_scratch() -> None:
    """Per tree, Σ over cuts on feature d of S(j) − S(l) − S(r), S the training targets' sum of
    squared deviations in a node (points found by decision_path), normalised, averaged."""
    X, y = data()
    model = MondrianForestRegressor(5, random_state=0).fit(X, y)
    indicator, ptr = model.decision_path(X)
    indicator = indicator.toarray().astype(bool)
    expected = np.zeros(4)
    for m in range(5):
        a = model.tree_arrays(m)
        inside = indicator[:, ptr[m] : ptr[m + 1]]

        def squares(node: int, inside: np.ndarray = inside) -> float:
            values = y[inside[:, node]]
            return float(((values - values.mean()) ** 2).sum()) if values.size else 0.0

        tree = np.zeros(4)
        for j in np.flatnonzero(a["split_dim"] >= 0):
            drop = squares(j) - squares(a["left"][j]) - squares(a["right"][j])
            tree[a["split_dim"][j]] += drop
        expected += tree / tree.sum()
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(), rtol=1e-9)


def test_importances_find_the_relevant_features() -> None:
    """Guided cuts put most of the importance on the features y depends on (0 and 1: 0.90 of
    it here; the fully grown trees' deepest cuts split noise, ~0.05 per noise feature); the
    classifier on the one feature its labels depend on (0.87)."""
    X, y = data(600)
    reg = MondrianForestRegressor(20, random_state=0).fit(X, y).feature_importances_
    assert reg[:2].sum() > 0.85 and reg[2:].max() < 0.08 and abs(reg.sum() - 1) < 1e-12
    clf = MondrianForestClassifier(20, random_state=0).fit(X, X[:, 2] > 1.0)
    assert clf.feature_importances_[2] > 0.8
