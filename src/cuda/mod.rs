//! CUDA backend (cargo feature `cuda`, on by default). The driver (libcuda) and NVRTC
//! (libnvrtc) are opened at run time, so the library builds and runs without a CUDA
//! toolkit; without a driver or a device, [`DeviceSlot::check`] says why and the
//! dispatcher keeps products on the CPU (or reports `NoDevice` when the GPU was asked
//! for). A peer of the other backends: it imports only `common` and `platform`.
//!
//! - [`bins`]: OpSparse's bin ranges and hash-table sizes, re-derived for the device's
//!   shared memory (pure Rust, tested everywhere);
//! - [`limits`]: the 32-bit index limits of the device kernels;
//! - `device`: context, streams, NVRTC compilation cached per handle;
//! - [`kcache`]: compiled kernels kept on disk across processes (pure Rust, tested everywhere);
//! - `spgemm`: symbolic and numeric phases, the GPU plan;
//! - `spmm`: sparse times dense.
//!
//! Without the feature every type here is uninhabited and every function says
//! `NoDevice`, so the dispatcher compiles the same way on every build.

// Without the feature the GPU's types are uninhabited and much here goes unused.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

pub mod bins;
#[cfg(feature = "cuda")]
mod device;
mod io;
pub mod kcache;
pub mod limits;
#[cfg(feature = "cuda")]
mod spgemm;
#[cfg(feature = "cuda")]
mod spmm;

use std::sync::Arc;

use crate::common::csr::CsrRef;
use crate::common::device::DeviceCsr;
use crate::common::options::{Layout, OutputFormat};
use crate::error::Result;
#[cfg(not(feature = "cuda"))]
use crate::error::{Status, err};
use crate::types::{Idx, Scalar, ValueType};

pub use io::{COut, ValuesIn};

#[cfg(feature = "cuda")]
pub use device::Gpu;
#[cfg(all(feature = "cuda", test))]
pub use device::{Source, compile_ptx_for};
#[cfg(feature = "cuda")]
pub use spgemm::{GpuPart, GpuPlan};
#[cfg(all(feature = "cuda", test))]
pub use spgemm::{force_global_rows_kernel, force_split_at};

/// A usable GPU (uninhabited without the `cuda` feature).
#[cfg(not(feature = "cuda"))]
pub enum Gpu {}

/// A plan made on the GPU (uninhabited without the `cuda` feature).
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub enum GpuPlan {}

/// The GPU's share of a product after its symbolic phase (uninhabited without the
/// `cuda` feature).
#[cfg(not(feature = "cuda"))]
pub enum GpuPart {}

#[cfg(not(feature = "cuda"))]
fn no_feature<T>() -> Result<T> {
    err(
        Status::NoDevice,
        "libspgemm was built without the `cuda` feature",
    )
}

/// Whether the NVRTC library can be opened (no device needed).
#[cfg(all(feature = "cuda", test))]
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The handle's GPU, opened on first use and kept (with its compiled kernels) for the
/// handle's life. A failure to open is kept too: the answer does not change.
#[derive(Default)]
pub struct DeviceSlot {
    #[cfg(feature = "cuda")]
    cell: std::sync::OnceLock<Result<Arc<Gpu>>>,
}

impl DeviceSlot {
    /// The GPU, or why it cannot be used (opens it on first call).
    pub fn get(&self) -> Result<Arc<Gpu>> {
        #[cfg(feature = "cuda")]
        {
            self.cell.get_or_init(|| Gpu::open().map(Arc::new)).clone()
        }
        #[cfg(not(feature = "cuda"))]
        {
            no_feature()
        }
    }

    /// One line naming the device, for reports ("none: <reason>" without one).
    pub fn describe(&self) -> String {
        match self.get() {
            #[cfg(feature = "cuda")]
            Ok(g) => g.describe(),
            #[cfg(not(feature = "cuda"))]
            Ok(g) => match *g {},
            Err(e) => format!("none: {e}"),
        }
    }
}

/// What a GPU part reports about itself.
pub struct PartInfo {
    /// C's row offsets for the part's rows, from 0, when they were asked back; else empty.
    pub row_ptr: Vec<usize>,
    pub nnz: usize,
    pub flops: u64,
}

