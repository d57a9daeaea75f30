//! Distributed products: the `dist` backend moves data between ranks, and its node
//! products run here, on the handle's workers, with the node backends (the CPU SpMM, or
//! the GPU's where the handle's backend and a usable device allow, as [`super::spmm`]
//! decides). Also where the API's type-erased distributed matrices and plans become the
//! backend's typed ones. Without the `mpi` feature no communicator can be made, so every
//! function here ends at `Status::NotSupported` before any work.

use super::engine::Engine;
use crate::common::csr::{AnyCsr, ValueSlice};
use crate::common::options::Options;
use crate::common::slices::ValueSliceMut;
use crate::error::Result;
use crate::types::ValueType;

pub use crate::dist::{
    Algorithm as DistAlgorithm, Candidate as DistCandidate, DistComm, Estimate as DistEstimate,
    ExecStats as DistStats, Fint, Grid as DistGrid, LocalRate as DistLocalRate,
    NetParams as DistNetParams, PlanOptions as DistPlanOptions,
};

/// One rank's part of a row-distributed sparse matrix: rows `row_start ..
/// row_start + local.nrows` of a `global_rows x global_cols` matrix, in CSR with GLOBAL
/// column indices (`local.ncols` must be `global_cols`). Ranks hold consecutive blocks in
/// rank order (rank q's starts where rank q - 1's ends, as PETSc's ownership ranges); a
/// rank may hold no rows. The columns are distributed too: rank q owns `x_range` (start,
/// count) of them, the rows of X in `Y = A X` (PETSc's local column size); `None` means
/// the same range as the rows, for a square matrix. Borrowed: nothing is copied.
#[derive(Clone, Copy)]
pub struct DistMatrix<'a> {
    pub comm: &'a DistComm,
    pub global_rows: usize,
    pub global_cols: usize,
    pub row_start: usize,
    pub x_range: Option<(usize, usize)>,
    pub local: AnyCsr<'a>,
}

/// A distributed SpMM plan for one matrix, any value type (the backend's plans are typed).
pub struct DistPlan {
    inner: Inner,
}

#[cfg(feature = "mpi")]
enum Inner {
    F32(crate::dist::Plan<f32>),
    F64(crate::dist::Plan<f64>),
}

/// No plan exists without MPI: the type is empty and its methods unreachable.
#[cfg(not(feature = "mpi"))]
enum Inner {}

/// Calls `$f` on the typed plan inside a `DistPlan`.
#[cfg(feature = "mpi")]
macro_rules! on_plan {
    ($p:expr, $x:ident => $body:expr) => {
        match $p {
            Inner::F32($x) => $body,
            Inner::F64($x) => $body,
        }
    };
}

#[cfg(not(feature = "mpi"))]
macro_rules! on_plan {
    ($p:expr, $x:ident => $body:expr) => {
        match *$p {}
    };
}

impl DistPlan {
    /// The algorithm the plan runs (never `Auto`).
    pub fn algorithm(&self) -> DistAlgorithm {
        on_plan!(&self.inner, p => p.algorithm())
    }
    /// The process grid.
    pub fn grid(&self) -> DistGrid {
        on_plan!(&self.inner, p => p.grid())
    }
    /// The model's predictions for every candidate and the choice.
    pub fn estimate(&self) -> &DistEstimate {
        on_plan!(&self.inner, p => p.estimate())
    }
    /// Bytes this rank holds for the plan, as predicted before anything was allocated.
    pub fn footprint(&self) -> usize {
        on_plan!(&self.inner, p => p.footprint())
    }
    /// Bytes this rank actually holds (equal to the footprint; for tests).
    pub fn held_bytes(&self) -> usize {
        on_plan!(&self.inner, p => p.held_bytes())
    }
    /// The model's payload bytes of one execute, all ranks together.
    pub fn predicted_bytes_total(&self) -> f64 {
        on_plan!(&self.inner, p => p.predicted_bytes_total())
    }
    /// Traffic and time of the last execute on this rank.
    pub fn last_stats(&self) -> DistStats {
        on_plan!(&self.inner, p => p.last_stats())
    }
    /// This rank's index in the plan's communicator, and the number of ranks.
    pub fn rank(&self) -> (usize, usize) {
        on_plan!(&self.inner, p => (p.rank(), p.ranks()))
    }
    /// Columns of X and Y, and their layout.
    pub fn k(&self) -> usize {
        on_plan!(&self.inner, p => p.k())
    }
    pub fn layout(&self) -> crate::common::options::Layout {
        on_plan!(&self.inner, p => p.layout())
    }
    /// Rows of X and of Y this rank passes to a product.
    pub fn local_rows(&self) -> (usize, usize) {
        on_plan!(&self.inner, p => (p.local_x_rows(), p.local_y_rows()))
    }
    /// The same outcome on every rank of the plan's communicator: a caller's checks of
    /// its arguments before a collective call on the plan. Collective.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        #[cfg(not(feature = "mpi"))]
        let _ = &r;
        on_plan!(&self.inner, p => p.agree(r))
    }
    /// The value type of A, X and Y.
    pub fn value_type(&self) -> ValueType {
        #[cfg(feature = "mpi")]
        return match self.inner {
            Inner::F32(_) => ValueType::Float32,
            Inner::F64(_) => ValueType::Float64,
        };
        #[cfg(not(feature = "mpi"))]
        match self.inner {}
    }
}

