//! What the backend needs from a node: one local SpMM on a tile, and (optionally) how
//! fast it runs. The dispatcher implements [`NodeSpmm`] with the CPU/GPU kernels and the
//! handle's threads; the backend itself never names a kernel.

use mpi::datatype::Equivalence;

use super::model::LocalRate;
use super::raw::Word;
use crate::common::csr::{CsrRef, ValueSlice};
use crate::common::slices::ValueSliceMut;
use crate::error::Result;
use crate::types::Scalar;

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

/// One SpMM on this rank: `Y = alpha * A * X + beta * Y`, A a tile, X and Y dense in
/// `layout` with leading dimensions `ldx`, `ldy` (X has `a.ncols()` rows, Y `a.nrows()`,
/// both `k` columns; the slices span exactly what the shapes need). With beta = 0 Y must
/// not be read (it may hold NaN). The backend validated the tile; implementations may skip
/// their own checks. The summation order of an entry of Y should depend on the row alone
/// (as the CPU kernels guarantee) for the bitwise guarantees of `docs/DISTRIBUTED.md`.
pub trait NodeSpmm: Sync {
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
    ) -> Result<()>;

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
