//! `spgemm_matrix_t`: CSR descriptors over caller memory (no copy) and library-owned
//! results of `spgemm_multiply`.

use std::ffi::c_void;
use std::fmt::Display;

use super::boundary::{guard, non_null};
use super::{spgemm_index_base_t, spgemm_index_type_t, spgemm_status_t, spgemm_value_type_t};
use crate::api::{
    AnyCsr, DeviceCsr, DevicePtr, IndexSlice, IndexVec, OffsetSlice, OffsetVec, OwnedCsr,
    ValueSlice, ValueSliceMut, ValueVec,
};
use crate::error::{Error, Result, Status, err};
use crate::types::{IndexType, ValueType};

/// Opaque CSR matrix: a descriptor of caller arrays, or a result owned by the library.
pub struct spgemm_matrix_t {
    pub(crate) kind: MatrixKind,
}

pub(crate) enum MatrixKind {
    Borrowed(RawCsr),
    Owned(OwnedCsr),
    /// Caller arrays in GPU memory (`spgemm_matrix_create_csr_device`): never read on
    /// the host.
    Device(DeviceCsr),
}

/// Where a matrix's arrays live. See `SPGEMM_MEMORY_*`.
pub type spgemm_memory_t = i32;
/// Host (CPU) memory: descriptors of `spgemm_matrix_create_csr` and results of
/// `spgemm_multiply`.
pub const SPGEMM_MEMORY_HOST: spgemm_memory_t = 0;
/// GPU memory: descriptors of `spgemm_matrix_create_csr_device`.
pub const SPGEMM_MEMORY_DEVICE: spgemm_memory_t = 1;

/// Caller arrays as given to `spgemm_matrix_create_csr`.
pub(crate) struct RawCsr {
    nrows: usize,
    ncols: usize,
    base: usize,
    offset_type: IndexType,
    row_offsets: *const c_void,
    index_type: IndexType,
    col_indices: *const c_void,
    value_type: ValueType,
    values: *const c_void,
    /// The entry count the caller declared (`spgemm_matrix_create_csr_nnz`), checked
    /// against the last row offset at creation and at every use.
    declared_nnz: Option<usize>,
}

pub(crate) fn index_type(code: spgemm_index_type_t, what: &str) -> Result<IndexType> {
    IndexType::from_code(code).ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            format!("{what} = {code} is not an SPGEMM_INDEX_* code"),
        )
    })
}

pub(crate) fn value_type(code: spgemm_value_type_t, what: &str) -> Result<ValueType> {
    ValueType::from_code(code).ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            format!("{what} = {code} is not an SPGEMM_VALUE_* code"),
        )
    })
}

pub(crate) fn index_base(code: spgemm_index_base_t, what: &str) -> Result<usize> {
    match code {
        0 | 1 => Ok(code as usize),
        _ => err(
            Status::InvalidValue,
            format!("{what} = {code} is not 0 or 1"),
        ),
    }
}

pub(crate) fn dim(v: i64, what: &str) -> Result<usize> {
    if v < 0 {
        return err(Status::InvalidValue, format!("{what} = {v} is negative"));
    }
    usize::try_from(v).map_err(|_| {
        Error::new(
            Status::IndexOverflow,
            format!("{what} = {v} exceeds the address space"),
        )
    })
}

/// "`name`: `part`" (an array of a named matrix) in messages.
#[derive(Clone, Copy)]
struct Part<'a>(&'a str, &'static str);

impl Display for Part<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0, self.1)
    }
}

/// A typed slice over caller memory after NULL, alignment and size checks.
///
/// # Safety
/// If `p` is non-NULL it must point to `len` readable elements of `T` that outlive `'a`.
pub(crate) unsafe fn raw_slice<'a, T>(
    p: *const c_void,
    len: usize,
    what: impl Display + Copy,
) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(
            Status::NullPointer,
            format!("{what} is NULL but {len} entries are needed"),
        );
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return err(
            Status::InvalidValue,
            format!("{what} is not aligned for its element type"),
        );
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>() {
        return err(
            Status::IndexOverflow,
            format!("{what}: {len} entries exceed the address space"),
        );
    }
    // SAFETY: non-NULL, aligned, size in range; the caller guarantees the memory.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<T>(), len) })
}

