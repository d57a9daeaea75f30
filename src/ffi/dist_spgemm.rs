//! Distributed SpGEMM over MPI: `spgemm_dist_spgemm_plan_t` for C = op(A) * B and
//! C = op(R) * A * P of row-distributed matrices (`spgemm_dist_matrix_t`), symbolic once,
//! numeric again whenever values change. Every check of the arguments that can be agreed
//! is agreed over the matrices' communicator before a collective depends on it.

use std::ffi::c_void;

use super::boundary::{guard, non_null};
use super::dist::{collective, dist_matrix, handle_or_err, put, spgemm_dist_matrix_t};
use super::handle::spgemm_handle_t;
use super::matrix::{raw_slice_mut, values_out};
use super::plan::{offsets_out, output_format};
use super::spmm::{op_of, spgemm_operation_t};
use super::{spgemm_index_base_t, spgemm_index_type_t, spgemm_status_t};
use crate::api::{
    DistMatrix, DistSpgemmPlan, IndexSliceMut, ValueSliceMut, dist_rap_symbolic,
    dist_spgemm_numeric_after, dist_spgemm_symbolic,
};
use crate::error::{Error, Result, Status, err};
use crate::types::IndexType;

/// Opaque distributed SpGEMM plan: the rows each rank imports, the node plans, for R*A*P
/// the intermediate A*P, and a duplicate of the communicator.
pub struct spgemm_dist_spgemm_plan_t {
    inner: DistSpgemmPlan,
}

/// The rows of C this rank owns for op(first) (its rows, or its x_range for a transpose).
fn c_rows(first: &DistMatrix<'_>, transposed: bool) -> usize {
    if transposed {
        first.x_range.map_or(first.local.nrows, |x| x.1)
    } else {
        first.local.nrows
    }
}

/// The shared body of the two symbolic functions.
///
/// # Safety
/// As for `spgemm_dist_spgemm_symbolic`.
#[allow(clippy::too_many_arguments)]
unsafe fn symbolic(
    handle: *mut spgemm_handle_t,
    op: spgemm_operation_t,
    mats: &[*const spgemm_dist_matrix_t],
    (c_offset_type, c_index_type, c_base): (
        spgemm_index_type_t,
        spgemm_index_type_t,
        spgemm_index_base_t,
    ),
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_dist_spgemm_plan_t,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        if !plan.is_null() {
            // SAFETY: writable per contract.
            unsafe { *plan = std::ptr::null_mut() };
        }
        // A NULL matrix has no communicator to agree over: reported on its rank only.
        let names = if mats.len() == 3 {
            ["R", "A", "P"]
        } else {
            ["A", "B", ""]
        };
        let mut raw = Vec::with_capacity(mats.len());
        for (m, name) in mats.iter().zip(names) {
            // SAFETY: NULL or live per contract.
            let m = unsafe { dist_matrix(*m) }
                .map_err(|_| Error::new(Status::NullPointer, format!("{name} is NULL")))?;
            raw.push(m);
        }
        let comm = &raw[0].comm;
        let args = (|| {
            h_ok?;
            non_null(plan, "plan")?;
            let views: Vec<DistMatrix<'_>> = raw.iter().map(|m| m.view()).collect::<Result<_>>()?;
            let op = op_of(op, "op")?;
            let format = output_format(c_offset_type, c_index_type, c_base)?;
            let rows = c_rows(&views[0], op.transposes());
            // SAFETY: rows + 1 writable entries per contract.
            let offs = unsafe { offsets_out(c_row_offsets, format.offsets, rows + 1) }?;
            Ok((views, op, format, offs))
        })();
        let (views, op, format, offs) = comm.agree(args)?;
        let h = h.ok_or_else(|| Error::new(Status::Internal, "agreed handle missing"))?;
        let p = match &views[..] {
            [a, b] => dist_spgemm_symbolic(h, op, a, b, format, offs)?,
            [r, a, p] => dist_rap_symbolic(h, op, (r, a, p), format, offs)?,
            _ => return err(Status::Internal, "two or three operands"),
        };
        // SAFETY: as above.
        unsafe { *plan = Box::into_raw(Box::new(spgemm_dist_spgemm_plan_t { inner: p })) };
        Ok(())
    })
}

