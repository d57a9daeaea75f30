//! Tests that reach inside the library: kernels on every instruction-set path, the
//! selector, placement and binding on XML topologies, the GPU backend's kernels and
//! compile checks. They use the same helpers as the public-API tests (`tests/common`),
//! which name the crate `spgemm` (see the alias in `lib.rs`).

#[path = "../../tests/common/mod.rs"]
mod common;

#[cfg(feature = "cuda")]
mod cuda_compile;
#[cfg(feature = "cuda")]
mod cuda_gpu;
mod exec_fixed;
mod lazy_workers;
mod spmm_cpu;
mod spmv_kernel;
mod topo;
mod topo_chunks;
