"""``sample_weight`` of the kernel's cross-validated ridges (MondrianKernelRidgeCV,
MondrianGridRidgeCV), with the kernel ridge's meaning: row i's noise is σ²/v_i, so an integer
weight is the row repeated and a zero weight removes it; validation errors weigh their rows.
Checked against the unweighted fit (weights of 1), against repeated rows, and against weighted
ridges solved from scratch on the same trees' features."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from mondrian_learn import MondrianKernelRidgeCV, _core
from mondrian_learn._lifetime_path import validation_splits
from mondrian_learn._validation import draw_seed
from mondrian_learn.kernel import MondrianGridRidgeCV
from mondrian_learn.kernel._features import to_csr

TREES, MAX_LIFETIME, SEED, ALPHAS = 5, 6.0, 3, (0.05, 0.5, 5.0)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """60 distinct rows, their targets, and integer weights 0–3 (some rows removed)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(60, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.2 * rng.normal(size=60)
    return X, y, rng.integers(0, 4, size=60).astype(float)


def path_cv(**params: Any) -> MondrianKernelRidgeCV:
    settings: dict[str, Any] = dict(
        max_lifetime=MAX_LIFETIME, alphas=ALPHAS, lifetimes=8, scale_features=False
    )
    return MondrianKernelRidgeCV(TREES, random_state=SEED, **{**settings, **params})


def grid_cv(**params: Any) -> MondrianGridRidgeCV:
    return MondrianGridRidgeCV(
        4, alpha=0.3, max_iter=6, scale_features=False, random_state=SEED, **params
    )


#: The log evidence of N weighted rows is not that of their Σ v_i copies: row i's noise σ²/v_i
#: is the mean of v_i copies' (the ridge's solution is the same), but the copies also bring
#: v_i − 1 residuals of zero, whose density depends on σ² (and the Jacobian ½ Σ log v_i).
EVIDENCE = ("time", "log_evidence")


def assert_same_fit(
    a: Any, b: Any, X: np.ndarray, rtol: float, skip: tuple[str, ...] = ("time",)
) -> None:
    """Same choice, path and split scores (but ``skip``) and predictions (exactly for
    ``rtol=0``)."""
    assert a.best_index_ == b.best_index_
    assert a.alpha_ == pytest.approx(b.alpha_, rel=rtol)
    assert hasattr(a, "cv_results_") == hasattr(b, "cv_results_")
    for record in ("path_", "cv_results_"):
        for name, value in vars(a).get(record, {}).items():
            if name in skip:
                continue
            other = getattr(b, record)[name]
            if np.asarray(value).dtype.kind in "fc":
                np.testing.assert_allclose(value, other, rtol=rtol, atol=0, err_msg=name)
            else:
                np.testing.assert_array_equal(value, other, err_msg=name)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=rtol, atol=0)


@pytest.mark.parametrize("make", [path_cv, grid_cv], ids=["path", "grid"])
@pytest.mark.parametrize("cv", [None, 3])
def test_weights_of_one_are_the_unweighted_fit_exactly(data, make, cv) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    plain = make(cv=cv).fit(X, y)
    assert_same_fit(make(cv=cv).fit(X, y, sample_weight=np.ones(len(y))), plain, X, rtol=0)
    assert_same_fit(make(cv=cv).fit(X, y, sample_weight=1.0), plain, X, rtol=0)


def test_weights_of_one_are_the_unweighted_evidence_fit_exactly(data) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    plain = path_cv(selection="evidence").fit(X, y)
    ones = path_cv(selection="evidence").fit(X, y, sample_weight=np.ones(len(y)))
    assert_same_fit(ones, plain, X, rtol=0)


# The sums of a repeated row and of its weight differ in order only: a few ulps each.
REPEAT_RTOL = 1e-9


@pytest.mark.parametrize("make", [path_cv, grid_cv], ids=["path", "grid"])
@pytest.mark.parametrize("cv", [None, 3])
def test_integer_weights_are_repeated_rows_in_drawn_splits(data, make, cv) -> None:  # type: ignore[no-untyped-def]
    """A split drawn here (cv None or an int) takes the distinct rows as its units whenever
    rows are weighted, so a weight 2c_i and c_i copies of weight 2 split alike (unweighted
    fits keep their row-wise split: no weights, no change); zero weights remove rows."""
    X, y, counts = data
    params = {"cv": cv} if make is grid_cv else {"cv": cv, "max_lifetime": None}
    weighted = make(**params).fit(X, y, sample_weight=2 * counts)
    copies = counts.astype(int)
    repeated = make(**params).fit(
        np.repeat(X, copies, axis=0),
        np.repeat(y, copies),
        sample_weight=np.full(copies.sum(), 2.0),
    )
    assert_same_fit(weighted, repeated, X, rtol=REPEAT_RTOL, skip=EVIDENCE)
    if make is path_cv:
        assert weighted.max_lifetime_ == repeated.max_lifetime_


