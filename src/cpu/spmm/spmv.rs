//! k = 1 (SpMV), either layout: x and y are vectors with strides (row-major: ld; column-
//! major: 1). Each row is summed in four interleaved partial sums (entries 0, 4, 8, ... in
//! the first, 1, 5, 9, ... in the second, ...; combined as (s0 + s1) + (s2 + s3)): four
//! independent multiply-add chains hide the FMA latency on long rows, and the order depends
//! only on the row, so results do not depend on the thread count.
//!
//! The inner loop is three loads and one FMA per entry: no bounds checks (the block was
//! checked by the caller) and, for unit strides (the usual case), no multiply.
//!
//! X is read with scalar loads, except where gathers are cheap (`fast_gather`: Intel cores
//! from Sapphire Rapids on): there the AVX-512 path sums each row in eight lanes, one
//! gather of X per eight entries (`raw_gather8`; `strided` with `G8` is the same order in
//! scalars). On AMD's AVX-512 cores gathers are microcoded and measured slower, and LLVM's
//! vectoriser would turn the four interleaved reads into a 4-lane gather: hence the
//! volatile reads (docs/DESIGN-NOTES.md, cpu::spmm::spmv).
//!
//! On the FMA paths, A's own arrays (`SparseRows::raw`, CSR as stored) are read through
//! pointers shifted by the index base (`raw_rows`): no bounds check on the row offsets and
//! no base subtraction per entry; same order, same bits as `strided`. With validation off
//! that kernel also proves the rows safe as it reads them (`rows_checked`), instead of a
//! `check_rows` pass before it, and writes Y with non-temporal stores when beta = 0 and A
//! is too large for the last-level cache (`SPMV_STREAM_A_BYTES`); both measured faster. A
//! branch-free row tail, vector sums over runs of consecutive columns and a vector range
//! check per row were slower (docs/DESIGN-NOTES.md, cpu::spmm::spmv).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::rows::{RawIdx, RawRows, SparseRows, bad_row};
use super::{Dense, Layout, SpmmScalar, madd, store};
use crate::cpu::diag_runs::DiagRuns;
use crate::cpu::length_order::{LengthOrder, WINDOW};
use crate::cpu::row_groups::RowGroups;

/// Rows `[lo, hi)` of y.
///
/// # Safety
/// Rows `[lo, hi)` passed `check_rows` against `d.x_rows` (or A was validated in full), X
/// and Y hold the shapes of `d` (checked in `run`), and the rows belong to the caller.
#[inline(always)]
pub(crate) unsafe fn rows<V: SpmmScalar, R: SparseRows<V>, const FMA: bool, const G8: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    // SAFETY: forwarded contract.
    if FMA && unsafe { raw_rows::<V, R, false, G8>(a, lo, hi, d) } {
        return;
    }
    let (sx, sy) = match d.layout {
        Layout::RowMajor => (d.ldx, d.ldy),
        Layout::ColMajor => (1, 1),
    };
    // SAFETY: forwarded contract.
    unsafe {
        if sx == 1 && sy == 1 {
            strided::<V, R, FMA, true, G8>(a, lo, hi, d, 1, 1)
        } else {
            strided::<V, R, FMA, false, G8>(a, lo, hi, d, sx, sy)
        }
    }
}

#[inline(always)]
unsafe fn strided<
    V: SpmmScalar,
    R: SparseRows<V>,
    const FMA: bool,
    const UNIT: bool,
    const G8: bool,
