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

use crate::common::csr::CsrRef;
use crate::types::{Idx, Scalar};

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

/// Products per row of A from which an unsorted record (of a compressed count) pays: with
/// fewer, C's rows are short (A*P of the AMG products: ~33 products for ~8 columns per row)
/// and writing the record in the symbolic phase cost as much as the first numeric call
/// saved (docs/DESIGN-NOTES.md, cpu::record; sorted records: [`MIN_PRODUCTS_PER_ROW_SORTED`]).
pub const MIN_PRODUCTS_PER_ROW: f64 = 64.0;

/// [`MIN_PRODUCTS_PER_ROW`] for a sorted record, which also orders each row (the words of
/// a compressed count sorted and expanded, or the columns of a plain one): below this,
/// the first numeric call's discovery and ordering cost less than writing and ordering the
/// record (the level-0 R*A, R*(AP), (RA)*P and A1*P1 of the anisotropic hierarchies,
/// 134-197 products per row: symbolic + first numeric 0.81-1.07x, geomean 0.94x, without
/// it); from about 240 (sa_poisson R*(AP), the coarse levels, elasticity) the record still
/// saves 5-25% (docs/DESIGN-NOTES.md, cpu::record).
pub const MIN_PRODUCTS_PER_ROW_SORTED: f64 = 224.0;

/// Products per entry of C assumed for a first, free prediction of the record's size from
/// the multiplications (the corpus' AMG products have 4-60; products with fewer, the
/// squares of graphs, have C many times their inputs and no room for a record anyway).
/// A prediction over the budget is checked on a sample of rows ([`sampled_entries`]).
pub const PRODUCTS_PER_ENTRY: f64 = 4.0;

/// Rows of A [`sampled_entries`] reads at most (evenly spaced), and products of them.
pub const SIZE_SAMPLE: (usize, usize) = (256, 1 << 14);

/// Whether a product of `flops` multiplications (an estimate) over `m` rows gets a record
/// of at most `budget` bytes (`sorted`: a sorted record): rows with enough products
/// ([`MIN_PRODUCTS_PER_ROW`], [`MIN_PRODUCTS_PER_ROW_SORTED`]), and a predicted size within the
/// budget (a record that outgrows it is dropped part-way, its writing wasted): first
/// `flops / PRODUCTS_PER_ENTRY` entries of C, and where that is over the budget,
/// `entries()` (an estimate from a sample, [`sampled_entries`]; `None`: no record). With
/// `structure` (the caller reads C's columns right after the symbolic phase, which the
/// record then hands out instead of a second pass over the product) always: the pass it
/// saves costs more than the writing, and the budget still ends a record that outgrows it.
pub fn pays(
    flops: f64,
    m: usize,
    budget: usize,
    (structure, sorted): (bool, bool),
    entries: impl FnOnce() -> Option<f64>,
) -> bool {
    let fits = |c: f64| c * 4.0 <= budget as f64;
    let per_row = if sorted {
        MIN_PRODUCTS_PER_ROW_SORTED
    } else {
        MIN_PRODUCTS_PER_ROW
    };
    structure
        || (flops >= per_row * m as f64
            && (fits(flops / PRODUCTS_PER_ENTRY) || entries().is_some_and(fits)))
}

