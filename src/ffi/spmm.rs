//! SpMM entry points: `spgemm_spmm` and `spgemm_spmm_scaled` (Y = alpha * op(A) * X +
//! beta * Y, X and Y dense; alpha and beta as doubles or as values of A's type) and the
//! optional analysis object `spgemm_spmm_analysis_t`.

use std::ffi::c_void;

use super::boundary::guard;
use super::handle::{spgemm_handle_t, with_handle};
use super::matrix::{dim, matrix_ref, spgemm_matrix_t, values_in, values_out};
use super::spgemm_status_t;
use crate::api::{self as spmm, DenseArgs, Handle, Layout, Op, SpmmAnalysis};
use crate::error::{Error, Result, Status, err};
use crate::types::{AnyScalar, Complex32, Complex64, ValueType};

/// Storage order of the dense matrices X and Y. See `SPGEMM_LAYOUT_*`.
pub type spgemm_layout_t = i32;
/// op(A) in SpMM, op(A) and op(B) in SpGEMM. See `SPGEMM_OPERATION_*`.
pub type spgemm_operation_t = i32;

/// Row-major: entry (i, j) at `i * ld + j`; `ld >= k`.
pub const SPGEMM_LAYOUT_ROW_MAJOR: spgemm_layout_t = 0;
/// Column-major (Fortran): entry (i, j) at `j * ld + i`; `ld >= max(1, rows)`.
pub const SPGEMM_LAYOUT_COL_MAJOR: spgemm_layout_t = 1;

/// op(A) = A.
pub const SPGEMM_OPERATION_NON_TRANSPOSE: spgemm_operation_t = 0;
/// op(A) = A^T (through a transposed copy of A's structure; cache it with an analysis, or
/// in a plan for SpGEMM).
pub const SPGEMM_OPERATION_TRANSPOSE: spgemm_operation_t = 1;
/// op(A) = A^H, the conjugate transpose (A^T's structure, conjugated values; the same as
/// `SPGEMM_OPERATION_TRANSPOSE` for real values).
pub const SPGEMM_OPERATION_CONJUGATE_TRANSPOSE: spgemm_operation_t = 2;

/// Opaque precomputation for repeated SpMM with one matrix (MKL's `set_mm_hint` and
/// `optimize`). Read-only once created: may be shared between threads and handles.
pub struct spgemm_spmm_analysis_t {
    inner: SpmmAnalysis,
}

/// The op of `code`; `what` names the argument in the error.
pub(crate) fn op_of(code: spgemm_operation_t, what: &str) -> Result<Op> {
    Op::from_code(code).ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            format!("{what} = {code} is not an SPGEMM_OPERATION_* code"),
        )
    })
}

fn layout_of(code: spgemm_layout_t) -> Result<Layout> {
    Layout::from_code(code).ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            format!("layout = {code} is not an SPGEMM_LAYOUT_* code"),
        )
    })
}

