//! `spgemm_plan_t` and the product entry points: symbolic, numeric (with and without
//! values), the one-call product.

use std::ffi::c_void;

use parking_lot::Mutex;

use super::boundary::{guard, non_null};
use super::handle::{spgemm_handle_t, with_handle};
use super::matrix::{
    MatrixKind, dim, index_base, index_type, matrix_ref, raw_slice_mut, spgemm_matrix_t,
    value_type, values_out,
};
use super::spmm::{SPGEMM_OPERATION_NON_TRANSPOSE, op_of, spgemm_operation_t};
use super::{
    spgemm_algorithm_t, spgemm_index_base_t, spgemm_index_type_t, spgemm_status_t,
    spgemm_value_type_t,
};
use crate::api::{
    self, DeviceCsr, DeviceOut, DevicePtr, IndexSliceMut, NumericInputs, NumericOutputs,
    OffsetSliceMut, OutputFormat, Plan,
};
use crate::error::{Error, Result, Status, err};
use crate::types::{IndexType, ValueType};

/// Opaque result of the symbolic phase, reused by numeric calls.
pub struct spgemm_plan_t {
    inner: Mutex<Plan>,
}

unsafe fn plan_ref<'a>(p: *const spgemm_plan_t) -> Result<&'a spgemm_plan_t> {
    // SAFETY: caller passes NULL or a live plan.
    unsafe { p.as_ref() }.ok_or_else(|| Error::new(Status::NullPointer, "plan is NULL"))
}

pub(crate) fn output_format(
    offset_type: spgemm_index_type_t,
    idx_type: spgemm_index_type_t,
    base: spgemm_index_base_t,
) -> Result<OutputFormat> {
    let offsets = index_type(offset_type, "c_offset_type")?;
    let indices = index_type(idx_type, "c_index_type")?;
    if indices == IndexType::SizeT {
        return err(
            Status::InvalidValue,
            "c_index_type: size_t column indices are not supported (use int32 or int64)",
        );
    }
    Ok(OutputFormat {
        offsets,
        indices,
        base: index_base(base, "c_base")?,
    })
}

/// Caller's row-offset array as a typed slice of `len` entries.
pub(crate) unsafe fn offsets_out<'a>(
    p: *mut c_void,
    t: IndexType,
    len: usize,
) -> Result<OffsetSliceMut<'a>> {
    // SAFETY: caller guarantees `len` writable entries.
    unsafe {
        Ok(match t {
            IndexType::Int32 => OffsetSliceMut::I32(raw_slice_mut(p, len, "c_row_offsets")?),
            IndexType::Int64 => OffsetSliceMut::I64(raw_slice_mut(p, len, "c_row_offsets")?),
            IndexType::SizeT => OffsetSliceMut::U64(raw_slice_mut(p, len, "c_row_offsets")?),
        })
    }
}

