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

use super::features::{is_pruned_leaf, NO_COLUMN};
use super::ridge::KernelRidge;
use crate::error::{Error, Result};
use crate::mondrian::policy::PureMondrian;
use crate::points::Points;
use crate::training_data::check_targets_and_weights;
use ndarray::ArrayView1;
use rayon::ThreadPool;

impl KernelRidge {
    /// Adds the rows of `x` with targets `y` (and weights, module docs of `ridge`): extends
    /// the trees, appends the new leaves as columns and updates the factor by one rank-one
    /// update per row (of √v_i φ_i).
    pub fn partial_fit<P: Points>(
        &mut self,
        x: &P,
        y: &ArrayView1<f64>,
        weights: Option<&ArrayView1<f64>>,
        pool: &ThreadPool,
    ) -> Result<()> {
        check_targets_and_weights(x.n_rows(), y, weights)?;
        let weight = |k: usize| weights.map_or(1.0, |w| w[k]);
        let rows = self.forest.add_online_points(x)?;
        // The features need no per-leaf statistics: the changed leaves are not needed.
        self.forest.extend(rows.clone(), &PureMondrian, pool)?;
        self.follow_old_columns()?;
        let (m, d) = (self.forest.trees.len(), self.forest.n_features);
        let lifetime = self.map.lifetime;
        let scale = 1.0 / (m as f64).sqrt();
        // Columns of the new rows, appending a column for every new leaf.
        let mut new_cols = Vec::with_capacity(rows.len() * m);
        let points = self.forest.points()?;
        for i in rows.clone() {
            let point = &points[i as usize * d..(i as usize + 1) * d];
            for t in 0..m {
                let tree = &self.forest.trees[t];
                let node = tree.leaf_alive_at(point, lifetime);
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
        for (k, (row, &yi)) in new_cols.chunks_exact(m).zip(y.iter()).enumerate() {
            let vi = weight(k);
            for &col in row {
                phi[col as usize] = scale * vi.sqrt();
                self.phi_t_y[col as usize] += vi * yi * scale;
                self.column_mass[col as usize] += vi * scale;
            }
            self.factor.rank_one_update(&phi, &mut rotations);
            for &col in row {
                phi[col as usize] = 0.0;
            }
            self.sum_w += vi;
            self.sum_log_w += vi.ln();
            self.sum_y += vi * yi;
            self.sum_y2 += vi * yi * yi;
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
        let points = self.forest.points()?;
        for c in 0..self.map.n_columns() {
            let (t, node) = self.map.owner[c];
            let tree = &self.forest.trees[t as usize];
            if is_pruned_leaf(tree, node, lifetime) {
                continue;
            }
            let i = self.representative[c] as usize;
            let moved = tree.leaf_alive_at(&points[i * d..(i + 1) * d], lifetime);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;
    use crate::testing::{assert_rel, kernel_forest, regression_data};
    use ndarray::{s, Array1, Array2};

    #[test]
    fn online_updates_equal_a_batch_fit_on_the_same_trees() {
        let (x, y) = regression_data(150, 2, 6);
        let p = pool(2).expect("pool");
        for lifetime in [2.0, 6.0] {
            let f = kernel_forest(&x.slice(s![..40, ..]).to_owned(), 5, lifetime, 9);
            let mut model =
                KernelRidge::from_forest(f, lifetime, 1e-2, &y.slice(s![..40]), &p).expect("fit");
            for (a, b) in [(40, 41), (41, 90), (90, 150)] {
                model
                    .partial_fit(&x.slice(s![a..b, ..]), &y.slice(s![a..b]), None, &p)
                    .expect("update");
            }
            let batch =
                KernelRidge::from_forest(model.forest.clone(), lifetime, 1e-2, &y.view(), &p)
                    .expect("fit");
            assert_eq!(model.n_columns(), batch.n_columns());
            // Same columns (by tree and node), same weights.
            let (w, owners) = model.weights();
            let mut online: Vec<((u32, u32), f64)> =
                owners.iter().copied().zip(w.iter().copied()).collect();
            online.sort_by_key(|&(o, _)| o);
            let (wb, ob) = batch.weights();
            assert_eq!(
                online.iter().map(|&(o, _)| o).collect::<Vec<_>>(),
                ob.to_vec()
            );
            assert_rel(
                &online.iter().map(|&(_, w)| w).collect::<Vec<_>>(),
                wb,
                1e-8,
            );
            assert!((model.log_det() - batch.log_det()).abs() < 1e-8 * batch.log_det().abs());
            let (xt, _) = regression_data(50, 2, 8);
            let xt = xt.mapv(|v| 2.0 * v - 0.5);
            let a = model.predict(&xt.view(), &p).expect("predict");
            let b = batch.predict(&xt.view(), &p).expect("predict");
            assert_rel(a.as_slice().expect("c"), b.as_slice().expect("c"), 1e-8);
        }
    }

    #[test]
    fn online_handles_duplicates_that_resume_splitting() {
        // All first points equal: every tree is one paused leaf; the next points make it split.
        let x0 = Array2::from_elem((5, 2), 0.5);
        let y0 = Array1::from_elem(5, 1.0);
        let p = pool(1).expect("pool");
        let f = kernel_forest(&x0, 4, 5.0, 3);
        let mut model = KernelRidge::from_forest(f, 5.0, 1e-2, &y0.view(), &p).expect("fit");
        assert_eq!(model.n_columns(), 4);
        let (x1, y1) = regression_data(30, 2, 12);
        model
            .partial_fit(&x1.view(), &y1.view(), None, &p)
            .expect("update");
        assert!(model.n_columns() > 4);
        let y_all = ndarray::concatenate![ndarray::Axis(0), y0, y1];
        let batch = KernelRidge::from_forest(model.forest.clone(), 5.0, 1e-2, &y_all.view(), &p)
            .expect("fit");
        let a = model.predict(&x1.view(), &p).expect("predict");
        let b = batch.predict(&x1.view(), &p).expect("predict");
        assert_rel(a.as_slice().expect("c"), b.as_slice().expect("c"), 1e-8);
    }

    /// A stream of single-row batches retains exactly what one batch of the same rows does: no
    /// per-batch bookkeeping accumulates (rows duplicating training points change no tree, so
    /// both models have the same structure and the growth is the stored rows alone).
    #[test]
    fn a_stream_of_batches_retains_no_more_than_one_batch() {
        let (x, y) = regression_data(100, 3, 21);
        let p = pool(1).expect("pool");
        let fitted = || {
            let f = kernel_forest(&x, 20, 2.0, 4);
            KernelRidge::from_forest(f, 2.0, 1e-2, &y.view(), &p).expect("fit")
        };
        let rows: Vec<usize> = (0..200).map(|i| (7 * i) % 100).collect();
        let xs = x.select(ndarray::Axis(0), &rows);
        let ys = y.select(ndarray::Axis(0), &rows);
        let mut streamed = fitted();
        let before = streamed.retained_bytes();
        for i in 0..200 {
            let (xi, yi) = (xs.slice(s![i..i + 1, ..]), ys.slice(s![i..i + 1]));
            streamed.partial_fit(&xi, &yi, None, &p).expect("update");
        }
        let mut batched = fitted();
        batched
            .partial_fit(&xs.view(), &ys.view(), None, &p)
            .expect("update");
        assert_eq!(streamed.n_columns(), batched.n_columns());
        assert_eq!(streamed.retained_bytes(), batched.retained_bytes());
        // 200 rows of 3 coordinates, each a member of one leaf per tree.
        let per_row = 3 * std::mem::size_of::<f64>() + 20 * std::mem::size_of::<u32>();
        assert_eq!(streamed.retained_bytes() - before, 200 * per_row);
    }

    /// The refit after a lifetime search extends the trees with the held-out points as
    /// online updates do; read through their map, they are the points mapped beforehand.
    #[test]
    fn refit_reads_held_out_points_through_their_map_as_if_mapped_beforehand() {
        use crate::input_map::InputMap;
        use crate::kernel::mondrian_features::MondrianFeatures;
        use crate::points::MappedPoints;
        let (x, y) = regression_data(60, 2, 3);
        let p = pool(2).expect("pool");
        let features = MondrianFeatures::new(kernel_forest(&x, 4, 3.0, 5)).expect("features");
        let map = InputMap {
            offset: vec![-2.0, 0.5],
            scale: vec![3.0, 0.25],
        };
        let raw = Array2::from_shape_fn((10, 2), |(i, d)| 0.3 * i as f64 - 1.0 + d as f64);
        let mapped = Array2::from_shape_fn((10, 2), |(i, d)| map.map_value(d, raw[[i, d]]));
        let through_map = MappedPoints::new(raw.view(), map).expect("finite images");
        let targets: Array1<f64> = y.iter().copied().chain((0..10).map(f64::from)).collect();
        let refit = |held_out: &dyn Points| {
            features
                .refit(&targets.view(), None, 2.0, 1.0, Some(held_out), &p)
                .expect("refit")
        };
        let (read, given) = (refit(&through_map), refit(&mapped.view()));
        assert_eq!(read.weights(), given.weights());
        let probe = regression_data(20, 2, 9).0;
        assert_eq!(
            read.predict(&probe.view(), &p).expect("predict"),
            given.predict(&probe.view(), &p).expect("predict")
        );
    }
}
