//! The one crossing from Python into the core: every call releases the GIL, runs on a pool
//! sized by `n_jobs`, keeps the exceptions Python code raised during it, and — for long
//! calls — stops promptly on Ctrl-C.
//!
//! Fitted models sit in a [`Handle`]: behind a lock taken with the GIL released, so calls
//! that only read a model (predictions) run concurrently and a call that changes it waits for
//! them, instead of failing with a borrow error. The lock admits calls in the order they
//! arrive ([`FairRwLock`]): predictions are not starved by a stream of updates, nor updates
//! by a stream of predictions.
//!
//! A panic in the core (a bug) reaches Python as a `RuntimeError`, never a hang.

use super::error::to_py_err;
use crate::error::{Error, Result};
use crate::fair_lock::{FairRwLock, ReadGuard, WriteGuard};
use crate::forest::Growing;
use crate::parallel::{catch_panic, max_threads, pool, Interrupt};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::ThreadPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a long call checks for Ctrl-C (and other signals) while the core works.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// What a call into the core gets: its pool, the flag that asks it to stop, and a slot for
/// an exception raised by Python code it calls back (a progress callback).
pub struct Call<'a> {
    pub pool: &'a ThreadPool,
    pub interrupt: &'a Interrupt,
    raised: &'a Mutex<Option<PyErr>>,
}

impl Call<'_> {
    /// A batch fit's growing settings on this call's pool.
    pub fn growing(&self, n_trees: usize, slice: usize) -> Growing<'_> {
        Growing {
            n_trees,
            slice,
            pool: self.pool,
            interrupt: self.interrupt,
        }
    }

    /// Calls the Python callable `callback(*args)` with the GIL. If it raises, the work
    /// stops and the exception reaches the caller as it was raised (`KeyboardInterrupt`
    /// included), not as a string.
    pub fn notify(&self, callback: &Option<Py<PyAny>>, args: &[usize]) -> Result<()> {
        let Some(callback) = callback else {
            return Ok(());
        };
        self.python(|py| {
            let args = PyTuple::new(py, args)?;
            callback.call1(py, args).map(|_| ())
        })
    }

    /// Runs `work` with the GIL (Python code the core calls back: a progress callback, an
    /// operator's product). If it raises, the work stops and the exception reaches the
    /// caller as it was raised.
    pub fn python<T>(&self, work: impl FnOnce(Python<'_>) -> PyResult<T>) -> Result<T> {
        Python::attach(work).map_err(|e| {
            *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            Error::Interrupted("a Python callback raised an exception".into())
        })
    }
}

/// How long a call is expected to run: long calls poll for signals on this thread while a
/// worker thread runs the core (a thread start costs tens of microseconds, nothing against a
/// fit, too much for a one-point update).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Short,
    Long,
}

/// Releases the GIL and runs `work` on `pool`; see the module docs.
pub fn run<T, F>(py: Python<'_>, pool: &ThreadPool, length: Length, work: F) -> PyResult<T>
where
    T: Send,
    F: for<'c> FnOnce(&Call<'c>) -> Result<T> + Send,
{
    let interrupt = Interrupt::default();
    let raised = Mutex::new(None);
    let call = Call {
        pool,
        interrupt: &interrupt,
        raised: &raised,
    };
    let (outcome, signal) = match length {
        Length::Short => (py.detach(|| catch_panic(|| work(&call))), None),
        Length::Long => py.detach(|| watch_signals(work, &call)),
    };
    if let Some(e) = signal.or_else(|| raised.lock().unwrap_or_else(|p| p.into_inner()).take()) {
        return Err(e);
    }
    outcome.map_err(to_py_err)
}

/// Runs `work` on a worker thread while this thread checks for signals; on one (Ctrl-C), asks
/// the work to stop and returns the signal's exception beside the work's outcome.
fn watch_signals<T, F>(work: F, call: &Call<'_>) -> (Result<T>, Option<PyErr>)
where
    T: Send,
    F: for<'c> FnOnce(&Call<'c>) -> Result<T> + Send,
{
    let me = std::thread::current();
    // Set before the worker wakes this thread: `is_finished` turns true only once the worker
    // has exited, after its wake-up, and waiting on it cost a whole poll interval per call.
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            // Reported however the work ends: a panic that skipped the report left this
            // thread polling forever.
            let _finished = Finished {
                done: &done,
                waiter: me,
            };
            catch_panic(|| work(call))
        });
        let mut signal = None;
        while !done.load(Ordering::Acquire) {
            std::thread::park_timeout(SIGNAL_POLL);
            if signal.is_none() && !done.load(Ordering::Acquire) {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    call.interrupt.request();
                    signal = Some(e);
                }
            }
        }
        let outcome = (worker.join())
            .unwrap_or_else(|_| Err(Error::Internal("the worker thread panicked".into())));
        (outcome, signal)
    })
}

