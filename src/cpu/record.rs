//! C's columns as the dense symbolic phase found them, kept in the plan so that the first
//! numeric call is a replay (values summed into a dense array and gathered in the recorded
//! order) instead of a second discovery of every row's columns.
//!
//! The symbolic kernel already holds each row's column set (the marks, or the bit map of
//! a compressed B): writing it out costs a store per entry of C, where the discovery in
//! the numeric phase costs a mark test, a slot and (sorted output) an ordering per entry.
//! The record takes 4 bytes per entry of C for the plan's life, so it is kept only where
//! the handle allows it (`Ctx::keep_columns`), and for unsorted output only from a
//! compressed count: a plain count writes it with a store per product, which costs more
//! than the unsorted discovery it saves (docs/DESIGN-NOTES.md, cpu::record).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of C's columns (0-based), as written by the symbolic chunks: piece `p` holds the
/// rows `bounds[p]..bounds[p + 1]` one after the other.
#[derive(Debug)]
pub struct ColumnRecord {
    bounds: Vec<usize>,
    pieces: Vec<Vec<u32>>,
}

impl ColumnRecord {
    /// A record of the pieces the symbolic chunks `bounds` (row boundaries, first 0)
    /// wrote. The pieces hold exactly the rows' counts in `row_ptr` (checked).
    pub fn new(bounds: Vec<usize>, mut pieces: Vec<Vec<u32>>, row_ptr: &[usize]) -> Option<Self> {
        // The pieces grew by doubling: give back the tail.
        pieces.iter_mut().for_each(|p| p.shrink_to_fit());
        let fits = pieces.len() + 1 == bounds.len()
            && bounds
                .windows(2)
                .zip(&pieces)
                .all(|(w, p)| row_ptr[w[1]] - row_ptr[w[0]] == p.len());
        debug_assert!(fits, "the recorded columns disagree with the counts");
        fits.then_some(ColumnRecord { bounds, pieces })
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.pieces.iter().map(|p| p.capacity() * 4).sum::<usize>() + self.bounds.len() * 8
    }

    /// Calls `f(i, columns of row i)` for the rows `rows`, in order.
    #[inline]
    pub fn for_rows(
        &self,
        rows: std::ops::Range<usize>,
        row_ptr: &[usize],
        mut f: impl FnMut(usize, &[u32]),
    ) {
        if rows.is_empty() {
            return;
        }
        // The piece holding rows.start: the last bound at or before it.
        let mut p = self.bounds.partition_point(|&b| b <= rows.start) - 1;
        for i in rows {
            while self.bounds[p + 1] <= i {
                p += 1;
            }
            let at = row_ptr[self.bounds[p]];
            f(i, &self.pieces[p][row_ptr[i] - at..row_ptr[i + 1] - at]);
        }
    }
}

/// Where a symbolic chunk writes its rows' columns: appended to `out`, sorted within each
/// row when `sorted`. `failed` is set (and nothing more is written) when the columns
/// would exceed what the chunks' shared `budget` (in columns) has left, or `out` could
/// not grow: the plan then goes without a record.
pub struct Recorder<'a> {
    pub out: &'a mut Vec<u32>,
    pub sorted: bool,
    pub budget: &'a AtomicUsize,
    /// Columns this chunk took from `budget` so far.
    pub granted: usize,
    pub failed: bool,
}

/// Columns a chunk takes from the shared budget at a time (one atomic operation per
/// this many columns, not per row).
const GRANT: usize = 1 << 14;

impl<'a> Recorder<'a> {
    pub fn new(out: &'a mut Vec<u32>, sorted: bool, budget: &'a AtomicUsize) -> Self {
        Recorder {
            out,
            sorted,
            budget,
            granted: 0,
            failed: false,
        }
    }
}

