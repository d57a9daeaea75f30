//! The result of the symbolic phase: C's structure size and row offsets, the row partition
//! and everything a later numeric call needs to run without symbolic work.

use parking_lot::Mutex;

use crate::csr::TypeSig;
use crate::handle::Algorithm;
use crate::types::IndexType;

/// How the caller wants C stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputFormat {
    pub offsets: IndexType,
    pub indices: IndexType,
    /// 0 or 1.
    pub base: usize,
}

/// What the inputs looked like at symbolic time; numeric calls must match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputShape {
    pub sig: TypeSig,
    pub a_nrows: usize,
    pub a_ncols: usize,
    pub b_ncols: usize,
    pub a_nnz: usize,
    pub b_nnz: usize,
    pub a_base: usize,
    pub b_base: usize,
}

/// Symbolic result, reusable while only the values of A and B change.
#[derive(Debug)]
pub struct Plan {
    pub shape: InputShape,
    /// Digests of A's and B's structure (taken when validation is on).
    pub digests: Option<(u64, u64)>,
    pub format: OutputFormat,
    /// 0-based row offsets of C (length m + 1). Empty for a GPU plan, which keeps them on
    /// the device (`exec::write_row_offsets` reads them from there).
    pub row_ptr: Vec<usize>,
    /// Row chunk boundaries for the numeric phase (flop-balanced).
    pub chunks: Vec<usize>,
    /// Scalar multiplications of the product (the paper's f_m).
    pub flops: u64,
    pub max_row_flops: u64,
    pub max_row_nnz: usize,
    /// Accumulator family each phase runs with.
    pub symbolic_alg: Algorithm,
    pub numeric_alg: Algorithm,
    /// Whether C's rows come out sorted (fixed when the plan is made).
    pub sorted: bool,
    /// Device structures of a plan made on the GPU (None: CPU plan).
    pub gpu: Option<Box<crate::cuda::GpuPlan>>,
    /// Whether the symbolic phase ran on a compressed B (section 3.2).
    pub compressed: bool,
    /// What numeric calls learned, for later numeric calls.
    pub reuse: Mutex<ReuseCache>,
    /// The row split when hybrid execution was asked for (None: it was not).
    pub split: Option<crate::hybrid::Split>,
    /// The CPU and GPU parts of a hybrid plan (None: not split).
    pub hybrid: Option<Box<crate::cuda::HybridPlan>>,
    /// Row groups of A (runs of rows with the same column list) the CPU kernels process
    /// together; `chunks` does not split them (None: too few; see
    /// [`crate::cpu::row_groups`]).
    pub row_groups: Option<crate::cpu::row_groups::RowGroups>,
    /// Whether the CPU kernels prefetch the rows of B ahead (A's columns are scattered
    /// and B exceeds the L2 cache; see [`crate::cpu::prefetch`]).
    pub prefetch: bool,
}

/// Interior cache of a plan. The first numeric call runs the accumulator; a second call
/// on the same plan also records a 64-bit digest of each chunk's column indices of C as
/// written to the caller's array (8 bytes per chunk of rows, a few dozen per plan). From
/// then on a numeric call trusts the columns already in the caller's array wherever their
/// digest still matches (the caller reuses its C, as a reused plan is meant for) and only
/// sums values into a dense per-thread array (the replay kernel): no hashing, no sorting,
/// no marks, no column writes. A chunk whose columns differ (a fresh or changed array) is
/// computed afresh. Kept only while the structure of A and B is checked on every call
/// (validation on), because the replay trusts it. (Session 2 kept C's columns in the
/// plan, 4 bytes per entry of C: a third of C's size, which put the peak memory 1.3-1.4x
/// above MKL's.)
#[derive(Debug, Default)]
pub struct ReuseCache {
    pub numeric_calls: usize,
    /// Digest of each chunk's columns of C (see `cpu::gustavson::chunk_digests`).
    pub col_digests: Option<Vec<u64>>,
    /// Chunks the replay kernel ran, and chunks it found changed and computed afresh
    /// (counters for tests and reports).
    pub replayed_chunks: usize,
    pub refilled_chunks: usize,
}

impl ReuseCache {
    /// Bytes the cache holds.
    pub fn bytes(&self) -> usize {
        self.col_digests.as_ref().map_or(0, |c| c.len() * 8)
    }
}

impl Plan {
    pub fn nnz(&self) -> usize {
        match (self.row_ptr.last(), &self.gpu) {
            (Some(&n), _) => n,
            (None, Some(g)) => crate::cuda::gpu_plan_nnz(g),
            (None, None) => 0,
        }
    }
    pub fn nrows(&self) -> usize {
        self.shape.a_nrows
    }
    pub fn ncols(&self) -> usize {
        self.shape.b_ncols
    }

    /// Where the plan's numeric calls run, and the hybrid split, as text (plan info).
    pub fn describe(&self) -> String {
        let backend = if self.hybrid.is_some() {
            "hybrid"
        } else if self.gpu.is_some() {
            "gpu"
        } else {
            "cpu"
        };
        let mut s = format!(
            "backend: {backend}\nrows: {}\nnnz: {}\nmultiplications: {}\n",
            self.nrows(),
            self.nnz(),
            self.flops
        );
        if let Some(g) = &self.row_groups {
            s.push_str(&g.describe());
            s.push('\n');
        }
        if self.prefetch {
            s.push_str("prefetch: rows of B (scattered columns of A)\n");
        }
        if let Some(sp) = &self.split {
            s.push_str(&sp.describe());
            s.push('\n');
        }
        s
    }

    /// Rows of C computed on the CPU and on the GPU.
    pub fn rows_by_side(&self) -> (usize, usize) {
        match (&self.split, self.gpu.is_some()) {
            (Some(sp), _) => (sp.cpu_rows(), sp.gpu_rows()),
            (None, true) => (0, self.nrows()),
            (None, false) => (self.nrows(), 0),
        }
    }
}
