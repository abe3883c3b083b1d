//! The points a forest stores and the points it is asked about: checked once (width,
//! finiteness, box), mapped to the forest's coordinates, and handed out in row blocks.

use super::MondrianForest;
use crate::error::{Error, Result};
use crate::input_map::InputMap;
use crate::mondrian::NONE;
use crate::parallel::for_each_point_block;
use crate::points::{check_width, finite_ranges, for_each_block, Points};
use crate::training_data::{check_box_of, RowsBox};
use rayon::ThreadPool;
use std::path::Path;

impl MondrianForest {
    /// Number of training points stored.
    pub fn n_rows(&self) -> usize {
        self.x.len() / self.n_features
    }

    /// The stored training points, row-major, when they are in memory.
    pub fn points(&self) -> Result<&[f64]> {
        self.x
            .as_slice()
            .ok_or_else(|| Error::InvalidInput("this model's training points are on disk".into()))
    }

    /// A copy of the stored training points, row-major, in the forest's coordinates (read
    /// from disk when they are there).
    pub fn copy_points(&self) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(self.x.len());
        self.x.for_each_block(|block| {
            out.extend_from_slice(block);
            Ok(())
        })?;
        Ok(out)
    }

    /// Moves the training points (those stored and those to come) into a new file in
    /// `directory` ([`super::point_store`]); a failure leaves them where they were.
    pub fn move_points_to_disk(&mut self, directory: &Path) -> Result<()> {
        self.x.move_to_disk(directory)
    }

    /// The directory of the file holding the training points, when they are on disk.
    pub fn points_directory(&self) -> Option<&Path> {
        self.x.directory()
    }

    /// Checks that `x` has this forest's width and only finite values, also once mapped.
    pub fn check_points<P: Points>(&self, x: &P) -> Result<()> {
        check_width(x, self.n_features, "forest")?;
        let ranges = finite_ranges(x)?;
        if let Some(map) = &self.input_map {
            map.check_ranges(&ranges)?;
        }
        Ok(())
    }

    /// Calls `work(first_row, out_block, rows_block)` on blocks of the rows of `x` (in this
    /// forest's coordinates, float64: other matrices are converted a block at a time) in
    /// parallel, after checking them; `out` holds `out_width` values per row. See
    /// [`for_each_point_block`].
    pub fn for_each_query_block<T: Send, P: Points>(
        &self,
        x: &P,
        pool: &ThreadPool,
        out: &mut [T],
        out_width: usize,
        work: impl Fn(usize, &mut [T], &[f64]) + Sync,
    ) -> Result<()> {
        self.check_points(x)?;
        self.check_fitted()?;
        for_each_point_block(pool, out, out_width, x, self.input_map.as_ref(), work);
        Ok(())
    }

    /// [`Self::add_points`] for an online update, which needs trees to extend.
    pub fn add_online_points<P: Points>(&mut self, x: &P) -> Result<std::ops::Range<u32>> {
        if self.trees.is_empty() {
            return Err(Error::InvalidInput(
                "partial_fit needs a fitted model".into(),
            ));
        }
        self.add_points(x)
    }

    /// Stores new training points (mapped to the forest's coordinates) and returns their row
    /// ids. The first points fix the input map when inputs are scaled.
    pub fn add_points<P: Points>(&mut self, x: &P) -> Result<std::ops::Range<u32>> {
        let first = self.n_rows();
        let last = first + x.n_rows();
        if last >= u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "at most {} training points are supported",
                u32::MAX - 1
            )));
        }
        check_width(x, self.n_features, "forest")?;
        let ranges = finite_ranges(x)?;
        // A failed check must not leave a map fixed by rejected points.
        let fixed_map;
        let map = match &self.input_map {
            None if self.scale_inputs => {
                fixed_map = InputMap::unit_box_of_ranges(&ranges)?;
                &fixed_map
            }
            None => {
                self.append_rows(x, None, first)?;
                return Ok(first as u32..last as u32);
            }
            Some(map) => map,
        };
        map.check_ranges(&ranges)?;
        let map = map.clone();
        self.append_rows(x, Some(&map), first)?;
        self.input_map = Some(map);
        Ok(first as u32..last as u32)
    }

    /// Appends the rows of `x`, mapped by `map`, to the store (in place: no copy of the
    /// training set), a row block at a time, if the box of the stored points and these
    /// (the rows from `first` on) is one the Mondrian can cut ([`check_box_of`]); else (or
    /// when the store fails to write) takes them back and errors.
    fn append_rows<P: Points>(
        &mut self,
        x: &P,
        map: Option<&InputMap>,
        first: usize,
    ) -> Result<()> {
        let (n, d) = (x.n_rows(), self.n_features);
        self.x.reserve(n * d);
        let mut new_box = RowsBox::new(d);
        let mut appended = Ok(());
        // After a failed write the remaining blocks are read but not stored.
        for_each_block(x, map, |_, rows| {
            if appended.is_ok() {
                new_box.add_rows(rows);
                appended = self.x.append(rows);
            }
        });
        let root = self.trees.iter().find(|t| t.root != NONE);
        let checked = appended.and_then(|()| check_box_of(root, &new_box.lower, &new_box.upper));
        if let Err(error) = checked {
            // A store that cannot even shorten its file has the error of the write.
            let _ = self.x.truncate(first * d);
            return Err(error);
        }
        Ok(())
    }
}
