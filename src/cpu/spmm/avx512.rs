//! Row-major kernels written with AVX-512 vectors (x86-64 only). The compiler's own
//! vectorisation of the generic register blocks splits an 8-wide f64 block into pieces of
//! 1, 4, 2 and 1 lanes with shuffles between them (measured with `perf annotate`), so the
//! AVX-512 path states its vectors: per entry of A one broadcast of the value and one
//! multiply-add per vector of X's row, with accumulators in registers.
//!
//! Row i, columns j0.. of Y are computed in blocks of 4, 2 and 1 vectors (8 f64 or 16 f32
//! lanes each) and a masked tail of fewer lanes; a block of one vector (and the tail) keeps
//! two accumulators (even and odd entries, added at the end) so a row is not one chain of
//! dependent FMAs. Each lane is summed in an order that depends only on the row, so
//! results do not depend on the thread count.
//!
//! No software prefetch of X's rows: the hardware prefetcher already follows a stencil's
//! sequential streams (docs/DESIGN-NOTES.md, cpu::spmm::avx512).

// The AVX-512 intrinsics are stable since Rust 1.89, above the crate's declared
// rust-version (1.85; the code base already needs 1.88 for let chains). Raising it is left
// to the lead: it turns on newer lints in other modules.
#![allow(clippy::incompatible_msrv)]

use std::arch::x86_64::*;

use super::rows::{SparseRows, bad_row};
use super::{Dense, SpmmScalar};

/// `y = alpha * acc + beta * y` on `n` lanes (`n == L`: all), not reading y when beta = 0
/// (the scalar `store`'s definition, lane by lane).
///
/// # Safety
/// AVX-512F; `y..y + n` is this thread's part of Y.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn put<V: SpmmScalar>(y: *mut V, acc: V::V, n: usize, d: &Dense<V>) {
    // SAFETY: per the contract.
    unsafe {
        let mut r = V::vmul(V::splat(d.alpha), acc);
        if d.beta != V::ZERO {
            let old = if n == V::L {
                V::load(y)
            } else {
                V::load_n(y, n)
            };
            r = V::vadd(r, V::vmul(V::splat(d.beta), old));
        }
        if n != V::L {
            V::store_n(y, r, n)
        } else if d.stream && (y as usize).is_multiple_of(64) {
            // beta = 0 (`stream` is set only then) and Y too large to stay in cache: no
            // read-for-ownership of the line. The kernel ends with `_mm_sfence`.
            V::stream(y, r)
        } else {
            V::store(y, r)
        }
    }
}

/// Column of entry `p` of row `i`; with `CHECK` (rows proven inline, see
/// `SparseRows::inline_limit`) a column outside X's rows ends the call (`bad_row`).
///
/// # Safety
/// `p` lies in row `i`, which passed `check_rows` (`!CHECK`) or whose offsets were checked
/// against `inline_limit` (`CHECK`).
#[inline(always)]
unsafe fn col_of<V: SpmmScalar, R: SparseRows<V>, const CHECK: bool>(
    a: &R,
    i: usize,
    p: usize,
    d: &Dense<V>,
) -> usize {
    // SAFETY: per the contract.
    let c = unsafe { a.col(p) };
    if CHECK && c >= d.x_rows {
        bad_row(a, i, d.x_rows);
    }
    c
}

