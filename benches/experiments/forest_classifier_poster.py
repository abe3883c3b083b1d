"""The label-guided-splits poster's experiments: Fig. 3 (batch) and Figs. 4–5 (online).

Fig. 3: test accuracy of the original (label-blind, T = Q = 1) and the label-guided Mondrian
forest (T = √D, Q = 6) with 1 tree (mean over ``--seeds`` seeds) and 50 trees on usps,
satimage, letter and dna; the poster reports +10.6 % with one tree and, with 50 trees, +25.3 %
on dna and about +1.3 % on the others (relative gains, printed here as "gain %").

Figs. 4–5: both forests (50 trees) trained online on 10 mini-batches of dna and usps (the
training rows in a fixed shuffled order): test accuracy after each mini-batch, then the batch
fit on all rows — the label-blind forest has the batch distribution online, the guided one
does not (a conditional-Mondrian cut outside an old box cannot be guided), and the last
column measures how far apart they end. A third row per set does the same for the
classifier's defaults (T = D/3, Q = 6).

Sets from ``../shared/data`` (usps: its published halves; the others a seeded stratified
75/25 split). Every forest: ``lifetime=inf``, ``min_samples_split=2``, γ = 10·D,
``min_discount=0.01``.

Usage::

    python benches/experiments/forest_classifier_poster.py
    python benches/experiments/forest_classifier_poster.py --out benches/out/poster_fig45.png
"""

from __future__ import annotations

import numpy as np
from _common import experiment_parser, header, load_classification, pyplot, save_figure
from sklearn.metrics import log_loss

from mondrian_learn import MondrianForestClassifier

BLIND = {"candidate_dimensions": 1, "candidate_locations": 1}
GUIDED = {"candidate_dimensions": "sqrt", "candidate_locations": 6}
COMMON = {"lifetime": np.inf, "min_samples_split": 2, "min_discount": 0.01}


def forest(trees: int, guided: bool, seed: int, n_jobs: int) -> MondrianForestClassifier:
    cuts = GUIDED if guided else BLIND
    return MondrianForestClassifier(trees, random_state=seed, n_jobs=n_jobs, **COMMON, **cuts)


def scores(model: MondrianForestClassifier, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Test accuracy and log loss."""
    proba = model.predict_proba(X)
    accuracy = float((proba.argmax(axis=1) == y).mean())
    return accuracy, float(log_loss(y, proba, labels=model.classes_))


def figure3(data: dict, seeds: int, n_jobs: int) -> None:
    print("\nPoster Fig. 3 (batch): accuracy, original → label-guided")
    print(f"{'set':<10}{'trees':>6}{'original':>10}{'guided':>10}{'gain pt':>9}{'gain %':>8}")
    for name, (X, y, X_test, y_test) in data.items():
        for trees, repeats in ((1, seeds), (50, 1)):
            pair = []
            for guided in (False, True):
                runs = [
                    scores(forest(trees, guided, seed, n_jobs).fit(X, y), X_test, y_test)[0]
                    for seed in range(repeats)
                ]
                pair.append(float(np.mean(runs)))
            gain = pair[1] - pair[0]
            print(
                f"{name:<10}{trees:>6}{pair[0]:>10.4f}{pair[1]:>10.4f}"
                f"{100 * gain:>9.2f}{100 * gain / pair[0]:>8.1f}"
            )


def figures45(data: dict, n_jobs: int, out: str) -> None:
    print("\nPoster Figs. 4–5 (online, 10 mini-batches, 50 trees): test accuracy after each")
    curves = {}
    for name in ("dna", "usps"):
        if name not in data:
            continue
        X, y, X_test, y_test = data[name]
        order = np.random.default_rng(0).permutation(len(X))
        X, y = X[order], y[order]
        for cuts in ("original", "guided", "default"):
            label = f"{name} {cuts}"
            make = (
                (lambda: MondrianForestClassifier(50, random_state=0, n_jobs=n_jobs))
                if cuts == "default"
                else (lambda g=cuts == "guided": forest(50, g, 0, n_jobs))
            )
            online = make()
            accuracy = []
            for i, chunk in enumerate(np.array_split(np.arange(len(X)), 10)):
                online.partial_fit(X[chunk], y[chunk], classes=np.unique(y) if i == 0 else None)
                accuracy.append(scores(online, X_test, y_test)[0])
            batch, loss = scores(make().fit(X, y), X_test, y_test)
            online_loss = scores(online, X_test, y_test)[1]
            curves[label] = accuracy
            print(
                f"{label:<16}"
                + " ".join(f"{a:.3f}" for a in accuracy)
                + f" | batch {batch:.4f}, online − batch {100 * (accuracy[-1] - batch):+.2f} pt"
                + f"; log loss online {online_loss:.4f}, batch {loss:.4f}"
            )
    plt = pyplot()
    if plt is None or not out or not curves:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name in zip(axes, ("dna", "usps")):
        for label, accuracy in curves.items():
            if label.startswith(name):
                ax.plot(np.arange(1, 11), accuracy, marker="o", label=label.split()[1])
        ax.set_title(f"{name}: online, 10 mini-batches")
        ax.set_xlabel("mini-batches seen")
        ax.set_ylabel("test accuracy")
        ax.legend()
    save_figure(fig, out)


def main() -> None:
    parser = experiment_parser(__doc__, out="", data=True)
    parser.add_argument("--sets", nargs="+", default=["usps", "satimage", "letter", "dna"])
    parser.add_argument("--seeds", type=int, default=10, help="seeds averaged with one tree")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    header()
    data = {name: load_classification(name, args.data) for name in args.sets}
    figure3(data, args.seeds, args.n_jobs)
    figures45(data, args.n_jobs, args.out)


if __name__ == "__main__":
    main()