/// Symbolic phase of C = A*B: computes the structure size of C and the work partition.
///
/// A is m x n, B is n x k (both may be empty); A and B must use the same offset, index and
/// value types (their index bases may differ). C's storage is chosen here: `c_offset_type`
/// (`SPGEMM_INDEX_INT32`, `_INT64` or `_SIZE_T`), `c_index_type` (`_INT32` or `_INT64`) and
/// `c_base` (0 or 1). If `c_row_offsets` is not NULL, C's m + 1 row offsets are written to
/// it (they can also be fetched later with `spgemm_plan_row_offsets`).
///
/// On success `*plan` owns a plan (release with `spgemm_plan_destroy`); query nnz(C) with
/// `spgemm_plan_get_nnz`, then allocate C's column indices and values and call
/// `spgemm_numeric`. The plan records the algorithm, sortedness and C format in force.
///
/// A and B may both be device matrices (`spgemm_matrix_create_csr_device`): the plan is
/// then made on the GPU (`SPGEMM_STATUS_NO_DEVICE` without a usable one,
/// `SPGEMM_STATUS_NOT_SUPPORTED` with `SPGEMM_BACKEND_CPU`, with one host and one device
/// matrix, or with sizes beyond the GPU's 32-bit indices); `c_row_offsets` stays a host
/// array. With `spgemm_set_hybrid` on and a usable GPU, host inputs give a hybrid plan.
///
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE` (type codes, base),
/// `SPGEMM_STATUS_DIMENSION_MISMATCH`, `SPGEMM_STATUS_TYPE_MISMATCH` (A and B types differ),
/// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE` (bad input, found
/// by validation), `SPGEMM_STATUS_INDEX_OVERFLOW` (nnz(C) or k does not fit C's types;
/// nothing is written then), `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate exceeds
/// `spgemm_set_memory_limit`; nothing is written then).
/// Calls on one handle are serialised; different handles run concurrently.
///
/// # Safety
/// `handle`, `a`, `b` are NULL or live; `c_row_offsets` is NULL or has m + 1 writable
/// entries of `c_offset_type`; `plan` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_symbolic(
    handle: *mut spgemm_handle_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_plan_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let format = (c_offset_type, c_index_type, c_base);
        let ops = (
            SPGEMM_OPERATION_NON_TRANSPOSE,
            SPGEMM_OPERATION_NON_TRANSPOSE,
        );
        // SAFETY: the caller's contract is `symbolic`'s.
        unsafe { symbolic(h, ops, (a, b), format, c_row_offsets, plan) }
    })
}

/// Symbolic phase of C = op_a(A) * op_b(B), each op `SPGEMM_OPERATION_NON_TRANSPOSE` (A),
/// `SPGEMM_OPERATION_TRANSPOSE` (A^T) or `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` (A^H, the
/// same as A^T for real values), as MKL's `mkl_sparse_sp2m` takes them. Everything else is
/// as for `spgemm_symbolic`: op(A) is m x n, op(B) is n x k, C is m x k with the storage
/// chosen here, `*plan` reusable by `spgemm_numeric` and `spgemm_numeric_structure` with
/// new values of A and B (the same A and B as here, not their transposes).
///
/// The plan keeps, for each transposed operand, its transposed structure in the operand's
/// own offset and index types with the position of each entry in the operand (about
/// nnz * (8 + index size) bytes); each numeric call first gathers the operand's current
/// values into a buffer the plan keeps (nnz values, conjugated for A^H), then multiplies
/// as for any plan: the cost of new values is one O(nnz) gather per transposed operand.
/// Validation, the structure checks of reused plans and the error messages concern A and B
/// as given. Results are bitwise identical for every thread count and algorithm: row j of
/// A^T lists its entries in increasing row of A (repeats in storage order).
///
/// Transposed operands are computed on the CPU: `SPGEMM_BACKEND_AUTO` (and hybrid
/// products) take the CPU for them; `SPGEMM_BACKEND_CUDA` gives
/// `SPGEMM_STATUS_NOT_SUPPORTED` whether or not a GPU is present, as do device matrices
/// (`spgemm_matrix_create_csr_device`) with a transposed operand.
///
/// Errors: those of `spgemm_symbolic`; `SPGEMM_STATUS_INVALID_VALUE` (op_a or op_b not an
/// `SPGEMM_OPERATION_*` code), `SPGEMM_STATUS_DIMENSION_MISMATCH` (op(A)'s columns differ
/// from op(B)'s rows), `SPGEMM_STATUS_INDEX_OVERFLOW` (a transposed operand's rows do not
/// fit its column index type), `SPGEMM_STATUS_NOT_SUPPORTED` (see above).
/// Calls on one handle are serialised; different handles run concurrently.
///
/// # Safety
/// As for `spgemm_symbolic`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_symbolic_op(
    handle: *mut spgemm_handle_t,
    op_a: spgemm_operation_t,
    a: *const spgemm_matrix_t,
    op_b: spgemm_operation_t,
    b: *const spgemm_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_plan_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let format = (c_offset_type, c_index_type, c_base);
        // SAFETY: the caller's contract is `symbolic`'s.
        unsafe { symbolic(h, (op_a, op_b), (a, b), format, c_row_offsets, plan) }
    })
}

