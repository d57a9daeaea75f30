//! Software prefetch of the rows of B that a row kernel will read next.
//!
//! Every kernel walks the entries of A in order and, for each entry (i, j), reads row j of
//! B. When consecutive rows of A use nearby rows of B (stencils, banded and Galerkin
//! products: the column lists of rows i and i + 1 are one shift apart), the hardware
//! prefetcher follows those few streams. When the columns of A are scattered (random
//! graphs, R-MAT, the restriction of an aggregation multigrid), each row of B starts at
//! an address nobody predicted, and the kernel waits a full cache miss for its offsets and
//! again for its entries. The kernels then prefetch, for the entry of A `DISTANCE`
//! positions ahead, the entries of its row of B, and for the entry `2 * DISTANCE` ahead
//! its row offset (the load that finds where the entries are), as the loads of a
//! two-level indirection need.
//!
//! In C models of the kernels the prefetches sped up the scattered products and only cost
//! on the stencil-like ones, and they slowed the symbolic phase where B's rows are long:
//! [`worth_it`] turns them on only where they pay (docs/DESIGN-NOTES.md, cpu::prefetch).

use crate::common::csr::CsrRef;
use crate::types::{Idx, Scalar};

/// Entries of A between the one being multiplied and the one whose row of B is fetched
/// (longer distances measured slower: docs/DESIGN-NOTES.md, cpu::prefetch).
pub(crate) const DISTANCE: usize = 4;

/// Rows of A compared per sample block, and blocks sampled (spread over A).
const SAMPLE_ROWS: usize = 64;
const SAMPLE_BLOCKS: usize = 64;

/// Two columns of A closer than this read rows of B close enough for a stream.
const NEAR_COLUMNS: usize = 16;

/// Prefetch when at least this fraction of sampled entries of A is far from the entry
/// at the same position of the previous row: the benchmark products where the prefetches
/// pay have 0.34 or more, the others 0.11 or less (docs/DESIGN-NOTES.md, cpu::prefetch).
const FAR_FRACTION: f64 = 0.25;

/// Rows of B longer than this on average are not prefetched: the wait for a row's start
/// is then shared by many products, and the hardware follows the row itself (`rmat_16`,
/// 27.7 entries per row, was slower with them; docs/DESIGN-NOTES.md, cpu::prefetch).
const MAX_MEAN_ROW: usize = 16;

/// Whether the kernels of A*B should prefetch B's rows: B (its values `value_bytes` each:
/// the symbolic phase sees the structure alone) does not fit in the private L2
/// cache (`l2` bytes), its rows are short (at most [`MAX_MEAN_ROW`] entries on average)
/// and consecutive rows of A mostly use columns far apart (sampled: entry t of row i
/// against entry t of row i - 1, for blocks of rows spread over A).
pub fn worth_it<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    value_bytes: usize,
    l2: usize,
) -> bool {
    let b_bytes =
        b.nnz() * (std::mem::size_of::<I>() + value_bytes) + b.nrows() * std::mem::size_of::<O>();
    if b_bytes <= l2 || b.nnz() > MAX_MEAN_ROW.saturating_mul(b.nrows()) {
        return false;
    }
    far_fraction(a) >= FAR_FRACTION
}

/// The fraction of sampled entries of A whose column is farther than [`NEAR_COLUMNS`]
/// from the column at the same position of the previous row (0 when nothing is sampled).
pub fn far_fraction<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> f64 {
    let m = a.nrows();
    let (mut far, mut total) = (0usize, 0usize);
    for blk in 0..SAMPLE_BLOCKS.min(m) {
        let r0 = (m * blk / SAMPLE_BLOCKS).max(1);
        for i in r0..(r0 + SAMPLE_ROWS).min(m) {
            let (prev, row) = (a.row_cols(i - 1), a.row_cols(i));
            for (t, &c) in row.iter().enumerate() {
                total += 1;
                let near = prev
                    .get(t)
                    .is_some_and(|&p| c.to_usize().abs_diff(p.to_usize()) <= NEAR_COLUMNS);
                far += !near as usize;
            }
        }
    }
    if total == 0 {
        0.0
    } else {
        far as f64 / total as f64
    }
}

