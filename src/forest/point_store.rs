//! Where a forest keeps its training points: in memory, or in a file on disk.
//!
//! Extending a tree (the conditional Mondrian) reads a leaf's points only when the leaf
//! splits, so the points need not stay in memory: on disk they take no memory of the process
//! (the operating system caches the file while memory is free and drops the cache when it
//! is not), at the cost of one read per scattered row when a leaf splits (about 1 µs each
//! from the cache; a chunk's new rows, consecutive ids, are read at once). The file has no
//! name from its creation on (Unix): nothing is left behind, even by a killed process.
//! Results do not depend on the store: the same values are read back bit for bit.

use crate::error::{Error, Result};
use crate::mondrian::rows::{runs, RowSource};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Values read or written at once when a whole store is copied (512 KiB).
const BLOCK_VALUES: usize = 1 << 16;

/// A forest's training points, row-major.
#[derive(Debug)]
pub enum PointStore {
    Memory(Vec<f64>),
    Disk(DiskPoints),
}

impl Default for PointStore {
    fn default() -> Self {
        Self::Memory(Vec::new())
    }
}

impl PointStore {
    /// Number of values held (rows × width).
    pub fn len(&self) -> usize {
        match self {
            Self::Memory(x) => x.len(),
            Self::Disk(disk) => disk.n_values,
        }
    }

    /// Whether no point is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values, when they are in memory.
    pub fn as_slice(&self) -> Option<&[f64]> {
        match self {
            Self::Memory(x) => Some(x),
            Self::Disk(_) => None,
        }
    }

    /// The directory of the file holding the points, when they are on disk.
    pub fn directory(&self) -> Option<&Path> {
        match self {
            Self::Memory(_) => None,
            Self::Disk(disk) => Some(&disk.directory),
        }
    }

    /// Bytes of the process's memory the values take.
    pub fn memory_bytes(&self) -> usize {
        self.as_slice().map_or(0, std::mem::size_of_val)
    }

    /// Room for `additional` more values (in memory; a file grows as written).
    pub fn reserve(&mut self, additional: usize) {
        if let Self::Memory(x) = self {
            x.reserve(additional);
        }
    }

    /// Appends `values`.
    pub fn append(&mut self, values: &[f64]) -> Result<()> {
        match self {
            Self::Memory(x) => {
                x.extend_from_slice(values);
                Ok(())
            }
            Self::Disk(disk) => disk.append(values),
        }
    }

    /// Keeps the first `n_values` values (taking back appended rows).
    pub fn truncate(&mut self, n_values: usize) -> Result<()> {
        match self {
            Self::Memory(x) => {
                x.truncate(n_values);
                Ok(())
            }
            Self::Disk(disk) => disk.truncate(n_values),
        }
    }

    /// Calls `f` on the values in order, a block at a time; the first error (a read's or
    /// `f`'s) stops it.
    pub fn for_each_block(&self, mut f: impl FnMut(&[f64]) -> Result<()>) -> Result<()> {
        match self {
            Self::Memory(x) => x.chunks(BLOCK_VALUES).try_for_each(f),
            Self::Disk(disk) => {
                let (mut block, mut bytes) = (Vec::with_capacity(BLOCK_VALUES), Vec::new());
                for first in (0..disk.n_values).step_by(BLOCK_VALUES) {
                    block.clear();
                    let n = BLOCK_VALUES.min(disk.n_values - first);
                    disk.read_values(first, n, &mut bytes, &mut block)?;
                    f(&block)?;
                }
                Ok(())
            }
        }
    }

    /// Replaces every value v of feature k (rows `d` wide) by `f(k, v)`; on disk through a new
    /// file in the same directory, so that a failure leaves the store as it was.
    pub fn map_values(&mut self, d: usize, f: impl Fn(usize, f64) -> f64) -> Result<()> {
        match self {
            Self::Memory(x) => {
                for row in x.chunks_exact_mut(d.max(1)) {
                    for (k, v) in row.iter_mut().enumerate() {
                        *v = f(k, *v);
                    }
                }
                Ok(())
            }
            Self::Disk(disk) => {
                let mut mapped = DiskPoints::create(&disk.directory)?;
                let (mut at, mut block) = (0usize, Vec::with_capacity(BLOCK_VALUES));
                self.for_each_block(|values| {
                    block.clear();
                    block.extend(
                        values
                            .iter()
                            .enumerate()
                            .map(|(i, &v)| f((at + i) % d.max(1), v)),
                    );
                    at += values.len();
                    mapped.append(&block)
                })?;
                *self = Self::Disk(mapped);
                Ok(())
            }
        }
    }

    /// Moves the values into a new file in `directory` and keeps them there from now on
    /// (appends too); the memory they took is freed. A failure leaves the store as it was.
    pub fn move_to_disk(&mut self, directory: &Path) -> Result<()> {
        let mut disk = DiskPoints::create(directory)?;
        self.for_each_block(|block| disk.append(block))?;
        *self = Self::Disk(disk);
        Ok(())
    }

    /// Errors if a read by [`RowSource::gather`] failed since the last call (the rows it
    /// returned were NaN).
    pub fn take_read_error(&self) -> Result<()> {
        match self {
            Self::Memory(_) => Ok(()),
            Self::Disk(disk) => match lock(&disk.failed_read).take() {
                Some(error) => Err(error),
                None => Ok(()),
            },
        }
    }
}