/// The body of `spgemm_symbolic` and `spgemm_symbolic_op`.
///
/// # Safety
/// As for `spgemm_symbolic`.
unsafe fn symbolic(
    h: &crate::api::Handle,
    (op_a, op_b): (spgemm_operation_t, spgemm_operation_t),
    (a, b): (*const spgemm_matrix_t, *const spgemm_matrix_t),
    (c_offset_type, c_index_type, c_base): (
        spgemm_index_type_t,
        spgemm_index_type_t,
        spgemm_index_base_t,
    ),
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_plan_t,
) -> Result<()> {
    non_null(plan, "plan")?;
    // SAFETY: non-NULL, writable per contract.
    unsafe { *plan = std::ptr::null_mut() };
    let op_a = op_of(op_a, "op_a")?;
    let op_b = op_of(op_b, "op_b")?;
    // SAFETY: NULL or live per contract.
    let (a, b) = unsafe { (matrix_ref(a, "A")?, matrix_ref(b, "B")?) };
    let format = output_format(c_offset_type, c_index_type, c_base)?;
    let p = match memory_pair(a, b)? {
        Some(_) if op_a.transposes() || op_b.transposes() => {
            return err(
                Status::NotSupported,
                format!(
                    "A and B are device matrices but op(A) = {}, op(B) = {}: transposed \
                     operands are computed on the CPU, which cannot read device memory",
                    op_a.of("A"),
                    op_b.of("B")
                ),
            );
        }
        Some((da, db)) => api::symbolic_device(h, da, db, format)?,
        None => api::symbolic_op(h, op_a, &a.view("A")?, op_b, &b.view("B")?, format)?,
    };
    if !c_row_offsets.is_null() {
        // SAFETY: m + 1 writable entries per contract.
        let out = unsafe { offsets_out(c_row_offsets, format.offsets, p.nrows() + 1)? };
        api::write_row_offsets_on(h, &p, out)?;
    }
    let boxed = Box::new(spgemm_plan_t {
        inner: Mutex::new(p),
    });
    // SAFETY: as above.
    unsafe { *plan = Box::into_raw(boxed) };
    Ok(())
}

/// Writes C's m + 1 row offsets, in the type and base chosen at symbolic time.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`. Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; `c_row_offsets` is NULL or has m + 1 writable entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_row_offsets(
    plan: *const spgemm_plan_t,
    c_row_offsets: *mut c_void,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        non_null(c_row_offsets, "c_row_offsets")?;
        // SAFETY: m + 1 writable entries per contract.
        let out = unsafe { offsets_out(c_row_offsets, p.format.offsets, p.nrows() + 1)? };
        api::write_row_offsets(&p, out)
    })
}

/// Reads nnz(C) (entries that cancel to zero are kept) into `*nnz`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER`. Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; `nnz` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_get_nnz(
    plan: *const spgemm_plan_t,
    nnz: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        non_null(nnz, "nnz")?;
        // SAFETY: non-NULL, writable.
        unsafe { *nnz = p.nnz() as i64 };
        Ok(())
    })
}

/// Reads C's shape (m x k) and the number of scalar multiplications of the product
/// (f_m; GFLOP/s = 2 f_m / seconds / 1e9) into the non-NULL outputs.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_get_info(
    plan: *const spgemm_plan_t,
    nrows: *mut i64,
    ncols: *mut i64,
    multiplications: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        // SAFETY: non-NULL outputs are writable.
        unsafe {
            if let Some(x) = nrows.as_mut() {
                *x = p.nrows() as i64;
            }
            if let Some(x) = ncols.as_mut() {
                *x = p.ncols() as i64;
            }
            if let Some(x) = multiplications.as_mut() {
                *x = i64::try_from(p.flops()).unwrap_or(i64::MAX);
            }
        }
        Ok(())
    })
}

