//! What the backend needs from a node: one local SpMM on a tile, and (optionally) how
//! fast it runs. The dispatcher implements [`NodeSpmm`] with the CPU/GPU kernels and the
//! handle's threads; the backend itself never names a kernel.

use mpi::datatype::Equivalence;

use super::raw::Word;
use crate::common::csr::{CsrRef, ValueSlice};
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
    fn erase_mut(y: &mut [Self]) -> ValuesMut<'_>;
}

/// A mutable value slice of either type (what `erase_mut` gives).
pub enum ValuesMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

impl DistScalar for f32 {
    fn erase(x: &[f32]) -> ValueSlice<'_> {
        ValueSlice::F32(x)
    }
    fn erase_mut(y: &mut [f32]) -> ValuesMut<'_> {
        ValuesMut::F32(y)
    }
}

impl DistScalar for f64 {
    fn erase(x: &[f64]) -> ValueSlice<'_> {
        ValueSlice::F64(x)
    }
    fn erase_mut(y: &mut [f64]) -> ValuesMut<'_> {
        ValuesMut::F64(y)
    }
}

/// Measured speed of local products: `call_s + entries * k * per_entry_col(k)` seconds,
/// with `per_entry_col` interpolated in log2(k) between k = 1, 8 and 64 (a narrow
/// product does less work per loaded entry of A, so its rate per flop is lower: the
/// paper's section 6.2 effect that makes the 2D algorithms' k/sqrt(p) slices slow).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalRate {
    /// Fixed cost of one call (launch, thread wake-up).
    pub call_s: f64,
    /// Seconds per stored entry and column of X at k = 1, 8, 64.
    pub per_entry_col_s: [f64; 3],
}

impl LocalRate {
    /// Predicted seconds of one local product.
    pub fn time(&self, nnz: usize, k: usize) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let l = (k as f64).log2();
        let [r1, r8, r64] = self.per_entry_col_s;
        let per = if l <= 0.0 {
            r1
        } else if l <= 3.0 {
            r1 + (r8 - r1) * l / 3.0
        } else if l <= 6.0 {
            r8 + (r64 - r8) * (l - 3.0) / 3.0
        } else {
            r64
        };
        self.call_s + nnz as f64 * k as f64 * per.max(0.0)
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
}