/// Y = alpha * op(A) * X + beta * Y (SpMM; SpMV when k = 1).
///
/// - `a`: the CSR matrix A (any offset/index/value type and base), m x n, with values.
///   op(A) is A (`SPGEMM_OPERATION_NON_TRANSPOSE`, X is n x k, Y is m x k), A^T
///   (`SPGEMM_OPERATION_TRANSPOSE`, X is m x k, Y is n x k) or A^H
///   (`SPGEMM_OPERATION_CONJUGATE_TRANSPOSE`, shaped as A^T; A^T for real A).
/// - `x`, `y`: the dense arrays X and Y, of A's value type (`float`, `double`,
///   `float _Complex` or `double _Complex`), both in `layout`
///   (`SPGEMM_LAYOUT_ROW_MAJOR`: entry (i, j) at `i * ld + j`, `ld >= k`;
///   `SPGEMM_LAYOUT_COL_MAJOR`: entry (i, j) at `j * ld + i`, `ld >= max(1, rows)`), with
///   leading dimensions `ldx`, `ldy`. They must not overlap. Entries between rows (or
///   columns) beyond the leading dimension's used part are neither read nor written.
/// - `alpha`, `beta`: scalars (converted to `float` for float matrices; for complex ones
///   they are the real parts, see `spgemm_spmm_scaled` for complex scalars); any value,
///   NaN included. BLAS conventions: `beta == 0` means Y is not read (NaN or garbage in Y
///   is overwritten); `alpha == 0` means A and X are not read (X may then be NULL).
/// - `k >= 0` columns (k = 0 does nothing; k = 1 is SpMV).
/// - `analysis`: NULL, or an analysis of A from `spgemm_spmm_analysis_create`; used when
///   its op has `op`'s structure (A; or A^T and A^H, which share one): its row partition,
///   for a transpose its transposed structure, and for an SpMV of A (k = 1, analysed with
///   a k hint of 0 or 1) A's row groups (runs of rows with one column list, read once for
///   the run; same results bit for bit). A's values may change between calls; its
///   structure must be the one analysed.
///
/// Determinism: each entry of Y is computed by one thread as `alpha * s + beta * y`, where
/// `s` sums its row of op(A) in an order fixed by the row alone (storage order; for k = 1,
/// and for row-major blocks of one vector on AVX-512, a fixed interleaving of partial
/// sums), so results are bitwise identical whatever the thread count and with or without
/// an analysis (they may differ between machines: FMA and vector kernels are used where the
/// CPU has them).
///
/// Memory: column-major products whose reads of X are scattered (random sparsity) pack 8
/// or 16 columns of X at a time into a buffer kept by the handle (16 values per row of X,
/// allocated on first use, reused, freed with the handle); if it cannot be allocated the
/// product runs without it.
///
/// Backend (`spgemm_set_backend`): `SPGEMM_BACKEND_CUDA` computes op(A) = A for real values
/// on the GPU (A, X and Y are copied to the device and Y back; the analysis is not used
/// there; a transposed op or complex values give `SPGEMM_STATUS_NOT_SUPPORTED`, whether or
/// not a GPU is present); `SPGEMM_BACKEND_AUTO` uses the GPU when one is usable, the values
/// are real, op(A) = A and A has at least 2^20 entries, else the CPU (always the CPU
/// without a GPU); `SPGEMM_BACKEND_CPU` the CPU. GPU sums may differ
/// in the last bits from the CPU's (other order). A device matrix
/// (`spgemm_matrix_create_csr_device`) gives `SPGEMM_STATUS_NOT_SUPPORTED`.
///
/// Validation (see `spgemm_set_validation`): when on, A is checked fully on each call
/// without an analysis, and compared with the analysed structure (digest) with one; when
/// off, the kernels check each block of A (row offsets, column indices) just before
/// reading it, and a bad structure gives `SPGEMM_STATUS_INTERNAL` with a message naming
/// the row or position (Y may then be partly written), never an access outside A, X or Y.
///
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle, A, X when alpha != 0 and X has entries,
/// Y when it has entries), `SPGEMM_STATUS_INVALID_VALUE` (op or layout code, negative k or
/// leading dimension, `ldx`/`ldy` smaller than the row length (row-major) or the number of
/// rows (column-major), X and Y overlapping, A without values, misaligned X or Y),
/// `SPGEMM_STATUS_INDEX_OVERFLOW` (X or Y spans more than the address space),
/// `SPGEMM_STATUS_PLAN_MISMATCH` (analysis made for another matrix),
/// `SPGEMM_STATUS_INVALID_STRUCTURE`, `SPGEMM_STATUS_INDEX_OUT_OF_RANGE` (bad A),
/// `SPGEMM_STATUS_ALLOC_FAILED` (A^T without an analysis needs a temporary transpose),
/// `SPGEMM_STATUS_NOT_SUPPORTED` (see Backend), `SPGEMM_STATUS_NO_DEVICE` (backend CUDA
/// without a usable GPU). Y is unchanged when an error is reported before the product starts (all of the above).
/// Calls on one handle are serialised; different handles run concurrently.
///
/// # Safety
/// Pointers are NULL or valid for the extents described above; `analysis` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_spmm(
    handle: *mut spgemm_handle_t,
    op: spgemm_operation_t,
    alpha: f64,
    a: *const spgemm_matrix_t,
    analysis: *const spgemm_spmm_analysis_t,
    layout: spgemm_layout_t,
    k: i64,
    x: *const c_void,
    ldx: i64,
    beta: f64,
    y: *mut c_void,
    ldy: i64,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let scalars =
            |t: ValueType| Ok((AnyScalar::from_f64(t, alpha), AnyScalar::from_f64(t, beta)));
        let dense = (layout, k, x, ldx, y, ldy);
        // SAFETY: the caller's contract is `spmm`'s.
        unsafe { spmm(h, op, a, analysis, scalars, dense) }
    })
}

