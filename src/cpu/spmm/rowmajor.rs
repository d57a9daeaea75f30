//! Row-major X and Y: each row of Y is computed in register blocks of 32, 16, 8, 4 columns
//! and a 1-3 column remainder. A block keeps its accumulators in registers while the row's
//! entries stream by; each entry adds `a * X[col, block]`, a fixed-width chunk the compiler
//! vectorises. A's row is re-read per block from L1, A and X are each fetched from memory
//! once per call (X rows once per use in cache), and Y is written once.
//!
//! This is the generic path (baseline and AVX2 builds); the AVX-512 path uses `avx512`,
//! whose explicit vectors the compiler does not split.

use super::rows::SparseRows;
use super::{Dense, SpmmScalar, madd, store};

/// W columns of row i starting at column j0.
///
/// # Safety
/// As for `rows`, and `j0 + W <= k`.
#[inline(always)]
unsafe fn block<V: SpmmScalar, R: SparseRows<V>, const W: usize, const FMA: bool>(
    a: &R,
    i: usize,
    s: usize,
    e: usize,
    j0: usize,
    d: &Dense<V>,
) {
    let xb = d.x.as_ptr().wrapping_add(j0);
    let ldx = d.ldx;
    // SAFETY: p is in checked row i, so c = col(p) < x_rows; c * ldx + j0 + W <= (x_rows -
    // 1) * ldx + k = X's length (checked in `run`), so the W entries are inside X.
    let xrow = |p: usize| unsafe { &*xb.add(a.col(p) * ldx).cast::<[V; W]>() };
    let mut acc = [V::ZERO; W];
    for p in s..e {
        // SAFETY: p < e.
        let v = unsafe { a.val(p) };
        let xr = xrow(p);
        for t in 0..W {
            acc[t] = madd::<V, FMA>(acc[t], v, xr[t]);
        }
    }
    let base = i * d.ldy + j0;
    for (t, &sum) in acc.iter().enumerate() {
        // SAFETY: i < nrows, j0 + t < k <= ldy: inside Y; row i belongs to this chunk.
        unsafe { store(d.y.at(base + t), sum, d.alpha, d.beta) };
    }
}

/// Rows `[lo, hi)` of Y.
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
    let k = d.k;
    let mut s = a.start(lo);
    for i in lo..hi {
        let e = a.start(i + 1);
        let mut j0 = 0;
        // SAFETY: forwarded contract; every block ends at or before column k.
        unsafe {
            while k - j0 >= 32 {
                block::<V, R, 32, FMA>(a, i, s, e, j0, d);
                j0 += 32;
            }
            if k - j0 >= 16 {
                block::<V, R, 16, FMA>(a, i, s, e, j0, d);
                j0 += 16;
            }
            if k - j0 >= 8 {
                block::<V, R, 8, FMA>(a, i, s, e, j0, d);
                j0 += 8;
            }
            if k - j0 >= 4 {
                block::<V, R, 4, FMA>(a, i, s, e, j0, d);
                j0 += 4;
            }
            match k - j0 {
                3 => block::<V, R, 3, FMA>(a, i, s, e, j0, d),
                2 => block::<V, R, 2, FMA>(a, i, s, e, j0, d),
                1 => block::<V, R, 1, FMA>(a, i, s, e, j0, d),
                _ => {}
            }
        }
        s = e;
    }
}
