//! Device-resident matrices: a caller whose CSR arrays already live in GPU memory hands
//! their addresses in a descriptor (`spgemm_matrix_create_csr_device`), and may ask for C
//! in device arrays. The addresses are kept as [`DevicePtr`] values: plain numbers that no
//! host code dereferences; only the CUDA backend turns them into kernel arguments. Without
//! a usable GPU (or with the CPU backend) every use of such a descriptor ends in a status
//! (`NoDevice` or `NotSupported`) before any access (the dispatcher checks). Pure data.

use crate::common::check::check_format;
use crate::common::csr::TypeSig;
use crate::common::options::{InputShape, OutputFormat};
use crate::error::{Result, Status, err};
use crate::types::{IndexType, ValueType};

/// An address in the GPU's memory, as the caller gave it (device 0, its primary context:
/// what `cudaMalloc` of the CUDA runtime returns). Never read or written on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevicePtr(u64);

impl DevicePtr {
    pub fn from_addr(addr: usize) -> DevicePtr {
        DevicePtr(addr as u64)
    }
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
    /// The address as the driver API's `CUdeviceptr` (for src/cuda only).
    pub fn addr(self) -> u64 {
        self.0
    }
    /// The address `bytes` further on.
    pub fn offset(self, bytes: usize) -> DevicePtr {
        DevicePtr(self.0.wrapping_add(bytes as u64))
    }
}

/// A CSR matrix in device memory. `nnz` is given by the caller, because the last row
/// offset cannot be read on the host; the GPU checks it against the offsets.
#[derive(Clone, Copy, Debug)]
pub struct DeviceCsr {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
    pub base: usize,
    pub offset_type: IndexType,
    pub row_offsets: DevicePtr,
    pub index_type: IndexType,
    pub col_indices: DevicePtr,
    pub value_type: ValueType,
    /// None: pattern-only.
    pub values: Option<DevicePtr>,
}

impl DeviceCsr {
    pub fn sig(&self) -> TypeSig {
        TypeSig {
            offsets: self.offset_type,
            indices: self.index_type,
            values: self.value_type,
        }
    }
}

/// C in the caller's device arrays (types and base of the plan's output format).
#[derive(Clone, Copy, Debug)]
pub struct DeviceOut {
    /// m + 1 row offsets, or None when not wanted.
    pub row_offsets: Option<DevicePtr>,
    pub col_indices: DevicePtr,
    /// nnz(C) values, or None for a structure-only product.
    pub values: Option<DevicePtr>,
}

/// The checks a device descriptor pair gets before any device work: same types, matching
/// dimensions, C's format able to hold k columns (the GPU backend adds its size limits).
pub fn check_pair(a: &DeviceCsr, b: &DeviceCsr, format: &OutputFormat) -> Result<()> {
    if a.sig() != b.sig() {
        return err(
            Status::TypeMismatch,
            format!("A has {} but B has {}", a.sig(), b.sig()),
        );
    }
    if a.ncols != b.nrows {
        return err(
            Status::DimensionMismatch,
            format!(
                "A is {} x {} but B is {} x {}: A's columns must equal B's rows",
                a.nrows, a.ncols, b.nrows, b.ncols
            ),
        );
    }
    check_format(format, b.ncols)
}

/// The shape a plan records for device inputs.
pub fn shape_of(a: &DeviceCsr, b: &DeviceCsr) -> InputShape {
    InputShape {
        sig: a.sig(),
        a_nrows: a.nrows,
        a_ncols: a.ncols,
        b_nrows: b.nrows,
        b_ncols: b.ncols,
        a_nnz: a.nnz,
        b_nnz: b.nnz,
        a_base: a.base,
        b_base: b.base,
    }
}
