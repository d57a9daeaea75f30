//! Distributed SpMM over MPI: `spgemm_dist_matrix_t` (one rank's rows of a row-distributed
//! CSR matrix and the communicator), `spgemm_dist_plan_t` and `Y = alpha A X + beta Y`.
//! The communicator comes in as an `MPI_Fint` (an `int` in Open MPI and MPICH), so this
//! code never names an MPI library's `MPI_Comm` type. Every check of the arguments that
//! can be agreed is agreed over the communicator before a collective depends on it.

use std::ffi::c_void;
use std::os::raw::c_int;

use super::boundary::{guard, non_null};
use super::handle::{handle_ref, spgemm_handle_t};
use super::matrix::{RawCsr, dim, raw_slice, raw_slice_mut};
use super::spmm::spgemm_layout_t;
use super::{spgemm_index_base_t, spgemm_index_type_t, spgemm_status_t, spgemm_value_type_t};
use crate::api::{
    DistAlgorithm, DistComm, DistGrid, DistMatrix, DistPlan, DistPlanOptions, Handle, Layout,
    ValueSlice, ValueSliceMut, dense_extent, dist_check, dist_spmm_after, dist_spmm_estimate,
    dist_spmm_plan, dist_spmm_update_values,
};
use crate::error::{Error, Result, Status, err};
use crate::types::ValueType;

/// Distributed SpMM algorithm. See `SPGEMM_DIST_ALG_*`.
pub type spgemm_dist_algorithm_t = i32;

/// The cost model picks the algorithm and the process grid (default).
pub const SPGEMM_DIST_ALG_AUTO: spgemm_dist_algorithm_t = 0;
/// 1.5D A-stationary, bulk-synchronous (grid (p/c) x c: X replicated by an allgather over
/// grid columns, partial Y summed by a reduce-scatter over grid rows).
pub const SPGEMM_DIST_ALG_SA15D: spgemm_dist_algorithm_t = 1;
/// 2D A-stationary, bulk-synchronous (broadcasts of X, reductions of Y per stage).
pub const SPGEMM_DIST_ALG_SA2D: spgemm_dist_algorithm_t = 2;
/// 2D C-stationary (SUMMA), bulk-synchronous (broadcasts of A and X per stage).
pub const SPGEMM_DIST_ALG_SC2D: spgemm_dist_algorithm_t = 3;
/// 2D A-stationary, one-sided (MPI RMA gets of X tiles).
pub const SPGEMM_DIST_ALG_SA2D_ASYNC: spgemm_dist_algorithm_t = 4;
/// 2D C-stationary, one-sided (MPI RMA gets of A and X tiles).
pub const SPGEMM_DIST_ALG_SC2D_ASYNC: spgemm_dist_algorithm_t = 5;
/// 1D rows, sparsity-aware (PETSc MPIAIJ's halo): each rank receives only the rows of X
/// its columns name, point to point from their owners (grid p x 1).
pub const SPGEMM_DIST_ALG_HALO1D: spgemm_dist_algorithm_t = 6;

const ALGORITHMS: [(spgemm_dist_algorithm_t, DistAlgorithm); 7] = [
    (SPGEMM_DIST_ALG_AUTO, DistAlgorithm::Auto),
    (SPGEMM_DIST_ALG_SA15D, DistAlgorithm::SA15D),
    (SPGEMM_DIST_ALG_SA2D, DistAlgorithm::SA2D),
    (SPGEMM_DIST_ALG_SC2D, DistAlgorithm::SC2D),
    (SPGEMM_DIST_ALG_SA2D_ASYNC, DistAlgorithm::SA2DAsync),
    (SPGEMM_DIST_ALG_SC2D_ASYNC, DistAlgorithm::SC2DAsync),
    (SPGEMM_DIST_ALG_HALO1D, DistAlgorithm::Halo1D),
];

fn algorithm_of(code: spgemm_dist_algorithm_t) -> Result<DistAlgorithm> {
    ALGORITHMS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, a)| *a)
        .ok_or_else(|| {
            Error::new(
                Status::InvalidValue,
                format!("algorithm = {code} is not an SPGEMM_DIST_ALG_* code"),
            )
        })
}

