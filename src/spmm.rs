//! Typed SpMM: Y = alpha * op(A) * X + beta * Y with A a CSR matrix (any index, value and
//! base combination) and X, Y dense (row- or column-major, with leading dimensions).
//! Argument checks live here; kernels are in `crate::cpu::spmm`.
//!
//! BLAS conventions: beta = 0 means Y is not read (NaN or garbage in Y does not leak);
//! alpha = 0 means A and X are not read. Results are bitwise identical for any thread count
//! (each entry of Y is computed by one thread, summing its row of op(A) in an order fixed
//! by the row alone).

use crate::cpu::spmm::rows::{CsrRows, SparseRows, TransposedRows};
use crate::cpu::spmm::transpose::Transpose;
use crate::cpu::spmm::{self as kern, Isa, PackScratch, Problem, SpmmScalar};
use crate::csr::{AnyCsr, CsrRef, TypeSig, ValueSlice, prefix};
use crate::cuda;
use crate::error::{Error, Result, Status, err};
use crate::handle::Handle;
use crate::output::ValueSliceMut;
use crate::types::{Idx, IndexType, ValueType};

pub use crate::cpu::spmm::Layout;

/// op(A) (codes as in the header's `SPGEMM_OPERATION_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    NonTranspose = 0,
    Transpose = 1,
}

impl Op {
    pub fn from_code(code: i32) -> Option<Op> {
        match code {
            0 => Some(Op::NonTranspose),
            1 => Some(Op::Transpose),
            _ => None,
        }
    }
}

impl Layout {
    pub fn from_code(code: i32) -> Option<Layout> {
        match code {
            0 => Some(Layout::RowMajor),
            1 => Some(Layout::ColMajor),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "column-major",
        }
    }
}

/// Rows of X and of Y for op(A) with A of shape `nrows` x `ncols`.
pub fn operand_rows(op: Op, nrows: usize, ncols: usize) -> (usize, usize) {
    match op {
        Op::NonTranspose => (ncols, nrows),
        Op::Transpose => (nrows, ncols),
    }
}

/// Checks the leading dimension of a dense operand (`name`: "X" or "Y") of `rows` x `k`
/// and returns the number of entries it spans.
pub fn dense_extent(name: &str, layout: Layout, rows: usize, k: usize, ld: usize) -> Result<usize> {
    if k == 0 {
        // No column: nothing of the operand is read or written, whatever its stride.
        return Ok(0);
    }
    let (min_ld, what) = match layout {
        Layout::RowMajor => (k.max(1), "k (its row length)"),
        Layout::ColMajor => (rows.max(1), "its number of rows"),
    };
    if ld < min_ld {
        let ldname = if name == "X" { "ldx" } else { "ldy" };
        return err(
            Status::InvalidValue,
            format!(
                "{ldname} = {ld} is smaller than {what} = {min_ld} for {} {name} ({rows} x {k})",
                layout.name()
            ),
        );
    }
    kern::dense_len(layout, rows, k, ld).ok_or_else(|| {
        Error::new(
            Status::IndexOverflow,
            format!("{name}: {rows} x {k} with leading dimension {ld} exceeds the address space"),
        )
    })
}

/// What `analyse` precomputes for a matrix used in many products (the counterpart of MKL's
/// `mkl_sparse_set_mm_hint` + `mkl_sparse_optimize`): full validation once, a row
/// partition balanced by nonzeros for the handle's thread count, a structure digest to
/// detect later structure changes, and for op(A) = A^T the transposed structure.
/// Values of A may change between products; its structure may not.
pub struct SpmmAnalysis {
    sig: TypeSig,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    digest: u64,
    op: Op,
    layout: Layout,
    k_hint: usize,
    threads: usize,
    bounds: Vec<usize>,
    transpose: Option<Transpose>,
}

impl SpmmAnalysis {
    pub fn op(&self) -> Op {
        self.op
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    pub fn k_hint(&self) -> usize {
        self.k_hint
    }
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

    fn check_matches(&self, a: &AnyCsr<'_>) -> Result<()> {
        let mismatch = |what: String| {
            Err(Error::new(
                Status::PlanMismatch,
                format!("A does not match the analysis: {what}"),
            ))
        };
        if a.sig() != self.sig {
            return mismatch(format!("A has {}, the analysis {}", a.sig(), self.sig));
        }
        if (a.nrows, a.ncols) != (self.nrows, self.ncols) {
            return mismatch(format!(
                "A is {} x {}, the analysis was made for {} x {}",
                a.nrows, a.ncols, self.nrows, self.ncols
            ));
        }
        if a.nnz() != self.nnz {
            return mismatch(format!(
                "A has {} entries, the analysis was made for {}",
                a.nnz(),
                self.nnz
            ));
        }
        Ok(())
    }
}

/// Dense operands of a product, type-erased (their value type must be A's).
pub struct DenseArgs<'a> {
    pub layout: Layout,
    pub k: usize,
    pub x: ValueSlice<'a>,
    pub ldx: usize,
    pub y: ValueSliceMut<'a>,
    pub ldy: usize,
}