/// Mutable counterpart of `raw_slice`.
///
/// # Safety
/// If `p` is non-NULL it must point to `len` writable elements of `T`, not aliased, that
/// outlive `'a`.
pub(crate) unsafe fn raw_slice_mut<'a, T>(
    p: *mut c_void,
    len: usize,
    what: impl Display + Copy,
) -> Result<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return err(
            Status::NullPointer,
            format!("{what} is NULL but {len} entries are needed"),
        );
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return err(
            Status::InvalidValue,
            format!("{what} is not aligned for its element type"),
        );
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>() {
        return err(
            Status::IndexOverflow,
            format!("{what}: {len} entries exceed the address space"),
        );
    }
    // SAFETY: as in raw_slice, plus exclusive access promised by the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<T>(), len) })
}

/// `len` values of type `t` at `p` (see [`raw_slice`]).
///
/// # Safety
/// As for [`raw_slice`], with elements of `t`.
pub(crate) unsafe fn values_in<'a>(
    t: ValueType,
    p: *const c_void,
    len: usize,
    what: impl Display + Copy,
) -> Result<ValueSlice<'a>> {
    // SAFETY: per the contract.
    unsafe {
        Ok(match t {
            ValueType::Float32 => ValueSlice::F32(raw_slice(p, len, what)?),
            ValueType::Float64 => ValueSlice::F64(raw_slice(p, len, what)?),
            ValueType::Complex32 => ValueSlice::C32(raw_slice(p, len, what)?),
            ValueType::Complex64 => ValueSlice::C64(raw_slice(p, len, what)?),
        })
    }
}

/// `len` writable values of type `t` at `p` (see [`raw_slice_mut`]).
///
/// # Safety
/// As for [`raw_slice_mut`], with elements of `t`.
pub(crate) unsafe fn values_out<'a>(
    t: ValueType,
    p: *mut c_void,
    len: usize,
    what: impl Display + Copy,
) -> Result<ValueSliceMut<'a>> {
    // SAFETY: per the contract.
    unsafe {
        Ok(match t {
            ValueType::Float32 => ValueSliceMut::F32(raw_slice_mut(p, len, what)?),
            ValueType::Float64 => ValueSliceMut::F64(raw_slice_mut(p, len, what)?),
            ValueType::Complex32 => ValueSliceMut::C32(raw_slice_mut(p, len, what)?),
            ValueType::Complex64 => ValueSliceMut::C64(raw_slice_mut(p, len, what)?),
        })
    }
}

impl RawCsr {
    /// The arguments of `spgemm_matrix_create_csr` after their checks (sizes, type and
    /// base codes, row offsets non-NULL, alignment); nothing is read.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        nrows: i64,
        ncols: i64,
        offset_type: spgemm_index_type_t,
        row_offsets: *const c_void,
        index_type: spgemm_index_type_t,
        col_indices: *const c_void,
        value_type: spgemm_value_type_t,
        values: *const c_void,
        base: spgemm_index_base_t,
    ) -> Result<RawCsr> {
        let nrows = dim(nrows, "nrows")?;
        let ncols = dim(ncols, "ncols")?;
        let offset_type_ = self::index_type(offset_type, "offset_type")?;
        let index_type_ = self::index_type(index_type, "index_type")?;
        if index_type_ == IndexType::SizeT {
            return err(
                Status::InvalidValue,
                "index_type: size_t column indices are not supported (use int32 or int64)",
            );
        }
        let value_type = self::value_type(value_type, "value_type")?;
        let base = index_base(base, "base")?;
        non_null(row_offsets, "row_offsets")?;
        if nrows.checked_add(1).is_none() {
            return err(Status::IndexOverflow, "nrows + 1 overflows");
        }
        let raw = RawCsr {
            nrows,
            ncols,
            base,
            offset_type: offset_type_,
            row_offsets,
            index_type: index_type_,
            col_indices,
            value_type,
            values,
            declared_nnz: None,
        };
        let align_ok = |p: *const c_void, a: usize| p.is_null() || (p as usize).is_multiple_of(a);
        let off_align = match offset_type_ {
            IndexType::Int32 => 4,
            _ => 8,
        };
        let idx_align = if index_type_ == IndexType::Int32 {
            4
        } else {
            8
        };
        let val_align = value_type.align();
        // Name the misaligned array: a caller passing three arrays needs to know which.
        for (p, align, name) in [
            (row_offsets, off_align, "row_offsets"),
            (col_indices, idx_align, "col_indices"),
            (values, val_align, "values"),
        ] {
            if !align_ok(p, align) {
                return err(
                    Status::InvalidValue,
                    format!("{name} = {p:p} is not aligned to {align} bytes for its element type"),
                );
            }
        }
        Ok(raw)
    }
}

