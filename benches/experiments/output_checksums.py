"""Checksums of a fixed set of outputs of every model, to prove a restructuring changed nothing.

Records (``--record FILE``) or compares (``--compare FILE``) the SHA-256 of the exact bytes of
each output: forest fit/predict/std/intervals/log densities/apply/tree arrays/node posteriors
(batch and online, exact and fast posterior), Mondrian kernel features, ridge (batch and
online), the lifetime path (three solvers), baselines, partition labels/products/solves for
every sampler, GP/kernel PCA/SVC outputs and a Bayesian-optimisation run; for seeds 0 and 1
and ``n_jobs`` 1 and 2.

The names the package used before and after the "one Mondrian core" restructuring are mapped
by :func:`build`, :func:`interval`, :func:`prior`, :func:`baselines_module` and
:func:`kernel_cv_path`, so the same script runs on both sides.

Run: ``python benches/experiments/output_checksums.py --compare benches/output_checksums.json``
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from typing import Any

import numpy as np
from _common import experiment_parser

import mondrian_learn as ml
from mondrian_learn import partition as part

# New parameter name -> name before the restructuring.
ALIASES = {"noise_variance": "noise_var"}

#: The forest every recorded output was computed with, the defaults before issue 15: one
#: candidate cut (T = Q = 1, label-blind trees), min_samples_split=10 and the paper's
#: heuristic hyper-parameters (a config's own values take precedence).
LABEL_BLIND = {
    "candidate_dimensions": 1,
    "candidate_locations": 1,
    "min_samples_split": 10,
    "hyperparameters": "heuristic",
}


def build(cls: type, **params: Any) -> Any:
    """``cls(**params)``, renaming parameters the class does not know to their old names and
    leaving out the issue-15 parameters where the class predates them."""
    accepted = inspect.signature(cls.__init__).parameters
    params = {k: v for k, v in params.items() if k in accepted or k not in LABEL_BLIND}
    return cls(**{(k if k in accepted else ALIASES.get(k, k)): v for k, v in params.items()})


def interval(model: Any, X: np.ndarray, miscoverage: float) -> np.ndarray:
    """The central interval at the quantile levels ``miscoverage/2`` and
    ``1 − miscoverage/2``: by ``predict_quantiles`` (new; ``predict_interval(confidence=)``
    would compute the lower level as ``(1 − confidence)/2``, one ulp away) or
    ``predict_interval(alpha=)`` (old)."""
    if hasattr(model, "predict_quantiles"):
        return model.predict_quantiles(X, [miscoverage / 2, 1 - miscoverage / 2])
    return model.predict_interval(X, alpha=miscoverage)


def prior(model: Any) -> list[tuple[str, float]]:
    """``prior_`` as sorted (name, value) pairs under the names recorded before the
    restructuring (``noise_variance`` was ``noise_var``)."""
    return sorted((ALIASES.get(k, k), v) for k, v in model.prior_.items())


def raw(cls: Any) -> Any:
    """``cls`` taking features in raw units and its arguments by position or name: issue 16
    made mapping them to the unit box the default of the kernel and partition estimators
    (``scale_features``); the checksums recorded before compare with ``scale_features=False``
    (and the ridges' former default penalty, 1e-4)."""
    parameters = inspect.signature(cls).parameters
    pinned: dict[str, Any] = {}
    if "scale_features" in parameters:
        pinned["scale_features"] = False
        if "alpha" in parameters:
            pinned["alpha"] = 1e-4

    def make(*args: Any, **kwargs: Any) -> Any:
        # Positional arguments by name: the signatures became keyword-only after the first.
        named = dict(zip(parameters, args))
        return cls(**{**named, **pinned, **kwargs})

    return make


def baselines_module() -> Any:
    """The Laplace-kernel baselines: ``mondrian_learn.kernel.baselines`` (new) or
    ``mondrian_learn.baselines`` (old)."""
    try:
        from mondrian_learn.kernel import baselines
    except ImportError:
        from mondrian_learn import baselines  # type: ignore[no-redef]
    return baselines


def kernel_cv_path(model: Any) -> dict[str, Any]:
    """The kernel ridge CV's ``path_`` as recorded before its split scores moved to
    ``cv_results_``: with ``alphas``, ``validation_mse_by_alpha`` (the splits' mean) and, with
    several splits, ``fold_validation_mse`` appended, in that order (new; old: as it is)."""
    path = dict(model.path_)
    results = getattr(model, "cv_results_", None)
    if results is None or "alphas" in path:
        return path
    path["alphas"], path["validation_mse_by_alpha"] = results["alphas"], results["mean_score"]
    if len(results["split_scores"]) > 1:
        path["fold_validation_mse"] = results["split_scores"]
    return path


def digest(value: Any) -> str:
    """SHA-256 of the exact bytes (dtype and shape included) of an array or a nested value."""
    h = hashlib.sha256()

    def feed(v: Any) -> None:
        if isinstance(v, dict):
            for key in sorted(v):
                h.update(str(key).encode())
                feed(v[key])
        elif isinstance(v, (list, tuple)):
            for item in v:
                feed(item)
        elif hasattr(v, "toarray") and hasattr(v, "indptr"):  # scipy sparse
            feed([v.data, v.indices.astype(np.int64), v.indptr.astype(np.int64), v.shape])
        else:
            a = np.asarray(v)
            if a.dtype.kind in "OU":
                h.update(repr(a.tolist()).encode())
                return
            h.update(str((a.dtype.str, a.shape)).encode())
            h.update(np.ascontiguousarray(a).tobytes())

    feed(value)
    return h.hexdigest()[:24]


def data(seed: int, n: int = 600, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 3, size=(n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.normal(size=n)
    return X, y


def forest_outputs(seed: int, n_jobs: int, out: dict[str, str]) -> None:
    X, y = data(seed)
    Xt = np.random.default_rng(seed + 100).uniform(-2, 4, size=(150, 4))
    configs = {
        "default": {},
        "finite": {"lifetime": 3.0, "min_samples_split": 2},
        "raw": {"scale_features": False, "lifetime": 2.0, "noise_variance": "within_leaf"},
        "fixed": {"prior_mean": 0.5, "gamma1": 2.0, "gamma2": 0.7, "noise_variance": 0.05},
    }
    for name, params in configs.items():
        for posterior in ("exact", "fast"):
            if posterior == "fast" and name not in ("default", "finite"):
                continue
            key = f"forest/{name}/{posterior}/seed{seed}/jobs{n_jobs}"
            model = build(
                ml.MondrianForestRegressor,
                n_estimators=7,
                random_state=seed,
                n_jobs=n_jobs,
                posterior=posterior,
                **{**LABEL_BLIND, **params},
            )
            model.fit(X[:400], y[:400])
            out[f"{key}/fit/predict"] = digest(model.predict(Xt, return_std=True))
            model.partial_fit(X[400:500], y[400:500])
            for i in range(500, 520):
                model.partial_fit(X[i : i + 1], y[i : i + 1])
            model.partial_fit(X[520:], y[520:])
            mean, std = model.predict(Xt, return_std=True)
            out[f"{key}/online/mean"] = digest(mean)
            out[f"{key}/online/std"] = digest(std)
            out[f"{key}/online/interval"] = digest(interval(model, Xt[:40], 0.1))
            out[f"{key}/online/logpdf"] = digest(model.log_predictive_density(Xt, np.sin(Xt[:, 0])))
            out[f"{key}/online/apply"] = digest(model.apply(Xt))
            out[f"{key}/online/tree0"] = digest(model.tree_arrays(0))
            out[f"{key}/online/tree6"] = digest(model.tree_arrays(6))
            out[f"{key}/online/node_posterior"] = digest(model.node_posterior(3))
            out[f"{key}/online/prior"] = digest(prior(model))
            out[f"{key}/online/leaves"] = digest(model.n_leaves_)


def kernel_outputs(seed: int, n_jobs: int, out: dict[str, str]) -> None:
    X, y = data(seed, n=300, d=3)
    Xt = np.random.default_rng(seed + 7).uniform(-2, 4, size=(80, 3))
    key = f"kernel/seed{seed}/jobs{n_jobs}"
    feats = raw(ml.MondrianKernelFeatures)(
        n_estimators=20, lifetime=1.5, random_state=seed, n_jobs=n_jobs
    ).fit(X)
    out[f"{key}/features/train"] = digest(feats.transform(X))
    out[f"{key}/features/test"] = digest(feats.transform(Xt))
    ridge = raw(ml.MondrianKernelRidge)(
        n_estimators=15, lifetime=1.0, alpha=1e-2, random_state=seed, n_jobs=n_jobs
    ).fit(X[:200], y[:200])
    out[f"{key}/ridge/predict"] = digest(ridge.predict(Xt))
    out[f"{key}/ridge/evidence"] = digest(ridge.log_marginal_likelihood_value_)
    ridge.partial_fit(X[200:250], y[200:250])
    for i in range(250, 260):
        ridge.partial_fit(X[i : i + 1], y[i : i + 1])
    out[f"{key}/ridge/online/predict"] = digest(ridge.predict(Xt))
    out[f"{key}/ridge/online/columns"] = digest(ridge.n_columns_)
    out[f"{key}/ridge/online/evidence"] = digest(ridge.log_marginal_likelihood_value_)
    for solver in ("cholesky", "inverse", "gradient"):
        cv = raw(ml.MondrianKernelRidgeCV)(
            10,
            max_lifetime=4.0,
            lifetimes=25,
            solver=solver,
            random_state=seed,
            n_jobs=n_jobs,
        ).fit(X, y)
        out[f"{key}/cv/{solver}/path"] = digest(kernel_cv_path(cv))
        out[f"{key}/cv/{solver}/predict"] = digest(cv.predict(Xt))
        out[f"{key}/cv/{solver}/lifetime"] = digest(cv.lifetime_)
    ev = raw(ml.MondrianKernelRidgeCV)(
        10, max_lifetime=3.0, lifetimes=None, selection="evidence", random_state=seed
    ).fit(X, y)
    out[f"{key}/cv/evidence/path"] = digest(kernel_cv_path(ev))
    out[f"{key}/cv/evidence/predict"] = digest(ev.predict(Xt))


def baseline_outputs(seed: int, out: dict[str, str]) -> None:
    baselines = baselines_module()
    X, y = data(seed, n=200, d=3)
    Xt = X[:50] + 0.1
    key = f"baselines/seed{seed}"
    out[f"{key}/fourier"] = digest(
        raw(baselines.LaplaceFourierFeatures)(30, lifetime=1.0, random_state=seed)
        .fit(X)
        .transform(Xt)
    )
    out[f"{key}/binning"] = digest(
        raw(baselines.RandomBinningFeatures)(30, lifetime=1.0, random_state=seed)
        .fit(X)
        .transform(Xt)
    )
    out[f"{key}/laplace"] = digest(
        raw(baselines.LaplaceKernelRidge)(lifetime=1.0, alpha=1e-2).fit(X, y).predict(Xt)
    )


def partition_outputs(seed: int, n_jobs: int, out: dict[str, str]) -> None:
    from sklearn.cluster import KMeans

    X, y = data(seed, n=400, d=3)
    Xt = np.random.default_rng(seed + 3).uniform(-2, 4, size=(60, 3))
    labels = (y > np.median(y)).astype(int)
    key = f"partition/seed{seed}/jobs{n_jobs}"

    def kmeans(X: np.ndarray, y: Any, rng: np.random.Generator) -> Any:
        return KMeans(6, n_init=1, random_state=int(rng.integers(2**31))).fit(X).predict

    samplers = {
        "mondrian": part.MondrianPartitions(lifetime=1.0),
        "random_forest": part.RandomForestPartitions(),
        "fast_cluster": part.FastClusterPartitions(),
        "callable": part.CallablePartitions(kmeans),
    }
    V = np.random.default_rng(seed).normal(size=(len(X), 3))
    for name, sampler in samplers.items():
        kernel = raw(part.RandomPartitionKernel)(sampler, 25, random_state=seed, n_jobs=n_jobs)
        kernel.fit(X, y)
        k = f"{key}/{name}"
        out[f"{k}/assign"] = digest(kernel.assign(Xt))
        out[f"{k}/matmul"] = digest(kernel.matmul(V))
        out[f"{k}/cross"] = digest(kernel.cross_matmul(Xt, V))
        out[f"{k}/features"] = digest(kernel.features(Xt))
        for pre in ("partition", "jacobi", "none"):
            sol, info = kernel.solve(V, noise_variance=0.3, preconditioner=pre, tol=1e-8)
            out[f"{k}/solve/{pre}"] = digest([sol, info["iterations"]])
    for name in ("mondrian", "random_forest"):
        gp = raw(part.PartitionGPRegressor)(
            samplers[name], 30, random_state=seed, n_jobs=n_jobs, n_probes=4, lanczos_steps=20
        ).fit(X, y)
        mean, std = gp.predict(Xt, return_std=True)
        fitted = {k: getattr(gp, k) for k in ("noise_variance_", "signal_variance_", "n_iter_")}
        out[f"{key}/gp/{name}"] = digest([mean, std, sorted(fitted.items())])
    gp_fixed = raw(part.PartitionGPRegressor)(
        "fast_cluster", 30, noise_variance=0.1, signal_variance=1.0, random_state=seed
    ).fit(X, y)
    out[f"{key}/gp/fixed"] = digest(gp_fixed.predict(Xt, return_std=True))
    kpca = raw(part.PartitionKernelPCA)(3, "mondrian", 40, random_state=seed, n_jobs=n_jobs).fit(X)
    out[f"{key}/kpca"] = digest([kpca.transform(Xt), kpca.eigenvalues_])
    svc = raw(part.PartitionSVC)("mondrian", 30, random_state=seed, n_jobs=n_jobs).fit(X, labels)
    out[f"{key}/svc"] = digest(svc.decision_function(Xt))


def bayesopt_outputs(seed: int, out: dict[str, str]) -> None:
    from mondrian_learn import bayesopt

    grid = np.random.default_rng(seed).uniform(-2, 2, size=(3000, 2))
    r = bayesopt.optimize(lambda x: float(np.sum(x**2)), grid, 15, random_state=seed)
    out[f"bayesopt/grid/seed{seed}"] = digest([r.X, r.y])
    r = bayesopt.optimize_box(bayesopt.branin, [[-5, 10], [0, 15]], 12, random_state=seed)
    out[f"bayesopt/box/seed{seed}"] = digest([r.X, r.y])


def all_outputs() -> dict[str, str]:
    out: dict[str, str] = {}
    for seed in (0, 1):
        for n_jobs in (1, 2):
            forest_outputs(seed, n_jobs, out)
            kernel_outputs(seed, n_jobs, out)
            partition_outputs(seed, n_jobs, out)
        baseline_outputs(seed, out)
        bayesopt_outputs(seed, out)
    return out


def main() -> int:
    parser = experiment_parser(__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", help="write the checksums to this JSON file")
    group.add_argument("--compare", help="compare with the checksums in this JSON file")
    args = parser.parse_args()
    out = all_outputs()
    if args.record:
        with open(args.record, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
        print(f"recorded {len(out)} checksums in {args.record}")
        return 0
    with open(args.compare) as f:
        recorded = json.load(f)
    missing = sorted(set(recorded) - set(out))
    changed = sorted(k for k in recorded if k in out and out[k] != recorded[k])
    extra = sorted(set(out) - set(recorded))
    for k in changed:
        print(f"CHANGED {k}")
    for k in missing:
        print(f"MISSING {k}")
    print(
        f"{len(recorded)} recorded, {len(recorded) - len(changed) - len(missing)} identical, "
        f"{len(changed)} changed, {len(missing)} missing, {len(extra)} new"
    )
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
