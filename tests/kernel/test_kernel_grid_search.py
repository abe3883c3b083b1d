"""MondrianGridRidgeCV and the core's grid search (Balog's report §5.1–5.3): every step of the
search equals a ridge solved from scratch, the search finds the relevant feature, the grid's
kernel estimate is unbiased for new points, the evidence is the GP's, and the estimator
behaves."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

from conftest import Z, assert_same_for_any_n_jobs
from mondrian_learn import _core
from mondrian_learn._validation import draw_seed
from mondrian_learn.kernel import MondrianGridRidgeCV
from mondrian_learn.kernel._evidence import kernel_spectrum


def toy(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Figs. 5.3–5.4's kind of data: y depends on x₀ only, x₁ is irrelevant."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    return X, np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("solver", ["cholesky", "inverse"])
def test_every_step_equals_a_ridge_solved_from_scratch(solver: str) -> None:
    """After every add and remove step, the weights of every training row's cells and the
    validation predictions equal the ridge (ΦᵀΦ + αI)w = Φᵀ(y − ȳ) solved by scipy on the
    features built from scratch at the search's lifetimes (1e-8 relative)."""
    rng = np.random.default_rng(0)
    X, Xv = rng.uniform(size=(80, 3)), rng.uniform(size=(30, 3))
    X[:, 2], Xv[:5] = np.round(X[:, 2] * 5) / 5, X[:5]  # ties, and validation rows on knots
    y, yv = np.sin(4 * X[:, 0]) + X[:, 1], np.sin(4 * Xv[:, 0]) + Xv[:, 1]
    alpha, n = 0.05, len(y)
    search = _core.GridSearch(X, y, Xv, yv, 4, 3, alpha, solver, 10**5, 1e-12, 1000, 1)
    adds = removes = 0
    for step in range(45):
        dim, now = step % 3, search.active[step % 3]
        count = max(now - 2, 0) if step % 4 == 3 else now + 1 + step % 2
        point = search.move_to(dim, count, 1)
        if not len(point["validation_mse"]):
            continue
        adds, removes = adds + (count > now), removes + (count < now)
        data, indices, indptr, c = search.transform(list(point["lifetimes"][0]), n + len(yv), 1)
        phi = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n + len(yv), c)).toarray()
        train, val = phi[:n], phi[n:]
        # Columns only validation rows occupy get weight 0 from the training rows' ridge.
        gram = train.T @ train + alpha * np.eye(c)
        weights = scipy.linalg.solve(gram, train.T @ (y - y.mean()), assume_a="pos")
        m = 4
        row_weights = weights[indices[: n * m].reshape(n, m)]
        scale = np.abs(row_weights).max()
        np.testing.assert_allclose(search.row_weights(), row_weights, rtol=0, atol=1e-8 * scale)
        expected = y.mean() + val @ weights
        np.testing.assert_allclose(search.validation_predictions(), expected, rtol=1e-8)
        mse = np.mean((expected - yv) ** 2)
        assert point["validation_mse"][0] == pytest.approx(mse, rel=1e-8)
        assert point["solver"] == [solver]
    assert adds > 20 and removes > 5