/// Reads the algorithm (`SPGEMM_ALG_*`, never AUTO) each phase runs with.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_get_algorithm(
    plan: *const spgemm_plan_t,
    symbolic: *mut spgemm_algorithm_t,
    numeric: *mut spgemm_algorithm_t,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        // SAFETY: non-NULL outputs are writable.
        let (sym, num) = p.algorithms();
        unsafe {
            if let Some(x) = symbolic.as_mut() {
                *x = sym as i32;
            }
            if let Some(x) = numeric.as_mut() {
                *x = num as i32;
            }
        }
        Ok(())
    })
}

/// Destroys a plan. `spgemm_plan_destroy(NULL)` does nothing.
///
/// # Safety
/// `plan` is NULL or a live plan not in use by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_destroy(plan: *mut spgemm_plan_t) -> spgemm_status_t {
    guard(None, || {
        if !plan.is_null() {
            // SAFETY: pointer came from Box::into_raw.
            drop(unsafe { Box::from_raw(plan) });
        }
        Ok(())
    })
}

/// A and B as device descriptors (Some) or host ones (None); one of each is refused.
fn memory_pair<'m>(
    a: &'m spgemm_matrix_t,
    b: &'m spgemm_matrix_t,
) -> Result<Option<(&'m DeviceCsr, &'m DeviceCsr)>> {
    match (a.device(), b.device()) {
        (Some(da), Some(db)) => Ok(Some((da, db))),
        (None, None) => Ok(None),
        (da, _) => err(
            Status::NotSupported,
            format!(
                "{} is a device matrix and {} a host matrix: A and B must both be in host \
                 memory or both in device memory",
                if da.is_some() { "A" } else { "B" },
                if da.is_some() { "B" } else { "A" }
            ),
        ),
    }
}

fn run_numeric(
    h: &crate::api::Handle,
    plan: *mut spgemm_plan_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_col_indices: *mut c_void,
    c_values: Option<*mut c_void>,
) -> Result<()> {
    // SAFETY: NULL or live per the public functions' contracts.
    let p = unsafe { plan_ref(plan) }?.inner.lock();
    // SAFETY: as above.
    let (a, b) = unsafe { (matrix_ref(a, "A")?, matrix_ref(b, "B")?) };
    let pair = memory_pair(a, b)?;
    let nnz = p.nnz();
    // SAFETY: nnz writable entries per contract.
    let cols = unsafe {
        match p.format.indices {
            IndexType::Int32 => {
                IndexSliceMut::I32(raw_slice_mut(c_col_indices, nnz, "c_col_indices")?)
            }
            _ => IndexSliceMut::I64(raw_slice_mut(c_col_indices, nnz, "c_col_indices")?),
        }
    };
    let vals = match c_values {
        None => None,
        // SAFETY: nnz writable entries per contract.
        Some(v) => Some(unsafe { values_out(p.shape.sig.values, v, nnz, "c_values")? }),
    };
    match pair {
        Some((da, db)) => api::numeric_device(
            h,
            &p,
            NumericInputs::Device(da, db),
            NumericOutputs::Host { cols, vals },
        ),
        None => api::numeric(h, &p, &a.view("A")?, &b.view("B")?, cols, vals),
    }
}

