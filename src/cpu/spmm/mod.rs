//! SpMM kernels: Y = alpha * op(A) * X + beta * Y with A sparse (rows from `SparseRows`),
//! X and Y dense, row- or column-major.
//!
//! - Work split: contiguous row chunks of about equal nonzeros (plus one unit per row, so
//!   runs of empty rows are split too), several per thread, handed out by rayon.
//! - Determinism: each entry of Y is computed by one thread, as
//!   `alpha * (sum over the row's entries) + beta * y`, the sum taken in an order fixed by
//!   the row alone (storage order, or a fixed interleaving of partial sums: `spmv`, the
//!   one-vector blocks of `avx512`); the chunking only decides who computes it, so results
//!   are bitwise identical for any thread count.
//! - Safety without per-entry checks: each block of rows is proven safe by
//!   `SparseRows::check_rows` (offsets, column indices; vectorised) just before the kernel
//!   reads it with unchecked indexing, or skipped when A was validated in full in the call.
//! - Instruction set: one code path per process, chosen at run time (AVX-512, AVX2+FMA, or
//!   the baseline build); the library itself is built for the baseline target. AVX-512
//!   row-major blocks and packed column-major panels use explicit vectors (`avx512`).
//! - Column-major: row tiles in L2 with groups of 8 columns (`colmajor`); on the AVX-512
//!   path, when X's reads are scattered or A's rows are long or X's window wide
//!   (`pack_vecs`), packed row-major panels of 8-16 columns of X (`run_packed`) so that each
//!   entry of A reads one or two vectors of X instead of one scalar per column.
//! - Nothing is allocated here: the packed panel is the caller's (the handle's) scratch.

#[cfg(target_arch = "x86_64")]
pub mod avx512;
pub mod colmajor;
pub mod entry;
pub mod generic;
#[cfg(target_arch = "x86_64")]
pub mod lanes;
pub mod rowmajor;
pub mod rows;
pub mod spmv;

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cpu::diag_runs::DiagRuns;
use crate::cpu::length_order::LengthOrder;
use crate::cpu::row_groups::RowGroups;
use crate::types::Scalar;
use rows::SparseRows;

/// The explicit-vector operations of the AVX-512 kernels (nothing elsewhere).
#[cfg(target_arch = "x86_64")]
pub use lanes::Lanes as VectorLanes;
/// The explicit-vector operations of the AVX-512 kernels (nothing elsewhere).
#[cfg(not(target_arch = "x86_64"))]
pub trait VectorLanes {}
#[cfg(not(target_arch = "x86_64"))]
impl VectorLanes for f32 {}
#[cfg(not(target_arch = "x86_64"))]
impl VectorLanes for f64 {}

/// Values usable by the kernels: `Scalar` plus a fused multiply-add.
pub trait SpmmScalar: Scalar + std::ops::Mul<Output = Self> + VectorLanes {
    /// `a * b + c` with one rounding (only called on paths compiled with FMA).
    fn fused(a: Self, b: Self, c: Self) -> Self;
}

