//! Blocks of `k` vectors of length `n`, stored row-major (`n × k`: the `k` values of one point
//! are adjacent, so a product that streams labels once updates all `k` columns per label), and
//! the few BLAS-like operations that CG and Lanczos need.
//!
//! Reductions (dot products, Gram matrices) sum fixed chunks of `REDUCE_ROWS` rows and then add
//! the chunks' partial sums in chunk order, so results never depend on the number of threads
//! (rayon's own parallel float `sum` does not promise that).

use rayon::prelude::*;
use rayon::ThreadPool;

/// Rows per partial sum in every reduction: fixed, so the summation order is fixed.
pub const REDUCE_ROWS: usize = 8192;

/// Calls `$fixed::<KB>(args)` for `kb` in 1..=16 (fixed-length inner loops that the compiler
/// unrolls and vectorises, keeping a row in registers: the block solvers, the partition
/// kernel's products and the Mondrian sampler's row splits spend their time in such loops),
/// `$dynamic(kb, args)` otherwise.
macro_rules! by_width {
    ($kb:expr, $fixed:ident, $dynamic:ident, $($arg:expr),*) => {
        match $kb {
            1 => $fixed::<1>($($arg),*),
            2 => $fixed::<2>($($arg),*),
            3 => $fixed::<3>($($arg),*),
            4 => $fixed::<4>($($arg),*),
            5 => $fixed::<5>($($arg),*),
            6 => $fixed::<6>($($arg),*),
            7 => $fixed::<7>($($arg),*),
            8 => $fixed::<8>($($arg),*),
            9 => $fixed::<9>($($arg),*),
            10 => $fixed::<10>($($arg),*),
            11 => $fixed::<11>($($arg),*),
            12 => $fixed::<12>($($arg),*),
            13 => $fixed::<13>($($arg),*),
            14 => $fixed::<14>($($arg),*),
            15 => $fixed::<15>($($arg),*),
            16 => $fixed::<16>($($arg),*),
            _ => $dynamic($kb, $($arg),*),
        }
    };
}
pub(crate) use by_width;

/// `acc += aᵀ b` over a chunk of rows (`acc` is `ka × KB`).
fn gram_fixed<const KB: usize>(a: &[f64], ka: usize, b: &[f64], acc: &mut [f64]) {
    let (b, _) = b.as_chunks::<KB>();
    let (acc, _) = acc.as_chunks_mut::<KB>();
    for (ra, rb) in a.chunks_exact(ka).zip(b) {
        for (&x, s) in ra.iter().zip(acc.iter_mut()) {
            for j in 0..KB {
                s[j] += x * rb[j];
            }
        }
    }
}

fn gram_dynamic(kb: usize, a: &[f64], ka: usize, b: &[f64], acc: &mut [f64]) {
    for (ra, rb) in a.chunks_exact(ka).zip(b.chunks_exact(kb)) {
        for (i, &x) in ra.iter().enumerate() {
            for (s, &y) in acc[i * kb..(i + 1) * kb].iter_mut().zip(rb) {
                *s += x * y;
            }
        }
    }
}

/// `out += sign · a s` over a chunk of rows (`s` is `ka × KB`).
fn mul_small_fixed<const KB: usize>(out: &mut [f64], a: &[f64], ka: usize, s: &[f64], sign: f64) {
    let (out, _) = out.as_chunks_mut::<KB>();
    let (s, _) = s.as_chunks::<KB>();
    for (ro, ra) in out.iter_mut().zip(a.chunks_exact(ka)) {
        let mut row = *ro;
        for (&x, w) in ra.iter().zip(s) {
            let x = sign * x;
            for j in 0..KB {
                row[j] += x * w[j];
            }
        }
        *ro = row;
    }
}

fn mul_small_dynamic(kb: usize, out: &mut [f64], a: &[f64], ka: usize, s: &[f64], sign: f64) {
    for (ro, ra) in out.chunks_exact_mut(kb).zip(a.chunks_exact(ka)) {
        for (i, &x) in ra.iter().enumerate() {
            let x = sign * x;
            for (o, &w) in ro.iter_mut().zip(&s[i * kb..(i + 1) * kb]) {
                *o += x * w;
            }
        }
    }
}