/// Numeric phase: fills C's nnz(C) column indices (type and base of the plan) and values
/// (the value type of A and B). Call it again whenever the values of A and/or B change
/// with the same structure: no symbolic work is repeated. Passing the same C arrays again
/// is fastest: with validation on, from the third call on a plan keeps a digest of C's
/// column indices (8 bytes per block of rows, not a copy of them) and, when
/// `c_col_indices` is the array the previous call on the plan filled and its indices
/// still match the digest, only recomputes the values. Any other array is not read: it is
/// filled in full.
///
/// A and B may be device matrices when the plan was made on the GPU: C is written to
/// these host arrays (`SPGEMM_STATUS_NO_DEVICE` without a usable GPU; see
/// `spgemm_numeric_device` for C in device memory).
///
/// Values are bitwise identical whatever the number of threads and algorithm: each entry
/// of C is the sum of its products in the order A's row and B's rows are stored. Entries
/// that cancel to 0.0 stay in the structure; NaN and Inf propagate.
///
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (including arrays NULL while nnz(C) > 0),
/// `SPGEMM_STATUS_INVALID_VALUE` (A or B without values), `SPGEMM_STATUS_TYPE_MISMATCH`
/// (types differ from the plan's), `SPGEMM_STATUS_PLAN_MISMATCH` (shape differs, or, with
/// validation on, structure differs), `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate
/// exceeds `spgemm_set_memory_limit`; nothing is written then). `spgemm_numeric_sized`
/// takes the types and lengths of C's arrays and checks them first.
/// Calls on one handle are serialised; a plan must not be used by two calls at once (they
/// are serialised too).
///
/// # Safety
/// Pointers are NULL or live; `c_col_indices` and `c_values` have nnz(C) writable entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_numeric(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_plan_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_col_indices: *mut c_void,
    c_values: *mut c_void,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        run_numeric(h, plan, a, b, c_col_indices, Some(c_values))
    })
}

/// Structure-only numeric phase (graph codes): fills C's column indices; values of A and B
/// are not read and may be absent (pattern-only descriptors).
/// Errors: as `spgemm_numeric`, without the value checks.
///
/// # Safety
/// Pointers are NULL or live; `c_col_indices` has nnz(C) writable entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_numeric_structure(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_plan_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_col_indices: *mut c_void,
) -> spgemm_status_t {
    with_handle(handle, |h| run_numeric(h, plan, a, b, c_col_indices, None))
}

/// `TypeMismatch` unless an array the caller gives (`given`) has the plan's type.
fn same_type<T: PartialEq + Copy>(
    given: bool,
    declared: T,
    plan: T,
    name: &str,
    show: impl Fn(T) -> &'static str,
) -> Result<()> {
    if given && declared != plan {
        return err(
            Status::TypeMismatch,
            format!(
                "{name} holds {}, but the plan's C has {}",
                show(declared),
                show(plan)
            ),
        );
    }
    Ok(())
}

/// `InvalidValue` unless an array the caller gives has room for `need` entries.
fn has_room(given: bool, len: i64, need: usize, name: &str, what: &str) -> Result<()> {
    if !given {
        return Ok(());
    }
    let len = dim(len, &format!("{name} length"))?;
    if len < need {
        return err(
            Status::InvalidValue,
            format!(
                "{name} has room for {len} entries, but C needs {need} ({what}); nothing was \
                 written"
            ),
        );
    }
    Ok(())
}

