//! How a move changes the grids (Balog's report §5.1): activating a cut splits every cell of
//! its grid that it crosses and that then holds training rows on both sides — the cell's
//! column is replaced by its halves' — and deactivating one merges the cells on either side
//! that agree in every other dimension. Each column change goes through the lifetime path's
//! solver; validation rows follow their cells (or leave them, when no training row shares
//! the new cell).

use super::search::{GridSearch, Record};
use crate::error::{Error, Result};
use crate::kernel::features::NO_COLUMN;
use crate::kernel::path::solver::{Child, PathSolver};
use crate::kernel::path::weights::Weights;

impl GridSearch {
    /// A new feature id (its column is pushed later).
    fn new_fid(&mut self) -> Result<u32> {
        let pos_of = &mut self.state.columns.pos_of;
        if pos_of.len() >= NO_COLUMN as usize - 1 {
            return Err(Error::InvalidInput("too many grid cells to number".into()));
        }
        pos_of.push(NO_COLUMN);
        Ok(pos_of.len() as u32 - 1)
    }

    /// The interval (knots `lo..hi`) of (grid, dim) around `gap`, with `gap` itself absent
    /// from or present in the active cuts as `present` says, and its index there.
    fn interval(
        &self,
        grid: usize,
        dim: usize,
        gap: u32,
        present: bool,
    ) -> Result<(usize, u32, u32)> {
        let cuts = &self.state.cuts[grid * self.d() + dim];
        let at = cuts.partition_point(|&c| c < gap);
        if (cuts.get(at) == Some(&gap)) != present {
            return Err(missing_cut());
        }
        let lo = if at == 0 { 0 } else { cuts[at - 1] + 1 };
        let after = if present { at + 1 } else { at };
        let n_knots = self.process.knots.values[dim].len() as u32;
        let hi = cuts.get(after).map_or(n_knots, |&c| c + 1);
        Ok((at, lo, hi))
    }

    /// Activates the cut in `gap` of (grid, dim) (module docs).
    pub(super) fn add_cut(&mut self, grid: usize, dim: usize, gap: u32) -> Result<()> {
        let (m, d) = (self.m(), self.d());
        let (at, lo, hi) = self.interval(grid, dim, gap, false)?;
        self.state.cuts[grid * d + dim].insert(at, gap);
        let knots = &self.process.knots;
        let upper_from = knots.start[dim][gap as usize + 1];
        let base = knots.start[dim][lo as usize];
        let (mut train, mut val): (Vec<Record>, Vec<Record>) = (Vec::new(), Vec::new());
        for (k, &p) in knots.points(dim, lo, hi).iter().enumerate() {
            let upper = base + k as u32 >= upper_from;
            let p = p as usize;
            if p < self.n_train {
                train.push((self.state.row_fid[p * m + grid], upper, p as u32));
            } else {
                let v = p - self.n_train;
                let fid = self.state.val_fid[v * m + grid];
                if fid != NO_COLUMN {
                    val.push((fid, upper, v as u32));
                }
            }
        }
        train.sort_unstable();
        // Per touched cell: (fid, Some(upper child) when split, whether its rows lie above).
        let mut outcomes: Vec<(u32, Option<u32>, bool)> = Vec::new();
        let mut start = 0;
        while start < train.len() {
            let fid = train[start].0;
            let end = start + train[start..].partition_point(|r| r.0 == fid);
            let split = start + train[start..end].partition_point(|r| !r.1);
            if split == start || split == end {
                outcomes.push((fid, None, split == start));
            } else {
                let lower: Vec<u32> = train[start..split].iter().map(|r| r.2).collect();
                let upper: Vec<u32> = train[split..end].iter().map(|r| r.2).collect();
                let child = self.split_column(grid, fid, &lower, &upper)?;
                outcomes.push((fid, Some(child), false));
            }
            start = end;
        }
        for (fid, upper, v) in val {
            let at = outcomes.partition_point(|o| o.0 < fid);
            let slot = &mut self.state.val_fid[v as usize * m + grid];
            match outcomes.get(at) {
                Some(&(_, Some(child), _)) if upper => *slot = child,
                Some(&(_, None, above)) if above != upper => *slot = NO_COLUMN,
                _ => {}
            }
        }
        Ok(())
    }