/// `aᵀb` for row-major blocks `a` (`n × ka`) and `b` (`n × kb`): a `ka × kb` row-major matrix.
pub fn gram(a: &[f64], ka: usize, b: &[f64], kb: usize, pool: &ThreadPool) -> Vec<f64> {
    reduce_rows(a.len() / ka.max(1), ka * kb, pool, |rows| {
        let mut acc = vec![0.0; ka * kb];
        let (a, b) = (
            &a[rows.start * ka..rows.end * ka],
            &b[rows.start * kb..rows.end * kb],
        );
        by_width!(kb, gram_fixed, gram_dynamic, a, ka, b, &mut acc);
        acc
    })
}

/// Column-wise dot products `Σ_i a[i, j] b[i, j]` of two `n × k` blocks.
pub fn col_dots(a: &[f64], b: &[f64], k: usize, pool: &ThreadPool) -> Vec<f64> {
    reduce_rows(a.len() / k.max(1), k, pool, |rows| {
        let mut acc = vec![0.0; k];
        let (a, b) = (
            &a[rows.start * k..rows.end * k],
            &b[rows.start * k..rows.end * k],
        );
        for (ra, rb) in a.chunks_exact(k).zip(b.chunks_exact(k)) {
            for ((s, &x), &y) in acc.iter_mut().zip(ra).zip(rb) {
                *s += x * y;
            }
        }
        acc
    })
}

/// Column sums of an `n × k` block (fixed-order reduction).
pub fn col_sums(a: &[f64], k: usize, pool: &ThreadPool) -> Vec<f64> {
    reduce_rows(a.len() / k.max(1), k, pool, |rows| {
        let mut acc = vec![0.0; k];
        for row in a[rows.start * k..rows.end * k].chunks_exact(k) {
            for (s, &x) in acc.iter_mut().zip(row) {
                *s += x;
            }
        }
        acc
    })
}

/// `Σ_chunks partial(rows of the chunk)` (each `len` values) over fixed chunks of
/// `REDUCE_ROWS` of `n` rows, computed in parallel and added in chunk order, so the result
/// does not depend on the number of threads.
fn reduce_rows(
    n: usize,
    len: usize,
    pool: &ThreadPool,
    partial: impl Fn(std::ops::Range<usize>) -> Vec<f64> + Sync,
) -> Vec<f64> {
    let partials: Vec<Vec<f64>> = if n <= REDUCE_ROWS {
        vec![partial(0..n)]
    } else {
        let chunks: Vec<std::ops::Range<usize>> = (0..n)
            .step_by(REDUCE_ROWS)
            .map(|start| start..(start + REDUCE_ROWS).min(n))
            .collect();
        pool.install(|| chunks.into_par_iter().map(&partial).collect())
    };
    let mut out = vec![0.0; len];
    for p in &partials {
        for (o, v) in out.iter_mut().zip(p) {
            *o += v;
        }
    }
    out
}

/// Calls `work(rows_of_out, rows_of_a)` on matching chunks of two row-major blocks, in
/// parallel (elementwise work: the result does not depend on the chunking).
pub fn zip_rows(
    out: &mut [f64],
    k_out: usize,
    a: &[f64],
    k_a: usize,
    pool: &ThreadPool,
    work: impl Fn(&mut [f64], &[f64]) + Sync,
) {
    if out.len() / k_out.max(1) <= REDUCE_ROWS {
        work(out, a);
        return;
    }
    pool.install(|| {
        out.par_chunks_mut(REDUCE_ROWS * k_out)
            .zip(a.par_chunks(REDUCE_ROWS * k_a))
            .for_each(|(o, a)| work(o, a))
    });
}

/// Calls `work(rows)` on chunks of rows of the `n × k` block `a`, in parallel (elementwise
/// work only).
pub fn for_rows_mut(a: &mut [f64], k: usize, pool: &ThreadPool, work: impl Fn(&mut [f64]) + Sync) {
    if a.len() / k.max(1) <= REDUCE_ROWS {
        work(a);
        return;
    }
    pool.install(|| a.par_chunks_mut(REDUCE_ROWS * k).for_each(&work));
}

/// `out += sign · a s` for `a` (`n × ka`) and a small row-major `s` (`ka × kb`); `out` is
/// `n × kb`.
pub fn add_mul_small(
    out: &mut [f64],
    a: &[f64],
    ka: usize,
    s: &[f64],
    kb: usize,
    sign: f64,
    pool: &ThreadPool,
) {
    zip_rows(out, kb, a, ka, pool, |out, a| {
        by_width!(kb, mul_small_fixed, mul_small_dynamic, out, a, ka, s, sign)
    });
}