/// Numeric phase for callers that know their arrays' types and lengths (the C++ and
/// Fortran layers use it): as `spgemm_numeric`, and, first, every array given is checked
/// against the plan before anything is written: its type code (`c_offset_type`,
/// `c_index_type`, `c_value_type`; else `SPGEMM_STATUS_TYPE_MISMATCH`) and its length in
/// entries (`c_row_offsets_len` at least m + 1, `c_col_capacity` and `c_values_capacity`
/// at least nnz(C); else `SPGEMM_STATUS_INVALID_VALUE`, negative lengths too). Longer
/// arrays are fine: only their first entries are written.
///
/// - `c_row_offsets`: NULL, or C's m + 1 row offsets are written there (as
///   `spgemm_plan_row_offsets` does) after the numeric phase succeeded.
/// - `c_col_indices`: C's nnz(C) column indices (NULL only when nnz(C) = 0).
/// - `c_values`: C's values, or NULL for the structure-only numeric phase
///   (`spgemm_numeric_structure`: A and B may then be pattern-only).
///
/// Errors: those of `spgemm_numeric` and above. Calls on one handle are serialised.
///
/// # Safety
/// Pointers are NULL or live; each C array has at least the given number of writable
/// entries of the given type.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn spgemm_numeric_sized(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_plan_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_row_offsets: *mut c_void,
    c_row_offsets_len: i64,
    c_index_type: spgemm_index_type_t,
    c_col_indices: *mut c_void,
    c_col_capacity: i64,
    c_value_type: spgemm_value_type_t,
    c_values: *mut c_void,
    c_values_capacity: i64,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let (rows, values) = (!c_row_offsets.is_null(), !c_values.is_null());
        {
            // SAFETY: NULL or live per contract.
            let p = unsafe { plan_ref(plan) }?.inner.lock();
            let f = p.format;
            let offsets = index_type(c_offset_type, "c_offset_type")?;
            let indices = index_type(c_index_type, "c_index_type")?;
            let vt = value_type(c_value_type, "c_value_type")?;
            same_type(rows, offsets, f.offsets, "c_row_offsets", IndexType::name)?;
            same_type(true, indices, f.indices, "c_col_indices", IndexType::name)?;
            same_type(values, vt, p.shape.sig.values, "c_values", ValueType::name)?;
            let (m1, nnz) = (p.nrows() + 1, p.nnz());
            has_room(
                rows,
                c_row_offsets_len,
                m1,
                "c_row_offsets",
                "m + 1 offsets",
            )?;
            has_room(true, c_col_capacity, nnz, "c_col_indices", "nnz(C)")?;
            has_room(values, c_values_capacity, nnz, "c_values", "nnz(C)")?;
        }
        let vals = values.then_some(c_values);
        run_numeric(h, plan, a, b, c_col_indices, vals)?;
        if rows {
            // SAFETY: as above.
            let p = unsafe { plan_ref(plan) }?.inner.lock();
            // SAFETY: at least m + 1 writable entries of the plan's type (checked above).
            let out = unsafe { offsets_out(c_row_offsets, p.format.offsets, p.nrows() + 1)? };
            api::write_row_offsets_on(h, &p, out)?;
        }
        Ok(())
    })
}

/// One-call product C = A*B for callers that multiply once: symbolic and numeric phases
/// into arrays owned by the library. `*c` receives a new matrix (read it with
/// `spgemm_matrix_get_info` and `spgemm_matrix_export_csr`; free it with
/// `spgemm_matrix_destroy`). If A or B has no values, C is pattern-only.
/// Errors: those of `spgemm_symbolic` and `spgemm_numeric`.
///
/// # Safety
/// `handle`, `a`, `b` are NULL or live; `c` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_multiply(
    handle: *mut spgemm_handle_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c: *mut *mut spgemm_matrix_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let ops = (
            SPGEMM_OPERATION_NON_TRANSPOSE,
            SPGEMM_OPERATION_NON_TRANSPOSE,
        );
        let format = (c_offset_type, c_index_type, c_base);
        // SAFETY: the caller's contract is `multiply`'s.
        unsafe { multiply(h, ops, (a, b), format, c) }
    })
}

/// One-call product C = op_a(A) * op_b(B) (ops as in `spgemm_symbolic_op`) into arrays
/// owned by the library, as `spgemm_multiply` (MKL's `mkl_sparse_spmm` and
/// `mkl_sparse_sp2m` with `SPARSE_STAGE_FULL_MULT` take ops the same way). The transposes
/// are made for this product and freed with its plan before the call returns.
/// Errors: those of `spgemm_symbolic_op` and `spgemm_numeric`.
/// Calls on one handle are serialised; different handles run concurrently.
///
/// # Safety
/// `handle`, `a`, `b` are NULL or live; `c` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_multiply_op(
    handle: *mut spgemm_handle_t,
    op_a: spgemm_operation_t,
    a: *const spgemm_matrix_t,
    op_b: spgemm_operation_t,
    b: *const spgemm_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c: *mut *mut spgemm_matrix_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let format = (c_offset_type, c_index_type, c_base);
        // SAFETY: the caller's contract is `multiply`'s.
        unsafe { multiply(h, (op_a, op_b), (a, b), format, c) }
    })
}