impl RawCsr {
    /// The last row offset, `row_offsets[nrows]`.
    ///
    /// # Safety
    /// The row offsets given at creation are still valid.
    unsafe fn last_offset(&self) -> Result<i128> {
        let m1 = self
            .nrows
            .checked_add(1)
            .ok_or_else(|| Error::new(Status::IndexOverflow, "nrows too large"))?;
        // SAFETY: the descriptor's contract says the row offsets hold nrows + 1 entries.
        unsafe {
            Ok(match self.offset_type {
                IndexType::Int32 => {
                    raw_slice::<i32>(self.row_offsets, m1, "row_offsets")?[self.nrows] as i128
                }
                IndexType::Int64 => {
                    raw_slice::<i64>(self.row_offsets, m1, "row_offsets")?[self.nrows] as i128
                }
                IndexType::SizeT => {
                    raw_slice::<u64>(self.row_offsets, m1, "row_offsets")?[self.nrows] as i128
                }
            })
        }
    }

    /// `InvalidValue` unless `last - base` (the entries the offsets claim) is the declared
    /// entry count; `name` names the matrix in the message.
    fn check_declared(&self, last: i128, name: &str) -> Result<()> {
        match self.declared_nnz {
            Some(nnz) if last - self.base as i128 != nnz as i128 => err(
                Status::InvalidValue,
                format!(
                    "{name}: row_offsets[{}] - base = {} entries, but nnz = {nnz} was given \
                     (the length of col_indices and values)",
                    self.nrows,
                    last - self.base as i128
                ),
            ),
            _ => Ok(()),
        }
    }

    /// Borrowed typed view. Reads the last row offset to learn the number of entries.
    ///
    /// # Safety
    /// The arrays given at creation are still valid.
    pub(crate) unsafe fn to_any(&self, name: &str) -> Result<AnyCsr<'_>> {
        let m1 = self
            .nrows
            .checked_add(1)
            .ok_or_else(|| Error::new(Status::IndexOverflow, format!("{name}: nrows too large")))?;
        // Messages are formatted only on error: this runs for every product.
        let what = Part(name, "row_offsets");
        // SAFETY (all three): the descriptor's contract says the arrays are valid.
        let (offsets, last): (OffsetSlice<'_>, i128) = unsafe {
            match self.offset_type {
                IndexType::Int32 => {
                    let s = raw_slice::<i32>(self.row_offsets, m1, what)?;
                    (OffsetSlice::I32(s), s[self.nrows] as i128)
                }
                IndexType::Int64 => {
                    let s = raw_slice::<i64>(self.row_offsets, m1, what)?;
                    (OffsetSlice::I64(s), s[self.nrows] as i128)
                }
                IndexType::SizeT => {
                    let s = raw_slice::<u64>(self.row_offsets, m1, what)?;
                    (OffsetSlice::U64(s), s[self.nrows] as i128)
                }
            }
        };
        self.check_declared(last, name)?;
        let nnz = last - self.base as i128;
        if nnz < 0 {
            return err(
                Status::InvalidStructure,
                format!(
                    "{name}: row_offsets[{}] = {last} is below the index base {}",
                    self.nrows, self.base
                ),
            );
        }
        let nnz = usize::try_from(nnz).map_err(|_| {
            Error::new(
                Status::IndexOverflow,
                format!("{name}: {nnz} entries exceed the address space"),
            )
        })?;
        let what = Part(name, "col_indices");
        // SAFETY: as above.
        let indices = unsafe {
            match self.index_type {
                IndexType::Int32 => IndexSlice::I32(raw_slice(self.col_indices, nnz, what)?),
                IndexType::Int64 => IndexSlice::I64(raw_slice(self.col_indices, nnz, what)?),
                IndexType::SizeT => {
                    return err(
                        Status::InvalidValue,
                        format!("{name}: size_t column indices are not supported"),
                    );
                }
            }
        };
        let what = Part(name, "values");
        let values = if self.values.is_null() {
            None
        } else {
            // SAFETY: as above.
            Some(unsafe { values_in(self.value_type, self.values, nnz, what)? })
        };
        Ok(AnyCsr {
            nrows: self.nrows,
            ncols: self.ncols,
            base: self.base,
            offsets,
            indices,
            values,
            value_type: self.value_type,
        })
    }
}