/// Checks a distributed matrix: each rank's part alone (ranges, structure, values), then
/// that the parts fit together. Collective; the same verdict on every rank.
pub fn check(e: &Engine, o: &Options, a: &DistMatrix<'_>) -> Result<()> {
    #[cfg(feature = "mpi")]
    return on::with_typed(a, on::CheckOp(on::Node { e, o }, a.comm));
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o);
        a.comm.agree(Ok(()))
    }
}

/// Every candidate's predicted time, traffic and per-rank footprint under `opts`, and the
/// model's choice, without building anything. Collective.
pub fn estimate(
    e: &Engine,
    o: &Options,
    a: &DistMatrix<'_>,
    opts: &DistPlanOptions,
) -> Result<DistEstimate> {
    #[cfg(feature = "mpi")]
    return on::with_typed(a, on::EstimateOp(on::Node { e, o }, a.comm, opts));
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, opts);
        a.comm.agree(Err(crate::dist::unavailable()))
    }
}

/// The model's prediction for every candidate at `ranks` ranks, for A held whole here
/// (see `dist::project_spmm`): each rank's rows and X rows an even split, the network and
/// local rate given. Needs no MPI. The value type sets the bytes per value.
pub fn project(
    a: &AnyCsr<'_>,
    ranks: usize,
    opts: &DistPlanOptions,
    net: DistNetParams,
    rate: &DistLocalRate,
) -> Result<(Vec<DistCandidate>, usize)> {
    let w = match a.value_type {
        ValueType::Float32 => 4,
        ValueType::Float64 => 8,
        t => {
            return crate::error::err(
                crate::error::Status::TypeMismatch,
                format!("distributed SpMM takes float32 or float64 values, not {t:?}"),
            );
        }
    };
    if ranks == 0 {
        return crate::error::err(crate::error::Status::InvalidValue, "ranks must be positive");
    }
    let (row_ptr, cols) = crate::common::csr::pattern_of(a, "A")?;
    let g = crate::dist::GlobalPattern {
        ncols: a.ncols,
        row_ptr: &row_ptr,
        cols: &cols,
    };
    Ok(crate::dist::project_spmm(
        &g,
        ranks,
        opts.k,
        w,
        opts.layout,
        net,
        rate,
    ))
}

/// Plans `Y = alpha A X + beta Y` for A (see `dist::Plan::new`). Collective.
pub fn plan(
    e: &Engine,
    o: &Options,
    a: &DistMatrix<'_>,
    opts: &DistPlanOptions,
) -> Result<DistPlan> {
    #[cfg(feature = "mpi")]
    return on::with_typed(a, on::PlanOp(on::Node { e, o }, a.comm, opts));
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, opts);
        a.comm.agree(Err(crate::dist::unavailable()))
    }
}

/// New values of the plan's matrix (same structure). Collective.
pub fn update_values(
    e: &Engine,
    o: &Options,
    plan: &mut DistPlan,
    a: &DistMatrix<'_>,
) -> Result<()> {
    #[cfg(feature = "mpi")]
    {
        // A value type other than the plan's is refused on every rank alike.
        let vt = a.local.values.map_or(a.local.value_type, |v| v.kind());
        let same = if vt == plan.value_type() {
            Ok(())
        } else {
            crate::error::err(
                crate::error::Status::TypeMismatch,
                format!(
                    "A holds {} values, the plan {}",
                    vt.name(),
                    plan.value_type().name()
                ),
            )
        };
        a.comm.agree(same)?;
        on::with_typed(a, on::UpdateOp(on::Node { e, o }, plan))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, a);
        match plan.inner {}
    }
}