/// Columns `cols` of the `n × k` block `a`, as an `n × cols.len()` block.
pub fn select_cols(a: &[f64], k: usize, cols: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() / k.max(1) * cols.len());
    for row in a.chunks_exact(k) {
        out.extend(cols.iter().map(|&j| row[j]));
    }
    out
}

/// Writes the `n × cols.len()` block `src` into columns `cols` of the `n × k` block `dst`.
pub fn put_cols(dst: &mut [f64], k: usize, src: &[f64], cols: &[usize]) {
    let kc = cols.len();
    for (rd, rs) in dst.chunks_exact_mut(k).zip(src.chunks_exact(kc)) {
        for (&j, &v) in cols.iter().zip(rs) {
            rd[j] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::pool;

    fn block(n: usize, k: usize, seed: u64) -> Vec<f64> {
        let mut rng = crate::rng::tree_rng(seed, 0);
        (0..n * k)
            .map(|_| crate::rng::uniform(&mut rng) - 0.5)
            .collect()
    }

    #[test]
    fn reductions_match_plain_loops_and_do_not_depend_on_threads() {
        let (n, ka, kb) = (3 * REDUCE_ROWS + 17, 3, 2);
        let (a, b) = (block(n, ka, 1), block(n, kb, 2));
        let one = pool(1).expect("pool");
        let three = pool(3).expect("pool");
        let g = gram(&a, ka, &b, kb, &one);
        assert_eq!(g, gram(&a, ka, &b, kb, &three));
        for i in 0..ka {
            for j in 0..kb {
                let plain: f64 = (0..n).map(|r| a[r * ka + i] * b[r * kb + j]).sum();
                assert!((g[i * kb + j] - plain).abs() < 1e-9);
            }
        }
        let d = col_dots(&a, &a, ka, &three);
        assert_eq!(d, col_dots(&a, &a, ka, &one));
        for (i, &di) in d.iter().enumerate() {
            assert!((di - g_self(&a, ka, i)).abs() < 1e-9);
        }
        let s = col_sums(&b, kb, &three);
        let plain: f64 = (0..n).map(|r| b[r * kb + 1]).sum();
        assert!((s[1] - plain).abs() < 1e-9);
    }

    fn g_self(a: &[f64], k: usize, i: usize) -> f64 {
        a.chunks_exact(k).map(|r| r[i] * r[i]).sum()
    }

    #[test]
    fn fixed_and_dynamic_widths_agree_with_plain_loops() {
        let p = pool(2).expect("pool");
        let n = 300;
        for kb in [1, 7, 16, 17, 20] {
            let (a, b) = (block(n, 3, 5), block(n, kb, 6));
            let g = gram(&a, 3, &b, kb, &p);
            let s = block(3, kb, 7);
            let mut out = vec![0.0; n * kb];
            add_mul_small(&mut out, &a, 3, &s, kb, 1.0, &p);
            for i in 0..3 {
                for j in 0..kb {
                    let plain: f64 = (0..n).map(|r| a[r * 3 + i] * b[r * kb + j]).sum();
                    assert!((g[i * kb + j] - plain).abs() < 1e-12);
                }
            }
            for r in [0, n - 1] {
                for j in 0..kb {
                    let want: f64 = (0..3).map(|i| a[r * 3 + i] * s[i * kb + j]).sum();
                    assert!((out[r * kb + j] - want).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn small_products_and_column_moves() {
        let (n, ka, kb) = (REDUCE_ROWS + 5, 2, 3);
        let a = block(n, ka, 3);
        let s = [1.0, 2.0, 3.0, -1.0, 0.5, 0.0];
        let mut out = vec![1.0; n * kb];
        add_mul_small(&mut out, &a, ka, &s, kb, -1.0, &pool(2).expect("pool"));
        for r in [0, n - 1] {
            for j in 0..kb {
                let want = 1.0 - (a[r * ka] * s[j] + a[r * ka + 1] * s[kb + j]);
                assert!((out[r * kb + j] - want).abs() < 1e-12);
            }
        }
        let picked = select_cols(&out, kb, &[2, 0]);
        let mut back = vec![0.0; n * kb];
        put_cols(&mut back, kb, &picked, &[2, 0]);
        assert_eq!(back[kb - 1], out[kb - 1]);
        assert_eq!(back[0], out[0]);
        assert_eq!(back[1], 0.0);
    }
}
