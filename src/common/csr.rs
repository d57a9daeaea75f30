//! Borrowed CSR matrices. `CsrRef` is the typed view algorithms work on; `AnyCsr` is the
//! type-erased form the ABI builds from a descriptor, turned back into a typed view by
//! `dispatch_pair` / `dispatch_one` (one generic instantiation per type combination).
//! Validation of caller data lives here, once.

use rayon::prelude::*;

use crate::common::slices::ValueSliceMut;
use crate::error::{Error, Result, Status, err};
use crate::platform::isa::Isa;
use crate::types::{Complex32, Complex64, Idx, IndexType, Scalar, ValueType};

/// A CSR matrix over caller memory. `base` is 0 (C) or 1 (Fortran): stored offsets and
/// column indices are `base` larger than the 0-based positions they denote.
#[derive(Clone, Copy, Debug)]
pub struct CsrRef<'a, O: Idx, I: Idx, V: Scalar> {
    nrows: usize,
    ncols: usize,
    base: usize,
    row_offsets: &'a [O],
    col_indices: &'a [I],
    values: Option<&'a [V]>,
}

impl<'a, O: Idx, I: Idx, V: Scalar> CsrRef<'a, O, I, V> {
    /// Checks the O(1) facts (lengths, first and last offset); `validate` checks the rest.
    pub fn new(
        nrows: usize,
        ncols: usize,
        base: usize,
        row_offsets: &'a [O],
        col_indices: &'a [I],
        values: Option<&'a [V]>,
    ) -> Result<Self> {
        if base > 1 {
            return err(
                Status::InvalidValue,
                format!("index base {base} is not 0 or 1"),
            );
        }
        if row_offsets.len() != nrows + 1 {
            return err(
                Status::InvalidStructure,
                format!(
                    "row offsets have {} entries, expected nrows + 1 = {}",
                    row_offsets.len(),
                    nrows + 1
                ),
            );
        }
        let first = row_offsets[0].to_i128();
        if first != base as i128 {
            return err(
                Status::InvalidStructure,
                format!("row_offsets[0] = {first}, expected the index base {base}"),
            );
        }
        let last = row_offsets[nrows].to_i128();
        let nnz = last - base as i128;
        if nnz < 0 || nnz as usize != col_indices.len() {
            return err(
                Status::InvalidStructure,
                format!(
                    "row_offsets[{nrows}] = {last} implies {nnz} entries, but {} column indices were given",
                    col_indices.len()
                ),
            );
        }
        if let Some(v) = values
            && v.len() != col_indices.len()
        {
            return err(
                Status::InvalidStructure,
                format!(
                    "{} values for {} column indices",
                    v.len(),
                    col_indices.len()
                ),
            );
        }
        if ncols > 0 && ncols - 1 + base > I::max_usize() {
            return err(
                Status::IndexOverflow,
                format!(
                    "{ncols} columns cannot be addressed by {} column indices",
                    I::KIND.name()
                ),
            );
        }
        Ok(CsrRef {
            nrows,
            ncols,
            base,
            row_offsets,
            col_indices,
            values,
        })
    }

