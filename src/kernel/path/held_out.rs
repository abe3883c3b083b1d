//! Validation points along the lifetime path: each point's root-to-leaf path in every tree is
//! routed once (to the trees' final lifetime) with η at every node; as λ grows, a cursor per
//! (point, tree) moves down its path past the cuts born by λ, so the features at each
//! checkpoint cost O(1) per point and tree. The value is the conditional-Mondrian stay
//! probability of `features.rs`, with the leaf alive at λ and its remaining lifetime λ − τ_parent.

use crate::mondrian::route::{route, RouteScratch};
use crate::mondrian::MondrianTree;
use crate::points::{for_each_block, Points};

/// Routed validation points and where each stands at the current lifetime.
#[derive(Debug, Clone, Default)]
pub struct ValidationPaths {
    n_trees: usize,
    nodes: Vec<u32>,
    /// Per path entry: the node's split time (∞ for a leaf), kept beside η so the walk
    /// reads two contiguous arrays instead of the tree.
    tau: Vec<f64>,
    eta: Vec<f64>,
    /// Per (point, tree): start of its path in `nodes`/`eta` (one past the end at index + 1).
    start: Vec<usize>,
    cursor: Vec<usize>,
    /// Σ η Δτ over the path nodes already passed, and the birth time of the last cut passed.
    passed: Vec<f64>,
    t_parent: Vec<f64>,
    pub y: Vec<f64>,
}

impl ValidationPaths {
    /// Routes the rows of `x` (checked) through every tree, a block of rows at a time.
    pub fn new<P: Points + ?Sized>(trees: &[MondrianTree], x: &P, y: &[f64]) -> Self {
        let mut paths = Self {
            n_trees: trees.len(),
            y: y.to_vec(),
            ..Self::default()
        };
        let (mut scratch, d) = (RouteScratch::default(), x.n_features());
        for_each_block(x, None, |_, rows| {
            for row in rows.chunks_exact(d) {
                for tree in trees {
                    paths.start.push(paths.nodes.len());
                    route(tree, row, f64::INFINITY, &mut scratch);
                    paths.nodes.extend_from_slice(&scratch.path);
                    paths.eta.extend_from_slice(&scratch.eta);
                    paths.tau.extend(scratch.path.iter().map(|&j| {
                        if tree.is_leaf(j) {
                            f64::INFINITY
                        } else {
                            tree.tau(j)
                        }
                    }));
                }
            }
        });
        paths.start.push(paths.nodes.len());
        let k = paths.start.len() - 1;
        paths.cursor = paths.start[..k].to_vec();
        paths.passed = vec![0.0; k];
        paths.t_parent = vec![0.0; k];
        paths
    }

    /// Number of validation points.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Moves every cursor to the leaf alive at `lifetime` (never backwards: lifetimes must
    /// not decrease between calls) and returns ȳ + Σ_t stay_t · weight(t, leaf_t) / √M per point.
    pub fn predict(
        &mut self,
        lifetime: f64,
        intercept: f64,
        weight: impl Fn(usize, u32) -> f64,
    ) -> Vec<f64> {
        let scale = 1.0 / (self.n_trees as f64).sqrt();
        let mut out = vec![intercept; self.len()];
        let states = self
            .cursor
            .iter_mut()
            .zip(self.passed.iter_mut().zip(self.t_parent.iter_mut()));
        for (k, (cursor, (passed, t_parent))) in states.enumerate() {
            let mut at = *cursor;
            // Leaves have τ = ∞, so the walk stops at the leaf alive at `lifetime`.
            while self.tau[at] <= lifetime {
                *passed += self.eta[at] * (self.tau[at] - *t_parent);
                *t_parent = self.tau[at];
                at += 1;
            }
            *cursor = at;
            // Most points lie inside their path's boxes (stay probability 1): skip the exp.
            let stay = if self.eta[at] > 0.0 || *passed > 0.0 {
                (-(*passed + self.eta[at] * (lifetime - *t_parent))).exp()
            } else {
                1.0
            };
            out[k / self.n_trees] += scale * stay * weight(k % self.n_trees, self.nodes[at]);
        }
        out
    }
}