impl SpmmScalar for f32 {
    #[inline(always)]
    fn fused(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
}

impl SpmmScalar for f64 {
    #[inline(always)]
    fn fused(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// `acc + a * x`, fused when the code path has FMA.
#[inline(always)]
pub(crate) fn madd<V: SpmmScalar, const FMA: bool>(acc: V, a: V, x: V) -> V {
    if FMA {
        V::fused(a, x, acc)
    } else {
        acc + a * x
    }
}

pub use crate::platform::isa::Isa;

pub use crate::common::options::Layout;

/// Y's storage as handed to workers: chunks write disjoint rows.
#[derive(Clone, Copy)]
pub(crate) struct YPtr<V> {
    ptr: *mut V,
    len: usize,
}
// SAFETY: workers write disjoint sets of entries (their own rows), see `run`.
unsafe impl<V: Send> Send for YPtr<V> {}
// SAFETY: as above.
unsafe impl<V: Send> Sync for YPtr<V> {}

impl<V: Copy> YPtr<V> {
    /// # Safety
    /// `off` is in bounds and no other thread touches it concurrently.
    #[inline(always)]
    pub(crate) unsafe fn at(&self, off: usize) -> *mut V {
        debug_assert!(off < self.len);
        // SAFETY: per the contract.
        unsafe { self.ptr.add(off) }
    }
}

/// Everything a kernel needs besides A. Shapes were checked by the typed layer:
/// X has `x_rows` rows and `k` columns, Y has `nrows(A)` rows and `k` columns, and the
/// leading dimensions cover them.
pub(crate) struct Dense<'a, V> {
    pub k: usize,
    pub layout: Layout,
    pub alpha: V,
    pub beta: V,
    pub x: &'a [V],
    pub ldx: usize,
    pub x_rows: usize,
    pub y: YPtr<V>,
    pub ldy: usize,
    /// A was validated in full (against `x_rows`) during this call: blocks need no check.
    pub a_checked: bool,
    /// Full, 64-byte aligned vectors of Y may be written with non-temporal stores (AVX-512
    /// kernels): beta = 0 and Y larger than `STREAM_Y_BYTES`.
    pub stream: bool,
    /// `Problem::spmv`.
    pub spmv: Option<(SpmvPrep<'a, V>, usize)>,
}

/// What an analysis of A gives an SpMV (`Problem::spmv`).
pub enum SpmvPrep<'a, V> {
    /// Row groups (PETSc's inodes), found on A's current structure (the caller's
    /// guarantee: a plan's own tile, or A's digest compared with the analysis'): each
    /// group's column list is read once for all its rows (`spmv::grouped_rows`; with
    /// `a_checked` false it checks the rows as it reads them).
    Groups(&'a RowGroups),
    /// Diagonal runs, with a copy of A's values (`spmv::diag_rows`): only with A checked
    /// in full and the runs found on A's current structure and values. (Made only by the
    /// distributed plans, which own their copy of A.)
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Diags(&'a DiagRuns<V>),
    /// Rows in length order, with a copy of A (`spmv::ordered_rows`): likewise.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Ordered(&'a LengthOrder<V>),
}

impl<V> Clone for SpmvPrep<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V> Copy for SpmvPrep<'_, V> {}

impl<V> SpmvPrep<'_, V> {
    /// Whether the kernel reads a copy of A's values (usable only with A checked in full,
    /// the copy made from A as it is).
    pub fn copies_values(&self) -> bool {
        !matches!(self, SpmvPrep::Groups(_))
    }
}

/// Buffers for the packed panel of X, one per value type (see `run`).
#[derive(Default)]
pub struct PackScratch {
    pub f64: Vec<f64>,
    pub f32: Vec<f32>,
}

/// Bytes of X's rows a column group may span before it counts as scattered (`scattered`);
/// settable for tests, which force the packed path with 0.
#[doc(hidden)]
pub static SCATTER_BYTES: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(1 << 20);

/// Bytes of Y from which a product with beta = 0 writes Y's full aligned vectors with
/// non-temporal stores (AVX-512 kernels): Y then cannot stay in the last-level cache (32
/// MiB here, shared with A and X) anyway, and a normal store first reads the line it
/// overwrites, one more pass over Y. Settable for tests; the results are the same bits.
#[doc(hidden)]
pub static STREAM_Y_BYTES: AtomicUsize = AtomicUsize::new(16 << 20);

/// The shapes of one product, for `run`.
pub struct Problem<'a, V> {
    pub k: usize,
    pub layout: Layout,
    pub alpha: V,
    pub beta: V,
    pub x: &'a [V],
    pub ldx: usize,
    /// Rows of X (ncols of op(A)).
    pub x_rows: usize,
    pub y: &'a mut [V],
    pub ldy: usize,
    /// Whether A was validated in full during this call (row offsets non-decreasing, column
    /// indices below `x_rows`). When false the kernels check each block of rows before
    /// reading it; a bad block panics (a status at the ABI), never reads outside A or X.
    pub a_checked: bool,
    /// Scratch of at least `pack_len(x_rows, k, pack_vecs)` entries for the packed
    /// column-major path (AVX-512, see `pack_vecs`), or `None` (that path is then not taken).
    pub pack: Option<&'a mut [V]>,
    /// Vectors of columns per packed panel, from `pack_vecs` or `window_plan` (0: direct
    /// kernels).
    pub pack_vecs: usize,
    /// Rows of the ring each part packs X's window into (`window_plan`), or 0 when X is
    /// packed whole (`pack_vecs`). `pack` then holds `window_len` entries.
    pub pack_window: usize,
    /// An analysis of A for an SpMV ([`SpmvPrep`]) and the row of the analysed matrix that
    /// A's row 0 is (A may be a range of its rows). Ignored for k > 1.
    pub spmv: Option<(SpmvPrep<'a, V>, usize)>,
}

pub use crate::common::check::dense_len;

/// Chunk `c` of `parts`: rows `[lo, hi)` with about `c / parts` of the cost
/// `start(i) + i` before `lo`. Needs no storage (binary search on A's row offsets).
pub fn chunk_bounds<V: Scalar, R: SparseRows<V>>(a: &R, c: usize, parts: usize) -> (usize, usize) {
    let m = a.nrows();
    let total = (a.start(m) + m) as u128;
    let first = |c: usize| -> usize {
        if c == 0 {
            return 0;
        }
        if c >= parts {
            return m;
        }
        let target = total * c as u128 / parts as u128;
        let (mut lo, mut hi) = (0usize, m);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ((a.start(mid) + mid) as u128) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    (first(c), first(c + 1))
}

/// Number of chunks for `threads` workers: several per thread, none for tiny products.
pub fn chunk_count<V: Scalar, R: SparseRows<V>>(a: &R, k: usize, threads: usize) -> usize {
    let m = a.nrows();
    let work = (a.start(m) + m).saturating_mul(k.max(1));
    if threads <= 1 || work < (1 << 15) {
        return 1;
    }
    (threads * 8).min(m).max(1)
}

/// Row partition balanced by nonzeros (what an analysis stores).
pub fn partition<V: Scalar, R: SparseRows<V>>(a: &R, parts: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..parts).map(|c| chunk_bounds(a, c, parts).0).collect();
    b.push(a.nrows());
    b
}

/// How a call's rows are cut into parts: the stored partition (from an analysis) when it
/// has several parts and the call runs on several threads, else `chunk_count` parts
/// computed on the fly (`chunk_bounds`).
#[derive(Clone, Copy)]
struct Split<'b> {
    bounds: Option<&'b [usize]>,
    parts: usize,
}

impl<'b> Split<'b> {
    fn new<V: Scalar, R: SparseRows<V>>(
        a: &R,
        k: usize,
        bounds: Option<&'b [usize]>,
        threads: usize,
    ) -> Self {
        match bounds {
            Some(b) if threads > 1 && b.len() > 2 => Split {
                bounds: Some(b),
                parts: b.len() - 1,
            },
            _ => Split {
                bounds: None,
                parts: chunk_count(a, k, threads),
            },
        }
    }