/// Splits a GPU part into its plan and what it reports.
pub fn into_plan(part: GpuPart) -> (GpuPlan, PartInfo) {
    #[cfg(feature = "cuda")]
    {
        let info = PartInfo {
            row_ptr: part.row_ptr,
            nnz: part.nnz,
            flops: part.flops,
        };
        (part.plan, info)
    }
    #[cfg(not(feature = "cuda"))]
    match part {}
}

/// Symbolic phase of rows `rows` of A times B on the GPU, host inputs (checked by the
/// caller: product shape, the device's 32-bit limits; validated when `validated`).
/// `host_offsets`: bring C's row offsets of these rows back to the host. Values are not
/// read: `vt` is the type the numeric calls will give.
pub fn symbolic_host<O: Idx, I: Idx, V: Scalar>(
    gpu: &Arc<Gpu>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    vt: ValueType,
    (validated, sorted, host_offsets): (bool, bool, bool),
) -> Result<GpuPart> {
    #[cfg(feature = "cuda")]
    {
        spgemm::symbolic_host(gpu, a, b, rows, vt, (validated, sorted, host_offsets))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (a, b, rows, vt, validated, sorted, host_offsets);
        match **gpu {}
    }
}

/// Symbolic phase of A and B in device memory (checked by the caller: types, shapes, the
/// device's 32-bit limits); their structure is checked on the device.
pub fn symbolic_device(
    gpu: &Arc<Gpu>,
    a: &DeviceCsr,
    b: &DeviceCsr,
    sorted: bool,
) -> Result<GpuPart> {
    #[cfg(feature = "cuda")]
    {
        spgemm::symbolic_device(gpu, a, b, sorted)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (a, b, sorted);
        match **gpu {}
    }
}

/// Numeric phase of a GPU plan (or of the GPU's rows of a hybrid plan): takes the values,
/// runs the kernels, writes C in `format`. `reproducible`: the same bits on every run
/// (each row summed in A's then B's order, sorted rows). Returns the seconds spent
/// writing C out.
pub fn numeric<V: Scalar>(
    g: &GpuPlan,
    format: OutputFormat,
    vin: ValuesIn<'_, V>,
    out: COut<'_, V>,
    reproducible: bool,
) -> Result<f64> {
    #[cfg(feature = "cuda")]
    {
        spgemm::numeric_part(g, format, vin, out, reproducible)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (format, vin, out, reproducible);
        match *g {}
    }
}

/// nnz(C) of a GPU plan (whose row offsets stay on the device).
pub fn plan_nnz(g: &GpuPlan) -> usize {
    #[cfg(feature = "cuda")]
    {
        g.nnz()
    }
    #[cfg(not(feature = "cuda"))]
    match *g {}
}

/// Which of A and B differs from the structure a GPU plan copied to the device (None:
/// neither), read back and compared (see `GpuPlan::structure_differs`).
pub fn plan_structure_differs<O: Idx, I: Idx, V: Scalar>(
    g: &GpuPlan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<Option<&'static str>> {
    #[cfg(feature = "cuda")]
    {
        g.structure_differs(a, b)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (a, b);
        match *g {}
    }
}

/// C's row offsets of a GPU plan, 0-based, read from the device.
pub fn plan_row_offsets(g: &GpuPlan) -> Result<Vec<usize>> {
    #[cfg(feature = "cuda")]
    {
        Ok(g.row_offsets()?.into_iter().map(|x| x as usize).collect())
    }
    #[cfg(not(feature = "cuda"))]
    match *g {}
}

/// Y = alpha * A * X + beta * Y on the GPU (host arrays; A checked by the caller when
/// validating).
pub fn spmm<O: Idx, I: Idx, V: Scalar>(
    gpu: &Gpu,
    a: &CsrRef<'_, O, I, V>,
    layout: Layout,
    k: usize,
    x: (&[V], usize),
    (alpha, beta): (V, V),
    y: (&mut [V], usize),
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        spmm::spmm(gpu, a, layout, k, x, (alpha, beta), y)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (a, layout, k, x, alpha, beta, y);
        match *gpu {}
    }
}