/// Symbolic phase of the distributed product C = op(A) * B, as PETSc's `MatMatMult`
/// (op N) and `MatTransposeMatMult` (op T; `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` is the
/// same for real values) on MPIAIJ matrices. Collective over A's communicator.
///
/// - `a`, `b`: distributed matrices (`spgemm_dist_matrix_create_csr`) on one communicator,
///   with the same offset, index and value types (float or double). op(A)'s columns must
///   be B's rows (A's global columns for op N, its global rows for op T). B's row blocks
///   say where each row of B lives; A's column ranges (`x_start`) matter only for op T,
///   where they are the rows of A^T, hence of C, each rank owns.
/// - C is distributed like op(A)'s rows: this rank gets rows `row_start .. + local_rows`
///   of A (op N) or its `x_start .. + x_rows` (op T), with GLOBAL column indices (B's
///   columns), stored as `c_offset_type` offsets, `c_index_type` indices, base `c_base`.
/// - `c_row_offsets`: this rank's C row offsets (its rows + 1 entries) are written here;
///   `spgemm_dist_spgemm_plan_get_info` gives the local nnz to size C's other arrays.
///
/// The symbolic phase fetches the structure of the rows of B (of A^T's entries for op T)
/// that this rank needs from their owners and plans the local product; each numeric
/// call moves only values. Every entry of C is summed in the order of op(A)'s row, as the
/// serial product of the gathered matrices sums it: the values are bitwise the serial
/// ones at any number of ranks.
///
/// On success `*plan` owns the plan (`spgemm_dist_spgemm_plan_destroy`, collective).
/// Errors, the same on every rank: those of `spgemm_symbolic` (`SPGEMM_STATUS_INDEX_OVERFLOW`
/// when a rank's C does not fit `c_offset_type` / `c_index_type`), of validation (a rank's
/// bad structure or index), `SPGEMM_STATUS_DIMENSION_MISMATCH` (inner dimensions differ),
/// `SPGEMM_STATUS_INVALID_VALUE` (ranges that do not tile, matrices on different
/// communicators, bad codes), `SPGEMM_STATUS_TYPE_MISMATCH` (operands of different types),
/// `SPGEMM_STATUS_NOT_SUPPORTED` (complex values; a build without MPI). A NULL matrix is
/// reported on its own rank only (there is no communicator to agree over): every rank
/// must pass live matrices, as for any collective MPI call.
///
/// # Safety
/// `handle` NULL or live; `a`, `b` NULL or live; `c_row_offsets` with room for this rank's
/// rows + 1 entries of `c_offset_type`; `plan` NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spgemm_symbolic(
    handle: *mut spgemm_handle_t,
    op_a: spgemm_operation_t,
    a: *const spgemm_dist_matrix_t,
    b: *const spgemm_dist_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_dist_spgemm_plan_t,
) -> spgemm_status_t {
    let format = (c_offset_type, c_index_type, c_base);
    // SAFETY: the contract is `symbolic`'s.
    unsafe { symbolic(handle, op_a, &[a, b], format, c_row_offsets, plan) }
}

/// Symbolic phase of C = op(R) * A * P in one plan, the coarse operator of an AMG setup
/// (PETSc's `MatMatMatMult` and `MatPtAP`): op N gives R*A*P; op T gives P^T*A*P (pass P
/// as `r` too). A*P is formed first and kept in the plan; op(R) times it second. C is
/// distributed like op(R)'s rows. Everything else as `spgemm_dist_spgemm_symbolic`.
/// Collective over the matrices' communicator.
///
/// # Safety
/// As for `spgemm_dist_spgemm_symbolic`, with `r`, `a`, `p` NULL or live.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_rap_symbolic(
    handle: *mut spgemm_handle_t,
    op_r: spgemm_operation_t,
    r: *const spgemm_dist_matrix_t,
    a: *const spgemm_dist_matrix_t,
    p: *const spgemm_dist_matrix_t,
    c_offset_type: spgemm_index_type_t,
    c_index_type: spgemm_index_type_t,
    c_base: spgemm_index_base_t,
    c_row_offsets: *mut c_void,
    plan: *mut *mut spgemm_dist_spgemm_plan_t,
) -> spgemm_status_t {
    let format = (c_offset_type, c_index_type, c_base);
    // SAFETY: the contract is `symbolic`'s.
    unsafe { symbolic(handle, op_r, &[r, a, p], format, c_row_offsets, plan) }
}

