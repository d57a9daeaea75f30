//! Distributed products over MPI (feature `mpi`): a communicator, row-distributed
//! matrices, and SpMM `Y = alpha A X + beta Y` with a plan reused over many products
//! (the algorithms of Selvitopi et al., ICS '21, chosen by a cost model; see
//! docs/DISTRIBUTED.md). Every function here is collective over the matrix's
//! communicator and returns the same status on every rank. The library never initialises
//! or finalises MPI and never frees the caller's communicator (it works on a duplicate).
//! Without the feature a [`DistComm`] cannot be made ([`DistComm::from_fortran`] gives
//! `Status::NotSupported`), so nothing else can be reached.
//!
//! ```ignore
//! let comm = DistComm::from_fortran(fint)?;            // C: MPI_Comm_c2f(comm)
//! let a = DistMatrix { comm: &comm, global_rows: m, global_cols: n, row_start,
//!                      x_range: None, local: my_rows /* AnyCsr, global column ids */ };
//! let mut opts = DistPlanOptions::new(k, Layout::RowMajor);
//! opts.memory_limit = Some(bytes_per_rank);
//! let mut plan = dist_spmm_plan(&h, &a, &opts)?;
//! for _ in 0..iterations {
//!     let stats = dist_spmm(&h, &mut plan, 1.0, x, ldx, 0.0, y, ldy)?;
//! }
//! ```

pub use crate::exec::dist::{
    DistAlgorithm, DistCandidate, DistComm, DistEstimate, DistGrid, DistLocalRate, DistMatrix,
    DistNetParams, DistPlan, DistPlanOptions, DistStats, Fint,
};

use super::handle::Handle;
use crate::common::csr::ValueSlice;
use crate::common::options::{Op, OutputFormat};
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::error::Result;
use crate::exec::dist::{self, DistDense};
use crate::exec::dist_spgemm;

/// Checks a distributed matrix: each rank's rows alone (ranges inside the global sizes,
/// CSR structure, column indices within the global columns), then that the ranks' parts
/// fit together (the same global sizes, row and column ranges tiling them in rank order).
/// Collective.
pub fn dist_check(h: &Handle, a: &DistMatrix<'_>) -> Result<()> {
    h.guarded(&[], || dist::check(h.engine(), &h.options, a))
}

/// The model's prediction for every candidate algorithm and grid under `opts` (time,
/// bytes moved, per-rank memory) and its choice, without building a plan. Collective.
pub fn dist_spmm_estimate(
    h: &Handle,
    a: &DistMatrix<'_>,
    opts: &DistPlanOptions,
) -> Result<DistEstimate> {
    h.guarded(&[], || dist::estimate(h.engine(), &h.options, a, opts))
}

/// The cost model's prediction for `ranks` ranks without running them (the paper's
/// section 5 projections): A whole on this process (its pattern, `value_type` for the
/// value size), each rank's rows and X rows an even split (as `spgemm-bench dist-spmm`
/// distributes), a stated network and local rate (e.g. a real estimate's `net` and
/// `rate`). Returns every candidate of `opts.k` and `opts.layout` and the index of the
/// model's choice without a memory limit. Not collective; needs no MPI.
pub fn dist_spmm_project(
    a: &crate::common::csr::AnyCsr<'_>,
    ranks: usize,
    opts: &DistPlanOptions,
    net: DistNetParams,
    rate: &DistLocalRate,
) -> Result<(Vec<DistCandidate>, usize)> {
    dist::project(a, ranks, opts, net, rate)
}

/// A plan for `Y = alpha A X + beta Y` with k columns in `opts.layout`: the algorithm and
/// grid (the model's choice or `opts`'), A's tiles moved to their ranks, the buffers
/// allocated (within `opts.memory_limit` per rank, else `Status::AllocFailed`).
/// Collective. The plan keeps no reference to A or its communicator.
pub fn dist_spmm_plan(h: &Handle, a: &DistMatrix<'_>, opts: &DistPlanOptions) -> Result<DistPlan> {
    h.guarded(&[], || dist::plan(h.engine(), &h.options, a, opts))
}

/// New values of the plan's matrix: the same structure and types as at planning (checked
/// by a digest: `Status::PlanMismatch` otherwise); only values move. Collective.
pub fn dist_spmm_update_values(h: &Handle, plan: &mut DistPlan, a: &DistMatrix<'_>) -> Result<()> {
    h.guarded(&[], || dist::update_values(h.engine(), &h.options, plan, a))
}

