//! Row access to the sparse operand of SpMM: A itself (`CsrRows`) or its transpose through a
//! cached structure and a value permutation (`TransposedRows`). Kernels are generic over
//! `SparseRows`, so op(A) = A and op(A) = A^T share one implementation.
//!
//! Kernels read entries without bounds checks, so the trait separates the proof from the
//! reads: `check_rows` proves a block of rows safe (or panics; the ABI's panic boundary
//! turns that into a status), after which `col` and `val` may be called on its entries.

use crate::common::csr::CsrRef;
use crate::types::{Idx, Scalar};

use crate::common::transpose::Transpose;

/// Rows of a sparse matrix with values, 0-based.
pub trait SparseRows<V: Scalar>: Sync {
    fn nrows(&self) -> usize;
    /// 0-based position of the first entry of row `i` (`i <= nrows`). For an invalid A
    /// (validation off) this may be anything; it is trusted only after `check_rows`.
    fn start(&self, i: usize) -> usize;
    /// Proves rows `[lo, hi)` (`lo <= hi <= nrows`) safe for `col` and `val` with an X of
    /// `x_rows` rows: row offsets non-decreasing and inside the entry arrays, every column
    /// index below `x_rows`. Panics with a message naming the problem otherwise.
    fn check_rows(&self, lo: usize, hi: usize, x_rows: usize);
    /// `Some(limit)` when positions below `limit` are safe for `col` and `val` as they are:
    /// a kernel that reads every entry of its rows anyway may then prove them safe inline
    /// instead of calling `check_rows` (a separate pass over the column indices, about a
    /// fifth of a row-major product's time on a 7-point stencil at k = 8): it checks
    /// `start(i) <= start(i + 1) <= limit` for each row before reading the row's entries,
    /// and each column index (`col`) against X's rows before using it. `None`: only
    /// `check_rows` proves rows safe.
    fn inline_limit(&self) -> Option<usize> {
        None
    }
    /// Column of the entry at 0-based position `p`.
    ///
    /// # Safety
    /// `start(i) <= p < start(i + 1)` for a row `i` that passed `check_rows` (or for a
    /// matrix that was validated in full against the same `x_rows`), or `p` below
    /// `inline_limit()`. Only in the first case is the result known to be below `x_rows`.
    unsafe fn col(&self, p: usize) -> usize;
    /// Value of the entry at position `p`.
    ///
    /// # Safety
    /// As for `col`.
    unsafe fn val(&self, p: usize) -> V;
    /// A's own arrays, for kernels that load several entries at once (the AVX-512 SpMV),
    /// or `None` (the default) where entries are not stored contiguously by row.
    fn raw(&self) -> Option<RawRows<'_, V>> {
        None
    }
}

/// Row `i` failed an inline check (`SparseRows::inline_limit`): `check_rows` on it panics
/// with the message naming the offset or column index (the ABI boundary turns that into a
/// status), as the separate pass would have.
#[cold]
#[inline(never)]
pub(crate) fn bad_row<V: Scalar, R: SparseRows<V>>(a: &R, i: usize, x_rows: usize) -> ! {
    a.check_rows(i, i + 1, x_rows);
    panic!("A: row {i} has offsets or column indices outside A's arrays or X's rows");
}

/// Row offsets or column indices as stored, by width (u64 data is passed as i64: checked
/// offsets and indices are far below 2^63, so both read the same value).
#[derive(Clone, Copy)]
pub enum RawIdx<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl<'a> RawIdx<'a> {
    /// `s` by width, or `None` for an index type other than i32, i64 and u64.
    #[inline(always)]
    fn of<T: Idx>(s: &'a [T]) -> Option<Self> {
        use std::any::TypeId;
        let id = TypeId::of::<T>();
        if id == TypeId::of::<i32>() {
            // SAFETY: T is i32 (same type, same layout).
            Some(Self::I32(unsafe {
                std::slice::from_raw_parts(s.as_ptr().cast(), s.len())
            }))
        } else if id == TypeId::of::<i64>() || id == TypeId::of::<u64>() {
            // SAFETY: T is i64, or u64 (same size and alignment; see above).
            Some(Self::I64(unsafe {
                std::slice::from_raw_parts(s.as_ptr().cast(), s.len())
            }))
        } else {
            None
        }
    }
}