fn algorithm_code(a: DistAlgorithm) -> spgemm_dist_algorithm_t {
    ALGORITHMS
        .iter()
        .find(|(_, x)| *x == a)
        .map_or(SPGEMM_DIST_ALG_AUTO, |(c, _)| *c)
}

/// Opaque distributed matrix: this rank's rows (a descriptor of caller arrays, nothing
/// copied) and a duplicate of the caller's communicator.
pub struct spgemm_dist_matrix_t {
    pub(crate) comm: DistComm,
    raw: RawCsr,
    global_rows: usize,
    global_cols: usize,
    row_start: usize,
    x_range: Option<(usize, usize)>,
}

impl spgemm_dist_matrix_t {
    /// The typed API's view (reads the last row offset).
    pub(crate) fn view(&self) -> Result<DistMatrix<'_>> {
        Ok(DistMatrix {
            comm: &self.comm,
            global_rows: self.global_rows,
            global_cols: self.global_cols,
            row_start: self.row_start,
            x_range: self.x_range,
            // SAFETY: the caller of create promised the arrays outlive the matrix.
            local: unsafe { self.raw.to_any("A") }?,
        })
    }
}

/// Opaque distributed SpMM plan (algorithm, grid, A's tiles on their ranks, buffers).
pub struct spgemm_dist_plan_t {
    inner: DistPlan,
}

/// The handle, locked, if given; its NULL error otherwise (to be agreed like the others).
pub(crate) fn handle_or_err<'a>(
    handle: *const spgemm_handle_t,
) -> (Option<&'a super::handle::spgemm_handle_t>, Result<()>) {
    // SAFETY: the caller passes NULL or a live handle.
    let h = unsafe { handle_ref(handle) };
    let r = match h {
        Some(_) => Ok(()),
        None => err(Status::NullPointer, "handle is NULL"),
    };
    (h, r)
}

/// Runs a collective call's body with the handle's lock and records its outcome on the
/// handle (when there is one) and the thread.
pub(crate) fn collective(
    h: Option<&spgemm_handle_t>,
    f: impl FnOnce(Option<&mut Handle>) -> Result<()>,
) -> spgemm_status_t {
    guard(h.map(|h| &h.last_error), || match h {
        Some(h) => f(Some(&mut h.inner.lock())),
        None => f(None),
    })
}

fn grid_of(rows: i64, cols: i64) -> Result<Option<DistGrid>> {
    match (rows, cols) {
        (0, 0) => Ok(None),
        (r, c) if r > 0 && c > 0 => Ok(Some(DistGrid {
            pr: dim(r, "grid_rows")?,
            pc: dim(c, "grid_cols")?,
        })),
        _ => err(
            Status::InvalidValue,
            format!("grid {rows} x {cols}: give both positive (a forced grid) or both 0"),
        ),
    }
}

fn plan_options(
    k: i64,
    layout: spgemm_layout_t,
    algorithm: spgemm_dist_algorithm_t,
    grid_rows: i64,
    grid_cols: i64,
    memory_limit: i64,
) -> Result<DistPlanOptions> {
    let layout = Layout::from_code(layout).ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            format!("layout = {layout} is not an SPGEMM_LAYOUT_* code"),
        )
    })?;
    let mut o = DistPlanOptions::new(dim(k, "k")?, layout);
    o.algorithm = algorithm_of(algorithm)?;
    o.grid = grid_of(grid_rows, grid_cols)?;
    o.memory_limit = match memory_limit {
        0 => None,
        m => Some(dim(m, "memory_limit")?),
    };
    Ok(o)
}

/// Writes `v` through `p` when `p` is not NULL.
///
/// # Safety
/// `p` is NULL or writable.
pub(crate) unsafe fn put<T>(p: *mut T, v: T) {
    // SAFETY: per contract.
    if let Some(p) = unsafe { p.as_mut() } {
        *p = v;
    }
}

