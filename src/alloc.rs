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
