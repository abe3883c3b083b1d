//! The inner loops of the partition kernel's products: scatter rows into cluster sums, gather
//! cluster sums back into rows, compiled for each block width up to 16 (the loops then keep a
//! row in registers and need one bounds check per label).

use crate::linalg::block::by_width;

/// `sums[c] += w_i · v_i` for each row `i` with label `c` ([`FRESH`](super::kernel::FRESH)
/// rows are skipped: the range check fails for them).
#[inline]
pub(super) fn scatter(labels: &[u32], w: Option<&[f64]>, v: &[f64], k: usize, sums: &mut [f64]) {
    by_width!(k, scatter_fixed, scatter_dynamic, labels, w, v, sums)
}

#[inline]
fn scatter_fixed<const K: usize>(labels: &[u32], w: Option<&[f64]>, v: &[f64], sums: &mut [f64]) {
    let (v, _) = v.as_chunks::<K>();
    let (sums, _) = sums.as_chunks_mut::<K>();
    match w {
        None => {
            for (&c, row) in labels.iter().zip(v) {
                if let Some(s) = sums.get_mut(c as usize) {
                    for j in 0..K {
                        s[j] += row[j];
                    }
                }
            }
        }
        Some(w) => {
            for ((&c, row), &wi) in labels.iter().zip(v).zip(w) {
                if let Some(s) = sums.get_mut(c as usize) {
                    for j in 0..K {
                        s[j] += wi * row[j];
                    }
                }
            }
        }
    }
}

fn scatter_dynamic(k: usize, labels: &[u32], w: Option<&[f64]>, v: &[f64], sums: &mut [f64]) {
    for (i, (&c, row)) in labels.iter().zip(v.chunks_exact(k)).enumerate() {
        let at = c as usize * k;
        let wi = w.map_or(1.0, |w| w[i]);
        if let Some(s) = sums.get_mut(at..at + k) {
            s.iter_mut().zip(row).for_each(|(s, &x)| *s += wi * x);
        }
    }
}

/// `out_i += w_i · sums[c_i]` for each row `i` ([`FRESH`](super::FRESH) rows get nothing).
#[inline]
pub(super) fn gather(labels: &[u32], w: Option<&[f64]>, sums: &[f64], k: usize, out: &mut [f64]) {
    by_width!(k, gather_fixed, gather_dynamic, labels, w, sums, out)
}

#[inline]
fn gather_fixed<const K: usize>(labels: &[u32], w: Option<&[f64]>, sums: &[f64], out: &mut [f64]) {
    let (sums, _) = sums.as_chunks::<K>();
    let (out, _) = out.as_chunks_mut::<K>();
    match w {
        None => {
            for (&c, row) in labels.iter().zip(out) {
                if let Some(s) = sums.get(c as usize) {
                    for j in 0..K {
                        row[j] += s[j];
                    }
                }
            }
        }
        Some(w) => {
            for ((&c, row), &wi) in labels.iter().zip(out).zip(w) {
                if let Some(s) = sums.get(c as usize) {
                    for j in 0..K {
                        row[j] += wi * s[j];
                    }
                }
            }
        }
    }
}

fn gather_dynamic(k: usize, labels: &[u32], w: Option<&[f64]>, sums: &[f64], out: &mut [f64]) {
    for (i, (&c, row)) in labels.iter().zip(out.chunks_exact_mut(k)).enumerate() {
        let at = c as usize * k;
        let wi = w.map_or(1.0, |w| w[i]);
        if let Some(s) = sums.get(at..at + k) {
            row.iter_mut().zip(s).for_each(|(o, &x)| *o += wi * x);
        }
    }
}
