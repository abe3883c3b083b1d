"""Mondrian forest regression against the forests users pick instead: RMSE, NLPD, calibration.

On the eight regression sets of ``../shared/data`` (seeded 80/20 splits, ``--repeats`` of them)
prints, per set and averaged over splits: RMSE, NLPD (negative mean log predictive density),
the mean pinball loss over the quantiles 0.05, 0.10, …, 0.95 and the worst coverage error
(observed − nominal coverage of the central intervals at 10 %, 20 %, …, 90 %) of

* ``MF`` — ``MondrianForestRegressor`` with the package defaults, and any ``--variant``
  ``name:param=value,param=value`` (values are Python literals);
* ``RF`` / ``ET`` — scikit-learn ``RandomForestRegressor`` / ``ExtraTreesRegressor`` (100
  trees), Gaussian predictive with the across-tree standard deviation (floored at 1e-9 × sd(y)
  where all trees agree, which the issue's table left blank);
* ``QRF`` — ``quantile_forest.RandomForestQuantileRegressor`` (100 trees): pinball loss and
  coverage from its quantiles (a quantile forest has no density, so no NLPD);
* ``NGB`` — ``ngboost.NGBRegressor()`` with its defaults (Normal);
* with ``--conformal``: split-conformal intervals at 50/80/90/95 % — ours
  (``conformalize`` on a quarter of the training rows, the forest fitted on the rest:
  m ± q̂ σ) against the quantile forest's conformalised quantiles (CQR, Romano, Patterson &
  Candès 2019: the same rows, the score max(q_lo − y, y − q_hi) per level): coverage and mean
  width on the test rows.

Peers' results are cached in ``--cache`` (per set, split and model), so tuning runs only fit
the Mondrian variants. The summary gives each model's RMSE ratio to RF per set and on average,
on how many sets its NLPD beats each peer's, and on how many its intervals are calibrated:
mean |coverage error| over 10…90 % ≤ 0.05 (and, stricter, every level within ±0.05). Sets
whose targets are all integers are flagged: there a likelihood can spike (σ² → 0 on repeated
values) and an NLPD "win" may be an artefact.

Usage::

    python benches/experiments/forest_regression_benchmark.py --repeats 5
    python benches/experiments/forest_regression_benchmark.py --repeats 2 --models MF \\
        --variant "blind:candidate_dimensions=1,candidate_locations=1"
"""

from __future__ import annotations

import ast
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    DEFAULT_DATA,
    REGRESSION_SETS,
    experiment_parser,
    header,
    import_mondrian_forest_regressor,
    load_regression,
    rmse,
)
from scipy.stats import norm

from mondrian_learn.calibration import LEVELS, gaussian_nlpd

QUANTILES = np.round(np.arange(0.05, 0.951, 0.05), 2)
CONFORMAL_LEVELS = (0.5, 0.8, 0.9, 0.95)


def conformal_split(data: tuple[np.ndarray, ...], seed: int) -> tuple[np.ndarray, ...]:
    """The training rows cut into a fitting part (3/4) and a calibration part (1/4)."""
    X, y = data[0], data[1]
    order = np.random.default_rng(seed).permutation(len(y))
    cut = (3 * len(y)) // 4
    fit, cal = order[:cut], order[cut:]
    return X[fit], y[fit], X[cal], y[cal]


def interval_scores(y: np.ndarray, bounds: dict[float, np.ndarray]) -> dict[str, list[float]]:
    """Coverage and mean width of the intervals ``bounds[c]`` (n × 2) at CONFORMAL_LEVELS."""
    cover = [float(np.mean((y >= bounds[c][:, 0]) & (y <= bounds[c][:, 1]))) for c in bounds]
    width = [float(np.mean(bounds[c][:, 1] - bounds[c][:, 0])) for c in bounds]
    return {"conformal_coverage": cover, "conformal_width": width}