/// NV full vectors of row i from column j0.
///
/// # Safety
/// AVX-512F; entries `[s, e)` are row i's and were checked (`check_rows`, or inline with
/// `CHECK`: `s <= e <= inline_limit`); `j0 + NV * L <= k`; X and Y hold `d`'s shapes
/// (checked in `run`); row i is this thread's.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn wide<V: SpmmScalar, R: SparseRows<V>, const NV: usize, const CHECK: bool>(
    a: &R,
    i: usize,
    s: usize,
    e: usize,
    j0: usize,
    d: &Dense<V>,
) {
    // SAFETY: col(p) < x_rows for p in [s, e) (checked before or by `col_of`), so col *
    // ldx + j0 + NV * L <= (x_rows - 1) * ldx + k, X's length; Y's row i holds k >= j0 +
    // NV * L entries.
    unsafe {
        let xb = d.x.as_ptr().add(j0);
        let mut acc = [V::zero(); NV];
        for p in s..e {
            let v = V::splat(a.val(p));
            let xr = xb.add(col_of::<V, R, CHECK>(a, i, p, d) * d.ldx);
            for (r, acc) in acc.iter_mut().enumerate() {
                *acc = V::fma(v, V::load(xr.add(r * V::L)), *acc);
            }
        }
        let y = d.y.at(i * d.ldy + j0);
        for (r, &acc) in acc.iter().enumerate() {
            put(y.add(r * V::L), acc, V::L, d);
        }
    }
}

/// `n <= L` columns of row i from column j0 in one vector, two accumulators.
///
/// # Safety
/// As for `wide`, with `j0 + n <= k`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn narrow<V: SpmmScalar, R: SparseRows<V>, const CHECK: bool>(
    a: &R,
    i: usize,
    s: usize,
    e: usize,
    j0: usize,
    n: usize,
    d: &Dense<V>,
) {
    // SAFETY: as in `wide`, for n lanes.
    unsafe {
        let xb = d.x.as_ptr().add(j0);
        let col = |p: usize| col_of::<V, R, CHECK>(a, i, p, d);
        let (mut a0, mut a1) = (V::zero(), V::zero());
        let mut p = s;
        if n == V::L {
            while p + 2 <= e {
                let x0 = V::load(xb.add(col(p) * d.ldx));
                let x1 = V::load(xb.add(col(p + 1) * d.ldx));
                a0 = V::fma(V::splat(a.val(p)), x0, a0);
                a1 = V::fma(V::splat(a.val(p + 1)), x1, a1);
                p += 2;
            }
            if p < e {
                let x0 = V::load(xb.add(col(p) * d.ldx));
                a0 = V::fma(V::splat(a.val(p)), x0, a0);
            }
        } else {
            while p + 2 <= e {
                let x0 = V::load_n(xb.add(col(p) * d.ldx), n);
                let x1 = V::load_n(xb.add(col(p + 1) * d.ldx), n);
                a0 = V::fma(V::splat(a.val(p)), x0, a0);
                a1 = V::fma(V::splat(a.val(p + 1)), x1, a1);
                p += 2;
            }
            if p < e {
                let x0 = V::load_n(xb.add(col(p) * d.ldx), n);
                a0 = V::fma(V::splat(a.val(p)), x0, a0);
            }
        }
        put(d.y.at(i * d.ldy + j0), V::vadd(a0, a1), n, d);
    }
}

/// Rows `[lo, hi)` of a row-major product with k >= 2. With `CHECK` the rows are proven
/// safe here, row by row and entry by entry (`SparseRows::inline_limit`), instead of by a
/// `check_rows` pass before the call; a bad row panics before its entries are read.
///
/// # Safety
/// AVX-512F, AVX-512VL, AVX2 and FMA available; without `CHECK`, rows `[lo, hi)` passed
/// `check_rows` against `d.x_rows` (or A was validated in full); with `CHECK`,
/// `a.inline_limit()` is `Some`; X and Y hold `d`'s shapes (checked in `run`); the rows are
/// this thread's.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(crate) unsafe fn rowmajor<V: SpmmScalar, R: SparseRows<V>, const CHECK: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    let (k, l) = (d.k, V::L);
    let limit = if CHECK {
        a.inline_limit().unwrap_or(0)
    } else {
        usize::MAX
    };
    let mut s = a.start(lo);
    for i in lo..hi {
        let e = a.start(i + 1);
        if CHECK && (e < s || e > limit) {
            bad_row(a, i, d.x_rows);
        }
        let mut j0 = 0;
        // SAFETY: forwarded contract (with CHECK: s <= e <= limit just checked, columns
        // checked by `col_of`); every block ends at or before column k.
        unsafe {
            // 8 to 15 vectors left (k = 64..120 for f64): one block of 8 vectors, so the
            // row of A and each row of X are read in one pass, not two; 16 or more take the
            // 4s, faster than two blocks of 8 (docs/DESIGN-NOTES.md, cpu::spmm::avx512).
            if (8 * l..16 * l).contains(&(k - j0)) {
                wide::<V, R, 8, CHECK>(a, i, s, e, j0, d);
                j0 += 8 * l;
            }
            while k - j0 >= 4 * l {
                wide::<V, R, 4, CHECK>(a, i, s, e, j0, d);
                j0 += 4 * l;
            }
            if k - j0 >= 2 * l {
                wide::<V, R, 2, CHECK>(a, i, s, e, j0, d);
                j0 += 2 * l;
            }
            if k - j0 >= l {
                narrow::<V, R, CHECK>(a, i, s, e, j0, l, d);
                j0 += l;
            }
            if k > j0 {
                narrow::<V, R, CHECK>(a, i, s, e, j0, k - j0, d);
            }
        }
        s = e;
    }
    if d.stream {
        // Orders the non-temporal stores of `put` before whatever signals this block done.
        _mm_sfence();
    }
}

