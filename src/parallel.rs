//! Local thread pools sized by `n_jobs` (never rayon's global pool), and the flag that
//! stops long work early.

use crate::error::{Error, Result};
use crate::input_map::InputMap;
use crate::points::{Points, ROW_CHUNK};
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::atomic::{AtomicBool, Ordering};

/// A request to stop long work (set from another thread, e.g. when the user presses
/// Ctrl-C). Long loops call [`Interrupt::check`] between units of work (a tree, a cut, an
/// iteration), so they stop promptly and leave their inputs as they were.
#[derive(Debug, Default)]
pub struct Interrupt(AtomicBool);

impl Interrupt {
    /// Asks the work to stop.
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was requested.
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Interrupted)` once a stop was requested.
    pub fn check(&self) -> Result<()> {
        if self.is_requested() {
            Err(Error::Interrupted("stopped on request".into()))
        } else {
            Ok(())
        }
    }
}

/// Runs `work`, turning a panic into [`Error::Internal`]. A panic is a bug, but one inside a
/// pool's task (rayon resumes it on the thread that called `install`) must still reach the
/// caller as an error: unwinding through the crossing into Python left a thread waiting for
/// a worker that never reported back, and the process hung.
pub fn catch_panic<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|payload| {
        let message = (payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Err(Error::Internal(message))
    })
}

/// A pool of exactly `n_jobs` threads (at least one).
pub fn pool(n_jobs: usize) -> Result<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(n_jobs.clamp(1, max_threads()))
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))
}

/// The CPUs this process may use (read once): more threads than that only add switching,
/// and results never depend on the count, so pools are capped there (`n_jobs = 2⁴⁰` once
/// started a thread per job).
pub fn max_threads() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Below this many points per call, work runs on the calling thread: waking a pool costs
/// tens of microseconds, more than handling a few points. Results are the same either way.
const SMALL_WORK: usize = 64;

/// Whether `n_points` is too little work to hand to a pool.
pub fn is_small(n_points: usize) -> bool {
    n_points < SMALL_WORK
}

/// Calls `work(first_row, out_block, rows_block)` on blocks of `ROW_CHUNK` points, where
/// `flat` holds the points (row-major, `d` wide) and `out` holds `out_width` values per point:
/// on `pool`, or on this thread for a handful of points.
pub fn for_each_row_block<T: Send, E: Sync>(
    pool: &ThreadPool,
    out: &mut [T],
    out_width: usize,
    flat: &[E],
    d: usize,
    work: impl Fn(usize, &mut [T], &[E]) + Sync,
) {
    if is_small(flat.len() / d.max(1)) {
        work(0, out, flat);
        return;
    }
    pool.install(|| {
        out.par_chunks_mut(ROW_CHUNK * out_width)
            .zip(flat.par_chunks(ROW_CHUNK * d))
            .enumerate()
            .for_each(|(block, (out, rows))| work(block * ROW_CHUNK, out, rows))
    });
}

/// Rows per block of a loop over `n` points on `threads` threads: `ROW_CHUNK`, or fewer so
/// that a few thousand points still reach every thread (at least 256 rows a block: below,
/// handing out blocks costs more than it spreads).
fn block_rows(n: usize, threads: usize) -> usize {
    ROW_CHUNK.min(n.div_ceil(threads.max(1)).max(256))
}

/// Calls `work(first_row, out_block, rows_block)` on blocks of at most `ROW_CHUNK` rows of `x`, read
/// as float64 and mapped by `map` when given ([`Points::block`]: a dense float64 matrix is
/// borrowed, anything else converted one block at a time), where `out` holds `out_width`
/// values per row: on `pool`, or on this thread for a handful of points.
pub fn for_each_point_block<T: Send, P: Points>(
    pool: &ThreadPool,
    out: &mut [T],
    out_width: usize,
    x: &P,
    map: Option<&InputMap>,
    work: impl Fn(usize, &mut [T], &[f64]) + Sync,
) {
    let n = x.n_rows();
    let chunk = block_rows(n, pool.current_num_threads());
    let run = |first: usize, out: &mut [T]| {
        let mut buffer = Vec::new();
        let last = (first + chunk).min(n);
        work(first, out, x.block(first..last, map, &mut buffer));
    };
    if is_small(n) {
        let mut buffer = Vec::new();
        work(0, out, x.block(0..n, map, &mut buffer));
        return;
    }
    pool.install(|| {
        out.par_chunks_mut(chunk * out_width.max(1))
            .enumerate()
            .for_each(|(block, out)| run(block * chunk, out))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_task_in_the_pool_is_an_error_and_the_pool_still_works() {
        let pool = pool(3).unwrap();
        let outcome: Result<()> = catch_panic(|| {
            pool.install(|| {
                (0..1000usize).into_par_iter().for_each(|i| {
                    if i == 737 {
                        panic!("task {i} failed");
                    }
                })
            });
            Ok(())
        });
        assert_eq!(outcome, Err(Error::Internal("task 737 failed".into())));
        let sum: usize = pool.install(|| (0..1000usize).into_par_iter().sum());
        assert_eq!(sum, 499_500);
        assert_eq!(catch_panic(|| Ok(7)), Ok(7));
        let refused: Result<()> = catch_panic(|| Err(Error::InvalidInput("x".into())));
        assert_eq!(refused, Err(Error::InvalidInput("x".into())));
    }
}