impl spgemm_matrix_t {
    /// Typed view of the matrix (`name` is used in messages: "A", "B"). A device matrix
    /// has none: its arrays cannot be read on the host.
    pub(crate) fn view(&self, name: &str) -> Result<AnyCsr<'_>> {
        match &self.kind {
            // SAFETY: the caller of create_csr promised the arrays outlive the descriptor.
            MatrixKind::Borrowed(r) => unsafe { r.to_any(name) },
            MatrixKind::Owned(o) => Ok(o.as_any()),
            MatrixKind::Device(_) => err(
                Status::NotSupported,
                format!(
                    "{name} is a device matrix (spgemm_matrix_create_csr_device): its arrays are \
                     in GPU memory; only spgemm_symbolic, spgemm_numeric, \
                     spgemm_numeric_structure and spgemm_numeric_device take device matrices"
                ),
            ),
        }
    }

    /// The device descriptor, if this is one.
    pub(crate) fn device(&self) -> Option<&DeviceCsr> {
        match &self.kind {
            MatrixKind::Device(d) => Some(d),
            _ => None,
        }
    }
}

/// Borrows a matrix pointer, naming it in the NULL error.
pub(crate) unsafe fn matrix_ref<'a>(
    m: *const spgemm_matrix_t,
    name: &str,
) -> Result<&'a spgemm_matrix_t> {
    // SAFETY: caller passes NULL or a live matrix.
    unsafe { m.as_ref() }.ok_or_else(|| Error::new(Status::NullPointer, format!("{name} is NULL")))
}

/// Creates a CSR descriptor over caller arrays; nothing is copied, and the arrays must stay
/// valid (and unchanged in structure) while the descriptor is used.
///
/// - `nrows`, `ncols` >= 0 (either may be 0).
/// - `row_offsets`: `nrows + 1` entries of `offset_type` (`SPGEMM_INDEX_INT32`, `_INT64` or
///   `_SIZE_T`), starting at `base`; row i holds positions `row_offsets[i] - base` to
///   `row_offsets[i+1] - base - 1`.
/// - `col_indices`: nnz = `row_offsets[nrows] - base` entries of `index_type`
///   (`SPGEMM_INDEX_INT32` or `_INT64`), each in [base, base + ncols). Rows may be unsorted
///   and may repeat a column (repeats are summed). May be NULL only when nnz = 0.
/// - `values`: nnz entries of `value_type` (`SPGEMM_VALUE_FLOAT32`, `_FLOAT64`,
///   `_COMPLEX_FLOAT` or `_COMPLEX_DOUBLE`: C99 `float _Complex` / `double _Complex`, aligned
///   as their real parts), or NULL for a pattern-only matrix (structure-only products).
/// - `base`: `SPGEMM_INDEX_BASE_ZERO` or `SPGEMM_INDEX_BASE_ONE` (Fortran).
///
/// Contents are checked when the matrix is used (see `spgemm_set_validation`); callers who
/// know the length of their arrays should prefer `spgemm_matrix_create_csr_nnz`, which
/// checks the last row offset against it. On success `*matrix` owns the descriptor;
/// release it with `spgemm_matrix_destroy`.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix, or row_offsets), `SPGEMM_STATUS_INVALID_VALUE`
/// (negative size, unknown type or base code, misaligned array), `SPGEMM_STATUS_INDEX_OVERFLOW`.
/// Thread-safe.
///
/// # Safety
/// `matrix` is NULL or writable; the arrays are valid as described above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_create_csr(
    matrix: *mut *mut spgemm_matrix_t,
    nrows: i64,
    ncols: i64,
    offset_type: spgemm_index_type_t,
    row_offsets: *const c_void,
    index_type: spgemm_index_type_t,
    col_indices: *const c_void,
    value_type: spgemm_value_type_t,
    values: *const c_void,
    base: spgemm_index_base_t,
) -> spgemm_status_t {
    guard(None, || {
        non_null(matrix, "matrix")?;
        // SAFETY: non-NULL and writable per contract.
        unsafe { *matrix = std::ptr::null_mut() };
        let raw = RawCsr::new(
            nrows,
            ncols,
            offset_type,
            row_offsets,
            index_type,
            col_indices,
            value_type,
            values,
            base,
        )?;
        let m = Box::new(spgemm_matrix_t {
            kind: MatrixKind::Borrowed(raw),
        });
        // SAFETY: as above.
        unsafe { *matrix = Box::into_raw(m) };
        Ok(())
    })
}