/// The dense operands of one distributed product on this rank: its rows of X and of Y, in
/// the plan's layout and k, with leading dimensions. (Without MPI no plan exists to read
/// them.)
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub struct DistDense<'a> {
    pub x: ValueSlice<'a>,
    pub ldx: usize,
    pub y: ValueSliceMut<'a>,
    pub ldy: usize,
}

/// `Y = alpha A X + beta Y` with the plan. `pre` is the caller's own verdict on its
/// arguments (the C ABI's checks of its pointers): an error there on any rank is reported
/// on every rank, in the agreement the product makes anyway. Collective.
pub fn execute(
    e: &Engine,
    o: &Options,
    plan: &mut DistPlan,
    pre: Result<()>,
    (alpha, beta): (f64, f64),
    d: DistDense<'_>,
) -> Result<DistStats> {
    #[cfg(feature = "mpi")]
    {
        use crate::types::Scalar;
        let node = on::Node { e, o };
        let DistDense { x, ldx, y, ldy } = d;
        let (xk, yk) = (x.kind(), y.kind());
        let mismatch = |p: ValueType| {
            crate::error::err(
                crate::error::Status::TypeMismatch,
                format!(
                    "X and Y must hold the plan's value type ({}); X holds {}, Y holds {}",
                    p.name(),
                    xk.name(),
                    yk.name()
                ),
            )
        };
        match (&mut plan.inner, x, y) {
            (Inner::F32(p), ValueSlice::F32(x), ValueSliceMut::F32(y)) => {
                let (a, b) = (f32::from_f64(alpha), f32::from_f64(beta));
                p.execute(pre, &node, a, x, ldx, b, y, ldy)
            }
            (Inner::F64(p), ValueSlice::F64(x), ValueSliceMut::F64(y)) => {
                p.execute(pre, &node, alpha, x, ldx, beta, y, ldy)
            }
            // Empty operands of the plan's type: the mismatch is agreed like `pre`.
            (Inner::F32(p), ..) => {
                let r = pre.and(mismatch(ValueType::Float32));
                p.execute(r, &node, 0.0, &[], 1, 0.0, &mut [], 1)
            }
            (Inner::F64(p), ..) => {
                let r = pre.and(mismatch(ValueType::Float64));
                p.execute(r, &node, 0.0, &[], 1, 0.0, &mut [], 1)
            }
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, pre, alpha, beta, d);
        match plan.inner {}
    }
}

#[cfg(feature = "mpi")]
pub(super) mod on {
    use super::*;
    use crate::common::csr::{CsrRef, IndexSlice, OffsetSlice};
    use crate::common::options::{Backend, Layout, Op};
    use crate::cpu::diag_runs::DiagRuns;
    use crate::cpu::length_order::LengthOrder;
    use crate::cpu::row_groups::RowGroups;
    use crate::cpu::spmm::entry::{self, Operands, PackValue};
    use crate::cpu::spmm::{Isa, SpmvPrep};
    use crate::cuda;
    use crate::dist::{self, DistScalar, NodePrep, NodeSpmm, Plan, Tile};
    use crate::error::{Status, err};
    use crate::exec::AUTO_MIN_INPUT_NNZ;
    use crate::types::{Idx, Scalar};

