//! k = 1 (SpMV), either layout: x and y are vectors with strides (row-major: ld; column-
//! major: 1). Each row is summed in four interleaved partial sums (entries 0, 4, 8, ... in
//! the first, 1, 5, 9, ... in the second, ...; combined as (s0 + s1) + (s2 + s3)): four
//! independent multiply-add chains hide the FMA latency on long rows, and the order depends
//! only on the row, so results do not depend on the thread count.
//!
//! The inner loop is three loads and one FMA per entry: no bounds checks (the block was
//! checked by the caller) and, for unit strides (the usual case), no multiply.
//!
//! X is read with scalar loads only. LLVM's vectoriser turns the four interleaved reads of
//! x into a 4-lane gather (`vgatherqpd`), and gathers are slow on this machine (AMD EPYC,
//! AVX-512): at 2 threads, k = 1, alternating old/new binaries, minimum times in us
//! (column-major): rect_A_200kx2k 287 -> 229, elast3d_p1_22 281 -> 230, rmat_16 1163 ->
//! 1113, lap3d_7pt_64 and sa_poisson_A within noise. An 8-lane AVX-512 gather kernel with
//! a transpose-and-add reduction of 8 rows at a time measured 1.5-2x slower than the
//! scalar loads, a 4-lane one no faster than the old code.
//!
//! On the FMA paths, A's own arrays (`SparseRows::raw`, CSR as stored) are read through
//! pointers shifted by the index base (`raw_rows`): no bounds check on the row offsets and
//! no base subtraction per entry; same order, same bits as `strided`.

use super::rows::{RawCols, RawOffs, SparseRows};
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
    // SAFETY: forwarded contract.
    if FMA && unsafe { raw_rows(a, lo, hi, d) } {
        return;
    }
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
    // A volatile read is one scalar load, which LLVM cannot merge into a gather: it turns
    // four plain reads into `vgatherqpd`, measured slower here (see the module text).
    let xat = |c: usize| unsafe { std::ptr::read_volatile(x.add(if UNIT { c } else { c * sx })) };
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

/// Stored row offsets or column indices, read as usize. Checked entries are below 2^63, so
/// u64 data passed as i64 reads the same value (see `RawCols`).
trait Ix: Copy {
    fn ix(self) -> usize;
}
impl Ix for i32 {
    #[inline(always)]
    fn ix(self) -> usize {
        self as usize
    }
}
impl Ix for i64 {
    #[inline(always)]
    fn ix(self) -> usize {
        self as usize
    }
}

/// Rows `[lo, hi)` from A's own arrays when `a.raw()` has them and X and Y have unit
/// strides, returning whether it ran. Same summation order (four fused partial sums) and
/// store as `strided::<_, _, true, true>`, so the same bits.
///
/// # Safety
/// As for `rows`, on a path compiled with FMA.
#[inline(always)]
unsafe fn raw_rows<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    let unit = match d.layout {
        Layout::RowMajor => d.ldx == 1 && d.ldy == 1,
        Layout::ColMajor => true,
    };
    let Some(raw) = a.raw().filter(|_| unit) else {
        return false;
    };
    let b = raw.base;
    // Stored offsets and indices count from `base`: the pointers are shifted back by it, so
    // stored values address them directly (computed pointers, never read outside A or X).
    let vals = raw.vals.as_ptr().wrapping_sub(b);
    let x = d.x.as_ptr().wrapping_sub(b);
    // SAFETY: forwarded contract: rows [lo, hi) were checked (offsets non-decreasing within
    // [base, base + nnz], columns in [base, base + x_rows)); Y's rows [lo, hi) are ours.
    unsafe {
        let y = d.y.at(lo).sub(lo);
        macro_rules! go {
            ($o:expr, $c:expr) => {{
                let (o, c) = ($o.as_ptr(), $c.as_ptr().wrapping_sub(b));
                if d.beta == V::ZERO {
                    raw_kernel::<V, _, _, true>(o, c, vals, x, y, lo, hi, d.alpha, d.beta)
                } else {
                    raw_kernel::<V, _, _, false>(o, c, vals, x, y, lo, hi, d.alpha, d.beta)
                }
            }};
        }
        match (raw.offs, raw.cols) {
            (RawOffs::I32(o), RawCols::I32(c)) => go!(o, c),
            (RawOffs::I32(o), RawCols::I64(c)) => go!(o, c),
            (RawOffs::I64(o), RawCols::I32(c)) => go!(o, c),
            (RawOffs::I64(o), RawCols::I64(c)) => go!(o, c),
        }
    }
    true
}

/// The loop of `raw_rows` (pointers shifted by the base; `y` addresses row 0 of Y).
/// `BETA0`: beta = 0, Y not read.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn raw_kernel<V: SpmmScalar, O: Ix, C: Ix, const BETA0: bool>(
    offs: *const O,
    cols: *const C,
    vals: *const V,
    x: *const V,
    y: *mut V,
    lo: usize,
    hi: usize,
    alpha: V,
    beta: V,
) {
    // SAFETY (all reads): positions [offs[i], offs[i + 1]) of a checked row address A's
    // arrays through the shifted pointers, and their columns address X (`raw_rows`).
    unsafe {
        let xat = |p: usize| std::ptr::read_volatile(x.wrapping_add((*cols.wrapping_add(p)).ix()));
        let val = |p: usize| *vals.wrapping_add(p);
        let mut s = (*offs.add(lo)).ix();
        for i in lo..hi {
            let e = (*offs.add(i + 1)).ix();
            let mut acc = [V::ZERO; 4];
            let mut p = s;
            while p + 4 <= e {
                for (t, acc) in acc.iter_mut().enumerate() {
                    *acc = madd::<V, true>(*acc, val(p + t), xat(p + t));
                }
                p += 4;
            }
            if p < e {
                acc[0] = madd::<V, true>(acc[0], val(p), xat(p));
                if p + 1 < e {
                    acc[1] = madd::<V, true>(acc[1], val(p + 1), xat(p + 1));
                    if p + 2 < e {
                        acc[2] = madd::<V, true>(acc[2], val(p + 2), xat(p + 2));
                    }
                }
            }
            let sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            let yi = y.add(i);
            // As `store`, with the beta test outside the loop.
            *yi = if BETA0 {
                alpha * sum
            } else {
                alpha * sum + beta * *yi
            };
            s = e;
        }
    }
}