/// Creates a CSR descriptor over caller arrays whose length the caller knows, as
/// cuSPARSE's `cusparseCreateCsr` takes it: arguments as `spgemm_matrix_create_csr` plus
/// `nnz`, the number of entries of `col_indices` and `values`. The last row offset is read
/// here: `row_offsets[nrows] - base` must equal `nnz`, else `SPGEMM_STATUS_INVALID_VALUE`
/// (offsets claiming more entries than the arrays hold are caught before any call reads
/// past them). Every later use checks it again (the caller may have changed the offsets).
/// Errors: those of `spgemm_matrix_create_csr`; `SPGEMM_STATUS_INVALID_VALUE` (nnz
/// negative or not `row_offsets[nrows] - base`), `SPGEMM_STATUS_NULL_POINTER`
/// (`col_indices` NULL while nnz > 0). Thread-safe.
///
/// # Safety
/// `matrix` is NULL or writable; `row_offsets` holds `nrows + 1` readable entries,
/// `col_indices` and `values` (NULL: pattern-only) `nnz` each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_create_csr_nnz(
    matrix: *mut *mut spgemm_matrix_t,
    nrows: i64,
    ncols: i64,
    nnz: i64,
    offset_type: spgemm_index_type_t,
    row_offsets: *const c_void,
    index_type: spgemm_index_type_t,
    col_indices: *const c_void,
    value_type: spgemm_value_type_t,
    values: *const c_void,
    base: spgemm_index_base_t,
) -> spgemm_status_t {
    guard(None, || {
        non_null(matrix, "matrix")?;
        // SAFETY: non-NULL and writable per contract.
        unsafe { *matrix = std::ptr::null_mut() };
        let declared = dim(nnz, "nnz")?;
        let mut raw = RawCsr::new(
            nrows,
            ncols,
            offset_type,
            row_offsets,
            index_type,
            col_indices,
            value_type,
            values,
            base,
        )?;
        if declared > 0 {
            non_null(col_indices, "col_indices")?;
        }
        raw.declared_nnz = Some(declared);
        // SAFETY: row_offsets holds nrows + 1 entries per contract.
        let last = unsafe { raw.last_offset() }?;
        raw.check_declared(last, "matrix")?;
        let m = Box::new(spgemm_matrix_t {
            kind: MatrixKind::Borrowed(raw),
        });
        // SAFETY: as above.
        unsafe { *matrix = Box::into_raw(m) };
        Ok(())
    })
}

