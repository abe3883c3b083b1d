//! The lifetime search's state (Balog's report §5.1–5.3): the M grids at the current lifetimes
//! (λ_d), the ridge solution on their occupied cells, and moves of one λ_d past cuts of its
//! dimension (what a cut does to the cells: `moves.rs`). Each column change goes through
//! the lifetime path's solver (`kernel::path::solver`: a Cholesky factor updated by Givens
//! rotations and triangular solves, the report's explicit inverse, or conjugate gradients for
//! C beyond the dense limit), O(C² + C·M + rows·M) per column on the dense routes.
//!
//! Validation points take part in the knots (so they sit exactly on the grids' cells) but not
//! in the fit: a validation point lies in its grid's cell when a training point shares it, and
//! otherwise contributes nothing for that grid.
//!
//! Row weights (the kernel ridge's meaning, `kernel::path::weights`) weight the fit's sums and
//! each error by its rows' weights.
//!
//! [`GridSearch::try_moves`] scores candidate moves by applying them, evaluating, and restoring
//! a snapshot of the state (bit for bit); [`GridSearch::move_to`] keeps one.

use super::missing_cut;
use super::process::{Knots, Process};
use crate::error::{Error, Result};
use crate::kernel::features::NO_COLUMN;
use crate::kernel::path::columns::Columns;
use crate::kernel::path::evaluate::{evaluate, RidgeView};
use crate::kernel::path::solver::PathSolver;
use crate::kernel::path::weights::Weights;
use crate::kernel::path::{PathOptions, SolverUsed};
use crate::points::{for_each_block, Points};
use ndarray::ArrayView1;
use rayon::ThreadPool;

/// One evaluated state of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPoint {
    pub lifetimes: Vec<f64>,
    pub n_features: usize,
    pub train_mse: f64,
    /// NaN without validation points.
    pub validation_mse: f64,
    /// At the fixed α with σ² profiled (NaN on the gradient route).
    pub log_evidence: f64,
    pub solver: SolverUsed,
    pub cg_iterations: usize,
}

/// What a move changes, kept whole so that a trial can be undone exactly.
#[derive(Debug, Clone)]
pub(super) struct State {
    /// Per dimension, how many of its cuts (in birth order over all grids) are active.
    pub(super) active: Vec<usize>,
    /// Per (grid, dimension), the active cuts' gaps, sorted.
    pub(super) cuts: Vec<Vec<u32>>,
    /// Feature id of every training row's cell in every grid (row-major, N × M).
    pub(super) row_fid: Vec<u32>,
    /// The same for validation rows; `NO_COLUMN` where no training row shares the cell.
    pub(super) val_fid: Vec<u32>,
    pub(super) columns: Columns,
    pub(super) solver: PathSolver,
}

/// The search (module docs). Points `0..n_train` of the process's knots are the training
/// rows, the rest the validation rows.
pub struct GridSearch {
    pub process: Process,
    pub(super) n_train: usize,
    pub mean: f64,
    pub(super) yc: Vec<f64>,
    centred: f64,
    pub(super) row_weights: Weights,
    y_val: Vec<f64>,
    val_weights: Weights,
    pub options: PathOptions,
    pub(super) state: State,
    weights: Vec<f64>,
    /// Scratch for the cross products of new columns.
    pub(super) cross: Vec<f64>,
    pub(super) cross_other: Vec<f64>,
}

/// A training record of a move: (feature id, on the upper side, row).
pub(super) type Record = (u32, bool, u32);

