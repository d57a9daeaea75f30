//! k = 1 (SpMV), either layout: x and y are vectors with strides (row-major: ld; column-
//! major: 1). Four rows are walked side by side so four independent multiply-add chains
//! hide the latency that a single row's chain would expose; each row is still summed in
//! storage order, so results match the one-row-at-a-time kernels' definition.

use super::rows::SparseRows;
use super::{Dense, Layout, SpmmScalar, madd, store};

#[inline(always)]
fn xat<V: Copy>(x: &[V], x_rows: usize, stride: usize, c: usize) -> V {
    assert!(c < x_rows, "column index out of range");
    // SAFETY: c < x_rows and X holds (x_rows - 1) * stride + 1 entries (checked in `run`).
    unsafe { *x.get_unchecked(c * stride) }
}

/// Rows `[lo, hi)` of y.
#[inline(always)]
pub(crate) fn rows<V: SpmmScalar, R: SparseRows<V>, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    let (sx, sy) = match d.layout {
        Layout::RowMajor => (d.ldx, d.ldy),
        Layout::ColMajor => (1, 1),
    };
    let (x, x_rows) = (d.x, d.x_rows);
    let mut i = lo;
    while i + 4 <= hi {
        let s = [a.start(i), a.start(i + 1), a.start(i + 2), a.start(i + 3)];
        let e = [s[1], s[2], s[3], a.start(i + 4)];
        let len = [
            e[0].saturating_sub(s[0]),
            e[1].saturating_sub(s[1]),
            e[2].saturating_sub(s[2]),
            e[3].saturating_sub(s[3]),
        ];
        let common = len.iter().copied().min().unwrap_or(0);
        let mut acc = [V::ZERO; 4];
        for q in 0..common {
            for r in 0..4 {
                let (c, v) = a.entry(s[r] + q);
                acc[r] = madd::<V, FMA>(acc[r], v, xat(x, x_rows, sx, c));
            }
        }
        for r in 0..4 {
            for p in s[r] + common..e[r] {
                let (c, v) = a.entry(p);
                acc[r] = madd::<V, FMA>(acc[r], v, xat(x, x_rows, sx, c));
            }
            // SAFETY: row i + r < nrows belongs to this chunk; (i + r) * sy is inside y.
            unsafe { store(d.y.at((i + r) * sy), acc[r], d.alpha, d.beta) };
        }
        i += 4;
    }
    while i < hi {
        let mut acc = V::ZERO;
        for p in a.start(i)..a.start(i + 1) {
            let (c, v) = a.entry(p);
            acc = madd::<V, FMA>(acc, v, xat(x, x_rows, sx, c));
        }
        // SAFETY: as above.
        unsafe { store(d.y.at(i * sy), acc, d.alpha, d.beta) };
        i += 1;
    }
}
