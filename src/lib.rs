//! libspgemm: sparse matrix-matrix products (SpGEMM, SpMM) with a C ABI.
//!
//! The map of the code is `docs/ARCHITECTURE.md`: the layers, top to bottom, and what each
//! may import (a check in `make check` enforces it):
//! - [`ffi`]: the only `extern "C"` code (null checks, raw pointers to borrowed views,
//!   panic boundary, status codes, last-error text); calls only the typed API;
//! - [`api`]: the typed API (handle, plan, products, SpMM), re-exported at the crate root;
//! - `exec`: the dispatcher, the one place that picks a backend;
//! - backends, peers: `cpu` (kernels, accumulators, selector), `cuda` (GPU) and `dist`
//!   (distributed products over MPI, feature `mpi`);
//! - `common`: what the backends share (CSR views, checks, options, slices);
//! - `platform`: hwloc topology, workers, NUMA/HBM memory, allocation, pools;
//! - [`error`], [`types`]: status codes and element types, used everywhere.

pub mod api;
pub(crate) mod common;
pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod dist;
pub mod error;
pub(crate) mod exec;
pub mod ffi;
pub(crate) mod panics;
pub(crate) mod platform;
pub mod types;

pub use api::*;

// The in-crate tests share helpers with the public-API tests, which name the crate.
#[cfg(test)]
extern crate self as spgemm;
#[cfg(test)]
mod unit_tests;
pub use error::{Error, Result, Status};
