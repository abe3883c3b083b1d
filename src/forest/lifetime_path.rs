//! The lifetime path of a fitted forest (Balog's report §4.1): training and validation scores
//! of the forest pruned at every lifetime λ ∈ [0, Λ], for about the cost of routing the points
//! once. The forest at λ keeps the cuts born by λ (a Mondrian tree pruned at λ is a Mondrian
//! tree with lifetime λ). Sweeping the cuts of all trees in birth-time order, a cut moves the
//! points of its block to the two children, so each point's prediction changes in O(1) per
//! (point, cut) when what a node predicts does not depend on λ nor on the nodes below it.
//!
//! That holds for the path models of `forest::regression::path` (leaf means) and
//! `forest::classification::path` (leaf frequencies smoothed towards the parent's),
//! not for the forests' hierarchical posteriors: there the leaf's prior variance or discount
//! depends on λ − τ_parent and a cut changes the posterior of every node of its tree, so the
//! path scores those simpler predictors of the pruned forests (and says so).

use crate::error::Result;
use crate::mondrian::birth_order::{cuts_in_birth_order, Checkpoints, RowOrder};
use crate::mondrian::MondrianTree;
use crate::parallel::Interrupt;
use rayon::prelude::*;
use rayon::ThreadPool;

/// Validation rows of a lifetime path: points, targets (or class indices) and optional row
/// weights.
pub type Validation<'a, Y> = (
    &'a dyn crate::points::Points,
    &'a ndarray::ArrayView1<'a, Y>,
    Option<&'a ndarray::ArrayView1<'a, f64>>,
);

/// One point set's predictions along the path: every point starts at the root of every tree.
pub trait PathState {
    /// Point `point` of tree `tree` moves from node `from` to its child `to`.
    fn moved(&mut self, point: u32, tree: usize, from: u32, to: u32);
    /// The set's two scores for its current predictions (see the model's path module).
    fn scores(&self) -> [f64; 2];
}

/// One evaluated point of the path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathPoint {
    pub lifetime: f64,
    pub n_cuts: usize,
    pub train: [f64; 2],
    /// NaN without validation data.
    pub validation: [f64; 2],
}

/// Each tree's points arranged by node (training rows and, when given, the validation
/// points whose leaves are `validation_leaves`, N_val × M row-major).
fn orders(
    trees: &[MondrianTree],
    validation_leaves: Option<&[u32]>,
    pool: &ThreadPool,
) -> Vec<(RowOrder, Option<RowOrder>)> {
    let m = trees.len();
    pool.install(|| {
        (trees.par_iter().enumerate())
            .map(|(t, tree)| {
                let held_out = validation_leaves.map(|leaves| {
                    let of_tree: Vec<u32> = leaves.iter().skip(t).step_by(m).copied().collect();
                    RowOrder::of_points(tree, &of_tree)
                });
                (RowOrder::new(tree), held_out)
            })
            .collect()
    })
}

/// Sweeps the cuts of `trees` born by `max_lifetime` in birth-time order, moving the training
/// points (`train`) and the validation points (`validation`, with their leaves in every tree)
/// to the children of every cut, and records both sets' scores at the `checkpoints`;
/// `progress(cuts_done, n_cuts)` is called at each, `interrupt` stops it between cuts.
#[allow(clippy::too_many_arguments)]
pub fn sweep<S: PathState>(
    trees: &[MondrianTree],
    mut train: S,
    mut validation: Option<(S, &[u32])>,
    max_lifetime: f64,
    checkpoints: &Checkpoints,
    pool: &ThreadPool,
    interrupt: &Interrupt,
    mut progress: impl FnMut(usize, usize) -> Result<()>,
) -> Result<Vec<PathPoint>> {
    let events = cuts_in_birth_order(trees, max_lifetime);
    let plan = checkpoints.plan(&events, max_lifetime)?;
    let last_cut = plan.last().map_or(0, |p| p.0);
    let orders = orders(trees, validation.as_ref().map(|v| v.1), pool);
    let mut points = Vec::with_capacity(plan.len());
    let mut plan_at = 0;
    for k in 0..=last_cut {
        if k > 0 {
            interrupt.check()?;
            let event = events[k - 1];
            let (t, node) = (event.tree as usize, event.node);
            let cut = trees[t].nodes[node as usize];
            let (rows, held_out) = &orders[t];
            for child in [cut.left, cut.right] {
                for &i in rows.of(child) {
                    train.moved(i, t, node, child);
                }
                if let (Some((state, _)), Some(order)) = (validation.as_mut(), held_out) {
                    for &i in order.of(child) {
                        state.moved(i, t, node, child);
                    }
                }
            }
        }
        while plan_at < plan.len() && plan[plan_at].0 == k {
            points.push(PathPoint {
                lifetime: plan[plan_at].1,
                n_cuts: k,
                train: train.scores(),
                validation: validation.as_ref().map_or([f64::NAN; 2], |v| v.0.scores()),
            });
            plan_at += 1;
            progress(k, last_cut)?;
        }
    }
    Ok(points)
}