>(
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
    if G8 {
        super::count_path(|n| n.spmv_gather += 1);
    }
    let mut s = a.start(lo);
    for i in lo..hi {
        let e = a.start(i + 1);
        if G8 {
            // The gather kernel's order (`raw_gather8`) in scalars: entry p - s goes to
            // partial sum (p - s) % 8, the tail's lanes only, then `tree8`.
            let mut acc = [V::ZERO; 8];
            let mut p = s;
            // SAFETY: s <= p < e within row i (checked).
            unsafe {
                while p + 8 <= e {
                    for (t, acc) in acc.iter_mut().enumerate() {
                        *acc = madd::<V, FMA>(*acc, a.val(p + t), xat(a.col(p + t)));
                    }
                    p += 8;
                }
                for (t, acc) in acc.iter_mut().enumerate().take(e - p) {
                    *acc = madd::<V, FMA>(*acc, a.val(p + t), xat(a.col(p + t)));
                }
            }
            // SAFETY: as below.
            unsafe {
                store(
                    d.y.at(if UNIT { i } else { i * sy }),
                    tree8(&acc),
                    d.alpha,
                    d.beta,
                )
            };
            s = e;
            continue;
        }
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

/// Eight partial sums added as `Lanes::g_sum` adds the gather kernel's lanes:
/// ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)).
#[inline(always)]
fn tree8<V: SpmmScalar>(s: &[V; 8]) -> V {
    let w = [s[0] + s[4], s[1] + s[5], s[2] + s[6], s[3] + s[7]];
    (w[0] + w[2]) + (w[1] + w[3])
}

/// Stored row offsets or column indices, read as usize. Checked entries are below 2^63, so
/// u64 data passed as i64 reads the same value (see `RawIdx`).
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

/// Rows `[lo, hi)` of a product whose A was not validated, proving them safe inline
/// (`SparseRows::inline_limit`: each row's offsets before its entries are read, each column
/// index before X is read at it) instead of a `check_rows` pass before the kernel (about 15%
/// of an SpMV's samples on 7-entry rows). Runs only on the `raw_rows` path (A's own arrays,
/// unit strides) and returns whether it ran; a bad row panics through `check_rows` with its
/// message, as the separate pass would have. Same sums, same bits.
///
/// # Safety
/// FMA available (the caller is compiled with it); X and Y hold the shapes of `d` (checked
/// in `run`); the rows belong to the caller.
#[inline(always)]
pub(crate) unsafe fn rows_checked<V: SpmmScalar, R: SparseRows<V>, const G8: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    // SAFETY: forwarded contract; CHECK proves the rows.
    unsafe { raw_rows::<V, R, true, G8>(a, lo, hi, d) }
}

/// Rows `[lo, hi)` from A's own arrays when `a.raw()` has them and X and Y have unit
/// strides (with `CHECK`, also `a.inline_limit()`), returning whether it ran. Same
/// summation order (four fused partial sums) and store as `strided::<_, _, true, true>`,
/// so the same bits.
///
/// # Safety
/// As for `rows`, on a path compiled with FMA; with `CHECK` the rows need not have been
/// checked.
#[inline(always)]
unsafe fn raw_rows<V: SpmmScalar, R: SparseRows<V>, const CHECK: bool, const G8: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    let Some((raw, chk)) = raw_setup::<V, R, CHECK>(a, d) else {
        return false;
    };
    let b = raw.base;
    // Stored offsets and indices count from `base`: the pointers are shifted back by it, so
    // stored values address them directly (computed pointers, never read outside A or X).
    let vals = raw.vals.as_ptr().wrapping_sub(b);
    let x = d.x.as_ptr().wrapping_sub(b);
    let a_bytes = raw
        .vals
        .len()
        .saturating_mul(std::mem::size_of::<V>())
        .saturating_add(match raw.cols {
            RawIdx::I32(c) => c.len().saturating_mul(4),
            RawIdx::I64(c) => c.len().saturating_mul(8),
        });
    let stream = a_bytes >= SPMV_STREAM_A_BYTES.load(Ordering::Relaxed);
    // SAFETY: forwarded contract: rows [lo, hi) were checked (offsets non-decreasing within
    // [base, base + nnz], columns in [base, base + x_rows)), or are checked inline (CHECK);
    // Y's rows [lo, hi) are ours.
    unsafe {
        let y = d.y.at(lo).sub(lo);
        // The beta and store variants of one row kernel.
        macro_rules! variants {
            ($k:ident, $o:expr, $c:expr) => {{
                if d.beta == V::ZERO && stream {
                    super::count_path(|n| n.spmv_stream += 1);
                    $k::<V, R, _, _, true, true, CHECK>(
                        a, &chk, $o, $c, vals, x, y, lo, hi, d.alpha, d.beta,
                    );
                    #[cfg(target_arch = "x86_64")]
                    // Orders the non-temporal stores before whatever signals this block done.
                    std::arch::x86_64::_mm_sfence();
                } else if d.beta == V::ZERO {
                    $k::<V, R, _, _, true, false, CHECK>(
                        a, &chk, $o, $c, vals, x, y, lo, hi, d.alpha, d.beta,
                    )
                } else {
                    $k::<V, R, _, _, false, false, CHECK>(
                        a, &chk, $o, $c, vals, x, y, lo, hi, d.alpha, d.beta,
                    )
                }
            }};
        }
        macro_rules! go {
            ($o:expr, $c:expr) => {{
                let (o, c) = ($o.as_ptr(), $c.as_ptr().wrapping_sub(b));
                #[cfg(target_arch = "x86_64")]
                if G8 {
                    // `G8` is set only on the AVX-512 path (`chunk_avx512`).
                    super::count_path(|n| n.spmv_gather += 1);
                    variants!(raw_gather8, o, c);
                    return true;
                }
                variants!(raw_kernel, o, c)
            }};
        }
        match (raw.offs, raw.cols) {
            (RawIdx::I32(o), RawIdx::I32(c)) => go!(o, c),
            (RawIdx::I32(o), RawIdx::I64(c)) => go!(o, c),
            (RawIdx::I64(o), RawIdx::I32(c)) => go!(o, c),
            (RawIdx::I64(o), RawIdx::I64(c)) => go!(o, c),
        }
    }
    true
}

