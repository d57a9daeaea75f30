//! Column-major X and Y: the caller hands over row tiles of about `TILE_NNZ` entries of A
//! (they stay in L2); for each tile, groups of 8 (then 4, 2, 1) columns are computed in one
//! pass over the tile's rows, each entry of A feeding the group's columns. A is fetched from
//! memory once per call and re-read from cache once per column group, not k times; each
//! column of Y is written as a contiguous run per tile.
//!
//! Per entry and column the inner loop is one multiply-add with its X operand loaded from
//! the column's own pointer (`xcol[t] + c`): no bounds checks (the tile was checked) and no
//! index arithmetic beyond the entry's column. The G accumulators of a row are independent
//! chains; each is summed in storage order.

use super::rows::SparseRows;
use super::{Dense, SpmmScalar, madd, store};

/// Columns j0..j0+G of rows `[lo, hi)`.
///
/// # Safety
/// As for `rows`, and `j0 + G <= k`.
#[inline(always)]
unsafe fn group<V: SpmmScalar, R: SparseRows<V>, const G: usize, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    j0: usize,
    d: &Dense<V>,
) {
    // Column t of the group starts at (j0 + t) * ldx: inside X since j0 + t < k.
    let xcol: [*const V; G] = std::array::from_fn(|t| d.x.as_ptr().wrapping_add((j0 + t) * d.ldx));
    let mut s = a.start(lo);
    for i in lo..hi {
        let e = a.start(i + 1);
        let mut acc = [V::ZERO; G];
        for p in s..e {
            // SAFETY: p is in checked row i, so c < x_rows <= ldx and column j0 + t of X
            // holds x_rows entries from xcol[t] (X's length is (k - 1) * ldx + x_rows).
            unsafe {
                let (c, v) = (a.col(p), a.val(p));
                for t in 0..G {
                    acc[t] = madd::<V, FMA>(acc[t], v, *xcol[t].add(c));
                }
            }
        }
        for (t, &sum) in acc.iter().enumerate() {
            // SAFETY: i < nrows <= ldy, j0 + t < k: inside Y; row i belongs to this chunk.
            unsafe { store(d.y.at((j0 + t) * d.ldy + i), sum, d.alpha, d.beta) };
        }
        s = e;
    }
}

/// Rows `[lo, hi)` of Y (one tile).
///
/// # Safety
/// Rows `[lo, hi)` passed `check_rows` against `d.x_rows` (or A was validated in full), X
/// and Y hold the shapes of `d` (checked in `run`), and the rows belong to the caller.
#[inline(always)]
pub(crate) unsafe fn rows<V: SpmmScalar, R: SparseRows<V>, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    // SAFETY: forwarded contract, all k columns.
    unsafe { cols::<V, R, FMA>(a, lo, hi, 0, d.k, d) }
}

/// Rows `[lo, hi)`, columns `j0..j0 + w` of Y.
///
/// # Safety
/// As for `rows`, and `j0 + w <= k`.
#[inline(always)]
pub(crate) unsafe fn cols<V: SpmmScalar, R: SparseRows<V>, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    j0: usize,
    w: usize,
    d: &Dense<V>,
) {
    let end = j0 + w;
    let mut j0 = j0;
    // SAFETY: forwarded contract; every group ends at or before column end <= k.
    unsafe {
        while end - j0 >= 8 {
            group::<V, R, 8, FMA>(a, lo, hi, j0, d);
            j0 += 8;
        }
        if end - j0 >= 4 {
            group::<V, R, 4, FMA>(a, lo, hi, j0, d);
            j0 += 4;
        }
        if end - j0 >= 2 {
            group::<V, R, 2, FMA>(a, lo, hi, j0, d);
            j0 += 2;
        }
        if end - j0 >= 1 {
            group::<V, R, 1, FMA>(a, lo, hi, j0, d);
        }
    }
}
