//! `spgemm_handle_t`: creation, options, last error.

use std::ffi::c_char;

use parking_lot::Mutex;

use super::boundary::{LastError, guard, non_null, thread_last_error_ptr};
use super::{spgemm_algorithm_t, spgemm_backend_t, spgemm_status_t};
use crate::api::{Algorithm, Backend, Handle};
use crate::error::{Error, Status};

/// Opaque library context: worker threads, options and reusable workspace.
pub struct spgemm_handle_t {
    pub(crate) inner: Mutex<Handle>,
    pub(crate) last_error: LastError,
}

/// Borrows a handle pointer (NULL checked by the caller of this helper).
pub(crate) unsafe fn handle_ref<'a>(h: *const spgemm_handle_t) -> Option<&'a spgemm_handle_t> {
    // SAFETY: caller passes NULL or a pointer from spgemm_create that is not destroyed.
    unsafe { h.as_ref() }
}

/// Creates a handle with the default number of threads (environment variable
/// `SPGEMM_NUM_THREADS`, else all cores, at most `SPGEMM_MAX_THREADS`) and default
/// options: algorithm `SPGEMM_ALG_AUTO`, sorted output, input validation on.
///
/// On success `*handle` owns the new handle; release it with `spgemm_destroy`. No thread
/// is started here: the workers start with the first call that splits its work (a small
/// product runs on the calling thread and starts none); a call whose workers cannot be
/// started returns `SPGEMM_STATUS_ALLOC_FAILED`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle is NULL), `SPGEMM_STATUS_INVALID_VALUE`
/// (`SPGEMM_NUM_THREADS` set but not a count from 1 to `SPGEMM_MAX_THREADS`). Thread-safe.
///
/// # Safety
/// `handle` is NULL or points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_create(handle: *mut *mut spgemm_handle_t) -> spgemm_status_t {
    guard(None, || {
        non_null(handle, "handle")?;
        // SAFETY: non-NULL and writable per the contract.
        unsafe { *handle = std::ptr::null_mut() };
        let h = Box::new(spgemm_handle_t {
            inner: Mutex::new(Handle::new(0)?),
            last_error: LastError::default(),
        });
        // SAFETY: as above.
        unsafe { *handle = Box::into_raw(h) };
        Ok(())
    })
}

/// Destroys a handle and its threads and workspace; returns once the worker threads have
/// ended. `spgemm_destroy(NULL)` does nothing.
/// Plans and matrices made with the handle stay valid. Must not run concurrently with
/// another call on the same handle.
///
/// # Safety
/// `handle` is NULL or a live handle from `spgemm_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_destroy(handle: *mut spgemm_handle_t) -> spgemm_status_t {
    guard(None, || {
        if !handle.is_null() {
            // SAFETY: pointer came from Box::into_raw in spgemm_create.
            drop(unsafe { Box::from_raw(handle) });
        }
        Ok(())
    })
}

/// Runs `f` with the locked handle; errors are recorded on the handle.
pub(crate) fn with_handle(
    handle: *const spgemm_handle_t,
    f: impl FnOnce(&mut Handle) -> crate::error::Result<()>,
) -> spgemm_status_t {
    // SAFETY: caller passes NULL or a live handle.
    let h = unsafe { handle_ref(handle) };
    guard(h.map(|h| &h.last_error), || {
        let h = h.ok_or_else(|| Error::new(Status::NullPointer, "handle is NULL"))?;
        f(&mut h.inner.lock())
    })
}

/// Sets the number of worker threads (0 = the default of `spgemm_create`). If the number
/// changes, the running workers end here and the new ones start with the next call that
/// splits its work.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (negative, or above
/// `SPGEMM_MAX_THREADS`). Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_num_threads(
    handle: *mut spgemm_handle_t,
    num_threads: i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        if num_threads < 0 {
            return Err(Error::new(
                Status::InvalidValue,
                format!("num_threads = {num_threads} is negative"),
            ));
        }
        h.set_threads(num_threads as usize)
    })
}

/// Reads the number of worker threads into `*num_threads`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `num_threads` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_num_threads(
    handle: *mut spgemm_handle_t,
    num_threads: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(num_threads, "num_threads")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *num_threads = i32::try_from(h.threads()).unwrap_or(i32::MAX) };
        Ok(())
    })
}

/// Chooses the SpGEMM algorithm for later symbolic calls (`SPGEMM_ALG_*`; default
/// `SPGEMM_ALG_AUTO`). A plan keeps the algorithm it was made with.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code).
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_algorithm(
    handle: *mut spgemm_handle_t,
    algorithm: spgemm_algorithm_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.algorithm = Algorithm::from_code(algorithm).ok_or_else(|| {
            Error::new(
                Status::InvalidValue,
                format!("algorithm = {algorithm} is not an SPGEMM_ALG_* code"),
            )
        })?;
        Ok(())
    })
}

