//! The lifetime path (Balog et al., UAI 2016 §4; Balog's report §4.2, appendix D): sweep λ
//! from 0 to Λ through every cut of every tree in birth-time order. At λ = 0 each tree is one
//! cell (Φ is N × M with every entry 1/√M); each cut replaces one feature column by its two
//! children. The ridge solution follows in O(C²) per cut (see `path_solver`), and at each
//! checkpoint the path records training and validation error and the log marginal likelihood
//! (`ridge.rs`) at a cost of one back substitution plus O((N + N_val) M).
//!
//! A checkpoint after the k-th cut describes the model on [τ_k, τ_{k+1}); it is evaluated at
//! λ = τ_k (or at the requested λ), which is what the validation points' stay probabilities use.

use super::events::{cuts_in_birth_order, CutEvent, RowOrder};
use super::features::NO_COLUMN;
use super::path_solver::{Child, CholeskyState, PathSolver, Removed, SolverUsed};
use super::ridge::{check_alpha, check_targets, log_evidence};
use super::validation::ValidationPaths;
use crate::error::{Error, Result};
use crate::forest::MondrianForest;
use crate::linalg::cholesky::dot;
use crate::linalg::inverse::SymmetricInverse;
use ndarray::{ArrayView1, ArrayView2};

/// Which solver the path uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverChoice {
    /// Cholesky while C ≤ `max_dense_features`, then the gradient route.
    Auto,
    Cholesky,
    Inverse,
    Gradient,
}

/// Settings of the path.
#[derive(Debug, Clone)]
pub struct PathOptions {
    pub alpha: f64,
    pub solver: SolverChoice,
    pub max_dense_features: usize,
    /// Conjugate gradients stop when ‖Φᵀy − Aw‖ ≤ tol · ‖Φᵀy‖ or after `gradient_max_iter`.
    pub gradient_tol: f64,
    pub gradient_max_iter: usize,
    /// Keep every checkpoint's weights (tests and small problems).
    pub record_weights: bool,
}

/// Where the path stops to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub enum Checkpoints {
    /// At λ = 0 and after every cut.
    EveryCut,
    /// At λ = 0 and after about every (n_cuts / k)-th cut, k checkpoints in all after λ = 0.
    Count(usize),
    /// At these lifetimes.
    Lifetimes(Vec<f64>),
}

/// One evaluated point of the path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPoint {
    pub lifetime: f64,
    pub n_cuts: usize,
    pub n_features: usize,
    pub train_mse: f64,
    /// NaN without validation data.
    pub validation_mse: f64,
    /// NaN for the gradient route (it has no determinant).
    pub log_evidence: f64,
    pub log_det: f64,
    pub solver: SolverUsed,
    pub cg_iterations: usize,
    /// The weights in the column order of the features at this lifetime (tree, then node).
    pub weights: Option<Vec<f64>>,
}

/// The active feature columns in solver order, and per column Φᵀy and its number of rows.
#[derive(Debug, Default)]
pub struct Columns {
    pub fid_at: Vec<u32>,
    pub pos_of: Vec<u32>,
    pub r: Vec<f64>,
    pub count: Vec<u32>,
}

impl Columns {
    fn take(&mut self, p: usize) -> Removed {
        self.pos_of[self.fid_at[p] as usize] = NO_COLUMN;
        Removed {
            r: self.r[p],
            count: self.count[p],
        }
    }

    /// Removes position `p`, shifting the later ones down.
    pub fn remove_keep_order(&mut self, p: usize) -> Removed {
        let removed = self.take(p);
        self.fid_at.remove(p);
        self.r.remove(p);
        self.count.remove(p);
        for (k, &fid) in self.fid_at.iter().enumerate().skip(p) {
            self.pos_of[fid as usize] = k as u32;
        }
        removed
    }

    /// Removes position `p`, moving the last column into it.
    pub fn remove_swap(&mut self, p: usize) -> Removed {
        let removed = self.take(p);
        self.fid_at.swap_remove(p);
        self.r.swap_remove(p);
        self.count.swap_remove(p);
        if let Some(&fid) = self.fid_at.get(p) {
            self.pos_of[fid as usize] = p as u32;
        }
        removed
    }

    /// Appends a column.
    pub fn push(&mut self, fid: u32, r: f64, count: u32) {
        self.pos_of[fid as usize] = self.fid_at.len() as u32;
        self.fid_at.push(fid);
        self.r.push(r);
        self.count.push(count);
    }
}

