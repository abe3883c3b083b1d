"""The Display helpers draw what the models say (matplotlib, Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mondrian_learn as ml  # noqa: E402
from mondrian_learn.calibration import LEVELS, coverage_errors  # noqa: E402
from mondrian_learn.plotting import (  # noqa: E402
    CalibrationDisplay,
    LifetimePathDisplay,
    LifetimeSearchDisplay,
    PartitionDisplay,
    PredictiveBandDisplay,
)

rng = np.random.default_rng(0)
X2 = rng.uniform(-3, 7, size=(300, 2))
Y2 = np.sin(X2[:, 0]) + 0.1 * X2[:, 1]


@pytest.mark.parametrize("lifetime", [0.0, 3.0, np.inf])
def test_partition_display_tiles_the_region_with_the_pruned_trees_cells(lifetime: float) -> None:
    forest = ml.MondrianForestRegressor(1, random_state=0).fit(X2, Y2)
    display = PartitionDisplay.from_estimator(forest, X2, Y2, lifetime=lifetime)
    a = forest.tree_arrays(0)
    cuts = np.sum((a["split_dim"] >= 0) & (a["tau"] <= lifetime))
    assert len(display.patches_) == 1 + cuts  # each cut born by λ adds one cell
    corners = np.array(display.cells)
    lo, hi = corners[:, 0].min(axis=0), corners[:, 1].max(axis=0)
    area = np.prod(corners[:, 1] - corners[:, 0], axis=1).sum()
    np.testing.assert_allclose(area, np.prod(hi - lo), rtol=1e-9)
    for cell, value in zip(display.cells, display.values):
        inside = ((X2 >= cell[0]) & (X2 <= cell[1])).all(axis=1)
        if inside.any():
            assert value == pytest.approx(Y2[inside].mean())
    plt.close("all")


def test_predictive_band_shows_the_predictive() -> None:
    x = rng.uniform(size=80)
    y = np.sin(4 * x)
    model = ml.MondrianForestRegressor(10, random_state=0).fit(x[:, None], y)
    grid = np.linspace(-1, 2, 50)
    display = PredictiveBandDisplay.from_estimator(model, grid, x, y, k=1.5)
    mean, std = model.predict(grid[:, None], return_std=True)
    np.testing.assert_array_equal(display.line_.get_ydata(), mean)
    np.testing.assert_allclose(display.std, std)
    with pytest.raises(ValueError, match="2 features"):
        PartitionDisplay.from_estimator(model, x[:, None], y)
    plt.close("all")


def test_calibration_and_lifetime_path_displays() -> None:
    model = ml.MondrianForestRegressor(10, random_state=0).fit(X2[:200], Y2[:200])
    display = CalibrationDisplay.from_estimator(model, X2[200:], Y2[200:])
    expected = np.asarray(LEVELS) + coverage_errors(model, X2[200:], Y2[200:])
    np.testing.assert_allclose(display.line_.get_ydata(), expected)
    search = ml.MondrianKernelRidgeCV(5, max_lifetime=2.0, lifetimes=10, random_state=0)
    search.fit(X2, Y2)
    path = LifetimePathDisplay.from_estimator(search)
    shown = search.path_["lifetimes"] > 0
    np.testing.assert_allclose(path.lines_[1].get_ydata(), search.path_["validation_mse"][shown])
    forest = ml.MondrianForestClassifierCV(5, lifetimes=10, random_state=0).fit(X2, Y2 > 0)
    drawn = LifetimePathDisplay.from_estimator(forest, score="log_loss")
    np.testing.assert_allclose(
        drawn.lines_[0].get_ydata(), forest.path_["train_log_loss"][forest.path_["lifetimes"] > 0]
    )
    plt.close("all")


def test_lifetime_search_display_draws_each_feature_and_the_criterion() -> None:
    grid = ml.MondrianGridRidgeCV(5, max_iter=15, random_state=0).fit(X2, Y2)
    display = LifetimeSearchDisplay.from_estimator(grid)
    assert len(display.lines_) == X2.shape[1]
    for d, line in enumerate(display.lines_):
        np.testing.assert_allclose(line.get_ydata(), grid.path_["lifetimes"][:, d])
    np.testing.assert_allclose(display.criterion_line_.get_ydata(), grid.path_["criterion"])
    plt.close("all")