/// Reads the algorithm option into `*algorithm`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `algorithm` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_algorithm(
    handle: *mut spgemm_handle_t,
    algorithm: *mut spgemm_algorithm_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(algorithm, "algorithm")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *algorithm = h.options.algorithm as i32 };
        Ok(())
    })
}

/// Chooses where later symbolic calls run (`SPGEMM_BACKEND_*`; default
/// `SPGEMM_BACKEND_AUTO`). A plan runs its numeric calls where it was made. Selecting
/// `SPGEMM_BACKEND_CUDA` opens the GPU at once (kernels are compiled by NVRTC on first
/// use and cached in the handle), so a missing device is reported here.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (unknown code),
/// `SPGEMM_STATUS_NO_DEVICE` (CUDA asked for but no driver, NVRTC or device: the option is
/// left unchanged, and the message says which is missing). Calls on one handle are
/// serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_backend(
    handle: *mut spgemm_handle_t,
    backend: spgemm_backend_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let b = Backend::from_code(backend).ok_or_else(|| {
            Error::new(
                Status::InvalidValue,
                format!("backend = {backend} is not an SPGEMM_BACKEND_* code"),
            )
        })?;
        if b == Backend::Cuda {
            h.gpu_check()?;
        }
        h.options.backend = b;
        Ok(())
    })
}

/// Reads the backend option into `*backend`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `backend` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_backend(
    handle: *mut spgemm_handle_t,
    backend: *mut spgemm_backend_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(backend, "backend")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *backend = h.options.backend as i32 };
        Ok(())
    })
}

/// Chooses whether C's column indices are sorted within each row (non-zero, the default)
/// or left in the accumulator's order (0: skips all sorting work). Applies to plans made
/// afterwards. Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_sorted_output(
    handle: *mut spgemm_handle_t,
    sorted: i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.sorted_output = sorted != 0;
        Ok(())
    })
}

/// Reads the sorted-output option (1 or 0) into `*sorted`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `sorted` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_sorted_output(
    handle: *mut spgemm_handle_t,
    sorted: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(sorted, "sorted")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *sorted = h.options.sorted_output as i32 };
        Ok(())
    })
}

/// Turns the full O(nnz) input checks on (non-zero, the default) or off (0). With checks
/// on, offsets must be non-decreasing, column indices in range, and a numeric call's inputs
/// must have the structure the plan was made for. With checks off the caller guarantees
/// this; violations may then give wrong results or `SPGEMM_STATUS_INTERNAL`, but O(1)
/// checks (NULL pointers, sizes, first and last row offset) are always made.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_validation(
    handle: *mut spgemm_handle_t,
    enabled: i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.validate = enabled != 0;
        Ok(())
    })
}

/// Reads the validation option (1 or 0) into `*enabled`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `enabled` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_validation(
    handle: *mut spgemm_handle_t,
    enabled: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(enabled, "enabled")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *enabled = h.options.validate as i32 };
        Ok(())
    })
}

/// Bounds the memory the handle keeps for recycling the arrays of results it returned
/// (`spgemm_multiply`): when such a matrix is destroyed its arrays (those of at least
/// 1 MiB) are kept, up to `max_bytes` in all, oldest evicted first, and the next result
/// of this handle takes a kept array of its type that fits instead of new memory, whose
/// pages the system would have to clear on first write (for a C of tens of MiB a large
/// part of the numeric phase). Default 1 GiB. 0 frees what is kept and turns recycling off. Arrays
/// the caller passes (`spgemm_numeric`) are never kept. Kept arrays are freed when the
/// handle and every matrix it returned are destroyed. Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_output_cache(
    handle: *mut spgemm_handle_t,
    max_bytes: usize,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.outputs.set_limit(max_bytes);
        Ok(())
    })
}

/// Reads the recycling bound (`spgemm_set_output_cache`) into `*max_bytes` and the bytes
/// kept now into `*held_bytes`; either pointer may be NULL.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle).
///
/// # Safety
/// `handle` is NULL or live; each output pointer is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_output_cache(
    handle: *mut spgemm_handle_t,
    max_bytes: *mut usize,
    held_bytes: *mut usize,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let s = h.outputs.stats();
        // SAFETY: each non-NULL output is writable per contract.
        unsafe {
            if let Some(p) = max_bytes.as_mut() {
                *p = s.limit;
            }
            if let Some(p) = held_bytes.as_mut() {
                *p = s.held;
            }
        }
        Ok(())
    })
}

