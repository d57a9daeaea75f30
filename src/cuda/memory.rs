//! Device-resident matrices: a caller whose CSR arrays already live in GPU memory hands
//! their addresses in a descriptor (`spgemm_matrix_create_csr_device`), and may ask for C
//! in device arrays. The addresses are kept as [`DevicePtr`] values: plain numbers that no
//! host code dereferences; only the CUDA backend turns them into kernel arguments. Without
//! a usable GPU (or with the CPU backend) every use of such a descriptor ends in a status
//! (`NoDevice` or `NotSupported`) before any access. Pure code, built everywhere.

use crate::error::{Result, Status, err};
use crate::handle::{Backend, Handle};
use crate::plan::{InputShape, Plan};
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
    pub fn sig(&self) -> crate::csr::TypeSig {
        crate::csr::TypeSig {
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

/// Why device arrays cannot be used with this handle, or Ok when its GPU can take them.
/// The CPU backend cannot read GPU memory; `Auto` and `Cuda` need a usable device.
pub fn require_gpu(handle: &Handle, what: &str) -> Result<()> {
    if handle.options.backend == Backend::Cpu {
        return err(
            Status::NotSupported,
            format!(
                "{what} in GPU memory, but the handle's backend is SPGEMM_BACKEND_CPU, which \
                 cannot read device memory (use SPGEMM_BACKEND_AUTO or SPGEMM_BACKEND_CUDA)"
            ),
        );
    }
    handle.gpu.check().map_err(|e| {
        crate::error::Error::new(
            e.status,
            format!(
                "{what} in GPU memory, but no GPU can be used: {}",
                e.message
            ),
        )
    })
}

/// The checks a device descriptor pair gets before any device work: same types, matching
/// dimensions, sizes within 32-bit device indices, C's format able to hold k columns.
pub fn check_pair(a: &DeviceCsr, b: &DeviceCsr, format: &crate::plan::OutputFormat) -> Result<()> {
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
    crate::exec::check_format(format, b.ncols)?;
    super::limits::check_product(a.nrows, a.ncols, b.ncols, a.nnz, b.nnz)
}

/// The shape a plan records for device inputs.
pub fn shape_of(a: &DeviceCsr, b: &DeviceCsr) -> InputShape {
    InputShape {
        sig: a.sig(),
        a_nrows: a.nrows,
        a_ncols: a.ncols,
        b_ncols: b.ncols,
        a_nnz: a.nnz,
        b_nnz: b.nnz,
        a_base: a.base,
        b_base: b.base,
    }
}

/// Device inputs of a numeric call must have the plan's types and shape. (Their
/// structure is not read again: the plan keeps its own device copy of A's and B's
/// structure, so only the values are taken from the caller's arrays.)
pub fn check_against_plan(plan: &Plan, a: &DeviceCsr, b: &DeviceCsr) -> Result<()> {
    let now = shape_of(a, b);
    if now.sig != plan.shape.sig {
        return err(
            Status::TypeMismatch,
            format!(
                "inputs have {} but the plan was made for {}",
                now.sig, plan.shape.sig
            ),
        );
    }
    if now != plan.shape {
        return err(
            Status::PlanMismatch,
            format!(
                "device inputs are A {}x{} nnz {} base {}, B {}x{} nnz {} base {}; the plan was \
                 made for A {}x{} nnz {} base {}, B {}x{} nnz {} base {}",
                now.a_nrows,
                now.a_ncols,
                now.a_nnz,
                now.a_base,
                now.a_ncols,
                now.b_ncols,
                now.b_nnz,
                now.b_base,
                plan.shape.a_nrows,
                plan.shape.a_ncols,
                plan.shape.a_nnz,
                plan.shape.a_base,
                plan.shape.a_ncols,
                plan.shape.b_ncols,
                plan.shape.b_nnz,
                plan.shape.b_base
            ),
        );
    }
    Ok(())
}
