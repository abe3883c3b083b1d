//! The three ways the lifetime path keeps the ridge solution as features split
//! (Balog et al., UAI 2016 §4.2; Balog's report §4.2 and appendix D):
//!
//! - **Cholesky** (default): the factor L of A = ΦᵀΦ + αI and z = L⁻¹Φᵀy. A cut deletes the
//!   split column c (Givens rotations, which also carry z and give g = L'⁻¹A[·, c] in O(C)),
//!   then appends the children s and o. Since φ_c = φ_s + φ_o with disjoint supports,
//!   L'⁻¹A[·, o] = g − L'⁻¹A[·, s]: one triangular solve per cut, not two. Weights by one
//!   back substitution.
//! - **Inverse** (the report's route): A⁻¹ itself, with rank-one deletion and Schur-complement
//!   appends; weights by a matrix–vector product.
//! - **Gradient** (§4.2.2, for C too large for a dense C × C matrix): the split column's weight
//!   is copied to both children (which leaves Φw unchanged), and at each checkpoint conjugate
//!   gradients on A w = Φᵀy continue from there (warm start). The paper runs one epoch of SGD
//!   per cut; CG is our choice of gradient method: it reaches the exact ridge solution when run
//!   to a tight tolerance, and is stopped by `gradient_tol` / `gradient_max_iter`.

use super::columns::{Columns, Removed};
use super::{PathOptions, SolverChoice};
use crate::error::Result;
use crate::linalg::cholesky::{apply_rotations, Cholesky, Rotation};
use crate::linalg::dot;
use crate::linalg::inverse::SymmetricInverse;

/// Which solver produced a path point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverUsed {
    Cholesky,
    Inverse,
    Gradient,
}

impl SolverUsed {
    /// The route's name, as the path reports it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cholesky => "cholesky",
            Self::Inverse => "inverse",
            Self::Gradient => "gradient",
        }
    }
}

/// A child column about to be appended: its feature id, rows' total weight, ΦᵀVy entry, and
/// (when known)
/// its cross products with the remaining columns in their current positions.
pub struct Child<'a> {
    pub fid: u32,
    pub mass: f64,
    pub r: f64,
    pub cross: Option<&'a [f64]>,
}

/// The Cholesky route's state.
#[derive(Debug, Default, Clone)]
pub struct CholeskyState {
    pub factor: Cholesky,
    pub z: Vec<f64>,
    deleted: Vec<f64>,
    rotations: Vec<Rotation>,
    /// L'⁻¹ A[·, c] of the last deleted column c.
    g: Vec<f64>,
}

impl CholeskyState {
    /// w = L⁻ᵀ z.
    pub fn weights(&self) -> Vec<f64> {
        let mut w = self.z.clone();
        self.factor.back_solve(&mut w);
        w
    }
}

/// The solver state of the path.
#[derive(Debug, Clone)]
pub enum PathSolver {
    Cholesky(CholeskyState),
    Inverse(SymmetricInverse),
    Gradient(Vec<f64>),
}

impl PathSolver {
    /// The route `options` choose for `initial` columns, with room reserved for
    /// `final_columns` (the dense routes' memory grows as its square).
    pub fn for_path(options: &PathOptions, initial: usize, final_columns: usize) -> Self {
        if !options.is_dense(initial) {
            Self::Gradient(Vec::new())
        } else if options.solver == SolverChoice::Inverse {
            Self::Inverse(SymmetricInverse::with_capacity(final_columns))
        } else {
            let mut st = CholeskyState::default();
            st.factor.reserve(match options.solver {
                SolverChoice::Auto => final_columns.min(options.max_dense_features.max(initial)),
                _ => final_columns,
            });
            Self::Cholesky(st)
        }
    }

    /// Which solver this is.
    pub fn used(&self) -> SolverUsed {
        match self {
            Self::Cholesky(_) => SolverUsed::Cholesky,
            Self::Inverse(_) => SolverUsed::Inverse,
            Self::Gradient(_) => SolverUsed::Gradient,
        }
    }

    /// Whether the solver needs both children's cross products (only the inverse does).
    pub fn needs_other_cross(&self) -> bool {
        matches!(self, Self::Inverse(_))
    }

