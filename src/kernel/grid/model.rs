//! Ridge regression on the Mondrian grid's features at fixed lifetimes (λ_d), fitted from
//! scratch (the search's refit, and the reference its exactness is tested against), and its
//! predictions for any point.
//!
//! A point x between knots u_g < x < u_{g+1} of dimension d (an inductive estimator sees points
//! the knots never held): if gap g is uncut at λ_d, no cut of the process lies in it and x
//! shares u_g's and u_{g+1}'s interval; if it is cut, x lies on the side of the first cut
//! (location c, birth τ_g) it falls on, and the process's later cuts in the gap, born in
//! (τ_g, λ_d] at rate λ_d − τ_g per unit length, separate x from that side's knot with
//! probability 1 − exp(−(λ_d − τ_g)|x − u|). Beyond the outermost knots the process's cuts
//! arrive at rate λ_d: x leaves the end interval with probability 1 − exp(−λ_d · distance).
//! A separated x is alone in a cell no training point shares (feature 0), so its feature in its
//! grid's cell is Π_d P(not separated)/√M — the unseen cuts integrated out, as the Mondrian
//! kernel does for its trees — and φ(x)·φ(x') is an unbiased estimate of
//! exp(−Σ_d λ_d |x_d − x'_d|) for any x and training x'.

use super::process::Process;
use crate::error::{Error, Result};
use crate::kernel::gram::gram_by_partition;
use crate::kernel::path::evaluate::RidgeGram;
use crate::kernel::path::weights::Weights;
use crate::kernel::path::PathOptions;
use crate::linalg::cg;
use crate::linalg::cholesky::Cholesky;
use crate::linalg::operator::Identity;
use crate::parallel::for_each_point_block;
use crate::points::{check_width, finite_ranges, for_each_block, Points};
use crate::sparse::Csr;
use ndarray::ArrayView1;
use rayon::prelude::*;
use rayon::ThreadPool;
use serde::{Deserialize, Serialize};

/// An active cut of one grid in one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GridCut {
    pub gap: u32,
    pub tau: f64,
    pub location: f64,
}

/// The occupied cells of M grids: per grid, its columns' interval labels (C × D, sorted
/// within each grid), and the column of each of the rows they were built on (N × M).
pub struct Cells {
    pub first: Vec<usize>,
    pub keys: Vec<u32>,
    pub rows_pos: Vec<u32>,
}

/// Per (grid, dimension), the cuts of `process` born by λ_d, sorted by gap.
pub fn active_cuts(process: &mut Process, lifetimes: &[f64]) -> Vec<Vec<GridCut>> {
    let d = process.knots.d;
    let mut cuts = vec![Vec::new(); process.n_grids * d];
    for (k, &lifetime) in lifetimes.iter().enumerate() {
        for i in 0..process.count_by(k, lifetime) {
            if let Some(cut) = process.event(k, i) {
                cuts[cut.grid as usize * d + k].push(GridCut {
                    gap: cut.gap,
                    tau: cut.tau,
                    location: cut.location,
                });
            }
        }
    }
    for list in &mut cuts {
        list.sort_unstable_by_key(|c| c.gap);
    }
    cuts
}

/// The occupied cells of the process's first `n_rows` points under `cuts` (labels: the number
/// of active cuts below the point's knot in each dimension).
pub fn cells(process: &Process, cuts: &[Vec<GridCut>], n_rows: usize, pool: &ThreadPool) -> Cells {
    let (m, d) = (process.n_grids, process.knots.d);
    let per_grid: Vec<(Vec<u32>, Vec<u32>)> = pool.install(|| {
        (0..m)
            .into_par_iter()
            .map(|t| {
                let mut labels = vec![0u32; n_rows * d];
                for (p, row) in labels.chunks_exact_mut(d).enumerate() {
                    for (k, label) in row.iter_mut().enumerate() {
                        let knot = process.knots.of(p, k);
                        *label = cuts[t * d + k].partition_point(|c| c.gap < knot) as u32;
                    }
                }
                let key = |p: usize| &labels[p * d..(p + 1) * d];
                let mut order: Vec<usize> = (0..n_rows).collect();
                order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
                let (mut keys, mut column) = (Vec::new(), vec![0u32; n_rows]);
                let mut count = 0u32;
                for (i, &p) in order.iter().enumerate() {
                    if i == 0 || key(order[i - 1]) != key(p) {
                        keys.extend_from_slice(key(p));
                        count += 1;
                    }
                    column[p] = count - 1;
                }
                (keys, column)
            })
            .collect()
    });
    let mut first = vec![0usize; m + 1];
    let mut keys = Vec::new();
    let mut rows_pos = vec![0u32; n_rows * m];
    for (t, (grid_keys, column)) in per_grid.iter().enumerate() {
        for (p, &c) in column.iter().enumerate() {
            rows_pos[p * m + t] = (first[t] + c as usize) as u32;
        }
        first[t + 1] = first[t] + grid_keys.len() / d.max(1);
        keys.extend_from_slice(grid_keys);
    }
    Cells {
        first,
        keys,
        rows_pos,
    }
}