/// Tells the thread waiting in [`watch_signals`] that the work ended, when dropped.
struct Finished<'a> {
    done: &'a AtomicBool,
    waiter: std::thread::Thread,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        self.waiter.unpark();
    }
}

/// Shared access to a model behind a lock (a panic elsewhere cannot leave it half-updated in
/// a way later calls would trip on: every update validates before it mutates).
fn read<T>(lock: &FairRwLock<T>) -> ReadGuard<'_, T> {
    lock.read()
}

/// Exclusive access to a model behind a lock. Taken only with the GIL released.
fn write<T>(lock: &FairRwLock<T>) -> WriteGuard<'_, T> {
    lock.write()
}

/// The process's pools, one per thread count (at most one per CPU count: `pool` caps them),
/// shared by every model: many small calls (one-point `partial_fit`, say) do not start
/// threads each time, and the short-lived forests a fit builds on the side (the held-out
/// rule's scoring forests) add none.
pub fn shared_pool(n_jobs: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
    let n = n_jobs.clamp(1, max_threads());
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = pools.iter().find(|(k, _)| *k == n) {
        return Ok(Arc::clone(p));
    }
    let p = Arc::new(pool(n).map_err(to_py_err)?);
    pools.push((n, Arc::clone(&p)));
    Ok(p)
}

/// A fitted model held by Rust (module docs).
pub struct Handle<T> {
    model: FairRwLock<T>,
}

impl<T: Send + Sync> Handle<T> {
    pub fn new(model: T) -> Self {
        Self {
            model: FairRwLock::new(model),
        }
    }

    /// Builds a model by `work` (a fit) and holds it, with the pool the fit used.
    pub fn build<F>(py: Python<'_>, n_jobs: usize, length: Length, work: F) -> PyResult<Self>
    where
        F: for<'c> FnOnce(&Call<'c>) -> Result<T> + Send,
    {
        let pool = shared_pool(n_jobs)?;
        let model = run(py, &pool, length, work)?;
        Ok(Self {
            model: FairRwLock::new(model),
        })
    }

    /// Runs `work` with shared access to the model.
    pub fn read<R, F>(&self, py: Python<'_>, n_jobs: usize, length: Length, work: F) -> PyResult<R>
    where
        R: Send,
        F: for<'c> FnOnce(&T, &Call<'c>) -> Result<R> + Send,
    {
        let pool = shared_pool(n_jobs)?;
        run(py, &pool, length, |call| work(&read(&self.model), call))
    }

    /// Runs `work` with exclusive access to the model (other calls wait).
    pub fn write<R, F>(&self, py: Python<'_>, n_jobs: usize, length: Length, work: F) -> PyResult<R>
    where
        R: Send,
        F: for<'c> FnOnce(&mut T, &Call<'c>) -> Result<R> + Send,
    {
        let pool = shared_pool(n_jobs)?;
        run(py, &pool, length, |call| {
            work(&mut write(&self.model), call)
        })
    }

    /// Shared access when `ready(model)` holds, after bringing it about with exclusive access
    /// by `prepare` when it does not (a stale posterior recomputed before a prediction):
    /// readers never see the model between an update and its preparation. A call that
    /// prepared the model does its work before giving up exclusive access: going back to the
    /// queue for shared access, it found the model made stale again by an update queued
    /// meanwhile, and a stream of updates kept it preparing forever.
    pub fn read_prepared<R, F>(
        &self,
        py: Python<'_>,
        n_jobs: usize,
        length: Length,
        ready: impl Fn(&T) -> bool + Send + Sync,
        prepare: impl Fn(&mut T, &ThreadPool) -> Result<()> + Send + Sync,
        work: F,
    ) -> PyResult<R>
    where
        R: Send,
        F: for<'c> FnOnce(&T, &Call<'c>) -> Result<R> + Send,
    {
        let pool = shared_pool(n_jobs)?;
        run(py, &pool, length, |call| {
            {
                let model = read(&self.model);
                if ready(&model) {
                    return work(&model, call);
                }
            }
            let mut model = write(&self.model);
            if !ready(&model) {
                prepare(&mut model, call.pool)?;
            }
            work(&model, call)
        })
    }

    /// Runs `look` on the model with the GIL released (for small accessors).
    pub fn peek<R: Send>(&self, py: Python<'_>, look: impl FnOnce(&T) -> R + Send) -> R {
        py.detach(|| look(&read(&self.model)))
    }
}
