//! The GPU of a handle: context, streams, device limits and the kernels, compiled by NVRTC
//! for the device's architecture on first use and cached per value type.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::{CompileOptions, Ptx};
use parking_lot::Mutex;

use crate::error::{Error, Result, Status, err};

/// CUDA C sources, compiled at run time (and by the compile checks).
const SPGEMM_SOURCE: &str = include_str!("../../kernels/spgemm.cu");
const SPMM_SOURCE: &str = include_str!("../../kernels/spmm.cu");
use crate::types::ValueType;

/// Streams the bins are spread over (largest bins first).
pub const STREAMS: usize = 4;

/// Which CUDA source a module comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    Spgemm,
    Spmm,
}

pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub main: Arc<CudaStream>,
    pub side: Vec<Arc<CudaStream>>,
    pub name: String,
    pub cc: (i32, i32),
    pub sm_count: u32,
    /// Shared memory a block may use with the opt-in attribute (bytes).
    pub smem_per_block: usize,
    modules: Mutex<HashMap<(Source, ValueType), Arc<Module>>>,
}

/// A compiled module and its functions (shared-memory limits already raised).
pub struct Module {
    _module: Arc<CudaModule>,
    functions: HashMap<&'static str, CudaFunction>,
}

impl Module {
    pub fn f(&self, name: &str) -> Result<&CudaFunction> {
        self.functions
            .get(name)
            .ok_or_else(|| Error::new(Status::Internal, format!("kernel {name} not loaded")))
    }
}

/// Turns a CUDA driver error into a status (messages name the operation).
pub fn drv<T>(r: std::result::Result<T, cudarc::driver::DriverError>, what: &str) -> Result<T> {
    r.map_err(|e| {
        let status = if format!("{e:?}").contains("OUT_OF_MEMORY") {
            Status::AllocFailed
        } else {
            Status::Internal
        };
        Error::new(status, format!("CUDA {what}: {e:?}"))
    })
}

fn no_device<T>(msg: String) -> Result<T> {
    err(Status::NoDevice, msg)
}

const SPGEMM_KERNELS: &[&str] = &[
    "row_nprod",
    "scan_tiles",
    "scan_tile_sums",
    "scan_finish",
    "bin_count",
    "bin_scatter",
    "sym_shared",
    "sym_global",
    "num_shared",
    "num_global",
    "num_dense",
    "split_clear",
    "sym_split",
    "num_split_acc",
    "num_split_out",
    "num_keys",
    "rows_max_key",
    "split_dense_clear",
    "split_dense_acc",
    "split_dense_count",
    "split_dense_emit",
    "sym_split_dense",
    "sym_dense_count",
    "idx_from_i32",
    "idx_from_i64",
    "offsets_check",
    "idx_to_caller",
];
const SPMM_KERNELS: &[&str] = &["spmm_halfwarp", "spmm_rowmajor"];

/// NVRTC options shared by the library and the compile checks.
pub fn compile_options(arch: &str) -> CompileOptions {
    CompileOptions {
        options: vec![
            format!("--gpu-architecture={arch}"),
            "-default-device".into(),
        ],
        ..Default::default()
    }
}

/// The source with its value type defined (the kernels are real-valued: complex values
/// are `NotSupported`; the dispatcher runs them on the CPU).
pub fn source_for(src: Source, vt: ValueType) -> Result<String> {
    let t = match vt {
        ValueType::Float32 => "float",
        ValueType::Float64 => "double",
        ValueType::Complex32 | ValueType::Complex64 => {
            return Err(Error::new(
                Status::NotSupported,
                format!("{} values: the GPU kernels are real-valued", vt.name()),
            ));
        }
    };
    let body = match src {
        Source::Spgemm => SPGEMM_SOURCE,
        Source::Spmm => SPMM_SOURCE,
    };
    Ok(format!("#define VALUE_T {t}\n{body}"))
}

