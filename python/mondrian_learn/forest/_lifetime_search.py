"""Mondrian forests with the lifetime λ chosen on the lifetime path (Balog's report §4.1):
fit at Λ on part of the data, score every λ ∈ [0, Λ] on the rest in one sweep, refit at the
best λ on all of it."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.validation import validate_data

from mondrian_learn._base import restore_on_failure
from mondrian_learn._lifetime_path import LIFETIMES, VALIDATION_FRACTION, held_out_rows
from mondrian_learn._validation import Options, Param, check_sample_weight
from mondrian_learn.forest._base import MondrianForestBase
from mondrian_learn.forest._classifier import MondrianForestClassifier
from mondrian_learn.forest._regressor import MondrianForestRegressor

SEARCH_NOTES = """
    ``fit`` holds out ``validation_fraction`` of the distinct rows (copies of a row stay
    together, so none is scored against its own copy; the rows' order does not move the
    split), fits the forest with the lifetime
    Λ = ``lifetime`` (default ∞: trees grown until ``min_samples_split`` stops them) on the
    rest, runs :meth:`lifetime_path` on the held-out rows, and refits on all rows at the λ
    whose validation score (``selection``) is best — at Λ itself when that is the forest with
    every cut. The path scores a simpler predictor of the pruned forests than the refitted
    model's hierarchical posterior ({path_model}; see :meth:`lifetime_path`): λ is chosen for
    that predictor. Cost: two fits and one sweep (measured in benches/RESULTS.md, issue 15).
    The parameters and attributes are the forest's, and those of the search below.
"""

SEARCH_PARAMETERS = """    lifetimes : int, array-like or None, default=100
        Where the path is scored: an int k, at λ = 0 and after every ⌈n_cuts/k⌉-th cut; an
        array, at those λ; None, after every cut.
    validation_fraction : float, default=0.2
        Share of the rows held out to score the path (drawn by ``random_state``).
    selection : {selections}, default="{default}"
        The validation score that picks λ.
"""

SEARCH_ATTRIBUTES = """    path_ : dict of arrays
        :meth:`lifetime_path` of the forest fitted on the training share.
    best_index_ : int
        The chosen checkpoint.
    lifetime_ : float
        The chosen λ, with which ``model_`` was refitted (``lifetime`` when the best
        checkpoint holds every cut).