/// Rows `[lo, hi)`, columns `j0..j0 + w` (`w <= NV * L`) of a column-major Y from a
/// packed panel `xp` (X's columns j0.. as x_rows x (NV * L), row-major; lanes past `w` hold
/// anything and are computed but not stored). One accumulator per vector: each lane sums
/// the row in storage order with FMA, as `colmajor` does, so the bits are the same.
/// With `RING`, row c of X is read from row `c & mask` of `xp`, a ring of `mask + 1` (a
/// power of two) rows that holds the rows these rows of A read (`run_window`); without,
/// from row c of a panel of all of X's rows (`mask` is then `usize::MAX`, and not applied:
/// one instruction less per entry).
///
/// # Safety
/// AVX-512F, AVX-512VL, AVX2 and FMA available; rows `[lo, hi)` passed `check_rows`
/// against `d.x_rows` (or A was validated in full) and `xp` holds NV * L entries for each
/// of `min(d.x_rows, mask + 1)` rows (asserted); Y holds `d`'s shapes and `j0 + w <= k`;
/// the rows are this thread's.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(crate) unsafe fn packed<V: SpmmScalar, R: SparseRows<V>, const NV: usize, const RING: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    xp: &[V],
    mask: usize,
    j0: usize,
    w: usize,
    d: &Dense<V>,
) {
    let mask = if RING { mask } else { usize::MAX };
    assert!(xp.len() >= d.x_rows.min(mask.saturating_add(1)) * NV * V::L);
    // Rows are computed in groups of RB into `tmp` (row-major, L1) and then written out
    // column by column, RB consecutive entries of each of Y's columns at a time: whole
    // cache lines instead of one entry per column and row.
    const RB: usize = 8;
    let stride = NV * V::L;
    let x = xp.as_ptr();
    let mut tmp = [V::ZERO; RB * 64];
    let mut s = a.start(lo);
    let mut i0 = lo;
    while i0 < hi {
        // Groups start at multiples of RB rows (the first one may be shorter), so that a
        // full group's run of each column of Y starts where an aligned vector can
        // (non-temporal stores need 64-byte alignment).
        let nr = (RB - i0 % RB).min(hi - i0);
        for q in 0..nr {
            let e = a.start(i0 + q + 1);
            // SAFETY: col(p) < x_rows and col & mask <= mask, so the NV * L entries at
            // (col & mask) * stride are inside `xp` (asserted above); tmp holds RB * 64 >=
            // RB * NV * L entries.
            unsafe {
                let mut acc = [V::zero(); NV];
                for p in s..e {
                    let v = V::splat(a.val(p));
                    let c = if RING { a.col(p) & mask } else { a.col(p) };
                    let xr = x.add(c * stride);
                    for (r, acc) in acc.iter_mut().enumerate() {
                        *acc = V::fma(v, V::load(xr.add(r * V::L)), *acc);
                    }
                }
                for (r, &acc) in acc.iter().enumerate() {
                    V::store(tmp.as_mut_ptr().add(q * stride + r * V::L), acc);
                }
            }
            s = e;
        }
        let mut t0 = 0;
        if nr == RB {
            // Full groups: 8 x 8 blocks of `tmp` transposed in registers, each column's 8
            // entries then written as one vector (`put`: the scalar `store`'s arithmetic
            // lane by lane, so the same bits). Lanes past `w` are transposed, not stored.
            let mut col = [V::ZERO; RB * 8];
            while t0 < w {
                // SAFETY: t0 + 8 <= stride (a multiple of 8), so the block lies in tmp's
                // RB rows; column j0 + t0 + t < j0 + w <= k and rows i0..i0 + 8 <= hi are
                // inside Y and this thread's.
                unsafe {
                    V::transpose8(tmp.as_ptr().add(t0), stride, col.as_mut_ptr(), RB);
                    for t in 0..RB.min(w - t0) {
                        let c = col.as_ptr().add(t * RB);
                        let y = d.y.at((j0 + t0 + t) * d.ldy + i0);
                        let v = if RB == V::L {
                            V::load(c)
                        } else {
                            V::load_n(c, RB)
                        };
                        put(y, v, RB, d);
                    }
                }
                t0 += RB;
            }
        }
        for t in t0..w {
            // SAFETY: (j0 + t) * ldy + i0 + q is inside Y for t < w, i0 + q < hi <= nrows;
            // the rows are this thread's. tmp index q * stride + t < RB * 64.
            unsafe {
                let y = d.y.at((j0 + t) * d.ldy + i0);
                for q in 0..nr {
                    super::store(
                        y.add(q),
                        *tmp.get_unchecked(q * stride + t),
                        d.alpha,
                        d.beta,
                    );
                }
            }
        }
        i0 += nr;
    }
    if d.stream {
        // As in `rowmajor`.
        _mm_sfence();
    }
}