    #[inline(always)]
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    #[inline(always)]
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    #[inline(always)]
    pub fn base(&self) -> usize {
        self.base
    }
    #[inline(always)]
    pub fn nnz(&self) -> usize {
        self.col_indices.len()
    }
    #[inline(always)]
    pub fn row_offsets(&self) -> &'a [O] {
        self.row_offsets
    }
    #[inline(always)]
    pub fn col_indices(&self) -> &'a [I] {
        self.col_indices
    }
    #[inline(always)]
    pub fn values(&self) -> Option<&'a [V]> {
        self.values
    }

    /// 0-based start of row `i` in `col_indices` / `values`.
    #[inline(always)]
    pub fn row_start(&self, i: usize) -> usize {
        self.row_start_zb::<false>(i)
    }

    /// 0-based positions of row `i`'s entries.
    #[inline(always)]
    pub fn row_range(&self, i: usize) -> std::ops::Range<usize> {
        self.row_range_zb::<false>(i)
    }

    /// Row `i`'s raw column indices (base not subtracted) and, from `vals` (this matrix's
    /// values), its values. Kernels iterate these slices instead of positions: a position
    /// loop bounds-checks `col_indices` and `vals` at every entry and keeps both pointers
    /// live across the inner loop, which on rows of a few entries spills them to the stack
    /// (docs/DESIGN-NOTES.md, common::csr).
    #[inline(always)]
    pub fn row_entries<'v, T>(&self, i: usize, vals: &'v [T]) -> (&'a [I], &'v [T]) {
        let r = self.row_range(i);
        (&self.col_indices[r.clone()], &vals[r])
    }

    /// The base these accessors subtract: 0 when `ZB` (the caller checked that the
    /// matrix is 0-based and instantiated its kernel for it, so that no run-time
    /// subtraction sits on the kernel's chain of dependent loads: docs/DESIGN-NOTES.md,
    /// common::csr), else the matrix's.
    #[inline(always)]
    pub fn base_zb<const ZB: bool>(&self) -> usize {
        debug_assert!(!ZB || self.base == 0);
        if ZB { 0 } else { self.base }
    }

    /// [`Self::row_start`] with [`Self::base_zb`].
    #[inline(always)]
    pub fn row_start_zb<const ZB: bool>(&self, i: usize) -> usize {
        self.row_offsets[i]
            .to_usize()
            .wrapping_sub(self.base_zb::<ZB>())
    }

    /// [`Self::row_range`] with [`Self::base_zb`].
    #[inline(always)]
    pub fn row_range_zb<const ZB: bool>(&self, i: usize) -> std::ops::Range<usize> {
        self.row_start_zb::<ZB>(i)..self.row_start_zb::<ZB>(i + 1)
    }

    /// [`Self::row_cols`] with [`Self::base_zb`].
    #[inline(always)]
    pub fn row_cols_zb<const ZB: bool>(&self, i: usize) -> &'a [I] {
        &self.col_indices[self.row_range_zb::<ZB>(i)]
    }

    /// [`Self::col_of`] with [`Self::base_zb`].
    #[inline(always)]
    pub fn col_of_zb<const ZB: bool>(&self, raw: I) -> usize {
        raw.to_usize().wrapping_sub(self.base_zb::<ZB>())
    }

    /// Row `i`'s raw column indices (see [`Self::row_entries`]).
    #[inline(always)]
    pub fn row_cols(&self, i: usize) -> &'a [I] {
        self.row_cols_zb::<false>(i)
    }

    #[inline(always)]
    pub fn row_len(&self, i: usize) -> usize {
        self.row_start(i + 1).wrapping_sub(self.row_start(i))
    }

    /// 0-based column of the entry at position `p`. With validation off and a bad index the
    /// wrapped value is caught by the bounds checks of the caller's workspace.
    #[inline(always)]
    pub fn col(&self, p: usize) -> usize {
        self.col_of(self.col_indices[p])
    }

    /// 0-based column of a raw index taken from this matrix (from [`Self::row_cols`] or
    /// [`Self::row_entries`]); wraps like [`Self::col`].
    #[inline(always)]
    pub fn col_of(&self, raw: I) -> usize {
        self.col_of_zb::<false>(raw)
    }

    /// The structure alone (no values), as the one value type every value type's symbolic
    /// phase is instantiated for.
    pub fn pattern(&self) -> CsrRef<'a, O, I, Pattern> {
        CsrRef {
            nrows: self.nrows,
            ncols: self.ncols,
            base: self.base,
            row_offsets: self.row_offsets,
            col_indices: self.col_indices,
            values: None,
        }
    }

    /// Rows `0..r` as a matrix of their own (same arrays, shorter): the CPU's part of a
    /// hybrid product. An offset out of range (validation off) is an error.
    pub fn top_rows(&self, r: usize) -> Result<CsrRef<'a, O, I, V>> {
        let r = r.min(self.nrows);
        let e = self.row_start(r).min(self.nnz());
        CsrRef::new(
            r,
            self.ncols,
            self.base,
            &self.row_offsets[..=r],
            &self.col_indices[..e],
            self.values.map(|v| &v[..e]),
        )
    }

    /// Full O(nnz) check: offsets non-decreasing, every column index in range. Runs on the
    /// current rayon pool (serially off the workers); reports the first offending position.
    pub fn validate(&self, name: &str) -> Result<()> {
        if self.scan(Scan::Check).1 {
            return self.first_error(name);
        }
        Ok(())
    }

    /// The error for the first offending offset (or, with monotone offsets, the first
    /// column index out of range): the slow path after [`Self::scan`] found a bad chunk.
    /// Each chunk is checked again with a branch-free reduction; only a chunk that fails
    /// is searched entry by entry. `Ok` only if the input is valid after all.
    fn first_error(&self, name: &str) -> Result<()> {
        const CHUNK: usize = 1 << 16;
        let offs = self.row_offsets;
        let bad_row = first_of(self.nrows.div_ceil(CHUNK), |c| {
            let lo = c * CHUNK;
            let hi = ((c + 1) * CHUNK).min(self.nrows);
            if !decreases(&offs[lo..=hi]) {
                return None;
            }
            (lo..hi).find(|&i| offs[i].to_i128() > offs[i + 1].to_i128())
        });
        if let Some(i) = bad_row {
            return err(
                Status::InvalidStructure,
                format!(
                    "{name}: row offsets decrease at row {i}: row_offsets[{i}] = {:?} > row_offsets[{}] = {:?}",
                    offs[i],
                    i + 1,
                    offs[i + 1]
                ),
            );
        }
        let lo = self.base as i128;
        let hi = lo + self.ncols as i128;
        let cols = self.col_indices;
        let bad_pos = first_of(cols.len().div_ceil(CHUNK), |c| {
            let s = c * CHUNK;
            let e = ((c + 1) * CHUNK).min(cols.len());
            if !out_of_range(&cols[s..e], self.base as u64, self.ncols as u64) {
                return None;
            }
            (s..e).find(|&p| {
                let v = cols[p].to_i128();
                v < lo || v >= hi
            })
        });
        if let Some(p) = bad_pos {
            let row = self.row_of_position(p);
            return err(
                Status::IndexOutOfRange,
                format!(
                    "{name}: column index {:?} at position {p} (row {row}) is outside [{lo}, {hi})",
                    cols[p]
                ),
            );
        }
        Ok(())
    }

    /// Row holding position `p` (offsets known monotone).
    fn row_of_position(&self, p: usize) -> usize {
        let target = (p + self.base) as i128;
        let mut lo = 0usize;
        let mut hi = self.nrows;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.row_offsets[mid + 1].to_i128() <= target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Row offsets of any supported type.
#[derive(Clone, Copy, Debug)]
pub enum OffsetSlice<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
    U64(&'a [u64]),
}

/// Column indices of any supported type.
#[derive(Clone, Copy, Debug)]
pub enum IndexSlice<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

/// Values of any supported type.
#[derive(Clone, Copy, Debug)]
pub enum ValueSlice<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    C32(&'a [Complex32]),
    C64(&'a [Complex64]),
}

impl ValueSlice<'_> {
    pub fn kind(&self) -> ValueType {
        match self {
            ValueSlice::F32(_) => ValueType::Float32,
            ValueSlice::F64(_) => ValueType::Float64,
            ValueSlice::C32(_) => ValueType::Complex32,
            ValueSlice::C64(_) => ValueType::Complex64,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            ValueSlice::F32(v) => v.len(),
            ValueSlice::F64(v) => v.len(),
            ValueSlice::C32(v) => v.len(),
            ValueSlice::C64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl OffsetSlice<'_> {
    pub fn kind(&self) -> IndexType {
        match self {
            OffsetSlice::I32(_) => IndexType::Int32,
            OffsetSlice::I64(_) => IndexType::Int64,
            OffsetSlice::U64(_) => IndexType::SizeT,
        }
    }
}

impl IndexSlice<'_> {
    pub fn kind(&self) -> IndexType {
        match self {
            IndexSlice::I32(_) => IndexType::Int32,
            IndexSlice::I64(_) => IndexType::Int64,
        }
    }
}

/// Recovers a typed slice from the erased enums (`None` if the type differs).
pub trait FromAny<'a>: Sized {
    fn from_offsets(_: OffsetSlice<'a>) -> Option<&'a [Self]> {
        None
    }
    fn from_indices(_: IndexSlice<'a>) -> Option<&'a [Self]> {
        None
    }
    fn from_values(_: ValueSlice<'a>) -> Option<&'a [Self]> {
        None
    }
    fn from_values_mut(_: ValueSliceMut<'_>) -> Option<&mut [Self]> {
        None
    }
}

impl<'a> FromAny<'a> for i32 {
    fn from_offsets(s: OffsetSlice<'a>) -> Option<&'a [i32]> {
        if let OffsetSlice::I32(x) = s {
            Some(x)
        } else {
            None
        }
    }
    fn from_indices(s: IndexSlice<'a>) -> Option<&'a [i32]> {
        if let IndexSlice::I32(x) = s {
            Some(x)
        } else {
            None
        }
    }
}
impl<'a> FromAny<'a> for i64 {
    fn from_offsets(s: OffsetSlice<'a>) -> Option<&'a [i64]> {
        if let OffsetSlice::I64(x) = s {
            Some(x)
        } else {
            None
        }
    }
    fn from_indices(s: IndexSlice<'a>) -> Option<&'a [i64]> {
        if let IndexSlice::I64(x) = s {
            Some(x)
        } else {
            None
        }
    }
}
impl<'a> FromAny<'a> for u64 {
    fn from_offsets(s: OffsetSlice<'a>) -> Option<&'a [u64]> {
        if let OffsetSlice::U64(x) = s {
            Some(x)
        } else {
            None
        }
    }
}
macro_rules! from_any_values {
    ($t:ty, $var:ident) => {
        impl<'a> FromAny<'a> for $t {
            fn from_values(s: ValueSlice<'a>) -> Option<&'a [$t]> {
                if let ValueSlice::$var(x) = s {
                    Some(x)
                } else {
                    None
                }
            }
            fn from_values_mut(s: ValueSliceMut<'_>) -> Option<&mut [$t]> {
                if let ValueSliceMut::$var(x) = s {
                    Some(x)
                } else {
                    None
                }
            }
        }
    };
}
from_any_values!(f32, F32);
from_any_values!(f64, F64);
from_any_values!(Complex32, C32);
from_any_values!(Complex64, C64);

/// A type-erased CSR matrix: what a C descriptor denotes. `values` is `None` for a
/// pattern-only matrix; `value_type` is still declared so results have a type.
#[derive(Clone, Copy, Debug)]
pub struct AnyCsr<'a> {
    pub nrows: usize,
    pub ncols: usize,
    pub base: usize,
    pub offsets: OffsetSlice<'a>,
    pub indices: IndexSlice<'a>,
    pub values: Option<ValueSlice<'a>>,
    pub value_type: ValueType,
}

/// The type signature of a matrix, used to check that A, B and a plan agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeSig {
    pub offsets: IndexType,
    pub indices: IndexType,
    pub values: ValueType,
}

impl std::fmt::Display for TypeSig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "offsets {}, indices {}, values {}",
            self.offsets.name(),
            self.indices.name(),
            self.values.name()
        )
    }
}

impl<'a> AnyCsr<'a> {
    pub fn sig(&self) -> TypeSig {
        TypeSig {
            offsets: self.offsets.kind(),
            indices: self.indices.kind(),
            values: self.value_type,
        }
    }

    /// The typed view; errors if the types are not `O, I, V`.
    pub fn typed<O, I, V>(&self) -> Result<CsrRef<'a, O, I, V>>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let mismatch = || Error::new(Status::TypeMismatch, format!("matrix has {}", self.sig()));
        let offs = O::from_offsets(self.offsets).ok_or_else(mismatch)?;
        let cols = I::from_indices(self.indices).ok_or_else(mismatch)?;
        let vals = match self.values {
            Some(v) => Some(V::from_values(v).ok_or_else(mismatch)?),
            None => {
                if self.value_type != V::KIND {
                    return Err(mismatch());
                }
                None
            }
        };
        CsrRef::new(self.nrows, self.ncols, self.base, offs, cols, vals)
    }

    /// The structure as a typed view without values (see [`CsrRef::pattern`]); errors if
    /// the offset and index types are not `O, I`, and on value arrays of another type or
    /// length, as [`Self::typed`] does.
    pub fn typed_pattern<O, I>(&self) -> Result<CsrRef<'a, O, I, Pattern>>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
    {
        let mismatch = || Error::new(Status::TypeMismatch, format!("matrix has {}", self.sig()));
        let offs = O::from_offsets(self.offsets).ok_or_else(mismatch)?;
        let cols = I::from_indices(self.indices).ok_or_else(mismatch)?;
        if let Some(v) = self.values {
            if v.kind() != self.value_type {
                return Err(mismatch());
            }
            if v.len() != cols.len() {
                return err(
                    Status::InvalidStructure,
                    format!("{} values for {} column indices", v.len(), cols.len()),
                );
            }
        }
        CsrRef::new(self.nrows, self.ncols, self.base, offs, cols, None)
    }

    /// Number of stored entries, from the last row offset (used by the ABI to size slices).
    pub fn nnz(&self) -> usize {
        match self.indices {
            IndexSlice::I32(x) => x.len(),
            IndexSlice::I64(x) => x.len(),
        }
    }
}

/// A generic operation on two matrices of one type signature (the visitor the ABI uses to
/// reach generic code without naming a type parameter).
pub trait PairOp {
    type Out;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Self::Out>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>;
}

/// The value type of the views [`PatternPairOp`] gets: their values are `None`, so the
/// type only fills the parameter (one instantiation for every value type).
pub type Pattern = f64;

/// A generic operation on the structure of two matrices of one type signature (the
/// symbolic phase): values are not read, so it is instantiated once per offset and index
/// type pair, not once per value type as well; `sig` is the matrices' full signature.
pub trait PatternPairOp {
    type Out;
    fn call<'a, O, I>(
        self,
        a: CsrRef<'a, O, I, Pattern>,
        b: CsrRef<'a, O, I, Pattern>,
        sig: TypeSig,
    ) -> Result<Self::Out>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>;
}

/// A generic operation on one matrix.
pub trait OneOp {
    type Out;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>) -> Result<Self::Out>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>;
}

/// Calls `$mac!(args.., O, I)` for the offset and index types of `$sig` (size_t column
/// indices are an error).
macro_rules! for_each_index_pair {
    ($sig:expr, $mac:ident $(, $arg:tt)*) => {
        match ($sig.offsets, $sig.indices) {
            (IndexType::Int32, IndexType::Int32) => $mac!($($arg,)* i32, i32),
            (IndexType::Int32, IndexType::Int64) => $mac!($($arg,)* i32, i64),
            (IndexType::Int64, IndexType::Int32) => $mac!($($arg,)* i64, i32),
            (IndexType::Int64, IndexType::Int64) => $mac!($($arg,)* i64, i64),
            (IndexType::SizeT, IndexType::Int32) => $mac!($($arg,)* u64, i32),
            (IndexType::SizeT, IndexType::Int64) => $mac!($($arg,)* u64, i64),
            (_, IndexType::SizeT) => err(
                Status::TypeMismatch,
                "size_t column indices are not supported (use int32 or int64)",
            ),
        }
    };
}

/// Calls `$mac!(O, I, V)` for the value type of `$sig`, given O and I.
macro_rules! with_value_type {
    ($sig:expr, $mac:ident, $o:ty, $i:ty) => {
        match $sig.values {
            ValueType::Float32 => $mac!($o, $i, f32),
            ValueType::Float64 => $mac!($o, $i, f64),
            ValueType::Complex32 => $mac!($o, $i, Complex32),
            ValueType::Complex64 => $mac!($o, $i, Complex64),
        }
    };
}

/// Calls `$mac!(O, I, V)` for the types of `$sig`.
macro_rules! for_each_sig {
    ($sig:expr, $mac:ident) => {
        for_each_index_pair!($sig, with_value_type, $sig, $mac)
    };
}

/// Calls `op` with typed views of `a` and `b`, which must share one type signature.
pub fn dispatch_pair<'a, F: PairOp>(a: &AnyCsr<'a>, b: &AnyCsr<'a>, op: F) -> Result<F::Out> {
    let sa = a.sig();
    let sb = b.sig();
    if sa != sb {
        return err(
            Status::TypeMismatch,
            format!("A has {sa} but B has {sb}; A and B must use the same types"),
        );
    }
    macro_rules! go {
        ($o:ty, $i:ty, $v:ty) => {{
            let ta = a.typed::<$o, $i, $v>().map_err(|e| prefix("A", e))?;
            let tb = b.typed::<$o, $i, $v>().map_err(|e| prefix("B", e))?;
            op.call(ta, tb)
        }};
    }
    for_each_sig!(sa, go)
}

/// Calls `op` with typed views of the structures of `a` and `b` (no values), which must
/// share one type signature (checked as [`dispatch_pair`] does).
pub fn dispatch_pattern_pair<'a, F: PatternPairOp>(
    a: &AnyCsr<'a>,
    b: &AnyCsr<'a>,
    op: F,
) -> Result<F::Out> {
    let sa = a.sig();
    let sb = b.sig();
    if sa != sb {
        return err(
            Status::TypeMismatch,
            format!("A has {sa} but B has {sb}; A and B must use the same types"),
        );
    }
    macro_rules! go {
        ($o:ty, $i:ty) => {{
            let ta = a.typed_pattern::<$o, $i>().map_err(|e| prefix("A", e))?;
            let tb = b.typed_pattern::<$o, $i>().map_err(|e| prefix("B", e))?;
            op.call(ta, tb, sa)
        }};
    }
    for_each_index_pair!(sa, go)
}

