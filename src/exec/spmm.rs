//! SpMM dispatch: Y = alpha * op(A) * X + beta * Y with A a CSR matrix (any index, value
//! and base combination), op(A) = A, A^T or A^H, and X, Y dense (row- or column-major, with
//! leading dimensions); alpha and beta have A's value type. The argument checks,
//! validation and the analysis object are here once. Where it runs: `Cuda` needs real
//! values, op(A) = A (the GPU kernels read A by rows) and a usable device; `Auto` takes the
//! GPU only when one is usable, the values are real, op(A) = A and A holds at least
//! [`AUTO_MIN_INPUT_NNZ`] entries; else the CPU (vector kernels for real values, a generic
//! row kernel for complex ones).
//!
//! BLAS conventions: beta = 0 means Y is not read (NaN or garbage in Y does not leak);
//! alpha = 0 means A and X are not read. Results are bitwise identical for any thread count
//! (each entry of Y is computed by one thread, summing its row of op(A) in an order fixed
//! by the row alone).

use super::engine::{AUTO_MIN_INPUT_NNZ, Engine};
use crate::common::check::{dense_extent, operand_rows, sig_of};
use crate::common::csr::{AnyCsr, CsrRef, FromAny, TypeSig, ValueSlice, prefix};
use crate::common::options::{Backend, Layout, Op, Options};
use crate::common::slices::ValueSliceMut;
use crate::cpu::Ctx;
use crate::cpu::row_groups::RowGroups;
use crate::cpu::spmm::SpmvPrep;
use crate::cpu::spmm::entry::{self, Analysis, Operands};
use crate::cpu::spmm::generic;
use crate::cuda::{self, Gpu};
use crate::error::{Error, Result, Status, err};
use crate::types::{AnyScalar, Complex32, Complex64, Idx, IndexType, Scalar, ValueType};

/// What [`analyse`] precomputes for a matrix used in many products (the counterpart of
/// MKL's `mkl_sparse_set_mm_hint` + `mkl_sparse_optimize`): full validation once, a
/// structure digest to detect later structure changes, and the CPU's analysis (a row
/// partition balanced by nonzeros for the handle's thread count and, for op(A) = A^T, the
/// transposed structure). Values of A may change between products; its structure may not.
pub struct SpmmAnalysis {
    sig: TypeSig,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    digest: u64,
    op: Op,
    layout: Layout,
    k_hint: usize,
    cpu: Analysis,
    /// A's row groups for SpMVs (op(A) = A, a k hint of 0 or 1; PETSc's inodes).
    groups: Option<RowGroups>,
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
        self.cpu.chunks()
    }
    /// Bytes held (partition, transposed structure, row groups).
    pub fn bytes(&self) -> usize {
        self.cpu.bytes() + self.groups.as_ref().map_or(0, |g| 4 * (g.len() + 1))
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
            (IndexType::Int32, IndexType::Int32, ValueType::Complex32) => $go!(i32, i32, Complex32),
            (IndexType::Int32, IndexType::Int32, ValueType::Complex64) => $go!(i32, i32, Complex64),
            (IndexType::Int32, IndexType::Int64, ValueType::Float32) => $go!(i32, i64, f32),
            (IndexType::Int32, IndexType::Int64, ValueType::Float64) => $go!(i32, i64, f64),
            (IndexType::Int32, IndexType::Int64, ValueType::Complex32) => $go!(i32, i64, Complex32),
            (IndexType::Int32, IndexType::Int64, ValueType::Complex64) => $go!(i32, i64, Complex64),
            (IndexType::Int64, IndexType::Int32, ValueType::Float32) => $go!(i64, i32, f32),
            (IndexType::Int64, IndexType::Int32, ValueType::Float64) => $go!(i64, i32, f64),
            (IndexType::Int64, IndexType::Int32, ValueType::Complex32) => $go!(i64, i32, Complex32),
            (IndexType::Int64, IndexType::Int32, ValueType::Complex64) => $go!(i64, i32, Complex64),
            (IndexType::Int64, IndexType::Int64, ValueType::Float32) => $go!(i64, i64, f32),
            (IndexType::Int64, IndexType::Int64, ValueType::Float64) => $go!(i64, i64, f64),
            (IndexType::Int64, IndexType::Int64, ValueType::Complex32) => $go!(i64, i64, Complex32),
            (IndexType::Int64, IndexType::Int64, ValueType::Complex64) => $go!(i64, i64, Complex64),
            (IndexType::SizeT, IndexType::Int32, ValueType::Float32) => $go!(u64, i32, f32),
            (IndexType::SizeT, IndexType::Int32, ValueType::Float64) => $go!(u64, i32, f64),
            (IndexType::SizeT, IndexType::Int32, ValueType::Complex32) => $go!(u64, i32, Complex32),
            (IndexType::SizeT, IndexType::Int32, ValueType::Complex64) => $go!(u64, i32, Complex64),
            (IndexType::SizeT, IndexType::Int64, ValueType::Float32) => $go!(u64, i64, f32),
            (IndexType::SizeT, IndexType::Int64, ValueType::Float64) => $go!(u64, i64, f64),
            (IndexType::SizeT, IndexType::Int64, ValueType::Complex32) => $go!(u64, i64, Complex32),
            (IndexType::SizeT, IndexType::Int64, ValueType::Complex64) => $go!(u64, i64, Complex64),
            (_, IndexType::SizeT, _) => err(
                Status::TypeMismatch,
                "size_t column indices are not supported (use int32 or int64)",
            ),
        }
    };
}

