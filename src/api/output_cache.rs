//! Recycled arrays for the results the library owns (`spgemm_multiply`,
//! [`crate::exec::numeric_owned`]).
//!
//! Why: a product's C is written once, right after it is allocated. Arrays of a few dozen
//! MiB come from the system as fresh pages (glibc maps every block above 32 MiB anew), and
//! the kernel clears each page on its first write, a large share of the numeric phase; MKL
//! pays the same for its C (docs/DESIGN-NOTES.md, api::output_cache). A code that makes
//! products from scratch in a loop (a setup rebuilt every step, a structure that changes)
//! need not: when a result of the handle is destroyed its arrays go back to the handle's
//! cache, and the next result takes the smallest cached array of its element type that fits
//! (at most twice the size needed, so a small result does not pin a large array). A
//! recycled array still holds the old product's numbers until the numeric phase overwrites
//! every entry (it writes each column index and value of every row), so taking one writes
//! nothing.
//!
//! The cache holds at most `limit` bytes (default [`DEFAULT_LIMIT_BYTES`]; the oldest
//! arrays go first) and only arrays of at least [`MIN_RECYCLE_BYTES`] (smaller ones
//! cost little to allocate and would crowd it). Setting the limit to 0 frees what it
//! holds and turns recycling off. Arrays the caller provides (`spgemm_numeric`) are
//! the caller's to reuse and never pass through here.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::error::Result;
use crate::platform::alloc::try_filled;
use crate::types::{Complex32, Complex64};

/// Default bound on the bytes a handle keeps for recycling.
pub(crate) const DEFAULT_LIMIT_BYTES: usize = 1 << 30;

/// Arrays below this size are not kept (1 MiB).
pub(crate) const MIN_RECYCLE_BYTES: usize = 1 << 20;