/// Y = alpha * op(A) * X + beta * Y as `spgemm_spmm`, with `alpha` and `beta` pointing to
/// one value each of A's value type (`float`, `double`, `float _Complex` or
/// `double _Complex`), as MKL's `mkl_sparse_?_mm` takes them; for complex A, op may be
/// `SPGEMM_OPERATION_CONJUGATE_TRANSPOSE` (A^H; for real A it is A^T). Every convention of
/// `spgemm_spmm` holds: `*beta == 0` (both parts) means Y is not read, `*alpha == 0` means
/// A and X are not read; results are bitwise identical whatever the thread count (complex
/// values use one row kernel: each entry of Y sums its row of op(A) in storage order, from
/// zero, with the textbook complex product, no fused operations). The analysis of an op
/// serves the other transposed op too (A^T and A^H share A^T's structure).
///
/// Backend: complex values and transposed ops are computed on the CPU;
/// `SPGEMM_BACKEND_CUDA` gives `SPGEMM_STATUS_NOT_SUPPORTED` for them whether or not a GPU is
/// present, `SPGEMM_BACKEND_AUTO` takes the CPU.
///
/// Errors: those of `spgemm_spmm`, and `SPGEMM_STATUS_NULL_POINTER` (alpha or beta NULL).
/// Calls on one handle are serialised; different handles run concurrently.
///
/// # Safety
/// As for `spgemm_spmm`; `alpha` and `beta` are NULL or point to a readable value of A's
/// value type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_spmm_scaled(
    handle: *mut spgemm_handle_t,
    op: spgemm_operation_t,
    alpha: *const c_void,
    a: *const spgemm_matrix_t,
    analysis: *const spgemm_spmm_analysis_t,
    layout: spgemm_layout_t,
    k: i64,
    x: *const c_void,
    ldx: i64,
    beta: *const c_void,
    y: *mut c_void,
    ldy: i64,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        let scalars = |t: ValueType| {
            // SAFETY: NULL or one readable value of A's type per contract.
            unsafe { Ok((scalar(t, alpha, "alpha")?, scalar(t, beta, "beta")?)) }
        };
        let dense = (layout, k, x, ldx, y, ldy);
        // SAFETY: the caller's contract is `spmm`'s.
        unsafe { spmm(h, op, a, analysis, scalars, dense) }
    })
}

/// One value of type `t` at `p` (any alignment).
///
/// # Safety
/// `p` is NULL or points to a readable value of type `t`.
unsafe fn scalar(t: ValueType, p: *const c_void, what: &str) -> Result<AnyScalar> {
    if p.is_null() {
        return err(Status::NullPointer, format!("{what} is NULL"));
    }
    // SAFETY: readable per contract; unaligned reads accept any address.
    unsafe {
        Ok(match t {
            ValueType::Float32 => AnyScalar::from(p.cast::<f32>().read_unaligned()),
            ValueType::Float64 => AnyScalar::from(p.cast::<f64>().read_unaligned()),
            ValueType::Complex32 => AnyScalar::from(p.cast::<Complex32>().read_unaligned()),
            ValueType::Complex64 => AnyScalar::from(p.cast::<Complex64>().read_unaligned()),
        })
    }
}

/// X and Y as given: layout code, k, X, ldx, Y, ldy.
type DenseRaw = (spgemm_layout_t, i64, *const c_void, i64, *mut c_void, i64);

