//! The state of the lifetime path between cuts: which feature column every training row is
//! in, the active columns, and the solver; one cut at a time replaces a column by its two
//! children (Balog's report §4.2: the rows of the smaller child are visited to form its cross
//! products with the other columns).

use super::columns::Columns;
use super::solver::{Child, PathSolver};
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
    /// The centred targets and their squared norm.
    pub yc: Vec<f64>,
    pub centred: f64,
    pub options: &'a PathOptions,
    cross: Vec<f64>,
    cross_other: Vec<f64>,
}

impl<'a> Sweep<'a> {
    /// The path at λ = 0: one column per tree (its root), for centred targets `yc`; `n_cuts`
    /// cuts will follow.
    pub fn new(
        trees: &'a [MondrianTree],
        yc: Vec<f64>,
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
        let centred = crate::linalg::dot(&yc, &yc);
        let mut sweep = Self {
            trees,
            base,
            orders: trees.iter().map(RowOrder::new).collect(),
            row_fid,
            columns,
            solver,
            yc,
            centred,
            options,
            cross: Vec::new(),
            cross_other: Vec::new(),
        };
        let root_r = sweep.yc.iter().sum::<f64>() * sweep.scale();
        let n_diag = sweep.diag(n as u32);
        for (t, tree) in trees.iter().enumerate() {
            let cross = vec![n as f64 * sweep.inv_m(); t];
            sweep.solver.append_column(&cross, n_diag, root_r)?;
            let fid = (sweep.base[t] + tree.root as usize) as u32;
            sweep.columns.push(fid, root_r, n as u32);
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

    /// A's diagonal entry for a column of `count` rows.
    fn diag(&self, count: u32) -> f64 {
        count as f64 * self.inv_m() + self.options.alpha
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
                sums[side] += self.yc[i as usize];
                if want {
                    for (t2, &f) in row.iter().enumerate() {
                        if t2 != t {
                            acc[self.columns.pos_of[f as usize] as usize] += inv_m;
                        }
                    }
                }
            }
        }
        let r_small = sums[0] * self.scale();
        let small_child = Child {
            fid: fid(small),
            count: tree.nodes[small as usize].n_samples,
            r: r_small,
            cross: need_cross.then_some(self.cross.as_slice()),
        };
        let other_child = Child {
            fid: fid(other),
            count: tree.nodes[other as usize].n_samples,
            r: removed.r - r_small,
            cross: other_cross.then_some(self.cross_other.as_slice()),
        };
        let alpha = self.options.alpha;
        let diag = |count: u32| count as f64 * inv_m + alpha;
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
