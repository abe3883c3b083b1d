//! Runs core work with the GIL released on a local pool sized by `n_jobs`.

use super::error::to_py_err;
use crate::parallel::pool;
use pyo3::prelude::*;
use rayon::ThreadPool;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Shared access to a model behind a lock (a panic elsewhere cannot leave it half-updated
/// in a way later calls would trip on: every update validates before it mutates).
pub fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Exclusive access to a model behind a lock. Take it only with the GIL released.
pub fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pool a fitted model last used, kept so that many small calls (one-point
/// `partial_fit`, say) do not spawn threads each time.
#[derive(Default)]
pub struct PoolCache(Mutex<Option<(usize, Arc<ThreadPool>)>>);

impl PoolCache {
    fn get(&self, n_jobs: usize) -> PyResult<Arc<ThreadPool>> {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*slot {
            Some((n, p)) if *n == n_jobs => Ok(Arc::clone(p)),
            _ => {
                let p = Arc::new(pool(n_jobs).map_err(to_py_err)?);
                *slot = Some((n_jobs, Arc::clone(&p)));
                Ok(p)
            }
        }
    }

    /// Releases the GIL and runs `work` on a pool of `n_jobs` threads.
    pub fn run<T, F>(&self, py: Python<'_>, n_jobs: usize, work: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&ThreadPool) -> crate::error::Result<T> + Send,
    {
        let pool = self.get(n_jobs)?;
        py.detach(|| work(&pool)).map_err(to_py_err)
    }
}
