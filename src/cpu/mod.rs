//! CPU backend: flop-balanced row partitions over the handle's rayon pool, per-thread
//! accumulators (KKDENSE, KKMEM, KKLP) for the symbolic (bit sets) and numeric phases,
//! compression of B, the replay kernel for reused plans.

pub mod accum;
pub mod compress;
pub mod dense;
pub mod gustavson;
pub mod partition;
pub mod prefetch;
pub mod row_groups;
pub mod sort;
pub mod spmm;
pub(crate) mod stream;
pub mod symbolic;
pub mod workspace;
