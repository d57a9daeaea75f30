//! Row-major X and Y: each row of Y is computed in register blocks of 32, 16, 8, 4 columns
//! and a 1-3 column remainder. A block keeps its accumulators in registers while the row's
//! entries stream by; each entry adds `a * X[col, block]`, a fixed-width chunk the compiler
//! vectorises. A's row is re-read per block from L1, A and X are each fetched from memory
//! once per call (X rows once per use in cache), and Y is written once.

use super::rows::{Sink, SparseRows};
use super::{Dense, SpmmScalar, madd, store};

/// Accumulates W columns of one row of Y.
struct Block<'a, V, const W: usize, const FMA: bool> {
    acc: [V; W],
    x: &'a [V],
    ldx: usize,
    x_rows: usize,
    j0: usize,
}

impl<V: SpmmScalar, const W: usize, const FMA: bool> Sink<V> for Block<'_, V, W, FMA> {
    #[inline(always)]
    fn add(&mut self, c: usize, v: V) {
        // The only per-entry check: it also catches bad column indices when validation is
        // off (the panic becomes a status at the ABI).
        assert!(c < self.x_rows, "column index out of range");
        // SAFETY: c < x_rows and j0 + W <= k <= ldx, and X holds (x_rows - 1) * ldx + k
        // entries (checked in `run`), so the W entries are in bounds.
        let xr = unsafe { &*self.x.as_ptr().add(c * self.ldx + self.j0).cast::<[V; W]>() };
        for (s, &xv) in self.acc.iter_mut().zip(xr) {
            *s = madd::<V, FMA>(*s, v, xv);
        }
    }
}

#[inline(always)]
fn block<V: SpmmScalar, R: SparseRows<V>, const W: usize, const FMA: bool>(
    a: &R,
    i: usize,
    j0: usize,
    d: &Dense<V>,
) {
    let mut b = Block::<V, W, FMA> {
        acc: [V::ZERO; W],
        x: d.x,
        ldx: d.ldx,
        x_rows: d.x_rows,
        j0,
    };
    a.for_each(i, &mut b);
    let base = i * d.ldy + j0;
    for (t, &s) in b.acc.iter().enumerate() {
        // SAFETY: i < nrows, j0 + t < k <= ldy: inside Y; row i belongs to this chunk.
        unsafe { store(d.y.at(base + t), s, d.alpha, d.beta) };
    }
}

/// Rows `[lo, hi)` of Y.
#[inline(always)]
pub(crate) fn rows<V: SpmmScalar, R: SparseRows<V>, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    let k = d.k;
    for i in lo..hi {
        let mut j0 = 0;
        while k - j0 >= 32 {
            block::<V, R, 32, FMA>(a, i, j0, d);
            j0 += 32;
        }
        if k - j0 >= 16 {
            block::<V, R, 16, FMA>(a, i, j0, d);
            j0 += 16;
        }
        if k - j0 >= 8 {
            block::<V, R, 8, FMA>(a, i, j0, d);
            j0 += 8;
        }
        if k - j0 >= 4 {
            block::<V, R, 4, FMA>(a, i, j0, d);
            j0 += 4;
        }
        match k - j0 {
            3 => block::<V, R, 3, FMA>(a, i, j0, d),
            2 => block::<V, R, 2, FMA>(a, i, j0, d),
            1 => block::<V, R, 1, FMA>(a, i, j0, d),
            _ => {}
        }
    }
}
