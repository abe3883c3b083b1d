"""The lifetime path's price: the whole path on CPU (M = 50) up to the λ of best validation
error, against one ``MondrianKernelRidge.fit`` at that λ (issue goal: ≤ 3×), in one run.

First a path to ``--max-lifetime`` finds λ* (not timed). Then, each timed ``--repeats`` times
(the minimum is kept), for ``n_jobs`` 1 and 2:

* the path: sample M trees with lifetime λ* and sweep every cut from λ = 0 to λ*, recording
  training/validation error and log evidence after every cut (the paper's protocol) or at
  100 checkpoints;
* one fit: sample M trees with lifetime λ*, build ΦᵀΦ + αI, factor it, solve.

Same seed and lifetime give the same trees, so the path's last point is that fit (its
validation error is printed for both as a check).

Usage::

    flock /tmp/mondrian-bench.lock python benches/experiments/kernel_speed.py
"""

from __future__ import annotations

import numpy as np
from _common import (
    dense_path,
    experiment_parser,
    relative_error,
    relative_from_mse,
    start_cpu_experiment,
    timed,
)

from mondrian_learn import MondrianKernelRidge, _core
from mondrian_learn._validation import draw_seed


def main() -> None:
    parser = experiment_parser(__doc__, data=True, repeats=3, seed=0)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--max-lifetime", type=float, default=5e-6)
    args = parser.parse_args()
    X, y, Xv, yv = start_cpu_experiment(args.data, "val")
    m, alpha = args.trees, args.alpha

    search = _core.KernelFeatures(X, m, args.max_lifetime, args.seed, 2, m)
    path = search.path(
        y, Xv, yv, args.max_lifetime, alpha, None, None, "auto", 4096, 1e-6, 300, False, 2
    )
    errors = relative_from_mse(path["validation_mse"], yv)
    best = int(np.argmin(errors))
    lifetime = float(path["lifetimes"][best])
    print(
        f"\nCPU, M = {m}, alpha = {alpha}: best validation error {errors[best]:.3f} % at "
        f"λ* = {lifetime:.4g} (C = {path['n_features'][best]}, cut {path['n_cuts'][best]} of "
        f"{path['n_cuts'][-1]} up to Λ = {args.max_lifetime:g})"
    )

    # MondrianKernelRidge seeds the core with draw_seed(random_state): do the same.
    core_seed = draw_seed(args.seed)

    def run_path(n_jobs: int, checkpoints: int | None) -> dict:
        features = _core.KernelFeatures(X, m, lifetime, core_seed, n_jobs, m)
        return dense_path(
            features, y, lifetime, alpha, n_jobs, validation=(Xv, yv), n_checkpoints=checkpoints
        )

    print(
        f"\n{'n_jobs':>6}{'fit s':>9}{'path s (every cut)':>20}{'ratio':>7}"
        f"{'path s (100 pts)':>18}{'ratio':>7}"
    )
    for n_jobs in (1, 2):
        model = MondrianKernelRidge(
            m,
            lifetime=lifetime,
            alpha=alpha,
            scale_features=False,
            random_state=args.seed,
            n_jobs=n_jobs,
        )
        fit_s = min(timed(lambda m=model: m.fit(X, y))[0] for _ in range(args.repeats))
        every_s, every = min(
            (timed(lambda j=n_jobs: run_path(j, None)) for _ in range(args.repeats)),
            key=lambda t: t[0],
        )
        grid_s = min(timed(lambda j=n_jobs: run_path(j, 100))[0] for _ in range(args.repeats))
        print(
            f"{n_jobs:>6}{fit_s:>9.3f}{every_s:>20.3f}{every_s / fit_s:>7.2f}"
            f"{grid_s:>18.3f}{grid_s / fit_s:>7.2f}"
        )
    # The path's trees are the fit's trees (same seed and lifetime): same last point.
    last = relative_from_mse(every["validation_mse"][-1:], yv)[0]
    print(
        f"\ncheck: validation error at λ* from the path {last:.6f} %, from the fit "
        f"{relative_error(model.predict(Xv), yv):.6f} % ({every['n_cuts'][-1]} cuts, "
        f"C = {every['n_features'][-1]}; fit C = {model.n_columns_})"
    )


if __name__ == "__main__":
    main()