def test_the_path_scores_the_refitted_model_and_the_attributes_agree() -> None:
    X, y = toy(300, 1)
    Xv, yv = toy(100, 2)
    model = MondrianGridRidgeCV(6, alpha=0.1, cuts_per_move=1, max_iter=40, random_state=0)
    model.fit(X, y, Xv, yv)
    path, best = model.path_, model.best_index_
    # With X_val given, the refit uses X alone: its validation error is the path's.
    mse = np.mean((model.predict(Xv) - yv) ** 2)
    assert path["validation_mse"][best] == pytest.approx(mse, rel=1e-8)
    np.testing.assert_array_equal(model.lifetimes_, path["lifetimes"][best])
    assert best == np.argmin(path["criterion"])
    np.testing.assert_array_equal(path["criterion"], path["validation_mse"])
    np.testing.assert_array_equal(
        model.selected_features_, np.flatnonzero(model.lifetimes_ >= model.lifetime_threshold)
    )
    steps = len(path["step"])
    assert path["lifetimes"].shape == path["n_cuts"].shape == (steps, 2)
    assert path["dimension"][0] == -1 and set(path["dimension"][1:]) <= {0, 1}
    assert np.all(np.diff(path["time"]) >= 0)
    # Each step moves one dimension by one cut (cuts_per_move=1).
    moved = np.abs(np.diff(path["n_cuts"], axis=0))
    assert np.all(moved.sum(axis=1) == 1)
    # No state is visited twice.
    assert len({tuple(c) for c in path["n_cuts"]}) == steps


@pytest.mark.parametrize("search", ["add", "add_remove", "lookahead"])
def test_the_search_raises_the_relevant_lifetime(search: str) -> None:
    """Figs. 5.3–5.4: on data that depend on x₀ only, every optimiser spends most of its cuts
    on x₀ (over 4 seeds, at least 80 % of the cuts of the chosen states), and λ₀ > λ₁ in each."""
    cuts = np.zeros(2)
    for seed in range(4):
        X, y = toy(300, seed)
        model = MondrianGridRidgeCV(8, alpha=0.1, search=search, random_state=seed).fit(X, y)
        assert model.lifetimes_[0] > model.lifetimes_[1], (seed, model.lifetimes_)
        cuts += model.path_["n_cuts"][model.best_index_]
    assert cuts[0] >= 0.8 * cuts.sum(), cuts


