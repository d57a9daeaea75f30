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
}

/// Interior cache of a plan. The first numeric call runs the accumulator; a second call
/// on the same plan also records C's column indices (0-based u32, in output order:
/// 4 bytes per entry of C); from then on numeric calls only copy those indices and sum
/// values into a dense per-thread array (the replay kernel): no hashing, no sorting, no
/// per-row size check. Kept only while the structure is checked on every call
/// (validation on), because the replay trusts it.
#[derive(Debug, Default)]
pub struct ReuseCache {
    pub numeric_calls: usize,
    pub known_cols: Option<Vec<u32>>,
}

impl ReuseCache {
    /// Bytes the cache holds.
    pub fn bytes(&self) -> usize {
        self.known_cols.as_ref().map_or(0, |c| c.len() * 4)
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