/// Creates a distributed matrix from this rank's block of rows. Collective over `comm`.
///
/// - `comm`: the communicator as a Fortran handle (`MPI_Fint`): C passes
///   `MPI_Comm_c2f(comm)`, Fortran its `integer` communicator (or `comm%MPI_VAL`), C++
///   likewise. The library duplicates it (the caller's is never freed; its traffic never
///   mixes with the library's) and never initialises or finalises MPI: a call before
///   `MPI_Init` or after `MPI_Finalize` gives `SPGEMM_STATUS_INVALID_VALUE`.
/// - `global_rows` x `global_cols`: A's global sizes, the same on every rank.
/// - `row_start`, `local_rows`: this rank owns rows `row_start .. row_start + local_rows`
///   (0-based, whatever `base`). The ranks' blocks follow each other in rank order and tile
///   the global rows (PETSc's ownership ranges, Tpetra's contiguous row maps); a rank may
///   own no rows.
/// - `x_start`, `x_rows`: the rows of X this rank owns (its block of A's columns); pass
///   `x_start = -1` for the same range as its rows (square A). The ranks' X blocks also
///   follow each other in rank order and tile the global columns.
/// - The local rows in CSR as `spgemm_matrix_create_csr` takes them (any offset/index/value
///   type, base 0 or 1), `local_rows` rows with GLOBAL column indices in
///   [base, base + global_cols), with values.
///
/// Everything is checked here, on every rank: the arguments, each rank's rows (structure,
/// column indices), and that the ranks' sizes and ranges fit together; a failure on any
/// rank gives the same status on every rank (no rank waits, none crashes). The arrays are
/// borrowed and must stay valid and unchanged in structure while the matrix is used.
/// On success `*matrix` owns the matrix; release it with `spgemm_dist_matrix_destroy`.
///
/// Errors (on every rank): `SPGEMM_STATUS_NOT_SUPPORTED` (libspgemm built without the `mpi`
/// feature), `SPGEMM_STATUS_INVALID_VALUE` (MPI not initialised or finalised, a handle
/// that names no communicator, negative sizes, codes, ranges that do not tile), and those of
/// `spgemm_matrix_create_csr` and of validation (`SPGEMM_STATUS_NULL_POINTER`,
/// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE`,
/// `SPGEMM_STATUS_DIMENSION_MISMATCH` for global sizes that differ between ranks).
/// A NULL `handle` or `matrix` is agreed too. Every rank of the communicator must call
/// with a handle of that same communicator (as for any collective MPI call); an
/// inter-communicator gives `SPGEMM_STATUS_NOT_SUPPORTED`.
///
/// # Safety
/// `handle` is NULL or live, `matrix` NULL or writable, the arrays valid as described.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_matrix_create_csr(
    handle: *mut spgemm_handle_t,
    comm: c_int,
    global_rows: i64,
    global_cols: i64,
    row_start: i64,
    local_rows: i64,
    x_start: i64,
    x_rows: i64,
    offset_type: spgemm_index_type_t,
    row_offsets: *const c_void,
    index_type: spgemm_index_type_t,
    col_indices: *const c_void,
    value_type: spgemm_value_type_t,
    values: *const c_void,
    base: spgemm_index_base_t,
    matrix: *mut *mut spgemm_dist_matrix_t,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        // SAFETY: NULL or writable per contract.
        unsafe { put(matrix, std::ptr::null_mut()) };
        // The communicator first: its duplication is collective and agreed by itself.
        let dc = DistComm::from_fortran(comm)?;
        let parts = (|| -> Result<_> {
            h_ok?;
            non_null(matrix, "matrix")?;
            let raw = RawCsr::new(
                local_rows,
                global_cols,
                offset_type,
                row_offsets,
                index_type,
                col_indices,
                value_type,
                values,
                base,
            )?;
            let x_range = match x_start {
                -1 => None,
                s => Some((dim(s, "x_start")?, dim(x_rows, "x_rows")?)),
            };
            let sizes = (
                dim(global_rows, "global_rows")?,
                dim(global_cols, "global_cols")?,
                dim(row_start, "row_start")?,
            );
            // SAFETY: the arrays are valid per contract; reading them is local.
            unsafe { raw.to_any("A") }?;
            Ok((raw, x_range, sizes))
        })();
        let (raw, x_range, (global_rows, global_cols, row_start)) = dc.agree(parts)?;
        let m = spgemm_dist_matrix_t {
            comm: dc,
            raw,
            global_rows,
            global_cols,
            row_start,
            x_range,
        };
        let h = h.ok_or_else(|| Error::new(Status::Internal, "agreed handle missing"))?;
        dist_check(h, &m.view()?)?;
        // SAFETY: non-NULL (agreed above) and writable.
        unsafe { *matrix = Box::into_raw(Box::new(m)) };
        Ok(())
    })
}