/// Numeric phase: this rank's nnz column indices (global, the plan's type and base) and
/// values of C, with the current values of the matrices of the symbolic call, passed in
/// the same order (`m0`, `m1` = A, B with `m2` NULL; or R, A, P). Call it again whenever
/// their values change (same structure): only values move between ranks. With validation
/// on (the default), a rank whose matrix changed structure makes it
/// `SPGEMM_STATUS_PLAN_MISMATCH` on every rank. Collective.
/// Errors, the same on every rank: `SPGEMM_STATUS_PLAN_MISMATCH`,
/// `SPGEMM_STATUS_NULL_POINTER` (an output array), `SPGEMM_STATUS_INVALID_VALUE` (operands
/// other than the plan's count), those of validation. NULL `handle`, `plan` or matrices
/// are reported on their rank only (as for the symbolic phase).
///
/// # Safety
/// `handle`, `plan` NULL or live; the matrices NULL or live; `c_col_indices` and
/// `c_values` with room for the local nnz entries of their types.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spgemm_numeric(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_dist_spgemm_plan_t,
    m0: *const spgemm_dist_matrix_t,
    m1: *const spgemm_dist_matrix_t,
    m2: *const spgemm_dist_matrix_t,
    c_col_indices: *mut c_void,
    c_values: *mut c_void,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        // SAFETY: NULL or live per contract.
        let p = &mut unsafe { plan.as_mut() }
            .ok_or_else(|| Error::new(Status::NullPointer, "plan is NULL"))?
            .inner;
        let want = p.operands();
        let given: Vec<*const spgemm_dist_matrix_t> =
            [m0, m1, m2].into_iter().take(want.max(2)).collect();
        let mut raw = Vec::with_capacity(3);
        for (n, m) in given.iter().enumerate() {
            // SAFETY: NULL or live per contract.
            let m = unsafe { dist_matrix(*m) }.map_err(|_| {
                Error::new(
                    Status::NullPointer,
                    format!("matrix {n} of the call is NULL"),
                )
            })?;
            raw.push(m);
        }
        // A view that cannot be read is agreed where the others make their first
        // agreement (over the first matrix's communicator).
        let views = match raw.iter().map(|m| m.view()).collect::<Result<Vec<_>>>() {
            Ok(v) => v,
            Err(e) => return raw[0].comm.agree(Err(e)),
        };
        let refs: Vec<&DistMatrix<'_>> = views.iter().collect();
        let nnz = p.nnz();
        let (_, vt) = p.types();
        let fmt = p.format();
        let extra = if want == 2 && !m2.is_null() {
            err(
                Status::InvalidValue,
                "the plan multiplies two matrices: pass NULL as the third",
            )
        } else {
            Ok(())
        };
        let outputs = (|| -> Result<(IndexSliceMut<'_>, ValueSliceMut<'_>)> {
            h_ok?;
            extra?;
            // SAFETY: nnz writable entries of the plan's types per contract.
            unsafe {
                let cols = match fmt.indices {
                    IndexType::Int32 => {
                        IndexSliceMut::I32(raw_slice_mut(c_col_indices, nnz, "c_col_indices")?)
                    }
                    _ => IndexSliceMut::I64(raw_slice_mut(c_col_indices, nnz, "c_col_indices")?),
                };
                Ok((cols, values_out(vt, c_values, nnz, "c_values")?))
            }
        })();
        // An argument error is agreed inside the numeric phase's own agreement: the rank
        // passes empty outputs and its error.
        let (pre, cols, vals) = match outputs {
            Ok((c, v)) => (Ok(()), c, v),
            Err(e) => {
                let empty_cols = match fmt.indices {
                    IndexType::Int32 => IndexSliceMut::I32(&mut []),
                    _ => IndexSliceMut::I64(&mut []),
                };
                let empty_vals = match vt {
                    crate::types::ValueType::Float32 => ValueSliceMut::F32(&mut []),
                    _ => ValueSliceMut::F64(&mut []),
                };
                (Err(e), empty_cols, empty_vals)
            }
        };
        let h = match h {
            Some(h) => h,
            // The NULL handle's error, agreed where the others agree first.
            None => return refs[0].comm.agree(pre),
        };
        dist_spgemm_numeric_after(h, p, pre, &refs, cols, vals)
    })
}

