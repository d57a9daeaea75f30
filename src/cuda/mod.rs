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
mod spgemm;
#[cfg(feature = "cuda")]
pub mod spmm;

use crate::csr::AnyCsr;
#[cfg(not(feature = "cuda"))]
use crate::error::err;
use crate::error::{Result, Status};
use crate::handle::{Backend, Handle};
use crate::plan::{OutputFormat, Plan};

/// CUDA C sources, compiled at run time (and by the compile checks in tests/).
pub const SPGEMM_SOURCE: &str = include_str!("../../kernels/spgemm.cu");
pub const SPMM_SOURCE: &str = include_str!("../../kernels/spmm.cu");

/// Products whose inputs hold fewer entries stay on the CPU under `Backend::Auto`: the
/// copies to and from the device would cost more than the product.
pub const AUTO_MIN_INPUT_NNZ: usize = 1 << 20;

#[cfg(feature = "cuda")]
pub use device::{Gpu, Source, compile_ptx_for};

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
