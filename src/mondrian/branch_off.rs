//! The branch-off walk: where a test point may leave a Mondrian tree on data.
//!
//! Under the conditional Mondrian, a test point x that lies outside the data box of node j
//! on its path (by η_j(x), [`super::route`]) is separated from j's points by a new block born
//! between j's parent (time τ_p) and j (time τ_j; the lifetime for a leaf) with probability
//! p_j = 1 − exp(−η_j (τ_j − τ_p)), given that it did not branch off higher up. Every model's
//! predictive is a mixture over these events (AISTATS 2016 §3.3 for regression, NIPS 2014 §4
//! for classification): this module yields the events with their weights, root first; each
//! model turns an event into its own component (a Gaussian, a class distribution, a density).

use super::arena::MondrianTree;
use super::route::{branch_off_prob, RouteScratch};

/// Branching off above path node `node`: a new block born
/// at a time in (`t_parent`, `tau`) at rate `eta`, with total probability `weight` (that of
/// reaching this node times p_j).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BranchOff {
    pub node: u32,
    pub weight: f64,
    pub t_parent: f64,
    pub tau: f64,
    pub eta: f64,
}

impl BranchOff {
    /// The new block's expected birth time: τ_p + E[E | E ≤ τ − τ_p], E ~ Exp(η) (the
    /// authors' code plugs this mean into the model instead of integrating over E).
    pub fn expected_split_time(&self) -> f64 {
        self.t_parent + truncated_exponential_mean(self.eta, self.tau - self.t_parent)
    }

    /// E[exp(−γ E) | E ≤ τ − τ_p], E ~ Exp(η): the expected discount exp(−γ (t_s − τ_p)) of the
    /// new block born at t_s (NIPS 2014, supplement), η/(η+γ) · (1 − e^{−(η+γ)c}) /
    /// (1 − e^{−ηc}) with c = τ − τ_p (η/(η+γ) when c = ∞).
    pub fn expected_discount(&self, rate: f64) -> f64 {
        let (eta, c) = (self.eta, self.tau - self.t_parent);
        let ratio = eta / (eta + rate);
        if c.is_infinite() {
            return ratio;
        }
        ratio * (-(-(eta + rate) * c).exp_m1()) / (-(-eta * c).exp_m1())
    }
}

/// Calls `visit` for every node of the point's routed path (`scratch`, from
/// [`super::route::route`] or [`super::route::route_group`]) above which the point may
/// branch off, root first, and returns the leaf with the weight left for it (the weights of
/// all events and the leaf sum to 1).
pub fn branch_off_walk(
    tree: &MondrianTree,
    scratch: &RouteScratch,
    mut visit: impl FnMut(&BranchOff),
) -> (u32, f64) {
    let mut keep = 1.0;
    let mut t_parent = 0.0;
    for (&node, &eta) in scratch.path.iter().zip(&scratch.eta) {
        let tau = tree.nodes[node as usize].tau;
        let p_sep = branch_off_prob(eta, tau - t_parent);
        if p_sep > 0.0 {
            visit(&BranchOff {
                node,
                weight: keep * p_sep,
                t_parent,
                tau,
                eta,
            });
            keep *= 1.0 - p_sep;
        }
        t_parent = tau;
    }
    (*scratch.path.last().unwrap_or(&tree.root), keep)
}

/// Mean of Exp(rate) truncated to [0, c]: 1/η − c e^{−ηc} / (1 − e^{−ηc}) (1/η when c = ∞).
pub fn truncated_exponential_mean(rate: f64, c: f64) -> f64 {
    if c.is_infinite() {
        return 1.0 / rate;
    }
    let x = rate * c;
    if x < 1e-3 {
        // c (1/x − 1/expm1(x)) cancels for small x; its series c (1/2 − x/12 + x³/720)
        // is exact to double precision here (next term x⁵/30240).
        return c * (0.5 - x / 12.0 + x * x * x / 720.0);
    }
    // c e^{−x} / (1 − e^{−x}) = c / (e^{x} − 1) = c / expm1(x)
    let mean = 1.0 / rate - c / x.exp_m1();
    if mean.is_finite() {
        return mean;
    }
    // 1/η and c/expm1(x) both overflow for a rate below 1/f64::MAX (a point 1e-310 outside
    // a box, a block alive 1e308): the same mean as c (1/x − 1/expm1(x)), which stays below c.
    c * (1.0 / x - 1.0 / x.exp_m1())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mondrian::route::route;
    use crate::mondrian::TreeParams;
    use crate::testing;

    /// The events' weights and the leaf's sum to 1 for points inside, near and far from the
    /// data, with finite and infinite lifetimes; a training point never branches off (it lies
    /// in every box on its path).
    #[test]
    fn weights_sum_to_one() {
        let x = testing::uniform_points(200, 3, 4);
        for lifetime in [2.0, 30.0, f64::INFINITY] {
            let tree = testing::tree(&x, 3, &TreeParams::new(lifetime, 2), 7, 0);
            let mut scratch = RouteScratch::default();
            let training = [x[0], x[1], x[2]];
            for (k, point) in [
                training,
                [0.5, 0.5, 0.5],
                [1.2, 0.5, -0.1],
                [40.0, -30.0, 9.0],
            ]
            .iter()
            .enumerate()
            {
                route(&tree, point, f64::INFINITY, &mut scratch);
                let mut total = 0.0;
                let mut events = 0;
                let (leaf, keep) = branch_off_walk(&tree, &scratch, |e| {
                    // Beyond a node that separates for sure (infinite lifetime) the weight is 0.
                    assert!(e.weight >= 0.0 && e.expected_split_time() >= e.t_parent);
                    assert!(e.expected_split_time() <= e.tau);
                    total += e.weight;
                    events += 1;
                });
                assert_eq!(leaf, tree.leaf_of(point));
                assert!((total + keep - 1.0).abs() < 1e-12);
                assert!(if k == 0 {
                    events == 0
                } else {
                    k == 1 || events > 0
                });
            }
        }
    }

    #[test]
    fn truncated_mean_matches_its_definition() {
        // E[E | E ≤ c] by numerical integration of t η e^{−ηt} / (1 − e^{−ηc}) on [0, c].
        for (rate, c) in [(2.0, 0.3), (0.01, 5.0), (7.0, 4.0), (1e-6, 1.0)] {
            let n = 200_000;
            let h = c / n as f64;
            let (mut num, mut den) = (0.0, 0.0);
            for i in 0..n {
                let t = (i as f64 + 0.5) * h;
                let w = (-rate * t).exp();
                num += t * w;
                den += w;
            }
            let expected = num / den;
            assert!((truncated_exponential_mean(rate, c) - expected).abs() < 1e-8 * c);
        }
        assert_eq!(truncated_exponential_mean(4.0, f64::INFINITY), 0.25);
        // A rate whose inverse overflows (found by the property tests: NaN predictions for a
        // point 1e-310 outside a leaf alive 1.4e308): finite, in (0, c), and equal to the
        // scale-free form of the same mean, c · m(x)/x with x = ηc.
        let (rate, c) = (1e-310, 1.4e308);
        let x = rate * c;
        let mean = truncated_exponential_mean(rate, c);
        assert!(mean.is_finite() && mean > 0.0 && mean < c);
        let scaled = truncated_exponential_mean(x, 1.0) * c;
        assert!((mean - scaled).abs() <= 1e-12 * scaled);
    }
}
