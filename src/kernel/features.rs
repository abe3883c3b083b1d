//! Mondrian kernel features (Balog et al., UAI 2016, eq. 2): one indicator per leaf per tree,
//! scaled by 1/√M, so that φ(x)·φ(x′) is the fraction of trees in which x and x′ share a leaf,
//! an unbiased estimate of exp(−λ‖x − x′‖₁).
//!
//! The trees may have been sampled with a longer lifetime Λ than the features' λ ≤ Λ: the
//! leaves at λ are then the nodes alive at λ (a node whose parent's cut was born by λ and whose
//! own cut, if any, was not), because a Mondrian process with lifetime Λ stopped at λ is a
//! Mondrian process with lifetime λ. This is what lets the lifetime path reuse one set of trees.
//!
//! Points outside the training data (test points) follow the conditional Mondrian instead of
//! being clamped to a box: under the extension of a tree to x, x is separated from the points
//! of path node j by a cut born while j was alive (between its parent's time and min(τ_j, λ))
//! with probability 1 − exp(−η_j(x) Δτ_j), η_j the linear dimension by which x lies outside
//! j's data box. We integrate this extension out analytically: x's entry in its leaf's column
//! is P(no separation)/√M = exp(−Σ_j η_j Δτ_j)/√M, and nothing elsewhere — if x is separated
//! it lands in a fresh cell that no training point shares, which contributes 0 to every
//! product with training features. So φ(x)·φ(x_train) is still an unbiased estimate of the
//! Laplace kernel, and a ridge prediction φ(x)·w is the expectation over the extension.
//! (Products of two test points' features are not unbiased; predictions never need them.)

use crate::error::{Error, Result};
use crate::mondrian::route::{leaf_and_stay_prob, RouteScratch};
use crate::mondrian::{MondrianTree, NONE};
use crate::parallel::for_each_point_block;
use crate::points::Points;
use crate::sparse::Csr;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// Marks a node that is not a feature column.
pub const NO_COLUMN: u32 = u32::MAX;

/// Whether `node` is a leaf of `tree` stopped at time `lifetime`.
#[inline]
pub fn is_pruned_leaf(tree: &MondrianTree, node: u32, lifetime: f64) -> bool {
    tree.tau_parent(node) <= lifetime && (tree.is_leaf(node) || tree.tau(node) > lifetime)
}

/// Which node of which tree each feature column stands for, at one lifetime.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FeatureMap {
    pub lifetime: f64,
    /// Per tree, per node: its column, or [`NO_COLUMN`].
    pub column_of: Vec<Vec<u32>>,
    /// Per column: (tree, node).
    pub owner: Vec<(u32, u32)>,
}

impl FeatureMap {
    /// Columns for the leaves of every tree stopped at `lifetime`, ordered by tree, then by
    /// node id (the column order of [`transform`]).
    pub fn new(trees: &[MondrianTree], lifetime: f64) -> Result<Self> {
        check_lifetime(trees, lifetime)?;
        let mut owner = Vec::new();
        let column_of = trees
            .iter()
            .enumerate()
            .map(|(m, tree)| {
                (0..tree.n_nodes() as u32)
                    .map(|j| {
                        if is_pruned_leaf(tree, j, lifetime) {
                            owner.push((m as u32, j));
                            (owner.len() - 1) as u32
                        } else {
                            NO_COLUMN
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Self {
            lifetime,
            column_of,
            owner,
        })
    }

    /// Number of feature columns.
    #[inline]
    pub fn n_columns(&self) -> usize {
        self.owner.len()
    }

    /// The column and value (stay probability / √M) of `x` in every tree, in tree order.
    pub fn row_entries<'a>(
        &'a self,
        trees: &'a [MondrianTree],
        x: &'a [f64],
        scratch: &'a mut RouteScratch,
    ) -> impl Iterator<Item = (u32, f64)> + 'a {
        let scale = 1.0 / (trees.len() as f64).sqrt();
        trees
            .iter()
            .zip(&self.column_of)
            .map(move |(tree, columns)| {
                let (node, stay) = leaf_and_stay_prob(tree, x, self.lifetime, scratch);
                (columns[node as usize], scale * stay)
            })
    }

    /// Checks that the map fits `trees` (after deserialising).
    pub fn is_consistent(&self, trees: &[MondrianTree]) -> bool {
        self.column_of.len() == trees.len()
            && self
                .column_of
                .iter()
                .zip(trees)
                .all(|(c, t)| c.len() == t.n_nodes())
            && self.owner.iter().enumerate().all(|(c, &(m, j))| {
                self.column_of
                    .get(m as usize)
                    .and_then(|cols| cols.get(j as usize))
                    == Some(&(c as u32))
            })
    }
}

/// Errors unless every tree has a root and `lifetime` lies in [0, the trees' lifetime].
pub fn check_lifetime(trees: &[MondrianTree], lifetime: f64) -> Result<()> {
    if trees.is_empty() || trees.iter().any(|t| t.root == NONE) {
        return Err(Error::InvalidInput("the trees hold no points yet".into()));
    }
    if !(lifetime >= 0.0 && lifetime.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "lifetime",
            reason: format!("must be a finite number >= 0, got {lifetime}"),
        });
    }
    Ok(())
}

/// The feature matrix of the rows of `x` (checked, in the trees' coordinates): N × C CSR with
/// exactly M stored entries per row, one per tree in tree order (so column indices increase
/// along a row).
pub fn transform<P: Points>(
    trees: &[MondrianTree],
    map: &FeatureMap,
    x: &P,
    pool: &ThreadPool,
) -> Result<Csr> {
    let (m, d) = (trees.len(), x.n_features());
    let mut entries = vec![(0u32, 0.0); x.n_rows() * m];
    for_each_point_block(pool, &mut entries, m, x, None, |_, out, rows| {
        let mut scratch = RouteScratch::default();
        for (out_row, row) in out.chunks_exact_mut(m).zip(rows.chunks_exact(d)) {
            for (o, e) in out_row
                .iter_mut()
                .zip(map.row_entries(trees, row, &mut scratch))
            {
                *o = e;
            }
        }
    });
    Csr::with_fixed_row_length(map.n_columns(), m, &entries)
}

/// The column of every training point of `tree` at the map's lifetime (indexed by row), from
/// the leaves' point lists: a leaf's points belong to its ancestor alive at that lifetime.
pub fn training_columns(
    tree: &MondrianTree,
    columns: &[u32],
    lifetime: f64,
    n_rows: usize,
) -> Vec<u32> {
    let mut out = vec![NO_COLUMN; n_rows];
    for leaf in (0..tree.n_nodes() as u32).filter(|&j| tree.is_leaf(j)) {
        let mut node = leaf;
        while !is_pruned_leaf(tree, node, lifetime) {
            node = tree.parent[node as usize];
        }
        let column = columns[node as usize];
        for &i in tree
            .samples
            .of(leaf, tree.nodes[leaf as usize].n_samples as usize)
        {
            out[i as usize] = column;
        }
    }
    out
}
