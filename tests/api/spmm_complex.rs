//! SpMM with complex values (`spmm_scaled`) against a reference that sums each row of
//! op(A) in storage order from zero, with the library's complex arithmetic, so results
//! compare bitwise: op N, T and C, both layouts, padded leading dimensions, k around the
//! kernel's column block, complex alpha and beta, beta = 0 with NaN in Y, alpha = 0 (X not
//! read), the analysis (one for A^H serves A^T), validation off, thread counts; real
//! matrices with op C (= op T); value types that differ; the GPU backend's refusal.

use crate::common::*;
use spgemm::types::{AnyScalar, Complex, Complex32, Complex64, IndexType, Scalar, ValueType};
use spgemm::{Backend, DenseArgs, Handle, Layout, Op, Status, ValueSlice, ValueSliceMut};

/// X and Y in `layout` with `k` columns.
fn dense<'a>(
    layout: Layout,
    k: usize,
    (x, ldx): (ValueSlice<'a>, usize),
    (y, ldy): (ValueSliceMut<'a>, usize),
) -> DenseArgs<'a> {
    DenseArgs {
        layout,
        k,
        x,
        ldx,
        y,
        ldy,
    }
}

/// Complex value types of the tests.
trait Cx: RefScalar + Scalar {
    fn make(re: f64, im: f64) -> Self;
    fn slice(v: &[Self]) -> ValueSlice<'_>;
    fn slice_mut(v: &mut [Self]) -> ValueSliceMut<'_>;
}

macro_rules! cx {
    ($t:ty, $f:ty, $var:ident) => {
        impl Cx for $t {
            fn make(re: f64, im: f64) -> Self {
                Complex::new(re as $f, im as $f)
            }
            fn slice(v: &[Self]) -> ValueSlice<'_> {
                ValueSlice::$var(v)
            }
            fn slice_mut(v: &mut [Self]) -> ValueSliceMut<'_> {
                ValueSliceMut::$var(v)
            }
        }
    };
}
cx!(Complex32, f32, C32);
cx!(Complex64, f64, C64);

/// Dense operand geometry.
#[derive(Clone, Copy)]
struct Geo {
    layout: Layout,
    rows: usize,
    k: usize,
    ld: usize,
}

impl Geo {
    fn new(layout: Layout, rows: usize, k: usize, pad: usize) -> Geo {
        let ld = match layout {
            Layout::RowMajor => k + pad,
            Layout::ColMajor => rows + pad,
        };
        Geo {
            layout,
            rows,
            k,
            ld,
        }
    }
    fn at(&self, i: usize, j: usize) -> usize {
        match self.layout {
            Layout::RowMajor => i * self.ld + j,
            Layout::ColMajor => j * self.ld + i,
        }
    }
    fn len(&self) -> usize {
        spgemm::dense_extent("X", self.layout, self.rows, self.k, self.ld).unwrap()
    }
}

/// Y after alpha * op(A) * X + beta * Y: each entry's row of op(A) summed in storage order
/// from zero, then `alpha * s + beta * y` (Y not read when beta is zero).
fn spmm_reference<T: Cx>(
    a: &Csr,
    op: Op,
    (alpha, beta): (T, T),
    x: (&[T], Geo),
    y: (&[T], Geo),
) -> Vec<T> {
    let (xv, xg) = x;
    let (yv, yg) = y;
    let m = op_mat::<T>(a, op);
    let mut out = yv.to_vec();
    // alpha = 0: X is not read (it may be empty); Y is set below.
    let rows = if alpha == T::ZERO { 0 } else { m.nrows };
    for i in 0..rows {
        for j in 0..yg.k {
            let mut s = <T as RefScalar>::from(0.0);
            for p in m.ptr[i]..m.ptr[i + 1] {
                let prod = RefScalar::mul(m.val[p], xv[xg.at(m.col[p], j)]);
                s = RefScalar::add(s, prod);
            }
            let o = yg.at(i, j);
            let scaled = RefScalar::mul(alpha, s);
            out[o] = if beta == T::ZERO {
                scaled
            } else {
                RefScalar::add(scaled, RefScalar::mul(beta, yv[o]))
            };
        }
    }
    if alpha == T::ZERO {
        for i in 0..m.nrows {
            for j in 0..yg.k {
                let o = yg.at(i, j);
                out[o] = if beta == T::ZERO {
                    T::ZERO
                } else {
                    RefScalar::mul(beta, yv[o])
                };
            }
        }
    }
    out
}