/// A cached array: one variant per element type an owned result can have.
pub(crate) enum Cached {
    I32(Vec<i32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C32(Vec<Complex32>),
    C64(Vec<Complex64>),
}

impl Cached {
    fn bytes(&self) -> usize {
        match self {
            Cached::I32(v) => v.capacity() * 4,
            Cached::I64(v) => v.capacity() * 8,
            Cached::U64(v) => v.capacity() * 8,
            Cached::F32(v) => v.capacity() * 4,
            Cached::F64(v) => v.capacity() * 8,
            Cached::C32(v) => v.capacity() * 8,
            Cached::C64(v) => v.capacity() * 16,
        }
    }
}

/// Element types of the arrays of an owned result.
pub(crate) trait Recyclable: Copy + Default + Sized {
    fn wrap(v: Vec<Self>) -> Cached;
    /// The array, when `c` holds this element type.
    fn unwrap(c: &mut Cached) -> Option<&mut Vec<Self>>;
}

macro_rules! recyclable {
    ($t:ty, $var:ident) => {
        impl Recyclable for $t {
            fn wrap(v: Vec<Self>) -> Cached {
                Cached::$var(v)
            }
            fn unwrap(c: &mut Cached) -> Option<&mut Vec<Self>> {
                match c {
                    Cached::$var(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
recyclable!(i32, I32);
recyclable!(i64, I64);
recyclable!(u64, U64);
recyclable!(f32, F32);
recyclable!(f64, F64);
recyclable!(Complex32, C32);
recyclable!(Complex64, C64);

#[derive(Default)]
struct Shelf {
    /// Oldest first.
    arrays: Vec<Cached>,
    bytes: usize,
}

/// A handle's cache of arrays from destroyed results (see the module docs).
pub struct OutputCache {
    shelf: Mutex<Shelf>,
    limit: AtomicUsize,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl Default for OutputCache {
    fn default() -> Self {
        OutputCache {
            shelf: Mutex::new(Shelf::default()),
            limit: AtomicUsize::new(DEFAULT_LIMIT_BYTES),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }
}

/// What the cache holds and has done (for the ABI query and the tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    pub limit: usize,
    pub held: usize,
    /// Arrays taken from the cache, and arrays allocated because none fitted.
    pub hits: usize,
    pub misses: usize,
}

impl OutputCache {
    /// An array of `len` elements: a cached one (holding old numbers) when one fits,
    /// else a new zeroed one (`what` names it in an allocation-failure message).
    pub(crate) fn take<T: Recyclable>(&self, len: usize, what: &str) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if len.saturating_mul(size) >= MIN_RECYCLE_BYTES {
            let found = {
                let mut shelf = self.shelf.lock();
                let mut best: Option<(usize, usize)> = None;
                for (i, c) in shelf.arrays.iter_mut().enumerate() {
                    if let Some(v) = T::unwrap(c) {
                        let cap = v.capacity();
                        let fits = cap >= len && cap / 2 <= len;
                        if fits && best.is_none_or(|(_, b)| cap < b) {
                            best = Some((i, cap));
                        }
                    }
                }
                best.map(|(i, _)| {
                    let mut c = shelf.arrays.remove(i);
                    shelf.bytes -= c.bytes();
                    std::mem::take(T::unwrap(&mut c).expect("chosen by type"))
                })
            };
            if let Some(mut v) = found {
                // Within the capacity: neither call allocates.
                if v.len() >= len {
                    v.truncate(len);
                } else {
                    v.resize(len, T::default());
                }
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(v);
            }
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        try_filled(len, T::default(), what)
    }

    /// Keeps `v` for a later [`OutputCache::take`] if it is large enough and the limit
    /// allows; evicts the oldest arrays to stay within the limit.
    pub(crate) fn give<T: Recyclable>(&self, v: Vec<T>) {
        let bytes = v.capacity() * std::mem::size_of::<T>();
        let limit = self.limit.load(Ordering::Relaxed);
        if bytes < MIN_RECYCLE_BYTES || bytes > limit {
            return;
        }
        let evicted = {
            let mut shelf = self.shelf.lock();
            shelf.arrays.push(T::wrap(v));
            shelf.bytes += bytes;
            evict(&mut shelf, limit)
        };
        // Unmapped outside the lock.
        drop(evicted);
    }

    /// Sets the bound on the bytes kept; 0 frees everything and stops recycling.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
        let evicted = evict(&mut self.shelf.lock(), limit);
        drop(evicted);
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            limit: self.limit.load(Ordering::Relaxed),
            held: self.shelf.lock().bytes,
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

/// Removes the oldest arrays until the shelf holds at most `limit` bytes; returns them
/// (the caller drops them after releasing the lock).
fn evict(shelf: &mut Shelf, limit: usize) -> Vec<Cached> {
    let mut n = 0;
    let mut bytes = shelf.bytes;
    while bytes > limit && n < shelf.arrays.len() {
        bytes -= shelf.arrays[n].bytes();
        n += 1;
    }
    shelf.bytes = bytes;
    shelf.arrays.drain(..n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: usize = MIN_RECYCLE_BYTES / 8 * 3; // 3 MiB of f64

    #[test]
    fn an_array_comes_back_with_its_pages_and_old_numbers() {
        let c = OutputCache::default();
        let mut v: Vec<f64> = c.take(BIG, "v").unwrap();
        v.iter_mut().for_each(|x| *x = 7.0);
        let p = v.as_ptr();
        c.give(v);
        assert_eq!(c.stats().held, BIG * 8);
        // Smaller request within a factor 2: same array, truncated, old numbers kept.
        let w: Vec<f64> = c.take(BIG - 100, "w").unwrap();
        assert_eq!((w.as_ptr(), w.len()), (p, BIG - 100));
        assert!(w.iter().all(|&x| x == 7.0));
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.held), (1, 1, 0));
        // Back and grown within its capacity: the grown tail is zero.
        c.give(w);
        let x: Vec<f64> = c.take(BIG, "x").unwrap();
        assert_eq!(x.as_ptr(), p);
        assert!(x[BIG - 100..].iter().all(|&y| y == 0.0));
    }

    #[test]
    fn types_sizes_and_the_limit_are_respected() {
        let c = OutputCache::default();
        c.give(vec![0f64; BIG]);
        // Another element type, a request too large, one too small: not served.
        let a: Vec<i64> = c.take(BIG, "a").unwrap();
        let b: Vec<f64> = c.take(BIG + 1, "b").unwrap();
        let d: Vec<f64> = c.take(BIG / 2 - 1, "d").unwrap();
        assert_eq!(c.stats().hits, 0);
        assert_eq!(c.stats().held, BIG * 8);
        // Small arrays are not kept.
        c.give(vec![0f64; 16]);
        assert_eq!(c.stats().held, BIG * 8);
        // The limit evicts the oldest first.
        c.set_limit(BIG * 8 + (BIG + 1) * 8);
        c.give(b);
        c.give(a);
        let s = c.stats();
        assert!(s.held <= s.limit, "{s:?}");
        let e: Vec<i64> = c.take(BIG, "e").unwrap();
        assert_eq!(c.stats().hits, 1);
        drop((d, e));
        // 0 frees everything and keeps nothing more.
        c.set_limit(0);
        assert_eq!(c.stats().held, 0);
        c.give(vec![0f64; BIG]);
        assert_eq!(c.stats().held, 0);
    }
}
