"""The package's warnings name the user's line — also through a scikit-learn ``Pipeline`` —
and a fit that fits again inside (a cross-validated search) warns once, not once per fit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from mondrian_learn import MondrianForestRegressor, MondrianForestRegressorCV

FLOOR = "noise_variance stopped at its floor"


def _repeated_rows() -> tuple[np.ndarray, np.ndarray]:
    """Every row three times: leaves of equal targets, where the evidence grows without
    bound as noise_variance → 0 and its search stops at the floor (and warns)."""
    X = np.random.default_rng(0).uniform(size=(60, 2))
    return np.repeat(X, 3, axis=0), np.repeat(X[:, 0], 3)


def test_a_warning_names_the_callers_line() -> None:
    X, y = _repeated_rows()
    model = MondrianForestRegressor(3, hyperparameters="evidence", random_state=0)
    with pytest.warns(UserWarning, match=FLOOR) as record:
        model.fit(X, y)
    assert [r.filename for r in record] == [__file__]


def test_a_warning_through_a_pipeline_names_the_callers_line() -> None:
    X, y = _repeated_rows()
    forest = MondrianForestRegressor(3, hyperparameters="evidence", random_state=0)
    pipe = make_pipeline(FunctionTransformer(), forest)
    with pytest.warns(UserWarning, match=FLOOR) as record:
        pipe.fit(X, y)
    assert [r.filename for r in record] == [__file__]


def test_a_deprecation_names_the_callers_line() -> None:
    X, y = _repeated_rows()
    model = MondrianForestRegressor(2, posterior="fast", hyperparameters="heuristic")
    with pytest.warns(FutureWarning, match="posterior='fast'") as record:
        model.fit(X, y)
    assert [r.filename for r in record] == [__file__]


@pytest.mark.parametrize("cv", [None, 3])
def test_a_cross_validated_fit_warns_once(cv: int | None) -> None:
    # Every split's fit and the refit stop at the floor (copies of a row share a split).
    X, y = _repeated_rows()
    model = MondrianForestRegressorCV(
        3, lifetimes=5, hyperparameters="evidence", cv=cv, random_state=0
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(X, y)
    floors = [r for r in record if FLOOR in str(r.message)]
    assert [r.filename for r in floors] == [__file__]
    # Once per fit: a second fit warns again.
    with pytest.warns(UserWarning, match=FLOOR):
        model.fit(X, y)


def test_a_convergence_warning_names_the_callers_line() -> None:
    from sklearn.exceptions import ConvergenceWarning

    from mondrian_learn.partition import PartitionGPRegressor

    X = np.random.default_rng(1).uniform(size=(200, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    model = PartitionGPRegressor(
        n_partitions=10, noise_variance=1e-4, signal_variance=1.0, max_iter=2, random_state=0
    )
    with pytest.warns(ConvergenceWarning, match="max_iter") as record:
        model.fit(X, y)
    assert [r.filename for r in record] == [__file__]