    /// Replaces the column of cell `fid` by its rows `lower` (keeping the id) and `upper` (a
    /// new id, returned).
    fn split_column(&mut self, grid: usize, fid: u32, lower: &[u32], upper: &[u32]) -> Result<u32> {
        let child = self.new_fid()?;
        let m = self.m();
        for &r in upper {
            self.state.row_fid[r as usize * m + grid] = child;
        }
        let st = &mut self.state;
        let c_next = st.columns.fid_at.len() + 1;
        match &st.solver {
            PathSolver::Cholesky(chol) if !self.options.is_dense(c_next) => {
                // Too many features for the dense factor: go on from its exact weights.
                st.solver = PathSolver::Gradient(chol.weights());
            }
            PathSolver::Cholesky(_) | PathSolver::Inverse(_)
                if c_next > self.options.max_dense_features =>
            {
                // A dense route asked for by name: its C × C matrix is refused past the limit
                // rather than grown until memory runs out.
                return Err(Error::InvalidParameter {
                    name: "max_dense_features",
                    reason: format!(
                        "the search reached C = {c_next} columns, more than \
                         max_dense_features = {}, which a dense solver may hold; raise it \
                         or use solver='auto' (conjugate gradients beyond it)",
                        self.options.max_dense_features
                    ),
                });
            }
            _ => {}
        }
        let p = st.columns.pos_of[fid as usize] as usize;
        let split_weight = st.solver.gradient_weight(p);
        st.solver.remove(&mut st.columns, p)?;
        let ((small, small_rows), (other, other_rows)) = if lower.len() <= upper.len() {
            ((fid, lower), (child, upper))
        } else {
            ((child, upper), (fid, lower))
        };
        let need_cross = !matches!(st.solver, PathSolver::Gradient(_));
        let other_cross = st.solver.needs_other_cross();
        let c = st.columns.fid_at.len();
        let inv_m = 1.0 / m as f64;
        for (rows, acc, want) in [
            (small_rows, &mut self.cross, need_cross),
            (other_rows, &mut self.cross_other, other_cross),
        ] {
            if want {
                cross_products(
                    rows,
                    grid,
                    &st.row_fid,
                    m,
                    &st.columns.pos_of,
                    c,
                    inv_m,
                    &self.row_weights,
                    acc,
                );
            }
        }
        let scale = 1.0 / (m as f64).sqrt();
        let target_sum = |rows: &[u32]| self.row_weights.sum(&self.yc, Some(rows)) * scale;
        let alpha = self.options.alpha;
        st.solver.append_children(
            &mut st.columns,
            Child {
                fid: small,
                mass: self.row_weights.mass(small_rows),
                r: target_sum(small_rows),
                cross: need_cross.then_some(self.cross.as_slice()),
            },
            Child {
                fid: other,
                mass: self.row_weights.mass(other_rows),
                r: target_sum(other_rows),
                cross: other_cross.then_some(self.cross_other.as_slice()),
            },
            |mass| mass * inv_m + alpha,
            split_weight,
        )?;
        Ok(child)
    }

    /// The labels of point `p`'s intervals in (grid, every dimension but `dim`): identical for
    /// two cells on either side of a cut of `dim` exactly when they merge.
    fn key(&self, grid: usize, dim: usize, p: usize) -> Vec<u32> {
        let d = self.d();
        (0..d)
            .filter(|&k| k != dim)
            .map(|k| {
                let knot = self.process.knots.of(p, k);
                self.state.cuts[grid * d + k].partition_point(|&c| c < knot) as u32
            })
            .collect()
    }

