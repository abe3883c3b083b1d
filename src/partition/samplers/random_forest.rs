//! Random Forest partitions (Davies & Ghahramani 2014, §4.3.1): partition ρ takes tree ρ of a
//! forest fitted on (X, y), draws a depth `d ~ U{0, …, h}` with `h` that tree's height, and
//! puts each point in the cluster of its ancestor at depth `d` (its leaf when that is
//! shallower). A forest of m independently grown trees stands in for m draws of "a tree from
//! the forest". The trees arrive as scikit-learn's node arrays; points are routed as
//! scikit-learn does, comparing `float32(x[f]) <= threshold`, so a tree's leaves here are
//! exactly its `apply` leaves.

use super::{each_tree_consistent, AssignRule, PartitionRule, Sampling};
use crate::error::{Error, Result};
use crate::mondrian::route::RouteScratch;
use crate::partition::kernel::{renumber, PartitionKernel, FRESH};
use crate::partition::PartitionModel;
use crate::rng::{tree_rng, uniform};
use serde::{Deserialize, Serialize};

/// One fitted decision tree: node `j` is a leaf when `left[j] == LEAF`, else points with
/// `float32(x[feature[j]]) <= threshold[j]` go to `left[j]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecisionTree {
    left: Vec<u32>,
    right: Vec<u32>,
    feature: Vec<u32>,
    threshold: Vec<f64>,
    depth: Vec<u32>,
    height: u32,
}

const LEAF: u32 = u32::MAX;

impl DecisionTree {
    /// Builds a tree from scikit-learn's `tree_.children_left`, `children_right`, `feature`
    /// and `threshold` (−1 marks a leaf's children). Children must come after their parent and
    /// be named once, as scikit-learn's depth-first builder guarantees.
    pub fn from_arrays(
        left: &[i64],
        right: &[i64],
        feature: &[i64],
        threshold: &[f64],
        n_features: usize,
    ) -> Result<Self> {
        let n = left.len();
        let bad = |what: String| Err(Error::InvalidInput(format!("decision tree: {what}")));
        if n == 0 || right.len() != n || feature.len() != n || threshold.len() != n {
            return bad("node arrays must be non-empty and of equal length".into());
        }
        let mut tree = Self {
            left: vec![LEAF; n],
            right: vec![LEAF; n],
            feature: vec![0; n],
            threshold: threshold.to_vec(),
            depth: vec![0; n],
            height: 0,
        };
        let mut named = vec![false; n];
        for j in 0..n {
            if left[j] < 0 && right[j] < 0 {
                continue;
            }
            let child_ok = |c: i64| c > j as i64 && (c as usize) < n;
            if !child_ok(left[j]) || !child_ok(right[j]) || left[j] == right[j] {
                return bad(format!("node {j} has invalid children"));
            }
            if feature[j] < 0 || feature[j] as usize >= n_features || !threshold[j].is_finite() {
                return bad(format!(
                    "node {j} splits on an invalid feature or threshold"
                ));
            }
            for c in [left[j] as usize, right[j] as usize] {
                if std::mem::replace(&mut named[c], true) {
                    return bad(format!("node {c} has two parents"));
                }
                tree.depth[c] = tree.depth[j] + 1;
            }
            tree.left[j] = left[j] as u32;
            tree.right[j] = right[j] as u32;
            tree.feature[j] = feature[j] as u32;
        }
        tree.height = tree.depth.iter().copied().max().unwrap_or(0);
        Ok(tree)
    }

    /// The node where `x` stops when routed down at most `cut` levels.
    #[inline]
    fn node_at(&self, x: &[f64], cut: u32) -> usize {
        let mut node = 0;
        while self.left[node] != LEAF && self.depth[node] < cut {
            let f = self.feature[node] as usize;
            // scikit-learn routes float32 copies of the features.
            node = if f64::from(x[f] as f32) <= self.threshold[node] {
                self.left[node] as usize
            } else {
                self.right[node] as usize
            };
        }
        node
    }
}

/// What assigning new points to the forest partitions needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForestRule {
    n_features: usize,
    trees: Vec<DecisionTree>,
    /// Depth at which partition ρ cuts its tree.
    pub depths: Vec<u32>,
    /// Per partition, the cluster of every node (`FRESH` where no training point stops).
    node_cluster: Vec<Vec<u32>>,
}

/// One partition per tree, depths drawn from `tree_rng(seed, ρ)`, in parallel on `pool`.
pub fn sample(on: &Sampling<'_>, trees: Vec<DecisionTree>) -> Result<PartitionModel> {
    let n = on.check()?;
    if trees.len() != on.n_partitions {
        return Err(Error::InvalidInput(format!(
            "{} trees for {} partitions",
            trees.len(),
            on.n_partitions
        )));
    }
    let (labels, fitted) = on.draw_partitions(n, |rho, out, _: &mut ()| {
        let tree = &trees[rho];
        let mut rng = tree_rng(on.seed, rho as u64);
        let draw = (uniform(&mut rng) * f64::from(tree.height + 1)) as u32;
        let cut = draw.min(tree.height);
        // Stopping node per point, then ids 0..L−1 for the nodes reached, in node order.
        for (o, row) in out.iter_mut().zip(on.x.chunks_exact(on.n_features)) {
            *o = tree.node_at(row, cut) as u32;
        }
        let cluster = renumber(out, tree.left.len());
        (cut, cluster)
    })?;
    let (depths, node_cluster) = fitted.into_iter().unzip();
    Ok(PartitionModel {
        kernel: PartitionKernel::from_labels(labels, trees.len())?,
        rule: PartitionRule::RandomForest(ForestRule {
            n_features: on.n_features,
            trees,
            depths,
            node_cluster,
        }),
    })
}

