//! Knobs of the kernels' path choices and the counters of which paths ran, for tests and
//! benchmarks that force or observe a path. Process-wide; not a stable interface.

pub use crate::cpu::spmm::spmv::SPMV_STREAM_A_BYTES;
pub use crate::cpu::spmm::{
    PACK_MIN_K, PANEL_VECS, PathCounts, SCATTER_BYTES, STREAM_Y_BYTES, TILE_SPAN_BYTES,
    WINDOW_BYTES, WINDOW_MIN_BYTES, path_counts,
};
pub use crate::platform::isa::Isa;