/// What the plan gives this rank: its rows of C (first global row and count), C's global
/// columns, the local and global nnz of C, and the operand count (2 or 3). Each output
/// may be NULL. Local.
///
/// # Safety
/// `plan` NULL or live; outputs NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spgemm_plan_get_info(
    plan: *const spgemm_dist_spgemm_plan_t,
    row_start: *mut i64,
    local_rows: *mut i64,
    global_cols: *mut i64,
    local_nnz: *mut i64,
    global_nnz: *mut i64,
    operands: *mut i32,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = &unsafe { plan.as_ref() }
            .ok_or_else(|| Error::new(Status::NullPointer, "plan is NULL"))?
            .inner;
        let (r0, nr) = p.rows();
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(row_start, r0 as i64);
            put(local_rows, nr as i64);
            put(global_cols, p.ncols() as i64);
            put(local_nnz, p.nnz() as i64);
            put(global_nnz, p.global_nnz() as i64);
            put(operands, p.operands() as i32);
        }
        Ok(())
    })
}

/// Time and traffic on this rank: seconds of the symbolic phase and of the last numeric
/// call (of which moving values), rows of B fetched from other ranks, bytes received from
/// other ranks in the symbolic phase (structure) and in each numeric call (values), and
/// the scalar multiplications of this rank's products. Each output may be NULL. Local.
///
/// # Safety
/// `plan` NULL or live; outputs NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spgemm_plan_get_stats(
    plan: *const spgemm_dist_spgemm_plan_t,
    symbolic_seconds: *mut f64,
    numeric_seconds: *mut f64,
    import_seconds: *mut f64,
    rows_imported: *mut i64,
    symbolic_bytes_received: *mut i64,
    numeric_bytes_received: *mut i64,
    flops: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let p = &unsafe { plan.as_ref() }
            .ok_or_else(|| Error::new(Status::NullPointer, "plan is NULL"))?
            .inner;
        let s = p.stats();
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(symbolic_seconds, s.symbolic_s);
            put(numeric_seconds, s.numeric_s);
            put(import_seconds, s.import_s);
            put(rows_imported, s.rows_imported as i64);
            put(symbolic_bytes_received, s.symbolic_bytes_received as i64);
            put(numeric_bytes_received, s.numeric_bytes_received as i64);
            put(flops, s.flops as i64);
        }
        Ok(())
    })
}

/// This rank's share of a distributed matrix: its rows and its rows of X (its block of
/// columns: the rows of A^T it owns). Each output may be NULL. Local.
///
/// # Safety
/// `matrix` NULL or live; outputs NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_matrix_get_local_sizes(
    matrix: *const spgemm_dist_matrix_t,
    local_rows: *mut i64,
    x_rows: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let m = unsafe { dist_matrix(matrix) }
            .map_err(|_| Error::new(Status::NullPointer, "matrix is NULL"))?
            .view()?;
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(local_rows, m.local.nrows as i64);
            put(x_rows, c_rows(&m, true) as i64);
        }
        Ok(())
    })
}

/// Releases a distributed SpGEMM plan (frees its duplicate of the communicator).
/// Collective over the plan's communicator, like `MPI_Comm_free`. `NULL` is a no-op.
///
/// # Safety
/// `plan` NULL or a live plan, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spgemm_plan_destroy(
    plan: *mut spgemm_dist_spgemm_plan_t,
) -> spgemm_status_t {
    guard(None, || {
        if !plan.is_null() {
            // SAFETY: from Box::into_raw in the symbolic functions.
            drop(unsafe { Box::from_raw(plan) });
        }
        Ok(())
    })
}
