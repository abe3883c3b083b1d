"""river's interface (``mondrian_learn.river``): river's own estimator checks, progressive
validation against river's baselines, feature mapping by name, new classes, seeds, pickling."""

from __future__ import annotations

import doctest
import itertools
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

river = pytest.importorskip("river")

from river import (  # noqa: E402
    datasets,
    dummy,
    evaluate,
    metrics,
    preprocessing,
    stats,
)
from river.checks import yield_checks  # noqa: E402

import mondrian_learn  # noqa: E402
import mondrian_learn.river as ml_river  # noqa: E402
from mondrian_learn.river import MondrianForestClassifier, MondrianForestRegressor  # noqa: E402

ESTIMATORS = [MondrianForestRegressor, MondrianForestClassifier]


def friedman(n: int, seed: int = 42) -> list[tuple[dict, float]]:
    return list(datasets.synth.Friedman(seed=seed).take(n))


def river_checks() -> list[tuple[str, type, object]]:
    """Every check river's ``check_estimator`` runs, for each estimator's first unit-test
    parameters, less the ones it declares skipped; with an id naming the dataset's rank."""
    cases = []
    for cls in ESTIMATORS:
        model = cls(**next(iter(cls._unit_test_params())))
        ranks: dict[str, int] = {}
        for check in yield_checks(model):
            name = check.__name__
            if name in model._unit_test_skips():
                continue
            ranks[name] = ranks.get(name, -1) + 1
            has_data = "dataset" in getattr(check, "keywords", {})
            cases.append((f"{cls.__name__}-{name}" + f"-{ranks[name]}" * has_data, cls, check))
    return cases


CHECKS = river_checks()


@pytest.mark.parametrize("case", CHECKS, ids=[case[0] for case in CHECKS])
def test_river_estimator_checks(case: tuple[str, type, object]) -> None:
    _, cls, check = case
    check(cls(**next(iter(cls._unit_test_params()))).clone())  # type: ignore[operator]


def test_estimators_are_river_estimators() -> None:
    assert isinstance(MondrianForestRegressor(), river.base.Regressor)
    assert isinstance(MondrianForestClassifier(), river.base.Classifier)
    assert isinstance(MondrianForestRegressor(), river.base.MiniBatchRegressor)
    assert isinstance(MondrianForestClassifier(), river.base.MiniBatchClassifier)
    model = MondrianForestRegressor(5, lifetime=2.0, min_samples_split=3, seed=1)
    assert model.clone()._get_params() == model._get_params()
    assert model._get_params()["lifetime"] == 2.0


def test_import_mondrian_learn_does_not_import_river() -> None:
    code = "import sys, mondrian_learn; assert 'river' not in sys.modules, 'river imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_parameters_and_returns_are_documented(cls: type) -> None:
    from numpydoc import validate as numpydoc_validate

    names = [cls.__name__] + [
        f"{cls.__name__}.{name}"
        for name, method in vars(cls).items()
        if not name.startswith("_") and callable(method)
    ]
    for name in names:
        errors = numpydoc_validate.validate(f"mondrian_learn.river.{name}")["errors"]
        codes = {"PR01", "PR02", "PR07", "RT01", "RT03"}  # as tests/test_docstrings.py
        assert not [error for error in errors if error[0] in codes], (name, errors)