def run_cqr(data: tuple[np.ndarray, ...], seed: int) -> dict[str, Any]:
    """The quantile forest's quantiles conformalised on the calibration part (CQR)."""
    from quantile_forest import RandomForestQuantileRegressor

    X_fit, y_fit, X_cal, y_cal = conformal_split(data, seed)
    X_test, y_test = data[2], data[3]
    start = time.perf_counter()
    model = RandomForestQuantileRegressor(n_estimators=100, n_jobs=2, random_state=seed)
    model.fit(X_fit, y_fit)
    levels = [q for c in CONFORMAL_LEVELS for q in ((1 - c) / 2, (1 + c) / 2)]
    cal = model.predict(X_cal, quantiles=levels)
    test = model.predict(X_test, quantiles=levels)
    bounds = {}
    for k, c in enumerate(CONFORMAL_LEVELS):
        lo, hi = 2 * k, 2 * k + 1
        scores = np.sort(np.maximum(cal[:, lo] - y_cal, y_cal - cal[:, hi]))
        rank = int(np.ceil((len(scores) + 1) * c))
        q = scores[rank - 1] if rank <= len(scores) else np.inf
        bounds[c] = np.column_stack([test[:, lo] - q, test[:, hi] + q])
    out = interval_scores(y_test, bounds)
    out["seconds"] = time.perf_counter() - start
    return out


def pinball(y: np.ndarray, q: np.ndarray) -> float:
    """Mean pinball loss of the quantile predictions ``q`` (n × len(QUANTILES))."""
    diff = y[:, None] - q
    return float(np.mean(np.maximum(QUANTILES * diff, (QUANTILES - 1) * diff)))


def coverage_errors(y: np.ndarray, q: np.ndarray) -> list[float]:
    """Observed − nominal coverage of the central intervals at LEVELS, from quantiles at
    QUANTILES (the interval at level c is [q_{(1−c)/2}, q_{(1+c)/2}])."""
    index = {round(float(a), 2): i for i, a in enumerate(QUANTILES)}
    errors = []
    for c in LEVELS:
        lo, hi = index[round((1 - c) / 2, 2)], index[round((1 + c) / 2, 2)]
        errors.append(float(np.mean((y >= q[:, lo]) & (y <= q[:, hi])) - c))
    return errors