    /// The node products of one call: the handle's engine and options.
    #[derive(Clone, Copy)]
    pub struct Node<'e> {
        pub e: &'e Engine,
        pub o: &'e Options,
    }

    impl Node<'_> {
        /// One tile product on the GPU where `exec::spmm` would put it (the handle's
        /// backend, a usable device and, under `Auto`, a tile of at least
        /// `AUTO_MIN_INPUT_NNZ` entries), else with the CPU kernels on the workers.
        #[allow(clippy::too_many_arguments)]
        fn run<V: PackValue>(
            &self,
            prep: Option<(&NodePrep, usize)>,
            a: CsrRef<'_, i64, i32, V>,
            layout: Layout,
            k: usize,
            x: &[V],
            ldx: usize,
            (alpha, beta): (V, V),
            y: &mut [V],
            ldy: usize,
        ) -> Result<()> {
            let gpu = match self.o.backend {
                Backend::Cpu => None,
                Backend::Cuda => Some(self.e.gpu()?),
                Backend::Auto => self.e.gpu().ok().filter(|_| a.nnz() >= AUTO_MIN_INPUT_NNZ),
            };
            if let Some(g) = gpu {
                let r = cuda::spmm(&g, &a, layout, k, (x, ldx), (alpha, beta), (&mut *y, ldy));
                match r {
                    // Auto falls back to the CPU beyond the GPU's 32-bit device indices.
                    Err(e)
                        if e.status == Status::NotSupported && self.o.backend == Backend::Auto => {}
                    r => return r,
                }
            }
            let d = Operands {
                layout,
                k,
                x,
                ldx,
                x_rows: a.ncols(),
                y,
                ldy,
            };
            let ctx = self.e.cpu_ctx(self.o);
            // The backend validated the tile: the kernels skip their per-block checks.
            let ab = (alpha, beta);
            let spmv = prep.and_then(|(p, first)| {
                let s = if let Some(g) = p.downcast_ref::<RowGroups>() {
                    SpmvPrep::Groups(g)
                } else if let Some(dr) = p.downcast_ref::<DiagRuns<V>>() {
                    SpmvPrep::Diags(dr)
                } else {
                    SpmvPrep::Ordered(p.downcast_ref::<LengthOrder<V>>()?)
                };
                Some((s, first))
            });
            entry::spmm_grouped(&ctx, Op::NonTranspose, ab, &a, None, true, spmv, d)
        }
    }

    /// An analysis of a tile whose values are `av` that holds a copy of them: its diagonal
    /// runs (`diag`, blocks of one 512-bit vector of rows) or its rows in length order;
    /// with the bytes it holds, at most `budget`.
    fn copy_prep<V: DistScalar>(
        a: &Tile<'_, V>,
        av: ValueSlice<'_>,
        diag: bool,
        budget: usize,
    ) -> Result<Option<(NodePrep, usize)>> {
        fn typed<W: Scalar>(
            t: CsrRef<'_, i64, i32, W>,
            diag: bool,
            budget: usize,
        ) -> Result<Option<(NodePrep, usize)>> {
            Ok(if diag {
                let width = 64 / std::mem::size_of::<W>();
                DiagRuns::detect(&t, width, budget)?.map(|d| {
                    let b = d.bytes();
                    (Box::new(d) as NodePrep, b)
                })
            } else {
                LengthOrder::detect(&t, budget)?.map(|o| {
                    let b = o.bytes();
                    (Box::new(o) as NodePrep, b)
                })
            })
        }
        match av {
            ValueSlice::F32(v) => typed(retyped(a, v)?, diag, budget),
            ValueSlice::F64(v) => typed(retyped(a, v)?, diag, budget),
            _ => Ok(None),
        }
    }

    /// The tile with its values as the concrete type `W`, which is `V` (the erased slice
    /// proves it).
    fn retyped<'a, V: DistScalar, W: Scalar>(
        a: &Tile<'a, V>,
        vals: &'a [W],
    ) -> Result<CsrRef<'a, i64, i32, W>> {
        CsrRef::new(
            a.nrows(),
            a.ncols(),
            0,
            a.row_offsets(),
            a.col_indices(),
            Some(vals),
        )
    }

    impl NodeSpmm for Node<'_> {
        fn spmm_prepared<V: DistScalar>(
            &self,
            prep: Option<(&NodePrep, usize)>,
            a: Tile<'_, V>,
            layout: Layout,
            k: usize,
            x: &[V],
            ldx: usize,
            alpha: V,
            beta: V,
            y: &mut [V],
            ldy: usize,
        ) -> Result<()> {
            let av = V::erase(a.values().unwrap_or(&[]));
            match (av, V::erase(x), V::erase_mut(y)) {
                (ValueSlice::F32(av), ValueSlice::F32(x), ValueSliceMut::F32(y)) => {
                    let ab = (f32::from_f64(alpha.to_f64()), f32::from_f64(beta.to_f64()));
                    self.run(prep, retyped(&a, av)?, layout, k, x, ldx, ab, y, ldy)
                }
                (ValueSlice::F64(av), ValueSlice::F64(x), ValueSliceMut::F64(y)) => {
                    let ab = (alpha.to_f64(), beta.to_f64());
                    self.run(prep, retyped(&a, av)?, layout, k, x, ldx, ab, y, ldy)
                }
                _ => err(Status::Internal, "tile, X and Y of one value type expected"),
            }
        }

        /// SpMV plans on the CPU keep, of the analyses their kernels use, the first the tile
        /// has: its diagonal runs (a copy of their values; the AVX-512 kernels), its row
        /// groups (PETSc's inodes), its rows in length order (a copy of the tile); copies
        /// only where the CPU runs the products, within `budget` bytes. None where gathers
        /// sum the rows (`fast_gather`: an order these kernels do not keep).
        fn spmm_prepare<V: DistScalar>(
            &self,
            a: Tile<'_, V>,
            k: usize,
            budget: usize,
        ) -> Result<Option<(NodePrep, usize)>> {
            let isa = Isa::detect();
            if k != 1 || isa == Isa::Base || crate::platform::isa::fast_gather() {
                return Ok(None);
            }
            let cpu_only = match self.o.backend {
                Backend::Cpu => true,
                Backend::Cuda => false,
                Backend::Auto => self.e.gpu().is_err(),
            };
            let av = V::erase(a.values().unwrap_or(&[]));
            if cpu_only
                && isa == Isa::Avx512
                && let Some(p) = self.local(|| copy_prep(&a, av, true, budget))?
            {
                return Ok(Some(p));
            }
            if let Some(g) = self.local(|| RowGroups::detect(&a))? {
                let bytes = g.bytes();
                return Ok(Some((Box::new(g) as NodePrep, bytes)));
            }
            if cpu_only {
                return self.local(|| copy_prep(&a, av, false, budget));
            }
            Ok(None)
        }

        fn local<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
            // Workers that cannot start: the checks run on the calling thread (the same
            // result, slower); the product after them reports the failure.
            match self.e.workers().pool() {
                Ok(p) => p.install(f),
                Err(_) => f(),
            }
        }
    }

    /// The value types of distributed plans.
    pub trait DistValue: DistScalar {
        fn wrap(p: Plan<Self>) -> DistPlan;
        fn plan(p: &mut DistPlan) -> Option<&mut Plan<Self>>;
    }

    impl DistValue for f32 {
        fn wrap(p: Plan<f32>) -> DistPlan {
            DistPlan {
                inner: Inner::F32(p),
            }
        }
        fn plan(p: &mut DistPlan) -> Option<&mut Plan<f32>> {
            match &mut p.inner {
                Inner::F32(p) => Some(p),
                Inner::F64(_) => None,
            }
        }
    }

    impl DistValue for f64 {
        fn wrap(p: Plan<f64>) -> DistPlan {
            DistPlan {
                inner: Inner::F64(p),
            }
        }
        fn plan(p: &mut DistPlan) -> Option<&mut Plan<f64>> {
            match &mut p.inner {
                Inner::F64(p) => Some(p),
                Inner::F32(_) => None,
            }
        }
    }

    /// Something done with a typed distributed matrix.
    pub trait MatrixOp {
        type Out;
        fn call<O: Idx, I: Idx, V: DistValue>(
            self,
            a: dist::DistMatrix<'_, O, I, V>,
        ) -> Result<Self::Out>;
    }

    pub struct CheckOp<'e>(pub Node<'e>, pub &'e DistComm);
    impl MatrixOp for CheckOp<'_> {
        type Out = ();
        fn call<O: Idx, I: Idx, V: DistValue>(
            self,
            a: dist::DistMatrix<'_, O, I, V>,
        ) -> Result<()> {
            dist::check_matrix(self.1, &self.0, &a)
        }
    }

    pub struct EstimateOp<'e>(pub Node<'e>, pub &'e DistComm, pub &'e DistPlanOptions);
    impl MatrixOp for EstimateOp<'_> {
        type Out = DistEstimate;
        fn call<O: Idx, I: Idx, V: DistValue>(
            self,
            a: dist::DistMatrix<'_, O, I, V>,
        ) -> Result<DistEstimate> {
            dist::estimate(self.1, &self.0, &a, self.2)
        }
    }

    pub struct PlanOp<'e>(pub Node<'e>, pub &'e DistComm, pub &'e DistPlanOptions);
    impl MatrixOp for PlanOp<'_> {
        type Out = DistPlan;
        fn call<O: Idx, I: Idx, V: DistValue>(
            self,
            a: dist::DistMatrix<'_, O, I, V>,
        ) -> Result<DistPlan> {
            Plan::<V>::new(self.1, &self.0, &a, self.2).map(V::wrap)
        }
    }

    pub struct UpdateOp<'e, 'p>(pub Node<'e>, pub &'p mut DistPlan);
    impl MatrixOp for UpdateOp<'_, '_> {
        type Out = ();
        fn call<O: Idx, I: Idx, V: DistValue>(
            self,
            a: dist::DistMatrix<'_, O, I, V>,
        ) -> Result<()> {
            match V::plan(self.1) {
                Some(p) => p.update_values(&self.0, &a),
                // `update_values` agreed on the value type before.
                None => err(Status::Internal, "plan of another value type"),
            }
        }
    }

    /// The typed view of the matrix for the backend (nothing is read yet).
    fn typed<'a, O: Idx, I: Idx, V>(
        a: &DistMatrix<'a>,
        offs: &'a [O],
        cols: &'a [I],
        vals: &'a [V],
    ) -> dist::DistMatrix<'a, O, I, V> {
        dist::DistMatrix {
            global_rows: a.global_rows,
            global_cols: a.global_cols,
            row_start: a.row_start,
            local_rows: a.local.nrows,
            x_range: a.x_range,
            base: a.local.base,
            row_offsets: offs,
            col_indices: cols,
            values: vals,
        }
    }

    /// Calls `op` with the typed matrix. A pattern-only matrix is given empty values of
    /// its value type (the backend's check of the values then fails on every rank
    /// alike). The local column count must be the global one; that check is agreed, like
    /// every check before the backend's collectives.
    pub fn with_typed<T: MatrixOp>(a: &DistMatrix<'_>, op: T) -> Result<T::Out> {
        let cols_ok = if a.local.ncols == a.global_cols {
            Ok(())
        } else {
            err(
                Status::DimensionMismatch,
                format!(
                    "the local rows have {} columns, the matrix {} (column indices are global)",
                    a.local.ncols, a.global_cols
                ),
            )
        };
        // Real values only (the algorithms' alpha, beta and exchanges are f32/f64).
        let complex = a.local.value_type.is_complex()
            || matches!(
                a.local.values,
                Some(ValueSlice::C32(_) | ValueSlice::C64(_))
            );
        let ok = cols_ok.and_then(|()| {
            if complex {
                err(
                    Status::NotSupported,
                    "distributed SpMM takes real values (float, double), not complex ones",
                )
            } else {
                Ok(())
            }
        });
        a.comm.agree(ok)?;
        macro_rules! go {
            ($v:ty, $vals:expr) => {
                match (a.local.offsets, a.local.indices) {
                    (OffsetSlice::I32(o), IndexSlice::I32(i)) => {
                        op.call(typed::<i32, i32, $v>(a, o, i, $vals))
                    }
                    (OffsetSlice::I32(o), IndexSlice::I64(i)) => {
                        op.call(typed::<i32, i64, $v>(a, o, i, $vals))
                    }
                    (OffsetSlice::I64(o), IndexSlice::I32(i)) => {
                        op.call(typed::<i64, i32, $v>(a, o, i, $vals))
                    }
                    (OffsetSlice::I64(o), IndexSlice::I64(i)) => {
                        op.call(typed::<i64, i64, $v>(a, o, i, $vals))
                    }
                    (OffsetSlice::U64(o), IndexSlice::I32(i)) => {
                        op.call(typed::<u64, i32, $v>(a, o, i, $vals))
                    }
                    (OffsetSlice::U64(o), IndexSlice::I64(i)) => {
                        op.call(typed::<u64, i64, $v>(a, o, i, $vals))
                    }
                }
            };
        }
        match (a.local.value_type, a.local.values) {
            (_, Some(ValueSlice::F32(v))) => go!(f32, v),
            (_, Some(ValueSlice::F64(v))) => go!(f64, v),
            (ValueType::Float32, None) => go!(f32, &[]),
            (ValueType::Float64, None) => go!(f64, &[]),
            // Refused above on every rank alike.
            _ => err(
                Status::NotSupported,
                "complex values in a distributed matrix",
            ),
        }
    }
}
