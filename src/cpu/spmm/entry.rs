//! The CPU SpMM driver: Y = alpha * op(A) * X + beta * Y on the handle's workers, with the
//! analysis that repeated products reuse (a row partition balanced by nonzeros and, for
//! A^T, the transposed structure). Argument checks and the backend choice are made above.

use super::rows::{CsrRows, SparseRows, TransposedRows};
use super::{self as kern, Isa, PackScratch, Problem, SpmmScalar, SpmvPrep};
use crate::common::csr::CsrRef;
use crate::common::memory::{Footprint, bytes_of};
use crate::common::options::{Layout, Op};
use crate::common::transpose::Transpose;
use crate::cpu::Ctx;
use crate::error::{Error, Result, Status};
use crate::platform::alloc::try_filled;
use crate::platform::workers::call_overhead_bytes;
use crate::types::{Idx, Scalar};

/// Value types whose packed-panel scratch the handle keeps.
pub trait PackValue: SpmmScalar {
    fn scratch(s: &mut PackScratch) -> &mut Vec<Self>;
}

impl PackValue for f32 {
    fn scratch(s: &mut PackScratch) -> &mut Vec<f32> {
        &mut s.f32
    }
}

impl PackValue for f64 {
    fn scratch(s: &mut PackScratch) -> &mut Vec<f64> {
        &mut s.f64
    }
}

/// What the CPU precomputes for a matrix used in many products: a row partition balanced
/// by nonzeros for `threads` workers and, for op(A) = A^T or A^H, the transposed structure.
pub struct Analysis {
    pub threads: usize,
    pub bounds: Vec<usize>,
    pub transpose: Option<Transpose>,
}

impl Analysis {
    /// Row chunks of the stored partition.
    pub fn chunks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Bytes held (partition and transposed structure).
    pub fn bytes(&self) -> usize {
        let t = self.transpose.as_ref().map_or(0, |t| {
            (t.offsets.len() + 2 * t.nnz()) * std::mem::size_of::<usize>()
        });
        t + self.bounds.len() * std::mem::size_of::<usize>()
    }
}

/// Bytes [`analyse`] allocates for A of `ncols` columns and `nnz` entries: A^T's structure
/// at its peak for a transposing `op`, and the row partition (at most 8 chunks per thread,
/// see `chunk_count`).
pub fn analysis_footprint(threads: usize, op: Op, ncols: usize, nnz: usize) -> Footprint {
    let mut f = Footprint::default();
    if op.transposes() {
        f.add(
            "transpose of A",
            Transpose::<usize, usize>::peak_bytes(ncols, nnz),
        );
    }
    // The partition is collected, then one bound pushed: the vector may double.
    f.add(
        "row partition",
        bytes_of::<usize>(3 * (threads.saturating_mul(8) + 1)),
    );
    f.add("worker queues", call_overhead_bytes(threads));
    f
}

/// The analysis of A (valid: checked by the caller) for `op`, expecting `k_hint` columns
/// of X (0 = unknown).
pub fn analyse<O: Idx, I: Idx, V: Scalar>(
    threads: usize,
    op: Op,
    a: &CsrRef<'_, O, I, V>,
    k_hint: usize,
) -> Result<Analysis> {
    let vals = a.values().unwrap_or(&[]);
    let k_est = k_hint.max(1);
    let (bounds, transpose) = match op {
        Op::NonTranspose => {
            let rows = CsrRows { csr: *a, vals };
            let parts = kern::chunk_count(&rows, k_est, threads);
            (kern::partition(&rows, parts), None)
        }
        // A^H has A^T's structure (the conjugation is applied to values as they are read).
        Op::Transpose | Op::ConjugateTranspose => {
            let t = Transpose::build(a)?;
            let rows = TransposedRows { t: &t, vals };
            let parts = kern::chunk_count(&rows, k_est, threads);
            (kern::partition(&rows, parts), Some(t))
        }
    };
    Ok(Analysis {
        threads,
        bounds,
        transpose,
    })
}

/// X and Y of a product, typed: X has `x_rows` rows, both have `k` columns in `layout`
/// with leading dimensions `ldx` and `ldy` (their extents checked by the caller; X is
/// empty when alpha is zero).
pub struct Operands<'x, V> {
    pub layout: Layout,
    pub k: usize,
    pub x: &'x [V],
    pub ldx: usize,
    pub x_rows: usize,
    pub y: &'x mut [V],
    pub ldy: usize,
}

