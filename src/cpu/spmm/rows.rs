//! Row access to the sparse operand of SpMM: A itself (`CsrRows`) or its transpose through a
//! cached structure and a value permutation (`TransposedRows`). Kernels are generic over
//! `SparseRows`, so op(A) = A and op(A) = A^T share one implementation.

use std::ops::Range;

use crate::csr::CsrRef;
use crate::types::{Idx, Scalar};

use super::transpose::Transpose;

/// Rows of a sparse matrix with values, 0-based.
pub trait SparseRows<V: Scalar>: Sync {
    fn nrows(&self) -> usize;
    /// 0-based position of the first entry of row `i` (`i <= nrows`).
    fn start(&self, i: usize) -> usize;
    /// Calls `sink.add(column, value)` for each entry of row `i`, in storage order (the
    /// order that fixes the summation order of every output entry).
    fn for_each<S: Sink<V>>(&self, i: usize, sink: &mut S);
    /// Column and value of the entry at 0-based position `p` (random access, for kernels
    /// that walk several rows side by side).
    fn entry(&self, p: usize) -> (usize, V);
}

/// Receiver of a row's entries. A trait with an `#[inline(always)]` method rather than a
/// closure: closures may be left out of line, and out of line they lose the caller's
/// `#[target_feature]` (a fused multiply-add then becomes a libm call).
pub trait Sink<V> {
    fn add(&mut self, col: usize, val: V);
}

/// A with its values (pattern-only matrices are rejected before this point).
pub struct CsrRows<'a, O: Idx, I: Idx, V: Scalar> {
    pub csr: CsrRef<'a, O, I, V>,
    pub vals: &'a [V],
}

impl<O: Idx, I: Idx, V: Scalar> SparseRows<V> for CsrRows<'_, O, I, V> {
    #[inline(always)]
    fn nrows(&self) -> usize {
        self.csr.nrows()
    }
    #[inline(always)]
    fn start(&self, i: usize) -> usize {
        self.csr.row_start(i)
    }
    #[inline(always)]
    fn for_each<S: Sink<V>>(&self, i: usize, sink: &mut S) {
        let r: Range<usize> = self.csr.row_range(i);
        // One bounds check per row; a decreasing offset (validation off) panics here and is
        // turned into a status by the ABI's panic boundary.
        let cols = &self.csr.col_indices()[r.clone()];
        let vals = &self.vals[r];
        let base = self.csr.base();
        for (c, &v) in cols.iter().zip(vals) {
            sink.add(c.to_usize().wrapping_sub(base), v);
        }
    }
    #[inline(always)]
    fn entry(&self, p: usize) -> (usize, V) {
        (self.csr.col(p), self.vals[p])
    }
}

/// A^T: rows of A^T are the columns of A; values are read from A through `perm`, so new
/// values of A (same structure) are picked up without redoing the transpose.
pub struct TransposedRows<'a, V: Scalar> {
    pub t: &'a Transpose,
    pub vals: &'a [V],
}

impl<V: Scalar> SparseRows<V> for TransposedRows<'_, V> {
    #[inline(always)]
    fn nrows(&self) -> usize {
        self.t.offsets.len() - 1
    }
    #[inline(always)]
    fn start(&self, i: usize) -> usize {
        self.t.offsets[i]
    }
    #[inline(always)]
    fn for_each<S: Sink<V>>(&self, i: usize, sink: &mut S) {
        let r = self.t.offsets[i]..self.t.offsets[i + 1];
        let rows = &self.t.rows[r.clone()];
        let perm = &self.t.perm[r];
        for (&c, &p) in rows.iter().zip(perm) {
            sink.add(c, self.vals[p]);
        }
    }
    #[inline(always)]
    fn entry(&self, p: usize) -> (usize, V) {
        (self.t.rows[p], self.vals[self.t.perm[p]])
    }
}
