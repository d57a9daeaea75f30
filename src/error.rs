//! Error values of the typed layer. Every failure carries a [`Status`] (the stable code
//! the C ABI returns) and a message that names the offending argument and index.

use std::fmt;

/// Stable status codes. The numbering is part of the C ABI: never renumber, only append.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Status {
    Success = 0,
    NullPointer = 1,
    InvalidValue = 2,
    DimensionMismatch = 3,
    InvalidStructure = 4,
    IndexOutOfRange = 5,
    IndexOverflow = 6,
    TypeMismatch = 7,
    PlanMismatch = 8,
    AllocFailed = 9,
    NotSupported = 10,
    NoDevice = 11,
    Internal = 12,
}

impl Status {
    pub const ALL: [Status; 13] = [
        Status::Success,
        Status::NullPointer,
        Status::InvalidValue,
        Status::DimensionMismatch,
        Status::InvalidStructure,
        Status::IndexOutOfRange,
        Status::IndexOverflow,
        Status::TypeMismatch,
        Status::PlanMismatch,
        Status::AllocFailed,
        Status::NotSupported,
        Status::NoDevice,
        Status::Internal,
    ];

    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| *s as i32 == code)
    }

    /// Short fixed description; NUL-terminated so the ABI can hand it out without allocating.
    pub fn description(self) -> &'static str {
        match self {
            Status::Success => "success\0",
            Status::NullPointer => "a required pointer argument is NULL\0",
            Status::InvalidValue => "an argument has an invalid value\0",
            Status::DimensionMismatch => "matrix dimensions do not match\0",
            Status::InvalidStructure => "row offsets are not a valid CSR structure\0",
            Status::IndexOutOfRange => "a column index is out of range\0",
            Status::IndexOverflow => "a size or index does not fit the requested integer type\0",
            Status::TypeMismatch => "index or value types do not match\0",
            Status::PlanMismatch => "the inputs do not match the plan from the symbolic phase\0",
            Status::AllocFailed => "memory allocation failed\0",
            Status::NotSupported => "operation not supported\0",
            Status::NoDevice => "no usable GPU device\0",
            Status::Internal => "internal error (a bug in libspgemm)\0",
        }
    }
}

/// A failure: status code plus a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.status.description();
        write!(f, "{}: {}", &d[..d.len() - 1], self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for early returns: `return err(Status::InvalidValue, format!(...))`.
pub fn err<T>(status: Status, message: impl Into<String>) -> Result<T> {
    Err(Error::new(status, message))
}