/// A as stored: row i's entries are at stored positions `[offs[i], offs[i + 1])`, minus
/// `base`; entry `p` (0-based, as `SparseRows::start` counts) has column `cols[p] - base`
/// and value `vals[p]`. Positions of a row that passed `check_rows` are inside both slices
/// and their columns below `x_rows`.
#[derive(Clone, Copy)]
pub struct RawRows<'a, V> {
    pub offs: RawIdx<'a>,
    pub cols: RawIdx<'a>,
    pub vals: &'a [V],
    pub base: usize,
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
    fn check_rows(&self, lo: usize, hi: usize, x_rows: usize) {
        let base = self.csr.base();
        let nnz = self.csr.nnz().min(self.vals.len());
        let offs = &self.csr.row_offsets()[lo..=hi];
        // Branch-free folds in the stored types (they vectorise); the offending position is
        // looked for only on failure.
        let decreasing = offs.windows(2).fold(false, |bad, w| bad | (w[1] < w[0]));
        let first = offs[0].to_i128() - base as i128;
        let last = offs[hi - lo].to_i128() - base as i128;
        if decreasing || first < 0 || last > nnz as i128 {
            let i = (lo..hi)
                .find(|&i| self.start(i + 1) < self.start(i) || self.start(i + 1) > nnz)
                .unwrap_or(lo);
            panic!("A: row offsets decrease or overrun the entries at row {i}");
        }
        // 0 <= first <= last <= nnz: the block's entries are in bounds.
        let cols = &self.csr.col_indices()[first as usize..last as usize];
        let Some(&c0) = cols.first() else {
            return;
        };
        let (lo_c, hi_c) = cols.iter().fold((c0, c0), |(mn, mx), &c| {
            (if c < mn { c } else { mn }, if c > mx { c } else { mx })
        });
        if lo_c.to_i128() < base as i128 || hi_c.to_i128() - base as i128 >= x_rows as i128 {
            let p = cols
                .iter()
                .position(|c| c.to_usize().wrapping_sub(base) >= x_rows)
                .unwrap_or(0);
            panic!(
                "A: column index at position {} is outside [base, base + {x_rows})",
                first as usize + p
            );
        }
    }
    #[inline(always)]
    fn inline_limit(&self) -> Option<usize> {
        // `col` reads col_indices[p] and `val` vals[p]: both in bounds below this.
        Some(self.csr.nnz().min(self.vals.len()))
    }
    #[inline(always)]
    unsafe fn col(&self, p: usize) -> usize {
        // SAFETY: p < start(hi) <= nnz = col_indices.len() (the caller's contract).
        unsafe { self.csr.col_indices().get_unchecked(p) }
            .to_usize()
            .wrapping_sub(self.csr.base())
    }
    #[inline(always)]
    unsafe fn val(&self, p: usize) -> V {
        // SAFETY: p < nnz <= vals.len() (`check_rows` bounds offsets by both lengths).
        unsafe { *self.vals.get_unchecked(p) }
    }
    #[inline(always)]
    fn raw(&self) -> Option<RawRows<'_, V>> {
        Some(RawRows {
            offs: RawIdx::of(self.csr.row_offsets())?,
            cols: RawIdx::of(self.csr.col_indices())?,
            vals: self.vals,
            base: self.csr.base(),
        })
    }
}

/// A^T: rows of A^T are the columns of A; values are read from A through `perm`, so new
/// values of A (same structure) are picked up without redoing the transpose.
///
/// Invariant (from `Transpose::build`, whose output is never modified): offsets are
/// non-decreasing and end at `rows.len() == perm.len()`, every `rows[p] < src_rows` and
/// every `perm[p] < rows.len()`. `check_rows` therefore only compares the sizes.
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
    fn check_rows(&self, lo: usize, hi: usize, x_rows: usize) {
        assert!(
            lo <= hi && hi < self.t.offsets.len(),
            "A^T: rows out of range"
        );
        assert!(
            self.vals.len() >= self.t.nnz() && x_rows >= self.t.src_rows,
            "A^T: the transposed structure does not match A"
        );
    }
    #[inline(always)]
    unsafe fn col(&self, p: usize) -> usize {
        // SAFETY: p < nnz (caller's contract and the invariant above).
        unsafe { *self.t.rows.get_unchecked(p) }
    }
    #[inline(always)]
    unsafe fn val(&self, p: usize) -> V {
        // SAFETY: p < nnz, perm[p] < nnz <= vals.len() (invariant and `check_rows`).
        unsafe { *self.vals.get_unchecked(*self.t.perm.get_unchecked(p)) }
    }
}