fn bits<T: RefScalar>(v: &[T]) -> Vec<u128> {
    v.iter().map(|x| x.bits()).collect()
}

struct Case {
    op: Op,
    layout: Layout,
    k: usize,
    alpha: (f64, f64),
    beta: (f64, f64),
    nan_y: bool,
}

/// Runs one product and compares it with the reference; returns Y.
fn run<T: Cx>(
    h: &Handle,
    a: &Csr,
    ta: &Typed,
    c: &Case,
    analysis: Option<&spgemm::SpmmAnalysis>,
) -> Vec<T> {
    let (xr, yr) = spgemm::operand_rows(c.op, a.nrows, a.ncols);
    let xg = Geo::new(c.layout, xr, c.k, 2);
    let yg = Geo::new(c.layout, yr, c.k, 1);
    let alpha = T::make(c.alpha.0, c.alpha.1);
    let beta = T::make(c.beta.0, c.beta.1);
    let x: Vec<T> = if alpha == T::ZERO {
        Vec::new()
    } else {
        (0..xg.len())
            .map(|t| T::make((t % 7) as f64 - 3.0, (t % 5) as f64 * 0.5 - 1.0))
            .collect()
    };
    let y0: Vec<T> = (0..yg.len())
        .map(|t| {
            if c.nan_y {
                T::make(f64::NAN, f64::NAN)
            } else {
                T::make((t % 4) as f64 - 1.5, -((t % 3) as f64))
            }
        })
        .collect();
    let mut y = y0.clone();
    spgemm::spmm_scaled(
        h,
        c.op,
        alpha.to_any(),
        &ta.any(),
        analysis,
        beta.to_any(),
        DenseArgs {
            layout: c.layout,
            k: c.k,
            x: T::slice(&x),
            ldx: xg.ld,
            y: T::slice_mut(&mut y),
            ldy: yg.ld,
        },
    )
    .unwrap();
    let want = spmm_reference(a, c.op, (alpha, beta), (&x, xg), (&y0, yg));
    let what = format!(
        "{:?} {:?} k {} alpha {:?} beta {:?} nan_y {}",
        c.op, c.layout, c.k, c.alpha, c.beta, c.nan_y
    );
    assert!(bits(&y) == bits(&want), "{what}");
    y
}

fn matrix(rng: &mut Rng) -> Csr {
    random(
        rng,
        Shape {
            nrows: 37,
            ncols: 23,
            max_row: 9,
            empty_rows: 0.15,
            duplicates: true,
            unsorted: true,
            zeros: 0.1,
            ..Default::default()
        },
    )
}

fn each_case(mut f: impl FnMut(&Case)) {
    let scalars = [
        ((1.0, 0.0), (0.0, 0.0), false),
        ((0.5, -1.0), (2.0, 0.5), false),
        ((-1.5, 2.0), (0.0, 0.0), true),
        ((0.0, 0.0), (1.0, -1.0), false),
        ((0.0, 0.0), (0.0, 0.0), true),
    ];
    for op in OPS {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for k in [1, 3, 8, 11] {
                for &(alpha, beta, nan_y) in &scalars {
                    f(&Case {
                        op,
                        layout,
                        k,
                        alpha,
                        beta,
                        nan_y,
                    });
                }
            }
        }
    }
}

