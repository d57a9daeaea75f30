//! Column-major X and Y: rows are processed in tiles of about `TILE_NNZ` entries of A; for
//! each tile, groups of 8 (then 4, 2, 1) columns are computed in one pass over the tile's
//! rows, each entry of A feeding 8 columns. A is fetched from memory once per call and
//! re-read from cache once per column group, not k times; each column of Y is written as a
//! contiguous run per tile.

use super::rows::{Sink, SparseRows};
use super::{Dense, SpmmScalar, madd, store};

/// Entries of A per tile (about 200 KB with 32-bit indices): the tile stays in L2 while the
/// column groups pass over it.
const TILE_NNZ: usize = 16384;

/// Accumulates G columns (j0..j0+G) of one row of Y.
struct Group<'a, V, const G: usize, const FMA: bool> {
    acc: [V; G],
    x: &'a [V],
    ldx: usize,
    x_rows: usize,
    j0: usize,
}

impl<V: SpmmScalar, const G: usize, const FMA: bool> Sink<V> for Group<'_, V, G, FMA> {
    #[inline(always)]
    fn add(&mut self, c: usize, v: V) {
        assert!(c < self.x_rows, "column index out of range");
        for t in 0..G {
            // SAFETY: c < x_rows <= ldx and j0 + t < k; X holds (k - 1) * ldx + x_rows
            // entries (checked in `run`).
            let xv = unsafe { *self.x.get_unchecked((self.j0 + t) * self.ldx + c) };
            self.acc[t] = madd::<V, FMA>(self.acc[t], v, xv);
        }
    }
}

#[inline(always)]
fn group<V: SpmmScalar, R: SparseRows<V>, const G: usize, const FMA: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    j0: usize,
    d: &Dense<V>,
) {
    for i in lo..hi {
        let mut g = Group::<V, G, FMA> {
            acc: [V::ZERO; G],
            x: d.x,
            ldx: d.ldx,
            x_rows: d.x_rows,
            j0,
        };
        a.for_each(i, &mut g);
        for (t, &s) in g.acc.iter().enumerate() {
            // SAFETY: i < nrows <= ldy, j0 + t < k: inside Y; row i belongs to this chunk.
            unsafe { store(d.y.at((j0 + t) * d.ldy + i), s, d.alpha, d.beta) };
        }
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
    let mut t0 = lo;
    while t0 < hi {
        // Grow the tile to about TILE_NNZ entries (at least one row).
        let limit = a.start(t0) + TILE_NNZ;
        let mut t1 = t0 + 1;
        while t1 < hi && a.start(t1 + 1) <= limit {
            t1 += 1;
        }
        let mut j0 = 0;
        while k - j0 >= 8 {
            group::<V, R, 8, FMA>(a, t0, t1, j0, d);
            j0 += 8;
        }
        if k - j0 >= 4 {
            group::<V, R, 4, FMA>(a, t0, t1, j0, d);
            j0 += 4;
        }
        if k - j0 >= 2 {
            group::<V, R, 2, FMA>(a, t0, t1, j0, d);
            j0 += 2;
        }
        if k - j0 >= 1 {
            group::<V, R, 1, FMA>(a, t0, t1, j0, d);
        }
        t0 = t1;
    }
}