    /// Appends a column with cross products `cross` and diagonal `diag` (initial columns).
    pub fn append_column(&mut self, cross: &[f64], diag: f64, r: f64) -> Result<()> {
        match self {
            Self::Cholesky(st) => {
                let mut h = cross.to_vec();
                st.factor.append(&mut h, diag)?;
                let n = st.factor.dim() - 1;
                let row = st.factor.row(n);
                st.z.push((r - dot(&row[..n], &st.z)) / row[n]);
                Ok(())
            }
            Self::Inverse(inv) => inv.append(cross, diag),
            Self::Gradient(w) => {
                w.push(0.0);
                Ok(())
            }
        }
    }

    /// Removes the column at position `p` (Cholesky keeps the others' order; the inverse and
    /// gradient routes move the last column into `p`).
    pub fn remove(&mut self, columns: &mut Columns, p: usize) -> Result<Removed> {
        match self {
            Self::Cholesky(st) => {
                st.factor.delete(p, &mut st.deleted, &mut st.rotations)?;
                let mut tail = st.z.remove(p);
                apply_rotations(&st.rotations, &mut st.z[p..], &mut tail);
                // g = [L[p][..p], L[p][p] · Qᵀe_last] (see linalg::cholesky tests).
                st.g.clear();
                st.g.extend_from_slice(&st.deleted[..p]);
                let start = st.g.len();
                st.g.resize(st.factor.dim(), 0.0);
                let mut unit = 1.0;
                apply_rotations(&st.rotations, &mut st.g[start..], &mut unit);
                let pivot = st.deleted[p];
                for v in &mut st.g[start..] {
                    *v *= pivot;
                }
                Ok(columns.remove_keep_order(p))
            }
            Self::Inverse(inv) => {
                inv.delete(p)?;
                Ok(columns.remove_swap(p))
            }
            Self::Gradient(w) => {
                w.swap_remove(p);
                Ok(columns.remove_swap(p))
            }
        }
    }

    /// Appends the children `small` then `other` of the removed column (whose weight, for the
    /// gradient route, was `split_weight`). `diag(mass)` is A's diagonal for a column whose
    /// rows weigh `mass` in all.
    pub fn append_children(
        &mut self,
        columns: &mut Columns,
        small: Child<'_>,
        other: Child<'_>,
        diag: impl Fn(f64) -> f64,
        split_weight: f64,
    ) -> Result<()> {
        match self {
            Self::Cholesky(st) => {
                let n = st.factor.dim();
                let mut h = small
                    .cross
                    .map(<[f64]>::to_vec)
                    .unwrap_or_else(|| vec![0.0; n]);
                st.factor.forward_solve(&mut h);
                let pivot_s = diag(small.mass) - dot(&h, &h);
                let d_s = pivot_s.max(0.0).sqrt();
                let z_s = (small.r - dot(&h, &st.z)) / d_s;
                // o's row: g − h against the old columns, then its coupling with s (A_os = 0).
                let mut row_o: Vec<f64> = st.g.iter().zip(&h).map(|(g, h)| g - h).collect();
                let coupling = -dot(&row_o, &h) / d_s;
                let pivot_o = diag(other.mass) - dot(&row_o, &row_o) - coupling * coupling;
                st.factor.push_solved(&h, pivot_s)?;
                st.z.push(z_s);
                row_o.push(coupling);
                let d_o = pivot_o.max(0.0).sqrt();
                let z_o = (other.r - dot(&row_o, &st.z)) / d_o;
                st.factor.push_solved(&row_o, pivot_o)?;
                st.z.push(z_o);
            }
            Self::Inverse(inv) => {
                let n = inv.dim();
                let zero = vec![0.0; n];
                inv.append(small.cross.unwrap_or(&zero), diag(small.mass))?;
                let mut cross_o = other.cross.unwrap_or(&zero).to_vec();
                cross_o.push(0.0);
                inv.append(&cross_o, diag(other.mass))?;
            }
            Self::Gradient(w) => {
                w.push(split_weight);
                w.push(split_weight);
            }
        }
        columns.push(small.fid, small.r, small.mass);
        columns.push(other.fid, other.r, other.mass);
        Ok(())
    }

    /// The current weight of position `p` (only needed by the gradient route's copy rule).
    pub fn gradient_weight(&self, p: usize) -> f64 {
        match self {
            Self::Gradient(w) => w[p],
            _ => 0.0,
        }
    }
}
