//! A checkpoint of the lifetime path: the ridge weights, training error and log evidence of
//! the model with the active columns (also the Mondrian grid's, `kernel::grid`, whose
//! features have the same shape: one column per partition and row). The dense routes read the weights off their factor;
//! the gradient route (§4.2.2) runs conjugate gradients on A w = Φᵀy from its current weights.

use super::columns::Columns;
use super::solver::PathSolver;
use super::sweep::Sweep;
use super::weights::Weights;
use super::{PathOptions, PathPoint};
use crate::error::Result;
use crate::kernel::ridge::log_evidence;
use crate::linalg::cg;
use crate::linalg::dot;
use crate::linalg::operator::{check_block, Identity, LinearOperator};
use rayon::ThreadPool;

/// A = ΦᵀVΦ + αI through the rows' column positions (N × M, row-major): each row of Φ holds
/// 1/√M in its M columns; V holds the rows' `weights` (None: V = I).
pub struct RidgeGram<'a> {
    pub rows_pos: &'a [u32],
    pub m: usize,
    pub alpha: f64,
    pub dim: usize,
    pub weights: Option<&'a [f64]>,
}

impl LinearOperator for RidgeGram<'_> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &ThreadPool) -> Result<()> {
        check_block(self.dim, v, k, out)?;
        let inv_m = 1.0 / self.m as f64;
        for (o, x) in out.iter_mut().zip(v) {
            *o = self.alpha * x;
        }
        for (i, pos) in self.rows_pos.chunks_exact(self.m).enumerate() {
            let row_weight = self.weights.map_or(1.0, |w| w[i]);
            for j in 0..k {
                // v · x is x itself for v = 1: the unweighted operator keeps its bits.
                let phi_v: f64 =
                    row_weight * (pos.iter().map(|&p| v[p as usize * k + j]).sum::<f64>() * inv_m);
                for &p in pos {
                    out[p as usize * k + j] += phi_v;
                }
            }
        }
        Ok(())
    }
}

/// What a checkpoint needs of a sweep's state: the feature id of every training row in every
/// one of the `m` partitions (row-major, N × M; each row of Φ holds 1/√M in those M columns),
/// the active columns, the centred targets, their (weighted) squared norm and the rows' weights.
pub struct RidgeView<'a> {
    pub row_fid: &'a [u32],
    pub m: usize,
    pub columns: &'a Columns,
    pub yc: &'a [f64],
    pub centred: f64,
    pub weights: &'a Weights,
    pub options: &'a PathOptions,
}

impl Sweep<'_> {
    /// Weights (into `weights`, solver order), training error and evidence at this point.
    pub fn evaluate(&mut self, weights: &mut Vec<f64>, pool: &ThreadPool) -> Result<PathPoint> {
        let view = RidgeView {
            row_fid: &self.row_fid,
            m: self.m(),
            columns: &self.columns,
            yc: &self.yc,
            centred: self.centred,
            weights: &self.weights,
            options: self.options,
        };
        evaluate(&view, &mut self.solver, weights, pool)
    }
}

/// Weights (into `weights`, solver order), training error and evidence of the ridge on the
/// columns of `view` held by `solver` (the gradient route's weights advance by CG).
pub fn evaluate(
    view: &RidgeView<'_>,
    solver: &mut PathSolver,
    weights: &mut Vec<f64>,
    pool: &ThreadPool,
) -> Result<PathPoint> {
    let m = view.m;
    let scale = 1.0 / (m as f64).sqrt();
    let alpha = view.options.alpha;
    let columns = view.columns;
    let c = columns.fid_at.len();
    let rows_pos = || -> Vec<u32> {
        (view.row_fid.iter())
            .map(|&f| columns.pos_of[f as usize])
            .collect()
    };
    let mut cg_iterations = 0;
    let (z_norm2, log_det, exact) = match solver {
        PathSolver::Cholesky(st) => {
            *weights = st.weights();
            (dot(&st.z, &st.z), st.factor.log_det(), true)
        }
        PathSolver::Inverse(inv) => {
            weights.resize(c, 0.0);
            inv.apply(&columns.r, weights);
            (dot(&columns.r, weights), inv.log_det(), true)
        }
        PathSolver::Gradient(w) => {
            let positions = rows_pos();
            let gram = RidgeGram {
                rows_pos: &positions,
                m,
                alpha,
                dim: c,
                weights: view.weights.values(),
            };
            // Plain CG: preconditioning by A's diagonal took 1.5–1.8× the iterations on
            // the Mondrian grid's systems (M = 20–50 grids, α = 0.1–1; benches/RESULTS.md).
            let solved = cg::solve(
                &gram,
                &Identity(c),
                &columns.r,
                1,
                Some(w),
                view.options.gradient_tol,
                view.options.gradient_max_iter,
                pool,
            )?;
            *w = solved.x;
            cg_iterations = solved.iterations[0];
            weights.clone_from(w);
            (f64::NAN, f64::NAN, false)
        }
    };
    // With A w = r exactly, ‖y − Φw‖² = ‖y‖² − 2wᵀr + wᵀ(A − αI)w = ‖y‖² − ‖z‖² − α‖w‖²
    // (norms of y weighted by V, as A and r are)
    // (wᵀr = ‖z‖²): O(C) instead of O(NM). The subtraction loses about ε‖y‖²/RSS relative,
    // so a fit closer than 1e-6 of ‖y‖² is summed directly, as are the gradient route's.
    let centred = view.centred;
    let shortcut = centred - z_norm2 - alpha * dot(weights, weights);
    let train_sse = if exact && shortcut > 1e-6 * centred {
        shortcut
    } else {
        rows_pos()
            .chunks_exact(m)
            .zip(view.yc)
            .enumerate()
            .map(|(i, (pos, y))| {
                let fit: f64 = pos.iter().map(|&p| weights[p as usize]).sum::<f64>() * scale;
                view.weights.of(i) * (y - fit).powi(2)
            })
            .sum()
    };
    let n = view.yc.len();
    let mut log_evidence = log_evidence(n, centred, z_norm2, c, alpha, log_det);
    if view.weights.values().is_some() {
        log_evidence += view.weights.half_log_sum();
    }
    Ok(PathPoint {
        lifetime: 0.0,
        n_cuts: 0,
        n_features: c,
        train_mse: train_sse / view.weights.total(),
        validation_mse: f64::NAN,
        log_evidence,
        log_det,
        solver: solver.used(),
        cg_iterations,
        weights: None,
    })
}