/// `a`'s structure, checked, as 0-based `usize` row offsets and column ids: for code that
/// counts over a whole pattern once (the distributed cost model's projections).
pub fn pattern_of(a: &AnyCsr<'_>, name: &str) -> Result<(Vec<usize>, Vec<usize>)> {
    let sa = a.sig();
    macro_rules! go {
        ($o:ty, $i:ty) => {{
            let t = a.typed_pattern::<$o, $i>().map_err(|e| prefix(name, e))?;
            t.validate(name)?;
            let first = t.row_start(0);
            let last = t.row_start(t.nrows());
            let rp = (0..=t.nrows()).map(|i| t.row_start(i) - first).collect();
            Ok((rp, (first..last).map(|p| t.col(p)).collect()))
        }};
    }
    for_each_index_pair!(sa, go)
}

/// Calls `op` with a typed view of `a`.
pub fn dispatch_one<'a, F: OneOp>(a: &AnyCsr<'a>, op: F) -> Result<F::Out> {
    let sa = a.sig();
    macro_rules! go {
        ($o:ty, $i:ty, $v:ty) => {{
            let ta = a.typed::<$o, $i, $v>().map_err(|e| prefix("A", e))?;
            op.call(ta)
        }};
    }
    for_each_sig!(sa, go)
}

