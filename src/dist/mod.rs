//! Distributed SpMM backend: `Y = alpha * A * X + beta * Y` across MPI ranks, A sparse and
//! distributed by rows, X and Y dense tall-skinny and distributed by rows the same way.
//! The algorithms are those of Selvitopi et al. (ICS '21): sA-1.5D, sA-2D and sC-2D
//! bulk-synchronous over MPI collectives, sA-2D and sC-2D one-sided over MPI RMA windows;
//! a cost model (alpha-beta per collective, memory per rank, the measured local rate)
//! picks one. `docs/DISTRIBUTED.md` describes layouts, collectives, formulas and the
//! equality each algorithm guarantees.
//!
//! A backend: it imports only the error, type, CSR and allocation layers; local products
//! go through [`NodeSpmm`], which the dispatcher implements. Everything needs the `mpi`
//! feature; without it [`unavailable`] is the status every distributed entry point gives.

#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod dense;
#[cfg(feature = "mpi")]
mod exchange;
#[cfg(feature = "mpi")]
mod layout;
#[cfg(feature = "mpi")]
mod model;
#[cfg(feature = "mpi")]
mod node;
#[cfg(feature = "mpi")]
mod plan;
#[cfg(feature = "mpi")]
mod raw;
#[cfg(feature = "mpi")]
mod tiles;

#[cfg(feature = "mpi")]
pub use comm::{DistComm, NetParams};
#[cfg(feature = "mpi")]
pub use layout::Grid;
#[cfg(feature = "mpi")]
pub use model::{Algorithm, Candidate};
#[cfg(feature = "mpi")]
pub use node::{DistScalar, Layout, LocalRate, NodeSpmm, Tile, TileIndex, TileOffset, ValuesMut};
#[cfg(feature = "mpi")]
pub use plan::{DistMatrix, Estimate, ExecStats, Plan, PlanOptions, estimate};
#[cfg(feature = "mpi")]
pub use raw::Fint;

/// Without the `mpi` feature: the error every distributed entry point returns.
#[cfg(not(feature = "mpi"))]
pub fn unavailable() -> crate::error::Error {
    crate::error::Error::new(
        crate::error::Status::NotSupported,
        "distributed SpMM needs libspgemm built with the `mpi` feature",
    )
}
