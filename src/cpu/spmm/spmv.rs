//! k = 1 (SpMV), either layout: x and y are vectors with strides (row-major: ld; column-
//! major: 1). Each row is summed in four interleaved partial sums (entries 0, 4, 8, ... in
//! the first, 1, 5, 9, ... in the second, ...; combined as (s0 + s1) + (s2 + s3)): four
//! independent multiply-add chains hide the FMA latency on long rows, and the order depends
//! only on the row, so results do not depend on the thread count.
//!
//! The inner loop is three loads and one FMA per entry: no bounds checks (the block was
//! checked by the caller) and, for unit strides (the usual case), no multiply.

use super::rows::SparseRows;
use super::{Dense, Layout, SpmmScalar, madd, store};

/// Rows `[lo, hi)` of y.
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
    let (sx, sy) = match d.layout {
        Layout::RowMajor => (d.ldx, d.ldy),
        Layout::ColMajor => (1, 1),
    };
    // SAFETY: forwarded contract.
    unsafe {
        if sx == 1 && sy == 1 {
            strided::<V, R, FMA, true>(a, lo, hi, d, 1, 1)
        } else {
            strided::<V, R, FMA, false>(a, lo, hi, d, sx, sy)
        }
    }
}

#[inline(always)]
unsafe fn strided<V: SpmmScalar, R: SparseRows<V>, const FMA: bool, const UNIT: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
    sx: usize,
    sy: usize,
) {
    let x = d.x.as_ptr();
    // SAFETY (every read below): p lies in a checked row, so `col(p) < x_rows` and
    // x + col * sx is inside X, which holds (x_rows - 1) * sx + 1 entries (`run`).
    let xat = |c: usize| unsafe { *x.add(if UNIT { c } else { c * sx }) };
    let mut s = a.start(lo);
    for i in lo..hi {
        let e = a.start(i + 1);
        let mut acc = [V::ZERO; 4];
        let mut p = s;
        // SAFETY: s <= p < e within row i (checked).
        unsafe {
            while p + 4 <= e {
                for (t, acc) in acc.iter_mut().enumerate() {
                    *acc = madd::<V, FMA>(*acc, a.val(p + t), xat(a.col(p + t)));
                }
                p += 4;
            }
            // 0-3 left: into the first partial sums (fixed slots keep `acc` in registers).
            if p < e {
                acc[0] = madd::<V, FMA>(acc[0], a.val(p), xat(a.col(p)));
                if p + 1 < e {
                    acc[1] = madd::<V, FMA>(acc[1], a.val(p + 1), xat(a.col(p + 1)));
                    if p + 2 < e {
                        acc[2] = madd::<V, FMA>(acc[2], a.val(p + 2), xat(a.col(p + 2)));
                    }
                }
            }
        }
        let sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        // SAFETY: row i < nrows belongs to this chunk; i * sy is inside y.
        unsafe { store(d.y.at(if UNIT { i } else { i * sy }), sum, d.alpha, d.beta) };
        s = e;
    }
}