/// The body of `spgemm_multiply` and `spgemm_multiply_op`.
///
/// # Safety
/// As for `spgemm_multiply`.
unsafe fn multiply(
    h: &crate::api::Handle,
    (op_a, op_b): (spgemm_operation_t, spgemm_operation_t),
    (a, b): (*const spgemm_matrix_t, *const spgemm_matrix_t),
    (c_offset_type, c_index_type, c_base): (
        spgemm_index_type_t,
        spgemm_index_type_t,
        spgemm_index_base_t,
    ),
    c: *mut *mut spgemm_matrix_t,
) -> Result<()> {
    non_null(c, "c")?;
    // SAFETY: non-NULL, writable per contract.
    unsafe { *c = std::ptr::null_mut() };
    let op_a = op_of(op_a, "op_a")?;
    let op_b = op_of(op_b, "op_b")?;
    // SAFETY: NULL or live per contract.
    let (a, b) = unsafe { (matrix_ref(a, "A")?, matrix_ref(b, "B")?) };
    let format = output_format(c_offset_type, c_index_type, c_base)?;
    let owned = api::multiply_op(h, op_a, &a.view("A")?, op_b, &b.view("B")?, format)?;
    let m = Box::new(spgemm_matrix_t {
        kind: MatrixKind::Owned(owned),
    });
    // SAFETY: as above.
    unsafe { *c = Box::into_raw(m) };
    Ok(())
}

/// Numeric phase with C in device memory: fills C's m + 1 row offsets (when
/// `c_row_offsets` is not NULL), nnz(C) column indices and, when `c_values` is not NULL,
/// nnz(C) values, all in GPU memory (device 0, primary context: `cudaMalloc` of the CUDA
/// runtime), in the plan's types and base. A and B are device matrices
/// (`spgemm_matrix_create_csr_device`) or host matrices. The plan must have been made on
/// the GPU (`spgemm_symbolic` with device matrices, or with `SPGEMM_BACKEND_CUDA`); C's
/// arrays are written by the GPU only, never on the host, and are complete when the call
/// returns. Call it again with new values as `spgemm_numeric`.
///
/// Errors: `SPGEMM_STATUS_NO_DEVICE` (no usable GPU: checked before anything else
/// after the arguments; nothing is written), `SPGEMM_STATUS_NOT_SUPPORTED` (the handle's
/// backend is `SPGEMM_BACKEND_CPU`, the plan was made on the CPU, or A and B are one host
/// and one device matrix), `SPGEMM_STATUS_NULL_POINTER` (handle, plan, A, B;
/// `c_col_indices` when nnz(C) > 0), `SPGEMM_STATUS_INVALID_VALUE` (misaligned array, A
/// or B without values while `c_values` is given), `SPGEMM_STATUS_TYPE_MISMATCH`,
/// `SPGEMM_STATUS_PLAN_MISMATCH` (shape, or with host inputs and validation, structure,
/// differs from the plan's), `SPGEMM_STATUS_ALLOC_FAILED` (device memory).
/// Calls on one handle are serialised.
///
/// # Safety
/// `handle`, `plan`, `a`, `b` are NULL or live; the C arrays are NULL or device arrays
/// with the entries described above (never dereferenced on the host).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_numeric_device(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_plan_t,
    a: *const spgemm_matrix_t,
    b: *const spgemm_matrix_t,
    c_row_offsets: *mut c_void,
    c_col_indices: *mut c_void,
    c_values: *mut c_void,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        // SAFETY: as above.
        let (a, b) = unsafe { (matrix_ref(a, "A")?, matrix_ref(b, "B")?) };
        let pair = memory_pair(a, b)?;
        let width = |t: IndexType| if t == IndexType::Int32 { 4 } else { 8 };
        let vwidth = p.shape.sig.values.align();
        for (ptr, w, name) in [
            (c_row_offsets, width(p.format.offsets), "c_row_offsets"),
            (c_col_indices, width(p.format.indices), "c_col_indices"),
            (c_values, vwidth, "c_values"),
        ] {
            if !(ptr as usize).is_multiple_of(w) {
                return err(
                    Status::InvalidValue,
                    format!("{name} = {ptr:p} is not aligned to {w} bytes for its element type"),
                );
            }
        }
        let dev = |ptr: *mut c_void| DevicePtr::from_addr(ptr as usize);
        let out = NumericOutputs::Device(DeviceOut {
            row_offsets: (!c_row_offsets.is_null()).then(|| dev(c_row_offsets)),
            col_indices: dev(c_col_indices),
            values: (!c_values.is_null()).then(|| dev(c_values)),
        });
        match pair {
            Some((da, db)) => api::numeric_device(h, &p, NumericInputs::Device(da, db), out),
            None => {
                let (av, bv) = (a.view("A")?, b.view("B")?);
                api::numeric_device(h, &p, NumericInputs::Host(&av, &bv), out)
            }
        }
    })
}

