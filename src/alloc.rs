//! Fallible allocation. Every buffer whose size depends on the input goes through here,
//! so a request larger than memory becomes `Status::AllocFailed` instead of an abort.
//!
//! Growth scope: [`try_grow`] and [`try_reserve`] are how the per-worker accumulators
//! (the ONE2ONE pool chunks) get their memory. While a [`GrowthScope`] is entered on a
//! thread (the workspace pool enters one around each use of a worker's chunk), every
//! growth they perform hands the new allocation to the scope's [`GrowthHook`] before it
//! is filled: the topology layer binds it to the worker's NUMA node and touches it from
//! the worker (`crate::topo::chunk`). Outside a scope, and when no growth is needed, they
//! behave as plain `Vec` calls: the hot path (a `prepare` that finds its buffers large
//! enough) never reaches the hook.

use std::cell::Cell;
use std::mem::MaybeUninit;

use crate::error::{Error, Result, Status};

/// Receives every buffer that [`try_grow`] / [`try_reserve`] (re)allocate inside a
/// [`GrowthScope`]. It must not fail or allocate through this module.
pub trait GrowthHook {
    /// `area` is the whole new allocation of the vector (its capacity, in bytes; the first
    /// `init` bytes hold the vector's current elements, the rest is unused capacity).
    /// `previous` is the address of the allocation it replaces (0 when it had none), so a
    /// hook that records buffers can forget the old one. `what` names the buffer.
    fn grown(&mut self, area: &mut [MaybeUninit<u8>], init: usize, previous: usize, what: &str);
}

type HookSlot = Option<(
    *mut (),
    unsafe fn(*mut (), &mut [MaybeUninit<u8>], usize, usize, &str),
)>;

thread_local! {
    static HOOK: Cell<HookSlot> = const { Cell::new(None) };
}

/// While alive, growths on this thread go through a hook. Scopes nest (the inner one wins
/// until it ends).
pub struct GrowthScope<'h> {
    previous: HookSlot,
    _hook: std::marker::PhantomData<&'h mut ()>,
}

/// Calls the hook behind a type-erased pointer.
///
/// # Safety
/// `data` must point to a live `H`, not otherwise borrowed during the call.
unsafe fn call_hook<H: GrowthHook>(
    data: *mut (),
    area: &mut [MaybeUninit<u8>],
    init: usize,
    previous: usize,
    what: &str,
) {
    // SAFETY: the caller's contract; `GrowthScope` keeps `H` borrowed while installed.
    let hook = unsafe { &mut *data.cast::<H>() };
    hook.grown(area, init, previous, what);
}

impl<'h> GrowthScope<'h> {
    /// Installs `hook` for this thread until the scope is dropped.
    pub fn enter<H: GrowthHook>(hook: &'h mut H) -> GrowthScope<'h> {
        let data = (hook as *mut H).cast::<()>();
        let previous = HOOK.with(|h| h.replace(Some((data, call_hook::<H>))));
        GrowthScope {
            previous,
            _hook: std::marker::PhantomData,
        }
    }
}

impl Drop for GrowthScope<'_> {
    fn drop(&mut self) {
        HOOK.with(|h| h.set(self.previous));
    }
}

/// Hands `v`'s allocation to the thread's growth hook, if there is one.
fn after_growth<T>(v: &mut Vec<T>, previous: usize, what: &str) {
    // Taken out while it runs, so a hook that (wrongly) grows a vector cannot re-enter.
    let Some((data, f)) = HOOK.with(|h| h.take()) else {
        return;
    };
    let size = std::mem::size_of::<T>();
    let bytes = v.capacity() * size;
    if bytes > 0 {
        // SAFETY: the vector's allocation is `capacity * size_of::<T>()` bytes; viewed as
        // MaybeUninit bytes no validity is assumed, and `v` is not used meanwhile.
        let area = unsafe {
            std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<MaybeUninit<u8>>(), bytes)
        };
        // SAFETY: `data` is the hook installed by a live GrowthScope on this thread.
        unsafe { f(data, area, v.len() * size, previous, what) };
    }
    HOOK.with(|h| h.set(Some((data, f))));
}

fn addr_of_allocation<T>(v: &Vec<T>) -> usize {
    if v.capacity() == 0 || std::mem::size_of::<T>() == 0 {
        0
    } else {
        v.as_ptr() as usize
    }
}