/// (number of cuts applied, lifetime) at each checkpoint, in order.
fn checkpoint_plan(
    events: &[CutEvent],
    checkpoints: &Checkpoints,
    max_lifetime: f64,
) -> Result<Vec<(usize, f64)>> {
    let e = events.len();
    let time = |k: usize| if k == 0 { 0.0 } else { events[k - 1].time };
    Ok(match checkpoints {
        Checkpoints::EveryCut => (0..=e).map(|k| (k, time(k))).collect(),
        Checkpoints::Count(count) => {
            let mut plan = vec![(0, 0.0)];
            for i in 1..=(*count).max(1) {
                let k = (i * e).div_ceil((*count).max(1));
                if k > plan.last().map_or(0, |p| p.0) {
                    plan.push((k, time(k)));
                }
            }
            plan
        }
        Checkpoints::Lifetimes(lifetimes) => {
            if lifetimes.iter().any(|l| !(*l >= 0.0 && *l <= max_lifetime)) {
                return Err(Error::InvalidParameter {
                    name: "lifetimes",
                    reason: format!("must lie in [0, max_lifetime = {max_lifetime}]"),
                });
            }
            let mut sorted = lifetimes.clone();
            sorted.sort_by(f64::total_cmp);
            sorted
                .into_iter()
                .map(|l| (events.partition_point(|ev| ev.time <= l), l))
                .collect()
        }
    })
}