/// A's arrays as stored and the bounds of their inline checks, where X and Y have unit
/// strides and, with `CHECK`, A can be checked inline (the raw kernels' conditions).
#[inline(always)]
fn raw_setup<'a, V: SpmmScalar, R: SparseRows<V>, const CHECK: bool>(
    a: &'a R,
    d: &Dense<V>,
) -> Option<(RawRows<'a, V>, Check)> {
    let unit = match d.layout {
        Layout::RowMajor => d.ldx == 1 && d.ldy == 1,
        Layout::ColMajor => true,
    };
    let raw = a.raw().filter(|_| unit)?;
    let limit = if CHECK { a.inline_limit()? } else { usize::MAX };
    let chk = Check {
        base: raw.base,
        limit,
        x_rows: d.x_rows,
    };
    Some((raw, chk))
}

/// `$body` with the constant `$b0` set to whether `$d.beta` is zero (one instantiation each).
macro_rules! on_beta {
    ($d:expr, $b0:ident => $body:expr) => {
        if $d.beta == V::ZERO {
            const $b0: bool = true;
            $body
        } else {
            const $b0: bool = false;
            $body
        }
    };
}

/// Runs `$body` with `$k`, the [`Kern`] of A's arrays as stored (`$raw`, pointers shifted
/// by the base as in `raw_kernel`; one instantiation per pair of index types) and Y from
/// row `$lo`, and the constant `$b0`: beta = 0. Inside `unsafe`, where Y's rows from
/// `$lo` are the caller's.
macro_rules! with_kern {
    ($a:expr, $d:expr, $raw:expr, $chk:expr, $lo:expr, $k:ident, $b0:ident => $body:expr) => {{
        let b = $raw.base;
        let vals = $raw.vals.as_ptr().wrapping_sub(b);
        let x = $d.x.as_ptr().wrapping_sub(b);
        let y = $d.y.at($lo).sub($lo);
        let p = (vals, x, y);
        match ($raw.offs, $raw.cols) {
            (RawIdx::I32(o), RawIdx::I32(c)) => {
                let $k = Kern::new($a, &$chk, o.as_ptr(), c.as_ptr().wrapping_sub(b), p, $d);
                on_beta!($d, $b0 => $body)
            }
            (RawIdx::I32(o), RawIdx::I64(c)) => {
                let $k = Kern::new($a, &$chk, o.as_ptr(), c.as_ptr().wrapping_sub(b), p, $d);
                on_beta!($d, $b0 => $body)
            }
            (RawIdx::I64(o), RawIdx::I32(c)) => {
                let $k = Kern::new($a, &$chk, o.as_ptr(), c.as_ptr().wrapping_sub(b), p, $d);
                on_beta!($d, $b0 => $body)
            }
            (RawIdx::I64(o), RawIdx::I64(c)) => {
                let $k = Kern::new($a, &$chk, o.as_ptr(), c.as_ptr().wrapping_sub(b), p, $d);
                on_beta!($d, $b0 => $body)
            }
        }
    }};
}

/// Rows `[lo, hi)` of y with A's row groups (PETSc's inodes): each group's column indices
/// and its entries of X are read once for all its rows (a 3-row node of an elasticity
/// matrix reads a third of the indices). Every row is summed in `raw_kernel`'s four chains
/// in its order, so the result is bitwise `raw_kernel`'s. `CHECK`: the rows were not
/// checked; each group's offsets and columns are checked as they are read (a bad one ends
/// in `bad_row`), and a group whose rows differ in length is summed row by row. Returns
/// false, having done nothing, where A's arrays are not available as stored (or, with
/// `CHECK`, not checkable inline) or X and Y are strided.
///
/// # Safety
/// As for `rows` (without `CHECK`, rows `[lo, hi)` checked), on a path compiled with FMA;
/// A's row 0 is row `first` of the grouped matrix. Sums are A's product only where the
/// groups were found on A's current structure (rows of a group with one column list).
#[inline(always)]
pub(crate) unsafe fn grouped_rows<V: SpmmScalar, R: SparseRows<V>, const CHECK: bool>(
    a: &R,
    groups: &RowGroups,
    first: usize,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    let Some((raw, chk)) = raw_setup::<V, R, CHECK>(a, d) else {
        return false;
    };
    if groups.nrows() < first + hi {
        return false;
    }
    super::count_path(|n| n.spmv_grouped += 1);
    let g = Groups {
        groups,
        first,
        lo,
        hi,
    };
    // SAFETY: forwarded contract; Y's rows [lo, hi) are ours.
    unsafe {
        with_kern!(a, d, raw, chk, lo, k, B0 => grouped_kernel::<V, R, _, _, B0, CHECK>(&g, &k))
    }
    true
}

