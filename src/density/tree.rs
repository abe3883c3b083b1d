//! One density tree: a Mondrian process on the forest's box, sampled in full (empty regions
//! too), and the training weight that fell in each node.
//!
//! Each block draws its split time, dimension and location from its own stream, keyed by its
//! position in the tree (the root's key, then a hash per step down), not from one stream in
//! traversal order: the tree sampled with lifetime λ is then exactly the tree sampled with
//! Λ > λ pruned at λ, which is what makes the lifetime path equal refits.

use crate::error::{Error, Result};
use crate::rng::{exponential, next_u64, tree_rng, uniform, weighted_index};
use serde::{Deserialize, Serialize};

/// No node: the children of a leaf.
pub(super) const NONE: u32 = u32::MAX;

/// A node of a density tree: its cut (dimension, location, time τ) and children, or a leaf
/// (τ = ∞).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    pub dim: u32,
    pub threshold: f64,
    pub tau: f64,
    pub left: u32,
    pub right: u32,
}

/// The stream key of a block's child (`side` 0: lower, 1: upper).
fn child_key(key: u64, side: u64) -> u64 {
    next_u64(&mut tree_rng(key, side + 1))
}

/// One Mondrian tree on the forest's box (nodes parents first) and the training weight that
/// fell in each node.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DensityTree {
    pub nodes: Vec<Cut>,
    pub counts: Vec<f64>,
}

/// A block being split while a tree is sampled: its node, stream key, birth time and box.
struct Pending {
    node: u32,
    key: u64,
    time: f64,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl DensityTree {
    /// A Mondrian process with lifetime `lifetime` on `[lower, upper]` drawn from the streams
    /// of `seed` (module docs), or an error once it holds more than `max_nodes` nodes.
    pub(super) fn sample(
        lower: &[f64],
        upper: &[f64],
        lifetime: f64,
        max_nodes: usize,
        seed: u64,
    ) -> Result<Self> {
        let leaf = Cut {
            dim: NONE,
            threshold: 0.0,
            tau: f64::INFINITY,
            left: NONE,
            right: NONE,
        };
        let mut nodes = vec![leaf];
        let mut stack = vec![Pending {
            node: 0,
            key: 0,
            time: 0.0,
            lower: lower.to_vec(),
            upper: upper.to_vec(),
        }];
        while let Some(block) = stack.pop() {
            let extents = || block.lower.iter().zip(&block.upper).map(|(l, u)| u - l);
            let linear: f64 = extents().sum();
            if linear <= 0.0 {
                continue;
            }
            let rng = &mut tree_rng(seed, block.key);
            let time = block.time + exponential(rng, linear);
            if time > lifetime {
                continue;
            }
            if nodes.len() + 2 > max_nodes {
                return Err(Error::InvalidParameter {
                    name: "lifetime",
                    reason: format!(
                        "a tree outgrew {max_nodes} nodes (the budget for the expected \
                         Π(1 + λ r_d) cells): lower lifetime"
                    ),
                });
            }
            let dim = weighted_index(rng, extents(), linear);
            let (a, b) = (block.lower[dim], block.upper[dim]);
            let threshold = loop {
                let c = a + uniform(rng) * (b - a);
                if c > a && c < b {
                    break c;
                }
            };
            let (left, right) = (nodes.len() as u32, nodes.len() as u32 + 1);
            nodes.extend([leaf, leaf]);
            nodes[block.node as usize] = Cut {
                dim: dim as u32,
                threshold,
                tau: time,
                left,
                right,
            };
            let mut upper_left = block.upper.clone();
            upper_left[dim] = threshold;
            let mut lower_right = block.lower.clone();
            lower_right[dim] = threshold;
            stack.push(Pending {
                node: right,
                key: child_key(block.key, 1),
                time,
                lower: lower_right,
                upper: block.upper,
            });
            stack.push(Pending {
                node: left,
                key: child_key(block.key, 0),
                time,
                lower: block.lower,
                upper: upper_left,
            });
        }
        let counts = vec![0.0; nodes.len()];
        Ok(Self { nodes, counts })
    }

    /// Adds weight `weight` to every node on the path of `x` (inside the box).
    pub(super) fn add(&mut self, x: &[f64], weight: f64) {
        let mut j = 0usize;
        loop {
            self.counts[j] += weight;
            let cut = self.nodes[j];
            if cut.dim == NONE {
                return;
            }
            j = if x[cut.dim as usize] <= cut.threshold {
                cut.left
            } else {
                cut.right
            } as usize;
        }
    }
}

/// See [`DensityForest::is_consistent`].
pub(super) fn tree_is_consistent(
    tree: &DensityTree,
    lower: &[f64],
    upper: &[f64],
    lifetime: f64,
) -> bool {
    let n = tree.nodes.len();
    if n == 0 || tree.counts.len() != n || tree.counts.iter().any(|c| !(c.is_finite() && *c >= 0.0))
    {
        return false;
    }
    // Every node but the root is the child of exactly one earlier node, and its cut lies
    // strictly inside its block.
    let mut seen = vec![false; n];
    seen[0] = true;
    let mut bounds: Vec<Option<Vec<(f64, f64)>>> = vec![None; n];
    bounds[0] = Some(lower.iter().copied().zip(upper.iter().copied()).collect());
    // Birth times: 0 at the root, the parent's cut time below; cut times increase down the
    // tree and stay within the lifetime, leaves have none (∞).
    let mut birth = vec![0.0; n];
    for j in 0..n {
        let cut = tree.nodes[j];
        let Some(here) = bounds[j].take() else {
            return false;
        };
        if cut.dim == NONE {
            if cut.left != NONE || cut.right != NONE || cut.tau != f64::INFINITY {
                return false;
            }
            continue;
        }
        let (dim, l, r) = (cut.dim as usize, cut.left as usize, cut.right as usize);
        let valid = dim < lower.len()
            && l > j
            && r > j
            && l < n
            && r < n
            && l != r
            && !seen[l]
            && !seen[r]
            && here[dim].0 < cut.threshold
            && cut.threshold < here[dim].1
            && cut.tau > birth[j]
            && cut.tau <= lifetime;
        if !valid {
            return false;
        }
        let total = tree.counts[l] + tree.counts[r];
        if (total - tree.counts[j]).abs() > 1e-9 * tree.counts[j].max(1.0) {
            return false;
        }
        (seen[l], seen[r]) = (true, true);
        (birth[l], birth[r]) = (cut.tau, cut.tau);
        let (mut a, mut b) = (here.clone(), here);
        a[dim].1 = cut.threshold;
        b[dim].0 = cut.threshold;
        (bounds[l], bounds[r]) = (Some(a), Some(b));
    }
    seen.iter().all(|&s| s)
}