def test_docstring_examples_run() -> None:
    failures, attempted = doctest.testmod(ml_river, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0


def test_regressor_beats_the_running_mean() -> None:
    # Friedman #1 (noise variance 1): the running mean's MAE is about 4.0 on 1,000 rows, the
    # forest's about 3.4; a forest no better than 0.9 × the mean fails.
    forest = evaluate.progressive_val_score(
        friedman(1000), MondrianForestRegressor(seed=0), metrics.MAE()
    )
    mean = evaluate.progressive_val_score(
        friedman(1000), dummy.StatisticRegressor(stats.Mean()), metrics.MAE()
    )
    assert forest.get() < 0.9 * mean.get()


def test_regressor_in_a_pipeline_with_a_scaler() -> None:
    # TrumpApproval's features span very different ranges: scaled, the forest's MAE is about
    # a third of the running mean's (0.52 against 1.57).
    model = preprocessing.MinMaxScaler() | MondrianForestRegressor(seed=0)
    forest = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    mean = evaluate.progressive_val_score(
        datasets.TrumpApproval(), dummy.StatisticRegressor(stats.Mean()), metrics.MAE()
    )
    assert forest.get() < 0.5 * mean.get()
    model = preprocessing.StandardScaler() | MondrianForestRegressor(seed=0)
    forest = evaluate.progressive_val_score(friedman(300), model, metrics.MAE())
    assert math.isfinite(forest.get())


def test_classifier_beats_the_majority_class() -> None:
    # Phishing (1,250 rows, 55 % majority class): the forest's progressive accuracy is about
    # 0.91, AMF's 0.88.
    forest = evaluate.progressive_val_score(
        datasets.Phishing(), MondrianForestClassifier(seed=0), metrics.Accuracy()
    )
    prior = evaluate.progressive_val_score(
        datasets.Phishing(), dummy.PriorClassifier(), metrics.Accuracy()
    )
    assert forest.get() > prior.get() + 0.25


def test_classifier_on_agrawal_in_a_pipeline() -> None:
    # Agrawal's function 0 (64 % majority class on these rows); scaled, about 0.74 accuracy.
    rows = list(datasets.synth.Agrawal(classification_function=0, seed=1).take(500))
    model = preprocessing.StandardScaler() | MondrianForestClassifier(seed=0)
    forest = evaluate.progressive_val_score(rows, model, metrics.Accuracy())
    prior = evaluate.progressive_val_score(rows, dummy.PriorClassifier(), metrics.Accuracy())
    assert forest.get() > prior.get() + 0.05


def test_interval_coverage() -> None:
    # Progressive coverage of the 90 % interval over 500 rows: about 0.93 here. A binomial
    # proportion of 500 at 0.9 has standard deviation 0.013; the band [0.85, 0.98] fails an
    # interval too narrow (the mean alone) or too wide (everything inside).
    model, inside = MondrianForestRegressor(seed=0), []
    for i, (x, y) in enumerate(friedman(600, seed=1)):
        if i >= 100:
            low, high = model.predict_interval_one(x, confidence=0.9)
            std = model.predict_std_one(x)
            assert low < model.predict_one(x) < high and std > 0
            inside.append(low <= y <= high)
        model.learn_one(x, y)
    assert 0.85 <= np.mean(inside) <= 0.98


def test_before_any_learn() -> None:
    regressor, classifier = MondrianForestRegressor(), MondrianForestClassifier()
    assert regressor.predict_one({"a": 1.0}) == 0.0
    assert regressor.predict_std_one({"a": 1.0}) == math.inf
    assert regressor.predict_interval_one({"a": 1.0}) == (-math.inf, math.inf)
    assert classifier.predict_proba_one({"a": 1.0}) == {}
    assert classifier.predict_one({"a": 1.0}) is None
    classifier.learn_one({"a": 1.0}, "only")
    assert classifier.predict_proba_one({"a": 5.0}) == {"only": 1.0}
    assert classifier.predict_one({}) == "only"


def test_missing_keys_are_imputed_and_new_keys_ignored() -> None:
    rows = friedman(200)
    model = MondrianForestRegressor(seed=0)
    for x, y in rows:
        model.learn_one(x, y)
    names = sorted(rows[0][0])
    means = {k: float(np.mean([x[k] for x, _ in rows])) for k in names}
    x = dict(rows[0][0])
    partial = {k: v for k, v in x.items() if k not in (3, 4)}
    imputed = {**partial, 3: means[3], 4: means[4]}
    assert model.predict_one(partial) == pytest.approx(model.predict_one(imputed), abs=1e-12)
    assert model.predict_one({}) == pytest.approx(model.predict_one(means), abs=1e-12)
    assert model.predict_one({**x, "new": 1e6}) == model.predict_one(x)
    assert model.predict_one({**x, 3: None}) == model.predict_one({**x, 3: means[3]})
    assert model.predict_one({**x, 3: math.nan}) == model.predict_one({**x, 3: means[3]})
    # A row learned without feature 3 counts in the other features' means only.
    model.learn_one(partial, 0.0)
    assert model.predict_one({}) == pytest.approx(
        model.predict_one({**means, **{k: (means[k] * 200 + x[k]) / 201 for k in partial}}),
        abs=1e-12,
    )


def test_learn_many_imputes_as_learn_one_would() -> None:
    import pandas as pd

    rows = [{"a": 1.0, "b": 2.0}, {"a": 3.0}, {"b": 10.0}, {"a": 5.0, "b": 4.0}]
    targets = [1.0, 2.0, 3.0, 4.0]
    one, many = MondrianForestRegressor(seed=0), MondrianForestRegressor(seed=0)
    for x, y in zip(rows, targets):
        one.learn_one(x, y)
    many.learn_many(pd.DataFrame(rows), pd.Series(targets))
    # Both hold the means a = 3, b = 16/3; an empty row is imputed by them.
    means = {"a": 3.0, "b": 16 / 3}
    for model in (one, many):
        assert model.predict_one({}) == pytest.approx(model.predict_one(means), abs=1e-12)
    frame = pd.DataFrame([{"a": 2.0}, {"b": 1.0, "c": 9.0}, {"a": 0.5, "b": 7.0}])
    expected = [many.predict_one(x.dropna().to_dict()) for _, x in frame.iterrows()]
    assert many.predict_many(frame).tolist() == pytest.approx(expected, abs=1e-12)


def test_labels_of_any_type() -> None:
    for labels in ([False, True], [0, 1], ["no", "yes"], [("a", 1), ("b", 2)]):
        model = MondrianForestClassifier(seed=0)
        for i in range(40):
            model.learn_one({"x": i / 40}, labels[i >= 20])
        proba = model.predict_proba_one({"x": 0.9})
        assert set(proba) == set(labels) and math.isclose(sum(proba.values()), 1.0)
        assert model.predict_one({"x": 0.95}) == labels[1]
        assert model.predict_one({"x": 0.05}) == labels[0]


def test_new_class_mid_stream_refits_on_every_row() -> None:
    rng = np.random.default_rng(0)
    model = MondrianForestClassifier(seed=3)
    X = rng.uniform(size=(150, 2))
    labels = np.where(X[:, 0] > X[:, 1], "up", "down").astype(object)
    X[120:, 0] += 2.0  # a third class appears at row 120, far to the right
    labels[120:] = "far"
    for row, label in zip(X, labels):
        model.learn_one({"u": row[0], "v": row[1]}, label)
    proba = model.predict_proba_one({"u": 2.5, "v": 0.5})
    assert set(proba) == {"up", "down", "far"} and max(proba, key=proba.get) == "far"
    assert model.predict_one({"u": 0.9, "v": 0.1}) == "up"
    # Exactness: at the new class the forest is a batch fit on every row learned, with the
    # classes coded in order of appearance; later rows extend it as they would that fit.
    codes = {"down": 0, "up": 1, "far": 2}
    reference = mondrian_learn.MondrianForestClassifier(n_estimators=10, random_state=3)
    y = np.array([codes[label] for label in labels])
    reference.partial_fit(X[:121], y[:121], classes=[0, 1, 2])
    for i in range(121, 150):
        reference.partial_fit(X[i : i + 1], y[i : i + 1])
    test = rng.uniform(size=(20, 2)) * [3.0, 1.0]
    expected = reference.predict_proba(test)
    order = [codes[label] for label in model.predict_proba_one({"u": 0.0, "v": 0.0})]
    for point, row in zip(test, expected):
        proba = model.predict_proba_one({"u": point[0], "v": point[1]})
        assert list(proba.values()) == pytest.approx(row[order], abs=1e-12)


def test_new_class_in_learn_many() -> None:
    import pandas as pd

    model = MondrianForestClassifier(seed=0)
    model.learn_many(pd.DataFrame({"x": [0.1, 0.2, 0.8]}), pd.Series(["a", "a", "b"]))
    model.learn_many(pd.DataFrame({"x": [5.0, 5.1]}), pd.Series(["c", "c"]))
    frame = pd.DataFrame({"x": [0.1, 5.05]})
    proba = model.predict_proba_many(frame)
    assert list(proba.columns) == ["a", "b", "c"]
    assert proba.sum(axis=1).tolist() == pytest.approx([1.0, 1.0])
    assert model.predict_many(frame).tolist()[1] == "c"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_seed_fixes_the_stream(cls: type) -> None:
    data = list(datasets.Phishing().take(120))
    if cls is MondrianForestRegressor:
        data = [(x, float(y)) for x, y in data]
    a, b, c = cls(seed=7), cls(seed=7), cls(seed=8)
    infer = "predict_one" if cls is MondrianForestRegressor else "predict_proba_one"
    differ = False
    for x, y in data:
        pa, pb, pc = (getattr(m, infer)(x) for m in (a, b, c))
        assert pa == pb
        differ |= pa != pc
        for m in (a, b, c):
            m.learn_one(x, y)
    assert differ


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pickle_round_trip(cls: type) -> None:
    data = list(datasets.Phishing().take(200))
    if cls is MondrianForestRegressor:
        data = [(x, float(y)) for x, y in data]
    infer = "predict_one" if cls is MondrianForestRegressor else "predict_proba_one"
    model = cls(seed=0)
    for x, y in data[:100]:
        model.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(model))
    for x, y in data[100:]:
        assert getattr(copy, infer)(x) == getattr(model, infer)(x)
        model.learn_one(x, y)
        copy.learn_one(x, y)


def test_bad_values_raise_clear_errors() -> None:
    model = MondrianForestRegressor(seed=0)
    model.learn_one({"a": 1.0, "colour": 0.0}, 1.0)
    with pytest.raises(ValueError, match="feature 'colour' is 'red', not a number"):
        model.learn_one({"a": 1.0, "colour": "red"}, 1.0)
    with pytest.raises(ValueError, match="confidence"):
        model.predict_interval_one({"a": 1.0}, confidence=1.5)
    # A failed first learn_one leaves the model untrained.
    fresh = MondrianForestRegressor()
    with pytest.raises(ValueError):
        fresh.learn_one({"a": "red"}, 1.0)
    assert fresh.predict_one({"a": 1.0}) == 0.0
    fresh.learn_one({"b": 2.0}, 1.0)
    assert fresh.predict_one({"b": 2.0}) == pytest.approx(1.0)


def test_feature_names_of_mixed_types() -> None:
    model = MondrianForestRegressor(seed=0)
    for i, j in itertools.product(range(10), range(10)):
        model.learn_one({1: i / 10, "b": j / 10}, float(i))
    assert model.predict_one({"b": 0.5, 1: 0.95}) > model.predict_one({1: 0.05, "b": 0.5})
