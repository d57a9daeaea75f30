//! The C ABI. The only `extern "C"` code of the library: null checks, conversion of raw
//! pointers to borrowed views, a panic boundary around every entry point, status codes and
//! last-error text. No algorithm lives here.
//!
//! Names follow the header's conventions: types `spgemm_*_t`, constants `SPGEMM_*`.

#![allow(non_camel_case_types)]

pub mod boundary;
pub mod dist;
pub mod dist_spgemm;
pub mod handle;
pub mod matrix;
pub mod plan;
pub mod spmm;
pub mod topology;

use std::ffi::c_char;

use crate::error::Status;

/// Status code returned by every function (0 = success). See `SPGEMM_STATUS_*`.
pub type spgemm_status_t = i32;
/// Integer type of row offsets or column indices. See `SPGEMM_INDEX_*`.
pub type spgemm_index_type_t = i32;
/// Type of values: real or complex floating point. See `SPGEMM_VALUE_*`.
pub type spgemm_value_type_t = i32;
/// Index base: 0 (C) or 1 (Fortran).
pub type spgemm_index_base_t = i32;
/// SpGEMM algorithm. See `SPGEMM_ALG_*`.
pub type spgemm_algorithm_t = i32;
/// Binding of worker threads to cores. See `SPGEMM_BIND_*`.
pub type spgemm_bind_t = i32;
/// Use of high-bandwidth memory. See `SPGEMM_HBM_*`.
pub type spgemm_hbm_t = i32;
/// Where products run. See `SPGEMM_BACKEND_*`.
pub type spgemm_backend_t = i32;

/// The call succeeded.
pub const SPGEMM_STATUS_SUCCESS: spgemm_status_t = 0;
/// A required pointer argument was NULL.
pub const SPGEMM_STATUS_NULL_POINTER: spgemm_status_t = 1;
/// An argument had an invalid value (negative size, unknown enum code, misaligned array,
/// wrong array length, missing values).
pub const SPGEMM_STATUS_INVALID_VALUE: spgemm_status_t = 2;
/// The number of columns of A differs from the number of rows of B.
pub const SPGEMM_STATUS_DIMENSION_MISMATCH: spgemm_status_t = 3;
/// Row offsets do not start at the index base, decrease, or disagree with the entry count.
pub const SPGEMM_STATUS_INVALID_STRUCTURE: spgemm_status_t = 4;
/// A column index lies outside [base, base + ncols).
pub const SPGEMM_STATUS_INDEX_OUT_OF_RANGE: spgemm_status_t = 5;
/// A size, nnz(C) or a column index does not fit the requested integer type (for example
/// nnz(C) > 2^31 - 1 with int32 row offsets). Detected before anything is written.
pub const SPGEMM_STATUS_INDEX_OVERFLOW: spgemm_status_t = 6;
/// A and B have different index or value types, or a call's types differ from the plan's.
pub const SPGEMM_STATUS_TYPE_MISMATCH: spgemm_status_t = 7;
/// The matrices given to a numeric call differ in shape or structure from the plan's.
pub const SPGEMM_STATUS_PLAN_MISMATCH: spgemm_status_t = 8;
/// Memory could not be allocated (the request may exceed the machine's memory).
pub const SPGEMM_STATUS_ALLOC_FAILED: spgemm_status_t = 9;
/// The requested combination is not supported.
pub const SPGEMM_STATUS_NOT_SUPPORTED: spgemm_status_t = 10;
/// No usable GPU device.
pub const SPGEMM_STATUS_NO_DEVICE: spgemm_status_t = 11;
/// Internal error: a bug in libspgemm (the message says where). Please report it.
pub const SPGEMM_STATUS_INTERNAL: spgemm_status_t = 12;

/// 32-bit signed integers (`int32_t`, Fortran default `integer`).
pub const SPGEMM_INDEX_INT32: spgemm_index_type_t = 0;
/// 64-bit signed integers (`int64_t`, Fortran `integer(c_int64_t)`).
pub const SPGEMM_INDEX_INT64: spgemm_index_type_t = 1;
/// `size_t` (row offsets only, as in Tpetra).
pub const SPGEMM_INDEX_SIZE_T: spgemm_index_type_t = 2;

/// `float`.
pub const SPGEMM_VALUE_FLOAT32: spgemm_value_type_t = 0;
/// `double`.
pub const SPGEMM_VALUE_FLOAT64: spgemm_value_type_t = 1;
/// `float _Complex` (C99; real part then imaginary part, aligned as `float`), which is also
/// the layout of C++ `std::complex<float>` and Fortran `complex(c_float_complex)`.
pub const SPGEMM_VALUE_COMPLEX_FLOAT: spgemm_value_type_t = 2;
/// `double _Complex` (C99), C++ `std::complex<double>`, Fortran `complex(c_double_complex)`.
pub const SPGEMM_VALUE_COMPLEX_DOUBLE: spgemm_value_type_t = 3;

/// 0-based indices (C, C++).
pub const SPGEMM_INDEX_BASE_ZERO: spgemm_index_base_t = 0;
/// 1-based indices (Fortran).
pub const SPGEMM_INDEX_BASE_ONE: spgemm_index_base_t = 1;

/// Let the library choose per product and phase (default).
pub const SPGEMM_ALG_AUTO: spgemm_algorithm_t = 0;
/// Dense accumulator: a value and a marker per column of C in each thread (KKDENSE).
/// Fast when C has few columns; needs ncols(C) < 2^32.
pub const SPGEMM_ALG_KKDENSE: spgemm_algorithm_t = 1;
/// Hash accumulator with linear probing, at most half full (KKLP). Memory independent of
/// the number of columns of C.
pub const SPGEMM_ALG_KKLP: spgemm_algorithm_t = 2;
/// Two-level linked-list hash map (KKMEM): a small first level per thread that stays in
/// cache, a second level sized by the largest row only for rows that overflow it. Memory
/// independent of the number of columns of C.
pub const SPGEMM_ALG_KKMEM: spgemm_algorithm_t = 3;