/// Entries of A ahead of a group at which `group` prefetches A's values and columns (8 KB
/// of f64 values): without it the grouped SpMV of a 27 MB elasticity matrix ran 1.5x the
/// ungrouped kernel's time (docs/DESIGN-NOTES.md, cpu::spmm::spmv).
const GROUP_PREFETCH: usize = 1024;

/// The groups of rows `[lo, hi)` of A, A's row 0 being row `first` of the grouped matrix.
struct Groups<'a> {
    groups: &'a RowGroups,
    first: usize,
    lo: usize,
    hi: usize,
}

/// What the grouped kernel reads and writes: A's arrays through pointers shifted by the
/// base (as in `raw_kernel`), X, `y` addressing row 0 of Y, the scalars.
struct Kern<'a, V, R, O, C> {
    a: &'a R,
    chk: &'a Check,
    offs: *const O,
    cols: *const C,
    vals: *const V,
    x: *const V,
    y: *mut V,
    alpha: V,
    beta: V,
}

impl<V: SpmmScalar, R: SparseRows<V>, O: Ix, C: Ix> Kern<'_, V, R, O, C> {
    /// Rows `[lo, hi)` by `raw_kernel` (cached stores, no checks).
    ///
    /// # Safety
    /// As for `raw_kernel` without `CHECK` on those rows.
    #[inline(always)]
    unsafe fn csr<const BETA0: bool>(&self, lo: usize, hi: usize) {
        // SAFETY: forwarded contract.
        unsafe {
            raw_kernel::<V, R, O, C, BETA0, false, false>(
                self.a, self.chk, self.offs, self.cols, self.vals, self.x, self.y, lo, hi,
                self.alpha, self.beta,
            )
        }
    }
}

impl<'a, V: SpmmScalar, R, O, C> Kern<'a, V, R, O, C> {
    fn new(
        a: &'a R,
        chk: &'a Check,
        offs: *const O,
        cols: *const C,
        (vals, x, y): (*const V, *const V, *mut V),
        d: &Dense<V>,
    ) -> Self {
        Kern {
            a,
            chk,
            offs,
            cols,
            vals,
            x,
            y,
            alpha: d.alpha,
            beta: d.beta,
        }
    }
}

/// The loop of `grouped_rows`: groups of 1 to 4 rows, one instantiation per size.
///
/// # Safety
/// As for `grouped_rows`.
#[inline]
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
unsafe fn grouped_kernel<
    V: SpmmScalar,
    R: SparseRows<V>,
    O: Ix,
    C: Ix,
    const BETA0: bool,
    const CHECK: bool,
>(
    g: &Groups<'_>,
    k: &Kern<'_, V, R, O, C>,
) {
    let f = g.first;
    for r in g.groups.within(f + g.lo..f + g.hi) {
        let r0 = r.start - f;
        let end = r0 + r.len();
        // Groups hold at most `LANES` = 4 rows; a longer run would go by fours.
        for q in (r0..end).step_by(4) {
            // SAFETY: rows [q, q + len) lie in [lo, hi) (`within` clips to it).
            unsafe {
                match (end - q).min(4) {
                    4 => group::<V, R, O, C, 4, BETA0, CHECK>(q, k),
                    3 => group::<V, R, O, C, 3, BETA0, CHECK>(q, k),
                    2 => group::<V, R, O, C, 2, BETA0, CHECK>(q, k),
                    _ => group::<V, R, O, C, 1, BETA0, CHECK>(q, k),
                }
            }
        }
    }
}

/// Rows `[r0, r0 + G)` (one column list): entry q of the list read once, its product with
/// each row's value q added to that row's chain q % 4 (`raw_kernel`'s order).
///
/// # Safety
/// As for `grouped_kernel`; without `CHECK` the G rows are checked and of one length.
// `acc[r][t]`: rows by chains; the chain index is the loop's, as in `raw_kernel`.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn group<
    V: SpmmScalar,
    R: SparseRows<V>,
    O: Ix,
    C: Ix,
    const G: usize,
    const BETA0: bool,
    const CHECK: bool,
