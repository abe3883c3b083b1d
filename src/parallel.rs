//! Local thread pools sized by `n_jobs` (never rayon's global pool).

use crate::error::{Error, Result};
use rayon::{ThreadPool, ThreadPoolBuilder};

/// A pool of exactly `n_jobs` threads (at least one).
pub fn pool(n_jobs: usize) -> Result<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(n_jobs.max(1))
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))
}

/// Rows per parallel work item when a loop runs over points: large enough to amortise
/// scheduling, small enough to balance two to sixteen threads.
pub const ROW_CHUNK: usize = 4096;
