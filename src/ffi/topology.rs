//! Handle options for thread binding and high-bandwidth memory, and the topology report.

use std::ffi::c_void;

use super::boundary::non_null;
use super::handle::{spgemm_handle_t, with_handle};
use super::{spgemm_bind_t, spgemm_hbm_t, spgemm_status_t};
use crate::api::{BindPolicy, HbmMode};
use crate::error::{Error, Status};

/// Chooses how the handle's worker threads are bound to cores (`SPGEMM_BIND_*`; default
/// `SPGEMM_BIND_AUTO`). When their cores change the running workers end and the new ones
/// start with the next call that splits its work; the per-thread workspace is then rebuilt
/// on first use. The environment variable `SPGEMM_PROC_BIND`
/// (spread, close, none, auto), when set to a valid value, overrides this option, so a
/// program's choice can be changed at run time as with `OMP_PROC_BIND`.
/// A binding the OS refuses is not an error: the worker runs unbound and
/// `spgemm_topology_info` reports why.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code).
/// Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_thread_binding(
    handle: *mut spgemm_handle_t,
    binding: spgemm_bind_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let p = BindPolicy::from_code(binding).ok_or_else(|| {
            Error::new(
                Status::InvalidValue,
                format!("binding = {binding} is not an SPGEMM_BIND_* code"),
            )
        })?;
        h.set_binding(p)
    })
}

/// Reads the binding policy in force into `*binding`: `SPGEMM_BIND_NONE`,
/// `SPGEMM_BIND_CLOSE` or `SPGEMM_BIND_SPREAD` (`SPGEMM_BIND_AUTO` resolved to what it
/// chose on this machine for the current number of threads).
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `binding` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_thread_binding(
    handle: *mut spgemm_handle_t,
    binding: *mut spgemm_bind_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(binding, "binding")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *binding = h.placement().policy as i32 };
        Ok(())
    })
}

/// Chooses whether per-thread workspace and temporary arrays are placed on
/// high-bandwidth memory (MCDRAM, HBM) local to each worker (`SPGEMM_HBM_*`; default
/// `SPGEMM_HBM_AUTO`: when the topology shows such memory). Normal memory is used when
/// there is none or it is full. Errors: `SPGEMM_STATUS_NULL_POINTER`,
/// `SPGEMM_STATUS_INVALID_VALUE` (unknown code). Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_hbm(
    handle: *mut spgemm_handle_t,
    mode: spgemm_hbm_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let m = HbmMode::from_code(mode).ok_or_else(|| {
            Error::new(
                Status::InvalidValue,
                format!("mode = {mode} is not an SPGEMM_HBM_* code"),
            )
        })?;
        h.set_hbm(m)
    })
}

/// Reads the high-bandwidth memory mode (`SPGEMM_HBM_*`, as set) into `*mode`, and into
/// `*present` (if not NULL) 1 when the topology shows high-bandwidth memory, else 0.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle or mode NULL).
///
/// # Safety
/// `handle` is NULL or live; `mode` is NULL or writable; `present` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_hbm(
    handle: *mut spgemm_handle_t,
    mode: *mut spgemm_hbm_t,
    present: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(mode, "mode")?;
        // SAFETY: non-NULL (mode) or checked (present), writable per contract.
        unsafe {
            *mode = h.hbm_mode() as i32;
            if let Some(p) = present.as_mut() {
                *p = h.hbm_present() as i32;
            }
        }
        Ok(())
    })
}

/// Writes a JSON description of what the library sees and chose for `handle`: source of
/// the topology, cores (PU OS indices), NUMA nodes (capacity, subtype, bandwidth in MiB/s
/// when the platform reports it, whether high-bandwidth), the binding policy asked for,
/// where it came from and what it resolved to, per worker its core, PUs, NUMA node,
/// memory node for its workspace and binding outcome, per worker the accumulator chunk as
/// allocated (planned node, bytes, bytes bound and on high-bandwidth memory, nodes asked
/// for and nodes the kernel reported for its pages, state `empty`/`verified`/`bound`/
/// `partial`/`ordinary`/`elsewhere`, fallback reasons), and notes (fallbacks). Starts the
/// workers if they are not running, so that their binding outcomes are known.
///
/// Two-call pattern: `*needed` (required) receives the size in bytes including the
/// terminating NUL. With `buf` NULL and `len` 0 only `*needed` is written (success). If
/// `len >= *needed` the text is copied to `buf` (NUL-terminated). If `0 < len < *needed`,
/// `buf[0]` is set to NUL and `SPGEMM_STATUS_INVALID_VALUE` is returned.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle or needed NULL, or buf NULL with len > 0),
/// `SPGEMM_STATUS_INVALID_VALUE` (buffer too small). Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or live; `buf` is NULL or points to `len` writable bytes; `needed` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_topology_info(
    handle: *mut spgemm_handle_t,
    buf: *mut c_void,
    len: usize,
    needed: *mut usize,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(needed, "needed")?;
        if len > 0 {
            non_null(buf, "buf")?;
        }
        let text = h.topology_info();
        let need = text.len() + 1;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *needed = need };
        if len == 0 {
            return Ok(());
        }
        // SAFETY: buf is non-NULL with `len` writable bytes per contract; we write at most
        // `need <= len` bytes, or one byte.
        unsafe {
            if len < need {
                *buf.cast::<u8>() = 0;
                return Err(Error::new(
                    Status::InvalidValue,
                    format!("len = {len} is too small for the topology info: {need} bytes needed"),
                ));
            }
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
            *buf.cast::<u8>().add(text.len()) = 0;
        }
        Ok(())
    })
}