impl GridSearch {
    /// M grids (λ = 0: one cell each) on the training rows `x` with targets `y`, and
    /// validation rows `x_val` with `y_val` (possibly none); `weights` and `val_weights`
    /// weigh the rows (None: all 1). The knots need every row at once: both matrices are
    /// read into one, a block of rows at a time.
    #[allow(clippy::too_many_arguments)]
    pub fn new<P: Points, Q: Points>(
        x: &P,
        y: &[f64],
        weights: Option<&[f64]>,
        x_val: &Q,
        y_val: &[f64],
        val_weights: Option<&[f64]>,
        n_grids: usize,
        seed: u64,
        options: PathOptions,
    ) -> Result<Self> {
        let (n, d) = (y.len(), x.n_features());
        if x_val.n_features() != d {
            return Err(Error::InvalidInput(format!(
                "X_val has {} features, X has {d}",
                x_val.n_features()
            )));
        }
        if n == 0 || x.n_rows() != n || x_val.n_rows() != y_val.len() {
            return Err(Error::InvalidInput(format!(
                "{} training rows for {n} targets and {} validation rows for {} targets",
                x.n_rows(),
                x_val.n_rows(),
                y_val.len()
            )));
        }
        if y.iter().chain(y_val).any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput("y holds NaN or infinite values".into()));
        }
        let mut points = Vec::with_capacity((n + y_val.len()) * d);
        for_each_block(x, None, |_, rows| points.extend_from_slice(rows));
        for_each_block(x_val, None, |_, rows| points.extend_from_slice(rows));
        let process = Process::new(Knots::new(&points, d)?, n_grids, seed)?;
        let m = n_grids;
        if m.saturating_mul(n) >= NO_COLUMN as usize {
            return Err(Error::InvalidParameter {
                name: "n_estimators",
                reason: format!("{m} grids on {n} rows give too many cells to number"),
            });
        }
        let row_weights = Weights::new(n, weights.map(ArrayView1::from).as_ref())?;
        let val_weights = Weights::new(y_val.len(), val_weights.map(ArrayView1::from).as_ref())?;
        let mean = row_weights.mean(y, || y.iter().sum::<f64>() / n as f64);
        let yc: Vec<f64> = y.iter().map(|v| v - mean).collect();
        let centred = row_weights.square_sum(&yc);
        let state = State {
            active: vec![0; d],
            cuts: vec![Vec::new(); m * d],
            row_fid: (0..n).flat_map(|_| 0..m as u32).collect(),
            val_fid: (0..y_val.len()).flat_map(|_| 0..m as u32).collect(),
            columns: Columns {
                pos_of: vec![NO_COLUMN; m],
                ..Columns::default()
            },
            solver: PathSolver::for_path(&options, m, m),
        };
        let mut search = Self {
            process,
            n_train: n,
            mean,
            yc,
            centred,
            row_weights,
            y_val: y_val.to_vec(),
            val_weights,
            options,
            state,
            weights: Vec::new(),
            cross: Vec::new(),
            cross_other: Vec::new(),
        };
        let root_r = search.row_weights.sum(&search.yc, None) * search.scale();
        let total = search.row_weights.total();
        let diag = search.diag(total);
        for t in 0..m {
            let cross = vec![total / m as f64; t];
            search.state.solver.append_column(&cross, diag, root_r)?;
            search.state.columns.push(t as u32, root_r, total);
        }
        Ok(search)
    }

    /// Number of grids M.
    pub fn m(&self) -> usize {
        self.process.n_grids
    }

    /// Number of dimensions D.
    pub fn d(&self) -> usize {
        self.process.knots.d
    }

    fn scale(&self) -> f64 {
        1.0 / (self.m() as f64).sqrt()
    }

    fn diag(&self, mass: f64) -> f64 {
        mass / self.m() as f64 + self.options.alpha
    }

    /// Per dimension, how many of its cuts are active.
    pub fn active(&self) -> &[usize] {
        &self.state.active
    }

    /// The current lifetimes: λ_d is the birth time of the last active cut of d (0 if none).
    pub fn lifetimes(&mut self) -> Vec<f64> {
        (0..self.d())
            .map(|k| {
                let count = self.state.active[k];
                self.process.lifetime_after(k, count).unwrap_or(0.0)
            })
            .collect()
    }

    /// Moves dimension `dim` to `count` active cuts (adding or removing cuts in birth order);
    /// false, with nothing changed, when fewer cuts exist; on an error the state is as it was.
    pub fn move_to(&mut self, dim: usize, count: usize) -> Result<bool> {
        let saved = self.state.clone();
        let moved = self.apply_move(dim, count);
        if moved.is_err() {
            self.state = saved;
        }
        moved
    }

    /// [`Self::move_to`] without the restore on error.
    fn apply_move(&mut self, dim: usize, count: usize) -> Result<bool> {
        if dim >= self.d() {
            return Err(Error::InvalidInput(format!(
                "dimension {dim} out of range for {} features",
                self.d()
            )));
        }
        if count > 0 && self.process.event(dim, count - 1).is_none() {
            return Ok(false);
        }
        while self.state.active[dim] < count {
            let k = self.state.active[dim];
            let cut = self.process.event(dim, k).ok_or_else(missing_cut)?;
            self.add_cut(cut.grid as usize, dim, cut.gap)?;
            self.state.active[dim] += 1;
        }
        while self.state.active[dim] > count {
            let k = self.state.active[dim] - 1;
            let cut = self.process.event(dim, k).ok_or_else(missing_cut)?;
            self.remove_cut(cut.grid as usize, dim, cut.gap)?;
            self.state.active[dim] -= 1;
        }
        Ok(true)
    }

    /// For each of `counts` in turn, moves `dim` there and evaluates; then restores the state
    /// as it was. Stops at the first count beyond the cuts that exist.
    pub fn try_moves(
        &mut self,
        dim: usize,
        counts: &[usize],
        pool: &ThreadPool,
    ) -> Result<Vec<GridPoint>> {
        let saved = self.state.clone();
        let mut points = Vec::with_capacity(counts.len());
        let mut outcome = Ok(());
        for &count in counts {
            match self.apply_move(dim, count) {
                Ok(true) => match self.evaluate(pool) {
                    Ok(point) => points.push(point),
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                },
                Ok(false) => break,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        self.state = saved;
        outcome.map(|()| points)
    }

    /// Weights, training and validation error at the current lifetimes.
    pub fn evaluate(&mut self, pool: &ThreadPool) -> Result<GridPoint> {
        let m = self.m();
        let view = RidgeView {
            row_fid: &self.state.row_fid,
            m,
            columns: &self.state.columns,
            yc: &self.yc,
            centred: self.centred,
            weights: &self.row_weights,
            options: &self.options,
        };
        let point = evaluate(&view, &mut self.state.solver, &mut self.weights, pool)?;
        let validation_mse = if self.y_val.is_empty() {
            f64::NAN
        } else {
            let predictions = self.validation_predictions();
            self.val_weights
                .mean_squared_error(&predictions, &self.y_val)
        };
        Ok(GridPoint {
            lifetimes: self.lifetimes(),
            n_features: point.n_features,
            train_mse: point.train_mse,
            validation_mse,
            log_evidence: point.log_evidence,
            solver: point.solver,
            cg_iterations: point.cg_iterations,
        })
    }

    /// ȳ + φ(x)·w for the validation rows, with the weights of the last [`Self::evaluate`].
    pub fn validation_predictions(&self) -> Vec<f64> {
        let (m, scale) = (self.m(), self.scale());
        let pos_of = &self.state.columns.pos_of;
        (self.state.val_fid.chunks_exact(m))
            .map(|fids| {
                let sum: f64 = (fids.iter().filter(|&&f| f != NO_COLUMN))
                    .map(|&f| self.weights[pos_of[f as usize] as usize])
                    .sum();
                self.mean + scale * sum
            })
            .collect()
    }

    /// The weight of every training row's cell in every grid (N × M, row-major), with the
    /// weights of the last [`Self::evaluate`]: all the weights, in a layout a fit from scratch
    /// can be compared with.
    pub fn row_weights(&self) -> Vec<f64> {
        let pos_of = &self.state.columns.pos_of;
        (self.state.row_fid.iter())
            .map(|&f| self.weights[pos_of[f as usize] as usize])
            .collect()
    }
}