/// Releases a distributed matrix (frees its duplicate of the communicator; the caller's
/// arrays are untouched). Collective over the matrix's communicator, like
/// `MPI_Comm_free`. `NULL` is a no-op.
///
/// # Safety
/// `matrix` is NULL or a live matrix from `spgemm_dist_matrix_create_csr`, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_matrix_destroy(
    matrix: *mut spgemm_dist_matrix_t,
) -> spgemm_status_t {
    guard(None, || {
        if !matrix.is_null() {
            // SAFETY: from Box::into_raw in create.
            drop(unsafe { Box::from_raw(matrix) });
        }
        Ok(())
    })
}

/// Borrows a distributed matrix, naming it in the NULL error.
pub(crate) unsafe fn dist_matrix<'a>(
    m: *const spgemm_dist_matrix_t,
) -> Result<&'a spgemm_dist_matrix_t> {
    // SAFETY: NULL or live per the caller's contract.
    unsafe { m.as_ref() }.ok_or_else(|| Error::new(Status::NullPointer, "A is NULL"))
}

/// What the cost model predicts for `Y = alpha A X + beta Y` with k columns, without
/// building anything: the algorithm and grid it picks under the options (those of
/// `spgemm_dist_spmm_plan`), the predicted seconds of one product, and the largest
/// per-rank footprint of that choice in bytes. Each output pointer may be NULL.
/// Collective over A's communicator; the same outputs and status on every rank.
/// Errors: those of `spgemm_dist_spmm_plan`.
///
/// # Safety
/// `handle` NULL or live, `a` a live distributed matrix, outputs NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spmm_estimate(
    handle: *mut spgemm_handle_t,
    a: *const spgemm_dist_matrix_t,
    k: i64,
    layout: spgemm_layout_t,
    algorithm: spgemm_dist_algorithm_t,
    grid_rows: i64,
    grid_cols: i64,
    memory_limit: i64,
    chosen_algorithm: *mut spgemm_dist_algorithm_t,
    chosen_grid_rows: *mut i64,
    chosen_grid_cols: *mut i64,
    predicted_seconds: *mut f64,
    footprint_max_bytes: *mut i64,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        // SAFETY: per contract.
        let am = unsafe { dist_matrix(a) }?;
        let pre = h_ok.and_then(|_| {
            let o = plan_options(k, layout, algorithm, grid_rows, grid_cols, memory_limit)?;
            Ok((o, am.view()?))
        });
        let (o, av) = am.comm.agree(pre)?;
        let h = h.ok_or_else(|| Error::new(Status::Internal, "agreed handle missing"))?;
        let est = dist_spmm_estimate(h, &av, &o)?;
        let c = est.choice();
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(chosen_algorithm, algorithm_code(c.algorithm));
            put(chosen_grid_rows, c.grid.pr as i64);
            put(chosen_grid_cols, c.grid.pc as i64);
            put(predicted_seconds, c.time_s);
            put(footprint_max_bytes, c.memory_max as i64);
        }
        Ok(())
    })
}

