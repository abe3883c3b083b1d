//! A readers–writer lock that admits waiting calls in the order they arrived: consecutive
//! readers share the lock, a writer waits for the readers admitted before it, and readers
//! that arrive behind a waiting writer wait for it. Neither side starves: with a lock that
//! lets a releasing writer straight back in (std's), four threads predicting from a model
//! that a fifth updated in a loop completed one or two predictions against hundreds of
//! updates.
//!
//! The order is kept by tickets under a mutex; the data sits in a std [`RwLock`] that each
//! admitted call then takes without waiting (the tickets admit only compatible calls).

use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Who holds the lock and whose turn is next.
#[derive(Debug, Default)]
struct Turns {
    /// Tickets handed out (the next arrival's number).
    issued: u64,
    /// Tickets admitted (the number of the next call in line).
    admitted: u64,
    /// Readers holding the lock.
    readers: usize,
    /// Whether a writer holds it.
    writer: bool,
}

/// A readers–writer lock with first-come, first-served admission (module docs).
#[derive(Debug, Default)]
pub struct FairRwLock<T> {
    turns: Mutex<Turns>,
    turn_changed: Condvar,
    data: RwLock<T>,
}

/// A call admitted in its turn; dropping it lets the next in line in (also when the holder
/// unwinds, so a panic cannot leave the lock taken).
struct Admission<'a, T> {
    lock: &'a FairRwLock<T>,
    exclusive: bool,
}

impl<T> Drop for Admission<'_, T> {
    fn drop(&mut self) {
        self.lock.leave(self.exclusive);
    }
}

/// Shared access; the next in line may enter once it is dropped.
pub struct ReadGuard<'a, T> {
    // Fields drop in order: the data first, so the next writer admitted finds it free.
    guard: RwLockReadGuard<'a, T>,
    _admission: Admission<'a, T>,
}

/// Exclusive access; the next in line may enter once it is dropped.
pub struct WriteGuard<'a, T> {
    guard: RwLockWriteGuard<'a, T>,
    _admission: Admission<'a, T>,
}

impl<T> FairRwLock<T> {
    pub fn new(data: T) -> Self {
        Self {
            turns: Mutex::default(),
            turn_changed: Condvar::new(),
            data: RwLock::new(data),
        }
    }

    /// The turns, whatever a panicking holder left (they are updated in single steps).
    fn turns(&self) -> MutexGuard<'_, Turns> {
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for this call's turn and for the holders to allow it in, then enters.
    fn enter(&self, exclusive: bool) -> Admission<'_, T> {
        let mut turns = self.turns();
        let ticket = turns.issued;
        turns.issued += 1;
        while turns.admitted != ticket || turns.writer || (exclusive && turns.readers > 0) {
            turns = (self.turn_changed.wait(turns)).unwrap_or_else(|p| p.into_inner());
        }
        turns.admitted += 1;
        if exclusive {
            turns.writer = true;
        } else {
            turns.readers += 1;
        }
        drop(turns);
        // The next in line may be a reader that can join this one.
        self.turn_changed.notify_all();
        Admission {
            lock: self,
            exclusive,
        }
    }

    fn leave(&self, exclusive: bool) {
        let mut turns = self.turns();
        if exclusive {
            turns.writer = false;
        } else {
            turns.readers -= 1;
        }
        drop(turns);
        self.turn_changed.notify_all();
    }

    /// Shared access, in turn. Not reentrant: a thread that reads again while it holds a
    /// read waits behind any writer that arrived in between, which waits for it. The data
    /// stay usable after a panic of another holder (every update of a model validates
    /// before it mutates).
    pub fn read(&self) -> ReadGuard<'_, T> {
        let admission = self.enter(false);
        ReadGuard {
            guard: self.data.read().unwrap_or_else(|p| p.into_inner()),
            _admission: admission,
        }
    }

    /// Exclusive access, in turn.
    pub fn write(&self) -> WriteGuard<'_, T> {
        let admission = self.enter(true);
        WriteGuard {
            guard: self.data.write().unwrap_or_else(|p| p.into_inner()),
            _admission: admission,
        }
    }
}

impl<T> std::ops::Deref for ReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::Deref for WriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    #[test]
    fn readers_share_and_writers_exclude() {
        let lock = FairRwLock::new(1);
        {
            let (a, b) = (lock.read(), lock.read());
            assert_eq!(*a + *b, 2);
        }
        *lock.write() += 1;
        assert_eq!(*lock.read(), 2);
    }

    #[test]
    fn a_writer_in_a_loop_lets_waiting_readers_in_between_its_updates() {
        // One thread writes 200 times, re-entering at once; each of four readers must get
        // in between writes: a reader that arrives while the writer holds the lock is ahead
        // of the writer's next request, so readers complete about one read per write.
        let lock = FairRwLock::new(0usize);
        let (writes, reads_by_end) = (200, AtomicUsize::new(usize::MAX));
        let done = AtomicBool::new(false);
        let reads: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|scope| {
            for count in &reads {
                let (lock, done) = (&lock, &done);
                scope.spawn(move || {
                    while !done.load(Ordering::Acquire) {
                        let value = lock.read();
                        std::hint::black_box(*value);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            for _ in 0..writes {
                let mut value = lock.write();
                *value += 1;
                // Work under the lock, long enough for readers to queue behind it.
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let fewest = reads.iter().map(|c| c.load(Ordering::Relaxed)).min();
            reads_by_end.store(fewest.unwrap_or(0), Ordering::Relaxed);
            done.store(true, Ordering::Release);
        });
        assert_eq!(*lock.read(), writes);
        assert!(reads_by_end.load(Ordering::Relaxed) >= writes / 4);
    }
}
