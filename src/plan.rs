//! The result of the symbolic phase: C's structure size and row offsets, the row partition
//! and everything a later numeric call needs to run without symbolic work.

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
    /// 0-based row offsets of C (length m + 1).
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
}

impl Plan {
    pub fn nnz(&self) -> usize {
        *self.row_ptr.last().unwrap_or(&0)
    }
    pub fn nrows(&self) -> usize {
        self.shape.a_nrows
    }
    pub fn ncols(&self) -> usize {
        self.shape.b_ncols
    }
}
