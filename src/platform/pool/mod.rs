//! Memory pool of per-worker chunks (section 3.1.2 of the KokkosKernels paper).
//!
//! - [`PoolMode::OneToOne`]: one chunk per worker, located by the worker's index; used by
//!   CPU threads, where the number of concurrent users equals the number of chunks. The
//!   chunks live on the handle and are reused by every later call, so kernels do not
//!   allocate in their hot path (chunks only grow, fallibly, when a product needs more
//!   than any before: the chunk size follows MAXRF in the symbolic phase and MAXRS in
//!   the numeric phase).
//! - [`PoolMode::ManyToMany`]: more users than chunks (GPU teams, or any caller not tied
//!   to a worker index). A user scans from its own index for a free chunk, spins a
//!   little, then parks until a chunk is released.
//!
//! A chunk is any `T` (the CPU backend keeps its accumulators in it).

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::{Condvar, Mutex, MutexGuard};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolMode {
    OneToOne,
    ManyToMany,
}

/// A fixed set of chunks handed to concurrent users.
pub struct Pool<T> {
    mode: PoolMode,
    chunks: Vec<Mutex<T>>,
    /// Users parked waiting for a chunk (MANY2MANY).
    waiting: AtomicUsize,
    park: Mutex<()>,
    wake: Condvar,
}

/// Scan rounds over all chunks before a MANY2MANY user parks.
const SPIN_ROUNDS: usize = 16;

/// A chunk held by one user; released on drop.
pub struct Chunk<'p, T> {
    guard: Option<MutexGuard<'p, T>>,
    pool: &'p Pool<T>,
}

impl<T> std::ops::Deref for Chunk<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("held until drop")
    }
}

impl<T> std::ops::DerefMut for Chunk<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("held until drop")
    }
}

impl<T> Drop for Chunk<'_, T> {
    fn drop(&mut self) {
        drop(self.guard.take());
        if self.pool.mode == PoolMode::ManyToMany && self.pool.waiting.load(Ordering::Acquire) > 0 {
            // Taking the park lock orders this wake-up after a waiter's last scan.
            let _g = self.pool.park.lock();
            self.pool.wake.notify_one();
        }
    }
}

impl<T> Pool<T> {
    /// `n` chunks (at least one) made by `make`.
    pub fn new(mode: PoolMode, n: usize, make: impl Fn() -> T) -> Pool<T> {
        Pool {
            mode,
            chunks: (0..n.max(1)).map(|_| Mutex::new(make())).collect(),
            waiting: AtomicUsize::new(0),
            park: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// The chunk for user `index`. ONE2ONE: chunk `index % len` (the caller guarantees
    /// one user per index at a time, so this never waits). MANY2MANY: the first free chunk
    /// scanning from `index`.
    pub fn acquire(&self, index: usize) -> Chunk<'_, T> {
        let n = self.chunks.len();
        let start = index % n;
        if self.mode == PoolMode::OneToOne {
            return Chunk {
                guard: Some(self.chunks[start].lock()),
                pool: self,
            };
        }
        let scan = || {
            (0..n).find_map(|d| {
                self.chunks[(start + d) % n].try_lock().map(|g| Chunk {
                    guard: Some(g),
                    pool: self,
                })
            })
        };
        for _ in 0..SPIN_ROUNDS {
            if let Some(c) = scan() {
                return c;
            }
            std::hint::spin_loop();
        }
        loop {
            let mut g = self.park.lock();
            self.waiting.fetch_add(1, Ordering::AcqRel);
            // Re-scan under the park lock: a release after this scan must notify us.
            if let Some(c) = scan() {
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                return c;
            }
            self.wake.wait(&mut g);
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// 16 threads fight over 3 chunks; no chunk is ever held by two users at once and
    /// every user gets through (no lost wake-up).
    #[test]
    fn many_to_many_under_contention() {
        struct Slot {
            busy: AtomicBool,
            uses: usize,
        }
        let pool = Pool::new(PoolMode::ManyToMany, 3, || Slot {
            busy: AtomicBool::new(false),
            uses: 0,
        });
        let rounds = 2000;
        std::thread::scope(|s| {
            for t in 0..16 {
                let pool = &pool;
                s.spawn(move || {
                    for r in 0..rounds {
                        let mut c = pool.acquire(t + r);
                        assert!(!c.busy.swap(true, Ordering::AcqRel), "chunk shared");
                        c.uses += 1;
                        if r % 7 == 0 {
                            std::thread::yield_now();
                        }
                        c.busy.store(false, Ordering::Release);
                    }
                });
            }
        });
        let total: usize = pool.chunks.iter().map(|c| c.lock().uses).sum();
        assert_eq!(total, 16 * rounds);
    }

    #[test]
    fn one_to_one_is_located_by_index() {
        let pool = Pool::new(PoolMode::OneToOne, 4, || 0usize);
        for i in 0..8 {
            *pool.acquire(i) += 1;
        }
        assert!(pool.chunks.iter().all(|c| *c.lock() == 2));
    }
}
