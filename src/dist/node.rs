//! What the backend needs from a node: one local SpMM on a tile, and (optionally) how
//! fast it runs. The dispatcher implements [`NodeSpmm`] with the CPU/GPU kernels and the
//! handle's threads; the backend itself never names a kernel.

use mpi::datatype::Equivalence;

use super::model::LocalRate;
use super::raw::Word;
use crate::common::csr::{AnyCsr, CsrRef, IndexSlice, ValueSlice};
use crate::common::options::OutputFormat;
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::error::Result;
use crate::types::{Idx, Scalar};

/// Storage order of the dense operands (the SpMM API's).
pub use crate::common::options::Layout;

/// Row offsets of a tile: 64-bit, because a rank's tile may hold more than 2^31 entries
/// (the 1.5D tile is a 1/p share of A, replicated nothing), and every node kernel takes
/// int64 offsets.
pub type TileOffset = i64;
/// Column indices of a tile: 32-bit ids local to the tile's block of columns (the rows of
/// X this rank holds for it), which halves index memory and traffic against int64 and is
/// what GPU kernels take; a block wider than `i32::MAX` columns is refused at plan time
/// (`Status::IndexOverflow`).
pub type TileIndex = i32;

/// A local tile: 0-based, sorted by row, rows as many as the block of Y it updates,
/// columns as many as the rows of the X block it reads.
pub type Tile<'a, V> = CsrRef<'a, TileOffset, TileIndex, V>;

/// A node's analysis of a tile ([`NodeSpmm::spmm_prepare`]), kept by the plan.
pub type NodePrep = Box<dyn std::any::Any + Send + Sync>;

/// Value types the backend moves through MPI (f32, f64).
pub trait DistScalar: Scalar + Equivalence + Word {
    /// The slice as the type-erased form the typed layer takes.
    fn erase(x: &[Self]) -> ValueSlice<'_>;
    /// The mutable slice, type-erased.
    fn erase_mut(y: &mut [Self]) -> ValueSliceMut<'_>;
}

impl DistScalar for f32 {
    fn erase(x: &[f32]) -> ValueSlice<'_> {
        ValueSlice::F32(x)
    }
    fn erase_mut(y: &mut [f32]) -> ValueSliceMut<'_> {
        ValueSliceMut::F32(y)
    }
}

impl DistScalar for f64 {
    fn erase(x: &[f64]) -> ValueSlice<'_> {
        ValueSlice::F64(x)
    }
    fn erase_mut(y: &mut [f64]) -> ValueSliceMut<'_> {
        ValueSliceMut::F64(y)
    }
}

/// Column index types the backend moves through MPI (int32, int64).
pub trait DistIdx: Idx + Equivalence {
    fn erase(x: &[Self]) -> IndexSlice<'_>;
    fn erase_mut(x: &mut [Self]) -> IndexSliceMut<'_>;
}

impl DistIdx for i32 {
    fn erase(x: &[i32]) -> IndexSlice<'_> {
        IndexSlice::I32(x)
    }
    fn erase_mut(x: &mut [i32]) -> IndexSliceMut<'_> {
        IndexSliceMut::I32(x)
    }
}

impl DistIdx for i64 {
    fn erase(x: &[i64]) -> IndexSlice<'_> {
        IndexSlice::I64(x)
    }
    fn erase_mut(x: &mut [i64]) -> IndexSliceMut<'_> {
        IndexSliceMut::I64(x)
    }
}

/// The local SpGEMM of a distributed product: a two-phase product of two valid CSR
/// matrices (the backend's, or the caller's arrays it checked) whose structure the
/// backend guarantees to be the symbolic phase's at every numeric call, C in the caller's
/// format. The dispatcher implements it with the node backends; the backend keeps the
/// plan and never looks inside it. The summation order of an entry of C must be that of
/// A's row (as the node kernels guarantee) for the bitwise equality of
/// `docs/DISTRIBUTED.md`.
pub trait NodeSpgemm: NodeSpmm {
    type Plan: Send;
    /// `structure`: a call without values (C's structure) follows; the node may keep C's
    /// columns to answer it.
    fn spgemm_symbolic(
        &self,
        a: &AnyCsr<'_>,
        b: &AnyCsr<'_>,
        format: OutputFormat,
        structure: bool,
    ) -> Result<Self::Plan>;
    /// Entries of C.
    fn spgemm_nnz(&self, p: &Self::Plan) -> usize;
    /// Scalar multiplications of the product.
    fn spgemm_flops(&self, p: &Self::Plan) -> u64;
    /// C's row offsets (rows + 1, in the plan's format).
    fn spgemm_row_offsets(&self, p: &Self::Plan, out: OffsetSliceMut<'_>) -> Result<()>;
    /// C's column indices and (if `vals` is given) values with the current values of A
    /// and B (A and B without values when `vals` is None). A call without values hands
    /// out C's structure: the node may take the columns from the same `cols` in the calls
    /// that follow and compute values only (its replay), so the structure is formed once.
    fn spgemm_numeric(
        &self,
        p: &Self::Plan,
        a: &AnyCsr<'_>,
        b: &AnyCsr<'_>,
        cols: IndexSliceMut<'_>,
        vals: Option<ValueSliceMut<'_>>,
    ) -> Result<()>;
}

/// One SpMM on this rank: `Y = alpha * A * X + beta * Y`, A a tile, X and Y dense in
/// `layout` with leading dimensions `ldx`, `ldy` (X has `a.ncols()` rows, Y `a.nrows()`,
/// both `k` columns; the slices span exactly what the shapes need). With beta = 0 Y must
/// not be read (it may hold NaN). The backend validated the tile; implementations may skip
/// their own checks. The summation order of an entry of Y should depend on the row alone
/// (as the CPU kernels guarantee) for the bitwise guarantees of `docs/DISTRIBUTED.md`.
pub trait NodeSpmm: Sync {
    /// The product, with the node's analysis of the tile where the plan has one:
    /// `prep = Some((p, first))` when `a` is rows `first..first + a.nrows()` of the tile `p`
    /// was made from ([`NodeSpmm::spmm_prepare`]; same structure and values, the columns
    /// of a range numbered as in that tile).
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;

    /// The product without an analysis.
    #[allow(clippy::too_many_arguments)]
    fn spmm<V: DistScalar>(
        &self,
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
        self.spmm_prepared(None, a, layout, k, x, ldx, alpha, beta, y, ldy)
    }

    /// What the node learns once from a tile that a plan keeps for its life (the CPU's
    /// row groups of an SpMV, or a copy of its values by diagonals: `k` is the plan's), with
    /// the bytes it holds (at most `budget`), or `None`. Opaque to the backend, which hands
    /// it back with every product of that tile or of a range of its rows
    /// ([`NodeSpmm::spmm_prepared`]), and asks again when the tile's values change.
    fn spmm_prepare<V: DistScalar>(
        &self,
        _a: Tile<'_, V>,
        _k: usize,
        _budget: usize,
    ) -> Result<Option<(NodePrep, usize)>> {
        Ok(None)
    }

    /// The node's rate if the implementation knows it (e.g. from an earlier calibration);
    /// `None` makes the backend measure it once per communicator and value type.
    fn rate_hint(&self, _value_bytes: usize) -> Option<LocalRate> {
        None
    }

    /// Runs `f`, local work without MPI calls (validation and digests of this rank's
    /// rows, which run on the current rayon pool), on the node's threads; the default runs
    /// it on the calling thread.
    fn local<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        f()
    }
}