impl AssignRule for ForestRule {
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn n_partitions(&self) -> usize {
        self.trees.len()
    }

    /// The cluster of the node where the row stops (`FRESH` where no training point stopped).
    fn place(&self, rho: usize, row: &[f64], _scratch: &mut RouteScratch) -> (u32, f64) {
        let node = self.trees[rho].node_at(row, self.depths[rho]);
        (self.node_cluster[rho][node], 1.0)
    }

    /// Every tree's arrays match and route inside the arena, every cluster id exists.
    fn is_consistent(&self, kernel: &PartitionKernel) -> bool {
        let d = self.n_features;
        self.depths.len() == self.trees.len()
            && each_tree_consistent(&self.trees, &self.node_cluster, kernel, |t, c, l| {
                let n = t.left.len();
                [
                    t.right.len(),
                    t.feature.len(),
                    t.threshold.len(),
                    t.depth.len(),
                    c.len(),
                ]
                .iter()
                .all(|&len| len == n)
                    && c.iter().all(|&id| id < l || id == FRESH)
                    && (0..n).all(|j| {
                        t.left[j] == LEAF
                            || ((t.left[j] as usize) < n
                                && (t.right[j] as usize) < n
                                && t.left[j] as usize > j
                                && t.right[j] as usize > j
                                && (t.feature[j] as usize) < d)
                    })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::{pool, Interrupt};

    /// x0 <= 0.5 ? (x1 <= 0.5 ? A : B) : C — nodes 0, 1 (left), 2 = A, 3 = B, 4 = C.
    fn small_tree() -> DecisionTree {
        DecisionTree::from_arrays(
            &[1, 2, -1, -1, -1],
            &[4, 3, -1, -1, -1],
            &[0, 1, -2, -2, -2],
            &[0.5, 0.5, -2.0, -2.0, -2.0],
            2,
        )
        .expect("valid")
    }

    #[test]
    fn clusters_are_ancestors_at_the_drawn_depth() {
        let tree = small_tree();
        assert_eq!(tree.height, 2);
        let pts = [0.1, 0.1, 0.1, 0.9, 0.9, 0.1, 0.9, 0.9];
        assert_eq!(tree.node_at(&pts[0..2], 2), 2);
        assert_eq!(tree.node_at(&pts[2..4], 2), 3);
        assert_eq!(tree.node_at(&pts[2..4], 1), 1);
        assert_eq!(tree.node_at(&pts[4..6], 2), 4);
        assert_eq!(tree.node_at(&pts[4..6], 0), 0);
        let p = pool(2).expect("pool");
        let trees = vec![small_tree(); 40];
        let stop = Interrupt::default();
        let on = Sampling {
            x: &pts,
            n_features: 2,
            n_partitions: 40,
            seed: 5,
            pool: &p,
            interrupt: &stop,
        };
        let model = sample(&on, trees).expect("sample");
        assert!(model.is_consistent());
        let (kernel, PartitionRule::RandomForest(rule)) = (&model.kernel, &model.rule) else {
            panic!("a forest rule");
        };
        for (rho, &cut) in rule.depths.iter().enumerate() {
            let l = &kernel.labels()[rho * 4..rho * 4 + 4];
            let want: [u32; 4] = match cut {
                0 => [0, 0, 0, 0],
                1 => [0, 0, 1, 1],
                _ => [0, 1, 2, 2],
            };
            assert_eq!(l, want);
        }
        // All three depths occur in 40 draws (each has probability 1/3).
        for cut in 0..3 {
            assert!(rule.depths.contains(&cut));
        }
        assert_eq!(
            model
                .assign(
                    &ndarray::ArrayView2::from_shape((4, 2), &pts[..]).expect("rows"),
                    &p
                )
                .expect("assign")
                .labels,
            kernel.labels()
        );
    }

    #[test]
    fn rejects_malformed_trees() {
        assert!(DecisionTree::from_arrays(&[1, -1], &[1, -1], &[0, -2], &[0.5, 0.0], 1).is_err());
        assert!(DecisionTree::from_arrays(&[0], &[0], &[0], &[0.5], 1).is_err());
        assert!(
            DecisionTree::from_arrays(&[1, -1, -1], &[2, -1, -1], &[3, -2, -2], &[0.5; 3], 2)
                .is_err()
        );
        assert!(DecisionTree::from_arrays(&[], &[], &[], &[], 1).is_err());
    }
}
