//! Fallible allocation. Every buffer whose size depends on the input goes through here,
//! so a request larger than memory becomes `Status::AllocFailed` instead of an abort.
//!
//! Growth scope: [`try_grow`] and [`try_reserve`] are how the per-worker accumulators
//! (the ONE2ONE pool chunks) get their memory. While a [`GrowthScope`] is entered on a
//! thread (the workspace pool enters one around each use of a worker's chunk), every
//! growth they perform hands the new allocation to the scope's [`GrowthHook`] before it
//! is filled: the topology layer binds it to the worker's NUMA node and touches it from
//! the worker (`crate::platform::topo::chunk`). Outside a scope, and when no growth is needed, they
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

/// The error of an allocation of `len` elements of `T` for `what` that could not be had.
fn alloc_failed<T>(what: &str, len: usize) -> Error {
    Error::new(
        Status::AllocFailed,
        format!(
            "cannot allocate {what}: {len} elements of {} bytes",
            std::mem::size_of::<T>()
        ),
    )
}

/// An empty vector with room for `len` elements, or an error.
pub fn try_with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| alloc_failed::<T>(what, len))?;
    advise_huge_capacity(&mut v);
    Ok(v)
}

/// `len` zeros in a `Vec`, from the allocator's zeroed allocation: a large block comes from
/// fresh pages that are zero already, so no serial fill pass touches them; the first
/// writes (often by several threads) fault them in instead.
pub fn try_zeroed_vec<T: ZeroBits>(len: usize, what: &str) -> Result<Vec<T>> {
    let fail = || alloc_failed::<T>(what, len);
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| fail())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return Err(fail());
    }
    // SAFETY: `p` was allocated by the global allocator with the layout of `len` T's
    // (what `Vec` uses for capacity `len`), and all-zero bits are a valid T (`ZeroBits`).
    let mut v = unsafe { Vec::from_raw_parts(p, len, len) };
    advise_huge_capacity(&mut v);
    Ok(v)
}

/// Grows `v` to at least `len` elements filled with `value` (existing contents kept).
pub fn try_grow<T: Clone>(v: &mut Vec<T>, len: usize, value: T, what: &str) -> Result<()> {
    if v.len() < len {
        let previous = addr_of_allocation(v);
        let old_cap = v.capacity();
        v.try_reserve_exact(len - v.len())
            .map_err(|_| alloc_failed::<T>(what, len))?;
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
    v.try_reserve_exact(additional)
        .map_err(|_| alloc_failed::<T>(what, additional))?;
    if v.capacity() != old_cap || addr_of_allocation(v) != previous {
        after_growth(v, previous, what);
    }
    Ok(())
}

/// Element types whose all-zero bit pattern is a valid value (for [`Zeroed`]).
pub trait ZeroBits: Copy + Send + Sync + 'static {}
impl ZeroBits for u32 {}
impl ZeroBits for u64 {}
impl ZeroBits for usize {}

/// A zero-filled buffer in its own anonymous memory mapping, unmapped when dropped.
///
/// For large temporaries that die before the product's output is written (the compressed
/// B of the symbolic phase). Freed heap memory often stays in the process: glibc raises its
/// mmap threshold (up to 32 MiB) after the application frees a large block, so later
/// blocks below it come from the heap and are kept after `free`, and such a temporary then
/// adds to the peak resident memory reached later when C is filled. A mapping of its own is
/// returned at once; it also starts zeroed without a fill pass.
pub struct Zeroed<T: ZeroBits> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
}

// SAFETY: `Zeroed` owns its memory exclusively, like a `Vec<T>` of `Send + Sync` elements.
unsafe impl<T: ZeroBits> Send for Zeroed<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: ZeroBits> Sync for Zeroed<T> {}

impl<T: ZeroBits> Zeroed<T> {
    fn bytes(len: usize) -> usize {
        len * std::mem::size_of::<T>()
    }