/// Reads how many rows of C the plan computes on the CPU (`*cpu_rows`, rows 0 to
/// cpu_rows - 1) and on the GPU (`*gpu_rows`, the rest) into the non-NULL outputs. A CPU
/// plan has all rows on the CPU, a GPU plan all on the GPU, a hybrid plan its split.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan). Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_get_split(
    plan: *const spgemm_plan_t,
    cpu_rows: *mut i64,
    gpu_rows: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        let (c, g) = p.rows_by_side();
        // SAFETY: non-NULL outputs are writable.
        unsafe {
            if let Some(x) = cpu_rows.as_mut() {
                *x = c as i64;
            }
            if let Some(x) = gpu_rows.as_mut() {
                *x = g as i64;
            }
        }
        Ok(())
    })
}

/// Writes a text description of the plan: one `key: value` line each for where it runs
/// (`backend: cpu`, `gpu` or `hybrid`), rows, nnz and multiplications, and when hybrid
/// execution was asked for a `hybrid:` line with the split and how it was chosen, or
/// `hybrid: all N rows on the CPU: no GPU (reason)`.
///
/// Two-call pattern as `spgemm_topology_info`: `*needed` (required) receives the size in
/// bytes including the terminating NUL; with `buf` NULL and `len` 0 only `*needed` is
/// written; if `len >= *needed` the text is copied (NUL-terminated); if
/// `0 < len < *needed`, `buf[0]` is set to NUL and `SPGEMM_STATUS_INVALID_VALUE` returned.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (plan, needed, or buf NULL with len > 0),
/// `SPGEMM_STATUS_INVALID_VALUE` (buffer too small). Thread-safe.
///
/// # Safety
/// `plan` is NULL or live; `buf` is NULL or points to `len` writable bytes; `needed` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_plan_info(
    plan: *const spgemm_plan_t,
    buf: *mut c_void,
    len: usize,
    needed: *mut usize,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = unsafe { plan_ref(plan) }?.inner.lock();
        non_null(needed, "needed")?;
        if len > 0 {
            non_null(buf, "buf")?;
        }
        let text = p.describe();
        let need = text.len() + 1;
        // SAFETY: non-NULL, writable per contract.
        unsafe { *needed = need };
        if len == 0 {
            return Ok(());
        }
        // SAFETY: buf has `len` writable bytes; we write at most `need <= len`, or one.
        unsafe {
            if len < need {
                *buf.cast::<u8>() = 0;
                return Err(Error::new(
                    Status::InvalidValue,
                    format!("len = {len} is too small for the plan info: {need} bytes needed"),
                ));
            }
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
            *buf.cast::<u8>().add(text.len()) = 0;
        }
        Ok(())
    })
}
