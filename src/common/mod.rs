//! What every backend shares, beneath them: borrowed CSR views and the dispatch from
//! erased to typed matrices, the checks of shapes, formats, value slices and structure,
//! the caller's output slices, the options, device-memory descriptors, the hybrid split
//! model, the memory estimates checked against a handle's limit.

pub mod check;
pub mod csr;
pub mod device;
pub mod memory;
pub mod options;
pub mod slices;
pub mod split;
pub mod transpose;