def test_the_kernel_estimate_is_unbiased_for_new_points_in_gaps_and_beyond() -> None:
    """φ(x)·φ(x') over M grids estimates exp(−Σ_d λ_d |x_d − x'_d|) for training points x' and
    new points x between the training coordinates and beyond their range (the unseen cuts
    integrated out). Each grid's term lies in [0, 1] with mean k, so its variance is at most
    k(1 − k): the mean of M = 3,000 lies within Z·√(k(1 − k)/M) of k."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(6, 2))
    lifetimes = [3.0, 1.5]
    m = 3000
    search = _core.GridSearch(
        X, np.arange(6.0), np.empty((0, 2)), np.empty(0), m, 1, 1.0, "gradient", 1, 1e-3, 1, 2
    )
    model = search.refit(np.arange(6.0), lifetimes, 1.0, 2)
    new = np.vstack([rng.uniform(size=(4, 2)), [[-0.3, 0.5], [1.2, 1.4], [0.5, -0.2]]])

    def features(P: np.ndarray) -> np.ndarray:
        data, indices, indptr, c = model.transform(P, 1)
        return scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(P), c)).toarray()

    estimate = features(new) @ features(X).T
    distance = np.abs(new[:, None, :] - X[None, :, :]) @ np.asarray(lifetimes)
    kernel = np.exp(-distance)
    bound = Z * np.sqrt(kernel * (1 - kernel) / m) + 1e-12
    assert np.all(np.abs(estimate - kernel) <= bound), np.abs(estimate - kernel) / bound


def test_evidence_selection_maximises_the_gp_evidence_and_refits_at_its_ratio() -> None:
    X, y = toy(150, 3)
    model = MondrianGridRidgeCV(
        5,
        selection="evidence",
        max_iter=30,
        n_iter_no_change=8,
        scale_features=False,
        random_state=0,
    ).fit(X, y)
    path, best = model.path_, model.best_index_
    assert np.all(np.isnan(path["validation_mse"]))
    np.testing.assert_array_equal(path["criterion"], -path["log_evidence_profiled"])
    assert model.alpha_ == path["alpha"][best] == model.model_.alpha
    assert model.lifetimes_[0] > model.lifetimes_[1]
    # The profiled maximum is log N(y; ȳ, ŝ² ΦΦᵀ + σ̂² I) on the chosen features (the search
    # state rebuilt with the estimator's seed).
    search = _core.GridSearch(
        X, y, np.empty((0, 2)), np.empty(0), 5, draw_seed(0), 1.0, "cholesky", 10**6, 1e-6, 10, 1
    )
    data, indices, indptr, c = search.transform(list(model.lifetimes_), len(y), 1)
    phi = scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(y), c)).toarray()
    cov = path["signal_variance"][best] * phi @ phi.T + path["noise_variance"][best] * np.eye(
        len(y)
    )
    sign, log_det = np.linalg.slogdet(cov)
    centred = y - y.mean()
    direct = -0.5 * (len(y) * np.log(2 * np.pi) + log_det + centred @ np.linalg.solve(cov, centred))
    assert sign > 0 and path["log_evidence_profiled"][best] == pytest.approx(direct, rel=1e-9)
    assert len(kernel_spectrum(phi, centred)[0]) > 0


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"search": "greedy"}, "search"),
        ({"lookahead": 0}, "lookahead"),
        ({"cuts_per_move": 0}, "cuts_per_move"),
        ({"lifetime_threshold": -1.0}, "lifetime_threshold"),
        ({"n_iter_no_change": 0}, "n_iter_no_change"),
        ({"selection": "aic"}, "selection"),
        ({"solver": "lu"}, "solver"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
    ],
)
def test_bad_parameters_are_named(params: dict, name: str) -> None:
    X, y = toy(30, 0)
    with pytest.raises(ValueError, match=name):
        MondrianGridRidgeCV(3, **params).fit(X, y)


def test_inputs_are_checked() -> None:
    X, y = toy(30, 0)
    with pytest.raises(ValueError, match="X_val and y_val"):
        MondrianGridRidgeCV(3).fit(X, y, X_val=X[:5])
    with pytest.raises(ValueError, match="features"):
        MondrianGridRidgeCV(3).fit(X, y, X[:5, :1], y[:5])
    with pytest.raises(ValueError, match="2 samples"):
        MondrianGridRidgeCV(3).fit(X[:1], y[:1])


@pytest.mark.parametrize("solver", ["cholesky", "inverse"])
def test_a_dense_route_named_is_refused_past_max_dense_features(solver: str) -> None:
    """A dense factor asked for by name is never grown past ``max_dense_features`` (which
    bounds its memory); the refusal names the parameter and the estimator is left as it was;
    under solver="auto" the same search hands over to conjugate gradients instead."""
    X, y = toy(200, 5)
    model = MondrianGridRidgeCV(5, alpha=0.1, max_iter=10, random_state=0).fit(X, y)
    before = model.lifetimes_.copy()
    model.set_params(solver=solver, max_dense_features=8)
    with pytest.raises(ValueError, match="max_dense_features = 8"):
        model.fit(X, y)
    np.testing.assert_array_equal(model.lifetimes_, before)
    auto = MondrianGridRidgeCV(5, alpha=0.1, max_iter=10, max_dense_features=8, random_state=0)
    assert "gradient" in set(auto.fit(X, y).path_["solver"])


def test_results_do_not_depend_on_n_jobs_and_survive_pickling() -> None:
    X, y = toy(200, 4)
    Q = np.random.default_rng(9).uniform(-0.2, 1.2, size=(50, 2))

    def results(n_jobs: int) -> tuple[np.ndarray, ...]:
        model = MondrianGridRidgeCV(
            5, alpha=0.1, search="lookahead", max_iter=25, random_state=1, n_jobs=n_jobs
        ).fit(X, y)
        return model.predict(Q), model.lifetimes_, model.path_["validation_mse"]

    assert_same_for_any_n_jobs(results)
    model = MondrianGridRidgeCV(5, alpha=0.1, max_iter=25, random_state=1).fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(Q), model.predict(Q))
