//! The element types a CSR matrix may use: row offsets (i32, i64, u64 = size_t), column
//! indices (i32, i64) and values (f32, f64). Kernels are generic over these traits; the
//! ABI never names a generic, it picks the instantiation through `crate::common::csr::AnyCsr`.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Mul};

/// Integer types usable as row offsets or column indices.
pub trait Idx: Copy + Send + Sync + Debug + PartialOrd + 'static {
    const KIND: IndexType;
    /// Converts a value already checked to be non-negative and in range.
    fn to_usize(self) -> usize;
    /// Signed view for validation messages and range checks (u64 above i64::MAX saturates).
    fn to_i128(self) -> i128;
    /// `None` if `v` does not fit the type.
    fn try_from_usize(v: usize) -> Option<Self>;
    /// Largest value representable, as usize (saturating on 32-bit hosts).
    fn max_usize() -> usize;
}

macro_rules! impl_idx {
    ($t:ty, $kind:expr) => {
        impl Idx for $t {
            const KIND: IndexType = $kind;
            #[inline(always)]
            fn to_usize(self) -> usize {
                self as usize
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn try_from_usize(v: usize) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn max_usize() -> usize {
                usize::try_from(<$t>::MAX).unwrap_or(usize::MAX)
            }
        }
    };
}
impl_idx!(i32, IndexType::Int32);
impl_idx!(i64, IndexType::Int64);
impl_idx!(u64, IndexType::SizeT);

/// Floating-point value types.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + Debug
    + PartialEq
    + Default
    + Add<Output = Self>
    + AddAssign
    + Mul<Output = Self>
    + 'static
{
    const KIND: ValueType;
    const ZERO: Self;
    /// -0.0: the exact identity of IEEE addition (-0.0 + x is x bitwise, also for +0.0).
    const NEG_ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Scalar for f32 {
    const KIND: ValueType = ValueType::Float32;
    const ZERO: Self = 0.0;
    const NEG_ZERO: Self = -0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const KIND: ValueType = ValueType::Float64;
    const ZERO: Self = 0.0;
    const NEG_ZERO: Self = -0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Integer type tags, numbered as in the C header (`SPGEMM_INDEX_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    Int32 = 0,
    Int64 = 1,
    /// `size_t` (64-bit hosts only), as Tpetra uses for row offsets.
    SizeT = 2,
}

impl IndexType {
    pub fn from_code(code: i32) -> Option<IndexType> {
        match code {
            0 => Some(IndexType::Int32),
            1 => Some(IndexType::Int64),
            2 => Some(IndexType::SizeT),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            IndexType::Int32 => "int32",
            IndexType::Int64 => "int64",
            IndexType::SizeT => "size_t",
        }
    }
    /// Largest value storable, as usize.
    pub fn max_usize(self) -> usize {
        match self {
            IndexType::Int32 => i32::MAX as usize,
            IndexType::Int64 => i64::MAX as usize,
            IndexType::SizeT => usize::MAX,
        }
    }
}

/// Value type tags, numbered as in the C header (`SPGEMM_VALUE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    Float32 = 0,
    Float64 = 1,
}

impl ValueType {
    pub fn from_code(code: i32) -> Option<ValueType> {
        match code {
            0 => Some(ValueType::Float32),
            1 => Some(ValueType::Float64),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Float32 => "float",
            ValueType::Float64 => "double",
        }
    }
}