    /// Rows `[lo, hi)` of part `c`.
    #[inline]
    fn range<V: Scalar, R: SparseRows<V>>(&self, a: &R, c: usize) -> (usize, usize) {
        match self.bounds {
            Some(b) => (b[c], b[c + 1]),
            None => chunk_bounds(a, c, self.parts),
        }
    }
}

/// How often this thread took the special paths that give the same bits as the plain
/// kernels (so results alone cannot show they ran): tests read it (`path_counts`) to prove
/// that a forced path was taken. Thread-local, so that tests running at the same time do
/// not see each other's counts, and an increment costs no shared cache line; parts run on
/// the thread that claims them, so a test that checks counts runs its product on one thread.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// SpMV blocks written with non-temporal stores (`spmv::SPMV_STREAM_A_BYTES`).
    pub spmv_stream: usize,
    /// SpMV blocks summed in the gather kernel's order (`fast_gather`).
    pub spmv_gather: usize,
    /// SpMV chunks summed by row groups (`spmv::grouped_rows`).
    pub spmv_grouped: usize,
    /// SpMV chunks summed by diagonal runs (`spmv::diag_rows`).
    pub spmv_diag: usize,
    /// SpMV chunks summed in length order (`spmv::ordered_rows`).
    pub spmv_ordered: usize,
    /// Column panels computed from packed X (`run_packed`).
    pub packed_panels: usize,
    /// Products through the window rings (`run_window`).
    pub window_calls: usize,
    /// Blocks computed from a ring (`window_part`).
    pub ring_blocks: usize,
    /// Blocks inside the ring path too wide for the ring, computed by the direct kernel.
    pub ring_direct_blocks: usize,
}

thread_local! {
    static PATHS: std::cell::Cell<PathCounts> = const {
        std::cell::Cell::new(PathCounts {
            spmv_stream: 0,
            spmv_gather: 0,
            spmv_grouped: 0,
            spmv_diag: 0,
            spmv_ordered: 0,
            packed_panels: 0,
            window_calls: 0,
            ring_blocks: 0,
            ring_direct_blocks: 0,
        })
    };
}

/// This thread's `PathCounts` so far.
#[doc(hidden)]
pub fn path_counts() -> PathCounts {
    PATHS.with(|c| c.get())
}

/// Adds to this thread's `PathCounts`.
#[inline]
pub(crate) fn count_path(f: impl FnOnce(&mut PathCounts)) {
    PATHS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// Calls `f(c)` once for every `c` in `0..parts`. With `threads > 1` and several parts the
/// calling thread takes parts itself, beside up to `threads` helper jobs on `pool` (or, with
/// `None`, on the rayon pool the caller runs in): parts are claimed in order from a shared
/// counter, so a worker that wakes late finds less to do instead of holding up the call,
/// and a short call needs no hand-off to the pool and back (docs/DESIGN-NOTES.md,
/// cpu::spmm). Which thread computes a part never changes the part's result.
///
/// The call returns once every part is done, without waiting for helpers that have not
/// started: a helper that starts later finds no part left and ends (`Parts`). A scope would
/// wait for each helper job to run, i.e. for a sleeping worker to wake only to find nothing
/// left, and then for the caller to be woken in turn, which measured slower on short calls
/// (docs/DESIGN-NOTES.md, cpu::spmm).
/// A panic in a part (a bad row of A) stops the remaining parts and is re-raised here once
/// the parts already running have ended.
pub(crate) fn for_each_part(
    pool: Option<&rayon::ThreadPool>,
    threads: usize,
    parts: usize,
    f: &(dyn Fn(usize) + Sync),
) {
    if threads <= 1 || parts <= 1 {
        (0..parts).for_each(f);
        return;
    }
    // SAFETY: only the lifetime is erased; `Parts::work` calls `f` only for a part it
    // claimed below `parts`, and this call returns only after every such part is done
    // (`wait`), so `f` is alive whenever it is called.
    let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
    let st = std::sync::Arc::new(Parts {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        parts,
        f,
        failed: std::sync::atomic::AtomicBool::new(false),
        panic: parking_lot::Mutex::new(None),
    });
    // Every worker is asked (not threads - 1): with workers bound to cores, the one sharing
    // the caller's core would otherwise be the only helper some of the time.
    for _ in 0..threads.min(parts - 1) {
        let s = std::sync::Arc::clone(&st);
        match pool {
            Some(p) => p.spawn(move || s.work()),
            None => rayon::spawn(move || s.work()),
        }
    }
    st.work();
    st.wait();
    if let Some(p) = st.panic.lock().take() {
        std::panic::resume_unwind(p);
    }
}

/// The parts of one `for_each_part` call, shared by the caller and its helper jobs. A
/// helper job may run after the call returned (its worker was asleep): it then claims a
/// number at or past `parts` and ends without touching `f`.
struct Parts {
    /// Next part to claim (counts past `parts` as late helpers try).
    next: AtomicUsize,
    /// Parts finished (run, or skipped after a panic).
    done: AtomicUsize,
    parts: usize,
    /// The call's `f` (lifetime erased, see `for_each_part`).
    f: *const (dyn Fn(usize) + Sync + 'static),
    /// A part panicked: the parts still unclaimed are skipped.
    failed: std::sync::atomic::AtomicBool,
    panic: parking_lot::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

// SAFETY: `f` points to a `Sync` closure, called only while the call that owns it waits
// (see `for_each_part`); the other fields are atomics and a mutex.
unsafe impl Send for Parts {}
// SAFETY: as above.
unsafe impl Sync for Parts {}

impl Parts {
    /// Claims and runs parts until none is left.
    fn work(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.parts {
                return;
            }
            if !self.failed.load(Ordering::Relaxed) {
                // SAFETY: part c < parts is claimed and not yet counted in `done`, so the
                // call that owns `f` is still waiting for it.
                let f = unsafe { &*self.f };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(c)));
                if let Err(p) = r {
                    self.failed.store(true, Ordering::Relaxed);
                    self.panic.lock().get_or_insert(p);
                }
            }
            // Release: the part's writes (its rows of Y) before the caller's return.
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// Waits until every part is done (the caller has claimed the last one, so the rest
    /// are running on helpers: a short spin, then yielding the core in case a helper
    /// shares it).
    fn wait(&self) {
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < self.parts {
            if spins < 1 << 12 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Y = alpha * A * X + beta * Y with the calling thread and `pool`'s workers (`None`: the
/// rayon pool the caller runs in). `bounds` is a precomputed partition (from an analysis)
/// or `None` (computed on the fly).
pub fn run<V: SpmmScalar, R: SparseRows<V>>(
    isa: Isa,
    a: &R,
    p: Problem<'_, V>,
    bounds: Option<&[usize]>,
    threads: usize,
    pool: Option<&rayon::ThreadPool>,
) {
    let m = a.nrows();
    if m == 0 || p.k == 0 {
        return;
    }
    assert!(
        dense_len(p.layout, p.x_rows, p.k, p.ldx) == Some(p.x.len()),
        "X storage does not match its shape"
    );
    let x_rows = p.x_rows;
    let d = Dense {
        k: p.k,
        layout: p.layout,
        alpha: p.alpha,
        beta: p.beta,
        x: p.x,
        ldx: p.ldx,
        x_rows,
        y: YPtr {
            ptr: p.y.as_mut_ptr(),
            len: p.y.len(),
        },
        ldy: p.ldy,
        a_checked: p.a_checked,
        spmv: p.spmv.filter(|_| p.k == 1),
        stream: isa == Isa::Avx512
            && p.beta == V::ZERO
            && m.saturating_mul(p.k)
                .saturating_mul(std::mem::size_of::<V>())
                >= STREAM_Y_BYTES.load(Ordering::Relaxed),
    };
    assert!(
        dense_len(p.layout, m, p.k, p.ldy) == Some(p.y.len()),
        "Y storage does not match its shape"
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(buf) = p.pack
        && isa == Isa::Avx512
        && d.layout == Layout::ColMajor
        && d.k >= 2
        && d.alpha != V::ZERO
        && p.pack_vecs > 0
    {
        if p.pack_window == 0
            && pack_len::<V>(x_rows, d.k, p.pack_vecs).is_some_and(|n| buf.len() >= n)
        {
            run_packed(a, &d, buf, p.pack_vecs, bounds, threads, pool);
            return;
        }
        // The rings' slots are bits of one word (`run_window`); more threads take the
        // direct kernels.
        if p.pack_window.is_power_of_two()
            && threads < 64
            && window_len::<V>(p.pack_window, d.k, p.pack_vecs, threads)
                .is_some_and(|n| buf.len() >= n)
        {
            run_window(
                a,
                &d,
                buf,
                p.pack_vecs,
                p.pack_window,
                bounds,
                threads,
                pool,
            );
            return;
        }
    }
    let split = Split::new(a, d.k, bounds, threads);
    for_each_part(pool, threads, split.parts, &|c| {
        let (lo, hi) = split.range(a, c);
        chunk(isa, a, lo, hi, &d);
    });
}

/// Column-major product through packed panels (AVX-512): for each panel of up to
/// `PANEL_VECS` vectors of columns, X's panel is copied into `buf` as an x_rows x P
/// row-major block (in parallel, `pack_panel`), then every row of Y's panel is computed
/// from it with P / L vector loads per entry of A instead of P scattered loads. Each lane is
/// summed in storage order with FMA, as in the direct column-major kernel, so the results
/// are the same bits.
#[cfg(target_arch = "x86_64")]
fn run_packed<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    d: &Dense<V>,
    buf: &mut [V],
    nv: usize,
    bounds: Option<&[usize]>,
    threads: usize,
    pool: Option<&rayon::ThreadPool>,
) {
    const PACK_ROWS: usize = 4096;
    let x_rows = d.x_rows;
    let split = Split::new(a, d.k, bounds, threads);
    let parts = split.parts;
    let max_vecs = nv.clamp(1, 4);
    let mut j0 = 0;
    while j0 < d.k {
        let nv = max_vecs.min((d.k - j0).div_ceil(V::L));
        let stride = nv * V::L;
        let w = stride.min(d.k - j0);
        let packed = YPtr {
            ptr: buf.as_mut_ptr(),
            len: x_rows * stride,
        };
        assert!(packed.len <= buf.len(), "pack scratch too small");
        let pack = |ci: usize| {
            let c0 = ci * PACK_ROWS;
            let rows = PACK_ROWS.min(x_rows - c0);
            // SAFETY: part ci owns rows [c0, c0 + rows) of the panel, entries
            // [c0 * stride, (c0 + rows) * stride) of `buf`; no other part touches them.
            let out =
                unsafe { std::slice::from_raw_parts_mut(packed.at(c0 * stride), rows * stride) };
            assert!(out.len() >= rows * stride && w <= stride);
            // SAFETY: the AVX-512 path (checked in `run`); j0 + w <= k, c0 + rows <=
            // x_rows and out's size asserted just above.
            unsafe { avx512::pack_panel(d, j0, w, c0, rows, stride, out) };
        };
        let pack_parts = x_rows.div_ceil(PACK_ROWS);
        for_each_part(pool, if parts > 1 { threads } else { 1 }, pack_parts, &pack);
        // SAFETY: the packing parts have finished; only shared reads from here on.
        let xp: &[V] = unsafe { std::slice::from_raw_parts(packed.ptr, packed.len) };
        let panel = |c: usize| {
            let (lo, hi) = split.range(a, c);
            let mut b0 = lo;
            while b0 < hi {
                let b1 = block_end(a, b0, hi, BLOCK_NNZ);
                // Checked in the first panel only: later panels read the same rows, and a
                // failed check ends the whole call (a panic, before any later panel).
                if !d.a_checked && j0 == 0 {
                    a.check_rows(b0, b1, d.x_rows);
                }
                // SAFETY: `run_packed` runs only on the AVX-512 path (`run` checked the
                // ISA); rows [b0, b1) passed `check_rows` in the first panel (the blocks
                // depend only on A's offsets, not on the panel; or A was validated in full), so
                // col < x_rows and col * stride + stride <= xp.len(); Y's columns j0..j0 +
                // w <= k.
                unsafe {
                    match nv {
                        1 => avx512::packed::<V, R, 1, false>(a, b0, b1, xp, usize::MAX, j0, w, d),
                        2 => avx512::packed::<V, R, 2, false>(a, b0, b1, xp, usize::MAX, j0, w, d),
                        3 => avx512::packed::<V, R, 3, false>(a, b0, b1, xp, usize::MAX, j0, w, d),
                        _ => avx512::packed::<V, R, 4, false>(a, b0, b1, xp, usize::MAX, j0, w, d),
                    }
                }
                b0 = b1;
            }
        };
        for_each_part(pool, threads, parts, &panel);
        count_path(|n| n.packed_panels += 1);
        j0 += w;
    }
}

/// Column-major product through rings of packed rows of X (AVX-512), for inputs whose
/// rows of A read a narrow, sliding window of X's rows (banded, 2-D and small 3-D
/// stencils): the direct kernel's one scalar FMA per column and entry becomes NV vector
/// FMAs, as in `run_packed`, without packing all of X first (that adds two passes over X
/// to a product that streams X once). Each part, for each panel of `nv` vectors of
/// columns, packs into a ring of `ring` rows (a power of two; row c of X in slot c mod
/// ring) the rows of X its blocks of A read, as the blocks advance (`window_part`); a block
/// whose columns span more than the ring is computed by the direct kernel, which gives the
/// same bits (each lane summed in storage order with FMA). A ring per running part, from
/// `buf` (`window_len`): slots claimed from a bit mask, at most `threads + 1` at once (the
/// caller and `threads` helpers, `for_each_part`).
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
fn run_window<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    d: &Dense<V>,
    buf: &mut [V],
    nv: usize,
    ring: usize,
    bounds: Option<&[usize]>,
    threads: usize,
    pool: Option<&rayon::ThreadPool>,
) {
    use std::sync::atomic::AtomicU64;
    let split = Split::new(a, d.k, bounds, threads);
    let parts = split.parts;
    let nv = nv.clamp(1, 4).min(d.k.div_ceil(V::L));
    let slot_len = ring * nv * V::L;
    let slots = threads + 1;
    assert!(
        ring.is_power_of_two() && slots <= 64 && buf.len() >= slots * slot_len,
        "pack ring scratch too small"
    );
    let rings = YPtr {
        ptr: buf.as_mut_ptr(),
        len: slots * slot_len,
    };
    let busy = AtomicU64::new(0);
    let part = |c: usize| {
        let (lo, hi) = split.range(a, c);
        let slot = loop {
            let cur = busy.load(Ordering::Acquire);
            let free = (!cur).trailing_zeros() as usize;
            assert!(free < slots, "more parts running than ring slots");
            if busy
                .compare_exchange(cur, cur | (1 << free), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                break free;
            }
        };
        // SAFETY: slot `slot` (entries [slot * slot_len, (slot + 1) * slot_len) of `buf`,
        // inside it as asserted) is this part's until released below: claimed in `busy`.
        let r = unsafe { std::slice::from_raw_parts_mut(rings.at(slot * slot_len), slot_len) };
        // SAFETY: the AVX-512 path (checked in `run`); r holds ring * nv * L entries.
        unsafe { window_part(a, d, lo, hi, r, ring, nv) };
        busy.fetch_and(!(1u64 << slot), Ordering::Release);
    };
    for_each_part(pool, threads, parts, &part);
    count_path(|n| n.window_calls += 1);
}

/// Rows `[lo, hi)` of Y through `ring` (see `run_window`).
///
/// # Safety
/// AVX-512F, AVX-512VL, AVX2 and FMA available; `ring` (a power of two) rows of `nv * L`
/// entries in `r`; X and Y hold `d`'s shapes (checked in `run`); the rows are this
/// thread's.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn window_part<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    d: &Dense<V>,
    lo: usize,
    hi: usize,
    r: &mut [V],
    ring: usize,
    nv: usize,
) {
    let stride = nv * V::L;
    assert!(ring.is_power_of_two() && r.len() >= ring * stride);
    let mask = ring - 1;
    let mut j0 = 0;
    while j0 < d.k {
        let w = stride.min(d.k - j0);
        // The ring holds X's rows [plo, phi), phi - plo <= ring (none while `empty`).
        let (mut plo, mut phi, mut empty) = (0usize, 0usize, true);
        let mut b0 = lo;
        while b0 < hi {
            let b1 = block_end(a, b0, hi, BLOCK_NNZ);
            // Checked in the first panel only (as in `run_packed`).
            if !d.a_checked && j0 == 0 {
                a.check_rows(b0, b1, d.x_rows);
            }
            let (mut mn, mut mx) = (usize::MAX, 0);
            for p in a.start(b0)..a.start(b1) {
                // SAFETY: p lies in rows [b0, b1), checked (or A validated in full).
                let c = unsafe { a.col(p) };
                mn = mn.min(c);
                mx = mx.max(c);
            }
            if mn <= mx && mx - mn >= ring {
                // SAFETY: rows [b0, b1) checked; columns j0 + w <= k; the rows are ours.
                unsafe { colmajor::cols::<V, R, true>(a, b0, b1, j0, w, d) };
                count_path(|n| n.ring_direct_blocks += 1);
                b0 = b1;
                continue;
            }
            if mn <= mx {
                if empty || mn < plo || mn > phi {
                    // A fresh window (first block, a jump back or past the ring's rows).
                    // SAFETY: mx < x_rows (checked); mx + 1 - mn <= ring.
                    unsafe { fill_ring(d, r, mask, j0, w, stride, mn, mx + 1) };
                    (plo, phi, empty) = (mn, mx + 1, false);
                } else if mx >= phi {
                    // Slides forward: rows [phi, mx] join, the oldest leave; mx + 1 - ring
                    // <= mn, so the block's rows stay.
                    // SAFETY: as above, mx + 1 - phi <= mx + 1 - mn <= ring.
                    unsafe { fill_ring(d, r, mask, j0, w, stride, phi, mx + 1) };
                    phi = mx + 1;
                    plo = plo.max(phi - ring.min(phi));
                }
            }
            // SAFETY: rows [b0, b1) checked; every column they read lies in [plo, phi)
            // (or there is none), which the ring holds at col & mask; r holds ring *
            // stride entries (asserted in `packed` too); j0 + w <= k.
            unsafe {
                match nv {
                    1 => avx512::packed::<V, R, 1, true>(a, b0, b1, r, mask, j0, w, d),
                    2 => avx512::packed::<V, R, 2, true>(a, b0, b1, r, mask, j0, w, d),
                    3 => avx512::packed::<V, R, 3, true>(a, b0, b1, r, mask, j0, w, d),
                    _ => avx512::packed::<V, R, 4, true>(a, b0, b1, r, mask, j0, w, d),
                }
            }
            count_path(|n| n.ring_blocks += 1);
            b0 = b1;
        }
        j0 += w;
    }
}

/// X's rows `[r0, r1)`, columns `j0..j0 + w`, into their ring slots (row c at `c & mask`).
///
/// # Safety
/// AVX-512F; `r1 <= x_rows`, `r1 - r0 <= mask + 1`, `r` holds `(mask + 1) * stride`
/// entries, `j0 + w <= k`, `w <= stride`.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn fill_ring<V: SpmmScalar>(
    d: &Dense<V>,
    r: &mut [V],
    mask: usize,
    j0: usize,
    w: usize,
    stride: usize,
    r0: usize,
    r1: usize,
) {
    let mut c = r0;
    while c < r1 {
        let slot = c & mask;
        let n = (r1 - c).min(mask + 1 - slot);
        let out = &mut r[slot * stride..(slot + n) * stride];
        // SAFETY: per the contract; out holds n * stride entries (slice bounds checked).
        unsafe { avx512::pack_panel(d, j0, w, c, n, stride, out) };
        c += n;
    }
}

/// Entries of scratch `run_window` needs: `threads + 1` rings of `ring` rows of the
/// panel's width (`pack_len`'s), or `None` on overflow.
pub fn window_len<V: SpmmScalar>(
    ring: usize,
    k: usize,
    nv: usize,
    threads: usize,
) -> Option<usize> {
    pack_len::<V>(ring, k, nv)?.checked_mul(threads.checked_add(1)?)
}

/// Bytes one ring of `run_window` may take: about L2 (1 MiB here), where panels of two
/// vectors measured fastest (docs/DESIGN-NOTES.md, cpu::spmm). Settable for tests (0 turns
/// the rings off).
#[doc(hidden)]
pub static WINDOW_BYTES: AtomicUsize = AtomicUsize::new(1 << 20);

/// Bytes a column group's (8 columns) window of X must span for `run_window`: below it the
/// direct kernel reads the window from L1 and keeps up, above it the direct kernel's scalar
/// loads wait on L2 (docs/DESIGN-NOTES.md, cpu::spmm). Settable for tests.
#[doc(hidden)]
pub static WINDOW_MIN_BYTES: AtomicUsize = AtomicUsize::new(64 << 10);

/// Panel vectors and ring rows for `run_window` (column-major, AVX-512, k >= `PACK_MIN_K`,
/// when `pack_vecs` gives 0), or `None` for the direct kernels. The ring is sized from the
/// span of X's rows that a block of A in the middle of the matrix reads (plus 64 rows),
/// at panels of up to `PANEL_VECS` vectors so that it fits `WINDOW_BYTES`.
pub fn window_plan<V: SpmmScalar, R: SparseRows<V>>(
    isa: Isa,
    a: &R,
    layout: Layout,
    k: usize,
    x_rows: usize,
) -> Option<(usize, usize)> {
    if !cfg!(target_arch = "x86_64")
        || isa != Isa::Avx512
        || layout != Layout::ColMajor
        || k < PACK_MIN_K.load(Ordering::Relaxed).max(2)
    {
        return None;
    }
    let m = a.nrows();
    let lo = m / 2;
    if lo >= m {
        return None;
    }
    let e = block_end(a, lo, m, BLOCK_NNZ);
    a.check_rows(lo, e, x_rows);
    let (mut mn, mut mx) = (usize::MAX, 0);
    for p in a.start(lo)..a.start(e) {
        // SAFETY: p lies in rows [lo, e), checked just above.
        let c = unsafe { a.col(p) };
        mn = mn.min(c);
        mx = mx.max(c);
    }
    if mn > mx {
        return None;
    }
    let span = mx - mn + 1;
    if span.saturating_mul(8 * std::mem::size_of::<V>()) < WINDOW_MIN_BYTES.load(Ordering::Relaxed)
    {
        return None;
    }
    let ring = span.saturating_add(64).checked_next_power_of_two()?;
    let budget = WINDOW_BYTES.load(Ordering::Relaxed);
    let max = PANEL_VECS.load(Ordering::Relaxed).clamp(1, 4);
    let nv = (1..=max)
        .rev()
        .find(|&v| ring.saturating_mul(64 * v) <= budget)?;
    Some((nv, ring))
}

/// Most vectors of columns per packed panel (`pack_vecs`). Settable for tests.
#[doc(hidden)]
pub static PANEL_VECS: AtomicUsize = AtomicUsize::new(2);

/// Entries of scratch a packed product with panels of `nv` vectors (`pack_vecs`) and
/// `x_rows` rows of X needs, or `None` on overflow.
pub fn pack_len<V: SpmmScalar>(x_rows: usize, k: usize, nv: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    let l = V::L;
    #[cfg(not(target_arch = "x86_64"))]
    let l = 1;
    x_rows.checked_mul(nv.clamp(1, 4).min(k.div_ceil(l)) * l)
}

/// Rows `[lo, hi)` on the chosen instruction-set path.
fn chunk<V: SpmmScalar, R: SparseRows<V>>(isa: Isa, a: &R, lo: usize, hi: usize, d: &Dense<V>) {
    if lo >= hi {
        return;
    }
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::detect` / `available` checked the features.
        Isa::Avx512 if d.layout == Layout::RowMajor || d.k == 1 => unsafe {
            chunk_avx512(a, lo, hi, d)
        },
        // Column-major reads X with a stride: with AVX-512 the compiler turns the column
        // group into gathers, which measured slower than the AVX2 code's scalar loads.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX-512 machines have AVX2 and FMA (checked in `Isa::available`).
        Isa::Avx512 => unsafe { chunk_avx2(a, lo, hi, d) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { chunk_avx2(a, lo, hi, d) },
        _ => chunk_generic::<V, R, false, false>(a, lo, hi, d),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn chunk_avx512<V: SpmmScalar, R: SparseRows<V>>(a: &R, lo: usize, hi: usize, d: &Dense<V>) {
    chunk_generic::<V, R, true, true>(a, lo, hi, d)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn chunk_avx2<V: SpmmScalar, R: SparseRows<V>>(a: &R, lo: usize, hi: usize, d: &Dense<V>) {
    chunk_generic::<V, R, true, false>(a, lo, hi, d)
}

/// Entries of A per block for SpMV and row-major products: a block is checked (column
/// indices, offsets) and then computed while its indices are still in L1.
const BLOCK_NNZ: usize = 2048;
/// Entries of A per tile for column-major products (about 200 KB with 32-bit indices): the
/// tile stays in L2 while the column groups pass over it.
const TILE_NNZ: usize = 16384;

/// End of the block starting at row `lo`: the last row end `e <= hi` with at most `max`
/// entries in `[lo, e)`, and at least `lo + 1` (a longer row is a block of its own).
/// A forward scan of the offsets, not a binary search: the offsets ahead have not been
/// read yet, and a binary search's dependent probes into them each waited for memory
/// (perf: 7% of an SpMV on lap3d_7pt_64), while the scan reads them in order, as the
/// kernel does next. Garbage offsets (validation off) only give odd blocks, which
/// `check_rows` then rejects.
#[inline(always)]
fn block_end<V: Scalar, R: SparseRows<V>>(a: &R, lo: usize, hi: usize, max: usize) -> usize {
    let s0 = a.start(lo);
    if a.start(hi).wrapping_sub(s0) <= max {
        return hi;
    }
    // start(hi) - s0 > max, so the scan stops before hi.
    let mut e = lo + 1;
    while e < hi && a.start(e + 1).wrapping_sub(s0) <= max {
        e += 1;
    }
    e
}

/// Whether a product that `pack_vecs` would pack should go through the rings of
/// `run_window` instead when `window_plan` finds a window: X's reads are not scattered
/// (the first block's column group spans under `SCATTER_BYTES`) and X is not small next to
/// Y (`PACK_FEW_X_ROWS`). Packing all of X then costs a pass that writes x_rows x 16
/// columns beyond the caches per panel, where a ring packs the same rows into L2: a 3-D
/// stencil block whose first rows read both neighbouring planes measured 1.2x slower
/// packed (docs/DESIGN-NOTES.md, cpu::spmm).
pub fn window_first<V: SpmmScalar, R: SparseRows<V>>(a: &R, x_rows: usize) -> bool {
    let m = a.nrows();
    x_rows.saturating_mul(PACK_FEW_X_ROWS) > m && !scattered(a, 0, m, x_rows, false)
}

/// Whether the first rows of `[lo, hi)` (about `BLOCK_NNZ` entries) read X over a range
/// of rows whose column group (8 columns) exceeds `limit` bytes.
#[inline(always)]
fn span_exceeds<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    lo: usize,
    hi: usize,
    x_rows: usize,
    a_checked: bool,
    limit: usize,
) -> bool {
    if lo >= hi {
        return false;
    }
    let e = block_end(a, lo, hi, BLOCK_NNZ);
    if !a_checked {
        a.check_rows(lo, e, x_rows);
    }
    let (mut mn, mut mx) = (usize::MAX, 0);
    for p in a.start(lo)..a.start(e) {
        // SAFETY: p lies in rows [lo, e), checked just above (or A was validated in full).
        let c = unsafe { a.col(p) };
        mn = mn.min(c);
        mx = mx.max(c);
    }
    let span = mx.saturating_sub(mn).saturating_add(1);
    mn <= mx && span.saturating_mul(8 * std::mem::size_of::<V>()) > limit
}

/// Whether X's reads are scattered: a column group spans more than `SCATTER_BYTES` (1 MiB,
/// a mid-level cache) of X, so that X accesses are mostly cache misses, one line per
/// column and entry.
#[inline(always)]
fn scattered<V: SpmmScalar, R: SparseRows<V>>(
    a: &R,
    lo: usize,
    hi: usize,
    x_rows: usize,
    a_checked: bool,
) -> bool {
    let limit = SCATTER_BYTES.load(Ordering::Relaxed);
    span_exceeds(a, lo, hi, x_rows, a_checked, limit)
}

/// Bytes of X a column group may span (see `span_exceeds`) for the column-major kernels
/// to work in row tiles of `TILE_NNZ` entries: the tile's window of X, its entries of A
/// and its part of Y should stay in L2 (1 MiB here) while the column groups pass over it,
/// else each group evicts what the next one needs. Wider inputs (a 3-D 7-point stencil on
/// 64^3 spans 8192 rows of X, 512 KiB per group) make one pass per group over the whole
/// chunk instead, sliding through X once per group (a 1 MiB limit measured slower:
/// docs/DESIGN-NOTES.md, cpu::spmm). Settable for tests; the results are the same bits.
#[doc(hidden)]
pub static TILE_SPAN_BYTES: AtomicUsize = AtomicUsize::new(256 << 10);

/// Smallest k for which column-major products take the packed path without scattered
/// reads of X (when A's rows are long or X's window is wide, see `pack_vecs`). Settable
/// for tests.
#[doc(hidden)]
pub static PACK_MIN_K: AtomicUsize = AtomicUsize::new(8);

/// Average entries per row of A from which the packed path pays off without scattered
/// reads: each packed row of X then feeds many entries of A; on short rows packing adds two
/// passes over X to a product that already streams it (docs/DESIGN-NOTES.md, cpu::spmm).
const PACK_ROW_NNZ: usize = 10;

/// X has few rows next to Y when `x_rows * PACK_FEW_X_ROWS <= nrows(A)`: packing X then
/// costs a small fraction of writing Y, and the packed kernel needs NV vector FMAs per
/// entry of A instead of one scalar FMA per column (the direct kernel's inner loop, where
/// perf put nearly all the time), plus non-temporal stores of Y when beta = 0
/// (rect_A_200kx2k: docs/DESIGN-NOTES.md, cpu::spmm).
const PACK_FEW_X_ROWS: usize = 4;

/// Bytes the packed panel of a scattered product may take: X's reads are random, so the
/// whole panel should stay in the last-level cache (32 MiB here, shared with A and Y); a
/// wider panel measured slower (docs/DESIGN-NOTES.md, cpu::spmm).
const SCATTERED_PANEL_BYTES: usize = 16 << 20;

/// Vectors of columns per packed panel (1 or 2) for a column-major product on the AVX-512
/// path, or 0 when the direct kernels should run instead. Packed when X's reads are
/// scattered (any k >= 2), or for k >= `PACK_MIN_K` when A's rows are long (about
/// `PACK_ROW_NNZ` entries or more) or a column group's window of X is wider than
/// `TILE_SPAN_BYTES` (3-D stencils): there the direct kernel waits on one scalar load per
/// column and entry. Two vectors (16 f64 / 32 f32 columns) measured better than one or
/// four: four make the panel (x_rows x 256 bytes) too large for the caches
/// (docs/DESIGN-NOTES.md, cpu::spmm).
pub fn pack_vecs<V: SpmmScalar, R: SparseRows<V>>(
    isa: Isa,
    a: &R,
    layout: Layout,
    k: usize,
    x_rows: usize,
) -> usize {
    if !cfg!(target_arch = "x86_64") || isa != Isa::Avx512 || layout != Layout::ColMajor || k < 2 {
        return 0;
    }
    let m = a.nrows();
    let sc = scattered(a, 0, m, x_rows, false);
    let pack = sc
        || (k >= PACK_MIN_K.load(Ordering::Relaxed)
            && (a.start(m).wrapping_sub(a.start(0)) >= PACK_ROW_NNZ.saturating_mul(m)
                || x_rows.saturating_mul(PACK_FEW_X_ROWS) <= m
                || span_exceeds(
                    a,
                    0,
                    m,
                    x_rows,
                    false,
                    TILE_SPAN_BYTES.load(Ordering::Relaxed),
                )));
    if !pack {
        return 0;
    }
    let max = PANEL_VECS.load(Ordering::Relaxed).clamp(1, 4);
    let row_bytes = 64 * max;
    if sc && max > 1 && x_rows.saturating_mul(row_bytes) > SCATTERED_PANEL_BYTES {
        1
    } else {
        max
    }
}

#[inline(always)]
fn chunk_generic<V: SpmmScalar, R: SparseRows<V>, const FMA: bool, const AVX512: bool>(
    a: &R,
    lo: usize,
    hi: usize,
    d: &Dense<V>,
) {
    if d.alpha == V::ZERO {
        scale_rows(lo, hi, d);
        return;
    }
    let col_panels = d.k > 1 && d.layout == Layout::ColMajor;
    let max = if !col_panels {
        BLOCK_NNZ
    } else if span_exceeds(
        a,
        lo,
        hi,
        d.x_rows,
        d.a_checked,
        TILE_SPAN_BYTES.load(Ordering::Relaxed),
    ) {
        // X's columns are read all over: a small tile would make every column group sweep
        // all of X between reuses (X rarely fits in cache for large k), so each group makes
        // one pass over the whole chunk instead. A is then re-read once per group (a
        // stream), while the group's columns of X stay in the last-level cache.
        usize::MAX
    } else {
        TILE_NNZ
    };
    #[cfg(target_arch = "x86_64")]
    if AVX512
        && !col_panels
        && d.k > 1
        && d.k <= 4 * V::L
        && !d.a_checked
        && a.inline_limit().is_some()
    {
        // The AVX-512 row-major kernel proves A's rows safe as it reads them: no separate
        // `check_rows` pass over the column indices, and no blocks. Only while a row is
        // one register block (k <= 4 vectors), so its entries are read once: that is
        // where it measured faster (docs/DESIGN-NOTES.md, cpu::spmm).
        // SAFETY: `AVX512` is set only by `chunk_avx512`, which checked the features;
        // `inline_limit` is `Some`; rows [lo, hi) are this chunk's.
        unsafe { avx512::rowmajor::<V, R, true>(a, lo, hi, d) };
        return;
    }
    // SpMV rows summed through gathers where they are cheap (`fast_gather`); only on the
    // AVX-512 path, so every SpMV of a process sums its rows one way.
    let g8 = AVX512 && d.k == 1 && crate::platform::isa::fast_gather();
    // SpMV on A's own arrays proves the rows inline: no separate `check_rows` pass.
    // SAFETY: FMA is set only on paths compiled with it; rows [lo, hi) are this chunk's;
    // `g8` only on the AVX-512 path.
    if FMA
        && d.k == 1
        && !d.a_checked
        && unsafe {
            if let Some((SpmvPrep::Groups(g), first)) = d.spmv.filter(|_| !g8)
                && spmv::grouped_rows::<V, R, true>(a, g, first, lo, hi, d)
            {
                true
            } else if g8 {
                spmv::rows_checked::<V, R, true>(a, lo, hi, d)
            } else {
                spmv::rows_checked::<V, R, false>(a, lo, hi, d)
            }
        }
    {
        return;
    }
    // A checked in full: an SpMV needs no blocks (they exist for the check of each block
    // while it is in L1), so its rows run in one kernel call.
    if d.k == 1 && d.a_checked {
        // SAFETY: every row of A was validated in this call; rows [lo, hi) are this
        // chunk's; `g8` only on the AVX-512 path; the analysis was made from A as it is
        // (`Problem::spmv`); the diagonal kernel runs only on the AVX-512 path.
        unsafe {
            // Gathers sum in their own order, which the kernels of the analyses do not keep.
            let done = match d.spmv.filter(|_| FMA && !g8) {
                #[cfg(target_arch = "x86_64")]
                Some((SpmvPrep::Diags(dr), first)) if AVX512 => {
                    spmv::diag_rows::<V, R>(a, dr, first, lo, hi, d)
                }
                Some((SpmvPrep::Ordered(o), first)) => {
                    spmv::ordered_rows::<V, R>(a, o, first, lo, hi, d)
                }
                Some((SpmvPrep::Groups(g), first)) => {
                    spmv::grouped_rows::<V, R, false>(a, g, first, lo, hi, d)
                }
                _ => false,
            };
            if done {
                return;
            }
            if g8 {
                spmv::rows::<V, R, FMA, true>(a, lo, hi, d);
            } else {
                spmv::rows::<V, R, FMA, false>(a, lo, hi, d);
            }
        }
        return;
    }
    let mut b0 = lo;
    while b0 < hi {
        let b1 = block_end(a, b0, hi, max);
        if !d.a_checked {
            a.check_rows(b0, b1, d.x_rows);
        }
        // SAFETY: rows [b0, b1) passed `check_rows` against X's rows (or A was validated in
        // full in this call), which is what the kernels' unchecked reads of A and X need;
        // they belong to this chunk, so their rows of Y are this thread's.
        unsafe {
            if d.k == 1 {
                if g8 {
                    spmv::rows::<V, R, FMA, true>(a, b0, b1, d);
                } else {
                    spmv::rows::<V, R, FMA, false>(a, b0, b1, d);
                }
            } else if col_panels {
                colmajor::rows::<V, R, FMA>(a, b0, b1, d);
            } else {
                // `AVX512` is set only by `chunk_avx512`, which checked the features.
                #[cfg(target_arch = "x86_64")]
                if AVX512 {
                    avx512::rowmajor::<V, R, false>(a, b0, b1, d);
                } else {
                    rowmajor::rows::<V, R, FMA>(a, b0, b1, d);
                }
                #[cfg(not(target_arch = "x86_64"))]
                rowmajor::rows::<V, R, FMA>(a, b0, b1, d);
            }
        }
        b0 = b1;
    }
}

/// alpha = 0: Y = beta * Y for rows `[lo, hi)`; A and X are not read, and Y is not read
/// when beta = 0.
#[inline(always)]
fn scale_rows<V: SpmmScalar>(lo: usize, hi: usize, d: &Dense<V>) {
    for i in lo..hi {
        for j in 0..d.k {
            let off = match d.layout {
                Layout::RowMajor => i * d.ldy + j,
                Layout::ColMajor => j * d.ldy + i,
            };
            // SAFETY: (i, j) is inside Y's checked shape and row i belongs to this chunk.
            unsafe {
                let y = d.y.at(off);
                *y = if d.beta == V::ZERO {
                    V::ZERO
                } else {
                    d.beta * *y
                };
            }
        }
    }
}

/// `alpha * acc + beta * y` into `*y`, not reading `*y` when beta = 0.
///
/// # Safety
/// `y` is valid and owned by the calling chunk.
#[inline(always)]
pub(crate) unsafe fn store<V: SpmmScalar>(y: *mut V, acc: V, alpha: V, beta: V) {
    // SAFETY: per the contract.
    unsafe {
        *y = if beta == V::ZERO {
            alpha * acc
        } else {
            alpha * acc + beta * *y
        };
    }
}
