//! Where growing and extending a tree read the training points: by row id, into a working
//! copy. A slice in memory is one source; a forest's store on disk
//! (`forest::point_store`) is another.

use std::fmt::Debug;

/// Training rows (`d` values each, row-major) read by id.
pub trait RowSource: Sync + Debug {
    /// Number of values held (rows × width).
    fn n_values(&self) -> usize;

    /// Appends the rows `ids` (each `d` wide), in that order, to `out`. Ids are the
    /// forest's own (below `n_values() / d`); a source that cannot read them (a disk's
    /// read error) appends NaN rows and reports it through its owner.
    fn gather(&self, ids: &[u32], d: usize, out: &mut Vec<f64>);
}

impl RowSource for &[f64] {
    fn n_values(&self) -> usize {
        self.len()
    }

    fn gather(&self, ids: &[u32], d: usize, out: &mut Vec<f64>) {
        out.reserve(ids.len() * d);
        for &i in ids {
            let i = i as usize;
            out.extend_from_slice(&self[i * d..(i + 1) * d]);
        }
    }
}

impl RowSource for Vec<f64> {
    fn n_values(&self) -> usize {
        self.len()
    }

    fn gather(&self, ids: &[u32], d: usize, out: &mut Vec<f64>) {
        self.as_slice().gather(ids, d, out)
    }
}

/// The maximal runs of consecutive ids in `ids`, as (first id, length): a chunk's new rows
/// (and a fresh tree's root, rows `0..n`) are one run, read at once.
pub fn runs(ids: &[u32]) -> impl Iterator<Item = (u32, usize)> + '_ {
    let mut k = 0;
    std::iter::from_fn(move || {
        let &first = ids.get(k)?;
        let mut len = 1;
        while ids.get(k + len) == Some(&(first.wrapping_add(len as u32))) {
            len += 1;
        }
        k += len;
        Some((first, len))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_at_gaps() {
        let ids = [3, 4, 5, 9, 1, 2, 2];
        let found: Vec<_> = runs(&ids).collect();
        assert_eq!(found, vec![(3, 3), (9, 1), (1, 2), (2, 1)]);
        assert_eq!(runs(&[]).count(), 0);
    }

    #[test]
    fn a_slice_gathers_rows_in_id_order() {
        let x: Vec<f64> = (0..12).map(f64::from).collect();
        let mut out = vec![-1.0];
        x.as_slice().gather(&[2, 0, 2], 3, &mut out);
        assert_eq!(out, vec![-1.0, 6.0, 7.0, 8.0, 0.0, 1.0, 2.0, 6.0, 7.0, 8.0]);
    }
}