>(
    r0: usize,
    k: &Kern<'_, V, R, O, C>,
) {
    let (chk, cols, vals, x) = (k.chk, k.cols, k.vals, k.x);
    // SAFETY: per the contract, or checked here first (CHECK): every row's entries lie in
    // A's arrays and its columns in X.
    unsafe {
        let mut st = [0usize; G];
        for (r, s) in st.iter_mut().enumerate() {
            *s = (*k.offs.add(r0 + r)).ix();
        }
        let n = (*k.offs.add(r0 + 1)).ix().wrapping_sub(st[0]);
        if CHECK {
            // Offsets in [base, base + limit], non-decreasing, and one row length.
            let mut same = true;
            let mut s = st[0];
            if s.wrapping_sub(chk.base) > chk.limit {
                bad_row(k.a, r0, chk.x_rows);
            }
            for r in 0..G {
                let e = (*k.offs.add(r0 + r + 1)).ix();
                if e < s || e.wrapping_sub(chk.base) > chk.limit {
                    bad_row(k.a, r0 + r, chk.x_rows);
                }
                same &= e - s == n;
                s = e;
            }
            if G > 1 && !same {
                for r in r0..r0 + G {
                    group::<V, R, O, C, 1, BETA0, CHECK>(r, k);
                }
                return;
            }
        }
        let c0 = cols.wrapping_add(st[0]);
        let xat = |p: usize| {
            let c = (*c0.add(p)).ix();
            if CHECK && c.wrapping_sub(chk.base) >= chk.x_rows {
                bad_row(k.a, r0, chk.x_rows);
            }
            std::ptr::read_volatile(x.wrapping_add(c))
        };
        let mut acc = [[V::ZERO; 4]; G];
        let mut q = 0;
        while q + 4 <= n {
            // The group's rows are G short streams that jump at every group, which the
            // hardware prefetchers do not follow: fetch A's arrays far ahead, G lines of
            // values and one of columns per 8 entries (a hint: never faults).
            #[cfg(target_arch = "x86_64")]
            if q % 8 == 0 {
                let at = st[0] + GROUP_PREFETCH + q * G;
                for r in 0..G {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        vals.wrapping_add(at + 8 * r).cast(),
                    );
                }
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    cols.wrapping_add(at).cast(),
                );
            }
            for t in 0..4 {
                let xv = xat(q + t);
                for r in 0..G {
                    acc[r][t] = madd::<V, true>(acc[r][t], *vals.wrapping_add(st[r] + q + t), xv);
                }
            }
            q += 4;
        }
        for t in 0..n - q {
            let xv = xat(q + t);
            for r in 0..G {
                acc[r][t] = madd::<V, true>(acc[r][t], *vals.wrapping_add(st[r] + q + t), xv);
            }
        }
        for (r, a) in acc.iter().enumerate() {
            let v = k.alpha * ((a[0] + a[1]) + (a[2] + a[3]));
            let yi = k.y.add(r0 + r);
            *yi = if BETA0 { v } else { v + k.beta * *yi };
        }
    }
}

/// Rows `[lo, hi)` of y with A's diagonal runs ([`DiagRuns`]): each of its blocks of `V::L`
/// rows inside the range summed from the runs' copy of the values, lane l for row l, entry
/// j of every row in chain j % 4 in order, as `raw_kernel` sums one row (same bits); the
/// rows between blocks by `raw_kernel`. Returns false, having done nothing, where A's arrays
/// are not available as stored, X or Y are strided, the blocks are not `V::L` rows or
/// the blocks in range would read X outside its rows.
///
/// # Safety
/// As for `rows` (rows `[lo, hi)` checked), on the AVX-512 path; A's row 0 is row `first`
/// of the analysed matrix, and A has its structure and values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn diag_rows<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    dr: &DiagRuns<V>,
    first: usize,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    let Some((raw, chk)) = raw_setup::<V, R, false>(a, d) else {
        return false;
    };
    let w = V::L;
    if dr.width() != w || dr.nrows() < first + hi {
        return false;
    }
    let blocks = dr.blocks();
    let b0 = blocks.partition_point(|&r| r < first + lo);
    let b1 = blocks.partition_point(|&r| r + w <= first + hi).max(b0);
    if b0 < b1 {
        // The first and last blocks bound every X index the blocks read.
        let offs = dr.offsets();
        let dmin = offs.iter().copied().min().unwrap_or(0);
        let dmax = offs.iter().copied().max().unwrap_or(0);
        if (blocks[b0] as isize) + dmin < 0
            || (blocks[b1 - 1] + w - 1) as isize + dmax >= d.x_rows as isize
        {
            return false;
        }
    }
    super::count_path(|n| n.spmv_diag += 1);
    // SAFETY: forwarded contract; Y's rows [lo, hi) are ours; the blocks' X indices were
    // bounded above.
    unsafe {
        let rows = (first, lo, hi);
        with_kern!(a, d, raw, chk, lo, k, B0 => {
            diag_kernel::<V, R, _, _, B0>(dr, b0..b1, d.x.as_ptr(), rows, &k)
        })
    }
    true
}

