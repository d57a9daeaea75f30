//! Symbolic-phase accumulators: they only count the distinct columns of a row of C.
//!
//! Columns travel as (word, bits) pairs: word = column / 64, bits = the columns of that
//! word (section 3.2 of the KokkosKernels paper). A row's size is the population count
//! of the union (bitwise OR) of its words. With a compressed B ([`crate::cpu::compress`])
//! one pair stands for several columns of a row of B; without it each column is its own
//! pair, which still merges neighbouring columns of C into one key.

use crate::cpu::accum::{TwoLevelChains, TwoLevelProbing};
use crate::error::Result;

/// Columns per word of a bit set.
pub const WORD_BITS: usize = 64;

/// What the symbolic kernel needs from an accumulator.
pub trait SymbolicAcc {
    /// Starts a row that inserts at most `bound` distinct words.
    fn begin_row(&mut self, bound: usize);
    /// ORs `bits` into word `w`.
    fn insert(&mut self, w: usize, bits: u64);
    /// Distinct columns of the row (popcount of the union).
    fn count(&mut self) -> usize;
}

/// KKMEM symbolic: the two-level linked-list map with bit sets as payload.
#[derive(Default)]
pub struct LinkedBits(TwoLevelChains<u64>);

impl LinkedBits {
    /// Bytes [`LinkedBits::prepare`] allocates for `max_row` distinct words.
    pub fn bytes(max_row: usize) -> u64 {
        TwoLevelChains::<u64>::bytes(max_row)
    }
    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.0.prepare(max_row)
    }
}

impl SymbolicAcc for LinkedBits {
    #[inline]
    fn begin_row(&mut self, bound: usize) {
        self.0.begin_row(bound);
    }
    #[inline(always)]
    fn insert(&mut self, w: usize, bits: u64) {
        self.0.upsert(w, bits, |x, b| *x |= b);
    }
    #[inline]
    fn count(&mut self) -> usize {
        // The bound is the row's products, read from the same arrays: never exceeded.
        debug_assert!(!self.0.overflowed());
        self.0.items().map(|(_, b)| b.count_ones() as usize).sum()
    }
}

/// KKLP symbolic: two-level linear probing with bit sets as payload.
#[derive(Default)]
pub struct ProbeBits(TwoLevelProbing<u64>);

impl ProbeBits {
    /// Bytes [`ProbeBits::prepare`] allocates for `max_row` distinct words.
    pub fn bytes(max_row: usize) -> u64 {
        TwoLevelProbing::<u64>::bytes(max_row)
    }
    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.0.prepare(max_row)
    }
}

impl SymbolicAcc for ProbeBits {
    #[inline]
    fn begin_row(&mut self, bound: usize) {
        self.0.begin_row(bound);
    }
    #[inline(always)]
    fn insert(&mut self, w: usize, bits: u64) {
        self.0.upsert(w, bits, |x, b| *x |= b);
    }
    #[inline]
    fn count(&mut self) -> usize {
        // The bound is the row's products, read from the same arrays: never exceeded.
        debug_assert!(!self.0.overflowed());
        self.0.items().map(|(_, b)| b.count_ones() as usize).sum()
    }
}