/// Creates a CSR descriptor over arrays in GPU memory (device 0, allocated in its primary
/// context, as `cudaMalloc` of the CUDA runtime does), so codes whose matrices already
/// live on the GPU avoid copying them to the host and back. Nothing is copied or read
/// here; the arrays must stay valid while the descriptor is used, and any work writing
/// them must be complete (e.g. `cudaStreamSynchronize`) before a call uses them.
///
/// Arguments are those of `spgemm_matrix_create_csr` plus `nnz`, the number of entries
/// (`row_offsets[nrows] - base`), which the library cannot read from device memory; the
/// GPU checks it against the offsets. `row_offsets` holds `nrows + 1` entries;
/// `col_indices` and `values` hold `nnz` each (NULL allowed when nnz = 0; `values` NULL
/// means pattern-only).
///
/// Use: as A and B of `spgemm_symbolic` (both must be device matrices), then of
/// `spgemm_numeric`, `spgemm_numeric_structure` (C to host arrays) or
/// `spgemm_numeric_device` (C to device arrays). The symbolic call runs on the GPU
/// whatever the backend option says, except `SPGEMM_BACKEND_CPU`, which gives
/// `SPGEMM_STATUS_NOT_SUPPORTED`; without a usable GPU it gives
/// `SPGEMM_STATUS_NO_DEVICE`. Every other function that reads a matrix's entries
/// (`spgemm_multiply`, `spgemm_spmm`, `spgemm_spmm_analysis_create`) gives
/// `SPGEMM_STATUS_NOT_SUPPORTED` for a device matrix. `spgemm_matrix_get_info` reports
/// the given sizes and types, `spgemm_matrix_export_csr` the device pointers.
/// On the GPU the structure is checked on the device (validation of offsets and column
/// indices, whatever `spgemm_set_validation` says) before any kernel uses it; sizes of
/// 2^31 - 1 or more (rows, columns, nnz) give `SPGEMM_STATUS_NOT_SUPPORTED` there.
/// Complex value types may be described, but the GPU has no complex kernels: products with
/// such matrices give `SPGEMM_STATUS_NOT_SUPPORTED` (before any device is looked for).
///
/// On success `*matrix` owns the descriptor; release it with `spgemm_matrix_destroy`
/// (the device arrays are untouched).
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix; row_offsets when nrows + 1 entries are
/// needed; col_indices when nnz > 0), `SPGEMM_STATUS_INVALID_VALUE` (negative size, unknown
/// type or base code, misaligned array), `SPGEMM_STATUS_INDEX_OVERFLOW`. Thread-safe.
///
/// # Safety
/// `matrix` is NULL or writable; the device arrays are valid as described above (they
/// are never dereferenced on the host).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_create_csr_device(
    matrix: *mut *mut spgemm_matrix_t,
    nrows: i64,
    ncols: i64,
    nnz: i64,
    offset_type: spgemm_index_type_t,
    row_offsets: *const c_void,
    index_type: spgemm_index_type_t,
    col_indices: *const c_void,
    value_type: spgemm_value_type_t,
    values: *const c_void,
    base: spgemm_index_base_t,
) -> spgemm_status_t {
    guard(None, || {
        non_null(matrix, "matrix")?;
        // SAFETY: non-NULL and writable per contract.
        unsafe { *matrix = std::ptr::null_mut() };
        let nrows = dim(nrows, "nrows")?;
        let ncols = dim(ncols, "ncols")?;
        let nnz = dim(nnz, "nnz")?;
        let offset_type_ = self::index_type(offset_type, "offset_type")?;
        let index_type_ = self::index_type(index_type, "index_type")?;
        if index_type_ == IndexType::SizeT {
            return err(
                Status::InvalidValue,
                "index_type: size_t column indices are not supported (use int32 or int64)",
            );
        }
        let value_type = self::value_type(value_type, "value_type")?;
        let base = index_base(base, "base")?;
        if nrows.checked_add(1).is_none() {
            return err(Status::IndexOverflow, "nrows + 1 overflows");
        }
        non_null(row_offsets, "row_offsets")?;
        if nnz > 0 {
            non_null(col_indices, "col_indices")?;
        }
        let align = |t: IndexType| if t == IndexType::Int32 { 4 } else { 8 };
        let val_align = value_type.align();
        // Alignment is a property of the address: checking it reads no device memory.
        for (p, a, name) in [
            (row_offsets, align(offset_type_), "row_offsets"),
            (col_indices, align(index_type_), "col_indices"),
            (values, val_align, "values"),
        ] {
            if !(p as usize).is_multiple_of(a) {
                return err(
                    Status::InvalidValue,
                    format!("{name} = {p:p} is not aligned to {a} bytes for its element type"),
                );
            }
        }
        let dev = |p: *const c_void| DevicePtr::from_addr(p as usize);
        let d = DeviceCsr {
            nrows,
            ncols,
            nnz,
            base,
            offset_type: offset_type_,
            row_offsets: dev(row_offsets),
            index_type: index_type_,
            col_indices: dev(col_indices),
            value_type,
            values: (!values.is_null()).then(|| dev(values)),
        };
        let m = Box::new(spgemm_matrix_t {
            kind: MatrixKind::Device(d),
        });
        // SAFETY: as above.
        unsafe { *matrix = Box::into_raw(m) };
        Ok(())
    })
}

