//! The element types a CSR matrix may use: row offsets (i32, i64, u64 = size_t), column
//! indices (i32, i64) and values (f32, f64, and complex numbers of either). Kernels are
//! generic over these traits; the ABI never names a generic, it picks the instantiation
//! through `crate::common::csr::AnyCsr`.

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
    ($t:ty, $kind:expr, $unsigned:ty) => {
        impl Idx for $t {
            const KIND: IndexType = $kind;
            // Through the unsigned type of the same width: a 32-bit index is then loaded
            // with a zero-extending `mov` rather than `movsxd`, shorter on the chain of
            // dependent loads every kernel walks (docs/DESIGN-NOTES.md, common::csr). A
            // negative i32 still lands at or above 2^31, past every array it can address.
            #[inline(always)]
            fn to_usize(self) -> usize {
                self as $unsigned as usize
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
impl_idx!(i32, IndexType::Int32, u32);
impl_idx!(i64, IndexType::Int64, u64);
impl_idx!(u64, IndexType::SizeT, u64);

/// Value types: real and complex floating point.
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
    /// `v` as this type (the real part of a complex value, the imaginary part zero).
    fn from_f64(v: f64) -> Self;
    /// The value (its real part for a complex value) as f64.
    fn to_f64(self) -> f64;
    /// The complex conjugate (the value itself for real types).
    #[inline(always)]
    fn conj(self) -> Self {
        self
    }
    /// The value, type-erased.
    fn to_any(self) -> AnyScalar;
    /// The value of `s` when it has this type.
    fn from_any(s: AnyScalar) -> Option<Self>;
}

macro_rules! impl_real {
    ($t:ty, $kind:ident) => {
        impl Scalar for $t {
            const KIND: ValueType = ValueType::$kind;
            const ZERO: Self = 0.0;
            const NEG_ZERO: Self = -0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_any(self) -> AnyScalar {
                AnyScalar::$kind(self)
            }
            fn from_any(s: AnyScalar) -> Option<Self> {
                match s {
                    AnyScalar::$kind(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
impl_real!(f32, Float32);
impl_real!(f64, Float64);

/// A complex number laid out as C99 `float _Complex` / `double _Complex` (the real part,
/// then the imaginary part, aligned as `T`), which is also the layout of C++
/// `std::complex<T>` and Fortran `complex(c_float_complex)` / `complex(c_double_complex)`.
/// Arithmetic is the textbook one, each part rounded on its own and never fused, so that
/// results are the same bits on every machine and thread count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex<T> {
    pub re: T,
    pub im: T,
}

/// `float _Complex`.
pub type Complex32 = Complex<f32>;
/// `double _Complex`.
pub type Complex64 = Complex<f64>;

impl<T> Complex<T> {
    pub const fn new(re: T, im: T) -> Self {
        Complex { re, im }
    }
}

macro_rules! impl_complex {
    ($t:ty, $kind:ident) => {
        impl Add for Complex<$t> {
            type Output = Self;
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                Complex::new(self.re + o.re, self.im + o.im)
            }
        }
        impl AddAssign for Complex<$t> {
            #[inline(always)]
            fn add_assign(&mut self, o: Self) {
                self.re += o.re;
                self.im += o.im;
            }
        }
        impl Mul for Complex<$t> {
            type Output = Self;
            /// `(ar br - ai bi, ar bi + ai br)`: no special cases for infinities (as
            /// Fortran and `-fcx-limited-range`), so a NaN or Inf propagates as in real
            /// arithmetic on the parts.
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                Complex::new(
                    self.re * o.re - self.im * o.im,
                    self.re * o.im + self.im * o.re,
                )
            }
        }
        impl Scalar for Complex<$t> {
            const KIND: ValueType = ValueType::$kind;
            const ZERO: Self = Complex::new(0.0, 0.0);
            /// Exact additive identity componentwise: -0.0 + x is x bitwise in each part.
            const NEG_ZERO: Self = Complex::new(-0.0, -0.0);
            const ONE: Self = Complex::new(1.0, 0.0);
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                Complex::new(v as $t, 0.0)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            #[inline(always)]
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            fn to_any(self) -> AnyScalar {
                AnyScalar::$kind(self)
            }
            fn from_any(s: AnyScalar) -> Option<Self> {
                match s {
                    AnyScalar::$kind(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
impl_complex!(f32, Complex32);
impl_complex!(f64, Complex64);

/// One value of any value type (SpMM's alpha and beta), tagged with its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnyScalar {
    Float32(f32),
    Float64(f64),
    Complex32(Complex32),
    Complex64(Complex64),
}

impl AnyScalar {
    pub fn kind(&self) -> ValueType {
        match self {
            AnyScalar::Float32(_) => ValueType::Float32,
            AnyScalar::Float64(_) => ValueType::Float64,
            AnyScalar::Complex32(_) => ValueType::Complex32,
            AnyScalar::Complex64(_) => ValueType::Complex64,
        }
    }
    /// Whether the value is zero (both parts of a complex value; either sign).
    pub fn is_zero(&self) -> bool {
        match *self {
            AnyScalar::Float32(v) => v == 0.0,
            AnyScalar::Float64(v) => v == 0.0,
            AnyScalar::Complex32(v) => v == Complex32::ZERO,
            AnyScalar::Complex64(v) => v == Complex64::ZERO,
        }
    }
    /// `v` in type `t` (the real part of a complex value).
    pub fn from_f64(t: ValueType, v: f64) -> AnyScalar {
        match t {
            ValueType::Float32 => f32::from_f64(v).to_any(),
            ValueType::Float64 => v.to_any(),
            ValueType::Complex32 => Complex32::from_f64(v).to_any(),
            ValueType::Complex64 => Complex64::from_f64(v).to_any(),
        }
    }
}

impl From<f32> for AnyScalar {
    fn from(v: f32) -> Self {
        AnyScalar::Float32(v)
    }
}
impl From<f64> for AnyScalar {
    fn from(v: f64) -> Self {
        AnyScalar::Float64(v)
    }
}
impl From<Complex32> for AnyScalar {
    fn from(v: Complex32) -> Self {
        AnyScalar::Complex32(v)
    }
}
impl From<Complex64> for AnyScalar {
    fn from(v: Complex64) -> Self {
        AnyScalar::Complex64(v)
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
    /// Bytes of one entry.
    pub fn size(self) -> usize {
        match self {
            IndexType::Int32 => 4,
            IndexType::Int64 | IndexType::SizeT => 8,
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
    /// [`Complex32`], C99 `float _Complex`.
    Complex32 = 2,
    /// [`Complex64`], C99 `double _Complex`.
    Complex64 = 3,
}

impl ValueType {
    pub fn from_code(code: i32) -> Option<ValueType> {
        match code {
            0 => Some(ValueType::Float32),
            1 => Some(ValueType::Float64),
            2 => Some(ValueType::Complex32),
            3 => Some(ValueType::Complex64),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Float32 => "float",
            ValueType::Float64 => "double",
            ValueType::Complex32 => "complex float",
            ValueType::Complex64 => "complex double",
        }
    }
    /// Bytes of one value.
    pub fn size(self) -> usize {
        match self {
            ValueType::Float32 => 4,
            ValueType::Float64 | ValueType::Complex32 => 8,
            ValueType::Complex64 => 16,
        }
    }
    /// Alignment of a value array (that of the real type of the parts, as in C).
    pub fn align(self) -> usize {
        match self {
            ValueType::Float32 | ValueType::Complex32 => 4,
            ValueType::Float64 | ValueType::Complex64 => 8,
        }
    }
    pub fn is_complex(self) -> bool {
        matches!(self, ValueType::Complex32 | ValueType::Complex64)
    }
}