/// Runs the path on `forest` (trees sampled on the training points with lifetime ≥
/// `max_lifetime`) with training targets `y` and optional validation data, calling
/// `progress(cuts_done, n_cuts)` at each checkpoint.
pub fn lifetime_path(
    forest: &MondrianForest,
    y: &ArrayView1<f64>,
    validation: Option<(&ArrayView2<f64>, &ArrayView1<f64>)>,
    max_lifetime: f64,
    checkpoints: &Checkpoints,
    options: &PathOptions,
    mut progress: impl FnMut(usize, usize) -> Result<()>,
) -> Result<Vec<PathPoint>> {
    check_alpha(options.alpha)?;
    forest.check_fitted()?;
    check_targets(y, forest.n_rows())?;
    if !(max_lifetime >= 0.0 && max_lifetime <= forest.params.lifetime) {
        return Err(Error::InvalidParameter {
            name: "max_lifetime",
            reason: format!(
                "must lie in [0, {}] (the trees' lifetime), got {max_lifetime}",
                forest.params.lifetime
            ),
        });
    }
    let trees = &forest.trees;
    let (n, m) = (forest.n_rows(), trees.len());
    let mut validation = match validation {
        Some((x, yv)) => {
            forest.check_points(x)?;
            check_targets(yv, x.nrows())?;
            let x = x.as_standard_layout();
            let flat = x.as_slice().unwrap_or(&[]);
            Some(ValidationPaths::new(
                trees,
                flat,
                forest.n_features,
                &yv.to_vec(),
            ))
        }
        None => None,
    };
    let events = cuts_in_birth_order(trees, max_lifetime);
    let plan = checkpoint_plan(&events, checkpoints, max_lifetime)?;
    let last_cut = plan.last().map_or(0, |p| p.0);
    let orders: Vec<RowOrder> = trees.iter().map(RowOrder::new).collect();
    let mut base = Vec::with_capacity(m + 1);
    base.push(0usize);
    for tree in trees {
        base.push(base[base.len() - 1] + tree.n_nodes());
    }
    if base[m] >= NO_COLUMN as usize {
        return Err(Error::InvalidInput(
            "too many tree nodes for the path".into(),
        ));
    }
    let mean = y.sum() / n as f64;
    let yc: Vec<f64> = y.iter().map(|v| v - mean).collect();
    let centred: f64 = dot(&yc, &yc);
    let (inv_m, scale) = (1.0 / m as f64, 1.0 / (m as f64).sqrt());
    let alpha = options.alpha;
    let diag = |count: u32| count as f64 * inv_m + alpha;

    // Feature id of every row in every tree (row-major), starting at the roots.
    let mut row_fid: Vec<u32> = (0..n)
        .flat_map(|_| {
            trees
                .iter()
                .zip(&base)
                .map(|(t, b)| (b + t.root as usize) as u32)
        })
        .collect();
    let mut columns = Columns {
        pos_of: vec![NO_COLUMN; base[m]],
        ..Columns::default()
    };
    let final_columns = m + last_cut;
    let dense = |c: usize| match options.solver {
        SolverChoice::Auto => c <= options.max_dense_features,
        SolverChoice::Cholesky | SolverChoice::Inverse => true,
        SolverChoice::Gradient => false,
    };
    let mut solver = if !dense(m) {
        PathSolver::Gradient(Vec::new())
    } else if options.solver == SolverChoice::Inverse {
        PathSolver::Inverse(SymmetricInverse::with_capacity(final_columns))
    } else {
        let mut st = CholeskyState::default();
        st.factor.reserve(match options.solver {
            SolverChoice::Auto => final_columns.min(options.max_dense_features.max(m)),
            _ => final_columns,
        });
        PathSolver::Cholesky(st)
    };
    let root_r = yc.iter().sum::<f64>() * scale;
    for (t, tree) in trees.iter().enumerate() {
        let cross = vec![n as f64 * inv_m; t];
        solver.append_column(&cross, diag(n as u32), root_r)?;
        columns.push((base[t] + tree.root as usize) as u32, root_r, n as u32);
    }

    let mut points = Vec::with_capacity(plan.len());
    let mut cross = Vec::new();
    let mut cross_other = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    let mut plan_at = 0;
    for k in 0..=last_cut {
        if k > 0 {
            let event = events[k - 1];
            let (t, j) = (event.tree as usize, event.node);
            let tree = &trees[t];
            let c = columns.fid_at.len();
            if let PathSolver::Cholesky(st) = &solver {
                if !dense(c + 1) {
                    // Too many features for the dense factor: go on from its exact weights.
                    solver = PathSolver::Gradient(st.weights());
                }
            }
            let p = columns.pos_of[base[t] + j as usize] as usize;
            let split_weight = solver.gradient_weight(p);
            let removed = solver.remove(&mut columns, p)?;
            let cut = tree.nodes[j as usize];
            let (small, other) = if tree.nodes[cut.left as usize].n_samples
                <= tree.nodes[cut.right as usize].n_samples
            {
                (cut.left, cut.right)
            } else {
                (cut.right, cut.left)
            };
            let fid = |node: u32| (base[t] + node as usize) as u32;
            let need_cross = !matches!(solver, PathSolver::Gradient(_));
            let mut sums = [0.0; 2];
            for (side, node) in [small, other].into_iter().enumerate() {
                let want = need_cross && (side == 0 || solver.needs_other_cross());
                let acc = if side == 0 {
                    &mut cross
                } else {
                    &mut cross_other
                };
                if want {
                    acc.clear();
                    acc.resize(columns.fid_at.len(), 0.0);
                }
                for &i in orders[t].of(tree, node) {
                    let row = &mut row_fid[i as usize * m..(i as usize + 1) * m];
                    row[t] = fid(node);
                    sums[side] += yc[i as usize];
                    if want {
                        for (t2, &f) in row.iter().enumerate() {
                            if t2 != t {
                                acc[columns.pos_of[f as usize] as usize] += inv_m;
                            }
                        }
                    }
                }
            }
            let r_small = sums[0] * scale;
            let other_cross = solver.needs_other_cross();
            let small_child = Child {
                fid: fid(small),
                count: tree.nodes[small as usize].n_samples,
                r: r_small,
                cross: need_cross.then_some(cross.as_slice()),
            };
            let other_child = Child {
                fid: fid(other),
                count: tree.nodes[other as usize].n_samples,
                r: removed.r - r_small,
                cross: other_cross.then_some(cross_other.as_slice()),
            };
            solver.append_children(&mut columns, small_child, other_child, diag, split_weight)?;
        }
        while plan_at < plan.len() && plan[plan_at].0 == k {
            let lifetime = plan[plan_at].1;
            let point = evaluate(
                &mut solver,
                &columns,
                &row_fid,
                &yc,
                centred,
                (m, alpha),
                &mut weights,
                options,
            );
            let validation_mse = match validation.as_mut() {
                Some(v) => {
                    let pred = v.predict(lifetime, mean, |t, node| {
                        weights[columns.pos_of[base[t] + node as usize] as usize]
                    });
                    pred.iter()
                        .zip(&v.y)
                        .map(|(p, y)| (p - y).powi(2))
                        .sum::<f64>()
                        / v.len().max(1) as f64
                }
                None => f64::NAN,
            };
            let recorded = options.record_weights.then(|| {
                let mut by_fid: Vec<(u32, f64)> = columns
                    .fid_at
                    .iter()
                    .copied()
                    .zip(weights.iter().copied())
                    .collect();
                by_fid.sort_by_key(|&(f, _)| f);
                by_fid.into_iter().map(|(_, w)| w).collect()
            });
            points.push(PathPoint {
                lifetime,
                n_cuts: k,
                validation_mse,
                weights: recorded,
                ..point
            });
            plan_at += 1;
            progress(k, last_cut)?;
        }
    }
    Ok(points)
}