/// Products per row of A from which a record pays: with fewer, C's rows are short (A*P of
/// the AMG products: ~33 products for ~8 columns per row) and writing the record in the
/// symbolic phase cost as much as the first numeric call saved; with more (R*A, R*(AP),
/// (RA)*P, the coarse levels, elasticity: 150-900) it saved 3-26% of symbolic + numeric
/// (docs/DESIGN-NOTES.md, cpu::record).
pub const MIN_PRODUCTS_PER_ROW: f64 = 64.0;

/// Products per entry of C assumed when predicting the record's size from the
/// multiplications (the corpus' AMG products have 4-9; products with fewer, the squares of
/// graphs, have C many times their inputs and no room for a record anyway).
pub const PRODUCTS_PER_ENTRY: f64 = 4.0;

/// Whether a product of `flops` multiplications (an estimate) over `m` rows gets a record
/// of at most `budget` bytes: rows with enough products, and a predicted size within the
/// budget (a record that outgrows it is dropped part-way, its writing wasted). With
/// `structure` (the caller reads C's columns right after the symbolic phase, which the
/// record then hands out instead of a second pass over the product) always: the pass it
/// saves costs more than the writing, and the budget still ends a record that outgrows it.
pub fn pays(flops: f64, m: usize, budget: usize, structure: bool) -> bool {
    structure
        || (flops >= MIN_PRODUCTS_PER_ROW * m as f64
            && flops / PRODUCTS_PER_ENTRY * 4.0 <= budget as f64)
}

/// Bytes a record may take: half the bytes of A and B (structure and values). C of the
/// products a record helps most (AMG's, short rows) is about the size of the inputs, so
/// the record stays a small share of the call's peak memory; where C is many times the
/// inputs (low compression: graphs) the record would be most of what C adds and it is
/// not kept (docs/DESIGN-NOTES.md, cpu::record).
pub fn budget_bytes(a_bytes: usize, b_bytes: usize) -> usize {
    a_bytes.saturating_add(b_bytes) / 2
}

impl Recorder<'_> {
    /// Room for `n` more columns (amortised growth); false (and `failed`) when there is
    /// none.
    #[inline]
    pub fn room(&mut self, n: usize) -> bool {
        if !self.failed && (!self.grant(n) || self.out.try_reserve(n).is_err()) {
            self.failed = true;
            self.out.clear();
            self.out.shrink_to_fit();
        }
        !self.failed
    }

    /// Whether the budget covers `n` more columns (taking more of it when needed).
    #[inline]
    fn grant(&mut self, n: usize) -> bool {
        let need = self.out.len().saturating_add(n);
        if need <= self.granted {
            return true;
        }
        let more = (need - self.granted).max(GRANT);
        let taken = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(more)
            });
        if taken.is_ok() {
            self.granted += more;
        }
        taken.is_ok()
    }

    /// Appends a copy of the last `n` columns (a row of a group repeats its first row).
    #[inline]
    pub fn repeat_last(&mut self, n: usize) {
        if self.room(n) {
            let l = self.out.len();
            self.out.extend_from_within(l - n..l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_from_their_pieces() {
        // Rows 0..5 with 1, 0, 2, 1, 3 columns, in pieces 0..2, 2..2 (empty), 2..5.
        let row_ptr = [0, 1, 1, 3, 4, 7];
        let pieces = vec![vec![7], vec![], vec![1, 2, 3, 4, 5, 6]];
        let r = ColumnRecord::new(vec![0, 2, 2, 5], pieces, &row_ptr).unwrap();
        let mut seen = vec![];
        r.for_rows(1..5, &row_ptr, |i, c| seen.push((i, c.to_vec())));
        assert_eq!(
            seen,
            vec![
                (1, vec![]),
                (2, vec![1, 2]),
                (3, vec![3]),
                (4, vec![4, 5, 6])
            ]
        );
        let mut all = 0;
        r.for_rows(0..5, &row_ptr, |_, c| all += c.len());
        assert_eq!(all, 7);
        r.for_rows(3..3, &row_ptr, |_, _| panic!("no rows"));
    }
}
