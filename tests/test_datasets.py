"""Data sets read from installed packages."""

from __future__ import annotations

import numpy as np

from mondrian_learn.datasets import FLIGHT_FEATURES, load_flights


def test_flights_have_the_papers_features_in_time_order() -> None:
    X, y = load_flights(return_X_y=True)
    assert X.shape == (273_853, len(FLIGHT_FEATURES)) and y.shape == (273_853,)
    assert np.isfinite(X).all() and np.isfinite(y).all()
    columns = dict(zip(FLIGHT_FEATURES, X.T))
    month, day = columns["month"], columns["day_of_month"]
    assert np.all(np.diff(month * 100 + day) >= 0)  # time order
    assert set(np.unique(columns["day_of_week"])) == set(range(7))
    assert columns["departure_minute"].max() < 24 * 60 + 60  # minutes after midnight
    assert 0 <= np.median(columns["aircraft_age"]) < 40
    # 2013-01-01, first flight UA1545 EWR→IAH: 1,400 miles, 227 min, arrived 11 min late.
    assert X[0, 1] == 1400 and X[0, 2] == 227 and y[0] == 11


def test_flights_as_scikit_learn_loaders_return_them() -> None:
    """A Bunch by default; ``as_frame`` gives a DataFrame, a Series and the joined frame."""
    bunch = load_flights()
    X, y = load_flights(return_X_y=True)
    np.testing.assert_array_equal(bunch.data, X)
    np.testing.assert_array_equal(bunch.target, y)
    assert bunch.feature_names == FLIGHT_FEATURES and bunch.target_names == ["arrival_delay"]
    assert bunch.frame is None and "flight delays" in bunch.DESCR
    framed = load_flights(as_frame=True)
    assert list(framed.data.columns) == FLIGHT_FEATURES
    np.testing.assert_array_equal(framed.data.to_numpy(), X)
    np.testing.assert_array_equal(framed.target.to_numpy(), y)
    assert list(framed.frame.columns) == [*FLIGHT_FEATURES, "arrival_delay"]
