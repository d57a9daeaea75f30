//! Test support: random and adversarial CSR matrices, conversion to every index/value/base
//! combination, and a simple reference product.
#![allow(dead_code)]

use spgemm::types::{Complex, Complex32, Complex64, IndexType, ValueType};
use spgemm::{AnyCsr, IndexSlice, OffsetSlice, Op, ValueSlice};

mod product;
#[allow(unused_imports)] // not every suite compares products
pub use product::*;

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A 0-based CSR matrix in plain vectors (the test's ground truth).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    pub nrows: usize,
    pub ncols: usize,
    pub ptr: Vec<usize>,
    pub col: Vec<usize>,
    pub val: Vec<f64>,
}

/// What to put in a random matrix.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    pub nrows: usize,
    pub ncols: usize,
    pub max_row: usize,
    /// Probability that a row is empty.
    pub empty_rows: f64,
    /// Allow the same column twice in a row.
    pub duplicates: bool,
    /// Leave rows unsorted.
    pub unsorted: bool,
    /// Fraction of explicit zeros.
    pub zeros: f64,
    /// Put a NaN or an Inf somewhere.
    pub non_finite: bool,
    /// Values are small integers (sums exact in f32 and f64, cancellation possible).
    pub integer_values: bool,
}

pub fn random(rng: &mut Rng, s: Shape) -> Csr {
    let mut ptr = vec![0];
    let mut col = Vec::new();
    let mut val = Vec::new();
    for _ in 0..s.nrows {
        if s.ncols > 0 && rng.unit() >= s.empty_rows {
            let len = rng.below(s.max_row + 1);
            let mut cols: Vec<usize> = (0..len).map(|_| rng.below(s.ncols)).collect();
            if !s.duplicates {
                cols.sort_unstable();
                cols.dedup();
            }
            if s.unsorted {
                for i in (1..cols.len()).rev() {
                    let j = rng.below(i + 1);
                    cols.swap(i, j);
                }
            } else {
                cols.sort_unstable();
            }
            for c in cols {
                col.push(c);
                let v = if rng.unit() < s.zeros {
                    0.0
                } else if s.integer_values {
                    (rng.below(7) as f64) - 3.0
                } else {
                    rng.unit() * 2.0 - 1.0
                };
                val.push(v);
            }
        }
        ptr.push(col.len());
    }
    if s.non_finite && !val.is_empty() {
        let p = rng.below(val.len());
        val[p] = f64::NAN;
        let q = rng.below(val.len());
        val[q] = f64::INFINITY;
    }
    Csr {
        nrows: s.nrows,
        ncols: s.ncols,
        ptr,
        col,
        val,
    }
}

/// The imaginary part of entry `p` of a matrix in a complex type (the real part is the
/// entry's value): small multiples of 0.5, so that they are exact in every type.
pub fn imag_part(p: usize) -> f64 {
    ((p * 5 + 1) % 9) as f64 * 0.5 - 2.0
}

/// op(M) with its values in `T` (entry p of M has value `T::entry(val[p], p)`), rows of a
/// transpose listing their entries in increasing row of M and, within a row of M, in
/// storage order (the order the library's transposes keep), conjugated for
/// `Op::ConjugateTranspose`.
pub struct OpMat<T> {
    pub nrows: usize,
    pub ncols: usize,
    pub ptr: Vec<usize>,
    pub col: Vec<usize>,
    pub val: Vec<T>,
}

pub fn op_mat<T: RefScalar>(m: &Csr, op: Op) -> OpMat<T> {
    let val = |p: usize| T::entry(m.val[p], p);
    if op == Op::NonTranspose {
        return OpMat {
            nrows: m.nrows,
            ncols: m.ncols,
            ptr: m.ptr.clone(),
            col: m.col.clone(),
            val: (0..m.col.len()).map(val).collect(),
        };
    }
    let mut rows: Vec<Vec<(usize, T)>> = vec![Vec::new(); m.ncols];
    for i in 0..m.nrows {
        for p in m.ptr[i]..m.ptr[i + 1] {
            let v = if op == Op::ConjugateTranspose {
                val(p).conj()
            } else {
                val(p)
            };
            rows[m.col[p]].push((i, v));
        }
    }
    let mut out = OpMat {
        nrows: m.ncols,
        ncols: m.nrows,
        ptr: vec![0],
        col: Vec::new(),
        val: Vec::new(),
    };
    for r in rows {
        for (c, v) in r {
            out.col.push(c);
            out.val.push(v);
        }
        out.ptr.push(out.col.len());
    }
    out
}