    /// `len` zeros, or an error naming `what` when the memory cannot be had.
    pub fn new(len: usize, what: &str) -> Result<Zeroed<T>> {
        let fail = || alloc_failed::<T>(what, len);
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(fail)?;
        if bytes == 0 {
            return Ok(Zeroed {
                ptr: std::ptr::NonNull::dangling(),
                len,
            });
        }
        #[cfg(unix)]
        let p = {
            // A large buffer starts on a 2 MiB boundary, so all of it but the tail can be
            // backed by huge pages: it is written once right after being mapped, and one
            // fault per 2 MiB instead of per 4 KiB is most of the cost of that first
            // touch. The mapping is made 2 MiB longer and the unused ends are unmapped.
            let align = if cfg!(target_os = "linux") && bytes >= HUGE_PAGE {
                HUGE_PAGE
            } else {
                0
            };
            let map_bytes = bytes.checked_add(align).ok_or_else(fail)?;
            // SAFETY: a new private anonymous mapping; no existing memory is affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_bytes,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(fail());
            }
            let mut start = p.cast::<u8>();
            if align > 0 {
                let addr = p as usize;
                let aligned = addr.next_multiple_of(HUGE_PAGE);
                let head = aligned - addr;
                // Page-rounded end of the part kept.
                let keep_end = (aligned + bytes).next_multiple_of(PAGE);
                let tail = addr + map_bytes - keep_end;
                // SAFETY: both ranges lie in the mapping just made, page-aligned (mmap
                // returns page-aligned addresses; `aligned` and `keep_end` are multiples of
                // the page size), outside the `bytes` kept from `aligned` on.
                unsafe {
                    if head > 0 {
                        libc::munmap(p, head);
                    }
                    if tail > 0 {
                        libc::munmap(keep_end as *mut libc::c_void, tail);
                    }
                }
                start = aligned as *mut u8;
                #[cfg(target_os = "linux")]
                // SAFETY: madvise(MADV_HUGEPAGE) changes no contents and no mapping; the
                // whole huge pages from `aligned` on lie within the part kept.
                unsafe {
                    libc::madvise(
                        aligned as *mut libc::c_void,
                        bytes / HUGE_PAGE * HUGE_PAGE,
                        libc::MADV_HUGEPAGE,
                    );
                }
            }
            start.cast::<T>()
        };
        #[cfg(not(unix))]
        let p = {
            let layout = std::alloc::Layout::array::<T>(len).map_err(|_| fail())?;
            // SAFETY: the layout has a non-zero size (bytes > 0).
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            p.cast::<T>()
        };
        Ok(Zeroed {
            ptr: std::ptr::NonNull::new(p).ok_or_else(fail)?,
            len,
        })
    }
}

impl<T: ZeroBits> std::ops::Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised elements (zero is valid for T) owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroBits> std::ops::DerefMut for Zeroed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroBits> Drop for Zeroed<T> {
    fn drop(&mut self) {
        let bytes = Self::bytes(self.len);
        if bytes == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), bytes);
        }
        #[cfg(not(unix))]
        // SAFETY: allocated in `new` with this layout.
        unsafe {
            let layout = std::alloc::Layout::array::<T>(self.len).expect("checked in new");
            std::alloc::dealloc(self.ptr.as_ptr().cast(), layout);
        }
    }
}

impl<T: ZeroBits + std::fmt::Debug> std::fmt::Debug for Zeroed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Zeroed({} elements)", self.len)
    }
}

/// `s` seen as twice as many u32s (in memory order), so that arrays of both widths can
/// share one [`Zeroed`] mapping.
pub fn u32s_of(s: &[u64]) -> &[u32] {
    // SAFETY: u32 has no invalid bit patterns and a u64 slice is aligned for u32; the
    // view covers exactly the bytes of `s` and borrows it.
    let (head, mid, tail) = unsafe { s.align_to::<u32>() };
    debug_assert!(head.is_empty() && tail.is_empty());
    mid
}

/// [`u32s_of`], mutable.
pub fn u32s_of_mut(s: &mut [u64]) -> &mut [u32] {
    // SAFETY: as in `u32s_of`; the view borrows `s` exclusively.
    let (head, mid, tail) = unsafe { s.align_to_mut::<u32>() };
    debug_assert!(head.is_empty() && tail.is_empty());
    mid
}

