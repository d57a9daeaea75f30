//! CUDA backend (cargo feature `cuda`, on by default). The driver (libcuda) and NVRTC
//! (libnvrtc) are opened at run time, so the library builds and runs without a CUDA
//! toolkit; without a driver or a device, asking for the GPU gives
//! `Status::NoDevice` and the `Auto` backend stays on the CPU.
//!
//! - [`bins`]: OpSparse's bin ranges and hash-table sizes, re-derived for the device's
//!   shared memory (pure Rust, tested everywhere);
//! - `device`: context, streams, NVRTC compilation cached per handle;
//! - `spgemm`: symbolic and numeric phases, the GPU plan;
//! - `spmm`: sparse times dense.

pub mod bins;
#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod hybrid;
pub mod limits;
pub mod memory;
#[cfg(feature = "cuda")]
mod spgemm;
#[cfg(feature = "cuda")]
pub mod spmm;

use crate::csr::AnyCsr;
use crate::error::{Result, Status, err};
use crate::handle::{Backend, Handle};
use crate::plan::{OutputFormat, Plan};
pub use memory::{DeviceCsr, DeviceOut, DevicePtr};

/// CUDA C sources, compiled at run time (and by the compile checks in tests/).
pub const SPGEMM_SOURCE: &str = include_str!("../../kernels/spgemm.cu");
pub const SPMM_SOURCE: &str = include_str!("../../kernels/spmm.cu");

/// Products whose inputs hold fewer entries stay on the CPU under `Backend::Auto`: the
/// copies to and from the device would cost more than the product.
pub const AUTO_MIN_INPUT_NNZ: usize = 1 << 20;

#[cfg(feature = "cuda")]
pub use device::{Gpu, Source, compile_ptx_for};
#[cfg(feature = "cuda")]
#[doc(hidden)]
pub use spgemm::force_global_rows_kernel;

/// Whether the NVRTC library can be opened (no device needed).
#[cfg(feature = "cuda")]
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}
#[cfg(feature = "cuda")]
pub use spgemm::GpuPlan;

/// Stand-in plan type of builds without the `cuda` feature (no value exists).
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub enum GpuPlan {}

#[cfg(feature = "cuda")]
pub use hybrid::HybridPlan;

/// Stand-in hybrid plan of builds without the `cuda` feature (no value exists).
#[cfg(not(feature = "cuda"))]
#[derive(Debug)]
pub enum HybridPlan {}

/// The handle's GPU, opened on first use and kept (with its compiled kernels) for the
/// handle's life. A failure to open is kept too: the answer does not change.
#[derive(Default)]
pub struct DeviceSlot {
    #[cfg(feature = "cuda")]
    cell: std::sync::OnceLock<Result<std::sync::Arc<Gpu>>>,
}

impl DeviceSlot {
    #[cfg(feature = "cuda")]
    pub fn get(&self) -> Result<std::sync::Arc<Gpu>> {
        self.cell
            .get_or_init(|| Gpu::open().map(std::sync::Arc::new))
            .clone()
    }

    /// Whether a usable GPU is present (opens it on first call).
    pub fn available(&self) -> bool {
        #[cfg(feature = "cuda")]
        {
            self.get().is_ok()
        }
        #[cfg(not(feature = "cuda"))]
        {
            false
        }
    }

    /// Why the GPU cannot be used, or Ok.
    pub fn check(&self) -> Result<()> {
        #[cfg(feature = "cuda")]
        {
            self.get().map(|_| ())
        }
        #[cfg(not(feature = "cuda"))]
        {
            err(
                Status::NoDevice,
                "libspgemm was built without the `cuda` feature",
            )
        }
    }

    /// One line naming the device, for reports ("none: <reason>" without one).
    pub fn describe(&self) -> String {
        #[cfg(feature = "cuda")]
        {
            match self.get() {
                Ok(g) => g.describe(),
                Err(e) => format!("none: {e}"),
            }
        }
        #[cfg(not(feature = "cuda"))]
        {
            "none: built without the `cuda` feature".to_string()
        }
    }
}

/// Symbolic phase on the GPU when the handle's backend asks for it: `None` means the
/// CPU does the product. Under `Auto` a product the GPU path does not support (sizes
/// beyond 32-bit device indices) falls back to the CPU; under `Cuda` it is an error.
pub fn try_symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Option<Result<Plan>> {
    if handle.options.hybrid && handle.options.backend != Backend::Cpu && handle.gpu.available() {
        return Some(gpu_hybrid_symbolic(handle, a, b, format));
    }
    match handle.options.backend {
        Backend::Cpu => None,
        Backend::Cuda => Some(
            handle
                .gpu
                .check()
                .and_then(|_| gpu_symbolic(handle, a, b, format)),
        ),
        Backend::Auto => {
            if index_len(&a.indices) + index_len(&b.indices) < AUTO_MIN_INPUT_NNZ
                || !handle.gpu.available()
            {
                return None;
            }
            match gpu_symbolic(handle, a, b, format) {
                Err(e) if matches!(e.status, Status::NotSupported | Status::NoDevice) => None,
                r => Some(r),
            }
        }
    }
}