/// The loop of `diag_rows`: blocks `bs` (inside rows `[lo, hi)` of A, A's row 0 being row
/// `first` of the analysed matrix), the rows between them and after the last by
/// `raw_kernel`. `xd`: X unshifted (row 0).
///
/// # Safety
/// As for `diag_rows`, after its checks.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn diag_kernel<V: SpmmScalar, R: SparseRows<V>, O: Ix, C: Ix, const BETA0: bool>(
    dr: &DiagRuns<V>,
    bs: std::ops::Range<usize>,
    xd: *const V,
    (first, lo, hi): (usize, usize, usize),
    k: &Kern<'_, V, R, O, C>,
) {
    let (w, offs, dv) = (V::L, dr.offsets(), dr.values().as_ptr());
    let nd = offs.len();
    let mut cur = lo;
    // SAFETY (all reads and writes): per the contract; block b's values are entries
    // [b * nd * w, (b + 1) * nd * w) of the copy, its rows' X indices were bounded by the
    // caller, and its rows of Y lie in [lo, hi).
    unsafe {
        let (al, be) = (V::splat(k.alpha), V::splat(k.beta));
        let csr = |lo: usize, hi: usize| k.csr::<BETA0>(lo, hi);
        for b in bs {
            let t = dr.blocks()[b];
            let r = t - first;
            if cur < r {
                csr(cur, r);
            }
            let v = dv.add(b * nd * w);
            let xb = xd.add(t);
            let term = |j: usize, acc| {
                V::fma(
                    V::load(v.add(j * w)),
                    V::load(xb.wrapping_offset(offs[j])),
                    acc,
                )
            };
            let (mut a0, mut a1, mut a2, mut a3) = (V::zero(), V::zero(), V::zero(), V::zero());
            let mut j = 0;
            while j + 4 <= nd {
                a0 = term(j, a0);
                a1 = term(j + 1, a1);
                a2 = term(j + 2, a2);
                a3 = term(j + 3, a3);
                j += 4;
            }
            if j < nd {
                a0 = term(j, a0);
                if j + 1 < nd {
                    a1 = term(j + 1, a1);
                    if j + 2 < nd {
                        a2 = term(j + 2, a2);
                    }
                }
            }
            let s = V::vmul(al, V::vadd(V::vadd(a0, a1), V::vadd(a2, a3)));
            let yp = k.y.add(r);
            V::store(
                yp,
                if BETA0 {
                    s
                } else {
                    V::vadd(s, V::vmul(be, V::load(yp)))
                },
            );
            cur = r + w;
        }
        if cur < hi {
            csr(cur, hi);
        }
    }
}

/// Rows `[lo, hi)` of y with A's rows in length order ([`LengthOrder`]): each window of
/// the order inside the range summed from the order's copy, row by row in the four chains
/// (same bits as the CSR kernel, Y's rows written in the window's order), the rows outside
/// whole windows by `raw_kernel`. Returns false, having done nothing, where A's arrays
/// are not available as stored, X or Y are strided, or a window in range reads X outside
/// its rows.
///
/// # Safety
/// As for `rows` (rows `[lo, hi)` checked), on a path compiled with FMA; A's row 0 is row
/// `first` of the analysed matrix, and A has its structure and values.
#[inline(always)]
pub(crate) unsafe fn ordered_rows<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    lo_: &LengthOrder<V>,
    first: usize,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) -> bool {
    let Some((raw, chk)) = raw_setup::<V, R, false>(a, d) else {
        return false;
    };
    let m = lo_.nrows();
    if m < first + hi {
        return false;
    }
    let w0 = (first + lo).div_ceil(WINDOW);
    let w1 = if first + hi == m {
        m.div_ceil(WINDOW)
    } else {
        (first + hi) / WINDOW
    }
    .max(w0);
    if (w0..w1).any(|w| lo_.col_end(w) > d.x_rows) {
        return false;
    }
    super::count_path(|n| n.spmv_ordered += 1);
    // SAFETY: forwarded contract; Y's rows [lo, hi) are ours; the windows' columns were
    // bounded above.
    unsafe {
        let rows = (first, lo, hi);
        with_kern!(a, d, raw, chk, lo, k, B0 => {
            ordered_kernel::<V, R, _, _, B0>(lo_, w0..w1, d.x.as_ptr(), rows, &k)
        })
    }
    true
}

/// The loop of `ordered_rows`: windows `ws` (inside rows `[lo, hi)` of A, A's row 0 being
/// row `first` of the analysed matrix), the rows before and after them by `raw_kernel`.
/// `xd`: X unshifted (row 0).
///
/// # Safety
/// As for `ordered_rows`, after its checks.
#[inline]
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
unsafe fn ordered_kernel<V: SpmmScalar, R: SparseRows<V>, O: Ix, C: Ix, const BETA0: bool>(
    lo_: &LengthOrder<V>,
    ws: std::ops::Range<usize>,
    xd: *const V,
    (first, lo, hi): (usize, usize, usize),
    k: &Kern<'_, V, R, O, C>,
) {
    let m = lo_.nrows();
    let (order, offs) = (lo_.order(), lo_.offsets());
    let (cols, vals) = (lo_.cols().as_ptr(), lo_.values().as_ptr());
    // SAFETY (all reads and writes): per the contract; a window's positions hold its rows
    // (in [lo, hi) of A), their entries lie in the copies, and their columns below X's
    // rows (checked by the caller).
    unsafe {
        let csr = |lo: usize, hi: usize| k.csr::<BETA0>(lo, hi);
        let (start, end) = ((ws.start * WINDOW).min(m), (ws.end * WINDOW).min(m));
        if start > first + lo {
            csr(lo, (start - first).min(hi));
        }
        for p in start..end {
            let r = *order.get_unchecked(p) as usize - first;
            let (s, e) = (*offs.get_unchecked(p), *offs.get_unchecked(p + 1));
            let sum = chains4(
                s,
                e,
                |q| *vals.add(q),
                |q| std::ptr::read_volatile(xd.add(*cols.add(q) as usize)),
            );
            let v = k.alpha * sum;
            let yi = k.y.add(r);
            *yi = if BETA0 { v } else { v + k.beta * *yi };
        }
        if end.max(first + lo) < first + hi {
            csr(end.max(first + lo) - first, hi);
        }
    }
}

