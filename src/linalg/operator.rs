//! The one "apply to a block of vectors" interface that conjugate gradients, Lanczos and the
//! random partition kernels share.
//!
//! A block holds `k` vectors of length `n` row-major (`n × k`, see [`super::block`]): operators
//! whose cost is dominated by reading their own data once (the partition labels) apply it to
//! all `k` columns in that one read.

use crate::error::{Error, Result};
use crate::parallel::Interrupt;
use rayon::ThreadPool;

/// A linear map `Rⁿ → Rⁿ` applied to blocks of vectors.
pub trait LinearOperator: Sync {
    /// The dimension `n`.
    fn dim(&self) -> usize;

    /// `out = A · v` for the row-major `n × k` blocks `v` and `out`.
    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()>;
}

/// Checks that `v` and `out` are `n × k` blocks.
pub fn check_block(n: usize, v: &[f64], k: usize, out: &[f64]) -> Result<()> {
    check_blocks((n, v), k, (n, out))
}

/// Checks that `v` is `n_in × k` and `out` is `n_out × k` (k ≥ 1).
pub fn check_blocks(
    (n_in, v): (usize, &[f64]),
    k: usize,
    (n_out, out): (usize, &[f64]),
) -> Result<()> {
    if k == 0 || v.len() != n_in * k || out.len() != n_out * k {
        return Err(Error::InvalidInput(format!(
            "expected {n_in} × {k} input and {n_out} × {k} output blocks, got {} and {} values",
            v.len(),
            out.len()
        )));
    }
    Ok(())
}

/// An operator whose every application first checks for a stop request: any iterative solver
/// run on it (CG, Lanczos, block Lanczos) stops at its next iteration once a stop is asked.
pub struct Interruptible<'a, A: ?Sized> {
    pub op: &'a A,
    pub interrupt: &'a Interrupt,
}

impl<A: LinearOperator + ?Sized> LinearOperator for Interruptible<'_, A> {
    fn dim(&self) -> usize {
        self.op.dim()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], pool: &ThreadPool) -> Result<()> {
        self.interrupt.check()?;
        self.op.apply(v, k, out, pool)
    }
}

/// `v ↦ diag(d)⁻¹ v`: the Jacobi preconditioner of a matrix with diagonal `d`.
#[derive(Debug, Clone)]
pub struct InverseDiagonal {
    inverse: Vec<f64>,
}

impl InverseDiagonal {
    /// Fails unless every diagonal entry is finite and positive.
    pub fn new(diagonal: &[f64]) -> Result<Self> {
        if diagonal.iter().any(|&d| !(d.is_finite() && d > 0.0)) {
            return Err(Error::InvalidInput(
                "a Jacobi preconditioner needs a positive, finite diagonal".into(),
            ));
        }
        Ok(Self {
            inverse: diagonal.iter().map(|d| 1.0 / d).collect(),
        })
    }
}

impl LinearOperator for InverseDiagonal {
    fn dim(&self) -> usize {
        self.inverse.len()
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &ThreadPool) -> Result<()> {
        check_block(self.dim(), v, k, out)?;
        // Elementwise and cheap next to any product it preconditions: one plain pass.
        for ((o, row), &d) in out
            .chunks_exact_mut(k)
            .zip(v.chunks_exact(k))
            .zip(&self.inverse)
        {
            for (o, &x) in o.iter_mut().zip(row) {
                *o = d * x;
            }
        }
        Ok(())
    }
}

/// The identity, for "no preconditioner".
#[derive(Debug, Clone, Copy)]
pub struct Identity(pub usize);

impl LinearOperator for Identity {
    fn dim(&self) -> usize {
        self.0
    }

    fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &ThreadPool) -> Result<()> {
        check_block(self.0, v, k, out)?;
        out.copy_from_slice(v);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A dense symmetric matrix as an operator (tests only).
    pub struct Dense {
        pub n: usize,
        pub a: Vec<f64>,
    }

    impl LinearOperator for Dense {
        fn dim(&self) -> usize {
            self.n
        }

        fn apply(&self, v: &[f64], k: usize, out: &mut [f64], _pool: &ThreadPool) -> Result<()> {
            check_block(self.n, v, k, out)?;
            out.fill(0.0);
            for i in 0..self.n {
                for l in 0..self.n {
                    let a = self.a[i * self.n + l];
                    for j in 0..k {
                        out[i * k + j] += a * v[l * k + j];
                    }
                }
            }
            Ok(())
        }
    }

    #[test]
    fn jacobi_divides_rows() {
        let p = crate::parallel::pool(1).expect("pool");
        let op = InverseDiagonal::new(&[2.0, 4.0]).expect("valid");
        let mut out = vec![0.0; 4];
        op.apply(&[2.0, 4.0, 8.0, 4.0], 2, &mut out, &p)
            .expect("shapes");
        assert_eq!(out, vec![1.0, 2.0, 2.0, 1.0]);
        assert!(InverseDiagonal::new(&[1.0, 0.0]).is_err());
        assert!(op.apply(&[1.0], 1, &mut [0.0], &p).is_err());
    }
}