    /// Deactivates the cut in `gap` of (grid, dim) (module docs).
    pub(super) fn remove_cut(&mut self, grid: usize, dim: usize, gap: u32) -> Result<()> {
        let (m, d) = (self.m(), self.d());
        let (at, lo, hi) = self.interval(grid, dim, gap, true)?;
        self.state.cuts[grid * d + dim].remove(at);
        let upper_from = self.process.knots.start[dim][gap as usize + 1];
        let base = self.process.knots.start[dim][lo as usize];
        let points: Vec<u32> = self.process.knots.points(dim, lo, hi).to_vec();
        let mut train: Vec<Record> = Vec::new();
        let mut val_unplaced = Vec::new();
        for (k, &p) in points.iter().enumerate() {
            let upper = base + k as u32 >= upper_from;
            let p = p as usize;
            if p < self.n_train {
                train.push((self.state.row_fid[p * m + grid], upper, p as u32));
            } else if self.state.val_fid[(p - self.n_train) * m + grid] == NO_COLUMN {
                val_unplaced.push((p, upper));
            }
        }
        train.sort_unstable();
        // The cells of the two intervals, by key: (key, upper side, fid, rows).
        let mut cells: Vec<(Vec<u32>, bool, u32, Vec<u32>)> = Vec::new();
        let mut start = 0;
        while start < train.len() {
            let (fid, upper, first) = train[start];
            let end = start + train[start..].partition_point(|r| r.0 == fid);
            let rows = train[start..end].iter().map(|r| r.2).collect();
            cells.push((self.key(grid, dim, first as usize), upper, fid, rows));
            start = end;
        }
        cells.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        // Per key, the cell that remains: the lower one (absorbing the upper) or the only one.
        let mut merged_into: Vec<(u32, u32)> = Vec::new(); // (upper fid, lower fid)
        let mut remaining: Vec<(Vec<u32>, u32)> = Vec::new();
        let mut k = 0;
        while k < cells.len() {
            let pair = k + 1 < cells.len() && cells[k + 1].0 == cells[k].0;
            if pair {
                let (lower, upper) = (cells[k].2, cells[k + 1].2);
                self.merge_columns(grid, lower, &cells[k].3, upper, &cells[k + 1].3)?;
                merged_into.push((upper, lower));
            }
            remaining.push((cells[k].0.clone(), cells[k].2));
            k += if pair { 2 } else { 1 };
        }
        merged_into.sort_unstable();
        let n_train = self.n_train;
        for &p in &points {
            let p = p as usize;
            if p < n_train {
                continue;
            }
            let slot = (p - n_train) * m + grid;
            let fid = self.state.val_fid[slot];
            if let Ok(i) = merged_into.binary_search_by_key(&fid, |&(u, _)| u) {
                self.state.val_fid[slot] = merged_into[i].1;
            }
        }
        for (p, _) in val_unplaced {
            let key = self.key(grid, dim, p);
            if let Ok(i) = remaining.binary_search_by(|(k, _)| k.cmp(&key)) {
                self.state.val_fid[(p - n_train) * m + grid] = remaining[i].1;
            }
        }
        Ok(())
    }

    /// Replaces the columns of cells `lower` and `upper` (rows `lower_rows`, `upper_rows`) by
    /// one column under `lower`'s id.
    fn merge_columns(
        &mut self,
        grid: usize,
        lower: u32,
        lower_rows: &[u32],
        upper: u32,
        upper_rows: &[u32],
    ) -> Result<()> {
        let m = self.m();
        for &r in upper_rows {
            self.state.row_fid[r as usize * m + grid] = lower;
        }
        let st = &mut self.state;
        let mut r = 0.0;
        let mut weighted = 0.0;
        for fid in [lower, upper] {
            let p = st.columns.pos_of[fid as usize] as usize;
            weighted += st.columns.mass[p] * st.solver.gradient_weight(p);
            r += st.solver.remove(&mut st.columns, p)?.r;
        }
        let mass = self.row_weights.mass(lower_rows) + self.row_weights.mass(upper_rows);
        let c = st.columns.fid_at.len();
        let inv_m = 1.0 / m as f64;
        let mut acc = std::mem::take(&mut self.cross);
        if !matches!(st.solver, PathSolver::Gradient(_)) {
            let rows: Vec<u32> = lower_rows.iter().chain(upper_rows).copied().collect();
            cross_products(
                &rows,
                grid,
                &st.row_fid,
                m,
                &st.columns.pos_of,
                c,
                inv_m,
                &self.row_weights,
                &mut acc,
            );
        }
        let diag = mass * inv_m + self.options.alpha;
        st.solver.append_column(&acc, diag, r)?;
        if let PathSolver::Gradient(w) = &mut st.solver {
            // Φw stays as close as one column allows: the rows' mean weight.
            if let Some(last) = w.last_mut() {
                *last = weighted / mass;
            }
        }
        st.columns.push(lower, r, mass);
        self.cross = acc;
        Ok(())
    }
}

/// The cross products (the shared rows' total weight / M) of a new column with rows `rows` in grid `grid` with
/// every current column (positions through `pos_of`, `c` of them), into `acc`: cells of the
/// same grid share no row with it.
#[allow(clippy::too_many_arguments)]
fn cross_products(
    rows: &[u32],
    grid: usize,
    row_fid: &[u32],
    m: usize,
    pos_of: &[u32],
    c: usize,
    inv_m: f64,
    weights: &Weights,
    acc: &mut Vec<f64>,
) {
    acc.clear();
    acc.resize(c, 0.0);
    for &r in rows {
        let row = &row_fid[r as usize * m..(r as usize + 1) * m];
        // v · x is x itself for v = 1: unweighted cross products keep their bits.
        let shared = weights.of(r as usize) * inv_m;
        for (t, &f) in row.iter().enumerate() {
            if t != grid {
                acc[pos_of[f as usize] as usize] += shared;
            }
        }
    }
}

pub(super) fn missing_cut() -> Error {
    Error::InvalidInput("internal error: a grid cut is not where the search left it".into())
}