/// Entries of C = A*B estimated from up to [`SIZE_SAMPLE`] evenly spaced rows of A: `flops`
/// times the share of their products that are distinct columns of their row of C (a row
/// cut at the product limit counts its first products, which overlap less: the estimate
/// errs high). `None` when the sampled rows have no products or the sample's 128 KiB cannot
/// be allocated. Offsets or columns outside the arrays (validation off) end a row early;
/// they never read past A or B.
pub fn sampled_entries<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    flops: f64,
) -> Option<f64> {
    let (rows, limit) = SIZE_SAMPLE;
    let m = a.nrows();
    let n = rows.min(m);
    let (a_cols, b_cols) = (a.col_indices(), b.col_indices());
    let range = |x: &CsrRef<'_, O, I, V>, i: usize, len: usize| {
        let lo = x.row_start(i).min(len);
        lo..x.row_start(i + 1).clamp(lo, len)
    };
    // Reserved up front (no record when it cannot be): the pushes below stop at `limit`.
    let mut cols: Vec<usize> = Vec::new();
    cols.try_reserve_exact(limit).ok()?;
    let (mut products, mut distinct) = (0usize, 0usize);
    for s in 0..n {
        let i = s * m / n;
        let start = cols.len();
        'row: for p in range(a, i, a_cols.len()) {
            let j = a.col_of(a_cols[p]);
            if j >= b.nrows() {
                break;
            }
            for q in range(b, j, b_cols.len()) {
                if cols.len() == limit {
                    break 'row;
                }
                cols.push(b.col_of(b_cols[q]));
            }
        }
        let row = &mut cols[start..];
        row.sort_unstable();
        products += row.len();
        distinct += row.len() - row.windows(2).filter(|w| w[0] == w[1]).count();
        if cols.len() == limit {
            break;
        }
    }
    (products > 0).then(|| flops * distinct as f64 / products as f64)
}

/// Bytes a record may take: half the bytes of A and B (structure and values). C of the
/// products a record helps most (AMG's, short rows) is about the size of the inputs, so
/// the record stays a small share of the call's peak memory; where C is many times the
/// inputs (low compression: graphs) the record would be most of what C adds and it is
/// not kept (docs/DESIGN-NOTES.md, cpu::record).
pub fn budget_bytes(a_bytes: usize, b_bytes: usize) -> usize {
    a_bytes.saturating_add(b_bytes) / 2
}

