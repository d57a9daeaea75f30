//! libspgemm: sparse matrix-matrix products (SpGEMM) with a C ABI.
//!
//! Layers, top to bottom (see DESIGN.md in the shared folder):
//! - [`ffi`]: the only `extern "C"` code (null checks, raw pointers to borrowed views,
//!   panic boundary, status codes, last-error text);
//! - typed API: [`handle::Handle`], [`csr::CsrRef`] / [`csr::AnyCsr`], [`plan::Plan`];
//! - [`exec`]: algorithm selection and dispatch to a backend;
//! - [`cpu`]: kernels, accumulators, partitions, per-thread workspace;
//! - [`topo`]: platform: hwloc topology, worker placement and binding, NUMA/HBM memory.
//! - [`cuda`]: GPU backend (feature `cuda`; driver and NVRTC loaded at run time);
//! - [`hybrid`]: the CPU/GPU row split of hybrid products (pure; run by `cuda`).

pub mod alloc;
pub mod cpu;
pub mod csr;
pub mod cuda;
pub mod dist;
pub mod error;
pub mod exec;
pub mod ffi;
pub mod handle;
pub mod hybrid;
pub mod isa;
pub mod output;
pub mod output_cache;
pub mod plan;
pub mod pool;
pub mod spmm;
pub mod topo;
pub mod types;

pub use error::{Error, Result, Status};
