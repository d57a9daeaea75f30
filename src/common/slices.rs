//! Mutable views of the caller's arrays for C (the primary output path), one variant per
//! element type; the kernels recover the typed slice.

use crate::types::{Complex32, Complex64, IndexType, ValueType};

/// Caller's array for C's row offsets.
pub enum OffsetSliceMut<'a> {
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
    U64(&'a mut [u64]),
}

/// Caller's array for C's column indices.
pub enum IndexSliceMut<'a> {
    I32(&'a mut [i32]),
    I64(&'a mut [i64]),
}

/// Caller's array for C's values.
pub enum ValueSliceMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    C32(&'a mut [Complex32]),
    C64(&'a mut [Complex64]),
}

impl IndexSliceMut<'_> {
    pub fn kind(&self) -> IndexType {
        match self {
            IndexSliceMut::I32(_) => IndexType::Int32,
            IndexSliceMut::I64(_) => IndexType::Int64,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            IndexSliceMut::I32(x) => x.len(),
            IndexSliceMut::I64(x) => x.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The entries before `e` and from `e` on (`e` at most the length).
    pub fn split_at(self, e: usize) -> (Self, Self) {
        match self {
            IndexSliceMut::I32(c) => {
                let (x, y) = c.split_at_mut(e.min(c.len()));
                (IndexSliceMut::I32(x), IndexSliceMut::I32(y))
            }
            IndexSliceMut::I64(c) => {
                let (x, y) = c.split_at_mut(e.min(c.len()));
                (IndexSliceMut::I64(x), IndexSliceMut::I64(y))
            }
        }
    }
}

impl ValueSliceMut<'_> {
    /// The entries before `e` and from `e` on (`e` at most the length).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub fn split_at(self, e: usize) -> (Self, Self) {
        macro_rules! split {
            ($v:ident, $c:expr) => {{
                let (x, y) = $c.split_at_mut(e.min($c.len()));
                (ValueSliceMut::$v(x), ValueSliceMut::$v(y))
            }};
        }
        match self {
            ValueSliceMut::F32(c) => split!(F32, c),
            ValueSliceMut::F64(c) => split!(F64, c),
            ValueSliceMut::C32(c) => split!(C32, c),
            ValueSliceMut::C64(c) => split!(C64, c),
        }
    }

    pub fn kind(&self) -> ValueType {
        match self {
            ValueSliceMut::F32(_) => ValueType::Float32,
            ValueSliceMut::F64(_) => ValueType::Float64,
            ValueSliceMut::C32(_) => ValueType::Complex32,
            ValueSliceMut::C64(_) => ValueType::Complex64,
        }
    }
}