/// Bind workers by a policy chosen from the machine (default): `SPGEMM_BIND_NONE` for fewer
/// workers than cores when other processes may share them (the creating thread's CPU mask
/// is the whole machine and no MPI launcher names the process's share: processes that each
/// bound from the first cores would all run there, as under `OMP_PROC_BIND=true`); else
/// `SPGEMM_BIND_SPREAD` when the machine has several NUMA domains or more cores than
/// workers, else `SPGEMM_BIND_CLOSE`.
pub const SPGEMM_BIND_AUTO: spgemm_bind_t = 0;
/// Do not bind workers (the OS places them within the creating thread's CPU mask).
pub const SPGEMM_BIND_NONE: spgemm_bind_t = 1;
/// Bind worker i to the i-th core in topology order (workers share caches and a socket).
pub const SPGEMM_BIND_CLOSE: spgemm_bind_t = 2;
/// Bind workers to cores spread evenly over the machine (over sockets and NUMA nodes).
pub const SPGEMM_BIND_SPREAD: spgemm_bind_t = 3;

/// Use high-bandwidth memory (MCDRAM, HBM) for workspace when the machine has it (default).
pub const SPGEMM_HBM_AUTO: spgemm_hbm_t = 0;
/// Never use high-bandwidth memory.
pub const SPGEMM_HBM_OFF: spgemm_hbm_t = 1;
/// Use high-bandwidth memory; when there is none, normal memory (the topology info says so).
pub const SPGEMM_HBM_ON: spgemm_hbm_t = 2;
/// GPU for large products when a usable CUDA device is present, else CPU (default).
pub const SPGEMM_BACKEND_AUTO: spgemm_backend_t = 0;
/// CPU only.
pub const SPGEMM_BACKEND_CPU: spgemm_backend_t = 1;
/// CUDA GPU (device 0). Symbolic calls fail with `SPGEMM_STATUS_NO_DEVICE` when no driver,
/// no NVRTC library or no device is found, and with `SPGEMM_STATUS_NOT_SUPPORTED` when a
/// size exceeds the GPU path's 32-bit device indices.
pub const SPGEMM_BACKEND_CUDA: spgemm_backend_t = 2;

/// Most worker threads a handle may have (`spgemm_set_num_threads`, `SPGEMM_NUM_THREADS`):
/// larger requests are `SPGEMM_STATUS_INVALID_VALUE`, refused before anything is allocated.
pub const SPGEMM_MAX_THREADS: i32 = crate::api::MAX_THREADS as i32;

/// Library version as "MAJOR.MINOR.PATCH".
pub const SPGEMM_VERSION_MAJOR: i32 = 0;
pub const SPGEMM_VERSION_MINOR: i32 = 1;
pub const SPGEMM_VERSION_PATCH: i32 = 0;

/// Returns a static, NUL-terminated description of `status` ("unknown status" for codes
/// this version does not define). Never NULL. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn spgemm_status_string(status: spgemm_status_t) -> *const c_char {
    let s = match Status::from_code(status) {
        Some(s) => s.description(),
        None => "unknown status\0",
    };
    s.as_ptr().cast()
}

/// Writes the library version to the non-NULL pointers among `major`, `minor`, `patch`.
/// Thread-safe.
///
/// # Safety
/// Each pointer is NULL or points to a writable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_version(
    major: *mut i32,
    minor: *mut i32,
    patch: *mut i32,
) -> spgemm_status_t {
    boundary::guard(None, || {
        // SAFETY: caller promises each non-NULL pointer is writable.
        unsafe {
            if let Some(p) = major.as_mut() {
                *p = SPGEMM_VERSION_MAJOR;
            }
            if let Some(p) = minor.as_mut() {
                *p = SPGEMM_VERSION_MINOR;
            }
            if let Some(p) = patch.as_mut() {
                *p = SPGEMM_VERSION_PATCH;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_constants_match_the_typed_codes() {
        let pairs = [
            (SPGEMM_STATUS_SUCCESS, Status::Success),
            (SPGEMM_STATUS_NULL_POINTER, Status::NullPointer),
            (SPGEMM_STATUS_INVALID_VALUE, Status::InvalidValue),
            (SPGEMM_STATUS_DIMENSION_MISMATCH, Status::DimensionMismatch),
            (SPGEMM_STATUS_INVALID_STRUCTURE, Status::InvalidStructure),
            (SPGEMM_STATUS_INDEX_OUT_OF_RANGE, Status::IndexOutOfRange),
            (SPGEMM_STATUS_INDEX_OVERFLOW, Status::IndexOverflow),
            (SPGEMM_STATUS_TYPE_MISMATCH, Status::TypeMismatch),
            (SPGEMM_STATUS_PLAN_MISMATCH, Status::PlanMismatch),
            (SPGEMM_STATUS_ALLOC_FAILED, Status::AllocFailed),
            (SPGEMM_STATUS_NOT_SUPPORTED, Status::NotSupported),
            (SPGEMM_STATUS_NO_DEVICE, Status::NoDevice),
            (SPGEMM_STATUS_INTERNAL, Status::Internal),
        ];
        assert_eq!(pairs.len(), Status::ALL.len());
        for (code, status) in pairs {
            assert_eq!(code, status as i32);
        }
    }
}