"""


def section(doc: str, title: str) -> str:
    """The entries of numpydoc section ``title`` of a class docstring ``doc``."""
    start = doc.index(f"    {title}\n    {'-' * len(title)}\n") + 2 * (len(title) + 5)
    end = doc.find("\n\n    ", start)
    return doc[start:end].rstrip("\n") + "\n"


class LifetimeSearchMixin(MondrianForestBase):
    """``fit`` by the lifetime path (:data:`SEARCH_NOTES`). A subclass names its validation
    scores in ``_selections``: score name → whether larger is better."""

    #: The held-out split looks for repeated rows (``held_out_rows``), on dense X only.
    _accepts_sparse = False

    _selections: ClassVar[dict[str, bool]] = {}

    @restore_on_failure
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Fit at Λ on a training share, choose λ on the held-out share's path, refit on all.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Targets (regression) or labels (classification).
        sample_weight : float or array-like of shape (n_samples,), default=None
            Row weights (frequencies, as the forest's ``fit`` reads them), in both fits and
            in the validation scores; rows of zero weight are dropped before the split.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(
            self, X, y, dtype=list(self._point_dtypes), y_numeric=self._is_regression()
        )
        weights, keep = check_sample_weight(sample_weight, X.shape[0])
        X, y = X[keep], y[keep]
        classes = None if self._is_regression() else np.unique(y)
        codes = y if classes is None else np.searchsorted(classes, y)
        train, held_out = held_out_rows(X, codes, self.validation_fraction, self.random_state)
        w_train, w_held_out = (
            (None, None) if weights is None else (weights[train], weights[held_out])
        )
        self._fit(X[train], y[train], classes=classes, sample_weight=w_train)
        path = self.lifetime_path(X[held_out], y[held_out], self.lifetimes, w_held_out)
        scores = np.asarray(path[f"validation_{self.selection}"])
        larger_is_better = self._selections[self.selection]
        best = int(np.argmax(scores) if larger_is_better else np.argmin(scores))
        n_cuts = int(np.sum(self.model_.n_leaves())) - self.model_.n_trees
        every_cut = int(path["n_cuts"][best]) == n_cuts
        lifetime = float(self.lifetime) if every_cut else float(path["lifetimes"][best])
        self._fit(X, y, lifetime=lifetime, sample_weight=weights)
        self.path_, self.best_index_, self.lifetime_ = path, best, lifetime
        return self

    def _is_regression(self) -> bool:
        return "mse" in self._selections


def search_parameters(forest: type, selections: dict[str, bool]) -> dict[str, Param]:
    """The parameter table of a CV estimator: the forest's, then the search's; the first of
    ``selections`` is the default."""
    return {
        **forest._parameters,  # type: ignore[attr-defined]
        "lifetimes": LIFETIMES,
        "validation_fraction": VALIDATION_FRACTION,
        "selection": Param(next(iter(selections)), Options(set(selections))),
    }


def search_doc(
    forest: type, kind: str, path_model: str, selections: dict[str, bool], example: str
) -> str:
    """A CV estimator's docstring: what it does (:data:`SEARCH_NOTES`), the forest's and the
    search's parameters and attributes, and its example."""
    names = ", ".join(f'"{name}"' for name in selections)
    default = next(iter(selections))
    doc = inspect.cleandoc(forest.__doc__ or "")
    doc = "\n".join("    " + line if line else line for line in doc.split("\n"))
    parameters = section(doc, "Parameters") + SEARCH_PARAMETERS.format(
        selections=f"{{{names}}}", default=default
    )
    attributes = section(doc, "Attributes") + SEARCH_ATTRIBUTES
    return (
        f"Mondrian forest {kind} with the lifetime chosen on the lifetime path.\n"
        f"{SEARCH_NOTES.format(path_model=path_model)}\n"
        f"    Parameters\n    ----------\n{parameters}\n"
        f"    Attributes\n    ----------\n{attributes}\n"
        f"    Examples\n    --------{example}"
    )


class MondrianForestRegressorCV(LifetimeSearchMixin, MondrianForestRegressor):
    _selections = {"mse": False, "nlpd": False}
    _parameters = search_parameters(MondrianForestRegressor, _selections)
    __doc__ = search_doc(
        MondrianForestRegressor,
        "regression",
        "leaf means, Gaussian with σ_y² plus the spread over trees",
        _selections,
        """
    >>> import numpy as np
    >>> from mondrian_learn.forest import MondrianForestRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = np.sin(6 * X[:, 0]) + 0.3 * rng.normal(size=300)
    >>> model = MondrianForestRegressorCV(n_estimators=10, lifetimes=20, random_state=0)
    >>> model = model.fit(X, y)
    >>> len(model.path_["lifetimes"]), bool(model.lifetime_ >= 0)
    (21, True)
    """,
    )


class MondrianForestClassifierCV(LifetimeSearchMixin, MondrianForestClassifier):
    _selections = {"log_loss": False, "accuracy": True}
    _parameters = search_parameters(MondrianForestClassifier, _selections)
    __doc__ = search_doc(
        MondrianForestClassifier,
        "classification",
        "leaf class frequencies smoothed towards the parent's",
        _selections,
        """
    >>> import numpy as np
    >>> from mondrian_learn.forest import MondrianForestClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> model = MondrianForestClassifierCV(n_estimators=10, lifetimes=20, random_state=0)
    >>> model = model.fit(X, y)
    >>> len(model.path_["lifetimes"]), model.classes_.tolist()
    (21, [0, 1])
    """,
    )