/// Reference C = A*B: per row, products summed in the order A's row and B's rows are
/// stored (the first product of a column is taken as is), columns sorted.
pub fn reference<T: RefScalar>(a: &Csr, b: &Csr) -> (Vec<usize>, Vec<usize>, Vec<T>) {
    reference_op(a, Op::NonTranspose, b, Op::NonTranspose)
}

/// Reference C = op(A)*op(B) (see [`op_mat`] for the order of a transpose's entries).
pub fn reference_op<T: RefScalar>(
    a: &Csr,
    op_a: Op,
    b: &Csr,
    op_b: Op,
) -> (Vec<usize>, Vec<usize>, Vec<T>) {
    let a = op_mat::<T>(a, op_a);
    let b = op_mat::<T>(b, op_b);
    assert_eq!(a.ncols, b.nrows);
    let mut ptr = vec![0];
    let mut col = Vec::new();
    let mut val = Vec::new();
    for i in 0..a.nrows {
        let mut row: std::collections::BTreeMap<usize, T> = Default::default();
        for p in a.ptr[i]..a.ptr[i + 1] {
            let av = a.val[p];
            for q in b.ptr[a.col[p]]..b.ptr[a.col[p] + 1] {
                let prod = av.mul(b.val[q]);
                row.entry(b.col[q])
                    .and_modify(|x| *x = x.add(prod))
                    .or_insert(prod);
            }
        }
        for (c, v) in row {
            col.push(c);
            val.push(v);
        }
        ptr.push(col.len());
    }
    (ptr, col, val)
}

