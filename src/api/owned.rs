//! Library-owned results (the one-call product): CSR arrays the library allocates, taken
//! from and given back to the handle's output cache.

use std::sync::Arc;

use super::output_cache::OutputCache;
use crate::common::csr::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::error::Result;
use crate::platform::alloc::try_filled;
use crate::types::{Complex32, Complex64, IndexType, Scalar, ValueType};

/// Library-owned arrays of a CSR matrix.
pub enum OffsetVec {
    I32(Vec<i32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}
pub enum IndexVec {
    I32(Vec<i32>),
    I64(Vec<i64>),
}
pub enum ValueVec {
    F32(Vec<f32>),
    F64(Vec<f64>),
    C32(Vec<Complex32>),
    C64(Vec<Complex64>),
}

/// A CSR matrix whose arrays belong to the library (result of the one-call product).
/// Dropping it gives its arrays to `recycle` (see [`crate::output_cache`]).
pub struct OwnedCsr {
    pub nrows: usize,
    pub ncols: usize,
    pub base: usize,
    pub offsets: OffsetVec,
    pub indices: IndexVec,
    pub values: Option<ValueVec>,
    pub value_type: ValueType,
    pub recycle: Option<Arc<OutputCache>>,
}

impl Drop for OwnedCsr {
    fn drop(&mut self) {
        let Some(cache) = self.recycle.take() else {
            return;
        };
        match std::mem::replace(&mut self.offsets, OffsetVec::I32(Vec::new())) {
            OffsetVec::I32(v) => cache.give(v),
            OffsetVec::I64(v) => cache.give(v),
            OffsetVec::U64(v) => cache.give(v),
        }
        match std::mem::replace(&mut self.indices, IndexVec::I32(Vec::new())) {
            IndexVec::I32(v) => cache.give(v),
            IndexVec::I64(v) => cache.give(v),
        }
        match self.values.take() {
            Some(ValueVec::F32(v)) => cache.give(v),
            Some(ValueVec::F64(v)) => cache.give(v),
            Some(ValueVec::C32(v)) => cache.give(v),
            Some(ValueVec::C64(v)) => cache.give(v),
            None => {}
        }
    }
}

impl OffsetVec {
    pub fn zeroed(t: IndexType, len: usize) -> Result<OffsetVec> {
        Ok(match t {
            IndexType::Int32 => OffsetVec::I32(try_filled(len, 0, "row offsets of C")?),
            IndexType::Int64 => OffsetVec::I64(try_filled(len, 0, "row offsets of C")?),
            IndexType::SizeT => OffsetVec::U64(try_filled(len, 0, "row offsets of C")?),
        })
    }
    /// `len` offsets from `cache` (old numbers when recycled: the caller overwrites all).
    pub fn take(cache: &OutputCache, t: IndexType, len: usize) -> Result<OffsetVec> {
        const W: &str = "row offsets of C";
        Ok(match t {
            IndexType::Int32 => OffsetVec::I32(cache.take(len, W)?),
            IndexType::Int64 => OffsetVec::I64(cache.take(len, W)?),
            IndexType::SizeT => OffsetVec::U64(cache.take(len, W)?),
        })
    }
    pub fn as_mut(&mut self) -> OffsetSliceMut<'_> {
        match self {
            OffsetVec::I32(v) => OffsetSliceMut::I32(v),
            OffsetVec::I64(v) => OffsetSliceMut::I64(v),
            OffsetVec::U64(v) => OffsetSliceMut::U64(v),
        }
    }
    pub fn as_slice(&self) -> OffsetSlice<'_> {
        match self {
            OffsetVec::I32(v) => OffsetSlice::I32(v),
            OffsetVec::I64(v) => OffsetSlice::I64(v),
            OffsetVec::U64(v) => OffsetSlice::U64(v),
        }
    }
}

impl IndexVec {
    pub fn zeroed(t: IndexType, len: usize) -> Result<IndexVec> {
        Ok(match t {
            IndexType::Int32 => IndexVec::I32(try_filled(len, 0, "column indices of C")?),
            _ => IndexVec::I64(try_filled(len, 0, "column indices of C")?),
        })
    }
    /// `len` indices from `cache` (old numbers when recycled: the caller overwrites all).
    pub fn take(cache: &OutputCache, t: IndexType, len: usize) -> Result<IndexVec> {
        const W: &str = "column indices of C";
        Ok(match t {
            IndexType::Int32 => IndexVec::I32(cache.take(len, W)?),
            _ => IndexVec::I64(cache.take(len, W)?),
        })
    }
    pub fn as_mut(&mut self) -> IndexSliceMut<'_> {
        match self {
            IndexVec::I32(v) => IndexSliceMut::I32(v),
            IndexVec::I64(v) => IndexSliceMut::I64(v),
        }
    }
    pub fn as_slice(&self) -> IndexSlice<'_> {
        match self {
            IndexVec::I32(v) => IndexSlice::I32(v),
            IndexVec::I64(v) => IndexSlice::I64(v),
        }
    }
}

impl ValueVec {
    pub fn zeroed(t: ValueType, len: usize) -> Result<ValueVec> {
        Ok(match t {
            ValueType::Float32 => ValueVec::F32(try_filled(len, 0.0, "values of C")?),
            ValueType::Float64 => ValueVec::F64(try_filled(len, 0.0, "values of C")?),
            ValueType::Complex32 => ValueVec::C32(try_filled(len, Complex32::ZERO, "values of C")?),
            ValueType::Complex64 => ValueVec::C64(try_filled(len, Complex64::ZERO, "values of C")?),
        })
    }
    /// `len` values from `cache` (old numbers when recycled: the caller overwrites all).
    pub fn take(cache: &OutputCache, t: ValueType, len: usize) -> Result<ValueVec> {
        const W: &str = "values of C";
        Ok(match t {
            ValueType::Float32 => ValueVec::F32(cache.take(len, W)?),
            ValueType::Float64 => ValueVec::F64(cache.take(len, W)?),
            ValueType::Complex32 => ValueVec::C32(cache.take(len, W)?),
            ValueType::Complex64 => ValueVec::C64(cache.take(len, W)?),
        })
    }
    pub fn as_mut(&mut self) -> ValueSliceMut<'_> {
        match self {
            ValueVec::F32(v) => ValueSliceMut::F32(v),
            ValueVec::F64(v) => ValueSliceMut::F64(v),
            ValueVec::C32(v) => ValueSliceMut::C32(v),
            ValueVec::C64(v) => ValueSliceMut::C64(v),
        }
    }
    pub fn as_slice(&self) -> ValueSlice<'_> {
        match self {
            ValueVec::F32(v) => ValueSlice::F32(v),
            ValueVec::F64(v) => ValueSlice::F64(v),
            ValueVec::C32(v) => ValueSlice::C32(v),
            ValueVec::C64(v) => ValueSlice::C64(v),
        }
    }
}

impl OwnedCsr {
    pub fn as_any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.nrows,
            ncols: self.ncols,
            base: self.base,
            offsets: self.offsets.as_slice(),
            indices: self.indices.as_slice(),
            values: self.values.as_ref().map(|v| v.as_slice()),
            value_type: self.value_type,
        }
    }
}