/// `Y = alpha A X + beta Y` with the plan: `x` this rank's rows of X (its column range of
/// A, k columns in the plan's layout, leading dimension `ldx`), `y` its rows of Y. BLAS
/// conventions: beta = 0 does not read Y, alpha = 0 reads neither A nor X. Every rank
/// passes the same alpha and beta. The node products run on the handle's workers (CPU
/// kernels, or the GPU as the handle's backend decides). Collective.
#[allow(clippy::too_many_arguments)]
pub fn dist_spmm(
    h: &Handle,
    plan: &mut DistPlan,
    alpha: f64,
    x: ValueSlice<'_>,
    ldx: usize,
    beta: f64,
    y: ValueSliceMut<'_>,
    ldy: usize,
) -> Result<DistStats> {
    dist_spmm_after(h, plan, Ok(()), alpha, x, ldx, beta, y, ldy)
}

/// [`dist_spmm`] after the caller's own checks of its arguments (`pre`): an error there on
/// any rank is the result on every rank. The C ABI's checks of its pointers go here.
#[allow(clippy::too_many_arguments)]
pub fn dist_spmm_after(
    h: &Handle,
    plan: &mut DistPlan,
    pre: Result<()>,
    alpha: f64,
    x: ValueSlice<'_>,
    ldx: usize,
    beta: f64,
    y: ValueSliceMut<'_>,
    ldy: usize,
) -> Result<DistStats> {
    let d = DistDense { x, ldx, y, ldy };
    h.guarded(&[], || {
        dist::execute(h.engine(), &h.options, plan, pre, (alpha, beta), d)
    })
}

pub use crate::exec::dist_spgemm::{DistSpgemmPlan, DistSpgemmStats};

/// Symbolic phase of the distributed product C = op(A) * B (`op` N, or T / C for A^T as
/// PETSc's `MatTransposeMatMult`; real values, so C is T), A and B row-distributed with
/// global column ids on one communicator, of one type set. The rows of B that this rank's
/// rows of op(A) reference are fetched from their owners (structure now, values at each
/// numeric call); C is distributed as op(A)'s rows (A's rows, or A's `x_range` for A^T),
/// with global column ids in `format`. Writes this rank's row offsets of C (its rows + 1)
/// into `c_offsets`; [`DistSpgemmPlan::nnz`] sizes its column and value arrays.
/// Collective; the same status on every rank.
pub fn dist_spgemm_symbolic(
    h: &Handle,
    op: Op,
    a: &DistMatrix<'_>,
    b: &DistMatrix<'_>,
    format: OutputFormat,
    c_offsets: OffsetSliceMut<'_>,
) -> Result<DistSpgemmPlan> {
    h.guarded(&[], || {
        dist_spgemm::symbolic(h.engine(), &h.options, op, &[a, b], format, c_offsets)
    })
}

/// Symbolic phase of C = op(R) * A * P in one plan (`op` N: R*A*P; T: P^T*A*P, passing P
/// as R), as an AMG setup forms a coarse operator: A*P is formed first and kept in the
/// plan, then op(R) times it. Everything else as [`dist_spgemm_symbolic`]. Collective.
pub fn dist_rap_symbolic(
    h: &Handle,
    op: Op,
    (r, a, p): (&DistMatrix<'_>, &DistMatrix<'_>, &DistMatrix<'_>),
    format: OutputFormat,
    c_offsets: OffsetSliceMut<'_>,
) -> Result<DistSpgemmPlan> {
    h.guarded(&[], || {
        dist_spgemm::symbolic(h.engine(), &h.options, op, &[r, a, p], format, c_offsets)
    })
}

/// Numeric phase with the current values of the symbolic phase's matrices (`mats`: A, B
/// or R, A, P; the same structure, checked by digests when validation is on:
/// `Status::PlanMismatch`): this rank's column indices (global) and values of C. Again
/// with new values = reuse; only values move between ranks. Collective.
pub fn dist_spgemm_numeric(
    h: &Handle,
    plan: &mut DistSpgemmPlan,
    mats: &[&DistMatrix<'_>],
    cols: IndexSliceMut<'_>,
    vals: ValueSliceMut<'_>,
) -> Result<()> {
    dist_spgemm_numeric_after(h, plan, Ok(()), mats, cols, vals)
}

/// [`dist_spgemm_numeric`] after the caller's own checks of its arguments (`pre`): an
/// error there on any rank is the result on every rank.
pub fn dist_spgemm_numeric_after(
    h: &Handle,
    plan: &mut DistSpgemmPlan,
    pre: Result<()>,
    mats: &[&DistMatrix<'_>],
    cols: IndexSliceMut<'_>,
    vals: ValueSliceMut<'_>,
) -> Result<()> {
    h.guarded(&[], || {
        dist_spgemm::numeric(h.engine(), &h.options, plan, pre, mats, cols, vals)
    })
}
