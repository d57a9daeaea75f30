//! The communicator of a build without the `mpi` feature: it cannot be made, so every path
//! that would use one ends at [`super::unavailable`] and the layers above compile alike in
//! both builds.

use std::convert::Infallible;

use super::options::Fint;
use crate::error::{Error, Result, Status};

/// A communicator for distributed products; without MPI none exists.
pub struct DistComm {
    never: Infallible,
}

impl DistComm {
    /// Always `Status::NotSupported` (see [`unavailable`]).
    pub fn from_fortran(_handle: Fint) -> Result<DistComm> {
        Err(unavailable())
    }

    pub fn rank(&self) -> usize {
        match self.never {}
    }

    pub fn size(&self) -> usize {
        match self.never {}
    }

    pub fn agree<T>(&self, _r: Result<T>) -> Result<T> {
        match self.never {}
    }
}

/// The error every distributed entry point returns without the `mpi` feature.
pub fn unavailable() -> Error {
    Error::new(
        Status::NotSupported,
        "distributed products need libspgemm built with the `mpi` feature \
         (cargo build --features mpi)",
    )
}