def gaussian_scores(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> dict[str, Any]:
    q = mean[:, None] + std[:, None] * norm.ppf(QUANTILES)[None, :]
    return {
        "rmse": rmse(mean, y),
        "nlpd": gaussian_nlpd(mean, std, y),
        "pinball": pinball(y, q),
        "coverage": coverage_errors(y, q),
    }


def across_trees(model: Any, X: np.ndarray, y_train: np.ndarray) -> tuple[np.ndarray, ...]:
    per_tree = np.stack([t.predict(X) for t in model.estimators_])
    return per_tree.mean(0), np.maximum(per_tree.std(0), 1e-9 * y_train.std())


def run_peer(name: str, data: tuple[np.ndarray, ...], seed: int) -> dict[str, Any]:
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    X, y, X_test, y_test = data
    start = time.perf_counter()
    if name in ("RF", "ET"):
        kind = RandomForestRegressor if name == "RF" else ExtraTreesRegressor
        model = kind(n_estimators=100, n_jobs=2, random_state=seed).fit(X, y)
        out = gaussian_scores(y_test, *across_trees(model, X_test, y))
    elif name == "QRF":
        from quantile_forest import RandomForestQuantileRegressor

        model = RandomForestQuantileRegressor(n_estimators=100, n_jobs=2, random_state=seed)
        model.fit(X, y)
        q = model.predict(X_test, quantiles=list(QUANTILES))
        mean = model.predict(X_test, quantiles="mean", aggregate_leaves_first=False)
        out = {
            "rmse": rmse(mean, y_test),
            "nlpd": None,
            "pinball": pinball(y_test, q),
            "coverage": coverage_errors(y_test, q),
        }
    elif name == "CQR":
        return run_cqr(data, seed)
    elif name == "NGB":
        from ngboost import NGBRegressor

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = NGBRegressor(verbose=False, random_state=seed).fit(X, y)
            dist = model.pred_dist(X_test)
        out = gaussian_scores(y_test, dist.params["loc"], dist.params["scale"])
    else:
        raise ValueError(f"unknown peer {name}")
    out["seconds"] = time.perf_counter() - start
    return out


def run_mondrian(
    params: dict[str, Any], data: tuple[np.ndarray, ...], seed: int, conformal: bool
) -> dict:
    regressor = import_mondrian_forest_regressor()
    X, y, X_test, y_test = data
    start = time.perf_counter()
    model = regressor(n_jobs=2, random_state=seed, **params).fit(X, y)
    fit_s = time.perf_counter() - start
    mean = model.predict(X_test)
    q_start = time.perf_counter()
    q = model.predict_quantiles(X_test, QUANTILES)
    q_s = time.perf_counter() - q_start
    out = {
        "rmse": rmse(mean, y_test),
        "nlpd": float(-np.mean(model.log_predictive_density(X_test, y_test))),
        "pinball": pinball(y_test, q),
        "coverage": coverage_errors(y_test, q),
        "seconds": time.perf_counter() - start,
        "fit_seconds": fit_s,
        "quantile_seconds": q_s,
    }
    if conformal:
        X_fit, y_fit, X_cal, y_cal = conformal_split(data, seed)
        model = regressor(n_jobs=2, random_state=seed, **params).fit(X_fit, y_fit)
        model.conformalize(X_cal, y_cal)
        bounds = {
            c: model.predict_interval(X_test, confidence=c, method="conformal")
            for c in CONFORMAL_LEVELS
        }
        out.update(interval_scores(y_test, bounds))
    return out


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        try:
            params[key.strip()] = ast.literal_eval(value.strip())
        except ValueError:
            params[key.strip()] = value.strip()
    return name, params


def mean_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("rmse", "nlpd", "pinball", "seconds", "fit_seconds", "quantile_seconds"):
        values = [r.get(key) for r in results]
        out[key] = None if values[0] is None else float(np.mean(values))
    for key in ("coverage", "conformal_coverage", "conformal_width"):
        if results[0].get(key) is not None:
            out[key] = list(np.mean([r[key] for r in results], axis=0))
    if "conformal_coverage" in results[0]:
        # the guarantee is per split: the worst split's shortfall at each level
        out["conformal_worst"] = list(np.min([r["conformal_coverage"] for r in results], axis=0))
    return out


def main() -> None:
    parser = experiment_parser(__doc__, data=True, repeats=5)
    parser.add_argument("--sets", nargs="+", default=list(REGRESSION_SETS))
    parser.add_argument("--models", nargs="+", default=["MF", "RF", "ET", "QRF", "NGB"])
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--cache", default="benches/out/regression_peers.json")
    parser.add_argument("--conformal", action="store_true")
    parser.add_argument("--plot", default=None, help="save a calibration plot here (PNG)")
    args = parser.parse_args()
    header()
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    mondrian = {"MF": {}} if "MF" in args.models else {}
    mondrian.update(parse_variant(v) for v in args.variant)
    peers = [m for m in args.models if m != "MF"]
    if args.conformal and "CQR" not in peers:
        peers.append("CQR")
    names = list(mondrian) + peers
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for data_name in args.sets:
        per_model: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
        for seed in range(args.repeats):
            data = load_regression(data_name, args.data or DEFAULT_DATA, seed=seed)
            for name, params in mondrian.items():
                per_model[name].append(run_mondrian(params, data, seed, args.conformal))
            for name in peers:
                key = f"{data_name}/{seed}/{name}"
                if key not in cache:
                    cache[key] = run_peer(name, data, seed)
                    cache_path.parent.mkdir(parents=True, exist_ok=True)
                    cache_path.write_text(json.dumps(cache))
                per_model[name].append(cache[key])
        table[data_name] = {n: mean_of(r) for n, r in per_model.items()}
        integer = bool(np.all(np.mod(data[1], 1) == 0))
        flag = ", integer targets" if integer else ""
        table[data_name]["_integer"] = integer
        print(f"\n{data_name} (mean of {args.repeats} splits{flag})")
        print(
            f"{'model':<22}{'RMSE':>12}{'NLPD':>9}{'pinball':>11}{'mean|cov|':>10}"
            f"{'max|cov|':>9}{'s':>7}{'fit s':>7}{'quant s':>8}"
        )
        for n in names:
            r = table[data_name][n]
            if r.get("coverage") is None:
                continue
            nlpd = "—" if r["nlpd"] is None else f"{r['nlpd']:.4g}"
            errors = np.abs(r["coverage"])
            fit_s = "" if r.get("fit_seconds") is None else f"{r['fit_seconds']:.1f}"
            q_s = "" if r.get("quantile_seconds") is None else f"{r['quantile_seconds']:.2f}"
            print(
                f"{n:<22}{r['rmse']:>12.5g}{nlpd:>9}{r['pinball']:>11.4g}"
                f"{errors.mean():>10.3f}{errors.max():>9.3f}{r['seconds']:>7.1f}"
                f"{fit_s:>7}{q_s:>8}"
            )
        cov = " ".join(f"{c:+.3f}" for c in table[data_name][names[0]]["coverage"])
        print(f"  {names[0]} coverage errors at 10…90 %: {cov}")
        for n in names:
            r = table[data_name][n]
            if r.get("conformal_coverage") is not None:
                cover = " ".join(f"{c:.3f}" for c in r["conformal_coverage"])
                worst = " ".join(f"{c:.3f}" for c in r["conformal_worst"])
                width = " ".join(f"{w:.4g}" for w in r["conformal_width"])
                print(
                    f"  {n} conformal at {CONFORMAL_LEVELS}: coverage {cover} (worst split "
                    f"{worst}), width {width}"
                )
    summarise(table, names, list(mondrian))
    if args.plot:
        plot_calibration(table, [n for n in names if n != "CQR"], args.plot, args.repeats)


def plot_calibration(table: dict, names: list[str], path: str, repeats: int) -> None:
    """Observed against nominal coverage of the central intervals, one panel per set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(table)
    columns = min(4, len(sets))
    rows = -(-len(sets) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, sets):
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        for model in names:
            errors = table[name][model].get("coverage")
            if errors is not None:
                observed = np.add(LEVELS, errors)
                ax.plot(LEVELS, observed, marker="o", ms=3, label=model)
        ax.set_title(name, fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    for ax in axes.flat[len(sets) :]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("observed coverage")
    for ax in axes[-1, :]:
        ax.set_xlabel("nominal coverage")
    axes.flat[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Central intervals on held-out test rows (mean of {repeats} splits)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"saved {path}")


def summarise(table: dict, names: list[str], ours: list[str]) -> None:
    print("\nRMSE / RF's RMSE per set, and summary")
    sets = list(table)
    names = [n for n in names if n != "CQR"]
    print(f"{'model':<22}" + "".join(f"{s[:9]:>10}" for s in sets) + f"{'mean':>8}{'max':>7}")
    for n in names:
        if "RF" not in names:
            break
        ratios = [table[s][n]["rmse"] / table[s]["RF"]["rmse"] for s in sets]
        print(
            f"{n:<22}"
            + "".join(f"{r:>10.3f}" for r in ratios)
            + f"{np.mean(ratios):>8.3f}{max(ratios):>7.3f}"
        )
    for n in ours:
        wins = []
        for peer in names:
            if peer in ours or table[sets[0]][peer]["nlpd"] is None:
                continue
            better = sum(table[s][n]["nlpd"] < table[s][peer]["nlpd"] for s in sets)
            wins.append(f"NLPD better than {peer} on {better}/{len(sets)}")
        if "QRF" in names:
            better = sum(table[s][n]["pinball"] < table[s]["QRF"]["pinball"] for s in sets)
            wins.append(f"pinball better than QRF on {better}/{len(sets)}")
        calibrated = sum(np.mean(np.abs(table[s][n]["coverage"])) <= 0.05 for s in sets)
        strict = sum(max(abs(c) for c in table[s][n]["coverage"]) <= 0.05 for s in sets)
        wins.append(f"calibrated (mean |err| ≤ 0.05) on {calibrated}/{len(sets)}")
        wins.append(f"every level within ±0.05 on {strict}/{len(sets)}")
        if all("CQR" in table[s] for s in sets) and "conformal_width" in table[sets[0]][n]:
            narrower = sum(
                np.mean(table[s][n]["conformal_width"])
                <= np.mean(table[s]["CQR"]["conformal_width"])
                for s in sets
            )
            short = [
                s
                for s in sets
                if min(np.subtract(table[s][n]["conformal_worst"], CONFORMAL_LEVELS)) < -0.01
            ]
            wins.append(f"conformal width ≤ CQR's on {narrower}/{len(sets)}")
            wins.append(f"conformal coverage < nominal − 0.01 on a split: {short or 'none'}")
        print(f"{n}: " + "; ".join(wins))
    for n in names:
        if table[sets[0]][n].get("coverage") is None:
            continue
        good = sum(np.mean(np.abs(table[s][n]["coverage"])) <= 0.05 for s in sets)
        print(f"  {n}: calibrated (mean |err| ≤ 0.05) on {good}/{len(sets)}")
    integer = [s for s in sets if table[s]["_integer"]]
    print(f"integer-target sets: {integer or 'none'}")


if __name__ == "__main__":
    main()
