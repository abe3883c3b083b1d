//! Mondrian partitions: partition ρ is the set of leaves of a Mondrian tree with lifetime λ
//! sampled on the training points (`min_samples_split = 1`, stream `tree_rng(seed, ρ)`), so
//! the kernel estimates `exp(−λ ‖a − b‖₁)` (Balog et al. 2016, Prop. 1).
//!
//! Only what assigning new points needs is kept per tree: cuts, split times and data boxes,
//! and each leaf's cluster id; the trees' per-leaf lists of training points are dropped once
//! the labels are written, so m trees of N points do not stay in memory.
//!
//! New points follow the conditional Mondrian (Balog's report, Thm 1.14): given the tree
//! restricted to the training points, a new point x routes to leaf ℓ by the cuts and shares
//! ℓ's cell unless a cut born along its path separates it, which happens with probability
//! `1 − Π_j exp(−η_j(x) (τ_j − τ_parent(j)))` ([`leaf_and_stay_prob`]). A separated point lies
//! in a cell with no training point. Integrating that extension out, the cross-kernel of
//! partition ρ is `p_stay(x) · 1[ℓ(x) = ρ(x_i)]`, whose average over ρ is an unbiased estimate
//! of `exp(−λ ‖x − x_i‖₁)` with lower variance than sampling the extension; `k(x, x) = 1`.

use super::{each_tree_consistent, AssignRule, PartitionRule, Sampling};
use crate::error::Result;
use crate::mondrian::arena::NONE;
use crate::mondrian::leaf_samples::LeafSamples;
use crate::mondrian::policy::PureMondrian;
use crate::mondrian::route::{leaf_and_stay_prob, RouteScratch};
use crate::mondrian::sample::{sample_tree, Growth, SampleScratch};
use crate::mondrian::{MondrianTree, TreeParams};
use crate::partition::kernel::{PartitionKernel, FRESH};
use crate::partition::PartitionModel;
use crate::rng::tree_rng;
use serde::{Deserialize, Serialize};

/// What assigning new points to the Mondrian partitions needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MondrianRule {
    pub lifetime: f64,
    n_features: usize,
    trees: Vec<MondrianTree>,
    /// Per tree, the cluster id of every node (`FRESH` for internal nodes).
    leaf_cluster: Vec<Vec<u32>>,
}

/// Samples `n_partitions` Mondrian partitions of the rows of `x` (row-major, `n_features`
/// wide) in parallel on `pool`; `interrupt` stops it between partitions.
pub fn sample(on: &Sampling<'_>, lifetime: f64) -> Result<PartitionModel> {
    let n = on.check()?;
    crate::training_data::check_data_box(None, on.x, on.n_features)?;
    let params = TreeParams::new(lifetime, 1);
    let growth = Growth {
        x: &on.x,
        params: &params,
        policy: &PureMondrian,
    };
    let (labels, fitted) = on.draw_partitions(n, |rho, out, scratch: &mut SampleScratch| {
        let tree = sample_tree(
            &growth,
            on.n_features,
            tree_rng(on.seed, rho as u64),
            scratch,
        );
        label_leaves(tree, out)
    })?;
    let (trees, leaf_cluster) = fitted.into_iter().unzip();
    Ok(PartitionModel {
        kernel: PartitionKernel::from_labels(labels, on.n_partitions)?,
        rule: PartitionRule::Mondrian(MondrianRule {
            lifetime,
            n_features: on.n_features,
            trees,
            leaf_cluster,
        }),
    })
}

/// Writes each training point's leaf (renumbered 0..L−1 in node order) into `out`, then
/// drops the tree's per-leaf point lists and spare capacity.
fn label_leaves(mut tree: MondrianTree, out: &mut [u32]) -> (MondrianTree, Vec<u32>) {
    let mut cluster = vec![FRESH; tree.n_nodes()];
    let mut next = 0u32;
    for j in 0..tree.n_nodes() as u32 {
        if tree.is_leaf(j) {
            cluster[j as usize] = next;
            for &i in tree
                .samples
                .of(j, tree.nodes[j as usize].n_samples as usize)
            {
                out[i as usize] = next;
            }
            next += 1;
        }
    }
    tree.samples = LeafSamples::default();
    tree.parent.shrink_to_fit();
    tree.nodes.shrink_to_fit();
    tree.bounds.shrink_to_fit();
    (tree, cluster)
}