@pytest.mark.parametrize("make", [path_cv, grid_cv], ids=["path", "grid"])
def test_integer_weights_are_repeated_rows_in_given_splits(data, make) -> None:  # type: ignore[no-untyped-def]
    """As scikit-learn's check does it: splits given by group, weights against unweighted
    copies (indices of the weighted rows, zero weights included, renumbered by the fit)."""
    X, y, counts = data
    group = np.arange(len(y)) % 3
    copies = counts.astype(int)
    repeated_group = np.repeat(group, copies)
    splits = [(np.flatnonzero(group != g), np.flatnonzero(group == g)) for g in range(3)]
    repeated_splits = [
        (np.flatnonzero(repeated_group != g), np.flatnonzero(repeated_group == g)) for g in range(3)
    ]
    weighted = make(cv=splits).fit(X, y, sample_weight=counts)
    repeated = make(cv=repeated_splits).fit(np.repeat(X, copies, axis=0), np.repeat(y, copies))
    assert_same_fit(weighted, repeated, X, rtol=REPEAT_RTOL, skip=EVIDENCE)


def weighted_ridge(
    Z: np.ndarray, y: np.ndarray, v: np.ndarray, alpha: float
) -> tuple[np.ndarray, float, np.ndarray]:
    """From scratch: w = (ZᵀVZ + αI)⁻¹ZᵀV(y − ȳ), ȳ the weighted mean, and the Cholesky
    factor of A."""
    mean = np.average(y, weights=v)
    A = Z.T @ (v[:, None] * Z) + alpha * np.eye(Z.shape[1])
    return np.linalg.solve(A, Z.T @ (v * (y - mean))), mean, np.linalg.cholesky(A)


def test_path_scores_every_checkpoint_as_a_weighted_ridge_from_scratch(data) -> None:  # type: ignore[no-untyped-def]
    """The held-out split of the weighted rows, the trees on its training rows: per checkpoint
    and α, the validation error Σ v (y − ŷ)² / Σ v, the training error and the ridge's log
    evidence (with ½ Σ log v) of the dense weighted ridge."""
    X, y, counts = data
    keep = counts > 0
    X, y = X[keep], y[keep]
    v = counts[keep] * np.random.default_rng(1).uniform(0.5, 2.0, size=keep.sum())
    model = path_cv().fit(X, y, sample_weight=v)
    train, val = validation_splits(None, X, y, 0.2, SEED, distinct=True)[0]
    features = _core.KernelFeatures(X[train], TREES, MAX_LIFETIME, draw_seed(SEED), 1, TREES)
    path = model.path_
    n_rows = len(train)
    for i, lifetime in enumerate(path["lifetimes"]):
        Z = to_csr(features.transform(X[train], 1, float(lifetime))).toarray()
        Zv = to_csr(features.transform(X[val], 1, float(lifetime))).toarray()
        for j, alpha in enumerate(ALPHAS):
            w, mean, L = weighted_ridge(Z, y[train], v[train], alpha)
            error = (mean + Zv @ w - y[val]) ** 2
            expected = np.sum(v[val] * error) / np.sum(v[val])
            assert model.cv_results_["mean_score"][i, j] == pytest.approx(expected, rel=1e-8)
        # The recorded columns are at the chosen α.
        w, mean, L = weighted_ridge(Z, y[train], v[train], model.alpha_)
        residual = y[train] - mean - Z @ w
        vt = v[train]
        assert path["train_mse"][i] == pytest.approx(np.sum(vt * residual**2) / vt.sum(), rel=1e-8)
        z = np.linalg.solve(L, Z.T @ (vt * (y[train] - mean)))
        sigma2 = (np.sum(vt * (y[train] - mean) ** 2) - z @ z) / n_rows
        evidence = (
            -0.5 * n_rows * np.log(2 * np.pi * sigma2)
            - 0.5 * n_rows
            + 0.5 * Z.shape[1] * np.log(model.alpha_)
            - np.log(np.diag(L)).sum()
            + 0.5 * np.log(vt).sum()
        )
        assert path["log_evidence"][i] == pytest.approx(evidence, rel=1e-8)