/// PTX of `src` for `vt` and `arch` (e.g. "sm_90"), as the library compiles it; used by
/// the compile checks, which need no GPU.
#[cfg(test)]
pub fn compile_ptx_for(src: Source, vt: ValueType, arch: &str) -> Result<String> {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return no_device("the NVRTC library (libnvrtc.so.13 or .so.12) was not found".into());
    }
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(source_for(src, vt)?, compile_options(arch))
        .map_err(|e| Error::new(Status::Internal, format!("NVRTC ({arch}): {e:?}")))?;
    Ok(ptx.to_src())
}

/// NVRTC's version, part of the kernel cache's key.
fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-parameters; only called once the library was found.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    format!("{major}.{minor} ({r:?})")
}

/// Machine code (cubin) of `source` for the real architecture named in `options`: the
/// driver loads it without a second (PTX) compilation, and it is what the disk cache keeps.
fn compile_cubin(source: &str, options: &[String]) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    let fail = |what: &str, e: &dyn std::fmt::Debug| {
        Error::new(Status::Internal, format!("NVRTC {what}: {e:?}"))
    };
    let src = std::ffi::CString::new(source).map_err(|e| fail("source", &e))?;
    let prog = result::create_program(&src, None).map_err(|e| fail("create", &e))?;
    // SAFETY: `prog` is live until destroyed below; `src` outlives it; the buffer has
    // the size NVRTC reported.
    unsafe {
        let r = match result::compile_program(prog, options) {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        std::ffi::CStr::from_ptr(l.as_ptr())
                            .to_string_lossy()
                            .into_owned()
                    })
                    .unwrap_or_default();
                Err(fail("compile", &format!("{e:?}: {log}")))
            }
            Ok(()) => {
                let mut n = 0usize;
                match sys::nvrtcGetCUBINSize(prog, &mut n).result() {
                    Err(e) => Err(fail("cubin size", &e)),
                    Ok(()) => {
                        let mut buf = vec![0u8; n];
                        sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast())
                            .result()
                            .map(|_| buf)
                            .map_err(|e| fail("cubin", &e))
                    }
                }
            }
        };
        let _ = result::destroy_program(prog);
        r
    }
}

/// Lets the device's default memory pool (cudarc allocates from it, stream-ordered) keep
/// freed memory up to a quarter of the device across synchronisations: with the driver's
/// default threshold of 0 every synchronisation hands it back and the next product's
/// allocations map it again. Best effort: without memory pools nothing changes.
fn keep_freed_memory(ctx: &CudaContext) {
    let keep = ctx.total_mem().unwrap_or(0) as u64 / 4;
    let mut pool: cudarc::driver::sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain driver calls on a valid device ordinal; the attribute takes a u64.
    unsafe {
        use cudarc::driver::sys;
        if sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) == sys::CUresult::CUDA_SUCCESS
        {
            let mut v = keep;
            let _ = sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut v as *mut u64).cast(),
            );
        }
    }
}