/// A CPU plan made while the handle asked for hybrid products: record in the plan that
/// every row ran on the CPU, and why.
pub fn note_cpu_only(handle: &Handle, plan: &mut Plan) {
    if !handle.options.hybrid {
        return;
    }
    let why = if handle.options.backend == Backend::Cpu {
        "the handle's backend is SPGEMM_BACKEND_CPU".to_string()
    } else {
        match handle.gpu.check() {
            Err(e) => e.message,
            Ok(()) => "the product was not split".to_string(),
        }
    };
    plan.split = Some(crate::hybrid::Split::all_cpu(plan.nrows(), why));
}

#[cfg(feature = "cuda")]
fn gpu_hybrid_symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    hybrid::symbolic(handle, a, b, format)
}

#[cfg(not(feature = "cuda"))]
fn gpu_hybrid_symbolic(
    _: &Handle,
    _: &AnyCsr<'_>,
    _: &AnyCsr<'_>,
    _: OutputFormat,
) -> Result<Plan> {
    err(
        Status::NoDevice,
        "libspgemm was built without the `cuda` feature",
    )
}

/// Numeric phase of a hybrid plan (exists only where a GPU made it).
pub fn hybrid_numeric(
    handle: &Handle,
    plan: &Plan,
    hp: &HybridPlan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: crate::output::IndexSliceMut<'_>,
    vals: Option<crate::output::ValueSliceMut<'_>>,
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        hybrid::numeric(handle, plan, hp, a, b, cols, vals)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (handle, plan, a, b, cols, vals);
        match *hp {}
    }
}

fn index_len(s: &crate::csr::IndexSlice<'_>) -> usize {
    match s {
        crate::csr::IndexSlice::I32(x) => x.len(),
        crate::csr::IndexSlice::I64(x) => x.len(),
    }
}

#[cfg(feature = "cuda")]
fn gpu_symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    spgemm::symbolic(handle, a, b, format)
}

#[cfg(not(feature = "cuda"))]
fn gpu_symbolic(_: &Handle, _: &AnyCsr<'_>, _: &AnyCsr<'_>, _: OutputFormat) -> Result<Plan> {
    err(
        Status::NoDevice,
        "libspgemm was built without the `cuda` feature",
    )
}

#[cfg(feature = "cuda")]
pub(crate) use spgemm::numeric as gpu_numeric;

/// Numeric phase of a GPU plan (never called without the feature: no GPU plan exists).
#[cfg(not(feature = "cuda"))]
pub(crate) fn gpu_numeric<O, I, V>(
    _: &Handle,
    _: &Plan,
    g: &GpuPlan,
    _: &crate::csr::CsrRef<'_, O, I, V>,
    _: &crate::csr::CsrRef<'_, O, I, V>,
    _: crate::output::IndexSliceMut<'_>,
    _: Option<&mut [V]>,
) -> Result<()>
where
    O: crate::types::Idx,
    I: crate::types::Idx,
    V: crate::types::Scalar,
{
    match *g {}
}

/// Inputs of a numeric call: host descriptors or device descriptors.
pub enum NumericInputs<'x, 'a> {
    Host(&'x AnyCsr<'a>, &'x AnyCsr<'a>),
    Device(&'x DeviceCsr, &'x DeviceCsr),
}

/// Outputs of a numeric call: caller host arrays or caller device arrays.
pub enum NumericOutputs<'o> {
    Host {
        cols: crate::output::IndexSliceMut<'o>,
        vals: Option<crate::output::ValueSliceMut<'o>>,
    },
    Device(DeviceOut),
}

/// Symbolic phase of A and B in device memory. Checks types, shapes and 32-bit device
/// limits first, then that the handle can use a GPU (`NotSupported` for the CPU backend,
/// `NoDevice` without a usable device); only then is anything done on the device.
pub fn symbolic_device(
    handle: &Handle,
    a: &DeviceCsr,
    b: &DeviceCsr,
    format: OutputFormat,
) -> Result<Plan> {
    memory::check_pair(a, b, &format)?;
    memory::require_gpu(handle, "A and B are")?;
    gpu_symbolic_device(handle, a, b, format)
}

#[cfg(feature = "cuda")]
fn gpu_symbolic_device(
    handle: &Handle,
    a: &DeviceCsr,
    b: &DeviceCsr,
    format: OutputFormat,
) -> Result<Plan> {
    spgemm::symbolic_device(handle, a, b, format)
}

#[cfg(not(feature = "cuda"))]
fn gpu_symbolic_device(_: &Handle, _: &DeviceCsr, _: &DeviceCsr, _: OutputFormat) -> Result<Plan> {
    err(
        Status::NoDevice,
        "libspgemm was built without the `cuda` feature",
    )
}

