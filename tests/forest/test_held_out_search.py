"""The held-out search's machinery: Newton's method in a box, and how many propagations a
choice costs (work counted, not timed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mondrian_learn import MondrianForestRegressor
from mondrian_learn._newton import differenced, newton_in_box
from mondrian_learn.forest import _held_out


def rosenbrock(x: np.ndarray, derivatives: bool) -> tuple[float, Any, Any]:
    a, b = x
    value = (1 - a) ** 2 + 100 * (b - a * a) ** 2
    if not derivatives:
        return value, None, None
    gradient = np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])
    hessian = np.array([[2 - 400 * (b - 3 * a * a), -400 * a], [-400 * a, 200]])
    return value, gradient, hessian


def test_newton_finds_the_minimum_of_a_curved_valley_inside_and_on_the_box() -> None:
    """Rosenbrock's valley (indefinite Hessian away from it) from a far start: the minimum
    (1, 1) inside the box, and (0.5, 0.25) when the box stops a at 0.5 (b free: the valley
    floor b = a² there) — with exact derivatives and with second differences."""
    inside = np.array([[-2.0, 2.0], [-1.0, 3.0]])
    value, x = newton_in_box(rosenbrock, np.array([-1.5, 2.5]), inside)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-6)
    assert value < 1e-13
    cut = np.array([[-2.0, 0.5], [-1.0, 3.0]])
    _, x = newton_in_box(rosenbrock, np.array([-1.5, 2.5]), cut)
    np.testing.assert_allclose(x, [0.5, 0.25], atol=1e-7)
    _, x = newton_in_box(
        differenced(lambda z: rosenbrock(z, False)[0]), np.array([-1.5, 2.5]), inside, 1e-12
    )
    # Central differences at h = 1e-3 err by about h^2 f'''/6, 1e-3 here: so does x.
    np.testing.assert_allclose(x, [1.0, 1.0], atol=2e-3)


def test_newton_stays_put_where_nothing_decreases() -> None:
    """At a bound that the gradient pushes against, and where f is not finite, x is kept."""
    slope = lambda x, d: (float(x[0]), np.array([1.0]), np.array([[0.0]]))  # noqa: E731
    value, x = newton_in_box(slope, np.array([0.0]), np.array([[0.0, 1.0]]))
    assert (value, x[0]) == (0.0, 0.0)
    broken = lambda x, d: (np.inf, np.array([1.0]), np.array([[1.0]]))  # noqa: E731
    value, x = newton_in_box(broken, np.array([0.3]), np.array([[0.0, 1.0]]))
    assert value == np.inf and x[0] == 0.3


@pytest.mark.parametrize("fixed", [{}, {"noise_variance": 0.2}])
def test_a_held_out_choice_costs_few_propagations(
    fixed: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Belief propagations of the scoring forests, one per point the outer search visits:
    80 and 43 here, bounded at 120 (the joint search over all four variables stopped at its
    limit of 165 evaluations short of the optimum, and took 52 with σ_y² fixed)."""
    calls = []
    original = _held_out._ProfiledSearch.profile

    def counted(self: Any, theta: np.ndarray) -> Any:
        calls.append(np.asarray(theta).tobytes() not in self.memo)
        return original(self, theta)

    monkeypatch.setattr(_held_out._ProfiledSearch, "profile", counted)
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(3_000, 4))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + rng.normal(scale=0.3, size=3_000)
    MondrianForestRegressor(n_estimators=8, random_state=1, **fixed).fit(X, y)
    propagations = sum(calls)
    assert 6 <= propagations <= 120, propagations