macro_rules! dispatch_sig {
    ($sig:expr, $go:ident) => {
        match ($sig.offsets, $sig.indices, $sig.values) {
            (IndexType::Int32, IndexType::Int32, ValueType::Float32) => $go!(i32, i32, f32),
            (IndexType::Int32, IndexType::Int32, ValueType::Float64) => $go!(i32, i32, f64),
            (IndexType::Int32, IndexType::Int64, ValueType::Float32) => $go!(i32, i64, f32),
            (IndexType::Int32, IndexType::Int64, ValueType::Float64) => $go!(i32, i64, f64),
            (IndexType::Int64, IndexType::Int32, ValueType::Float32) => $go!(i64, i32, f32),
            (IndexType::Int64, IndexType::Int32, ValueType::Float64) => $go!(i64, i32, f64),
            (IndexType::Int64, IndexType::Int64, ValueType::Float32) => $go!(i64, i64, f32),
            (IndexType::Int64, IndexType::Int64, ValueType::Float64) => $go!(i64, i64, f64),
            (IndexType::SizeT, IndexType::Int32, ValueType::Float32) => $go!(u64, i32, f32),
            (IndexType::SizeT, IndexType::Int32, ValueType::Float64) => $go!(u64, i32, f64),
            (IndexType::SizeT, IndexType::Int64, ValueType::Float32) => $go!(u64, i64, f32),
            (IndexType::SizeT, IndexType::Int64, ValueType::Float64) => $go!(u64, i64, f64),
            (_, IndexType::SizeT, _) => err(
                Status::TypeMismatch,
                "size_t column indices are not supported (use int32 or int64)",
            ),
        }
    };
}

