//! What the replay kernels (`gustavson`'s dense replay, `slot_map`'s mapped one) share:
//! the digest of C's columns in the caller's array, a row's sums into the dense array and
//! the move of a sum into C.

use crate::common::csr::CsrRef;
use crate::cpu::stream;
use crate::types::{Idx, Scalar};

/// Digest of C's column indices as the caller's array holds them: a wrapping sum over
/// entries of a bijective mix of (index, global position). A changed entry always changes
/// its term, so one changed entry is always detected and several cancel only by chance
/// (2^-64); a moved entry changes two terms. One multiply per term and no carried
/// dependency but the sum; with 4-byte indices a term covers two entries (see `extend`),
/// which keeps the replay as fast as copying the columns (docs/DESIGN-NOTES.md,
/// cpu::gustavson (replay)).
#[derive(Clone, Copy)]
pub(crate) struct ColDigest {
    pub(crate) sum: u64,
    key: u64,
}

impl ColDigest {
    const STEP: u64 = 0x9E37_79B9_7F4A_7C15;
    pub(crate) fn at(position: usize) -> ColDigest {
        ColDigest {
            sum: 0,
            key: (position as u64).wrapping_mul(Self::STEP),
        }
    }
    #[inline(always)]
    fn add(&mut self, x: u64) {
        let z = (x ^ self.key).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.sum = self.sum.wrapping_add(z ^ (z >> 32));
        self.key = self.key.wrapping_add(Self::STEP);
    }
}

/// Digest of the columns of C's rows `rows` (`cols` holds exactly them; `row_ptr` as in the
/// plan), row by row (see [`ColDigest::extend`]).
pub(crate) fn rows_digest<J: Idx>(
    cols: &[J],
    row_ptr: &[usize],
    rows: std::ops::Range<usize>,
) -> u64 {
    let off0 = row_ptr[rows.start];
    let mut d = ColDigest::at(off0);
    for i in rows {
        d.extend(&cols[row_ptr[i] - off0..row_ptr[i + 1] - off0]);
    }
    d.sum
}

impl ColDigest {
    /// Adds one row's columns. With 4-byte indices two entries of the row form one 64-bit
    /// word (one multiply per two entries; an odd row ends with a single entry).
    #[inline(always)]
    pub(crate) fn extend<J: Idx>(&mut self, cols: &[J]) {
        if std::mem::size_of::<J>() == 4 {
            let mut pairs = cols.chunks_exact(2);
            for p in &mut pairs {
                let lo = p[0].to_usize() as u64 & 0xFFFF_FFFF;
                self.add(lo | ((p[1].to_usize() as u64) << 32));
            }
            if let [x] = pairs.remainder() {
                self.add(x.to_usize() as u64 & 0xFFFF_FFFF);
            }
        } else {
            for &c in cols {
                self.add(c.to_usize() as u64);
            }
        }
    }
}

/// Moves a replay sum from its slot of the dense array to C's value (a streaming store
/// with STREAM) and resets the slot to -0.0 (`neg0`).
#[inline(always)]
pub(crate) fn take<V: Scalar, const STREAM: bool>(out: &mut V, slot: &mut V, neg0: V) {
    if STREAM {
        stream::put(out, *slot);
    } else {
        *out = *slot;
    }
    *slot = neg0;
}

/// Sums row i of A*B into `dense` (B's 0-based column), in the order of A's row and B's
/// rows.
#[inline(always)]
pub(crate) fn sum_row<V: Scalar, O: Idx, I: Idx, const PF: bool>(
    dense: &mut [V],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    i: usize,
) {
    let (a_cols, a_vals) = a.row_entries(i, av);
    let bb = b.base();
    // With PF (see `crate::cpu::prefetch`): a compile-time choice, because a run-time
    // flag in this loop slowed the replay (docs/DESIGN-NOTES.md, cpu::gustavson (replay)).
    let p0 = if PF { a.row_start(i) } else { 0 };
    for (t, (&j, &aij)) in a_cols.iter().zip(a_vals).enumerate() {
        if PF {
            crate::cpu::prefetch::ahead(a, b, Some(bv), p0 + t);
        }
        let (b_cols, b_vals) = b.row_entries(a.col_of(j), bv);
        for (&cq, &bq) in b_cols.iter().zip(b_vals) {
            dense[cq.to_usize().wrapping_sub(bb)] += aij * bq;
        }
    }
}