/// Numeric phase where inputs or outputs (or both) are in device memory. Needs a usable
/// GPU (else `NoDevice`, or `NotSupported` for the CPU backend) and a plan made on it
/// (else `NotSupported`): device memory is never read or written on the host.
pub fn numeric_device(
    handle: &Handle,
    plan: &Plan,
    inputs: NumericInputs<'_, '_>,
    outputs: NumericOutputs<'_>,
) -> Result<()> {
    let what = match (&inputs, &outputs) {
        (NumericInputs::Device(..), NumericOutputs::Device(_)) => "A, B and C are",
        (NumericInputs::Device(..), _) => "A and B are",
        _ => "C's arrays are",
    };
    if let NumericInputs::Device(a, b) = &inputs {
        memory::check_against_plan(plan, a, b)?;
    }
    memory::require_gpu(handle, what)?;
    if plan.hybrid.is_some() {
        return err(
            Status::NotSupported,
            format!(
                "{what} in GPU memory, but the plan is a hybrid CPU+GPU plan, which takes host \
                 arrays only (turn hybrid off with spgemm_set_hybrid before spgemm_symbolic)"
            ),
        );
    }
    if plan.gpu.is_none() {
        return err(
            Status::NotSupported,
            format!(
                "{what} in GPU memory, but the plan was made on the CPU; make the plan with \
                 spgemm_symbolic on a handle whose backend is SPGEMM_BACKEND_CUDA (or AUTO with \
                 device inputs)"
            ),
        );
    }
    gpu_numeric_device(handle, plan, inputs, outputs)
}

#[cfg(feature = "cuda")]
fn gpu_numeric_device(
    handle: &Handle,
    plan: &Plan,
    inputs: NumericInputs<'_, '_>,
    outputs: NumericOutputs<'_>,
) -> Result<()> {
    spgemm::numeric_device(handle, plan, inputs, outputs)
}

#[cfg(not(feature = "cuda"))]
fn gpu_numeric_device(
    _: &Handle,
    _: &Plan,
    _: NumericInputs<'_, '_>,
    _: NumericOutputs<'_>,
) -> Result<()> {
    err(
        Status::NoDevice,
        "libspgemm was built without the `cuda` feature",
    )
}

/// Where an SpMM runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpmmWhere {
    Cpu,
    Gpu,
}

/// The backend for Y = alpha * op(A) * X + beta * Y. `Cuda` needs a usable device
/// (`NoDevice`) and op(A) = A (`NotSupported` for A^T: the GPU kernels read A by rows);
/// `Auto` takes the GPU only when one is usable, op(A) = A and A holds at least
/// `AUTO_MIN_INPUT_NNZ` entries, else the CPU; `Cpu` is the CPU.
pub fn spmm_where(handle: &Handle, transposed: bool, a_nnz: usize) -> Result<SpmmWhere> {
    match handle.options.backend {
        Backend::Cpu => Ok(SpmmWhere::Cpu),
        Backend::Cuda => {
            handle.gpu.check()?;
            if transposed {
                return err(
                    Status::NotSupported,
                    "the GPU SpMM computes op(A) = A only; for A^T use SPGEMM_BACKEND_CPU or AUTO",
                );
            }
            Ok(SpmmWhere::Gpu)
        }
        Backend::Auto => Ok(
            if !transposed && a_nnz >= AUTO_MIN_INPUT_NNZ && handle.gpu.available() {
                SpmmWhere::Gpu
            } else {
                SpmmWhere::Cpu
            },
        ),
    }
}

/// Y = alpha * A * X + beta * Y on the handle's GPU (host arrays; see `spmm::spmm`).
#[allow(clippy::too_many_arguments)]
pub fn gpu_spmm<O: crate::types::Idx, I: crate::types::Idx, V: crate::types::Scalar>(
    handle: &Handle,
    a: &crate::csr::CsrRef<'_, O, I, V>,
    row_major: bool,
    n: usize,
    x: &[V],
    ldx: usize,
    alpha: V,
    beta: V,
    y: &mut [V],
    ldy: usize,
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        let layout = if row_major {
            spmm::Layout::RowMajor
        } else {
            spmm::Layout::ColMajor
        };
        spmm::spmm(handle, a, layout, n, x, ldx, alpha, beta, y, ldy)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (handle, a, row_major, n, x, ldx, alpha, beta, y, ldy);
        err(
            Status::NoDevice,
            "libspgemm was built without the `cuda` feature",
        )
    }
}

/// nnz(C) of a GPU plan (whose row offsets stay on the device).
#[cfg(feature = "cuda")]
pub fn gpu_plan_nnz(g: &GpuPlan) -> usize {
    g.nnz()
}
#[cfg(not(feature = "cuda"))]
pub fn gpu_plan_nnz(g: &GpuPlan) -> usize {
    match *g {}
}

/// C's row offsets of a GPU plan, 0-based, read from the device.
#[cfg(feature = "cuda")]
pub fn gpu_plan_row_offsets(g: &GpuPlan) -> Result<Vec<usize>> {
    Ok(g.row_offsets()?.into_iter().map(|x| x as usize).collect())
}
#[cfg(not(feature = "cuda"))]
pub fn gpu_plan_row_offsets(g: &GpuPlan) -> Result<Vec<usize>> {
    match *g {}
}