/// Value types of X and Y, recovered from the erased slices.
trait DenseValue: SpmmScalar {
    fn scratch(s: &mut PackScratch) -> &mut Vec<Self>;
    fn x(s: ValueSlice<'_>) -> Option<&[Self]>;
    fn y(s: ValueSliceMut<'_>) -> Option<&mut [Self]>;
}

impl DenseValue for f32 {
    fn scratch(s: &mut PackScratch) -> &mut Vec<f32> {
        &mut s.f32
    }
    fn x(s: ValueSlice<'_>) -> Option<&[f32]> {
        if let ValueSlice::F32(v) = s {
            Some(v)
        } else {
            None
        }
    }
    fn y(s: ValueSliceMut<'_>) -> Option<&mut [f32]> {
        if let ValueSliceMut::F32(v) = s {
            Some(v)
        } else {
            None
        }
    }
}

impl DenseValue for f64 {
    fn scratch(s: &mut PackScratch) -> &mut Vec<f64> {
        &mut s.f64
    }
    fn x(s: ValueSlice<'_>) -> Option<&[f64]> {
        if let ValueSlice::F64(v) = s {
            Some(v)
        } else {
            None
        }
    }
    fn y(s: ValueSliceMut<'_>) -> Option<&mut [f64]> {
        if let ValueSliceMut::F64(v) = s {
            Some(v)
        } else {
            None
        }
    }
}

fn value_kind(s: &ValueSlice<'_>) -> ValueType {
    match s {
        ValueSlice::F32(_) => ValueType::Float32,
        ValueSlice::F64(_) => ValueType::Float64,
    }
}

/// Precomputes what repeated products with A and `op` reuse (see `SpmmAnalysis`). A is
/// validated fully, whatever the handle's validation option. `layout` and `k_hint` record
/// the expected use (0 = unknown).
pub fn analyse(
    h: &Handle,
    op: Op,
    a: &AnyCsr<'_>,
    layout: Layout,
    k_hint: usize,
) -> Result<SpmmAnalysis> {
    macro_rules! go {
        ($o:ty, $i:ty, $v:ty) => {{
            let t = a.typed::<$o, $i, $v>().map_err(|e| prefix("A", e))?;
            h.install(|| analyse_typed(h.threads(), op, t, layout, k_hint))
        }};
    }
    dispatch_sig!(a.sig(), go)
}

fn analyse_typed<O: Idx, I: Idx, V: DenseValue>(
    threads: usize,
    op: Op,
    a: CsrRef<'_, O, I, V>,
    layout: Layout,
    k_hint: usize,
) -> Result<SpmmAnalysis> {
    // One pass checks A and takes its digest.
    let digest = a.validate_and_digest("A")?;
    let vals = a.values().unwrap_or(&[]);
    let k_est = k_hint.max(1);
    let (bounds, transpose) = match op {
        Op::NonTranspose => {
            let rows = CsrRows { csr: a, vals };
            let parts = kern::chunk_count(&rows, k_est, threads);
            (kern::partition(&rows, parts), None)
        }
        Op::Transpose => {
            let t = Transpose::build(&a)?;
            let rows = TransposedRows { t: &t, vals };
            let parts = kern::chunk_count(&rows, k_est, threads);
            (kern::partition(&rows, parts), Some(t))
        }
    };
    Ok(SpmmAnalysis {
        sig: a_sig::<O, I, V>(),
        nrows: a.nrows(),
        ncols: a.ncols(),
        nnz: a.nnz(),
        digest,
        op,
        layout,
        k_hint,
        threads,
        bounds,
        transpose,
    })
}

fn a_sig<O: Idx, I: Idx, V: DenseValue>() -> TypeSig {
    TypeSig {
        offsets: O::KIND,
        indices: I::KIND,
        values: V::KIND,
    }
}

/// Y = alpha * op(A) * X + beta * Y. X is rows(op(A))... precisely: X has ncols(op(A))
/// rows and `k` columns, Y has nrows(op(A)) rows and `k` columns, both in `d.layout` with
/// leading dimensions `d.ldx`, `d.ldy`; their slices must span at least what
/// `dense_extent` gives (X may be empty when alpha = 0). `analysis`, if given, must have
/// been made for A's structure; it is used when its op matches.
pub fn spmm(
    h: &Handle,
    op: Op,
    alpha: f64,
    a: &AnyCsr<'_>,
    analysis: Option<&SpmmAnalysis>,
    beta: f64,
    d: DenseArgs<'_>,
) -> Result<()> {
    crate::exec::guarded(h, &[("A", a)], || {
        spmm_unguarded(h, op, alpha, a, analysis, beta, d)
    })
}

fn spmm_unguarded(
    h: &Handle,
    op: Op,
    alpha: f64,
    a: &AnyCsr<'_>,
    analysis: Option<&SpmmAnalysis>,
    beta: f64,
    d: DenseArgs<'_>,
) -> Result<()> {
    let (x_rows, y_rows) = operand_rows(op, a.nrows, a.ncols);
    let nx = dense_extent("X", d.layout, x_rows, d.k, d.ldx)?;
    let ny = dense_extent("Y", d.layout, y_rows, d.k, d.ldy)?;
    if value_kind(&d.x) != a.value_type || d.y.kind() != a.value_type {
        return err(
            Status::TypeMismatch,
            format!(
                "X and Y must hold A's value type ({}); X holds {}, Y holds {}",
                a.value_type.name(),
                value_kind(&d.x).name(),
                d.y.kind().name()
            ),
        );
    }
    if let Some(an) = analysis {
        an.check_matches(a)?;
    }
    macro_rules! go {
        ($o:ty, $i:ty, $v:ty) => {{
            let t = a.typed::<$o, $i, $v>().map_err(|e| prefix("A", e))?;
            let x = <$v>::x(d.x).expect("type checked");
            let y = <$v>::y(d.y).expect("type checked");
            let alpha_v = <$v as crate::types::Scalar>::from_f64(alpha);
            if alpha_v != 0.0 && x.len() < nx {
                return err(
                    Status::InvalidValue,
                    format!("X has {} entries, {nx} needed", x.len()),
                );
            }
            if y.len() < ny {
                return err(
                    Status::InvalidValue,
                    format!("Y has {} entries, {ny} needed", y.len()),
                );
            }
            let x = if alpha_v != 0.0 { &x[..nx] } else { &[][..] };
            let y = &mut y[..ny];
            let beta_v = <$v as crate::types::Scalar>::from_f64(beta);
            spmm_typed(
                h, op, alpha_v, t, analysis, d.layout, d.k, x, d.ldx, x_rows, beta_v, y, d.ldy,
            )
        }};
    }
    dispatch_sig!(a.sig(), go)
}

/// Rows of nothing: Y's shape for alpha = 0, where A is not read.
struct NoRows(usize);
impl<V: crate::types::Scalar> SparseRows<V> for NoRows {
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
fn on_pool<V: crate::types::Scalar, R: SparseRows<V>>(
    h: &Handle,
    rows: &R,
    k: usize,
    f: impl FnOnce(usize, Option<&rayon::ThreadPool>),
) {
    let threads = h.threads();
    if kern::chunk_count(rows, k, threads) > 1 {
        f(threads, Some(h.pool()));
    } else {
        f(1, None);
    }
}

#[allow(clippy::too_many_arguments)]
fn spmm_typed<O: Idx, I: Idx, V: DenseValue>(
    h: &Handle,
    op: Op,
    alpha: V,
    a: CsrRef<'_, O, I, V>,
    analysis: Option<&SpmmAnalysis>,
    layout: Layout,
    k: usize,
    x: &[V],
    ldx: usize,
    x_rows: usize,
    beta: V,
    y: &mut [V],
    ldy: usize,
) -> Result<()> {
    let isa = Isa::detect();
    let threads = h.threads();
    let (_, y_rows) = operand_rows(op, a.nrows(), a.ncols());
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
        };
        on_pool::<V, _>(h, &NoRows(y_rows), k, |t, pool| {
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
    // Backend: the GPU kernels take op(A) = A (see `cuda::spmm_where`).
    let transposed = op == Op::Transpose;
    if cuda::spmm_where(h, transposed, a.nnz())? == cuda::SpmmWhere::Gpu {
        let row_major = layout == Layout::RowMajor;
        match cuda::gpu_spmm(h, &a, row_major, k, x, ldx, alpha, beta, y, ldy) {
            // Auto falls back to the CPU for sizes beyond 32-bit device indices.
            Err(e)
                if e.status == Status::NotSupported
                    && h.options.backend == crate::handle::Backend::Auto => {}
            r => return r,
        }
    }
    let analysis = analysis.filter(|an| an.op == op);
    // Whether A was validated in full in this call, so the kernels may skip their per-block
    // checks (with an analysis only its digest is compared: the kernels still check).
    let mut a_checked = false;
    if h.options.validate {
        match analysis {
            // Validated when the analysis was made; check that the structure is the same.
            Some(an) => {
                if h.install(|| a.structure_digest()) != an.digest {
                    return err(
                        Status::PlanMismatch,
                        "A's structure (row offsets or column indices) changed since the analysis",
                    );
                }
            }
            None => {
                h.install(|| a.validate("A"))?;
                a_checked = true;
            }
        }
    }
    let bounds = analysis
        .filter(|an| an.threads == threads)
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
    };
    match op {
        Op::NonTranspose => {
            let rows = CsrRows { csr: a, vals };
            run_on(h, isa, &rows, p, bounds);
        }
        Op::Transpose => {
            let owned;
            let t = match analysis.and_then(|an| an.transpose.as_ref()) {
                Some(t) => t,
                None => {
                    owned = Transpose::build(&a)?;
                    &owned
                }
            };
            let rows = TransposedRows { t, vals };
            run_on(h, isa, &rows, p, bounds);
        }
    }
    Ok(())
}

/// Runs the kernels, lending them the handle's packed-panel scratch when they would use it
/// (grown on first use; if it cannot be grown the direct kernels run instead).
fn run_on<V: DenseValue, R: SparseRows<V>>(
    h: &Handle,
    isa: Isa,
    rows: &R,
    p: Problem<'_, V>,
    bounds: Option<&[usize]>,
) {
    let k = p.k;
    let mut nv = kern::pack_vecs(isa, rows, p.layout, k, p.x_rows);
    let mut window = 0;
    if nv == 0
        && h.threads() < 64
        && let Some((v, w)) = kern::window_plan(isa, rows, p.layout, k, p.x_rows)
    {
        (nv, window) = (v, w);
    }
    if nv == 0 {
        on_pool(h, rows, k, |t, pool| {
            kern::run(isa, rows, p, bounds, t, pool)
        });
        return;
    }
    let mut guard = h.spmm_pack.lock();
    let buf = V::scratch(&mut guard);
    let need = if window > 0 {
        kern::window_len::<V>(window, k, nv, h.threads())
    } else {
        kern::pack_len::<V>(p.x_rows, k, nv)
    }
    .unwrap_or(usize::MAX);
    if buf.len() < need
        && let Ok(v) = crate::alloc::try_filled(need, V::ZERO, "SpMM packed panel")
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
    on_pool(h, rows, k, |t, pool| {
        kern::run(isa, rows, p, bounds, t, pool)
    });
}
