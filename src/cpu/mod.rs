//! CPU backend: flop-balanced row partitions over the handle's rayon pool, per-thread
//! accumulators, symbolic and numeric Gustavson kernels.

pub mod accum;
pub mod gustavson;
pub mod partition;
pub mod sort;
pub mod spmm;
pub mod workspace;