/// Asks for `s[i]`'s cache line (nothing when `i` is past the end). A prefetch never
/// faults and changes nothing a program can observe but time.
#[inline(always)]
pub(crate) fn line<T>(s: &[T], i: usize) {
    if i < s.len() {
        let p = s.as_ptr().wrapping_add(i);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch hint does not access memory architecturally (no fault, no
        // read); the address lies within `s`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }
}

/// The prefetches for the kernels' entry of A at position `p` (0-based in A's arrays):
/// the row offset of the entry `2 * DISTANCE` ahead, the first entries (columns, and
/// values when `bv` is given) of the row of B of the entry `DISTANCE` ahead.
#[inline(always)]
pub(crate) fn ahead<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    bv: Option<&[V]>,
    p: usize,
) {
    let a_cols = a.col_indices();
    if let Some(&j) = a_cols.get(p + 2 * DISTANCE) {
        line(b.row_offsets(), a.col_of(j));
    }
    if let Some(&j) = a_cols.get(p + DISTANCE) {
        let j = a.col_of(j);
        if let Some(o) = b.row_offsets().get(j) {
            let s = o.to_usize().wrapping_sub(b.base());
            line(b.col_indices(), s);
            if let Some(bv) = bv {
                line(bv, s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An n x n matrix with `per_row` entries per row: a band (columns i-1, i, i+1, ...)
    /// or columns from a multiplicative hash of (i, t) (scattered), 0- or 1-based.
    fn matrix(n: usize, per_row: usize, scattered: bool, base: usize) -> (Vec<i32>, Vec<i32>) {
        let mut offs = vec![base as i32];
        let mut cols = Vec::new();
        for i in 0..n {
            let mut row: Vec<usize> = (0..per_row)
                .map(|t| {
                    if scattered {
                        ((i * per_row + t) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 7
                    } else {
                        i + t
                    }
                })
                .map(|c| c % n)
                .collect();
            row.sort_unstable();
            row.dedup();
            cols.extend(row.iter().map(|&c| (c + base) as i32));
            offs.push((cols.len() + base) as i32);
        }
        (offs, cols)
    }

    #[test]
    fn decision_follows_locality_size_and_row_length() {
        for base in [0, 1] {
            let n = 20_000;
            let (bo, bc) = matrix(n, 8, false, base);
            let band = CsrRef::<i32, i32, f64>::new(n, n, base, &bo, &bc, None).unwrap();
            let (so, sc) = matrix(n, 8, true, base);
            let scat = CsrRef::<i32, i32, f64>::new(n, n, base, &so, &sc, None).unwrap();
            assert!(far_fraction(&band) < 0.05, "{}", far_fraction(&band));
            assert!(far_fraction(&scat) > 0.9, "{}", far_fraction(&scat));
            // B of 20000 rows of 8 entries: 12 bytes each plus the offsets.
            let b_bytes = 8 * n * 12 + n * 4;
            assert!(worth_it(&scat, &band, 8, b_bytes - 1));
            assert!(!worth_it(&scat, &band, 8, b_bytes), "B fits the L2 cache");
            assert!(
                !worth_it(&band, &scat, 8, 1),
                "A's rows use neighbouring rows of B"
            );
            // Long rows of B: the row's own stream hides the wait for its start.
            let (lo, lc) = matrix(n, 40, false, base);
            let long = CsrRef::<i32, i32, f64>::new(n, n, base, &lo, &lc, None).unwrap();
            assert!(!worth_it(&scat, &long, 8, 1));
        }
        // Too few rows to compare: nothing sampled, never prefetched.
        let (o, c) = matrix(1, 3, true, 0);
        let one = CsrRef::<i32, i32, f64>::new(1, 1, 0, &o, &c, None).unwrap();
        assert_eq!(far_fraction(&one), 0.0);
    }

    #[test]
    fn ahead_stays_within_the_arrays() {
        // Every position, including the last entries whose look-ahead runs past A's end,
        // and rows of B that are empty.
        let n = 50;
        let (o, c) = matrix(n, 3, true, 1);
        let a = CsrRef::<i32, i32, f64>::new(n, n, 1, &o, &c, None).unwrap();
        let empty_offs = vec![1i32; n + 1];
        let b = CsrRef::<i32, i32, f64>::new(n, n, 1, &empty_offs, &[], None).unwrap();
        let vals = vec![1.0f64; 0];
        for p in 0..a.nnz() + 3 {
            ahead(&a, &a, None, p);
            ahead(&a, &b, Some(&vals), p);
        }
        line::<u8>(&[], 0);
    }
}
