//! Runs core work with the GIL released on a local pool sized by `n_jobs`.

use super::error::to_py_err;
use crate::parallel::pool;
use pyo3::prelude::*;
use rayon::ThreadPool;

/// Builds a pool of `n_jobs` threads, releases the GIL and runs `work` on it.
pub fn detached<T, F>(py: Python<'_>, n_jobs: usize, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&ThreadPool) -> crate::error::Result<T> + Send,
{
    let pool = pool(n_jobs).map_err(to_py_err)?;
    py.detach(|| work(&pool)).map_err(to_py_err)
}
