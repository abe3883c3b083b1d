//! The state of the lifetime path between cuts: which feature column every training row is
//! in, the active columns, and the solver; one cut at a time replaces a column by its two
//! children (Balog's report §4.2: the rows of the smaller child are visited to form its cross
//! products with the other columns).

use super::columns::Columns;
use super::solver::{Child, PathSolver};
use super::weights::Weights;
use super::PathOptions;
use crate::error::{Error, Result};
use crate::kernel::features::NO_COLUMN;
use crate::mondrian::birth_order::{CutEvent, RowOrder};
use crate::mondrian::MondrianTree;

/// The path's state (module docs). Feature ids number every node of every tree: tree t's
/// node j is `base[t] + j`.
pub struct Sweep<'a> {
    pub trees: &'a [MondrianTree],
    pub base: Vec<usize>,
    orders: Vec<RowOrder>,
    /// Feature id of every row in every tree (row-major, N × M).
    pub row_fid: Vec<u32>,
    pub columns: Columns,
    pub solver: PathSolver,
    /// The centred targets, their (weighted) squared norm, and the rows' weights.
    pub yc: Vec<f64>,
    pub centred: f64,
    pub weights: Weights,
    pub options: &'a PathOptions,
    cross: Vec<f64>,
    cross_other: Vec<f64>,
}

impl<'a> Sweep<'a> {
    /// The path at λ = 0: one column per tree (its root), for centred targets `yc` of rows
    /// weighing `weights`; `n_cuts` cuts will follow.
    pub fn new(
        trees: &'a [MondrianTree],
        yc: Vec<f64>,
        weights: Weights,
        n_cuts: usize,
        options: &'a PathOptions,
    ) -> Result<Self> {
        let (n, m) = (yc.len(), trees.len());
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
        let row_fid: Vec<u32> = (0..n)
            .flat_map(|_| {
                trees
                    .iter()
                    .zip(&base)
                    .map(|(t, b)| (b + t.root as usize) as u32)
            })
            .collect();
        let columns = Columns {
            pos_of: vec![NO_COLUMN; base[m]],
            ..Columns::default()
        };
        let solver = PathSolver::for_path(options, m, m + n_cuts);
        let centred = weights.square_sum(&yc);
        let mut sweep = Self {
            trees,
            base,
            orders: trees.iter().map(RowOrder::new).collect(),
            row_fid,
            columns,
            solver,
            yc,
            centred,
            weights,
            options,
            cross: Vec::new(),
            cross_other: Vec::new(),
        };
        let root_r = sweep.weights.sum(&sweep.yc, None) * sweep.scale();
        let total = sweep.weights.total();
        let n_diag = sweep.diag(total);
        for (t, tree) in trees.iter().enumerate() {
            let cross = vec![total * sweep.inv_m(); t];
            sweep.solver.append_column(&cross, n_diag, root_r)?;
            let fid = (sweep.base[t] + tree.root as usize) as u32;
            sweep.columns.push(fid, root_r, total);
        }
        Ok(sweep)
    }

    /// Number of trees M.
    pub fn m(&self) -> usize {
        self.trees.len()
    }

    /// 1/M, the value of every entry of ΦᵀΦ per shared row.
    pub fn inv_m(&self) -> f64 {
        1.0 / self.m() as f64
    }

    /// 1/√M, the value of a feature.
    pub fn scale(&self) -> f64 {
        1.0 / (self.m() as f64).sqrt()
    }

    /// A's diagonal entry for a column whose rows weigh `mass` in all.
    fn diag(&self, mass: f64) -> f64 {
        mass * self.inv_m() + self.options.alpha
    }

    /// The position of tree `t`'s node `node` among the active columns.
    pub fn position(&self, t: usize, node: u32) -> usize {
        self.columns.pos_of[self.base[t] + node as usize] as usize
    }

    /// Applies one cut: the split node's column is replaced by its two children.
    pub fn cut(&mut self, event: CutEvent) -> Result<()> {
        let (t, j) = (event.tree as usize, event.node);
        let tree = &self.trees[t];
        let m = self.m();
        let c = self.columns.fid_at.len();
        if let PathSolver::Cholesky(st) = &self.solver {
            if !self.options.is_dense(c + 1) {
                // Too many features for the dense factor: go on from its exact weights.
                self.solver = PathSolver::Gradient(st.weights());
            }
        }
        let p = self.position(t, j);
        let split_weight = self.solver.gradient_weight(p);
        let removed = self.solver.remove(&mut self.columns, p)?;
        let cut = tree.nodes[j as usize];
        let (small, other) = if tree.nodes[cut.left as usize].n_samples
            <= tree.nodes[cut.right as usize].n_samples
        {
            (cut.left, cut.right)
        } else {
            (cut.right, cut.left)
        };
        let base = self.base[t];
        let fid = |node: u32| (base + node as usize) as u32;
        let need_cross = !matches!(self.solver, PathSolver::Gradient(_));
        let other_cross = self.solver.needs_other_cross();
        let inv_m = self.inv_m();
        let mut sums = [0.0; 2];
        let mut masses = [0.0; 2];
        for (side, node) in [small, other].into_iter().enumerate() {
            let want = need_cross && (side == 0 || other_cross);
            let acc = if side == 0 {
                &mut self.cross
            } else {
                &mut self.cross_other
            };
            if want {
                acc.clear();
                acc.resize(self.columns.fid_at.len(), 0.0);
            }
            for &i in self.orders[t].of(node) {
                let row = &mut self.row_fid[i as usize * m..(i as usize + 1) * m];
                row[t] = fid(node);
                // v · x is x itself for v = 1: unweighted sums keep their bits.
                let v = self.weights.of(i as usize);
                sums[side] += v * self.yc[i as usize];
                masses[side] += v;
                let shared = v * inv_m;
                if want {
                    for (t2, &f) in row.iter().enumerate() {
                        if t2 != t {
                            acc[self.columns.pos_of[f as usize] as usize] += shared;
                        }
                    }
                }
            }
        }
        let r_small = sums[0] * self.scale();
        let mass = |side: usize, node: u32| match self.weights.values() {
            None => tree.nodes[node as usize].n_samples as f64,
            Some(_) => masses[side],
        };
        let small_child = Child {
            fid: fid(small),
            mass: mass(0, small),
            r: r_small,
            cross: need_cross.then_some(self.cross.as_slice()),
        };
        let other_child = Child {
            fid: fid(other),
            mass: mass(1, other),
            r: removed.r - r_small,
            cross: other_cross.then_some(self.cross_other.as_slice()),
        };
        let alpha = self.options.alpha;
        let diag = |mass: f64| mass * inv_m + alpha;
        self.solver.append_children(
            &mut self.columns,
            small_child,
            other_child,
            diag,
            split_weight,
        )
    }

    /// The weights in the column order of the features at this point of the path (tree,
    /// then node), from `weights` in solver order.
    pub fn weights_by_feature(&self, weights: &[f64]) -> Vec<f64> {
        let mut by_fid: Vec<(u32, f64)> = self
            .columns
            .fid_at
            .iter()
            .copied()
            .zip(weights.iter().copied())
            .collect();
        by_fid.sort_by_key(|&(f, _)| f);
        by_fid.into_iter().map(|(_, w)| w).collect()
    }
}