/// Reads where a matrix's arrays live (`SPGEMM_MEMORY_HOST` or `SPGEMM_MEMORY_DEVICE`)
/// into `*memory`. Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix, memory). Thread-safe.
///
/// # Safety
/// `matrix` is NULL or live; `memory` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_get_memory(
    matrix: *const spgemm_matrix_t,
    memory: *mut spgemm_memory_t,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let m = unsafe { matrix_ref(matrix, "matrix") }?;
        non_null(memory, "memory")?;
        let where_ = if m.device().is_some() {
            SPGEMM_MEMORY_DEVICE
        } else {
            SPGEMM_MEMORY_HOST
        };
        // SAFETY: non-NULL, writable per contract.
        unsafe { *memory = where_ };
        Ok(())
    })
}

/// Destroys a matrix. For a descriptor the caller's arrays are untouched; for a result of
/// `spgemm_multiply` its arrays are freed. `spgemm_matrix_destroy(NULL)` does nothing.
///
/// # Safety
/// `matrix` is NULL or a live matrix not in use by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_destroy(matrix: *mut spgemm_matrix_t) -> spgemm_status_t {
    guard(None, || {
        if !matrix.is_null() {
            // SAFETY: pointer came from Box::into_raw.
            drop(unsafe { Box::from_raw(matrix) });
        }
        Ok(())
    })
}

/// Reads a matrix's shape and types into the non-NULL pointers among the outputs. `nnz` is
/// `row_offsets[nrows] - base`. Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix),
/// `SPGEMM_STATUS_INVALID_STRUCTURE` (last row offset below the base). Thread-safe.
///
/// # Safety
/// `matrix` is NULL or live; each output pointer is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_get_info(
    matrix: *const spgemm_matrix_t,
    nrows: *mut i64,
    ncols: *mut i64,
    nnz: *mut i64,
    offset_type: *mut spgemm_index_type_t,
    index_type: *mut spgemm_index_type_t,
    value_type: *mut spgemm_value_type_t,
    base: *mut spgemm_index_base_t,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let m = unsafe { matrix_ref(matrix, "matrix") }?;
        // A device descriptor answers from what it was given (its arrays are not read).
        let (rows, cols, entries, sig, b) = match m.device() {
            Some(d) => (d.nrows, d.ncols, d.nnz, d.sig(), d.base),
            None => {
                let v = m.view("matrix")?;
                (v.nrows, v.ncols, v.nnz(), v.sig(), v.base)
            }
        };
        // SAFETY: each non-NULL output is writable per contract.
        unsafe {
            if let Some(p) = nrows.as_mut() {
                *p = rows as i64;
            }
            if let Some(p) = ncols.as_mut() {
                *p = cols as i64;
            }
            if let Some(p) = nnz.as_mut() {
                *p = entries as i64;
            }
            if let Some(p) = offset_type.as_mut() {
                *p = sig.offsets as i32;
            }
            if let Some(p) = index_type.as_mut() {
                *p = sig.indices as i32;
            }
            if let Some(p) = value_type.as_mut() {
                *p = sig.values as i32;
            }
            if let Some(p) = base.as_mut() {
                *p = b as i32;
            }
        }
        Ok(())
    })
}

