"""The methods' numpydoc sections: each docstring writes its ``Returns`` section and
``document`` inserts the standard ``Parameters`` before it, so the rendered docstrings read
as written (numpydoc's parse of a few of them, against the text expected)."""

from __future__ import annotations

from typing import Any

import pytest
from numpydoc.docscrape import FunctionDoc

from mondrian_learn import (
    MondrianDensityEstimator,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrian_learn._base import document

X_PARAMETER = ("X", "array-like of shape (n_samples, n_features)", "Points (finite values).")
INDEX_PARAMETER = ("index", "int", "The tree, 0 ≤ index < n_estimators.")
ESTIMATOR_ITSELF = ("self", "object", "The estimator itself.")


def sections(method: Any) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The ``Parameters`` and ``Returns`` entries as (name, type, description on one line)."""
    doc = FunctionDoc(method)
    return tuple(  # type: ignore[return-value]
        [(entry.name, entry.type, " ".join(" ".join(entry.desc).split())) for entry in doc[key]]
        for key in ("Parameters", "Returns")
    )


@pytest.mark.parametrize(
    ("method", "parameters", "returns"),
    [
        (
            MondrianForestClassifier.predict,
            [X_PARAMETER],
            [
                (
                    "labels",
                    "ndarray of shape (n_samples,)",
                    "The most probable class of each point.",
                )
            ],
        ),
        (
            MondrianForestRegressor.log_predictive_density,
            [X_PARAMETER, ("y", "array-like of shape (n_samples,)", "Targets of the points.")],
            [
                (
                    "log_density",
                    "ndarray of shape (n_samples,)",
                    "log p(y_i | x_i) under the predictive mixture (log-sum-exp over its "
                    "Gaussians).",
                )
            ],
        ),
        (
            MondrianDensityEstimator.score,
            [X_PARAMETER, ("y", "None", "Ignored; present for scikit-learn's API.")],
            [
                (
                    "log_likelihood",
                    "float",
                    "Total log density of ``X`` (``y`` ignored), as ``KernelDensity.score``.",
                )
            ],
        ),
        (
            MondrianForestRegressor.partial_fit,
            [
                X_PARAMETER,
                ("y", "array-like of shape (n_samples,)", "Targets of the points."),
                (
                    "sample_weight",
                    "float or array-like of shape (n_samples,), default=None",
                    "Row weights (non-negative): a weight multiplies the row's likelihood "
                    "precision, an integer weight is the row repeated, a zero weight removes it. "
                    "None: all 1.",
                ),
            ],
            [ESTIMATOR_ITSELF],
        ),
        (
            MondrianForestRegressor.node_posterior,
            [INDEX_PARAMETER],
            [
                (
                    "mean, var",
                    "ndarray of shape (n_nodes,)",
                    "In the node order of :meth:`tree_arrays`.",
                )
            ],
        ),
        (
            MondrianDensityEstimator.leaf_masses,
            [INDEX_PARAMETER],
            [
                (
                    "mass, volume",
                    "ndarray of shape (n_leaves,)",
                    "The masses sum to 1 and the volumes to the box's.",
                )
            ],
        ),
    ],
)
def test_sections_read_as_written(method: Any, parameters: list, returns: list) -> None:
    assert sections(method) == (parameters, returns)


def test_parameters_go_before_the_written_returns() -> None:
    @document("X")
    def transform(X: Any) -> Any:
        """Features of ``X``.

        More on the features.

        Returns
        -------
        Z : ndarray
            The features.
        """

    assert transform.__doc__ == (
        "Features of ``X``.\n\nMore on the features.\n\n"
        "Parameters\n----------\nX : array-like of shape (n_samples, n_features)\n"
        "    Points (finite values).\n\n"
        "Returns\n-------\nZ : ndarray\n    The features.\n"
    )


def test_a_docstring_without_returns_is_refused() -> None:
    # One rule for every method: its Returns section is written, never generated.
    with pytest.raises(ValueError, match="no Returns section"):

        @document("X", "y")
        def fit(X: Any, y: Any) -> Any:
            """Fit."""