/// Bytes of A's values and column indices from which an SpMV with beta = 0 writes Y with
/// non-temporal stores: A then does not stay in the last-level cache (32 MiB here) between
/// products, the product streams from memory, and a normal store of Y first reads the line
/// it overwrites (one more pass over Y); a lower threshold was slower where A stays partly
/// cached (docs/DESIGN-NOTES.md, cpu::spmm::spmv). Settable for tests (same bits).
#[doc(hidden)]
pub static SPMV_STREAM_A_BYTES: AtomicUsize = AtomicUsize::new(32 << 20);

/// `*y = v` with a non-temporal store (x86-64: `movnti`; elsewhere a plain store).
///
/// # Safety
/// `y` is valid, aligned and owned by the calling chunk.
#[inline(always)]
unsafe fn put_nt<V: SpmmScalar>(y: *mut V, v: V) {
    // SAFETY: per the contract; V is f32 or f64 (4 or 8 bytes of plain data).
    unsafe {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_stream_si32, _mm_stream_si64};
            if std::mem::size_of::<V>() == 8 {
                _mm_stream_si64(y.cast(), std::mem::transmute_copy::<V, i64>(&v));
            } else {
                _mm_stream_si32(y.cast(), std::mem::transmute_copy::<V, i32>(&v));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            *y = v;
        }
    }
}

/// Bounds for the inline checks of `raw_kernel` (stored values, which count from `base`).
struct Check {
    base: usize,
    /// Stored offsets must lie in `[base, base + limit]` (`inline_limit`).
    limit: usize,
    /// Stored column indices must lie in `[base, base + x_rows)`.
    x_rows: usize,
}

/// The loop of `raw_rows` (pointers shifted by the base; `y` addresses row 0 of Y).
/// `BETA0`: beta = 0, Y not read. `CHECK`: offsets and columns are checked against `chk`
/// before use; a failure ends in `bad_row`. Compiled with FMA itself: its row closure,
/// when LLVM keeps it out of line, otherwise had the base ISA and called libm's `fma`
/// for every entry (5x slower SpMV on AMD Zen 5, where no gather kernel replaces it).
///
/// # Safety
/// As for `raw_rows`, on a machine with AVX2 and FMA (x86-64).
#[allow(clippy::too_many_arguments)]
#[inline]
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
unsafe fn raw_kernel<
    V: SpmmScalar,
    R: SparseRows<V>,
    O: Ix,
    C: Ix,
    const BETA0: bool,
    const STREAM: bool,
    const CHECK: bool,
>(
    a: &R,
    chk: &Check,
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
    // arrays through the shifted pointers, and their columns address X (`raw_rows`); with
    // CHECK, the row's offsets are checked before its entries are read and each column
    // before X is read at it.
    unsafe {
        let xat = |i: usize, p: usize| {
            let c = (*cols.wrapping_add(p)).ix();
            if CHECK && c.wrapping_sub(chk.base) >= chk.x_rows {
                bad_row(a, i, chk.x_rows);
            }
            std::ptr::read_volatile(x.wrapping_add(c))
        };
        let val = |p: usize| *vals.wrapping_add(p);
        row_loop::<V, R, O, BETA0, STREAM, CHECK>(
            a,
            chk,
            offs,
            y,
            lo,
            hi,
            alpha,
            beta,
            |i, s, e| chains4(s, e, val, |p| xat(i, p)),
        );
    }
}

