//! Tests of the public API (typed Rust API, C header, Fortran module, benchmark program),
//! in one test binary: one link of the library instead of one per file.

#[path = "../common/mod.rs"]
mod common;

mod bench_smoke;
mod fortran_module;
mod header;
mod plan_without_digests;
mod spgemm_cpu;
mod spgemm_ops;
mod spgemm_small;
mod spmm_complex;
mod topo_ffi;