/// The fitted grid ridge (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridRidge {
    pub n_grids: usize,
    pub lifetimes: Vec<f64>,
    /// Per dimension, the knots of the search points.
    pub knots: Vec<Vec<f64>>,
    /// Per (grid, dimension), the active cuts, sorted by gap.
    pub cuts: Vec<Vec<GridCut>>,
    /// Grid t owns columns `first[t]..first[t + 1]`, whose labels are `keys` (C × D, sorted
    /// within each grid).
    pub first: Vec<usize>,
    pub keys: Vec<u32>,
    pub weights: Vec<f64>,
    pub intercept: f64,
    pub alpha: f64,
    /// Conjugate-gradient iterations of the fit (0 for the dense factor).
    pub cg_iterations: usize,
}

impl GridRidge {
    /// Ridge with penalty `options.alpha` on the features of the process's first `y.len()`
    /// points at `lifetimes`, the rows weighing `weights` (None: all 1; the kernel ridge's
    /// meaning): a Cholesky factor of ΦᵀVΦ + αI when `options` allow C columns densely, else
    /// conjugate gradients to `options.gradient_tol`.
    pub fn fit(
        process: &mut Process,
        lifetimes: &[f64],
        y: &[f64],
        weights: Option<&[f64]>,
        options: &PathOptions,
        pool: &ThreadPool,
    ) -> Result<Self> {
        let (m, d, n) = (process.n_grids, process.knots.d, y.len());
        check_lifetimes(lifetimes, d)?;
        if n == 0 || n > process.knots.n_points() || y.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "{n} targets for {} points (finite values needed)",
                process.knots.n_points()
            )));
        }
        let row_weights = Weights::new(n, weights.map(ArrayView1::from).as_ref())?;
        let cuts = active_cuts(process, lifetimes);
        let cells = cells(process, &cuts, n, pool);
        let c = cells.first[m];
        let intercept = row_weights.mean(y, || y.iter().sum::<f64>() / n as f64);
        let scale = 1.0 / (m as f64).sqrt();
        let mut r = vec![0.0; c];
        for (i, (row, yi)) in cells.rows_pos.chunks_exact(m).zip(y).enumerate() {
            // v · x is x itself for v = 1: the unweighted sums keep their bits.
            let target = row_weights.of(i) * ((yi - intercept) * scale);
            for &col in row {
                r[col as usize] += target;
            }
        }
        // A refit never holds a dense factor past the limit, whichever route the search took.
        let (weights, cg_iterations) = if options.is_dense(c) && c <= options.max_dense_features {
            let packed = gram_by_partition(
                &cells.first,
                &cells.rows_pos,
                m,
                options.alpha,
                weights,
                pool,
            );
            let factor = Cholesky::factor(packed, c, Some(pool))?;
            factor.solve(&mut r);
            (r, 0)
        } else {
            let gram = RidgeGram {
                rows_pos: &cells.rows_pos,
                m,
                alpha: options.alpha,
                dim: c,
                weights,
            };
            let solved = cg::solve(
                &gram,
                &Identity(c),
                &r,
                1,
                None,
                options.gradient_tol,
                options.gradient_max_iter,
                pool,
            )?;
            (solved.x, solved.iterations[0])
        };
        Ok(Self {
            n_grids: m,
            lifetimes: lifetimes.to_vec(),
            knots: process.knots.values.clone(),
            cuts,
            first: cells.first,
            keys: cells.keys,
            weights,
            intercept,
            alpha: options.alpha,
            cg_iterations,
        })
    }

    /// Number of features D.
    pub fn n_features(&self) -> usize {
        self.lifetimes.len()
    }

    /// Number of feature columns C.
    pub fn n_columns(&self) -> usize {
        self.weights.len()
    }

    /// The interval label of coordinate `x` in dimension `k` of grid `t`, and the probability
    /// that no unseen cut separates it from that interval's knots (module docs).
    fn locate(&self, t: usize, k: usize, x: f64) -> (u32, f64) {
        let (knots, lifetime) = (&self.knots[k], self.lifetimes[k]);
        let cuts = &self.cuts[t * self.n_features() + k];
        let (Some(&low), Some(&high)) = (knots.first(), knots.last()) else {
            return (0, 1.0);
        };
        if x < low {
            return (0, (-lifetime * (low - x)).exp());
        }
        if x > high {
            return (cuts.len() as u32, (-lifetime * (x - high)).exp());
        }
        let j = knots.partition_point(|&v| v <= x) - 1; // knots[j] ≤ x (< knots[j + 1])
        let below = cuts.partition_point(|c| (c.gap as usize) < j);
        if knots[j] == x {
            return (below as u32, 1.0);
        }
        match cuts.get(below) {
            Some(cut) if cut.gap as usize == j => {
                let rate = lifetime - cut.tau;
                if x <= cut.location {
                    (below as u32, (-rate * (x - knots[j])).exp())
                } else {
                    (below as u32 + 1, (-rate * (knots[j + 1] - x)).exp())
                }
            }
            _ => (below as u32, 1.0),
        }
    }

    /// Per grid, the column of `row`'s cell and its feature value (None where no training
    /// point occupies the cell or the point is certainly separated).
    fn row_entries<'a>(
        &'a self,
        row: &'a [f64],
        key: &'a mut Vec<u32>,
    ) -> impl Iterator<Item = (u32, f64)> + 'a {
        let d = self.n_features();
        let scale = 1.0 / (self.n_grids as f64).sqrt();
        (0..self.n_grids).filter_map(move |t| {
            key.clear();
            let mut stay = 1.0;
            for (k, &x) in row.iter().enumerate() {
                let (label, s) = self.locate(t, k, x);
                key.push(label);
                stay *= s;
            }
            let (from, to) = (self.first[t], self.first[t + 1]);
            let found = find_key(&self.keys[from * d..to * d], d, key)?;
            (stay > 0.0).then(|| ((from + found) as u32, stay * scale))
        })
    }

    fn check_points<P: Points>(&self, x: &P) -> Result<()> {
        check_width(x, self.n_features(), "grid")?;
        finite_ranges(x).map(drop)
    }

    /// ȳ + φ(x)·w for every row of `x`.
    pub fn predict<P: Points>(&self, x: &P, pool: &ThreadPool) -> Result<Vec<f64>> {
        self.check_points(x)?;
        let d = self.n_features();
        let mut out = vec![0.0; x.n_rows()];
        for_each_point_block(pool, &mut out, 1, x, None, |_, out, rows| {
            let mut key = Vec::with_capacity(d);
            for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
                let fit: f64 = self
                    .row_entries(row, &mut key)
                    .map(|(c, v)| v * self.weights[c as usize])
                    .sum();
                *o = self.intercept + fit;
            }
        });
        Ok(out)
    }

    /// The features of the rows of `x` in this model's column order.
    pub fn transform<P: Points>(&self, x: &P) -> Result<Csr> {
        self.check_points(x)?;
        let d = self.n_features();
        let (mut indptr, mut indices, mut data) = (vec![0i64], Vec::new(), Vec::new());
        let mut key = Vec::with_capacity(d);
        for_each_block(x, None, |_, rows| {
            for row in rows.chunks_exact(d) {
                for (c, v) in self.row_entries(row, &mut key) {
                    indices.push(c as i32);
                    data.push(v);
                }
                indptr.push(indices.len() as i64);
            }
        });
        Ok(Csr {
            n_rows: indptr.len() - 1,
            n_cols: self.n_columns(),
            indptr,
            indices,
            data,
        })
    }

    /// Whether a deserialised model is whole (lengths, order, ranges, finite values).
    pub fn is_consistent(&self) -> bool {
        let (m, d, c) = (self.n_grids, self.n_features(), self.n_columns());
        let knots_ok = self.knots.len() == d
            && self.knots.iter().all(|k| {
                !k.is_empty()
                    && k.iter().all(|v| v.is_finite())
                    && k.windows(2).all(|w| w[0] < w[1])
            });
        if !(m > 0 && d > 0 && knots_ok && self.cuts.len() == m * d) {
            return false;
        }
        let cuts_ok = self.cuts.iter().enumerate().all(|(i, cuts)| {
            let (k, lifetime) = (i % d, self.lifetimes[i % d]);
            let knots = &self.knots[k];
            cuts.windows(2).all(|w| w[0].gap < w[1].gap)
                && cuts.iter().all(|cut| {
                    let g = cut.gap as usize;
                    g + 1 < knots.len()
                        && (0.0..=lifetime).contains(&cut.tau)
                        && (knots[g]..=knots[g + 1]).contains(&cut.location)
                })
        });
        let first_ok = self.first.len() == m + 1
            && self.first[0] == 0
            && self.first.windows(2).all(|w| w[0] <= w[1])
            && self.first[m] == c;
        cuts_ok
            && first_ok
            && self.keys.len() == c * d
            && self.lifetimes.iter().all(|l| l.is_finite() && *l >= 0.0)
            && self.weights.iter().all(|w| w.is_finite())
            && self.intercept.is_finite()
            && self.alpha > 0.0
    }
}

/// The index of `key` among the `d`-wide sorted keys `keys`.
fn find_key(keys: &[u32], d: usize, key: &[u32]) -> Option<usize> {
    let (mut low, mut high) = (0, keys.len() / d.max(1));
    while low < high {
        let middle = (low + high) / 2;
        match keys[middle * d..(middle + 1) * d].cmp(key) {
            std::cmp::Ordering::Less => low = middle + 1,
            std::cmp::Ordering::Greater => high = middle,
            std::cmp::Ordering::Equal => return Some(middle),
        }
    }
    None
}

/// One finite λ_d ≥ 0 per dimension.
pub fn check_lifetimes(lifetimes: &[f64], d: usize) -> Result<()> {
    if lifetimes.len() != d || lifetimes.iter().any(|l| !(l.is_finite() && *l >= 0.0)) {
        return Err(Error::InvalidParameter {
            name: "lifetimes",
            reason: format!("need {d} finite values >= 0, got {lifetimes:?}"),
        });
    }
    Ok(())
}
