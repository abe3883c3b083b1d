//! The hot loop of batch sampling: split a block's rows by a cut and compute both children's
//! data boxes in the same pass.
//!
//! Rows are `d` consecutive values in a working copy kept in partition order, so every level
//! of the tree streams through memory. For `d ≤ 16` the loop is compiled for that exact width,
//! which keeps the four running boxes in registers instead of re-loading them per row.

use crate::linalg::block::by_width;

/// Hoare partition of the `d`-wide `rows` (and their `indices`) by `row[dim] <= cut`.
/// Writes both children's boxes into `boxes` (4·d values: the left child's lower and upper
/// corners, then the right child's, as the arena stores them); every row is added to exactly
/// one box. Returns the number of rows on the left.
pub(crate) fn partition_with_boxes(
    rows: &mut [f64],
    indices: &mut [u32],
    d: usize,
    dim: usize,
    cut: f64,
    boxes: &mut [f64],
) -> usize {
    by_width!(d, fixed, dynamic, rows, indices, dim, cut, boxes)
}

#[inline(always)]
fn grow_box<const D: usize>(row: &[f64; D], lower: &mut [f64; D], upper: &mut [f64; D]) {
    // Plain comparisons (values are finite): `f64::min`'s NaN rules would block packed min/max.
    for k in 0..D {
        lower[k] = if row[k] < lower[k] { row[k] } else { lower[k] };
        upper[k] = if row[k] > upper[k] { row[k] } else { upper[k] };
    }
}

fn fixed<const D: usize>(
    rows: &mut [f64],
    indices: &mut [u32],
    dim: usize,
    cut: f64,
    boxes: &mut [f64],
) -> usize {
    let (rows, _) = rows.as_chunks_mut::<D>();
    let (mut left_lo, mut left_hi) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    let (mut right_lo, mut right_hi) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    let (mut lo, mut hi) = (0usize, indices.len());
    loop {
        while lo < hi && rows[lo][dim] <= cut {
            grow_box(&rows[lo], &mut left_lo, &mut left_hi);
            lo += 1;
        }
        while lo < hi && rows[hi - 1][dim] > cut {
            grow_box(&rows[hi - 1], &mut right_lo, &mut right_hi);
            hi -= 1;
        }
        if lo >= hi {
            break;
        }
        // rows[lo] belongs right and rows[hi - 1] left: swap them into place.
        rows.swap(lo, hi - 1);
        indices.swap(lo, hi - 1);
        grow_box(&rows[lo], &mut left_lo, &mut left_hi);
        grow_box(&rows[hi - 1], &mut right_lo, &mut right_hi);
        lo += 1;
        hi -= 1;
    }
    for (k, corner) in [left_lo, left_hi, right_lo, right_hi].iter().enumerate() {
        boxes[k * D..(k + 1) * D].copy_from_slice(corner);
    }
    lo
}

fn dynamic(
    d: usize,
    rows: &mut [f64],
    indices: &mut [u32],
    dim: usize,
    cut: f64,
    boxes: &mut [f64],
) -> usize {
    let (left, right) = boxes[..4 * d].split_at_mut(2 * d);
    let (left_lower, left_upper) = left.split_at_mut(d);
    let (right_lower, right_upper) = right.split_at_mut(d);
    for b in [&mut *left_lower, &mut *right_lower] {
        b.fill(f64::INFINITY);
    }
    for b in [&mut *left_upper, &mut *right_upper] {
        b.fill(f64::NEG_INFINITY);
    }
    let add = |row: &[f64], lo: &mut [f64], up: &mut [f64]| {
        for ((l, u), &v) in lo.iter_mut().zip(up.iter_mut()).zip(row) {
            *l = if v < *l { v } else { *l };
            *u = if v > *u { v } else { *u };
        }
    };
    let (mut lo, mut hi) = (0usize, indices.len());
    loop {
        while lo < hi && rows[lo * d + dim] <= cut {
            add(&rows[lo * d..(lo + 1) * d], left_lower, left_upper);
            lo += 1;
        }
        while lo < hi && rows[(hi - 1) * d + dim] > cut {
            add(&rows[(hi - 1) * d..hi * d], right_lower, right_upper);
            hi -= 1;
        }
        if lo >= hi {
            return lo;
        }
        let (head, tail) = rows.split_at_mut((hi - 1) * d);
        head[lo * d..(lo + 1) * d].swap_with_slice(&mut tail[..d]);
        indices.swap(lo, hi - 1);
        add(&rows[lo * d..(lo + 1) * d], left_lower, left_upper);
        add(&rows[(hi - 1) * d..hi * d], right_lower, right_upper);
        lo += 1;
        hi -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-width and dynamic loops agree with a plain reference on every width.
    #[test]
    fn matches_reference_for_all_widths() {
        let mut rng = crate::rng::tree_rng(3, 0);
        for d in 1..=18usize {
            let n = 97;
            let rows: Vec<f64> = (0..n * d).map(|_| crate::rng::uniform(&mut rng)).collect();
            let dim = d / 2;
            let cut = 0.4;
            let mut r = rows.clone();
            let mut idx: Vec<u32> = (0..n as u32).collect();
            let mut boxes = vec![0.0; 4 * d];
            let n_left = partition_with_boxes(&mut r, &mut idx, d, dim, cut, &mut boxes);
            let left: Vec<usize> = (0..n).filter(|&i| rows[i * d + dim] <= cut).collect();
            assert_eq!(n_left, left.len());
            for (pos, &i) in idx.iter().enumerate() {
                assert_eq!(
                    &r[pos * d..(pos + 1) * d],
                    &rows[i as usize * d..(i as usize + 1) * d]
                );
                assert_eq!(pos < n_left, rows[i as usize * d + dim] <= cut);
            }
            for k in 0..d {
                let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
                for i in 0..n {
                    let side = usize::from(rows[i * d + dim] > cut);
                    lo[side] = lo[side].min(rows[i * d + k]);
                    hi[side] = hi[side].max(rows[i * d + k]);
                }
                assert_eq!((boxes[k], boxes[d + k]), (lo[0], hi[0]));
                assert_eq!((boxes[2 * d + k], boxes[3 * d + k]), (lo[1], hi[1]));
            }
        }
    }
}