impl Gpu {
    /// Opens device 0. Checks that the driver and NVRTC libraries exist before any call
    /// into them (cudarc panics when a library is missing).
    pub fn open() -> Result<Gpu> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return no_device(
                "the CUDA driver library (libcuda.so) was not found: no NVIDIA driver".into(),
            );
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return no_device(
                "the NVRTC library (libnvrtc.so.13 or .so.12) was not found: install the CUDA \
                 runtime compiler or add its folder to LD_LIBRARY_PATH"
                    .into(),
            );
        }
        let n = CudaContext::device_count()
            .map_err(|e| Error::new(Status::NoDevice, format!("CUDA driver: {e:?}")))?;
        if n < 1 {
            return no_device("the CUDA driver reports no device".into());
        }
        let ctx = CudaContext::new(0)
            .map_err(|e| Error::new(Status::NoDevice, format!("CUDA device 0: {e:?}")))?;
        // Dependencies between streams are made explicit (join), and every buffer lives
        // until the work using it has been synchronised.
        // SAFETY: see above; no buffer is shared between streams without a join.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a: CUdevice_attribute| drv(ctx.attribute(a), "device attribute");
        let cc = (
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        if cc.0 < 7 {
            return no_device(format!(
                "device 0 has compute capability {}.{}; libspgemm needs 7.0 or newer",
                cc.0, cc.1
            ));
        }
        let sm_count = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let smem_per_block =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
                as usize;
        keep_freed_memory(&ctx);
        let name = ctx.name().unwrap_or_else(|_| "unknown".into());
        let main = drv(ctx.new_stream(), "stream creation")?;
        let mut side = Vec::with_capacity(STREAMS);
        for _ in 0..STREAMS {
            side.push(drv(ctx.new_stream(), "stream creation")?);
        }
        Ok(Gpu {
            ctx,
            main,
            side,
            name,
            cc,
            sm_count,
            smem_per_block,
            modules: Mutex::new(HashMap::new()),
        })
    }

    pub fn describe(&self) -> String {
        format!(
            "{} (sm_{}{}, {} SMs, {} KB shared memory per block)",
            self.name,
            self.cc.0,
            self.cc.1,
            self.sm_count,
            self.smem_per_block / 1024
        )
    }

    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.cc.0, self.cc.1)
    }

    /// The module for `src` and value type `vt`, compiled on first use.
    pub fn module(&self, src: Source, vt: ValueType) -> Result<Arc<Module>> {
        let mut cache = self.modules.lock();
        if let Some(m) = cache.get(&(src, vt)) {
            return Ok(m.clone());
        }
        let source = source_for(src, vt)?;
        let opts = compile_options(&self.arch());
        let key = format!(
            "libspgemm {} | NVRTC {} | {:?} | {}",
            env!("CARGO_PKG_VERSION"),
            nvrtc_version(),
            opts.options,
            source
        );
        let dir = super::kcache::dir();
        // PTX when NVRTC cannot give machine code (a device newer than NVRTC knows): the
        // driver compiles it at load.
        let build = || {
            compile_cubin(&source, &opts.options).or_else(|_| {
                let ptx = cudarc::nvrtc::compile_ptx_with_opts(&source, opts.clone())
                    .map_err(|e| Error::new(Status::Internal, format!("NVRTC: {e:?}")))?;
                let mut text = ptx.to_src().into_bytes();
                text.push(0);
                Ok(text)
            })
        };
        let (code, origin) = super::kcache::load_or_build(dir.as_deref(), &key, build)?;
        let module = match self.ctx.load_module(Ptx::from_binary(code)) {
            Ok(m) => m,
            // A cached image the driver refuses (another driver's or device's): compile again.
            Err(_) if origin == super::kcache::Origin::Hit => {
                super::kcache::discard(dir.as_deref(), &key);
                let (code, _) = super::kcache::load_or_build(dir.as_deref(), &key, build)?;
                drv(self.ctx.load_module(Ptx::from_binary(code)), "module load")?
            }
            Err(e) => return drv(Err(e), "module load"),
        };
        let names = match src {
            Source::Spgemm => SPGEMM_KERNELS,
            Source::Spmm => SPMM_KERNELS,
        };
        let mut functions = HashMap::new();
        for &n in names {
            let f = drv(module.load_function(n), "function lookup")?;
            // Dynamic shared memory above 48 KB must be allowed per function.
            let dynamic = self.smem_per_block.saturating_sub(super::bins::STATIC_SMEM) as i32;
            drv(
                f.set_attribute(
                    cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic,
                ),
                "shared memory attribute",
            )?;
            functions.insert(n, f);
        }
        let m = Arc::new(Module {
            _module: module,
            functions,
        });
        cache.insert((src, vt), m.clone());
        Ok(m)
    }
}