impl MondrianRule {
    /// Number of nodes of every tree (for reporting memory).
    pub fn n_nodes(&self) -> Vec<usize> {
        self.trees.iter().map(MondrianTree::n_nodes).collect()
    }
}

impl AssignRule for MondrianRule {
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn n_partitions(&self) -> usize {
        self.trees.len()
    }

    fn weighted(&self) -> bool {
        true
    }

    /// The leaf and the stay probability (module notes).
    fn place(&self, rho: usize, row: &[f64], scratch: &mut RouteScratch) -> (u32, f64) {
        let (leaf, stay) = leaf_and_stay_prob(&self.trees[rho], row, self.lifetime, scratch);
        (self.leaf_cluster[rho][leaf as usize], stay)
    }

    /// Every tree routes (cuts in range, each child named by exactly its parent) and every
    /// leaf has a cluster.
    fn is_consistent(&self, kernel: &PartitionKernel) -> bool {
        let d = self.n_features;
        d > 0
            && each_tree_consistent(&self.trees, &self.leaf_cluster, kernel, |t, c, l| {
                tree_routes(t, d) && leaves_labelled(t, c, l)
            })
    }
}

/// The arrays a route reads have matching sizes, and following children from the root can
/// neither leave the arena nor loop.
fn tree_routes(t: &MondrianTree, d: usize) -> bool {
    let n = t.n_nodes();
    if t.n_features != d
        || n == 0
        || t.root as usize >= n
        || t.nodes.len() != n
        || t.bounds.len() != 2 * n * d
        || t.parent[t.root as usize] != NONE
    {
        return false;
    }
    t.nodes.iter().enumerate().all(|(j, c)| {
        c.dim == NONE
            || ((c.dim as usize) < d
                && (c.left as usize) < n
                && (c.right as usize) < n
                && t.parent[c.left as usize] == j as u32
                && t.parent[c.right as usize] == j as u32)
    })
}

fn leaves_labelled(t: &MondrianTree, cluster: &[u32], l: u32) -> bool {
    cluster.len() == t.n_nodes()
        && (0..t.n_nodes() as u32).all(|j| !t.is_leaf(j) || cluster[j as usize] < l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::{pool, Interrupt};
    use crate::testing::uniform_points;

    #[test]
    fn labels_are_leaves_and_new_points_route_like_training_points() {
        let (n, d) = (500, 3);
        let x = uniform_points(n, d, 1);
        let p = pool(2).expect("pool");
        let stop = Interrupt::default();
        let on = |x, pool| Sampling {
            x,
            n_features: d,
            n_partitions: 6,
            seed: 9,
            pool,
            interrupt: &stop,
        };
        let model = sample(&on(&x, &p), 2.0).expect("sample");
        assert!(model.is_consistent());
        // Training points assigned as new points land in their own cluster with weight 1.
        let rows = ndarray::ArrayView2::from_shape((n, d), &x[..]).expect("rows");
        let a = model.assign(&rows, &p).expect("assign");
        assert_eq!(a.labels, model.kernel.labels());
        assert!(a
            .weights
            .as_ref()
            .is_some_and(|w| w.iter().all(|&w| w == 1.0)));
        // Far away: separated for sure in every tree with a cut, stays only in trivial ones.
        let far = model
            .assign(&ndarray::arr2(&[[50.0, 50.0, 50.0]]).view(), &p)
            .expect("assign");
        assert!(far
            .weights
            .as_ref()
            .is_some_and(|w| w.iter().all(|&w| w < 1e-12)));
        // Same seed, other thread count: same labels.
        let p3 = pool(3).expect("pool");
        let again = sample(&on(&x, &p3), 2.0).expect("sample");
        assert_eq!(again.kernel.labels(), model.kernel.labels());
        assert!(sample(&on(&x[..4], &p), 1.0).is_err());
        stop.request();
        assert!(sample(&on(&x, &p), 2.0).is_err());
    }
}