/// Values of the reference computations, with the library's arithmetic written out
/// (complex: `(ar br - ai bi, ar bi + ai br)`, parts rounded separately, no fused ops).
pub trait RefScalar: Copy + std::fmt::Debug {
    fn from(v: f64) -> Self;
    /// The value of entry `p` whose (real) value in a test matrix is `v`.
    fn entry(v: f64, p: usize) -> Self {
        let _ = p;
        Self::from(v)
    }
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn conj(self) -> Self {
        self
    }
    /// The bits, NaN (in any part) canonical, so that results compare exactly.
    fn bits(self) -> u128;
}
impl RefScalar for f64 {
    fn from(v: f64) -> Self {
        v
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn bits(self) -> u128 {
        if self.is_nan() {
            u64::MAX as u128
        } else {
            self.to_bits() as u128
        }
    }
}
impl RefScalar for f32 {
    fn from(v: f64) -> Self {
        v as f32
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
    fn bits(self) -> u128 {
        if self.is_nan() {
            u64::MAX as u128
        } else {
            self.to_bits() as u128
        }
    }
}
macro_rules! ref_complex {
    ($t:ty) => {
        impl RefScalar for Complex<$t> {
            fn from(v: f64) -> Self {
                Complex {
                    re: v as $t,
                    im: 0.0,
                }
            }
            fn entry(v: f64, p: usize) -> Self {
                Complex {
                    re: v as $t,
                    im: imag_part(p) as $t,
                }
            }
            fn add(self, o: Self) -> Self {
                Complex {
                    re: self.re + o.re,
                    im: self.im + o.im,
                }
            }
            fn mul(self, o: Self) -> Self {
                Complex {
                    re: self.re * o.re - self.im * o.im,
                    im: self.re * o.im + self.im * o.re,
                }
            }
            fn conj(self) -> Self {
                Complex {
                    re: self.re,
                    im: -self.im,
                }
            }
            fn bits(self) -> u128 {
                (self.re.bits() << 64) | self.im.bits()
            }
        }
    };
}
ref_complex!(f32);
ref_complex!(f64);

/// Owned arrays of one matrix in a chosen type combination and base.
pub struct Typed {
    pub nrows: usize,
    pub ncols: usize,
    pub base: usize,
    pub off: Off,
    pub idx: Ix,
    pub val: Option<Val>,
    pub vt: ValueType,
}
pub enum Off {
    I32(Vec<i32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}
pub enum Ix {
    I32(Vec<i32>),
    I64(Vec<i64>),
}
pub enum Val {
    F32(Vec<f32>),
    F64(Vec<f64>),
    C32(Vec<Complex32>),
    C64(Vec<Complex64>),
}

/// 64-bit offsets, 32-bit indices, f64 values, 0-based, with values: the exec layer's tests.
pub fn typed_i64_i32(m: &Csr) -> Typed {
    typed(
        m,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    )
}

/// The output format of [`typed_i64_i32`]'s products.
pub const FORMAT_I64_I32: spgemm::OutputFormat = spgemm::OutputFormat {
    offsets: IndexType::Int64,
    indices: IndexType::Int32,
    base: 0,
};

pub fn typed(
    m: &Csr,
    ot: IndexType,
    it: IndexType,
    vt: ValueType,
    base: usize,
    with_values: bool,
) -> Typed {
    let off = match ot {
        IndexType::Int32 => Off::I32(m.ptr.iter().map(|&x| (x + base) as i32).collect()),
        IndexType::Int64 => Off::I64(m.ptr.iter().map(|&x| (x + base) as i64).collect()),
        IndexType::SizeT => Off::U64(m.ptr.iter().map(|&x| (x + base) as u64).collect()),
    };
    let idx = match it {
        IndexType::Int32 => Ix::I32(m.col.iter().map(|&x| (x + base) as i32).collect()),
        _ => Ix::I64(m.col.iter().map(|&x| (x + base) as i64).collect()),
    };
    let val = with_values.then(|| match vt {
        ValueType::Float32 => Val::F32(m.val.iter().map(|&x| x as f32).collect()),
        ValueType::Float64 => Val::F64(m.val.clone()),
        ValueType::Complex32 => Val::C32(entries(m)),
        ValueType::Complex64 => Val::C64(entries(m)),
    });
    Typed {
        nrows: m.nrows,
        ncols: m.ncols,
        base,
        off,
        idx,
        val,
        vt,
    }
}

impl Typed {
    pub fn any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.nrows,
            ncols: self.ncols,
            base: self.base,
            offsets: match &self.off {
                Off::I32(v) => OffsetSlice::I32(v),
                Off::I64(v) => OffsetSlice::I64(v),
                Off::U64(v) => OffsetSlice::U64(v),
            },
            indices: match &self.idx {
                Ix::I32(v) => IndexSlice::I32(v),
                Ix::I64(v) => IndexSlice::I64(v),
            },
            values: self.val.as_ref().map(|v| match v {
                Val::F32(v) => ValueSlice::F32(v),
                Val::F64(v) => ValueSlice::F64(v),
                Val::C32(v) => ValueSlice::C32(v),
                Val::C64(v) => ValueSlice::C64(v),
            }),
            value_type: self.vt,
        }
    }
}

pub const OFFSET_TYPES: [IndexType; 3] = [IndexType::Int32, IndexType::Int64, IndexType::SizeT];
pub const INDEX_TYPES: [IndexType; 2] = [IndexType::Int32, IndexType::Int64];
/// The values of `m` in a complex type (see [`imag_part`]).
pub fn entries<T: RefScalar>(m: &Csr) -> Vec<T> {
    m.val
        .iter()
        .enumerate()
        .map(|(p, &v)| T::entry(v, p))
        .collect()
}

/// The real value types (the GPU's).
pub const VALUE_TYPES: [ValueType; 2] = [ValueType::Float32, ValueType::Float64];
pub const COMPLEX_TYPES: [ValueType; 2] = [ValueType::Complex32, ValueType::Complex64];
pub const ALL_VALUE_TYPES: [ValueType; 4] = [
    ValueType::Float32,
    ValueType::Float64,
    ValueType::Complex32,
    ValueType::Complex64,
];
pub const OPS: [Op; 3] = [Op::NonTranspose, Op::Transpose, Op::ConjugateTranspose];
