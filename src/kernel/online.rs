//! Online Mondrian kernel ridge (Balog et al., UAI 2016, §5): new points extend the trees by
//! the conditional Mondrian, new leaves become new feature columns (zero for the old rows),
//! and every new row is a rank-one update of the Cholesky factor.
//!
//! The conditional Mondrian never separates old points, so the old rows keep their partition:
//! each old column still holds exactly its old rows, though its node may change — a paused
//! leaf (all points equal) that resumes splitting becomes internal and its points move into a
//! descendant, and a new parent born above the features' lifetime takes over as the leaf alive
//! then. Such a column is found again by routing one of its training points, so A for the old
//! rows is unchanged but for the appended zero columns (diagonal α).

use super::features::{is_pruned_leaf, pruned_leaf, NO_COLUMN};
use super::ridge::{check_targets, KernelRidge};
use crate::error::{Error, Result};
use ndarray::{ArrayView1, ArrayView2};
use rayon::ThreadPool;

impl KernelRidge {
    /// Adds the rows of `x` with targets `y`: extends the trees, appends the new leaves as
    /// columns and updates the factor by one rank-one update per row.
    pub fn partial_fit(
        &mut self,
        x: &ArrayView2<f64>,
        y: &ArrayView1<f64>,
        pool: &ThreadPool,
    ) -> Result<()> {
        check_targets(y, x.nrows())?;
        self.forest.check_points(x)?;
        let rows = self.forest.add_points(x)?;
        self.forest.extend(rows.clone(), pool);
        self.follow_old_columns()?;
        let (m, d) = (self.forest.trees.len(), self.forest.n_features);
        let lifetime = self.map.lifetime;
        let scale = 1.0 / (m as f64).sqrt();
        // Columns of the new rows, appending a column for every new leaf.
        let mut new_cols = Vec::with_capacity(rows.len() * m);
        for i in rows.clone() {
            let point = &self.forest.points()[i as usize * d..(i as usize + 1) * d];
            for t in 0..m {
                let tree = &self.forest.trees[t];
                let (node, _) = pruned_leaf(tree, point, lifetime);
                let columns = &mut self.map.column_of[t];
                columns.resize(tree.n_nodes(), NO_COLUMN);
                if columns[node as usize] == NO_COLUMN {
                    let c = self.map.owner.len();
                    columns[node as usize] = c as u32;
                    self.map.owner.push((t as u32, node));
                    self.representative.push(i);
                    self.phi_t_y.push(0.0);
                    self.column_mass.push(0.0);
                    self.factor.push_solved(&vec![0.0; c], self.alpha)?;
                }
                new_cols.push(columns[node as usize]);
            }
        }
        let c = self.map.n_columns();
        let mut phi = vec![0.0; c];
        let mut rotations = Vec::new();
        for (row, &yi) in new_cols.chunks_exact(m).zip(y.iter()) {
            for &col in row {
                phi[col as usize] = scale;
                self.phi_t_y[col as usize] += yi * scale;
                self.column_mass[col as usize] += scale;
            }
            self.factor.rank_one_update(&phi, &mut rotations);
            for &col in row {
                phi[col as usize] = 0.0;
            }
            self.sum_y += yi;
            self.sum_y2 += yi * yi;
        }
        self.n_rows += rows.len();
        self.solve();
        Ok(())
    }

    /// Re-attaches every column whose node stopped being a leaf at the features' lifetime
    /// to the node now holding its training points.
    fn follow_old_columns(&mut self) -> Result<()> {
        let d = self.forest.n_features;
        let lifetime = self.map.lifetime;
        for (t, tree) in self.forest.trees.iter().enumerate() {
            self.map.column_of[t].resize(tree.n_nodes(), NO_COLUMN);
        }
        for c in 0..self.map.n_columns() {
            let (t, node) = self.map.owner[c];
            let tree = &self.forest.trees[t as usize];
            if is_pruned_leaf(tree, node, lifetime) {
                continue;
            }
            let i = self.representative[c] as usize;
            let (moved, _) = pruned_leaf(tree, &self.forest.points()[i * d..(i + 1) * d], lifetime);
            let columns = &mut self.map.column_of[t as usize];
            if columns[moved as usize] != NO_COLUMN {
                // Two old columns in one leaf would mean old points were merged, which the
                // conditional Mondrian never does.
                return Err(Error::Corrupt(format!(
                    "columns {c} and {} of tree {t} collapsed into one leaf",
                    columns[moved as usize]
                )));
            }
            columns[node as usize] = NO_COLUMN;
            columns[moved as usize] = c as u32;
            self.map.owner[c] = (t, moved);
        }
        Ok(())
    }
}