/// Weights (into `weights`), training error and evidence at a checkpoint.
#[allow(clippy::too_many_arguments)]
fn evaluate(
    solver: &mut PathSolver,
    columns: &Columns,
    row_fid: &[u32],
    yc: &[f64],
    centred: f64,
    (m, alpha): (usize, f64),
    weights: &mut Vec<f64>,
    options: &PathOptions,
) -> PathPoint {
    let scale = 1.0 / (m as f64).sqrt();
    let c = columns.fid_at.len();
    let rows_pos = || -> Vec<u32> {
        row_fid
            .iter()
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
            cg_iterations = conjugate_gradient(w, &columns.r, &rows_pos(), m, alpha, options);
            weights.clone_from(w);
            (f64::NAN, f64::NAN, false)
        }
    };
    // With A w = r exactly, ‖y − Φw‖² = ‖y‖² − 2wᵀr + wᵀ(A − αI)w = ‖y‖² − ‖z‖² − α‖w‖²
    // (wᵀr = ‖z‖²): O(C) instead of O(NM). The subtraction loses about ε‖y‖²/RSS relative, so
    // a fit closer than 1e-6 of ‖y‖² is summed directly, as are the gradient route's weights.
    let shortcut = centred - z_norm2 - alpha * dot(weights, weights);
    let train_sse = if exact && shortcut > 1e-6 * centred {
        shortcut
    } else {
        rows_pos()
            .chunks_exact(m)
            .zip(yc)
            .map(|(pos, y)| {
                let fit: f64 = pos.iter().map(|&p| weights[p as usize]).sum::<f64>() * scale;
                (y - fit).powi(2)
            })
            .sum()
    };
    let n = yc.len();
    PathPoint {
        lifetime: 0.0,
        n_cuts: 0,
        n_features: c,
        train_mse: train_sse / n as f64,
        validation_mse: f64::NAN,
        log_evidence: log_evidence(n, centred, z_norm2, c, alpha, log_det),
        log_det,
        solver: solver.used(),
        cg_iterations,
        weights: None,
    }
}

/// Conjugate gradients on (ΦᵀΦ + αI) w = r from the current `w`; returns the iterations run.
fn conjugate_gradient(
    w: &mut [f64],
    r: &[f64],
    rows_pos: &[u32],
    m: usize,
    alpha: f64,
    options: &PathOptions,
) -> usize {
    let inv_m = 1.0 / m as f64;
    let apply = |v: &[f64], out: &mut Vec<f64>| {
        out.clear();
        out.extend(v.iter().map(|x| alpha * x));
        for pos in rows_pos.chunks_exact(m) {
            let phi_v: f64 = pos.iter().map(|&p| v[p as usize]).sum::<f64>() * inv_m;
            for &p in pos {
                out[p as usize] += phi_v;
            }
        }
    };
    let mut aw = Vec::new();
    apply(w, &mut aw);
    let mut res: Vec<f64> = r.iter().zip(&aw).map(|(r, a)| r - a).collect();
    let target = options.gradient_tol * dot(r, r).sqrt();
    let mut dir = res.clone();
    let mut rs = dot(&res, &res);
    let mut ad = Vec::new();
    for it in 0..options.gradient_max_iter {
        if rs.sqrt() <= target {
            return it;
        }
        apply(&dir, &mut ad);
        let step = rs / dot(&dir, &ad);
        for ((wi, ri), (di, adi)) in w.iter_mut().zip(res.iter_mut()).zip(dir.iter().zip(&ad)) {
            *wi += step * di;
            *ri -= step * adi;
        }
        let rs_new = dot(&res, &res);
        let beta = rs_new / rs;
        rs = rs_new;
        for (di, ri) in dir.iter_mut().zip(&res) {
            *di = ri + beta * *di;
        }
    }
    options.gradient_max_iter
}