/// A vector of `len` copies of `value`, or an error if the memory cannot be had.
pub fn try_filled<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `len` elements, or an error.
pub fn try_with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::new(
            Status::AllocFailed,
            format!(
                "cannot allocate {what}: {len} elements of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    advise_huge_capacity(&mut v);
    Ok(v)
}

/// Grows `v` to at least `len` elements filled with `value` (existing contents kept).
pub fn try_grow<T: Clone>(v: &mut Vec<T>, len: usize, value: T, what: &str) -> Result<()> {
    if v.len() < len {
        let previous = addr_of_allocation(v);
        let old_cap = v.capacity();
        v.try_reserve_exact(len - v.len()).map_err(|_| {
            Error::new(
                Status::AllocFailed,
                format!(
                    "cannot allocate {what}: {len} elements of {} bytes",
                    std::mem::size_of::<T>()
                ),
            )
        })?;
        advise_huge_capacity(v);
        if v.capacity() != old_cap || addr_of_allocation(v) != previous {
            after_growth(v, previous, what);
        }
        v.resize(len, value);
    }
    Ok(())
}

/// Reserves room for `additional` more elements, or an error.
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    let previous = addr_of_allocation(v);
    let old_cap = v.capacity();
    v.try_reserve_exact(additional).map_err(|_| {
        Error::new(
            Status::AllocFailed,
            format!(
                "cannot allocate {what}: {additional} elements of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    if v.capacity() != old_cap || addr_of_allocation(v) != previous {
        after_growth(v, previous, what);
    }
    Ok(())
}

/// Transparent huge pages (2 MiB) for memory of at least this many bytes.
pub const HUGE_MIN_BYTES: usize = 4 << 20;

/// Asks the kernel to back the 2 MiB-aligned interior of `[start, start + len)` with
/// transparent huge pages when it is first touched. On the benchmark inputs the output
/// of a product is tens of MB written once: with 4 KiB pages the page faults cost about as
/// much as the numeric kernel itself (one fault per 4 KiB, each with its own kernel entry,
/// cgroup charge and LRU insertion); one fault per 2 MiB removes nearly all of that.
/// Linux's default THP mode, `madvise`, applies huge pages only to advised ranges. The
/// advice is only a hint: contents are unchanged, and an error (non-anonymous memory, THP
/// disabled, other OS) leaves the ordinary pages.
pub fn advise_huge(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if len < HUGE_MIN_BYTES {
            return;
        }
        let lo = (start as usize).next_multiple_of(HUGE);
        let hi = (start as usize + len) / HUGE * HUGE;
        if hi > lo {
            // SAFETY: madvise(MADV_HUGEPAGE) changes no contents and no mapping; the range
            // lies within memory the caller owns.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (start, len);
    }
}

/// [`advise_huge`] over a slice about to be written.
pub fn advise_huge_slice<T>(s: &mut [T]) {
    advise_huge(s.as_mut_ptr().cast(), std::mem::size_of_val(s));
}

/// [`advise_huge`] over the spare capacity of `v` (before it is first written).
fn advise_huge_capacity<T>(v: &mut Vec<T>) {
    let spare = v.spare_capacity_mut();
    advise_huge(spare.as_mut_ptr().cast(), std::mem::size_of_val(spare));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counter {
        calls: Vec<(usize, usize, usize, String)>,
    }

    impl GrowthHook for Counter {
        fn grown(
            &mut self,
            area: &mut [MaybeUninit<u8>],
            init: usize,
            previous: usize,
            what: &str,
        ) {
            self.calls
                .push((area.len(), init, previous, what.to_string()));
        }
    }

    /// The hook sees real growth only, with the old allocation's address; scopes nest and
    /// end; outside a scope nothing is called.
    #[test]
    fn growth_scope_sees_each_growth_once() {
        let mut v: Vec<u64> = Vec::new();
        let mut outer = Counter::default();
        {
            let _s = GrowthScope::enter(&mut outer);
            try_grow(&mut v, 100, 7, "a").unwrap();
            try_grow(&mut v, 50, 7, "a").unwrap(); // big enough: no call
            let before = v.as_ptr() as usize;
            let mut inner = Counter::default();
            {
                let _t = GrowthScope::enter(&mut inner);
                try_grow(&mut v, 1000, 7, "b").unwrap();
            }
            assert_eq!(inner.calls.len(), 1);
            assert_eq!(inner.calls[0].2, before);
            assert_eq!(inner.calls[0].1, 100 * 8, "old elements are initialised");
            let mut w: Vec<u32> = Vec::new();
            try_reserve(&mut w, 10, "c").unwrap();
        }
        try_grow(&mut v, 5000, 7, "d").unwrap(); // no scope
        assert_eq!(v.len(), 5000);
        assert!(v.iter().all(|&x| x == 7));
        let whats: Vec<&str> = outer.calls.iter().map(|c| c.3.as_str()).collect();
        assert_eq!(whats, ["a", "c"]);
        assert_eq!(outer.calls[0].2, 0, "no previous allocation");
        assert!(outer.calls[0].0 >= 100 * 8 && outer.calls[1].0 >= 10 * 4);
    }
}