#[test]
fn complex_spmm_matches_the_reference_bitwise() {
    let mut rng = Rng::new(31);
    let a = matrix(&mut rng);
    let h = Handle::new(2).unwrap();
    for ot in OFFSET_TYPES {
        for it in INDEX_TYPES {
            for base in [0, 1] {
                let t32 = typed(&a, ot, it, ValueType::Complex32, base, true);
                let t64 = typed(&a, ot, it, ValueType::Complex64, base, true);
                each_case(|c| {
                    run::<Complex32>(&h, &a, &t32, c, None);
                    run::<Complex64>(&h, &a, &t64, c, None);
                });
            }
        }
    }
}

/// The analysis (partition, and A^T's structure for both A^T and A^H), validation off
/// (blocks checked by the kernel), and 1-3 threads on a larger matrix give the same bits.
#[test]
fn complex_spmm_analysis_validation_and_threads() {
    let mut rng = Rng::new(32);
    let a = random(
        &mut rng,
        Shape {
            nrows: 3000,
            ncols: 2200,
            max_row: 12,
            empty_rows: 0.1,
            duplicates: true,
            unsorted: true,
            non_finite: true,
            ..Default::default()
        },
    );
    let ta = typed(
        &a,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Complex64,
        1,
        true,
    );
    let case = |op, layout, k| Case {
        op,
        layout,
        k,
        alpha: (0.5, 1.5),
        beta: (-1.0, 0.25),
        nan_y: false,
    };
    for op in OPS {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let c = case(op, layout, 5);
            let mut first: Option<Vec<u128>> = None;
            for threads in [1, 2, 3] {
                let mut h = Handle::new(threads).unwrap();
                let an_op = if op == Op::NonTranspose {
                    Op::NonTranspose
                } else {
                    Op::ConjugateTranspose
                };
                let an = spgemm::analyse(&h, an_op, &ta.any(), layout, 5).unwrap();
                for validate in [true, false] {
                    h.options.validate = validate;
                    for with in [None, Some(&an)] {
                        let y = bits(&run::<Complex64>(&h, &a, &ta, &c, with));
                        match &first {
                            None => first = Some(y),
                            Some(f) => assert!(f == &y, "{op:?} {layout:?} {threads} threads"),
                        }
                    }
                }
            }
        }
    }
}

/// For real values op C is op T: the same bits, on every path of the real kernels.
#[test]
fn real_conjugate_transpose_is_the_transpose() {
    let mut rng = Rng::new(33);
    let a = matrix(&mut rng);
    let h = Handle::new(2).unwrap();
    let t64 = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let t32 = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float32,
        0,
        true,
    );
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        for k in [1, 4, 17] {
            let (xr, yr) = spgemm::operand_rows(Op::Transpose, a.nrows, a.ncols);
            let xg = Geo::new(layout, xr, k, 0);
            let yg = Geo::new(layout, yr, k, 0);
            let x: Vec<f64> = (0..xg.len()).map(|t| (t % 9) as f64 - 4.0).collect();
            let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let mut y64 = [vec![1.0f64; yg.len()], vec![1.0f64; yg.len()]];
            let mut y32 = [vec![1.0f32; yg.len()], vec![1.0f32; yg.len()]];
            for (t, op) in [Op::Transpose, Op::ConjugateTranspose]
                .into_iter()
                .enumerate()
            {
                let x64 = (ValueSlice::F64(&x), xg.ld);
                let args = dense(layout, k, x64, (ValueSliceMut::F64(&mut y64[t]), yg.ld));
                spgemm::spmm(&h, op, 2.0, &t64.any(), None, -0.5, args).unwrap();
                let x32 = (ValueSlice::F32(&xf), xg.ld);
                let args = dense(layout, k, x32, (ValueSliceMut::F32(&mut y32[t]), yg.ld));
                spgemm::spmm(&h, op, 2.0, &t32.any(), None, -0.5, args).unwrap();
            }
            let b64 = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let b32 = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(b64(&y64[0]), b64(&y64[1]), "{layout:?} k {k}");
            assert_eq!(b32(&y32[0]), b32(&y32[1]), "{layout:?} k {k}");
        }
    }
}

