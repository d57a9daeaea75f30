//! What a caller asks of a plan and what it learns back: the options, the model's
//! estimate and the traffic of one execute. Plain data, built with or without MPI, so the
//! layers above name them in either build.

use super::layout::Grid;
use super::model::{Algorithm, Candidate, LocalRate, NetParams};
use crate::common::options::Layout;

/// A Fortran communicator handle (`MPI_Fint`: a C `int` in Open MPI and MPICH), how
/// callers name their communicator; a C caller passes `MPI_Comm_c2f(comm)`.
pub type Fint = std::os::raw::c_int;

/// How to plan.
#[derive(Clone, Copy, Debug)]
pub struct PlanOptions {
    /// `Auto`: the cost model picks algorithm and grid; else that algorithm.
    pub algorithm: Algorithm,
    /// Force the process grid (pr x pc = p).
    pub grid: Option<Grid>,
    /// Force the 1.5D replication factor c (grid (p/c) x c).
    pub replication: Option<usize>,
    /// Columns of X and Y.
    pub k: usize,
    pub layout: Layout,
    /// Bytes a rank may hold for the plan; over it (on any rank) planning fails with
    /// `Status::AllocFailed` on every rank.
    pub memory_limit: Option<usize>,
}

impl PlanOptions {
    pub fn new(k: usize, layout: Layout) -> PlanOptions {
        PlanOptions {
            algorithm: Algorithm::Auto,
            grid: None,
            replication: None,
            k,
            layout,
            memory_limit: None,
        }
    }
}

/// What the model predicted for every candidate, and the choice.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub candidates: Vec<Candidate>,
    /// Index of the chosen candidate (the fastest within the memory limit).
    pub chosen: usize,
    pub net: NetParams,
    pub rate: LocalRate,
}

impl Estimate {
    pub fn choice(&self) -> &Candidate {
        &self.candidates[self.chosen]
    }
}

/// Traffic and time of one execute on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExecStats {
    /// Payload bytes this rank sent to other ranks (two-sided; an RMA target sends nothing
    /// itself).
    pub bytes_sent: u64,
    /// Payload bytes this rank received from other ranks (including RMA gets it issued).
    pub bytes_received: u64,
    /// Bytes of the status agreement (one allreduce of 5 integers per execute).
    pub control_bytes: u64,
    pub compute_s: f64,
    pub total_s: f64,
}

/// Traffic and time of a distributed product on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpgemmStats {
    /// Seconds of the symbolic phase (checks, structure import, node symbolic).
    pub symbolic_s: f64,
    /// Seconds of the last numeric phase, of which `import_s` moving values (or waiting
    /// for them) and `local_s` in the node products.
    pub numeric_s: f64,
    pub import_s: f64,
    pub local_s: f64,
    /// Rows of B (of every product's B) this rank fetched from other ranks.
    pub rows_imported: u64,
    /// Scalar multiplications of this rank's products (GFLOP/s = 2 flops / s / 1e9).
    pub flops: u64,
    /// Bytes this rank sent and received in the symbolic phase (structure) and in each
    /// numeric phase (values), messages to itself excluded.
    pub symbolic_bytes_sent: u64,
    pub symbolic_bytes_received: u64,
    pub numeric_bytes_sent: u64,
    pub numeric_bytes_received: u64,
    /// Rows of op(A) (of every product) multiplied on this rank's own rows of B in place,
    /// while the imported values travel.
    pub rows_in_place: u64,
}
