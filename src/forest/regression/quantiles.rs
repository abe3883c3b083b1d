//! Quantiles of a regression forest's predictive mixture (the equal-weight mixture over trees
//! of each tree's branch-off mixture, `mixture`): safeguarded Halley steps on the mixture CDF.

use super::mixture::Component;

/// Φ, the standard normal CDF.
#[inline]
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Φ⁻¹(p) for 0 < p < 1 to about 1e-9 relative (Acklam's rational approximation): only a
/// starting point for the Halley iteration below, which does not depend on its accuracy.
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        let t = (-2.0 * q.ln()).sqrt();
        (((((C[0] * t + C[1]) * t + C[2]) * t + C[3]) * t + C[4]) * t + C[5])
            / ((((D[0] * t + D[1]) * t + D[2]) * t + D[3]) * t + 1.0)
    };
    if p < 0.02425 {
        tail(p)
    } else if p > 1.0 - 0.02425 {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Beyond this many standard deviations a component's CDF is 0 or 1 and its density 0 in
/// double precision (Φ(−9) ≈ 1e-19), so it is not evaluated.
const NEGLIGIBLE_Z: f64 = 9.0;

/// The quantiles at `levels` (each in (0, 1), any order) of the equal-weight mixture over
/// `n_trees` trees of `comps`: the roots of F(y) = q, F the mixture CDF, by Halley steps
/// (F's first two derivatives cost one more sum) safeguarded by bisection on a bracket where
/// F crosses q. Exact to about 1e-12 relative.
///
/// The levels are solved in increasing order, each root bracketing the next from below (F is
/// increasing). The first starts from the quantile of the Gaussian with the mixture's mean and
/// variance, each next one from a Newton step off the root before it, so a level takes two or
/// three CDF evaluations.
pub fn mixture_quantiles(comps: &[Component], n_trees: usize, levels: &[f64]) -> Vec<f64> {
    let m = n_trees as f64;
    // (weight, mean, 1/sd) of the components that carry weight.
    let parts: Vec<(f64, f64, f64)> = (comps.iter())
        .filter(|c| c.weight > 0.0)
        .map(|c| (c.weight, c.mean, 1.0 / c.var.sqrt()))
        .collect();
    // F(y), F'(y) and F''(y).
    let cdf = |y: f64| -> (f64, f64, f64) {
        let (mut f, mut pdf, mut slope) = (0.0, 0.0, 0.0);
        for &(w, mean, inv_sd) in &parts {
            let z = (y - mean) * inv_sd;
            if z > NEGLIGIBLE_Z {
                f += w;
            } else if z >= -NEGLIGIBLE_Z {
                f += w * normal_cdf(z);
                let density = w * inv_sd * (-0.5 * z * z).exp();
                pdf += density;
                slope -= density * z * inv_sd;
            }
        }
        let norm = m * (2.0 * std::f64::consts::PI).sqrt();
        (f / m, pdf / norm, slope / norm)
    };
    // Φ(±40) is 0 and 1 in double precision, so F crosses every q inside this bracket.
    let (low, high) = parts.iter().fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), &(_, mean, inv_sd)| (lo.min(mean - 40.0 / inv_sd), hi.max(mean + 40.0 / inv_sd)),
    );
    let centre = parts.iter().map(|&(w, mean, _)| w * mean).sum::<f64>() / m;
    let second = (parts.iter())
        .map(|&(w, mean, inv_sd)| w * ((mean - centre).powi(2) + 1.0 / (inv_sd * inv_sd)))
        .sum::<f64>()
        / m;
    let sd = second.max(0.0).sqrt();
    let narrowest = parts
        .iter()
        .map(|&(_, _, inv_sd)| 1.0 / inv_sd)
        .fold(f64::INFINITY, f64::min);
    let mut order: Vec<usize> = (0..levels.len()).collect();
    order.sort_by(|&a, &b| levels[a].total_cmp(&levels[b]));
    let mut out = vec![f64::NAN; levels.len()];
    let mut floor = low;
    // (level, root, density there) of the level solved last.
    let mut previous: Option<(f64, f64, f64)> = None;
    for k in order {
        let q = levels[k];
        let (mut lo, mut hi) = (floor, high);
        let guess = match previous {
            Some((q0, y0, pdf0)) if pdf0 > 0.0 => y0 + (q - q0) / pdf0,
            _ => centre + sd * normal_quantile(q),
        };
        let mut y = if guess.is_finite() {
            guess.clamp(lo, hi)
        } else {
            0.5 * (lo + hi)
        };
        let mut density = 0.0;
        for _ in 0..200 {
            let (f, pdf, slope) = cdf(y);
            density = pdf;
            if f < q {
                lo = y;
            } else {
                hi = y;
            }
            if hi - lo <= 1e-13 * (1.0 + y.abs()) || f == q {
                break;
            }
            let g = f - q;
            let halley = 2.0 * pdf * pdf - g * slope;
            let step = if halley > 0.0 {
                2.0 * g * pdf / halley
            } else {
                g / pdf
            };
            let next = y - step;
            // Cubic convergence: after a step this small y is exact to rounding (its error is
            // of the order of the step cubed over the narrowest component's variance; a step
            // small against y alone is not enough, as a narrow component's steep CDF takes
            // short steps far from the root). Tested before the bracket, which a step below
            // y's rounding unit leaves.
            if pdf > 0.0 && step.abs() <= (1e-4 * narrowest).max(1e-14 * (1.0 + y.abs())) {
                y = next.clamp(lo, hi);
                break;
            }
            if pdf > 0.0 && next > lo && next < hi {
                y = next;
            } else {
                y = 0.5 * (lo + hi);
            }
        }
        out[k] = y;
        floor = lo.min(y);
        previous = Some((q, y, density));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantile by plain bisection of the mixture CDF (the reference).
    fn bisection(comps: &[Component], m: usize, q: f64) -> f64 {
        let f = |y: f64| {
            comps
                .iter()
                .map(|c| c.weight * normal_cdf((y - c.mean) / c.var.sqrt()))
                .sum::<f64>()
                / m as f64
        };
        let (mut lo, mut hi) = (-1e3, 1e3);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn quantiles_match_bisection_in_any_order() {
        // Two trees: a skewed, a bimodal and a near-degenerate mixture.
        let comps = [
            Component {
                weight: 0.7,
                mean: 0.0,
                var: 1.0,
            },
            Component {
                weight: 0.3,
                mean: 5.0,
                var: 0.01,
            },
            Component {
                weight: 0.5,
                mean: -3.0,
                var: 4.0,
            },
            Component {
                weight: 0.5,
                mean: 2.0,
                var: 1e-8,
            },
            Component {
                weight: 0.0,
                mean: 1e6,
                var: 1.0,
            },
        ];
        let levels = [
            0.95, 0.05, 0.5, 0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.001, 0.999,
        ];
        let fast = mixture_quantiles(&comps, 2, &levels);
        for (q, y) in levels.iter().zip(&fast) {
            let reference = bisection(&comps, 2, *q);
            assert!(
                (y - reference).abs() <= 1e-12 * (1.0 + reference.abs()),
                "{q}: {y} vs {reference}"
            );
        }
    }

    #[test]
    fn narrow_components_far_from_zero_reach_the_root() {
        // Steep CDF steps: small Halley steps far from the root must not stop the search.
        let comps: Vec<Component> = [1e6, 1e6 + 0.2, 1e6 + 0.4]
            .iter()
            .map(|&mean| Component {
                weight: 1.0,
                mean,
                var: 9e-10,
            })
            .collect();
        let levels = [0.05, 0.2, 0.45, 0.5, 0.72, 0.9];
        let fast = mixture_quantiles(&comps, 3, &levels);
        for (q, y) in levels.iter().zip(&fast) {
            let f = comps
                .iter()
                .map(|c| normal_cdf((y - c.mean) / c.var.sqrt()))
                .sum::<f64>()
                / 3.0;
            assert!((f - q).abs() < 1e-5, "{q}: F({y}) = {f}");
        }
    }

    #[test]
    fn normal_quantile_inverts_the_cdf() {
        for p in [1e-10, 0.01, 0.2, 0.5, 0.77, 0.99, 1.0 - 1e-10] {
            assert!((normal_cdf(normal_quantile(p)) - p).abs() < 1e-8 * p.min(1.0 - p) + 1e-15);
        }
    }
}