/// The sum of entries `[s, e)` of one row in the four chains of this module (entry p - s
/// into chain (p - s) % 4, fused, combined as (c0 + c1) + (c2 + c3)): `val(p)` times
/// `xat(p)` for each entry p.
#[inline(always)]
fn chains4<V: SpmmScalar>(
    s: usize,
    e: usize,
    val: impl Fn(usize) -> V,
    mut xat: impl FnMut(usize) -> V,
) -> V {
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
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// The row loop of the raw kernels: row i's offsets [s, e) (with `CHECK`, checked before
/// `sum` reads the row), then `y[i] = alpha * sum(i, s, e) (+ beta * y[i])`, as `store`
/// with the beta test outside the loop (`STREAM`: a non-temporal store).
///
/// # Safety
/// As for `raw_kernel`; `sum` reads only row i's entries.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn row_loop<
    V: SpmmScalar,
    R: SparseRows<V>,
    O: Ix,
    const BETA0: bool,
    const STREAM: bool,
    const CHECK: bool,
>(
    a: &R,
    chk: &Check,
    offs: *const O,
    y: *mut V,
    lo: usize,
    hi: usize,
    alpha: V,
    beta: V,
    mut sum: impl FnMut(usize, usize, usize) -> V,
) {
    // SAFETY: per the contract.
    unsafe {
        let mut s = (*offs.add(lo)).ix();
        if CHECK && s.wrapping_sub(chk.base) > chk.limit {
            bad_row(a, lo, chk.x_rows);
        }
        for i in lo..hi {
            let e = (*offs.add(i + 1)).ix();
            // s is in [base, base + limit]: e in [s, base + limit] keeps the row inside.
            if CHECK && (e < s || e.wrapping_sub(chk.base) > chk.limit) {
                bad_row(a, i, chk.x_rows);
            }
            let v = alpha * sum(i, s, e);
            let yi = y.add(i);
            if STREAM {
                put_nt(yi, v);
            } else {
                *yi = if BETA0 { v } else { v + beta * *yi };
            }
            s = e;
        }
    }
}

/// Stored column indices as eight 64-bit lanes (the gather kernel's indices).
#[cfg(target_arch = "x86_64")]
trait Ix8: Ix {
    /// `p[t]` for the lanes t of `k`, widened as `ix` reads it (i32 sign-extended); zero in
    /// the other lanes (not read).
    ///
    /// # Safety
    /// AVX-512F/VL available; `p + t` readable for each lane t of `k`.
    unsafe fn load8(p: *const Self, k: u8) -> std::arch::x86_64::__m512i;
}

// The AVX-512 intrinsics are stable since Rust 1.89, above the crate's declared rust-version
// (as in `lanes`).
#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
impl Ix8 for i32 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn load8(p: *const i32, k: u8) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::*;
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, p)) }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::incompatible_msrv)]
impl Ix8 for i64 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn load8(p: *const i64, k: u8) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::*;
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm512_maskz_loadu_epi64(k, p) }
    }
}

/// `raw_kernel` with each row summed in eight lanes by AVX-512 gathers of X: entry p - s of
/// the row into lane (p - s) % 8 (fused), the tail's lanes only, then `Lanes::g_sum`; the
/// order `strided` reproduces in scalars with `G8`. Gathers of eight values cost about eight
/// scalar loads on the machines `fast_gather` picks, and the loop runs one step per eight
/// entries (power-law rows 1.3x faster, docs/DESIGN-NOTES.md, cpu::spmm::spmv). With
/// `CHECK`, each group of columns is range-checked in one vector compare before X is read.
///
/// # Safety
/// As for `raw_kernel`, on a machine with AVX-512F/VL and FMA.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments, clippy::incompatible_msrv)]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn raw_gather8<
    V: SpmmScalar,
    R: SparseRows<V>,
    O: Ix,
    C: Ix8,
    const BETA0: bool,
    const STREAM: bool,
    const CHECK: bool,
>(
    a: &R,
    chk: &Check,
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
    use std::arch::x86_64::*;
    // Checked values are below 2^63 (`RawIdx`), so they fit the signed lanes.
    let base = _mm512_set1_epi64(chk.base as i64);
    let x_rows = _mm512_set1_epi64(chk.x_rows.min(i64::MAX as usize) as i64);
    // SAFETY (all reads): as in `raw_kernel`; lanes outside a row are masked off, and with
    // CHECK a group's columns are checked before X is gathered at them.
    unsafe {
        row_loop::<V, R, O, BETA0, STREAM, CHECK>(
            a,
            chk,
            offs,
            y,
            lo,
            hi,
            alpha,
            beta,
            |i, s, e| {
                let mut acc = V::g_zero();
                let mut p = s;
                while p < e {
                    let k = if e - p >= 8 {
                        0xFF
                    } else {
                        ((1u32 << (e - p)) - 1) as u8
                    };
                    let idx = C::load8(cols.wrapping_add(p), k);
                    if CHECK
                        && _mm512_mask_cmpge_epu64_mask(k, _mm512_sub_epi64(idx, base), x_rows) != 0
                    {
                        bad_row(a, i, chk.x_rows);
                    }
                    let xv = V::g_gather(k, idx, x);
                    acc = V::g_fma(V::g_load(k, vals.wrapping_add(p)), xv, acc, k);
                    p += 8;
                }
                V::g_sum(acc)
            },
        );
    }
}