/// Y = alpha * op(A) * X + beta * Y on the CPU. `a_checked`: A was validated in full in
/// this call, so the kernels may skip their per-block checks. `analysis`, if given, was
/// made for A's structure and `op`. `spmv`: an analysis of A for an SpMV and the row of
/// the analysed matrix that A's row 0 is (`kern::Problem::spmv`; those with a copy of A's
/// values are ignored unless `a_checked`).
#[allow(clippy::too_many_arguments)]
pub fn spmm_grouped<O: Idx, I: Idx, V: PackValue>(
    ctx: &Ctx<'_>,
    op: Op,
    (alpha, beta): (V, V),
    a: &CsrRef<'_, O, I, V>,
    analysis: Option<&Analysis>,
    a_checked: bool,
    spmv: Option<(SpmvPrep<'_, V>, usize)>,
    d: Operands<'_, V>,
) -> Result<()> {
    let isa = Isa::detect();
    let Operands {
        layout,
        k,
        x,
        ldx,
        x_rows,
        y,
        ldy,
    } = d;
    let y_rows = op.shape(a.nrows(), a.ncols()).0;
    if k == 0 || y_rows == 0 {
        return Ok(());
    }
    if alpha == V::ZERO {
        let p = Problem {
            k,
            layout,
            alpha,
            beta,
            x: &[],
            ldx,
            x_rows: 0,
            y,
            ldy,
            a_checked: true,
            pack: None,
            pack_vecs: 0,
            pack_window: 0,
            spmv: None,
        };
        on_pool::<V, _>(ctx, &NoRows(y_rows), k, |t, pool| {
            kern::run(isa, &NoRows(y_rows), p, None, t, pool)
        });
        return Ok(());
    }
    let vals = a.values().ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            "A has no values (pattern-only descriptor); SpMM needs values",
        )
    })?;
    let bounds = analysis
        .filter(|an| an.threads == ctx.threads)
        .map(|an| an.bounds.as_slice());
    let p = Problem {
        k,
        layout,
        alpha,
        beta,
        x,
        ldx,
        x_rows,
        y,
        ldy,
        a_checked,
        pack: None,
        pack_vecs: 0,
        pack_window: 0,
        spmv: spmv.filter(|(s, _)| op == Op::NonTranspose && (a_checked || !s.copies_values())),
    };
    match op {
        Op::NonTranspose => {
            let rows = CsrRows { csr: *a, vals };
            run_on(ctx, isa, &rows, p, bounds);
        }
        // Real values: A^H is A^T.
        Op::Transpose | Op::ConjugateTranspose => {
            let owned;
            let t = match analysis.and_then(|an| an.transpose.as_ref()) {
                Some(t) => t,
                None => {
                    owned = Transpose::build(a)?;
                    &owned
                }
            };
            let rows = TransposedRows { t, vals };
            run_on(ctx, isa, &rows, p, bounds);
        }
    }
    Ok(())
}

/// Rows of nothing: Y's shape for alpha = 0, where A is not read.
struct NoRows(usize);
impl<V: Scalar> SparseRows<V> for NoRows {
    fn nrows(&self) -> usize {
        self.0
    }
    fn start(&self, _: usize) -> usize {
        0
    }
    fn check_rows(&self, _: usize, _: usize, _: usize) {}
    unsafe fn col(&self, _: usize) -> usize {
        unreachable!("a matrix without entries has no entry to read")
    }
    unsafe fn val(&self, _: usize) -> V {
        unreachable!("a matrix without entries has no entry to read")
    }
}

/// Runs `f(threads, pool)` on the calling thread: with the handle's workers beside it when
/// the product is worth splitting (`kern::for_each_part`), else alone with `threads = 1`
/// (for a small product a wake-up would cost more than the work).
fn on_pool<V: Scalar, R: SparseRows<V>>(
    ctx: &Ctx<'_>,
    rows: &R,
    k: usize,
    f: impl FnOnce(usize, Option<&rayon::ThreadPool>),
) {
    let threads = ctx.threads;
    let split = kern::chunk_count(rows, k, threads) > 1;
    match split.then(|| ctx.pool_or_caller()).flatten() {
        Some(pool) => f(threads, Some(pool)),
        None => f(1, None),
    }
}

/// Runs the kernels, lending them the handle's packed-panel scratch when they would use it
/// (grown on first use; if it cannot be grown the direct kernels run instead).
fn run_on<V: PackValue, R: SparseRows<V>>(
    ctx: &Ctx<'_>,
    isa: Isa,
    rows: &R,
    p: Problem<'_, V>,
    bounds: Option<&[usize]>,
) {
    let k = p.k;
    let mut nv = kern::pack_vecs(isa, rows, p.layout, k, p.x_rows);
    let mut window = 0;
    // A ring with narrower panels than packing's loses to it (lap3d_7pt_64, k = 64).
    if (nv == 0 || kern::window_first(rows, p.x_rows))
        && ctx.threads < 64
        && let Some((v, w)) = kern::window_plan(isa, rows, p.layout, k, p.x_rows)
        && v >= nv
    {
        (nv, window) = (v, w);
    }
    if nv == 0 {
        on_pool(ctx, rows, k, |t, pool| {
            kern::run(isa, rows, p, bounds, t, pool)
        });
        return;
    }
    let mut guard = ctx.state.spmm_pack.lock();
    let buf = V::scratch(&mut guard);
    let need = if window > 0 {
        kern::window_len::<V>(window, k, nv, ctx.threads)
    } else {
        kern::pack_len::<V>(p.x_rows, k, nv)
    }
    .unwrap_or(usize::MAX);
    if buf.len() < need
        && let Ok(v) = try_filled(need, V::ZERO, "SpMM packed panel")
    {
        *buf = v;
    }
    let pack = if buf.len() >= need {
        Some(&mut buf[..])
    } else {
        None
    };
    let p = Problem {
        pack,
        pack_vecs: nv,
        pack_window: window,
        ..p
    };
    on_pool(ctx, rows, k, |t, pool| {
        kern::run(isa, rows, p, bounds, t, pool)
    });
}