/// Plans `Y = alpha A X + beta Y` with k columns of X and Y in `layout`
/// (`SPGEMM_LAYOUT_ROW_MAJOR` or `_COL_MAJOR`): picks the algorithm and process grid
/// (`algorithm` = `SPGEMM_DIST_ALG_AUTO`: the cost model's choice, from the measured
/// network and local SpMM rate; or the one given), moves A's tiles to their ranks and
/// allocates the buffers, so that each `spgemm_dist_spmm` pays only for the product.
/// `grid_rows` x `grid_cols` forces the process grid (both 0: chosen; for
/// `SPGEMM_DIST_ALG_SA15D` the replication factor c is `grid_cols`). `memory_limit`:
/// bytes a rank may hold for the plan (0: no limit); a plan over it on any rank is refused
/// with `SPGEMM_STATUS_ALLOC_FAILED` on every rank before anything is allocated. The plan
/// keeps no reference to A's arrays or its communicator (it has its own duplicate).
/// Collective over A's communicator.
/// Errors (on every rank): `SPGEMM_STATUS_NULL_POINTER` (handle, plan), `SPGEMM_STATUS_INVALID_VALUE`
/// (negative k, unknown layout or algorithm code, a grid that is not p ranks, A without
/// values), `SPGEMM_STATUS_ALLOC_FAILED`, `SPGEMM_STATUS_INDEX_OVERFLOW` (a message over
/// the `int` counts of MPI), `SPGEMM_STATUS_NOT_SUPPORTED` (built without `mpi`).
/// A NULL `a` returns at once on that rank: with no matrix there is no communicator to
/// agree over, as with a wrong communicator the other ranks then wait.
///
/// # Safety
/// `handle` NULL or live, `a` a live distributed matrix, `plan` NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spmm_plan(
    handle: *mut spgemm_handle_t,
    a: *const spgemm_dist_matrix_t,
    k: i64,
    layout: spgemm_layout_t,
    algorithm: spgemm_dist_algorithm_t,
    grid_rows: i64,
    grid_cols: i64,
    memory_limit: i64,
    plan: *mut *mut spgemm_dist_plan_t,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        // SAFETY: NULL or writable per contract.
        unsafe { put(plan, std::ptr::null_mut()) };
        // SAFETY: per contract.
        let am = unsafe { dist_matrix(a) }?;
        let pre = h_ok.and_then(|_| {
            non_null(plan, "plan")?;
            let o = plan_options(k, layout, algorithm, grid_rows, grid_cols, memory_limit)?;
            Ok((o, am.view()?))
        });
        let (o, av) = am.comm.agree(pre)?;
        let h = h.ok_or_else(|| Error::new(Status::Internal, "agreed handle missing"))?;
        let p = dist_spmm_plan(h, &av, &o)?;
        // SAFETY: non-NULL (agreed) and writable.
        unsafe { *plan = Box::into_raw(Box::new(spgemm_dist_plan_t { inner: p })) };
        Ok(())
    })
}

/// Borrows a plan.
unsafe fn plan_ref<'a>(p: *mut spgemm_dist_plan_t) -> Result<&'a mut spgemm_dist_plan_t> {
    // SAFETY: NULL or live per the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Error::new(Status::NullPointer, "plan is NULL"))
}

/// What the plan runs and holds on this rank: its algorithm (never AUTO), process grid,
/// the bytes this rank holds for it, the model's payload bytes of one product over all
/// ranks together, the value type (`SPGEMM_VALUE_*`), and the rows of X and of Y this rank
/// passes to `spgemm_dist_spmm`. Each output pointer may be NULL. Local (no MPI call).
///
/// # Safety
/// `plan` NULL or live, outputs NULL or writable.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_plan_get_info(
    plan: *mut spgemm_dist_plan_t,
    algorithm: *mut spgemm_dist_algorithm_t,
    grid_rows: *mut i64,
    grid_cols: *mut i64,
    footprint_bytes: *mut i64,
    predicted_bytes_total: *mut f64,
    value_type: *mut spgemm_value_type_t,
    x_rows: *mut i64,
    y_rows: *mut i64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: per contract.
        let p = &unsafe { plan_ref(plan) }?.inner;
        let g = p.grid();
        let (xr, yr) = p.local_rows();
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(algorithm, algorithm_code(p.algorithm()));
            put(grid_rows, g.pr as i64);
            put(grid_cols, g.pc as i64);
            put(footprint_bytes, p.footprint() as i64);
            put(predicted_bytes_total, p.predicted_bytes_total());
            put(value_type, p.value_type() as i32);
            put(x_rows, xr as i64);
            put(y_rows, yr as i64);
        }
        Ok(())
    })
}

