//! Fallible allocation. Every buffer whose size depends on the input goes through here,
//! so a request larger than memory becomes `Status::AllocFailed` instead of an abort.

use crate::error::{Error, Result, Status};

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
        v.resize(len, value);
    }
    Ok(())
}

/// Reserves room for `additional` more elements, or an error.
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve_exact(additional).map_err(|_| {
        Error::new(
            Status::AllocFailed,
            format!(
                "cannot allocate {what}: {additional} elements of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })
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