/// Rows `[c0, c0 + rows)` of X's columns `j0..j0 + w` into `out` (rows x stride,
/// row-major): 8 x 8 blocks transposed in registers (`transpose8`), the last `w % 8`
/// columns and `rows % 8` rows entry by entry. Blocks of 32 rows: each column is read as
/// a contiguous run of 4 cache lines while the block's rows of `out` stay in L1.
///
/// # Safety
/// AVX-512F; X holds `d`'s shape, `j0 + w <= k`, `c0 + rows <= x_rows`,
/// `out.len() >= rows * stride` and `w <= stride`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(crate) unsafe fn pack_panel<V: SpmmScalar>(
    d: &Dense<V>,
    j0: usize,
    w: usize,
    c0: usize,
    rows: usize,
    stride: usize,
    out: &mut [V],
) {
    const B: usize = 32;
    debug_assert!(out.len() >= rows * stride && w <= stride);
    let o = out.as_mut_ptr();
    let x = d.x.as_ptr();
    let w8 = w & !7;
    let mut r0 = 0;
    while r0 < rows {
        let n = B.min(rows - r0);
        let n8 = n & !7;
        // SAFETY (all reads and writes below): column j0 + t < k of X holds x_rows >=
        // c0 + rows entries from (j0 + t) * ldx; out's row r < rows holds stride >= w
        // entries from r * stride.
        unsafe {
            let mut t = 0;
            while t < w8 {
                let src = x.add((j0 + t) * d.ldx + c0 + r0);
                let mut q = 0;
                while q < n8 {
                    V::transpose8(src.add(q), d.ldx, o.add((r0 + q) * stride + t), stride);
                    q += 8;
                }
                for q in n8..n {
                    for u in 0..8 {
                        *o.add((r0 + q) * stride + t + u) = *src.add(u * d.ldx + q);
                    }
                }
                t += 8;
            }
            for t in w8..w {
                let src = x.add((j0 + t) * d.ldx + c0 + r0);
                for q in 0..n {
                    *o.add((r0 + q) * stride + t) = *src.add(q);
                }
            }
        }
        r0 += n;
    }
}