/// The body of `spgemm_spmm` and `spgemm_spmm_scaled`: `scalars` gives alpha and beta in
/// A's value type.
///
/// # Safety
/// As for `spgemm_spmm`.
unsafe fn spmm(
    h: &Handle,
    op: spgemm_operation_t,
    a: *const spgemm_matrix_t,
    analysis: *const spgemm_spmm_analysis_t,
    scalars: impl FnOnce(ValueType) -> Result<(AnyScalar, AnyScalar)>,
    (layout, k, x, ldx, y, ldy): DenseRaw,
) -> Result<()> {
    let op = op_of(op, "op")?;
    let layout = layout_of(layout)?;
    // SAFETY: NULL or live per contract.
    let av = unsafe { matrix_ref(a, "A") }?.view("A")?;
    let (alpha, beta) = scalars(av.value_type)?;
    let k = dim(k, "k")?;
    let ldx = dim(ldx, "ldx")?;
    let ldy = dim(ldy, "ldy")?;
    let (x_rows, y_rows) = spmm::operand_rows(op, av.nrows, av.ncols);
    let mut nx = spmm::dense_extent("X", layout, x_rows, k, ldx)?;
    let ny = spmm::dense_extent("Y", layout, y_rows, k, ldy)?;
    if alpha.is_zero() {
        nx = 0; // X is not read.
    }
    let esize = av.value_type.size();
    if nx > 0 && ny > 0 {
        let (xs, xe) = (x as usize, (x as usize).saturating_add(nx * esize));
        let (ys, ye) = (y as usize, (y as usize).saturating_add(ny * esize));
        if xs < ye && ys < xe {
            return err(Status::InvalidValue, "X and Y overlap");
        }
    }
    // SAFETY: the caller guarantees nx readable and ny writable entries (non-aliased,
    // checked above); the helpers check NULL, alignment and size.
    let (xs, ys) = unsafe {
        (
            values_in(av.value_type, x, nx, "X")?,
            values_out(av.value_type, y, ny, "Y")?,
        )
    };
    // SAFETY: NULL or live per contract.
    let an = unsafe { analysis.as_ref() }.map(|p| &p.inner);
    spmm::spmm_scaled(
        h,
        op,
        alpha,
        &av,
        an,
        beta,
        DenseArgs {
            layout,
            k,
            x: xs,
            ldx,
            y: ys,
            ldy,
        },
    )
}

/// Analyses A for repeated `spgemm_spmm` calls with `op` (as MKL's `mkl_sparse_set_mm_hint`
/// and `mkl_sparse_optimize` do): validates A fully once, stores a row partition balanced by
/// nonzeros for the handle's thread count and a digest of A's structure, and for
/// `SPGEMM_OPERATION_TRANSPOSE` or `_CONJUGATE_TRANSPOSE` the structure of A^T (about 16
/// bytes per entry; it serves both transposed ops), so the transposed product needs no
/// temporary. `layout` and `k_hint` (expected number of
/// columns, 0 = unknown) describe the expected use. Optional: `spgemm_spmm` works without.
///
/// On success `*analysis` owns the object; release it with `spgemm_spmm_analysis_destroy`.
/// It stays valid while A's structure is unchanged (values may change), and may be used
/// with any handle and from several threads at once.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (handle, A, analysis), `SPGEMM_STATUS_INVALID_VALUE`
/// (op or layout code, negative k_hint), `SPGEMM_STATUS_INVALID_STRUCTURE`,
/// `SPGEMM_STATUS_INDEX_OUT_OF_RANGE`, `SPGEMM_STATUS_ALLOC_FAILED` (also when the estimate
/// exceeds `spgemm_set_memory_limit`).
/// Calls on one handle are serialised.
///
/// # Safety
/// `handle` and `A` are NULL or live; `analysis` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_spmm_analysis_create(
    handle: *mut spgemm_handle_t,
    op: spgemm_operation_t,
    a: *const spgemm_matrix_t,
    layout: spgemm_layout_t,
    k_hint: i64,
    analysis: *mut *mut spgemm_spmm_analysis_t,
) -> spgemm_status_t {
    with_handle(handle, |h| {
        super::boundary::non_null(analysis, "analysis")?;
        // SAFETY: non-NULL and writable per contract.
        unsafe { *analysis = std::ptr::null_mut() };
        let op = op_of(op, "op")?;
        let layout = layout_of(layout)?;
        let k_hint = dim(k_hint, "k_hint")?;
        // SAFETY: NULL or live per contract.
        let av = unsafe { matrix_ref(a, "A") }?.view("A")?;
        let inner = spmm::analyse(h, op, &av, layout, k_hint)?;
        let b = Box::new(spgemm_spmm_analysis_t { inner });
        // SAFETY: as above.
        unsafe { *analysis = Box::into_raw(b) };
        Ok(())
    })
}

/// Destroys an analysis. `spgemm_spmm_analysis_destroy(NULL)` does nothing. Must not run
/// concurrently with a call using the analysis.
///
/// # Safety
/// `analysis` is NULL or a live analysis.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_spmm_analysis_destroy(
    analysis: *mut spgemm_spmm_analysis_t,
) -> spgemm_status_t {
    guard(None, || {
        if !analysis.is_null() {
            // SAFETY: pointer came from Box::into_raw in spgemm_spmm_analysis_create.
            drop(unsafe { Box::from_raw(analysis) });
        }
        Ok(())
    })
}
