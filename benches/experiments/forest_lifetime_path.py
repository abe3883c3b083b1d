"""The forests' lifetime path (Balog's report §4.1, Fig. 4.1) and the lifetime search.

For every regression set of the accuracy issue and the classification sets of the poster
(seeded splits as in ``_common``; default parameters, ``n_jobs=2``):

* fit the default forest (λ = ∞) on the training split and time it, then time its
  ``lifetime_path`` with the test split as validation (100 checkpoints) — the path goal is
  ≤ 1.5 × one fit at Λ;
* fit ``MondrianForestRegressorCV`` / ``MondrianForestClassifierCV`` (λ by the validation
  error of a 20 % share of the training split) and compare its test scores with the default
  forest's (the refitted model predicts with the hierarchical posterior);
* plot training and validation error against λ (log axis), the chosen λ marked.

Usage::

    python benches/experiments/forest_lifetime_path.py --out benches/out/forest_lifetime_path.png
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _common import (
    CLASSIFICATION_SETS,
    REGRESSION_SETS,
    experiment_parser,
    header,
    load_classification,
    load_regression,
    pyplot,
    rmse,
    save_figure,
    timed,
)
from sklearn.metrics import log_loss

from mondrian_learn import (
    MondrianForestClassifier,
    MondrianForestClassifierCV,
    MondrianForestRegressor,
    MondrianForestRegressorCV,
)
from mondrian_learn.calibration import gaussian_nlpd


def run(name: str, split: tuple, forest: Any, search: Any, score: Any) -> dict[str, Any]:
    """Fit ``forest`` (λ = ∞) and time it, time its path on the test rows, fit ``search``;
    print the times, the chosen λ and ``score(model, X_test, y_test)`` (a row of columns) of
    both models."""
    X, y, Xt, yt = split
    fit_s, _ = timed(lambda: forest.fit(X, y))
    path_s, path = timed(lambda: forest.lifetime_path(Xt, yt, lifetimes=100))
    search_s, _ = timed(lambda: search.fit(X, y))
    print(
        f"{name:<20}{fit_s:>7.1f}{path_s:>7.2f}{path_s / fit_s:>7.2f}{search_s / fit_s:>7.2f}"
        f"{search.lifetime_:>9.3g}" + score(forest, search, Xt, yt),
        flush=True,
    )
    return dict(path=path, chosen=search.lifetime_)


def regression_scores(forest: Any, search: Any, Xt: np.ndarray, yt: np.ndarray) -> str:
    """Test RMSE(∞) / RMSE(CV), NLPD(∞), NLPD(CV)."""
    scores = []
    for model in (forest, search):
        mean, std = model.predict(Xt, return_std=True)
        scores.append((rmse(mean, yt), gaussian_nlpd(mean, std, yt)))
    return f"{scores[0][0] / scores[1][0]:>10.3f}{scores[0][1]:>9.3f}{scores[1][1]:>9.3f}"


def classification_scores(forest: Any, search: Any, Xt: np.ndarray, yt: np.ndarray) -> str:
    """Test accuracy (∞), (CV), log loss (∞), (CV)."""
    accuracy, loss = [], []
    for model in (forest, search):
        proba = model.predict_proba(Xt)
        accuracy.append(np.mean(model.classes_[np.argmax(proba, axis=1)] == yt))
        loss.append(log_loss(yt, proba, labels=model.classes_))
    return "".join(f"{v:>8.4f}" for v in [*accuracy, *loss])


def regression(name: str, data: str) -> dict[str, Any]:
    split = load_regression(name, data)
    common = dict(n_jobs=2, random_state=0)
    result = run(
        name,
        split,
        MondrianForestRegressor(**common),
        MondrianForestRegressorCV(**common),
        regression_scores,
    )
    path, scale = result["path"], np.std(split[3])
    result["curves"] = {
        "train": np.sqrt(path["train_mse"]) / scale,
        "validation": np.sqrt(path["validation_mse"]) / scale,
    }
    return dict(result, ylabel="RMSE / std(y)")


def classification(name: str, data: str) -> dict[str, Any]:
    common = dict(n_jobs=2, random_state=0)
    result = run(
        name,
        load_classification(name, data),
        MondrianForestClassifier(**common),
        MondrianForestClassifierCV(**common),
        classification_scores,
    )
    path = result["path"]
    result["curves"] = {"train": path["train_log_loss"], "validation": path["validation_log_loss"]}
    return dict(result, ylabel="log loss")


def plot(results: dict[str, dict[str, Any]], out: str) -> None:
    plt = pyplot()
    if plt is None:
        return
    cols = 4
    rows = -(-len(results) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), results.items()):
        lifetimes = r["path"]["lifetimes"][1:]  # λ = 0 off the log axis
        for label, curve in r["curves"].items():
            ax.plot(lifetimes, curve[1:], label=label)
        if np.isfinite(r["chosen"]):
            ax.axvline(r["chosen"], color="black", ls=":", label="chosen λ")
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("lifetime λ (unit box)")
        ax.set_ylabel(r["ylabel"])
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(results) :]:
        ax.axis("off")
    fig.tight_layout()
    save_figure(fig, out)


def main() -> None:
    parser = experiment_parser(__doc__, out="benches/out/forest_lifetime_path.png", data=True)
    parser.add_argument("--sets", nargs="*", default=None, help="subset of the sets")
    args = parser.parse_args()
    header()
    wanted = set(args.sets) if args.sets else None
    results: dict[str, dict[str, Any]] = {}
    print("\nregression: fit s (λ = ∞), path s, path / fit, CV fit / fit, chosen λ,")
    print("test RMSE(∞) / RMSE(CV), test NLPD (∞), NLPD (CV)")
    for name in REGRESSION_SETS:
        if wanted is None or name in wanted:
            results[name] = regression(name, args.data)
    print("\nclassification: fit s, path s, path / fit, CV fit / fit, chosen λ,")
    print("test accuracy (∞), (CV), test log loss (∞), (CV)")
    for name in CLASSIFICATION_SETS[:4]:
        if wanted is None or name in wanted:
            results[name] = classification(name, args.data)
    plot(results, args.out)


if __name__ == "__main__":
    main()
