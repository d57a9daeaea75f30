//! Distributed backend over MPI. SpMM `Y = alpha * A * X + beta * Y`, A sparse and
//! distributed by rows, X and Y dense tall-skinny and distributed by rows the same way:
//! the algorithms of Selvitopi et al. (ICS '21), sA-1.5D, sA-2D and sC-2D bulk-synchronous
//! over MPI collectives, sA-2D and sC-2D one-sided over MPI RMA windows, one picked by a
//! cost model (alpha-beta per collective, memory per rank, the measured local rate).
//! SpGEMM `C = op(A) * B` and `op(R) * A * P` of row-distributed matrices: the rows of B
//! that the local rows reference are imported (structure once, values per numeric call)
//! and multiplied on the node, with the plan reused while values change.
//! `docs/DISTRIBUTED.md` describes layouts, collectives, formulas and the equality each
//! algorithm guarantees.
//!
//! A backend: it imports only the shared and platform layers and the vocabulary; local
//! products go through `NodeSpmm` and `NodeSpgemm`, which the dispatcher implements.
//! Communication needs the `mpi` feature; without it the options, the model's types and
//! a communicator that cannot be made remain, and [`unavailable`] is the error every
//! distributed entry point gives.

// Without MPI only their plain data (grid, algorithm, candidate, rates) is used; the
// layouts and formulas serve the algorithms.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod layout;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod model;
mod options;
mod project;

#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod dense;
#[cfg(feature = "mpi")]
mod exchange;
#[cfg(feature = "mpi")]
mod halo;
#[cfg(feature = "mpi")]
mod node;
#[cfg(not(feature = "mpi"))]
mod off;
#[cfg(feature = "mpi")]
mod plan;
#[cfg(feature = "mpi")]
mod raw;
#[cfg(feature = "mpi")]
mod spgemm;
#[cfg(feature = "mpi")]
mod tiles;

pub use layout::Grid;
pub use model::{Algorithm, Candidate, LocalRate, NetParams};
pub use options::{Estimate, ExecStats, Fint, PlanOptions, SpgemmStats};
pub use project::{GlobalPattern, project_spmm};

#[cfg(feature = "mpi")]
pub use comm::DistComm;
#[cfg(feature = "mpi")]
pub use node::{DistIdx, DistScalar, NodePrep, NodeSpgemm, NodeSpmm, Tile};
#[cfg(not(feature = "mpi"))]
pub use off::{DistComm, unavailable};
#[cfg(feature = "mpi")]
pub use plan::{DistMatrix, Plan, check_matrix, estimate};
#[cfg(feature = "mpi")]
pub use spgemm::SpgemmPlan;