/// [`budget_bytes`] for an unsorted record, which saves only the discovery of C's columns,
/// not their ordering: at most a tenth of A, B and C together, so that it alone cannot lift
/// the call's peak memory by more than issue 25 allows against MKL (1.1x; MKL's peak holds
/// A, B and C too). With `entry` bytes per entry of C (column and value) and 4 per recorded
/// column, 4 n <= (a + b + entry n) / 10 up to n = (a + b) / (40 - entry) entries
/// (docs/DESIGN-NOTES.md, cpu::record).
pub fn unsorted_budget_bytes(a_bytes: usize, b_bytes: usize, entry: usize) -> usize {
    let ab = a_bytes.saturating_add(b_bytes);
    let entries = ab / 40usize.saturating_sub(entry).max(1);
    entries
        .saturating_mul(4)
        .min(budget_bytes(a_bytes, b_bytes))
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

    /// CSR of `rows` (0-based columns) with index base `base`.
    fn csr(rows: &[Vec<usize>], base: usize) -> (Vec<i64>, Vec<i64>) {
        let mut ptr = vec![base as i64];
        let mut cols = vec![];
        for r in rows {
            cols.extend(r.iter().map(|&c| (c + base) as i64));
            ptr.push((cols.len() + base) as i64);
        }
        (ptr, cols)
    }

    #[test]
    fn sampled_entries_of_c() {
        // Exact where every row is sampled: A = I (C = B) over B's rows of 0..3 columns,
        // one with a duplicate (one entry of C, two products); A of two equal entries per
        // row (each product twice: half distinct).
        let n = 200;
        let mut b_rows: Vec<Vec<usize>> = (0..n)
            .map(|j| (0..j % 4).map(|d| (j + 7 * d) % n).collect())
            .collect();
        b_rows[5] = vec![3, 3];
        for base in [0, 1] {
            let (bp, bc) = csr(&b_rows, base);
            let b = CsrRef::<i64, i64, f64>::new(n, n, base, &bp, &bc, None).unwrap();
            let eye: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
            let (ap, ac) = csr(&eye, base);
            let a = CsrRef::<i64, i64, f64>::new(n, n, base, &ap, &ac, None).unwrap();
            let flops = b.nnz() as f64;
            let distinct: usize = b_rows
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r.sort();
                    r.dedup();
                    r.len()
                })
                .sum();
            let got = sampled_entries(&a, &b, flops).unwrap();
            assert!((got - distinct as f64).abs() < 1e-9, "{got} vs {distinct}");
            let twice: Vec<Vec<usize>> = (0..n).map(|i| vec![i, i]).collect();
            let (ap, ac) = csr(&twice, base);
            let a = CsrRef::<i64, i64, f64>::new(n, n, base, &ap, &ac, None).unwrap();
            let got = sampled_entries(&a, &b, 2.0 * flops).unwrap();
            assert!((got - distinct as f64).abs() < 1e-9, "{got} vs {distinct}");
        }
        // No products in the sampled rows: no estimate.
        let (bp, bc) = csr(&vec![vec![]; 4], 0);
        let b = CsrRef::<i64, i64, f64>::new(4, 4, 0, &bp, &bc, None).unwrap();
        let (ap, ac) = csr(&[vec![0, 1], vec![], vec![3], vec![2]], 0);
        let a = CsrRef::<i64, i64, f64>::new(4, 4, 0, &ap, &ac, None).unwrap();
        assert_eq!(sampled_entries(&a, &b, 0.0), None);
    }

    #[test]
    fn sampled_entries_stop_at_the_product_limit_and_bad_offsets() {
        // One row of A over every row of B (each 64 columns, all the same): the sample
        // stops at SIZE_SAMPLE.1 products, 64 distinct among them.
        let (n, w) = (1024, 64);
        let b_rows: Vec<Vec<usize>> = (0..n).map(|_| (0..w).collect()).collect();
        let (bp, bc) = csr(&b_rows, 0);
        let b = CsrRef::<i64, i64, f64>::new(n, w, 0, &bp, &bc, None).unwrap();
        let (ap, ac) = csr(&[(0..n).collect()], 0);
        let a = CsrRef::<i64, i64, f64>::new(1, n, 0, &ap, &ac, None).unwrap();
        let flops = (n * w) as f64;
        let got = sampled_entries(&a, &b, flops).unwrap();
        assert_eq!(got, flops * w as f64 / SIZE_SAMPLE.1 as f64);
        // Offsets past the arrays (as unvalidated input may hold) and a column past B's
        // rows end the row early; nothing is read outside A or B.
        let ap = [0i64, 9, 3];
        let ac = [0i64, 1, 5000];
        let a = CsrRef::<i64, i64, f64>::new(2, n, 0, &ap, &ac, None).unwrap();
        let got = sampled_entries(&a, &b, 1.0).unwrap();
        assert_eq!(got, 64.0 / 128.0);
    }

    #[test]
    fn unsorted_budget_keeps_the_record_within_a_tenth_of_a_b_and_c() {
        for (ab, entry) in [
            (28_000_000, 12),
            (1_000_003, 12),
            (5_000, 24),
            (7, 8),
            (0, 12),
        ] {
            let bytes = unsorted_budget_bytes(ab / 3, ab - ab / 3, entry);
            let n = bytes / 4;
            assert!(40 * n <= ab + entry * n, "{ab} {entry}: {bytes}");
            // The largest such record, give or take one entry.
            assert!(40 * (n + 2) > ab + entry * (n + 2), "{ab} {entry}: {bytes}");
            assert!(bytes <= budget_bytes(ab / 3, ab - ab / 3));
        }
    }

    #[test]
    fn pays_checks_the_sample_only_over_the_first_prediction() {
        let never = || -> Option<f64> { panic!("no sample needed") };
        // Too few products per row, or the structure wanted: the sample is not taken.
        assert!(!pays(63.0 * 10.0, 10, 1 << 30, (false, false), never));
        assert!(pays(1.0, 10, 0, (true, false), never));
        assert!(pays(1.0, 10, 0, (true, true), never));
        // 64 products per row, first prediction 160 entries (640 bytes): within 640 bytes.
        assert!(pays(640.0, 10, 640, (false, false), never));
        // Over it: the sample decides.
        assert!(pays(640.0, 10, 639, (false, false), || Some(100.0)));
        assert!(!pays(640.0, 10, 399, (false, false), || Some(100.0)));
        assert!(!pays(640.0, 10, 639, (false, false), || None));
        // A sorted record wants more products per row.
        assert!(!pays(223.0 * 10.0, 10, 1 << 30, (false, true), never));
        assert!(pays(224.0 * 10.0, 10, 1 << 30, (false, true), never));
    }
}