/// alpha, beta, X and Y must have A's value type; the f64 entry point takes real
/// scalars for complex A (their real parts).
#[test]
fn scalar_types_must_be_a_value_type() {
    let mut rng = Rng::new(34);
    let a = matrix(&mut rng);
    let h = Handle::new(1).unwrap();
    let ta = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Complex64,
        0,
        true,
    );
    let x = vec![Complex64::new(1.0, -1.0); a.ncols];
    let mut y = vec![Complex64::new(0.0, 0.0); a.nrows];
    fn args<'a>(x: &'a [Complex64], y: &'a mut [Complex64]) -> DenseArgs<'a> {
        dense(
            Layout::RowMajor,
            1,
            (ValueSlice::C64(x), 1),
            (ValueSliceMut::C64(y), 1),
        )
    }
    let n = Op::NonTranspose;
    let one = AnyScalar::Float64(1.0);
    let zero = AnyScalar::Complex64(Complex64::new(0.0, 0.0));
    let e = spgemm::spmm_scaled(&h, n, one, &ta.any(), None, zero, args(&x, &mut y)).unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    assert!(e.message.contains("alpha"), "{e}");
    let xr = vec![1.0f64; a.ncols];
    let e = spgemm::spmm_scaled(
        &h,
        n,
        AnyScalar::Complex64(Complex64::new(1.0, 0.0)),
        &ta.any(),
        None,
        zero,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 1,
            x: ValueSlice::F64(&xr),
            ldx: 1,
            y: ValueSliceMut::C64(&mut y),
            ldy: 1,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    // Real scalars through `spmm`: the complex product with alpha = 2 + 0i.
    let mut y2 = y.clone();
    spgemm::spmm(&h, n, 2.0, &ta.any(), None, 0.0, args(&x, &mut y)).unwrap();
    let two = AnyScalar::Complex64(Complex64::new(2.0, 0.0));
    spgemm::spmm_scaled(&h, n, two, &ta.any(), None, zero, args(&x, &mut y2)).unwrap();
    assert_eq!(bits(&y), bits(&y2));
}

/// `Cuda` refuses complex SpMM and transposed ops before looking for a device; `Auto`
/// computes them on the CPU.
#[test]
fn gpu_backend_refuses_complex_spmm() {
    let mut rng = Rng::new(35);
    let a = matrix(&mut rng);
    let mut h = Handle::new(1).unwrap();
    h.options.backend = Backend::Cuda;
    let ta = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Complex32,
        0,
        true,
    );
    let tr = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let c = Case {
        op: Op::NonTranspose,
        layout: Layout::RowMajor,
        k: 2,
        alpha: (1.0, 1.0),
        beta: (0.0, 0.0),
        nan_y: false,
    };
    let x = vec![Complex32::new(1.0, 0.0); a.ncols];
    let mut y = vec![Complex32::new(0.0, 0.0); a.nrows];
    let e = spgemm::spmm(
        &h,
        Op::NonTranspose,
        1.0,
        &ta.any(),
        None,
        0.0,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 1,
            x: ValueSlice::C32(&x),
            ldx: 1,
            y: ValueSliceMut::C32(&mut y),
            ldy: 1,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::NotSupported, "{e}");
    assert!(e.message.contains("complex"), "{e}");
    let xr = vec![1.0f64; a.nrows];
    let mut yr = vec![0.0f64; a.ncols];
    let e = spgemm::spmm(
        &h,
        Op::ConjugateTranspose,
        1.0,
        &tr.any(),
        None,
        0.0,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 1,
            x: ValueSlice::F64(&xr),
            ldx: 1,
            y: ValueSliceMut::F64(&mut yr),
            ldy: 1,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::NotSupported, "{e}");
    h.options.backend = Backend::Auto;
    run::<Complex32>(&h, &a, &ta, &c, None);
}