/// Value types of SpMM: X and Y recovered from the erased slices, and the kernels that
/// take them (a backend's kernels are not instantiated for types it has none for).
trait DenseValue: Scalar + for<'x> FromAny<'x> {
    /// Whether the GPU has kernels for this type.
    const ON_GPU: bool;
    fn x(s: ValueSlice<'_>) -> Option<&[Self]>;
    fn y(s: ValueSliceMut<'_>) -> Option<&mut [Self]>;
    /// The CPU product (`entry::spmm_grouped` for real values, `generic::spmm` for complex
    /// ones).
    #[allow(clippy::too_many_arguments)]
    fn cpu<O: Idx, I: Idx>(
        ctx: &Ctx<'_>,
        op: Op,
        ab: (Self, Self),
        a: &CsrRef<'_, O, I, Self>,
        analysis: Option<&Analysis>,
        a_checked: bool,
        groups: Option<&RowGroups>,
        d: Operands<'_, Self>,
    ) -> Result<()>;
    /// The GPU product (`cuda::spmm`); only called when `ON_GPU`.
    fn gpu<O: Idx, I: Idx>(
        g: &Gpu,
        a: &CsrRef<'_, O, I, Self>,
        d: &mut Operands<'_, Self>,
        ab: (Self, Self),
    ) -> Result<()>;
}

macro_rules! gpu_spmm {
    (complex, $g:expr, $a:expr, $d:expr, $ab:expr) => {{
        let _ = ($g, $a, $d, $ab);
        err(Status::NotSupported, "complex values on the GPU")
    }};
    (real, $g:expr, $a:expr, $d:expr, $ab:expr) => {
        cuda::spmm(
            $g,
            $a,
            $d.layout,
            $d.k,
            ($d.x, $d.ldx),
            $ab,
            (&mut *$d.y, $d.ldy),
        )
    };
}

macro_rules! cpu_spmm {
    // Complex values have no grouped kernel.
    (complex, $ctx:expr, $op:expr, $ab:expr, $a:expr, $an:expr, $chk:expr, $g:expr, $d:expr) => {{
        let _ = $g;
        generic::spmm($ctx, $op, $ab, $a, $an, $chk, $d)
    }};
    (real, $ctx:expr, $op:expr, $ab:expr, $a:expr, $an:expr, $chk:expr, $g:expr, $d:expr) => {
        entry::spmm_grouped(
            $ctx,
            $op,
            $ab,
            $a,
            $an,
            $chk,
            $g.map(|g| (SpmvPrep::Groups(g), 0)),
            $d,
        )
    };
}

macro_rules! dense_value {
    ($t:ty, $var:ident, $on_gpu:expr, $kind:ident) => {
        impl DenseValue for $t {
            const ON_GPU: bool = $on_gpu;
            fn x(s: ValueSlice<'_>) -> Option<&[$t]> {
                match s {
                    ValueSlice::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn y(s: ValueSliceMut<'_>) -> Option<&mut [$t]> {
                match s {
                    ValueSliceMut::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn cpu<O: Idx, I: Idx>(
                ctx: &Ctx<'_>,
                op: Op,
                ab: ($t, $t),
                a: &CsrRef<'_, O, I, $t>,
                analysis: Option<&Analysis>,
                a_checked: bool,
                groups: Option<&RowGroups>,
                d: Operands<'_, $t>,
            ) -> Result<()> {
                cpu_spmm!($kind, ctx, op, ab, a, analysis, a_checked, groups, d)
            }
            fn gpu<O: Idx, I: Idx>(
                g: &Gpu,
                a: &CsrRef<'_, O, I, $t>,
                d: &mut Operands<'_, $t>,
                ab: ($t, $t),
            ) -> Result<()> {
                gpu_spmm!($kind, g, a, d, ab)
            }
        }
    };
}

dense_value!(f32, F32, true, real);
dense_value!(f64, F64, true, real);
dense_value!(Complex32, C32, false, complex);
dense_value!(Complex64, C64, false, complex);

/// Precomputes what repeated products with A and `op` reuse (see [`SpmmAnalysis`]). A is
/// validated fully, whatever the handle's validation option. `layout` and `k_hint` record
/// the expected use (0 = unknown).
pub fn analyse(
    e: &Engine,
    o: &Options,
    op: Op,
    a: &AnyCsr<'_>,
    layout: Layout,
    k_hint: usize,
) -> Result<SpmmAnalysis> {
    let threads = e.workers().threads();
    let mut f = entry::analysis_footprint(threads, op, a.ncols, a.nnz());
    if op == Op::NonTranspose && k_hint <= 1 {
        f.add("row groups of A", RowGroups::bytes_bound(a.nrows));
    }
    f.check(o.memory_limit, "the SpMM analysis")?;
    macro_rules! go {
        ($o:ty, $i:ty, $v:ty) => {{
            let t = a.typed::<$o, $i, $v>().map_err(|e| prefix("A", e))?;
            e.install(|| analyse_typed(e.workers().threads(), op, t, layout, k_hint))?
        }};
    }
    dispatch_sig!(a.sig(), go)
}

fn analyse_typed<O: Idx, I: Idx, V: Scalar>(
    threads: usize,
    op: Op,
    a: CsrRef<'_, O, I, V>,
    layout: Layout,
    k_hint: usize,
) -> Result<SpmmAnalysis> {
    // One pass checks A and takes its digest.
    let digest = a.validate_and_digest("A")?;
    let mut cpu = entry::analyse(threads, op, &a, k_hint)?;
    // Row groups serve SpMVs of A itself; no chunk splits one.
    let groups = if op == Op::NonTranspose && k_hint <= 1 {
        RowGroups::detect(&a)?
    } else {
        None
    };
    if let Some(g) = &groups {
        g.align(&mut cpu.bounds);
    }
    Ok(SpmmAnalysis {
        sig: sig_of::<O, I, V>(),
        nrows: a.nrows(),
        ncols: a.ncols(),
        nnz: a.nnz(),
        digest,
        op,
        layout,
        k_hint,
        cpu,
        groups,
    })
}

/// Y = alpha * op(A) * X + beta * Y. X has ncols(op(A)) rows and `k` columns, Y has
/// nrows(op(A)) rows and `k` columns, both in `d.layout` with leading dimensions `d.ldx`,
/// `d.ldy`; their slices must span at least what `dense_extent` gives (X may be empty when
/// alpha = 0); alpha, beta, X and Y have A's value type. `analysis`, if given, must have
/// been made for A's structure; it is used when its op has the same structure (A, or a
/// transpose: A^T and A^H share one).
pub fn spmm(
    e: &Engine,
    o: &Options,
    (op, alpha, beta): (Op, AnyScalar, AnyScalar),
    a: &AnyCsr<'_>,
    analysis: Option<&SpmmAnalysis>,
    d: DenseArgs<'_>,
) -> Result<()> {
    let (x_rows, y_rows) = operand_rows(op, a.nrows, a.ncols);
    let nx = dense_extent("X", d.layout, x_rows, d.k, d.ldx)?;
    let ny = dense_extent("Y", d.layout, y_rows, d.k, d.ldy)?;
    if d.x.kind() != a.value_type || d.y.kind() != a.value_type {
        return err(
            Status::TypeMismatch,
            format!(
                "X and Y must hold A's value type ({}); X holds {}, Y holds {}",
                a.value_type.name(),
                d.x.kind().name(),
                d.y.kind().name()
            ),
        );
    }
    if alpha.kind() != a.value_type || beta.kind() != a.value_type {
        return err(
            Status::TypeMismatch,
            format!(
                "alpha and beta must have A's value type ({}); alpha is {}, beta {}",
                a.value_type.name(),
                alpha.kind().name(),
                beta.kind().name()
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
            let alpha_v = <$v as Scalar>::from_any(alpha).expect("type checked");
            let zero = <$v as Scalar>::ZERO;
            if alpha_v != zero && x.len() < nx {
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
            let x = if alpha_v != zero { &x[..nx] } else { &[][..] };
            let beta_v = <$v as Scalar>::from_any(beta).expect("type checked");
            let ops = Operands {
                layout: d.layout,
                k: d.k,
                x,
                ldx: d.ldx,
                x_rows,
                y: &mut y[..ny],
                ldy: d.ldy,
            };
            spmm_typed(e, o, (op, alpha_v, beta_v), &t, analysis, ops)
        }};
    }
    dispatch_sig!(a.sig(), go)
}

fn spmm_typed<O: Idx, I: Idx, V: DenseValue>(
    e: &Engine,
    o: &Options,
    (op, alpha, beta): (Op, V, V),
    a: &CsrRef<'_, O, I, V>,
    analysis: Option<&SpmmAnalysis>,
    mut d: Operands<'_, V>,
) -> Result<()> {
    let y_rows = operand_rows(op, a.nrows(), a.ncols()).1;
    let ctx = e.cpu_ctx(o);
    // A pattern-only A (no value array, as the header defines it) is an error whatever
    // the shapes, even where nothing of A would be read.
    if a.values().is_none() {
        return err(
            Status::InvalidValue,
            "A has no values (pattern-only descriptor); SpMM needs values",
        );
    }
    // What the GPU cannot compute is refused under `Cuda` before a device is looked for.
    if o.backend == Backend::Cuda {
        if !V::ON_GPU {
            return err(
                Status::NotSupported,
                format!(
                    "{} values: the GPU SpMM computes float and double only; use \
                     SPGEMM_BACKEND_CPU or AUTO",
                    V::KIND.name()
                ),
            );
        }
        if op.transposes() {
            return err(
                Status::NotSupported,
                format!(
                    "the GPU SpMM computes op(A) = A only; for {} use SPGEMM_BACKEND_CPU or AUTO",
                    op.of("A")
                ),
            );
        }
    }
    if d.k == 0 || y_rows == 0 || alpha == V::ZERO {
        // Nothing of A is read.
        return V::cpu(&ctx, op, (alpha, beta), a, None, true, None, d);
    }
    let analysis = analysis.filter(|an| an.op.transposes() == op.transposes());
    // Whether A was validated in full in this call, so the kernels may skip their per-block
    // checks (with an analysis only its digest is compared: the kernels still check).
    let mut a_checked = false;
    if o.validate {
        match analysis {
            // Validated when the analysis was made; check that the structure is the same.
            Some(an) => {
                if e.install(|| a.structure_digest())? != an.digest {
                    return err(
                        Status::PlanMismatch,
                        "A's structure (row offsets or column indices) changed since the analysis",
                    );
                }
            }
            None => {
                e.install(|| a.validate("A"))??;
                a_checked = true;
            }
        }
    }
    let gpu = match o.backend {
        Backend::Cpu => None,
        Backend::Cuda => Some(e.gpu()?),
        Backend::Auto => e
            .gpu()
            .ok()
            .filter(|_| V::ON_GPU && op == Op::NonTranspose && a.nnz() >= AUTO_MIN_INPUT_NNZ),
    };
    if let Some(g) = gpu {
        match V::gpu(&g, a, &mut d, (alpha, beta)) {
            // Auto falls back to the CPU for sizes beyond 32-bit device indices.
            Err(err) if err.status == Status::NotSupported && o.backend == Backend::Auto => {}
            r => return r,
        }
    }
    let an = analysis.map(|an| &an.cpu);
    // A's structure is the analysed one (compared by digest with validation on; the
    // caller's promise with it off, where a broken one gives wrong sums, never a read
    // outside A or X: the grouped kernel checks the rows it reads).
    let groups = analysis
        .filter(|_| op == Op::NonTranspose && d.k == 1)
        .and_then(|an| an.groups.as_ref());
    V::cpu(&ctx, op, (alpha, beta), a, an, a_checked, groups, d)
}
