"""``cv_results_``, the per-split record of the estimators that choose lifetimes on validation
splits (the CV forests, the kernel ridge CV, the grid ridge CV): the same keys in each, the
splits' mean their weighted mean bit for bit (one split's, its own scores), the choice made
on it, and no record after a fit that scored no splits."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mondrian_learn._lifetime_path import pooled_scores
from mondrian_learn.forest import MondrianForestClassifierCV, MondrianForestRegressorCV
from mondrian_learn.kernel import MondrianGridRidgeCV, MondrianKernelRidgeCV

ESTIMATORS: dict[str, Callable[..., Any]] = {
    "forest": lambda **p: MondrianForestRegressorCV(4, lifetimes=8, random_state=0, **p),
    "forest_classifier": lambda **p: MondrianForestClassifierCV(
        4, lifetimes=8, random_state=0, **p
    ),
    "kernel_ridge": lambda **p: MondrianKernelRidgeCV(
        5, max_lifetime=4.0, lifetimes=8, random_state=0, **p
    ),
    "grid_ridge": lambda **p: MondrianGridRidgeCV(4, max_iter=6, random_state=0, **p),
}
SPLIT_KEYS = {"split_scores", "split_weights", "mean_score"}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 2))
    return X, np.sin(5 * X[:, 0]) + 0.2 * rng.normal(size=80)


def fit(name: str, X: np.ndarray, y: np.ndarray, **params: Any) -> Any:
    target = (y > np.median(y)).astype(int) if name == "forest_classifier" else y
    return ESTIMATORS[name](**params).fit(X, target)


@pytest.mark.parametrize("cv", [None, 2, 5])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_mean_score_is_the_weighted_mean_of_the_splits(name: str, cv: Any, data) -> None:  # type: ignore[no-untyped-def]
    """Folds: ``np.average`` of the splits' scores weighted by their validation rows (every
    row validated once: the weights sum to n); one hold-out: its own scores."""
    X, y = data
    model = fit(name, X, y, cv=cv)
    results = model.cv_results_
    assert SPLIT_KEYS <= results.keys()
    scores, weights, mean = (results[k] for k in ("split_scores", "split_weights", "mean_score"))
    assert scores.shape[0] == weights.shape[0] == (1 if cv is None else cv)
    assert mean.shape == scores.shape[1:]
    if cv is None:
        assert 0 < weights[0] < len(X)
        np.testing.assert_array_equal(mean, scores[0])
    else:
        assert weights.sum() == len(X)
        np.testing.assert_array_equal(mean, np.average(scores, axis=0, weights=weights))


def test_a_score_pools_alone_as_in_a_table() -> None:
    """``pooled_scores`` of one checkpoint's splits alone has the bits of its column in a
    table (``np.average`` of a lone column adds in another order, which differs from 3
    splits on: the case the loop below finds), and of a table it is ``np.average``."""
    rng = np.random.default_rng(1)
    alone_differs_in_numpy = 0
    for _ in range(200):
        k, n = int(rng.integers(3, 9)), int(rng.integers(2, 30))
        table, weights = rng.uniform(0, 5, size=(k, n)), rng.uniform(0.1, 50, size=k)
        pooled = pooled_scores(table, weights)
        np.testing.assert_array_equal(pooled, np.average(table, axis=0, weights=weights))
        for j in range(n):
            assert pooled_scores(list(table[:, j]), weights) == pooled[j]
            alone_differs_in_numpy += np.average(table[:, j], weights=weights) != pooled[j]
    assert alone_differs_in_numpy > 0


@pytest.mark.parametrize("cv", [None, 2, 5])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_the_choice_is_made_on_the_mean_score(name: str, cv: Any, data) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = fit(name, X, y, cv=cv)
    results, path = model.cv_results_, model.path_
    if name == "kernel_ridge":
        which = list(results["alphas"]).index(model.alpha_)
        # The path's error is the mean's column at the chosen α, bit for bit.
        np.testing.assert_array_equal(path["validation_mse"], results["mean_score"][:, which])
        best = np.unravel_index(np.argmin(results["mean_score"]), results["mean_score"].shape)
        assert (model.best_index_, which) == best
    elif name == "grid_ridge":
        # The search pools each state on its own: the same bits as the table's column.
        np.testing.assert_array_equal(path["validation_mse"], results["mean_score"])
        np.testing.assert_array_equal(path["criterion"], results["mean_score"])
        np.testing.assert_array_equal(results["lifetimes"], path["lifetimes"])
        assert model.best_index_ == int(np.argmin(path["criterion"]))
    else:
        larger_is_better = model.selection == "accuracy"
        choose = np.argmax if larger_is_better else np.argmin
        assert model.best_index_ == int(choose(results["mean_score"]))


@pytest.mark.parametrize("name", ["kernel_ridge", "grid_ridge"])
def test_a_fit_by_evidence_keeps_no_former_cv_results(name: str, data) -> None:  # type: ignore[no-untyped-def]
    """The evidence scores no splits: a refit by it drops the record of a fit by validation."""
    X, y = data
    model = fit(name, X, y)
    assert SPLIT_KEYS <= model.cv_results_.keys()
    model.set_params(selection="evidence").fit(X, y)
    assert not hasattr(model, "cv_results_")
    assert not hasattr(fit(name, X, y, selection="evidence"), "cv_results_")


@pytest.mark.parametrize(
    ("name", "module", "function"),
    [
        ("kernel_ridge", "mondrian_learn.kernel._path_cv", "path_evidence"),
        ("grid_ridge", "mondrian_learn.kernel._grid_cv", "run_search"),
    ],
)
def test_a_failed_fit_by_evidence_keeps_the_former_cv_results(
    name: str, module: str, function: str, data, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    X, y = data
    model = fit(name, X, y)
    results = model.cv_results_

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(module + "." + function, interrupt)
    with pytest.raises(KeyboardInterrupt):
        model.set_params(selection="evidence").fit(X, y)
    assert model.cv_results_ is results