/// Prefixes an error message with the argument name it concerns.
pub fn prefix(name: &str, e: Error) -> Error {
    Error::new(e.status, format!("{name}: {}", e.message))
}

impl<O: Idx, I: Idx, V: Scalar> CsrRef<'_, O, I, V> {
    /// A 64-bit digest of the structure (shape, offsets, column indices), used to detect a
    /// numeric call whose inputs no longer have the structure the plan was made for. Any
    /// change of a single offset or column index changes it (every step of the hash is a
    /// bijection in the entry it takes in).
    pub fn structure_digest(&self) -> u64 {
        self.scan(Scan::Digest).0
    }

    /// [`Self::validate`] and [`Self::structure_digest`] in one pass over the arrays (the
    /// symbolic phase needs both; the arrays are read once instead of twice). Each digest
    /// chunk also folds its order and range checks; only when one fails does the slow path
    /// run, to name the first offending entry with the message of [`Self::validate`].
    pub fn validate_and_digest(&self, name: &str) -> Result<u64> {
        let (digest, bad) = self.scan(Scan::Both);
        if bad {
            self.first_error(name)?;
            // Unreachable unless the two checks disagree: never accept such an input.
            return err(
                Status::InvalidStructure,
                format!("{name}: structure failed validation"),
            );
        }
        Ok(digest)
    }

    /// Whether [`Self::validate`] and the digests are one chunk per array: serial on the
    /// workers anyway, so not worth waking them.
    pub fn checks_are_small(&self) -> bool {
        self.row_offsets.len() <= DIGEST_CHUNK && self.col_indices.len() <= DIGEST_CHUNK
    }

    /// One parallel pass over both arrays in chunks of [`DIGEST_CHUNK`] entries: the
    /// digest (when `what` asks for it) and whether any chunk fails its checks (offsets
    /// decrease, a column index is out of range). Chunks are hashed independently (seeded
    /// by their index) and combined with a wrapping sum, which is associative and
    /// commutative: the digest does not depend on how rayon splits the work, nor on
    /// whether it runs serially (off the workers: a small product's checks).
    fn scan(&self, what: Scan) -> (u64, bool) {
        let offs = self.row_offsets;
        let cols = self.col_indices;
        let n_offs = offs.len().div_ceil(DIGEST_CHUNK);
        let n_cols = cols.len().div_ceil(DIGEST_CHUNK);
        let isa = Isa::detect();
        let chunk = |t: usize| {
            if t < n_offs {
                let lo = t * DIGEST_CHUNK;
                let hi = ((t + 1) * DIGEST_CHUNK).min(offs.len());
                // One entry past the chunk (when there is one) checks the chunk's edge.
                let window = &offs[lo..(hi + 1).min(offs.len())];
                let (h, bad) = scan_chunk(isa, what, t, &offs[lo..hi], window, Check::Order);
                (h, 0, bad)
            } else {
                let c = t - n_offs;
                let chunk = &cols[c * DIGEST_CHUNK..((c + 1) * DIGEST_CHUNK).min(cols.len())];
                let range = Check::Range(self.base as u64, self.ncols as u64);
                let (h, bad) = scan_chunk(isa, what, c, chunk, chunk, range);
                (0, h, bad)
            }
        };
        let sum = |x: (u64, u64, bool), y: (u64, u64, bool)| {
            (x.0.wrapping_add(y.0), x.1.wrapping_add(y.1), x.2 | y.2)
        };
        let n = n_offs + n_cols;
        let (ho, hc, bad) = if rayon::current_thread_index().is_none() {
            (0..n).map(chunk).fold((0, 0, false), sum)
        } else {
            (0..n)
                .into_par_iter()
                .map(chunk)
                .reduce(|| (0, 0, false), sum)
        };
        (digest_combine(ho, hc, self.nrows, self.ncols), bad)
    }
}

