"""One failure behaviour for every estimator: a fit or partial_fit that raises — bad
parameters, bad data, an interrupt in the middle — leaves the estimator exactly as it was."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from sklearn.base import clone, is_regressor

from conftest import estimator_zoo, fit_data, output

ZOO = estimator_zoo()

# A function each estimator's fit calls after validate_data has set n_features_in_ (and, for
# the partition estimators, after kernel_ is replaced): made to raise KeyboardInterrupt there.
MID_FIT = {
    **dict.fromkeys(["forest", "forest_classifier"], ("mondrian_learn.forest._base", "grow_trees")),
    # After the fit on the training share, before the path and the refit.
    **dict.fromkeys(
        ["forest_cv", "forest_classifier_cv"], ("mondrian_learn.forest._base", "PathProgress")
    ),
    **dict.fromkeys(
        ["kernel_features", "kernel_ridge", "kernel_ridge_cv"],
        ("mondrian_learn.kernel._base", "grow_trees"),
    ),
    **{
        f"partition_{name}": (f"mondrian_learn.partition._{name}", "draw_seed")
        for name in ["kernel", "svc"]
    },
    # The GP and kernel PCA draw their solvers' seeds in the code they share with the Dask
    # twins, after the kernel is sampled.
    **dict.fromkeys(
        ["partition_gp", "partition_kpca"], ("mondrian_learn.partition._operator", "draw_seed")
    ),
    **dict.fromkeys(
        ["fourier_features", "binning_features"],
        ("mondrian_learn.kernel.baselines", "check_random_state"),
    ),
    "laplace_ridge": ("mondrian_learn.kernel.baselines", "cdist"),
    # After the search state is built, before the search.
    "grid_ridge_cv": ("mondrian_learn.kernel._grid_cv", "run_search"),
}


def fitted(name: str) -> tuple[object, np.ndarray, np.ndarray, dict]:
    """A fitted copy of the zoo's estimator ``name``, a probe X, its output and its state."""
    X = np.random.default_rng(0).uniform(size=(60, 3))
    model = clone(ZOO[name][0])
    model.fit(X, fit_data(model, X))
    return model, X, output(model, X), dict(vars(model))


def assert_unchanged(model: object, X: np.ndarray, before: np.ndarray, state: dict) -> None:
    assert vars(model).keys() == state.keys()
    assert all(vars(model)[k] is v for k, v in state.items() if not k.endswith("_in_"))
    assert model.n_features_in_ == 3  # type: ignore[attr-defined]
    np.testing.assert_array_equal(output(model, X), before)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_refit_with_bad_parameters_changes_nothing(name: str) -> None:
    model, X, before, state = fitted(name)
    good = model.get_params()  # type: ignore[attr-defined]
    model.set_params(**ZOO[name][1])  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=next(iter(ZOO[name][1]))):
        model.fit(X, fit_data(model, X))  # type: ignore[attr-defined]
    model.set_params(**good)  # type: ignore[attr-defined]
    assert_unchanged(model, X, before, state)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_refit_with_bad_data_changes_nothing(name: str) -> None:
    """validate_data resets n_features_in_ before it finds the NaN: it is put back."""
    model, X, before, state = fitted(name)
    bad = np.random.default_rng(1).uniform(size=(30, 5))
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.fit(bad, fit_data(model, bad))  # type: ignore[attr-defined]
    assert_unchanged(model, X, before, state)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_interrupted_refit_changes_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model, X, before, state = fitted(name)
    module, function = MID_FIT[name]

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    other = np.random.default_rng(2).uniform(size=(40, 4))
    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(importlib.import_module(module), function, interrupt)
        model.fit(other, fit_data(model, other))  # type: ignore[attr-defined]
    assert_unchanged(model, X, before, state)


@pytest.mark.parametrize("name", ["forest", "forest_classifier", "kernel_ridge"])
def test_failed_update_changes_nothing(name: str) -> None:
    model, X, before, state = fitted(name)
    bad = X[:5].copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, np.zeros(5))  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:5, :2], np.zeros(5))  # type: ignore[attr-defined]
    assert_unchanged(model, X, before, state)


@pytest.mark.parametrize("name", ["forest", "kernel_ridge"])
def test_failed_first_update_leaves_the_estimator_unfitted(name: str) -> None:
    model = clone(ZOO[name][0])
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(np.full((3, 2), np.nan), np.zeros(3))
    assert not hasattr(model, "model_") and not hasattr(model, "n_features_in_")


@pytest.mark.parametrize("name", sorted(n for n, (m, _) in ZOO.items() if is_regressor(m)))
def test_regressors_refuse_targets_that_are_not_numbers(name: str) -> None:
    """Strings say what is wrong with y (scikit-learn's words for what it cannot convert),
    not numpy's TypeError from deep inside; the model is left as it was."""
    model, X, before, state = fitted(name)
    words = np.array(["low", "high"])[np.arange(len(X)) % 2]
    digits = np.array(["1.5", "2"])[np.arange(len(X)) % 2]
    methods = ["fit"] + (["partial_fit"] if hasattr(model, "partial_fit") else [])
    for method in methods:
        with pytest.raises(ValueError, match="y must be numeric for regression: could not conv"):
            getattr(model, method)(X, words)
        with pytest.raises(ValueError, match="y must be numeric for regression, got dtype <U3"):
            getattr(model, method)(X, digits)
    assert_unchanged(model, X, before, state)