/// Bounds the extra memory each later call on the handle may allocate, in bytes (0, the
/// default: no bound). Before allocating, the symbolic phase, the numeric phase, the one-call
/// products (C's arrays included), and `spgemm_spmm_analysis_create` estimate an upper bound
/// of their peak host memory (workspace per thread times threads, C's row offsets, flop
/// counts, compressed B, transposes, C's arrays the library allocates) and return
/// `SPGEMM_STATUS_ALLOC_FAILED` when it exceeds the bound, with the estimate, its parts and
/// the bound in `spgemm_last_error`; nothing is allocated then and the handle stays usable.
/// The caller's arrays and matrices, GPU memory, and the handle's worker threads (started
/// by the first call that splits its work, kept until the handle's thread count or binding
/// changes) are not counted.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`. Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_memory_limit(
    handle: *mut spgemm_handle_t,
    max_bytes: usize,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.memory_limit = max_bytes;
        Ok(())
    })
}

/// Reads the memory bound (`spgemm_set_memory_limit`; 0 = none) into `*max_bytes`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `max_bytes` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_memory_limit(
    handle: *mut spgemm_handle_t,
    max_bytes: *mut usize,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(max_bytes, "max_bytes")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *max_bytes = h.options.memory_limit };
        Ok(())
    })
}

/// The message of the most recent call on `handle` if that call failed (it names the
/// offending argument and index), or, when `handle` is NULL, of the calling thread's most
/// recent call of any function that returns a status. Empty when that call succeeded.
/// Never NULL. The text stays valid until the next call on the same handle (or by the same
/// thread, for NULL); copy it if you need it longer.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_last_error(handle: *const spgemm_handle_t) -> *const c_char {
    // SAFETY: caller passes NULL or a live handle.
    match unsafe { handle_ref(handle) } {
        Some(h) => h.last_error.ptr(),
        None => thread_last_error_ptr(),
    }
}

/// Turns hybrid CPU+GPU products on (non-zero) or off (0, the default) for later symbolic
/// calls. With a usable GPU (backend `SPGEMM_BACKEND_AUTO` or `SPGEMM_BACKEND_CUDA`), a
/// hybrid plan computes the first rows of C on the CPU and the rest on the GPU at the same
/// time: the split balances predicted times by flops, from CPU and GPU rates measured by
/// earlier numeric calls on this handle (before any, the CPU takes 25% of the flops), or
/// for band matrices A and B by the band rule. Without a usable GPU, or with
/// `SPGEMM_BACKEND_CPU`, every row runs on the CPU and the plan says so
/// (`spgemm_plan_info`, `spgemm_plan_get_split`). Hybrid plans take host arrays only.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`. Calls on one handle are serialised.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_hybrid(
    handle: *mut spgemm_handle_t,
    enabled: i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.hybrid = enabled != 0;
        Ok(())
    })
}

/// Reads the hybrid option (1 or 0) into `*enabled`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `enabled` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_hybrid(
    handle: *mut spgemm_handle_t,
    enabled: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(enabled, "enabled")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *enabled = h.options.hybrid as i32 };
        Ok(())
    })
}

/// Makes later numeric calls on the GPU give the same bits on every run (non-zero), or
/// lets them sum each entry in the order threads arrive (0, the default, faster). With it
/// on, each row of C is summed by one GPU thread in A's then B's order (as the CPU
/// backend sums) and rows come out sorted. The CPU backend's results never depend on
/// thread timing, so the option changes nothing there. Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_reproducible(
    handle: *mut spgemm_handle_t,
    enabled: i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        h.options.reproducible = enabled != 0;
        Ok(())
    })
}

/// Reads the reproducible option (1 or 0) into `*enabled`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`.
///
/// # Safety
/// `handle` is NULL or live; `enabled` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_get_reproducible(
    handle: *mut spgemm_handle_t,
    enabled: *mut i32,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        non_null(enabled, "enabled")?;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *enabled = h.options.reproducible as i32 };
        Ok(())
    })
}

/// Sets the directory where compiled GPU kernels are kept across processes (process-wide;
/// overrides the environment variable `SPGEMM_KERNEL_CACHE`). `dir` NULL or "" turns the
/// disk cache off. Without either, the cache is `$XDG_CACHE_HOME/libspgemm`, else
/// `$HOME/.cache/libspgemm`. An entry is keyed by the library and NVRTC versions, the
/// kernel source, its value type and the device architecture; a corrupt or foreign entry
/// is compiled again and rewritten. A directory that cannot be written only costs the
/// compilation. Applies to kernels compiled afterwards (each handle compiles once).
/// Errors: `SPGEMM_STATUS_INVALID_VALUE` (not UTF-8).
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_set_kernel_cache_dir(dir: *const c_char) -> spgemm_status_t {
    guard(None, || {
        let d = if dir.is_null() {
            None
        } else {
            // SAFETY: NUL-terminated per contract.
            let s = unsafe { std::ffi::CStr::from_ptr(dir) };
            let s = s
                .to_str()
                .map_err(|_| Error::new(Status::InvalidValue, "dir is not valid UTF-8"))?;
            (!s.is_empty()).then(|| std::path::PathBuf::from(s))
        };
        crate::api::set_kernel_cache_dir(d);
        Ok(())
    })
}