/// The first `Some` of `f` over `0..n` in order: on the current rayon pool, or serially
/// when called off the workers (never on rayon's global pool, whose threads the caller did
/// not ask for).
fn first_of<T: Send>(n: usize, f: impl Fn(usize) -> Option<T> + Sync + Send) -> Option<T> {
    if rayon::current_thread_index().is_none() {
        (0..n).find_map(f)
    } else {
        (0..n).into_par_iter().find_map_first(f)
    }
}

/// What [`CsrRef::scan`] computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scan {
    Digest,
    Check,
    Both,
}

/// The check a chunk gets: non-decreasing (offsets), or `x - lo < n` as unsigned
/// (column indices in `[lo, lo + n)`).
#[derive(Clone, Copy)]
enum Check {
    Order,
    Range(u64, u64),
}

/// Entries per independently hashed chunk of [`CsrRef::structure_digest`].
const DIGEST_CHUNK: usize = 1 << 15;

/// Independent hash chains per chunk: a step (xor, multiply, rotate) takes ~5 cycles, so
/// 32 chains keep four 8-lane vector multipliers (or the scalar one) busy.
const LANES: usize = 32;

#[inline(always)]
fn digest_mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01B3).rotate_left(23)
}

/// A bijective 64-bit finaliser (splitmix64's): nearby inputs give unrelated outputs.
#[inline(always)]
fn digest_spread(x: u64) -> u64 {
    let z = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether some entry of `w` is larger than the next (branch-free, vectorisable).
#[inline(always)]
fn decreases<T: Idx>(w: &[T]) -> bool {
    w.iter()
        .zip(w.iter().skip(1))
        .fold(false, |bad, (x, y)| bad | (x > y))
}

/// Whether some entry lies outside `[lo, lo + n)`: `x - lo` wraps to at least `n` for
/// an entry below `lo` (entries are at least -2^63, `lo` at most 1, `n` at most 2^63),
/// so one unsigned compare per entry (branch-free, vectorisable).
#[inline(always)]
fn out_of_range<T: Idx>(chunk: &[T], lo: u64, n: u64) -> bool {
    chunk.iter().fold(false, |bad, &x| {
        bad | ((x.to_i128() as u64).wrapping_sub(lo) >= n)
    })
}

/// The 64-bit word holding entries `2l, 2l + 1` (32-bit types) or entry `l` (64-bit
/// types) of `block`: a bijection, so the word changes whenever one of its entries does.
/// A missing second entry (at the end of a chunk of odd length) counts as 0.
#[inline(always)]
fn word<T: Idx, const FULL: bool>(block: &[T], l: usize) -> u64 {
    if std::mem::size_of::<T>() == 4 {
        let lo = block[2 * l].to_i128() as u64 & 0xffff_ffff;
        let hi = if FULL {
            block[2 * l + 1].to_i128() as u64
        } else {
            block.get(2 * l + 1).map_or(0, |x| x.to_i128() as u64)
        };
        lo | (hi << 32)
    } else {
        block[l].to_i128() as u64
    }
}

/// Hash of chunk `c` of an index array: [`LANES`] chains over 64-bit words (two 32-bit
/// entries per word, so one multiply per two entries), written so the compiler
/// vectorises the chains.
#[inline(always)]
fn chunk_digest<T: Idx>(c: usize, chunk: &[T]) -> u64 {
    let per_word = 8 / std::mem::size_of::<T>().clamp(4, 8);
    let seed = 0xcbf2_9ce4_8422_2325u64 ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut h = [0u64; LANES];
    for (l, x) in h.iter_mut().enumerate() {
        // Far-apart starts: with `seed ^ l`, words changed by 1 in lanes 0 and 1 swapped
        // the two lanes' states, a collision the fuzzer found (see `digest_spread`).
        *x = digest_spread(seed.wrapping_add(l as u64));
    }
    let mut blocks = chunk.chunks_exact(LANES * per_word);
    for b in &mut blocks {
        for (l, x) in h.iter_mut().enumerate() {
            *x = digest_mix(*x, word::<T, true>(b, l));
        }
    }
    // The tail: word l (the last one possibly half-filled) goes to chain l; the chunk's
    // length is fixed by the array's, so the packing stays a bijection.
    let rest = blocks.remainder();
    for (l, x) in h.iter_mut().enumerate().take(rest.len().div_ceil(per_word)) {
        *x = digest_mix(*x, word::<T, false>(rest, l));
    }
    // Folded in order from the seed, so that lanes whose states were exchanged differ.
    let folded = h.iter().fold(seed, |d, &x| digest_mix(d, x));
    folded.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A chunk's digest (0 unless `what` asks for it) and whether `checked` fails `check`
/// (false unless `what` asks for it): the body the ISA-specific copies below inline.
#[inline(always)]
fn scan_body<T: Idx>(
    what: Scan,
    c: usize,
    hashed: &[T],
    checked: &[T],
    check: Check,
) -> (u64, bool) {
    let h = if what == Scan::Check {
        0
    } else {
        chunk_digest(c, hashed)
    };
    let bad = what != Scan::Digest
        && match check {
            Check::Order => decreases(checked),
            Check::Range(lo, n) => out_of_range(checked, lo, n),
        };
    (h, bad)
}

fn scan_chunk<T: Idx>(
    isa: Isa,
    what: Scan,
    c: usize,
    hashed: &[T],
    checked: &[T],
    check: Check,
) -> (u64, bool) {
    match isa {
        Isa::Base => scan_body(what, c, hashed, checked, check),
        // SAFETY: callers pass an available path (`Isa::detect`, `Isa::available`), whose
        // features include those these copies are compiled for.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { scan_avx2(what, c, hashed, checked, check) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { scan_avx512(what, c, hashed, checked, check) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => scan_body(what, c, hashed, checked, check),
    }
}

/// [`scan_body`] compiled for AVX2 (4 hash lanes per vector; the 64-bit multiply is
/// emulated from 32-bit ones, still twice the scalar rate).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2<T: Idx>(
    what: Scan,
    c: usize,
    hashed: &[T],
    checked: &[T],
    check: Check,
) -> (u64, bool) {
    scan_body(what, c, hashed, checked, check)
}

/// [`scan_body`] compiled for AVX-512 (8 hash lanes per vector, native 64-bit multiply
/// and rotate).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2")]
fn scan_avx512<T: Idx>(
    what: Scan,
    c: usize,
    hashed: &[T],
    checked: &[T],
    check: Check,
) -> (u64, bool) {
    scan_body(what, c, hashed, checked, check)
}

fn digest_combine(ho: u64, hc: u64, nrows: usize, ncols: usize) -> u64 {
    digest_mix(digest_mix(digest_mix(ho, hc), nrows as u64), ncols as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked check finds the first bad entry wherever it lies (chunk edges, signs).
    #[test]
    fn validate_reports_the_first_bad_entry() {
        let n = 200_000usize;
        let offs: Vec<i64> = (0..=n as i64).collect();
        let cols: Vec<i64> = (0..n as i64).map(|i| (i * 7) % n as i64).collect();
        let ok = CsrRef::<i64, i64, f64>::new(n, n, 0, &offs, &cols, None).unwrap();
        assert!(ok.validate("A").is_ok());
        for p in [0usize, 1, 65_535, 65_536, 131_072, n - 1] {
            for bad in [-1i64, n as i64, i64::MIN] {
                let mut c = cols.clone();
                c[p] = bad;
                if p + 7 < n {
                    c[p + 7] = -3;
                }
                let m = CsrRef::<i64, i64, f64>::new(n, n, 0, &offs, &c, None).unwrap();
                let e = m.validate("A").unwrap_err();
                assert_eq!(e.status, Status::IndexOutOfRange);
                assert!(
                    e.message.contains(&format!("at position {p} (row {p})")),
                    "{e}"
                );
            }
            let mut o = offs.clone();
            o[p + 1] = o[p] - 1;
            let m = CsrRef::<i64, i64, f64>::new(n, n, 0, &o, &cols, None);
            if let Ok(m) = m {
                let e = m.validate("A").unwrap_err();
                assert_eq!(e.status, Status::InvalidStructure);
                assert!(e.message.contains(&format!("at row {p}:")), "{e}");
            }
        }
    }

    /// The fused check-and-hash gives the digest of `structure_digest` on valid input and
    /// the error of `validate` (same status and message) on invalid input.
    #[test]
    fn validate_and_digest_matches_the_separate_passes() {
        let n = 100_000usize;
        let offs: Vec<i64> = (0..=n as i64).map(|i| 1 + i).collect();
        let cols: Vec<i64> = (0..n as i64).map(|i| 1 + (i * 13) % n as i64).collect();
        let ok = CsrRef::<i64, i64, f64>::new(n, n, 1, &offs, &cols, None).unwrap();
        assert_eq!(ok.validate_and_digest("A").unwrap(), ok.structure_digest());
        // Bad entries at chunk edges (32768) and elsewhere, offsets and columns.
        for p in [0usize, 32_767, 32_768, 65_536, n - 1] {
            for bad in [0i64, n as i64 + 1, -5] {
                let mut c = cols.clone();
                c[p] = bad;
                let m = CsrRef::<i64, i64, f64>::new(n, n, 1, &offs, &c, None).unwrap();
                let want = m.validate("B").unwrap_err();
                let got = m.validate_and_digest("B").unwrap_err();
                assert_eq!((got.status, &got.message), (want.status, &want.message));
                assert!(got.message.contains(&format!("at position {p}")), "{got}");
            }
            if p + 1 < n {
                let mut o = offs.clone();
                o[p + 1] = o[p] - 1;
                if let Ok(m) = CsrRef::<i64, i64, f64>::new(n, n, 1, &o, &cols, None) {
                    let want = m.validate("A").unwrap_err();
                    let got = m.validate_and_digest("A").unwrap_err();
                    assert_eq!((got.status, &got.message), (want.status, &want.message));
                    assert_eq!(got.status, Status::InvalidStructure);
                }
            }
        }
        // Empty matrix: no columns at all.
        let z = [0i32; 4];
        let e = CsrRef::<i32, i32, f64>::new(3, 5, 0, &z, &[], None).unwrap();
        assert_eq!(e.validate_and_digest("A").unwrap(), e.structure_digest());
    }

    /// Every single changed offset or column index changes the digest: at each position of
    /// small matrices (tails of odd length, one word half-filled) and at the chunk and block
    /// edges of a large one, for 32- and 64-bit indices, by +1, -1 and in bit 30.
    /// Every short column array over a few values has its own digest: changes in two
    /// entries at once (lanes 0 and 1 of the hash) used to cancel ({0,0,0} and {1,0,1}).
    #[test]
    fn structure_digest_separates_all_short_arrays() {
        fn all<I: Idx + TryFrom<usize>>(len: usize, vals: usize) {
            let mut seen = std::collections::HashMap::new();
            let offs = [0i64, len as i64];
            for code in 0..vals.pow(len as u32) {
                let cols: Vec<I> = (0..len)
                    .map(|p| I::try_from(code / vals.pow(p as u32) % vals).ok().unwrap())
                    .collect();
                let m = CsrRef::<i64, I, f64>::new(1, vals, 0, &offs, &cols, None).unwrap();
                if let Some(other) = seen.insert(m.structure_digest(), code) {
                    panic!("length {len}: codes {other} and {code} share a digest");
                }
            }
        }
        for len in 1..=6 {
            all::<i32>(len, 4);
            all::<i64>(len, 4);
        }
        all::<i32>(3, 40);
    }

    #[test]
    fn structure_digest_sees_every_single_change() {
        fn check<O, I>(n: usize, nnz: usize, positions: &[usize])
        where
            O: Idx + TryFrom<usize>,
            I: Idx + TryFrom<usize>,
        {
            let offs: Vec<O> = (0..=n)
                .map(|i| O::try_from(i * nnz / n).ok().unwrap())
                .collect();
            let cols: Vec<I> = (0..nnz)
                .map(|p| I::try_from((p * 7 + p / 3) % n).ok().unwrap())
                .collect();
            let base = CsrRef::<O, I, f64>::new(n, n, 0, &offs, &cols, None).unwrap();
            let d0 = base.structure_digest();
            assert_eq!(base.validate_and_digest("A").unwrap(), d0);
            let bump = |x: i128, how: usize| match how {
                0 => x + 1,
                1 => x - 1,
                _ => x ^ (1 << 30),
            };
            let mut seen = std::collections::HashSet::new();
            seen.insert(d0);
            for &p in positions {
                for how in 0..3 {
                    if p < nnz {
                        let mut c = cols.clone();
                        let v = bump(c[p].to_i128(), how);
                        let Ok(v) = usize::try_from(v) else { continue };
                        let Ok(v) = I::try_from(v) else { continue };
                        c[p] = v;
                        let m = CsrRef::<O, I, f64>::new(n, n, 0, &offs, &c, None).unwrap();
                        assert_ne!(m.structure_digest(), d0, "column {p} changed ({how})");
                        seen.insert(m.structure_digest());
                    }
                    if p > 0 && p < n {
                        let mut o = offs.clone();
                        let v = bump(o[p].to_i128(), how);
                        let Ok(v) = usize::try_from(v) else { continue };
                        let Ok(v) = O::try_from(v) else { continue };
                        o[p] = v;
                        let m = CsrRef::<O, I, f64>::new(n, n, 0, &o, &cols, None).unwrap();
                        assert_ne!(m.structure_digest(), d0, "offset {p} changed ({how})");
                    }
                }
            }
            // Distinct changes give distinct digests (no systematic collisions).
            assert!(seen.len() > positions.iter().filter(|&&p| p < nnz).count());
        }
        let all: Vec<usize> = (0..300).collect();
        check::<i32, i32>(37, 251, &all);
        check::<i64, i64>(37, 251, &all);
        check::<u64, i32>(41, 129, &all);
        check::<i32, i64>(41, 129, &all);
        let n = 70_001;
        let nnz = 2 * DIGEST_CHUNK + 2 * LANES * 2 + 3;
        let mut edges = vec![0, 1, 2, nnz - 3, nnz - 2, nnz - 1, n - 1, n - 2];
        for c in [DIGEST_CHUNK, 2 * DIGEST_CHUNK] {
            edges.extend([c - 2, c - 1, c, c + 1, c + 2 * LANES - 1, c + 2 * LANES]);
        }
        check::<i32, i32>(n, nnz, &edges);
        check::<i64, i64>(n, nnz, &edges);
    }

    /// Each instruction-set copy of the chunk scan gives the scalar copy's digest and
    /// verdict (the digest must not depend on the machine's features within a process,
    /// and a copy that miscompiled a check would accept bad input).
    #[test]
    fn scan_copies_agree() {
        let n = 3 * DIGEST_CHUNK + 77;
        let v32: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919) % 5003).collect();
        let v64: Vec<i64> = v32.iter().map(|&x| x as i64 * 3 - 7).collect();
        let isas: Vec<Isa> = [Isa::Base, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|i| i.available())
            .collect();
        for c in [0usize, 1, 5] {
            for len in [0usize, 1, 63, 64, 65, 1000, n] {
                let checks = [Check::Order, Check::Range(0, 5003), Check::Range(1, 5002)];
                for check in checks {
                    let want32 = scan_body(Scan::Both, c, &v32[..len], &v32[..len], check);
                    let want64 = scan_body(Scan::Both, c, &v64[..len], &v64[..len], check);
                    for &isa in &isas {
                        let s = &v32[..len];
                        assert_eq!(scan_chunk(isa, Scan::Both, c, s, s, check), want32);
                        let s = &v64[..len];
                        assert_eq!(scan_chunk(isa, Scan::Both, c, s, s, check), want64);
                    }
                }
            }
        }
        // The range check rejects entries just outside, in every copy.
        for &isa in &isas {
            for bad in [-1i32, 5003, i32::MIN, i32::MAX] {
                let mut v = v32.clone();
                v[n - 1] = bad;
                assert!(scan_chunk(isa, Scan::Check, 0, &v, &v, Check::Range(0, 5003)).1);
            }
            let mut v = v64.clone();
            v[40] = i64::MIN;
            assert!(scan_chunk(isa, Scan::Check, 0, &v, &v, Check::Range(0, 1 << 40)).1);
            let up: Vec<i32> = (0..1000).collect();
            assert!(!scan_chunk(isa, Scan::Check, 0, &up, &up, Check::Order).1);
            let mut down = up.clone();
            down.swap(998, 999);
            assert!(scan_chunk(isa, Scan::Check, 0, &down, &down, Check::Order).1);
        }
    }

    /// The digest must not depend on how rayon splits the work (thread count, stealing).
    #[test]
    fn structure_digest_is_deterministic_across_pools() {
        let n = 300_000usize;
        let offs: Vec<i32> = (0..=n as i32).collect();
        let cols: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % n as i32).collect();
        let a = CsrRef::<i32, i32, f64>::new(n, n, 0, &offs, &cols, None).unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let many = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let d1 = one.install(|| a.structure_digest());
        for _ in 0..20 {
            assert_eq!(many.install(|| a.structure_digest()), d1);
        }
        let mut moved = cols.clone();
        moved.swap(10, 200_000);
        let b = CsrRef::<i32, i32, f64>::new(n, n, 0, &offs, &moved, None).unwrap();
        assert_ne!(many.install(|| b.structure_digest()), d1);
    }
}
