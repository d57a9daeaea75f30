//! What the kernels are handed: the accumulator family and the parts of a plan the numeric
//! kernels read, in one value instead of long argument lists.

use crate::common::csr::CsrRef;
use crate::cpu::row_groups::RowGroups;
use crate::types::{Idx, Scalar};

/// The replay kernel's dense value array (and the grouped kernels' lanes) may take at most
/// this much per thread.
pub const REPLAY_MAX_DENSE_BYTES: usize = 64 << 20;

/// Which accumulator family a kernel runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccKind {
    /// KKDENSE: O(k) arrays per thread.
    Dense,
    /// KKDENSE numeric with a value per column instead of a slot
    /// ([`dense::fill_rows_by_value`]): for rows with many products per entry.
    DenseByValue,
    /// KKMEM: two-level linked-list hash map.
    Linked,
    /// KKLP: two-level linear probing.
    Probe,
}

/// The parts of a CPU plan the numeric kernels read.
#[derive(Clone, Copy)]
pub struct NumericPlan<'p> {
    pub kind: AccKind,
    /// Row chunk boundaries (flop-balanced; a chunk never splits a row group).
    pub chunks: &'p [usize],
    pub groups: Option<&'p RowGroups>,
    /// 0-based row offsets of C.
    pub row_ptr: &'p [usize],
    pub max_row_nnz: usize,
    pub sorted: bool,
    /// Index base of C's column indices.
    pub c_base: usize,
    /// Prefetch the rows of B ahead (see [`crate::cpu::prefetch`]).
    pub prefetch: bool,
    /// Unsorted rows written in place in C's arrays, no row buffer (see
    /// [`crate::cpu::dense::direct_pays`]).
    pub direct: bool,
}

/// A numeric call's product: A, B and the parts of the plan the kernels read.
pub struct Product<'p, O: Idx, I: Idx, V: Scalar> {
    pub a: &'p CsrRef<'p, O, I, V>,
    pub b: &'p CsrRef<'p, O, I, V>,
    pub plan: &'p NumericPlan<'p>,
}