/// Traffic and time of the plan's last `spgemm_dist_spmm` on this rank: payload bytes sent
/// to and received from other ranks (one-sided gets count at the origin only), the bytes
/// of the status agreement, seconds in local products and in the whole call. Each output
/// pointer may be NULL. Local.
///
/// # Safety
/// `plan` NULL or live, outputs NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_plan_get_stats(
    plan: *mut spgemm_dist_plan_t,
    bytes_sent: *mut i64,
    bytes_received: *mut i64,
    control_bytes: *mut i64,
    compute_seconds: *mut f64,
    total_seconds: *mut f64,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: per contract.
        let s = unsafe { plan_ref(plan) }?.inner.last_stats();
        // SAFETY: NULL or writable per contract.
        unsafe {
            put(bytes_sent, s.bytes_sent as i64);
            put(bytes_received, s.bytes_received as i64);
            put(control_bytes, s.control_bytes as i64);
            put(compute_seconds, s.compute_s);
            put(total_seconds, s.total_s);
        }
        Ok(())
    })
}

/// New values of the plan's matrix: `a` describes the same structure and types as the
/// matrix planned (checked by a digest: `SPGEMM_STATUS_PLAN_MISMATCH` otherwise), with new
/// values (e.g. the caller's value array changed in place). Only values move.
/// Collective over the plan's communicator; the same status on every rank.
///
/// # Safety
/// `handle` NULL or live, `plan` a live plan, `a` NULL or a live distributed matrix.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spmm_update_values(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_dist_plan_t,
    a: *const spgemm_dist_matrix_t,
) -> spgemm_status_t {
    let (h, h_ok) = handle_or_err(handle);
    collective(h, |h| {
        // SAFETY: per contract.
        let p = &mut unsafe { plan_ref(plan) }?.inner;
        let pre = h_ok.and_then(|_| {
            // SAFETY: per contract.
            let am = unsafe { dist_matrix(a) }?;
            Ok((am, am.view()?))
        });
        let (_, av) = p.agree(pre)?;
        let h = h.ok_or_else(|| Error::new(Status::Internal, "agreed handle missing"))?;
        dist_spmm_update_values(h, p, &av)
    })
}