def test_evidence_selection_is_the_weighted_gp_likelihood(data) -> None:  # type: ignore[no-untyped-def]
    """``log_evidence_profiled`` at each checkpoint is log N(y − ȳ; 0, ŝ² ΦΦᵀ + σ̂² V⁻¹) at the
    recorded ŝ² and σ̂² (a dense GP log density from scratch)."""
    X, y, counts = data
    keep = counts > 0
    X, y, v = X[keep], y[keep], counts[keep] * 0.7
    model = path_cv(selection="evidence", lifetimes=4).fit(X, y, sample_weight=v)
    features = _core.KernelFeatures(X, TREES, MAX_LIFETIME, draw_seed(SEED), 1, TREES)
    path = model.path_
    centred = y - np.average(y, weights=v)
    for k, lifetime in enumerate(path["lifetimes"]):
        Z = to_csr(features.transform(X, 1, float(lifetime))).toarray()
        cov = path["signal_variance"][k] * (Z @ Z.T) + np.diag(path["noise_variance"][k] / v)
        expected = multivariate_normal(np.zeros(len(y)), cov).logpdf(centred)
        assert path["log_evidence_profiled"][k] == pytest.approx(expected, rel=1e-7)
    assert model.best_index_ == int(np.nanargmax(path["log_evidence_profiled"]))
    assert model.model_.n_rows == len(y)


def test_grid_folds_score_states_as_weighted_ridges_from_scratch(data) -> None:  # type: ignore[no-untyped-def]
    """Per state and fold: the weighted validation error of the dense weighted ridge on the
    fold's grid features; folds pooled by their validation rows' total weight."""
    X, y, counts = data
    keep = counts > 0
    X, y, v = X[keep], y[keep], counts[keep] * 1.5
    model = grid_cv(cv=3).fit(X, y, sample_weight=v)
    folds = validation_splits(3, X, y, 0.2, SEED, distinct=True)
    path, results = model.path_, model.cv_results_
    for state, lifetimes in enumerate(path["lifetimes"]):
        scores = []
        for t, h in folds:
            search = _core.GridSearch(
                X[t], y[t], X[h], y[h], 4, draw_seed(SEED), 0.3, "auto", 256, 1e-6, 300, 1
            )
            Z = to_csr(search.transform([float(s) for s in lifetimes], len(y), 1)).toarray()
            w, mean, _ = weighted_ridge(Z[: len(t)], y[t], v[t], 0.3)
            error = (mean + Z[len(t) :] @ w - y[h]) ** 2
            scores.append(np.sum(v[h] * error) / np.sum(v[h]))
        np.testing.assert_allclose(results["split_scores"][:, state], scores, rtol=1e-7)
        pooled = np.average(scores, weights=[np.sum(v[h]) for _, h in folds])
        assert path["criterion"][state] == pytest.approx(pooled, rel=1e-7)


@pytest.mark.parametrize("make", [path_cv, grid_cv], ids=["path", "grid"])
@pytest.mark.parametrize(
    "weights",
    [
        lambda n: -np.ones(n),
        lambda n: np.r_[np.nan, np.ones(n - 1)],
        lambda n: np.ones(n - 1),
        lambda n: np.zeros(n),
    ],
    ids=["negative", "nan", "length", "all-zero"],
)
def test_bad_weights_are_refused_by_name(data, make, weights) -> None:  # type: ignore[no-untyped-def]
    X, y, _ = data
    with pytest.raises(ValueError, match="sample_weight"):
        make().fit(X, y, sample_weight=weights(len(y)))


@pytest.mark.parametrize("make", [path_cv, grid_cv], ids=["path", "grid"])
def test_text_targets_with_weights_are_refused_as_targets(data, make) -> None:  # type: ignore[no-untyped-def]
    # The weighted target check must not run before y is known to be numbers (it would fail
    # inside numpy with a TypeError).
    X, y, _ = data
    with pytest.raises(ValueError, match="y must be numeric for regression"):
        make().fit(X, np.array(["a"] * len(y)), sample_weight=np.full(len(y), 2.0))
