"""Fig. 5 of the Mondrian kernel paper (Balog et al., UAI 2016): the largest kernel
approximation error max_{i,j} |k_M(x_i, x_j) − exp(−λ‖x_i − x_j‖₁)| over all pairs of 100
uniform points in [0, 1]², λ = 10, against the number M of non-zero features per point, for
Mondrian features, random binning and random Fourier features; mean ± sd over 5 repeats.

As in the authors' script (``experiment_1_laplace_kernel_approximation.py``): M Mondrian trees
or M binning grids give M non-zero features per point; Fourier features with M//2 frequencies
give 2·(M//2) (cos and sin). Each repeat draws fresh features with a new seed; within a repeat,
the Mondrian forests for the different M share their first trees (tree m is seeded by
(seed, m)), as the authors' nested sweep does. The paper sweeps M = 1..50; we go to
``--max-m`` (default 1,000) on a log grid.

Usage::

    /work/notes/quiet-bench python benches/experiments/kernel_fig5.py \\
        [--out benches/out/kernel_fig5.png]
"""

from __future__ import annotations

import numpy as np
from _common import (
    experiment_parser,
    header,
    laplace_feature_maps,
    plot_errors_against_m,
    timed,
)
from scipy.spatial.distance import cdist


def max_error(Z: object, exact: np.ndarray) -> float:
    """max |ZZᵀ − K| over all pairs (Z dense or sparse, already scaled by 1/√M)."""
    estimate = Z @ Z.T
    estimate = estimate.toarray() if hasattr(estimate, "toarray") else estimate
    return float(np.abs(estimate - exact).max())


def main() -> None:
    parser = experiment_parser(__doc__, out="benches/out/kernel_fig5.png", repeats=5, seed=0)
    parser.add_argument("--n-points", type=int, default=100)
    parser.add_argument("--lifetime", type=float, default=10.0)
    parser.add_argument("--max-m", type=int, default=1000)
    args = parser.parse_args()
    header()
    X = np.random.default_rng(args.seed).uniform(size=(args.n_points, 2))
    exact = np.exp(-args.lifetime * cdist(X, X, "cityblock"))
    grid = np.unique(np.round(np.logspace(0, np.log10(args.max_m), 16)).astype(int))
    grid = grid[grid >= 2]  # Fourier features need M >= 2 (one frequency = two features)
    lam = args.lifetime
    maps = laplace_feature_maps(lam)
    errors = {name: np.zeros((args.repeats, len(grid))) for name in maps}
    seconds = {}
    for name, make in maps.items():

        def sweep(name: str = name, make: object = make) -> None:
            for r in range(args.repeats):
                for j, m in enumerate(grid):
                    Z = make(int(m), args.seed + 1000 * (r + 1)).fit_transform(X)
                    errors[name][r, j] = max_error(Z, exact)

        seconds[name] = timed(sweep)[0]
    print(
        f"\n{args.n_points} uniform points in [0,1]², λ = {lam:g}, {args.repeats} repeats: "
        "max |k_M − k| over all pairs, mean ± sd"
    )
    print(f"{'M':>6}" + "".join(f"{name:>22}" for name in maps))
    for j, m in enumerate(grid):
        row = "".join(
            f"{errors[n][:, j].mean():>14.3f} ± {errors[n][:, j].std():.3f}" for n in maps
        )
        print(f"{m:>6}{row}")
    print("seconds per sweep: " + ", ".join(f"{n} {s:.1f}" for n, s in seconds.items()))
    for n in maps:
        reached = grid[errors[n].mean(axis=0) <= 0.1]
        first = f"M = {reached[0]}" if reached.size else f"not reached by M = {grid[-1]}"
        print(f"{n}: mean max error ≤ 0.1 first at {first}")
    print(
        "paper (Fig. 5, M = 1..50; a plot, no table): Fourier features converge slowest; the "
        "Mondrian kernel and random binning faster."
    )
    title = f"{args.n_points} uniform points in [0,1]², λ = {lam:g}"
    plot_errors_against_m(grid, errors, args.out, "max |k_M − k| over all pairs", title)


if __name__ == "__main__":
    main()
