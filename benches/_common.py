"""Helpers shared by the Python benchmark scripts: the import guard and the results header."""

from __future__ import annotations

import datetime
import os
import platform
import sys

import numpy as np
import numpy.typing as npt
import sklearn

FloatArray = npt.NDArray[np.float64]


def import_mondrian_forest_regressor() -> type:
    """Return ``mondrian_learn.MondrianForestRegressor`` or exit with a clear message."""
    try:
        from mondrian_learn import MondrianForestRegressor
    except ImportError as error:
        sys.exit(
            "error: cannot import MondrianForestRegressor from mondrian_learn "
            f"({error}).\nBuild and install the package first, e.g. "
            "`pip install .` from the repository root."
        )
    return MondrianForestRegressor


def machine_info(extra: str = "") -> str:
    """Date, machine, library versions (plus ``extra``) and the command, for RESULTS.md."""
    import mondrian_learn

    versions = (
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, "
        f"mondrian_learn {getattr(mondrian_learn, '__version__', 'unknown')}"
    )
    return "\n".join(
        [
            f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"machine: {platform.platform()}, os.cpu_count()={os.cpu_count()}",
            versions + (f", {extra}" if extra else ""),
            f"command: {' '.join([sys.executable, *sys.argv])}",
        ]
    )


def rmse(prediction: FloatArray, target: FloatArray) -> float:
    """Root mean squared error."""
    return float(np.sqrt(np.mean((np.asarray(prediction) - target) ** 2)))