/// `Y = alpha * A * X + beta * Y` with the plan. `x`: this rank's rows of X (its block of
/// A's columns, `x_rows` of `spgemm_dist_plan_get_info`), `y`: its rows of Y (`y_rows`),
/// both k columns in the plan's layout with leading dimensions `ldx` and `ldy` (row-major:
/// `ld >= k`; column-major: `ld >= max(1, rows)`), of A's value type, not overlapping.
/// BLAS conventions: `beta == 0` does not read Y, `alpha == 0` reads neither A nor X (X
/// may then be NULL). Every rank passes the same alpha and beta. The local products run on
/// the handle's threads (its backend decides CPU or GPU). Repeat with new X and Y as often
/// as needed. Collective over the plan's communicator: an argument error on any rank
/// (NULL or misaligned X or Y, a leading dimension too small, alpha or beta differing
/// between ranks) gives the same status on every rank, before anything is written. A NULL
/// `handle` or `plan` returns at once on that rank (no communicator to agree over without
/// the plan; the handle's absence cannot take part in the product's agreement).
///
/// Result: each entry of Y equals the serial SpMM of the gathered matrices, bitwise for
/// the algorithms that keep the serial summation order (sA-1.5D with c = 1, and every
/// algorithm on one rank), else within rounding (docs/DISTRIBUTED.md states it per
/// algorithm).
/// Errors: `SPGEMM_STATUS_NULL_POINTER`, `SPGEMM_STATUS_INVALID_VALUE`,
/// `SPGEMM_STATUS_INDEX_OVERFLOW` (X or Y spans more than the address space).
///
/// # Safety
/// `handle` and `plan` live; `x` and `y` valid for the extents described above.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_spmm(
    handle: *mut spgemm_handle_t,
    plan: *mut spgemm_dist_plan_t,
    alpha: f64,
    x: *const c_void,
    ldx: i64,
    beta: f64,
    y: *mut c_void,
    ldy: i64,
) -> spgemm_status_t {
    // SAFETY: the caller passes NULL or a live handle.
    let h = unsafe { handle_ref(handle) };
    guard(h.map(|h| &h.last_error), || {
        let h = h.ok_or_else(|| Error::new(Status::NullPointer, "handle is NULL"))?;
        let h = &mut h.inner.lock();
        // SAFETY: per contract.
        let p = &mut unsafe { plan_ref(plan) }?.inner;
        let vt = p.value_type();
        if vt.is_complex() {
            // Not reached: a distributed plan is made only from a real matrix (agreed).
            return err(Status::NotSupported, "distributed SpMM with complex values");
        }
        let (xr, yr) = p.local_rows();
        let (k, layout) = (p.k(), p.layout());
        let alpha_zero = match vt {
            ValueType::Float32 => alpha as f32 == 0.0,
            _ => alpha == 0.0,
        };
        let empty = |vt| match vt {
            ValueType::Float32 => (ValueSlice::F32(&[]), ValueSliceMut::F32(&mut [])),
            _ => (ValueSlice::F64(&[]), ValueSliceMut::F64(&mut [])),
        };
        let operands = || -> Result<(ValueSlice<'_>, usize, ValueSliceMut<'_>, usize)> {
            let ldx = dim(ldx, "ldx")?;
            let ldy = dim(ldy, "ldy")?;
            let nx = if alpha_zero {
                0
            } else {
                dense_extent("X", layout, xr, k, ldx)?
            };
            let ny = dense_extent("Y", layout, yr, k, ldy)?;
            let esize = if vt == ValueType::Float32 { 4 } else { 8 };
            if nx > 0 && ny > 0 {
                let (xs, xe) = (x as usize, (x as usize).saturating_add(nx * esize));
                let (ys, ye) = (y as usize, (y as usize).saturating_add(ny * esize));
                if xs < ye && ys < xe {
                    return err(Status::InvalidValue, "X and Y overlap");
                }
            }
            // SAFETY: valid for these extents per contract (NULL and alignment checked).
            unsafe {
                Ok(match vt {
                    ValueType::Float32 => (
                        ValueSlice::F32(raw_slice(x, nx, "X")?),
                        ldx,
                        ValueSliceMut::F32(raw_slice_mut(y, ny, "Y")?),
                        ldy,
                    ),
                    _ => (
                        ValueSlice::F64(raw_slice(x, nx, "X")?),
                        ldx,
                        ValueSliceMut::F64(raw_slice_mut(y, ny, "Y")?),
                        ldy,
                    ),
                })
            }
        };
        // An argument error is agreed inside the product's own agreement (no extra
        // collective): the rank passes empty operands and its error.
        let (pre, (xs, ldx, ys, ldy)) = match operands() {
            Ok(o) => (Ok(()), o),
            Err(e) => {
                let (xs, ys) = empty(vt);
                (Err(e), (xs, 1, ys, 1))
            }
        };
        dist_spmm_after(h, p, pre, alpha, xs, ldx, beta, ys, ldy).map(|_| ())
    })
}

/// Releases a plan (its communicators and, for the one-sided algorithms, its MPI windows).
/// Collective over the plan's communicator. `NULL` is a no-op.
///
/// # Safety
/// `plan` NULL or a live plan, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_dist_plan_destroy(
    plan: *mut spgemm_dist_plan_t,
) -> spgemm_status_t {
    guard(None, || {
        if !plan.is_null() {
            // SAFETY: from Box::into_raw in spgemm_dist_spmm_plan.
            drop(unsafe { Box::from_raw(plan) });
        }
        Ok(())
    })
}