impl RowSource for PointStore {
    fn n_values(&self) -> usize {
        self.len()
    }

    fn gather(&self, ids: &[u32], d: usize, out: &mut Vec<f64>) {
        match self {
            Self::Memory(x) => x.as_slice().gather(ids, d, out),
            Self::Disk(disk) => disk.gather(ids, d, out),
        }
    }
}

/// A copy keeps its points in memory (only models that never spill are copied).
impl Clone for PointStore {
    fn clone(&self) -> Self {
        let mut x = Vec::with_capacity(self.len());
        let copied = self.for_each_block(|block| {
            x.extend_from_slice(block);
            Ok(())
        });
        if copied.is_err() {
            x.resize(self.len(), f64::NAN);
        }
        Self::Memory(x)
    }
}

/// Stored as the sequence of its values, wherever they are (a model file holds its points).
impl Serialize for PointStore {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        self.for_each_block(|block| {
            block
                .iter()
                .try_for_each(|v| (seq.serialize_element(v)).map_err(|e| Error::Io(e.to_string())))
        })
        .map_err(serde::ser::Error::custom)?;
        seq.end()
    }
}

/// Read back into memory (the owner moves it to disk again if it wants it there).
impl<'de> Deserialize<'de> for PointStore {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Vec::deserialize(deserializer).map(Self::Memory)
    }
}

/// Points in a file of little-endian float64 values, read with positioned reads (safe from
/// many threads at once).
#[derive(Debug)]
pub struct DiskPoints {
    file: File,
    directory: PathBuf,
    /// Where the file is named (Windows removes it when the store is dropped; Unix has
    /// removed the name already).
    #[cfg_attr(unix, allow(dead_code))]
    path: PathBuf,
    n_values: usize,
    failed_read: Mutex<Option<Error>>,
}

impl DiskPoints {
    /// An empty store in a new file in `directory`.
    fn create(directory: &Path) -> Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let bad = |reason: String| Error::InvalidParameter {
            name: "point_store",
            reason,
        };
        if !directory.is_dir() {
            return Err(bad(format!("{} is not a directory", directory.display())));
        }
        let name = format!(
            "mondrian-points-{}-{}.f64",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = directory.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                bad(format!(
                    "cannot create a file in {}: {e}",
                    directory.display()
                ))
            })?;
        #[cfg(unix)]
        std::fs::remove_file(&path)
            .map_err(|e| bad(format!("cannot unlink {}: {e}", path.display())))?;
        Ok(Self {
            file,
            directory: directory.to_path_buf(),
            path,
            n_values: 0,
            failed_read: Mutex::new(None),
        })
    }

    fn append(&mut self, values: &[f64]) -> Result<()> {
        let mut bytes = Vec::with_capacity(BLOCK_VALUES.min(values.len()) * 8);
        let mut at = self.n_values;
        for block in values.chunks(BLOCK_VALUES) {
            bytes.clear();
            bytes.extend(block.iter().flat_map(|v| v.to_le_bytes()));
            if let Err(e) = write_at(&self.file, &bytes, 8 * at as u64) {
                // Whatever part was written is beyond `n_values`: it is ignored, and
                // overwritten by the next append.
                return Err(io_error("writing the training points to disk", &e));
            }
            at += block.len();
        }
        self.n_values = at;
        Ok(())
    }

    fn truncate(&mut self, n_values: usize) -> Result<()> {
        if n_values < self.n_values {
            self.file
                .set_len(8 * n_values as u64)
                .map_err(|e| io_error("shortening the file of training points", &e))?;
            self.n_values = n_values;
        }
        Ok(())
    }

    /// Appends the values `first..first + n` to `out`, read through `bytes` (a buffer the
    /// caller reuses: a splitting leaf's points are many reads of one row each).
    fn read_values(
        &self,
        first: usize,
        n: usize,
        bytes: &mut Vec<u8>,
        out: &mut Vec<f64>,
    ) -> Result<()> {
        bytes.resize(8 * n, 0);
        read_at(&self.file, bytes, 8 * first as u64)
            .map_err(|e| io_error("reading the training points from disk", &e))?;
        out.extend(
            bytes
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
        );
        Ok(())
    }

    fn gather(&self, ids: &[u32], d: usize, out: &mut Vec<f64>) {
        out.reserve(ids.len() * d);
        let mut bytes = Vec::new();
        for (first, len) in runs(ids) {
            let (start, n) = (first as usize * d, len * d);
            let result = if start + n <= self.n_values {
                self.read_values(start, n, &mut bytes, out)
            } else {
                Err(Error::Corrupt(format!(
                    "rows {first}..{} are not stored",
                    first as usize + len
                )))
            };
            if let Err(error) = result {
                out.resize(out.len() + n, f64::NAN);
                lock(&self.failed_read).get_or_insert(error);
            }
        }
    }
}

#[cfg(not(unix))]
impl Drop for DiskPoints {
    fn drop(&mut self) {
        // Best effort: the name of a store that is gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn io_error(doing: &str, e: &std::io::Error) -> Error {
    Error::Io(format!("{doing} failed: {e}"))
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
}

#[cfg(windows)]
fn write_at(file: &File, mut bytes: &[u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !bytes.is_empty() {
        let n = file.seek_write(bytes, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(file: &File, mut bytes: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !bytes.is_empty() {
        let n = file.seek_read(bytes, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        bytes = &mut bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