/// Size of a transparent huge page on x86-64 and most aarch64 kernels.
pub(crate) const HUGE_PAGE: usize = 2 << 20;
/// Smallest page size the mappings are aligned to.
const PAGE: usize = 4096;

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

/// Buffers below this size are kept resident by [`release_pages`] (too few pages to matter).
const RELEASE_MIN_BYTES: usize = 1 << 20;

/// Empties `v` and hands the whole pages of its allocation back to the kernel
/// (`MADV_DONTNEED`), keeping the allocation itself: resident memory drops at once, which
/// freeing would not do for a heap block (glibc keeps freed blocks below its dynamic mmap
/// threshold, up to 32 MiB, in its heaps). Growing `v` again later touches fresh pages,
/// as a new allocation would. Small buffers are only emptied.
pub fn release_pages<T>(v: &mut Vec<T>) {
    v.clear();
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < RELEASE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_mut_ptr() as usize;
        let lo = start.next_multiple_of(PAGE);
        let hi = (start + bytes) / PAGE * PAGE;
        if hi > lo {
            // SAFETY: the pages lie within `v`'s allocation, which holds no element now
            // (len 0), so dropping their contents changes no value anyone can read; the
            // mapping stays, and later writes fault in zeroed pages.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED);
            }
        }
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

    #[test]
    fn allocation_failure_is_an_error() {
        let e = try_filled(usize::MAX / 4, 0u64, "test").unwrap_err();
        assert_eq!(e.status, crate::Status::AllocFailed);
        let e = try_with_capacity::<u64>(1usize << 50, "test").unwrap_err();
        assert_eq!(e.status, crate::Status::AllocFailed);
    }

    #[test]
    fn released_buffers_empty_and_grow_again() {
        for len in [0usize, 10, (3 << 20) / 4 + 5] {
            let mut v = try_filled(len, 7u32, "test").unwrap();
            let cap = v.capacity();
            release_pages(&mut v);
            assert!(v.is_empty());
            assert_eq!(v.capacity(), cap);
            try_grow(&mut v, len, 9u32, "test").unwrap();
            assert!(v.iter().all(|&x| x == 9));
        }
    }

    #[test]
    fn zeroed_buffers_start_zero_and_hold_writes() {
        for len in [0usize, 1, 1000, (5 << 20) / 8 + 3] {
            let mut z = Zeroed::<u64>::new(len, "test").unwrap();
            assert_eq!(z.len(), len);
            assert!(z.iter().all(|&x| x == 0));
            for (i, x) in z.iter_mut().enumerate() {
                *x = i as u64 * 3;
            }
            assert!(z.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
        }
        // Around the 2 MiB threshold: big buffers start on a huge-page boundary (their
        // mapping was trimmed at both ends) and still hold every element.
        for len in [
            HUGE_PAGE / 8 - 1,
            HUGE_PAGE / 8,
            HUGE_PAGE / 8 + 1,
            (3 << 20) / 8 + 5,
        ] {
            let mut z = Zeroed::<u64>::new(len, "test").unwrap();
            if cfg!(target_os = "linux") && len * 8 >= HUGE_PAGE {
                assert_eq!(z.as_ptr() as usize % HUGE_PAGE, 0, "len {len}");
            }
            assert!(z.iter().all(|&x| x == 0));
            z[len - 1] = 7;
            z[0] = 5;
            assert_eq!(z.iter().sum::<u64>(), 12);
        }
        for len in [0usize, 3, 1 << 20] {
            let v = try_zeroed_vec::<usize>(len, "test").unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0));
        }
        let e = try_zeroed_vec::<u64>(usize::MAX / 4, "zeroed test vector").unwrap_err();
        assert_eq!(e.status, Status::AllocFailed);
        assert!(e.message.contains("zeroed test vector"));
        let e = Zeroed::<u64>::new(usize::MAX / 4, "huge test buffer").unwrap_err();
        assert_eq!(e.status, Status::AllocFailed);
        assert!(e.message.contains("huge test buffer"));
    }

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