/// Gives read access to a matrix's arrays (types and sizes from `spgemm_matrix_get_info`):
/// for a result of `spgemm_multiply` the library's arrays, valid until the matrix is
/// destroyed; for a descriptor the caller's own pointers (device pointers for a device
/// descriptor). `*values` is NULL for a
/// pattern-only matrix. Any output pointer may be NULL.
/// Errors: `SPGEMM_STATUS_NULL_POINTER` (matrix). Thread-safe.
///
/// # Safety
/// `matrix` is NULL or live; each output pointer is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spgemm_matrix_export_csr(
    matrix: *const spgemm_matrix_t,
    row_offsets: *mut *const c_void,
    col_indices: *mut *const c_void,
    values: *mut *const c_void,
) -> spgemm_status_t {
    guard(None, || {
        // SAFETY: NULL or live per contract.
        let m = unsafe { matrix_ref(matrix, "matrix") }?;
        let (r, c, v): (*const c_void, *const c_void, *const c_void) = match &m.kind {
            MatrixKind::Borrowed(raw) => (raw.row_offsets, raw.col_indices, raw.values),
            MatrixKind::Device(d) => (
                d.row_offsets.addr() as usize as *const c_void,
                d.col_indices.addr() as usize as *const c_void,
                d.values.map_or(0, |p| p.addr()) as usize as *const c_void,
            ),
            MatrixKind::Owned(o) => (
                match &o.offsets {
                    OffsetVec::I32(x) => x.as_ptr().cast(),
                    OffsetVec::I64(x) => x.as_ptr().cast(),
                    OffsetVec::U64(x) => x.as_ptr().cast(),
                },
                match &o.indices {
                    IndexVec::I32(x) => x.as_ptr().cast(),
                    IndexVec::I64(x) => x.as_ptr().cast(),
                },
                match &o.values {
                    None => std::ptr::null(),
                    Some(ValueVec::F32(x)) => x.as_ptr().cast(),
                    Some(ValueVec::F64(x)) => x.as_ptr().cast(),
                    Some(ValueVec::C32(x)) => x.as_ptr().cast(),
                    Some(ValueVec::C64(x)) => x.as_ptr().cast(),
                },
            ),
        };
        // SAFETY: each non-NULL output is writable per contract.
        unsafe {
            if let Some(p) = row_offsets.as_mut() {
                *p = r;
            }
            if let Some(p) = col_indices.as_mut() {
                *p = c;
            }
            if let Some(p) = values.as_mut() {
                *p = v;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::boundary::thread_last_error_ptr;

    /// The misalignment error names the array (regression: it used to say "an array").
    #[test]
    fn misaligned_array_is_named() {
        let offsets = [0i64, 1, 2];
        let indices = [0i64, 1, 2];
        let values = [1.0f64, 2.0, 3.0];
        let off = offsets.as_ptr().cast::<c_void>();
        let idx = indices.as_ptr().cast::<c_void>();
        let val = values.as_ptr().cast::<c_void>();
        // SAFETY: a one-byte offset into a live array; creation reads no array.
        let skew = |p: *const c_void| unsafe { p.cast::<u8>().add(1).cast::<c_void>() };
        for (o, i, v, name) in [
            (skew(off), idx, val, "row_offsets"),
            (off, skew(idx), val, "col_indices"),
            (off, idx, skew(val), "values"),
        ] {
            let mut m: *mut spgemm_matrix_t = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the arrays outlive the call.
            let s = unsafe { spgemm_matrix_create_csr(&mut m, 2, 3, 1, o, 1, i, 1, v, 0) };
            assert_eq!(s, Status::InvalidValue as i32);
            assert!(m.is_null());
            // SAFETY: the thread's last error is a valid NUL-terminated string.
            let msg = unsafe { std::ffi::CStr::from_ptr(thread_last_error_ptr()) };
            let msg = msg.to_str().unwrap();
            assert!(msg.contains(name), "{msg}");
        }
    }
}
