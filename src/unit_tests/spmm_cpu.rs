//! SpMM on the CPU against a simple reference: every index/value/base combination, both
//! layouts, both ops, padded leading dimensions, BLAS alpha/beta conventions, degenerate
//! shapes, analysis reuse, every instruction-set path, errors, and bitwise determinism
//! across thread counts.

use super::common::*;
use spgemm::Handle;
use spgemm::ValueSlice;
use spgemm::ValueSliceMut;
use spgemm::cpu::spmm::rows::CsrRows;
use spgemm::cpu::spmm::{self as kern, Isa, Problem};
use spgemm::types::{IndexType, ValueType};
use spgemm::{DenseArgs, Layout, Op, SpmmAnalysis};
use spgemm::{Result, Status};

const LAYOUTS: [Layout; 2] = [Layout::RowMajor, Layout::ColMajor];
const OPS: [Op; 2] = [Op::NonTranspose, Op::Transpose];
/// Value written into padding (entries beyond the used part of a leading dimension).
const PAD: f64 = 12345.0;

/// The kernels' tuning knobs (`kern::SCATTER_BYTES`, `WINDOW_BYTES`, ...) are process-wide:
/// tests that set them hold this lock, so that a test checking which path ran
/// (`kern::path_counts`) runs under its own settings.
static KNOBS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn knobs() -> std::sync::MutexGuard<'static, ()> {
    KNOBS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A dense matrix in f64 with its storage parameters.
#[derive(Clone, Debug)]
struct Dense {
    rows: usize,
    k: usize,
    ld: usize,
    layout: Layout,
    data: Vec<f64>,
}

impl Dense {
    fn new(rows: usize, k: usize, pad: usize, layout: Layout, rng: &mut Rng) -> Dense {
        let ld = match layout {
            Layout::RowMajor => k.max(1) + pad,
            Layout::ColMajor => rows.max(1) + pad,
        };
        let len = kern::dense_len(layout, rows, k, ld).unwrap();
        let mut d = Dense {
            rows,
            k,
            ld,
            layout,
            data: vec![PAD; len],
        };
        for i in 0..rows {
            for j in 0..k {
                let v = rng.unit() * 2.0 - 1.0;
                d.set(i, j, v);
            }
        }
        d
    }
    fn at(&self, i: usize, j: usize) -> usize {
        match self.layout {
            Layout::RowMajor => i * self.ld + j,
            Layout::ColMajor => j * self.ld + i,
        }
    }
    fn get(&self, i: usize, j: usize) -> f64 {
        self.data[self.at(i, j)]
    }
    fn set(&mut self, i: usize, j: usize, v: f64) {
        let p = self.at(i, j);
        self.data[p] = v;
    }
    /// Positions that belong to no (i, j).
    fn padding(&self) -> Vec<usize> {
        let mut used = vec![false; self.data.len()];
        for i in 0..self.rows {
            for j in 0..self.k {
                used[self.at(i, j)] = true;
            }
        }
        (0..self.data.len()).filter(|&p| !used[p]).collect()
    }
}

/// Reference Y = alpha op(A) X + beta Y in f64 (beta = 0: Y not read), with a per-entry
/// error scale (sum of |terms|).
fn reference(
    a: &Csr,
    op: Op,
    alpha: f64,
    x: &Dense,
    beta: f64,
    y: &Dense,
    round: impl Fn(f64) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (yr, k) = (y.rows, y.k);
    let mut sum = vec![0.0; yr * k];
    let mut mag = vec![0.0; yr * k];
    for i in 0..a.nrows {
        for p in a.ptr[i]..a.ptr[i + 1] {
            let (r, c) = match op {
                Op::NonTranspose => (i, a.col[p]),
                Op::Transpose | Op::ConjugateTranspose => (a.col[p], i),
            };
            let av = round(a.val[p]);
            for j in 0..k {
                let t = av * round(x.get(c, j));
                sum[r * k + j] += t;
                mag[r * k + j] += t.abs();
            }
        }
    }
    let mut out = vec![0.0; yr * k];
    for r in 0..yr {
        for j in 0..k {
            let y0 = round(y.get(r, j));
            let s = alpha * sum[r * k + j];
            let e = (alpha * mag[r * k + j]).abs();
            if beta == 0.0 {
                out[r * k + j] = s;
                mag[r * k + j] = e;
            } else {
                out[r * k + j] = s + beta * y0;
                mag[r * k + j] = e + (beta * y0).abs();
            }
        }
    }
    (out, mag)
}

/// Runs the typed product on `a` with X and Y converted to A's value type; returns Y in f64.
#[allow(clippy::too_many_arguments)]
fn product(
    h: &Handle,
    a: &Typed,
    op: Op,
    alpha: f64,
    x: &Dense,
    beta: f64,
    y: &Dense,
    analysis: Option<&SpmmAnalysis>,
) -> Result<Vec<f64>> {
    let args = |xs, ys| DenseArgs {
        layout: x.layout,
        k: x.k,
        x: xs,
        ldx: x.ld,
        y: ys,
        ldy: y.ld,
    };
    match a.vt {
        ValueType::Float32 => {
            let xv: Vec<f32> = x.data.iter().map(|&v| v as f32).collect();
            let mut yv: Vec<f32> = y.data.iter().map(|&v| v as f32).collect();
            spgemm::spmm(
                h,
                op,
                alpha,
                &a.any(),
                analysis,
                beta,
                args(ValueSlice::F32(&xv), ValueSliceMut::F32(&mut yv)),
            )?;
            Ok(yv.iter().map(|&v| v as f64).collect())
        }
        ValueType::Float64 => {
            let mut yv = y.data.clone();
            spgemm::spmm(
                h,
                op,
                alpha,
                &a.any(),
                analysis,
                beta,
                args(ValueSlice::F64(&x.data), ValueSliceMut::F64(&mut yv)),
            )?;
            Ok(yv)
        }
        vt => unreachable!("the real SpMM tests give real values, not {vt:?}"),
    }
}

/// Checks `got` (Y's storage) against the reference, and that padding is untouched.
/// Bit-for-bit equality of two results (NaN payloads and signed zeros included).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
}

fn check(got: &[f64], y: &Dense, want: &(Vec<f64>, Vec<f64>), vt: ValueType, what: &str) {
    let eps = match vt {
        ValueType::Float32 => 2e-6,
        ValueType::Float64 => 1e-14,
        vt => unreachable!("real values only, not {vt:?}"),
    };
    for p in y.padding() {
        assert_eq!(
            got[p].to_bits(),
            y.data[p].to_bits(),
            "{what}: padding at {p} changed"
        );
    }
    for r in 0..y.rows {
        for j in 0..y.k {
            let g = got[y.at(r, j)];
            let (w, e) = (want.0[r * y.k + j], want.1[r * y.k + j]);
            let tol = eps * (e + 1.0) * 8.0;
            assert!(
                (g - w).abs() <= tol || (g.is_nan() && w.is_nan()),
                "{what}: Y({r}, {j}) = {g}, expected {w} (tolerance {tol})"
            );
        }
    }
}

fn round_for(vt: ValueType) -> fn(f64) -> f64 {
    match vt {
        ValueType::Float32 => |v| v as f32 as f64,
        ValueType::Float64 => |v| v,
        vt => unreachable!("real values only, not {vt:?}"),
    }
}

fn shapes(rng: &mut Rng) -> Vec<Csr> {
    let base = Shape {
        nrows: 53,
        ncols: 41,
        max_row: 9,
        empty_rows: 0.2,
        duplicates: true,
        unsorted: true,
        ..Shape::default()
    };
    vec![
        random(rng, base),
        random(
            rng,
            Shape {
                nrows: 7,
                ncols: 90,
                max_row: 40,
                ..base
            },
        ),
    ]
}

#[test]
fn every_type_layout_op_against_reference() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(11);
    let mats = shapes(&mut rng);
    for (mi, m) in mats.iter().enumerate() {
        for ot in OFFSET_TYPES {
            for it in INDEX_TYPES {
                for vt in VALUE_TYPES {
                    for base in [0, 1] {
                        let a = typed(m, ot, it, vt, base, true);
                        for layout in LAYOUTS {
                            for op in OPS {
                                let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
                                for (k, pad) in [(1, 0), (3, 2), (13, 0), (37, 3)] {
                                    let x = Dense::new(xr, k, pad, layout, &mut rng);
                                    let y = Dense::new(yr, k, pad, layout, &mut rng);
                                    let (alpha, beta) = (0.75, -0.5);
                                    let got =
                                        product(&h, &a, op, alpha, &x, beta, &y, None).unwrap();
                                    let want = reference(m, op, alpha, &x, beta, &y, round_for(vt));
                                    let what = format!(
                                        "m{mi} {ot:?}/{it:?}/{vt:?} base {base} {layout:?} {op:?} k {k} pad {pad}"
                                    );
                                    check(&got, &y, &want, vt, &what);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn every_column_count_up_to_70_and_wide_blocks() {
    // Exercises every register block and remainder combination of both layouts.
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(5);
    let m = &shapes(&mut rng)[0];
    for vt in VALUE_TYPES {
        let a = typed(m, IndexType::Int32, IndexType::Int32, vt, 0, true);
        for layout in LAYOUTS {
            // 1..=70, plus the column counts where f32 (16 lanes) takes the block of 8
            // vectors that f64 takes at 64..=120 (and the 4s again from 16 vectors on).
            for k in (1..=70).chain([120, 127, 128, 129, 200, 255, 256, 257]) {
                let x = Dense::new(m.ncols, k, k % 3, layout, &mut rng);
                let y = Dense::new(m.nrows, k, 1, layout, &mut rng);
                let got = product(&h, &a, Op::NonTranspose, 1.5, &x, 1.0, &y, None).unwrap();
                let want = reference(m, Op::NonTranspose, 1.5, &x, 1.0, &y, round_for(vt));
                check(&got, &y, &want, vt, &format!("{vt:?} {layout:?} k {k}"));
            }
        }
    }
}

#[test]
fn alpha_beta_conventions() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(7);
    let mut m = shapes(&mut rng)[0].clone();
    for vt in VALUE_TYPES {
        for layout in LAYOUTS {
            for op in OPS {
                let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
                let a = typed(&m, IndexType::Int64, IndexType::Int32, vt, 1, true);
                let x = Dense::new(xr, 5, 1, layout, &mut rng);
                // beta = 0: NaN and Inf in Y must not leak.
                let mut y = Dense::new(yr, 5, 1, layout, &mut rng);
                for r in 0..yr {
                    y.set(r, r % 5, if r % 2 == 0 { f64::NAN } else { f64::INFINITY });
                }
                let got = product(&h, &a, op, 2.0, &x, 0.0, &y, None).unwrap();
                let want = reference(&m, op, 2.0, &x, 0.0, &y, round_for(vt));
                check(&got, &y, &want, vt, "beta = 0");
                for r in 0..yr {
                    for j in 0..5 {
                        assert!(got[y.at(r, j)].is_finite(), "beta = 0 leaked Y({r}, {j})");
                    }
                }
                // beta = 1: Y accumulates.
                let y = Dense::new(yr, 5, 0, layout, &mut rng);
                let got = product(&h, &a, op, 1.0, &x, 1.0, &y, None).unwrap();
                check(
                    &got,
                    &y,
                    &reference(&m, op, 1.0, &x, 1.0, &y, round_for(vt)),
                    vt,
                    "beta 1",
                );
                // alpha = 0: A and X are not read (NaN in both), Y = beta * Y exactly.
                let mut nan_m = m.clone();
                nan_m.val.iter_mut().for_each(|v| *v = f64::NAN);
                let an = typed(&nan_m, IndexType::Int64, IndexType::Int32, vt, 1, true);
                let mut xn = x.clone();
                xn.data.iter_mut().for_each(|v| *v = f64::NAN);
                let got = product(&h, &an, op, 0.0, &xn, 0.5, &y, None).unwrap();
                for r in 0..yr {
                    for j in 0..5 {
                        let want = round_for(vt)(y.get(r, j)) * 0.5;
                        assert_eq!(got[y.at(r, j)], round_for(vt)(want), "alpha = 0");
                    }
                }
                // alpha = 0 and beta = 0: Y = 0 even if it held NaN.
                let mut yn = y.clone();
                yn.data.iter_mut().for_each(|v| *v = f64::NAN);
                let got = product(&h, &an, op, 0.0, &xn, 0.0, &yn, None).unwrap();
                for r in 0..yr {
                    for j in 0..5 {
                        assert_eq!(got[yn.at(r, j)].to_bits(), 0, "alpha = beta = 0");
                    }
                }
                // NaN alpha and beta are allowed and propagate.
                let got = product(&h, &a, op, f64::NAN, &x, 1.0, &y, None).unwrap();
                assert!(yr == 0 || got[y.at(0, 0)].is_nan());
            }
        }
        m.val.iter_mut().for_each(|v| *v *= -1.0);
    }
}

#[test]
fn degenerate_shapes() {
    let h = Handle::new(3).unwrap();
    let mut rng = Rng::new(3);
    for (nr, nc) in [(0, 0), (0, 5), (5, 0), (1, 1), (64, 1), (1, 64)] {
        let m = random(
            &mut rng,
            Shape {
                nrows: nr,
                ncols: nc,
                max_row: 4,
                empty_rows: 0.5,
                ..Shape::default()
            },
        );
        for vt in VALUE_TYPES {
            let a = typed(&m, IndexType::Int32, IndexType::Int64, vt, 0, true);
            for layout in LAYOUTS {
                for op in OPS {
                    let (xr, yr) = spgemm::operand_rows(op, nr, nc);
                    for k in [0, 1, 4, 9] {
                        let x = Dense::new(xr, k, 2, layout, &mut rng);
                        let y = Dense::new(yr, k, 2, layout, &mut rng);
                        let got = product(&h, &a, op, 1.25, &x, 0.5, &y, None).unwrap();
                        let want = reference(&m, op, 1.25, &x, 0.5, &y, round_for(vt));
                        check(
                            &got,
                            &y,
                            &want,
                            vt,
                            &format!("{nr}x{nc} {layout:?} {op:?} k {k}"),
                        );
                    }
                }
            }
        }
    }
}

/// A larger matrix, enough for several chunks per thread.
fn big(rng: &mut Rng) -> Csr {
    random(
        rng,
        Shape {
            nrows: 4000,
            ncols: 3500,
            max_row: 30,
            empty_rows: 0.1,
            duplicates: true,
            unsorted: true,
            ..Shape::default()
        },
    )
}

#[test]
fn bitwise_identical_across_thread_counts_and_analysis() {
    let mut rng = Rng::new(21);
    let m = big(&mut rng);
    let handles: Vec<Handle> = [1, 2, 3, 7]
        .iter()
        .map(|&t| Handle::new(t).unwrap())
        .collect();
    for vt in VALUE_TYPES {
        let a = typed(&m, IndexType::Int32, IndexType::Int32, vt, 0, true);
        for layout in LAYOUTS {
            for op in OPS {
                let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
                // k = 8, 16, 32: one, two and four full f64 vectors (one and two f32) in
                // the AVX-512 row-major kernel, whose one-vector blocks split each row into
                // two partial sums; 19: a masked tail. Padded leading dimensions for some.
                for k in [1, 8, 16, 19, 32] {
                    let x = Dense::new(xr, k, k % 3, layout, &mut rng);
                    let y = Dense::new(yr, k, (k + 1) % 3, layout, &mut rng);
                    let first = product(&handles[0], &a, op, 0.5, &x, 2.0, &y, None).unwrap();
                    check(
                        &first,
                        &y,
                        &reference(&m, op, 0.5, &x, 2.0, &y, round_for(vt)),
                        vt,
                        "1 thread",
                    );
                    for h in &handles {
                        let an = spgemm::analyse(h, op, &a.any(), layout, k).unwrap();
                        for with in [None, Some(&an)] {
                            let got = product(h, &a, op, 0.5, &x, 2.0, &y, with).unwrap();
                            let same = same_bits(&got, &first);
                            assert!(
                                same,
                                "{vt:?} {layout:?} {op:?} k {k}: {} threads, analysis {} differs",
                                h.threads(),
                                with.is_some()
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn every_instruction_set_path_against_reference() {
    let mut rng = Rng::new(8);
    let m = big(&mut rng);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for isa in [Isa::Base, Isa::Avx2, Isa::Avx512] {
        if !isa.available() {
            eprintln!("skipping {isa:?}: not available on this machine");
            continue;
        }
        let a = typed(
            &m,
            IndexType::Int64,
            IndexType::Int64,
            ValueType::Float64,
            1,
            true,
        );
        let any = a.any();
        let csr = any.typed::<i64, i64, f64>().unwrap();
        let rows = CsrRows {
            csr,
            vals: csr.values().unwrap(),
        };
        for layout in LAYOUTS {
            for k in [1, 2, 7, 16, 45] {
                let x = Dense::new(m.ncols, k, 1, layout, &mut rng);
                let y = Dense::new(m.nrows, k, 1, layout, &mut rng);
                let mut got = y.data.clone();
                pool.install(|| {
                    kern::run(
                        isa,
                        &rows,
                        Problem {
                            k,
                            layout,
                            alpha: -1.0,
                            beta: 0.25,
                            x: &x.data,
                            ldx: x.ld,
                            x_rows: x.rows,
                            y: &mut got,
                            ldy: y.ld,
                            a_checked: false,
                            pack: None,
                            pack_vecs: 0,
                            pack_window: 0,
                            spmv: None,
                        },
                        None,
                        2,
                        None,
                    )
                });
                let want = reference(&m, Op::NonTranspose, -1.0, &x, 0.25, &y, |v| v);
                check(
                    &got,
                    &y,
                    &want,
                    ValueType::Float64,
                    &format!("{isa:?} {layout:?} k {k}"),
                );
            }
        }
    }
}

#[test]
fn analysis_picks_up_new_values_and_detects_structure_changes() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(4);
    let mut m = shapes(&mut rng)[0].clone();
    for op in OPS {
        let a = typed(
            &m,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        let an = spgemm::analyse(&h, op, &a.any(), Layout::RowMajor, 4).unwrap();
        assert!(an.chunks() >= 1 && an.bytes() > 0);
        let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
        let x = Dense::new(xr, 4, 0, Layout::RowMajor, &mut rng);
        let y = Dense::new(yr, 4, 0, Layout::RowMajor, &mut rng);
        // New values, same structure: the analysis stays valid.
        m.val.iter_mut().for_each(|v| *v = *v * 3.0 - 1.0);
        let a2 = typed(
            &m,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        let got = product(&h, &a2, op, 1.0, &x, 0.0, &y, Some(&an)).unwrap();
        check(
            &got,
            &y,
            &reference(&m, op, 1.0, &x, 0.0, &y, |v| v),
            ValueType::Float64,
            "reuse",
        );
        // Same shape and entry count, different structure: detected with validation on.
        let mut moved = m.clone();
        let p = moved.col.len() / 2;
        moved.col[p] = (moved.col[p] + 1) % moved.ncols;
        let a3 = typed(
            &moved,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        let e = product(&h, &a3, op, 1.0, &x, 0.0, &y, Some(&an)).unwrap_err();
        assert_eq!(e.status, Status::PlanMismatch, "{e}");
        // Different types or shape.
        let a4 = typed(
            &m,
            IndexType::Int64,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        let e = product(&h, &a4, op, 1.0, &x, 0.0, &y, Some(&an)).unwrap_err();
        assert_eq!(e.status, Status::PlanMismatch, "{e}");
    }
}

#[test]
fn errors_name_the_argument() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(9);
    let m = shapes(&mut rng)[0].clone();
    let a = typed(
        &m,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let x = vec![0.0f64; m.ncols * 4];
    let mut y = vec![0.0f64; m.nrows * 4];
    let call = |layout, k, x: &[f64], ldx, y: &mut [f64], ldy| {
        spgemm::spmm(
            &h,
            Op::NonTranspose,
            1.0,
            &a.any(),
            None,
            0.0,
            DenseArgs {
                layout,
                k,
                x: ValueSlice::F64(x),
                ldx,
                y: ValueSliceMut::F64(y),
                ldy,
            },
        )
    };
    let e = call(Layout::RowMajor, 4, &x, 3, &mut y, 4).unwrap_err();
    assert_eq!(e.status, Status::InvalidValue);
    assert!(e.message.contains("ldx = 3"), "{e}");
    let e = call(Layout::ColMajor, 4, &x, m.ncols, &mut y, m.nrows - 1).unwrap_err();
    assert!(e.message.contains("ldy"), "{e}");
    let e = call(Layout::RowMajor, 4, &x[..10], 4, &mut y, 4).unwrap_err();
    assert!(e.message.contains("X has 10 entries"), "{e}");
    let e = call(
        Layout::RowMajor,
        usize::MAX / 2,
        &x,
        usize::MAX / 2,
        &mut y,
        4,
    )
    .unwrap_err();
    assert_eq!(e.status, Status::IndexOverflow, "{e}");
    // X of the wrong value type.
    let xf = vec![0.0f32; m.ncols * 4];
    let e = spgemm::spmm(
        &h,
        Op::NonTranspose,
        1.0,
        &a.any(),
        None,
        0.0,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 4,
            x: ValueSlice::F32(&xf),
            ldx: 4,
            y: ValueSliceMut::F64(&mut y),
            ldy: 4,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch);
    // Pattern-only A.
    let p = typed(
        &m,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        false,
    );
    let e = spgemm::spmm(
        &h,
        Op::NonTranspose,
        1.0,
        &p.any(),
        None,
        0.0,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 4,
            x: ValueSlice::F64(&x),
            ldx: 4,
            y: ValueSliceMut::F64(&mut y),
            ldy: 4,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::InvalidValue);
    // A column index out of range is found by validation.
    let mut bad = m.clone();
    let q = bad.col.len() - 1;
    bad.col[q] = bad.ncols;
    let b = typed(
        &bad,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let e = spgemm::spmm(
        &h,
        Op::NonTranspose,
        1.0,
        &b.any(),
        None,
        0.0,
        DenseArgs {
            layout: Layout::RowMajor,
            k: 4,
            x: ValueSlice::F64(&x),
            ldx: 4,
            y: ValueSliceMut::F64(&mut y),
            ldy: 4,
        },
    )
    .unwrap_err();
    assert_eq!(e.status, Status::IndexOutOfRange, "{e}");
    // ... and with validation off, caught by the kernel instead of reading outside X.
    let mut h2 = Handle::new(1).unwrap();
    h2.options.validate = false;
    for (layout, op) in [
        (Layout::RowMajor, Op::NonTranspose),
        (Layout::ColMajor, Op::Transpose),
    ] {
        let (xr, yr) = spgemm::operand_rows(op, bad.nrows, bad.ncols);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let x = Dense::new(xr, 2, 0, layout, &mut Rng::new(1));
            let y = Dense::new(yr, 2, 0, layout, &mut Rng::new(2));
            product(&h2, &b, op, 1.0, &x, 0.0, &y, None)
        }));
        match r {
            Err(_) => {}
            Ok(res) => assert!(res.is_err(), "{layout:?} {op:?}: bad index accepted"),
        }
    }
}

/// A matrix that spans many kernel blocks: long rows (several blocks' worth of entries),
/// runs of empty rows, and short rows; X's rows are read all over.
fn blocky(rng: &mut Rng, nrows: usize, ncols: usize) -> Csr {
    let mut ptr = vec![0usize];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..nrows {
        let len = match i % 97 {
            0 => 5000,
            1..=20 => 0,
            _ => rng.below(12),
        };
        for _ in 0..len {
            col.push(rng.below(ncols));
            val.push(rng.unit() - 0.5);
        }
        ptr.push(col.len());
    }
    Csr {
        nrows,
        ncols,
        ptr,
        col,
        val,
    }
}

#[test]
fn long_rows_empty_runs_every_block_path() {
    // Rows longer than a kernel block, runs of empty rows, 1-based 64-bit indices, padded
    // leading dimensions; k covers SpMV, vector blocks and masked tails of both layouts.
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(31);
    let m = blocky(&mut rng, 700, 5000);
    for vt in VALUE_TYPES {
        for (ot, it, base) in [
            (IndexType::Int64, IndexType::Int64, 1),
            (IndexType::Int32, IndexType::Int32, 0),
        ] {
            let a = typed(&m, ot, it, vt, base, true);
            for layout in LAYOUTS {
                for op in OPS {
                    let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
                    for k in [1, 2, 9, 17, 40] {
                        let x = Dense::new(xr, k, 3, layout, &mut rng);
                        let y = Dense::new(yr, k, 1, layout, &mut rng);
                        let got = product(&h, &a, op, 0.5, &x, -1.5, &y, None).unwrap();
                        let want = reference(&m, op, 0.5, &x, -1.5, &y, round_for(vt));
                        let what = format!("{vt:?} {ot:?}/{it:?} {layout:?} {op:?} k {k}");
                        check(&got, &y, &want, vt, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn packed_column_major_path_gives_the_direct_kernels_bits() {
    // The packed-panel path (AVX-512, column-major) is forced by a zero scatter threshold,
    // with panels of 1, 2 and 4 vectors, and compared bit for bit with the direct kernels
    // (forced by disabling every packing rule), and with the reference: k = 2..3 and k not
    // a multiple of the panel width, ld > rows, beta = 0 and beta != 0, both types, 1-based
    // 64-bit indices, both ops, with and without an analysis. On machines without AVX-512
    // both runs take the direct kernels and only the reference check bites.
    let _knobs = knobs();
    use std::sync::atomic::Ordering;
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(32);
    let m = blocky(&mut rng, 900, 3000);
    let packed_mode = |nv: usize| {
        kern::SCATTER_BYTES.store(0, Ordering::Relaxed);
        kern::PANEL_VECS.store(nv, Ordering::Relaxed);
    };
    let direct_mode = || {
        kern::SCATTER_BYTES.store(usize::MAX, Ordering::Relaxed);
        kern::PACK_MIN_K.store(usize::MAX, Ordering::Relaxed);
    };
    let defaults = || {
        kern::SCATTER_BYTES.store(1 << 20, Ordering::Relaxed);
        kern::PANEL_VECS.store(2, Ordering::Relaxed);
        kern::PACK_MIN_K.store(8, Ordering::Relaxed);
    };
    for vt in VALUE_TYPES {
        let a = typed(&m, IndexType::Int64, IndexType::Int64, vt, 1, true);
        for op in OPS {
            let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
            let an = spgemm::analyse(&h, op, &a.any(), Layout::ColMajor, 16).unwrap();
            for (k, nv) in [
                (2, 2),
                (3, 1),
                (7, 1),
                (8, 2),
                (9, 4),
                (16, 1),
                (17, 2),
                (33, 2),
                (40, 4),
                (71, 4),
            ] {
                for (beta, analysis) in [(0.0, None), (0.75, Some(&an))] {
                    let x = Dense::new(xr, k, 5, Layout::ColMajor, &mut rng);
                    let y = Dense::new(yr, k, 2, Layout::ColMajor, &mut rng);
                    let panels = || kern::path_counts().packed_panels;
                    let n0 = panels();
                    packed_mode(nv);
                    let packed = product(&h, &a, op, -1.25, &x, beta, &y, analysis);
                    let n1 = panels();
                    direct_mode();
                    let direct = product(&h, &a, op, -1.25, &x, beta, &y, analysis);
                    let n2 = panels();
                    defaults();
                    let (packed, direct) = (packed.unwrap(), direct.unwrap());
                    let what = format!("{vt:?} {op:?} k {k} panel {nv} beta {beta}");
                    // The packed panels really ran (their bits equal the direct kernels',
                    // so only the count shows it), and only when forced.
                    if Isa::detect() == Isa::Avx512 {
                        assert!(n1 > n0, "{what}: the packed path did not run");
                    }
                    assert_eq!(n2, n1, "{what}: packed panels in direct mode");
                    let want = reference(&m, op, -1.25, &x, beta, &y, round_for(vt));
                    check(&packed, &y, &want, vt, &what);
                    check(&direct, &y, &want, vt, &what);
                    let same = same_bits(&packed, &direct);
                    assert!(same, "{what}: packed and direct results differ");
                }
            }
        }
    }
}

#[test]
fn packed_column_major_degenerate_shapes() {
    // The packed path (forced) on m = 0, n = 0, all-empty rows and a single long row, with
    // beta = 0 over a NaN-filled Y (must not leak) and alpha = 0 (A and X not read).
    let _knobs = knobs();
    use std::sync::atomic::Ordering;
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(34);
    let empty_rows = Csr {
        nrows: 50,
        ncols: 30,
        ptr: vec![0; 51],
        col: vec![],
        val: vec![],
    };
    let one_long = {
        let col: Vec<usize> = (0..400).map(|i| (i * 7) % 30).collect();
        let mut ptr = vec![0usize; 21];
        for p in ptr.iter_mut().skip(10) {
            *p = 400;
        }
        Csr {
            nrows: 20,
            ncols: 30,
            ptr,
            val: col.iter().map(|&c| c as f64 * 0.125 - 1.0).collect(),
            col,
        }
    };
    let no_rows = Csr {
        nrows: 0,
        ncols: 30,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    let no_cols = Csr {
        nrows: 25,
        ncols: 0,
        ptr: vec![0; 26],
        col: vec![],
        val: vec![],
    };
    kern::SCATTER_BYTES.store(0, Ordering::Relaxed);
    for (name, m) in [
        ("empty rows", &empty_rows),
        ("one long row", &one_long),
        ("m = 0", &no_rows),
        ("n = 0", &no_cols),
    ] {
        for vt in VALUE_TYPES {
            let a = typed(m, IndexType::Int32, IndexType::Int32, vt, 0, true);
            for k in [2, 9, 20] {
                for (alpha, beta) in [(1.5, 0.0), (0.0, 0.5), (-2.0, 0.25)] {
                    let x = Dense::new(m.ncols, k, 3, Layout::ColMajor, &mut rng);
                    let mut y = Dense::new(m.nrows, k, 1, Layout::ColMajor, &mut rng);
                    if beta == 0.0 {
                        for (i, v) in y.data.iter_mut().enumerate() {
                            if i % y.ld < m.nrows {
                                *v = f64::NAN;
                            }
                        }
                    }
                    let got = product(&h, &a, Op::NonTranspose, alpha, &x, beta, &y, None);
                    let want = reference(m, Op::NonTranspose, alpha, &x, beta, &y, round_for(vt));
                    check(
                        &got.unwrap(),
                        &y,
                        &want,
                        vt,
                        &format!("{name} {vt:?} k {k}"),
                    );
                }
            }
        }
    }
    kern::SCATTER_BYTES.store(1 << 20, Ordering::Relaxed);
}

#[test]
fn kernel_block_checks_catch_bad_structure_with_validation_off() {
    // With validation off the kernels check each block before reading it: a bad column index
    // or a decreasing offset far into A (not in the first block) must give an error or a
    // panic (a status at the ABI), never a result.
    let mut h = Handle::new(2).unwrap();
    h.options.validate = false;
    let mut rng = Rng::new(33);
    let m = blocky(&mut rng, 800, 4000);
    let tail = m.ptr[790];
    let mut bad_col = m.clone();
    bad_col.col[tail] = m.ncols + 3;
    let mut bad_ptr = m.clone();
    bad_ptr.ptr[785] = bad_ptr.ptr[786] + 1;
    for (name, bad) in [("column", &bad_col), ("offsets", &bad_ptr)] {
        let b = typed(
            bad,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        for layout in LAYOUTS {
            for k in [1, 3, 8, 20] {
                let x = Dense::new(m.ncols, k, 0, layout, &mut rng);
                let y = Dense::new(m.nrows, k, 0, layout, &mut rng);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    product(&h, &b, Op::NonTranspose, 1.0, &x, 0.0, &y, None)
                }));
                if let Ok(res) = r {
                    assert!(res.is_err(), "bad {name} accepted: {layout:?} k {k}");
                }
            }
        }
    }
}

#[test]
fn caller_thread_team_gives_the_pooled_bits() {
    // `run` with the calling thread working beside the pool's workers (the path `spmm`
    // takes), from inside the pool (the caller is a worker), and on one thread: the same
    // bits, on a product split into many parts and on one too small to split; both
    // layouts, k covering SpMV, row-major vector blocks and column groups.
    let mut rng = Rng::new(41);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let small = random(
        &mut rng,
        Shape {
            nrows: 40,
            ncols: 30,
            max_row: 5,
            ..Shape::default()
        },
    );
    for m in [big(&mut rng), small] {
        let a = typed(
            &m,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        let any = a.any();
        let csr = any.typed::<i32, i32, f64>().unwrap();
        let rows = CsrRows {
            csr,
            vals: csr.values().unwrap(),
        };
        for layout in LAYOUTS {
            for k in [1, 8, 13, 33] {
                let x = Dense::new(m.ncols, k, 1, layout, &mut rng);
                let y = Dense::new(m.nrows, k, 2, layout, &mut rng);
                let go = |threads: usize, pool_arg: Option<&rayon::ThreadPool>| {
                    let mut got = y.data.clone();
                    kern::run(
                        Isa::detect(),
                        &rows,
                        Problem {
                            k,
                            layout,
                            alpha: 0.75,
                            beta: -0.5,
                            x: &x.data,
                            ldx: x.ld,
                            x_rows: x.rows,
                            y: &mut got,
                            ldy: y.ld,
                            a_checked: false,
                            pack: None,
                            pack_vecs: 0,
                            pack_window: 0,
                            spmv: None,
                        },
                        None,
                        threads,
                        pool_arg,
                    );
                    got
                };
                let team = go(3, Some(&pool));
                let inside = pool.install(|| go(3, None));
                let single = go(1, None);
                let what = format!("{} rows {layout:?} k {k}", m.nrows);
                check(
                    &team,
                    &y,
                    &reference(&m, Op::NonTranspose, 0.75, &x, -0.5, &y, |v| v),
                    ValueType::Float64,
                    &what,
                );
                for (other, name) in [(&inside, "inside the pool"), (&single, "one thread")] {
                    let same = same_bits(&team, other);
                    assert!(same, "{what}: caller team and {name} differ");
                }
            }
        }
    }
}

#[test]
fn column_major_tiles_and_whole_chunk_groups_give_the_same_bits() {
    // Column-major products run in L2 row tiles or, when a column group spans much of X,
    // one pass per group over the whole chunk (`TILE_SPAN_BYTES`). Both, forced, against
    // the reference and bit for bit; k with groups of 8, 4, 2 and 1 columns, padded ld.
    let _knobs = knobs();
    use std::sync::atomic::Ordering;
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(42);
    let m = big(&mut rng);
    let set = |v: usize| kern::TILE_SPAN_BYTES.store(v, Ordering::Relaxed);
    for vt in VALUE_TYPES {
        let a = typed(&m, IndexType::Int32, IndexType::Int64, vt, 0, true);
        for op in OPS {
            let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
            for k in [2, 8, 15, 24] {
                let x = Dense::new(xr, k, 3, Layout::ColMajor, &mut rng);
                let y = Dense::new(yr, k, 1, Layout::ColMajor, &mut rng);
                set(usize::MAX);
                let tiles = product(&h, &a, op, 1.5, &x, 0.5, &y, None);
                set(0);
                let whole = product(&h, &a, op, 1.5, &x, 0.5, &y, None);
                set(256 << 10);
                let (tiles, whole) = (tiles.unwrap(), whole.unwrap());
                let what = format!("{vt:?} {op:?} k {k}");
                check(
                    &whole,
                    &y,
                    &reference(&m, op, 1.5, &x, 0.5, &y, round_for(vt)),
                    vt,
                    &what,
                );
                let same = same_bits(&tiles, &whole);
                assert!(same, "{what}: tiles and whole-chunk groups differ");
            }
        }
    }
}

#[test]
fn streamed_stores_and_wide_panels_give_the_cached_stores_bits() {
    // Non-temporal stores of Y (beta = 0, AVX-512 kernels), forced by a zero size
    // threshold, against normal stores (threshold off) bit for bit and against the
    // reference. Odd leading dimensions put some full vectors of Y on 64-byte boundaries
    // (where they are streamed) and others not, whatever the allocation's alignment. Y is
    // NaN-filled (beta = 0 must not read it). Column-major runs the packed path (forced)
    // with X wider than one packing part (4096 rows) and not a multiple of the 8 x 8
    // transposes, and k not a multiple of 8. Without AVX-512 only the reference bites.
    let _knobs = knobs();
    use std::sync::atomic::Ordering;
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(36);
    let m = blocky(&mut rng, 611, 4203);
    let nan_y = |y: &mut Dense| {
        for i in 0..y.rows {
            for j in 0..y.k {
                y.set(i, j, f64::NAN);
            }
        }
    };
    for vt in VALUE_TYPES {
        let a = typed(&m, IndexType::Int32, IndexType::Int32, vt, 0, true);
        for layout in LAYOUTS {
            for (k, pad) in [(8usize, 1usize), (16, 3), (13, 2), (33, 0), (64, 5)] {
                let ypad = match layout {
                    Layout::RowMajor => usize::from(k.is_multiple_of(2)) + pad * 2,
                    Layout::ColMajor => usize::from(m.nrows.is_multiple_of(2)) + pad * 2,
                };
                let x = Dense::new(m.ncols, k, pad, layout, &mut rng);
                let mut y = Dense::new(m.nrows, k, ypad, layout, &mut rng);
                nan_y(&mut y);
                kern::SCATTER_BYTES.store(0, Ordering::Relaxed);
                kern::STREAM_Y_BYTES.store(0, Ordering::Relaxed);
                let streamed = product(&h, &a, Op::NonTranspose, 0.5, &x, 0.0, &y, None);
                kern::STREAM_Y_BYTES.store(usize::MAX, Ordering::Relaxed);
                let cached = product(&h, &a, Op::NonTranspose, 0.5, &x, 0.0, &y, None);
                kern::STREAM_Y_BYTES.store(16 << 20, Ordering::Relaxed);
                kern::SCATTER_BYTES.store(1 << 20, Ordering::Relaxed);
                let (streamed, cached) = (streamed.unwrap(), cached.unwrap());
                let what = format!("{vt:?} {layout:?} k {k} ldy {}", y.ld);
                let want = reference(&m, Op::NonTranspose, 0.5, &x, 0.0, &y, round_for(vt));
                check(&streamed, &y, &want, vt, &what);
                check(&cached, &y, &want, vt, &what);
                assert!(
                    same_bits(&streamed, &cached),
                    "{what}: streamed and cached stores differ"
                );
            }
        }
    }
}

/// Rows whose columns slide along X in runs: forward (one row of X per row of A), backward,
/// forward by 1.25 rows per row, with jumps ahead, empty rows, and now and then an entry
/// far off (its block then spans more than any ring).
fn sliding(rng: &mut Rng, nrows: usize, ncols: usize) -> Csr {
    let mut ptr = vec![0usize];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..nrows {
        let q = nrows / 4;
        let center = match i / q {
            0 => i,
            1 => ncols - 1 - (i - q) % ncols,
            2 => (i - 2 * q) * 5 / 4 + if i % q > q / 2 { ncols / 3 } else { 0 },
            _ => (i - 3 * q) / 2,
        } % ncols;
        let len = if i % 53 < 4 { 0 } else { 1 + rng.below(9) };
        for _ in 0..len {
            let c = (center + rng.below(11)).saturating_sub(5).min(ncols - 1);
            col.push(c);
            val.push(rng.unit() - 0.5);
        }
        if i % 701 == 700 {
            col.push(if i % 2 == 0 { 0 } else { ncols - 1 });
            val.push(0.25);
        }
        ptr.push(col.len());
    }
    Csr {
        nrows,
        ncols,
        ptr,
        col,
        val,
    }
}

#[test]
fn window_rings_give_the_direct_kernels_bits() {
    // The column-major window rings (AVX-512; `run_window`), forced by a zero window
    // threshold, with rings of one and two vectors (budgets of 64 KiB and 1 MiB), against the
    // direct kernels (packing off) bit for bit and against the reference: windows that
    // slide forward, backward (a fresh ring per block), jump ahead, blocks wider than the
    // ring (direct kernel inside the ring path), empty rows; k not a multiple of the
    // panel, ld > rows, beta = 0 over NaN and beta != 0, both types, 0/1-based 32/64-bit
    // indices, both ops (op(A) = A^T takes the packed panels, see below), 1 and 2 threads,
    // with and without an analysis, streamed stores.
    // Without AVX-512 only the reference check bites.
    let _knobs = knobs();
    use std::sync::atomic::Ordering;
    let mut rng = Rng::new(38);
    let m = sliding(&mut rng, 6000, 5000);
    let window_mode = |bytes: usize| {
        kern::WINDOW_MIN_BYTES.store(0, Ordering::Relaxed);
        kern::WINDOW_BYTES.store(bytes, Ordering::Relaxed);
    };
    let direct_mode = || kern::WINDOW_BYTES.store(0, Ordering::Relaxed);
    let defaults = || {
        kern::WINDOW_MIN_BYTES.store(64 << 10, Ordering::Relaxed);
        kern::WINDOW_BYTES.store(1 << 20, Ordering::Relaxed);
        kern::PACK_MIN_K.store(8, Ordering::Relaxed);
        kern::STREAM_Y_BYTES.store(16 << 20, Ordering::Relaxed);
    };
    // Blocks too wide for their ring (computed by the direct kernel inside the ring path).
    let mut wide_blocks = 0;
    for threads in [1, 2] {
        let h = Handle::new(threads).unwrap();
        for vt in VALUE_TYPES {
            for (it, base) in [(IndexType::Int32, 0), (IndexType::Int64, 1)] {
                let a = typed(&m, it, it, vt, base, true);
                for op in OPS {
                    let (xr, yr) = spgemm::operand_rows(op, m.nrows, m.ncols);
                    let an = spgemm::analyse(&h, op, &a.any(), Layout::ColMajor, 16).unwrap();
                    for (k, bytes) in [(3, 1 << 20), (8, 64 << 10), (17, 1 << 20), (33, 64 << 10)] {
                        for (beta, analysis) in [(0.0, None), (0.5, Some(&an))] {
                            let x = Dense::new(xr, k, 3, Layout::ColMajor, &mut rng);
                            let mut y = Dense::new(yr, k, 5, Layout::ColMajor, &mut rng);
                            if beta == 0.0 {
                                for i in 0..y.rows {
                                    for j in 0..y.k {
                                        y.set(i, j, f64::NAN);
                                    }
                                }
                            }
                            kern::PACK_MIN_K.store(2, Ordering::Relaxed);
                            kern::STREAM_Y_BYTES
                                .store(if k == 17 { 0 } else { usize::MAX }, Ordering::Relaxed);
                            let c0 = kern::path_counts();
                            window_mode(bytes);
                            let ring = product(&h, &a, op, 0.75, &x, beta, &y, analysis);
                            let c1 = kern::path_counts();
                            direct_mode();
                            let direct = product(&h, &a, op, 0.75, &x, beta, &y, analysis);
                            let c2 = kern::path_counts();
                            defaults();
                            let (ring, direct) = (ring.unwrap(), direct.unwrap());
                            let what = format!(
                                "threads {threads} {vt:?} {it:?} {op:?} k {k} ring budget {bytes} beta {beta}"
                            );
                            // The rings really ran (same bits as the direct kernels, so only
                            // the counts show it; with one thread every block is counted on
                            // this thread), and not in direct mode. For op(A) = A^T the rows
                            // of this A^T read X all over (wider than `TILE_SPAN_BYTES`), so
                            // the packed panels run instead of the rings.
                            if Isa::detect() == Isa::Avx512 && op == Op::NonTranspose {
                                assert!(c1.window_calls > c0.window_calls, "{what}: no rings");
                                if threads == 1 {
                                    assert!(
                                        c1.ring_blocks > c0.ring_blocks,
                                        "{what}: no block computed from a ring"
                                    );
                                    wide_blocks += c1.ring_direct_blocks - c0.ring_direct_blocks;
                                }
                            }
                            assert_eq!(
                                c2.window_calls, c1.window_calls,
                                "{what}: rings in direct mode"
                            );
                            assert_eq!(
                                c2.ring_blocks, c1.ring_blocks,
                                "{what}: ring blocks in direct mode"
                            );
                            let want = reference(&m, op, 0.75, &x, beta, &y, round_for(vt));
                            check(&ring, &y, &want, vt, &what);
                            check(&direct, &y, &want, vt, &what);
                            assert!(
                                same_bits(&ring, &direct),
                                "{what}: ring and direct results differ"
                            );
                        }
                    }
                }
            }
        }
    }
    if Isa::detect() == Isa::Avx512 {
        assert!(wide_blocks > 0, "no block wider than its ring");
    }
}

/// Validation off (1 to 3 threads) against validation on (one thread), bit for bit, and
/// validation on against the reference: for every value, offset and index type and base,
/// each `(layout, k, pad)` of `shapes` and alpha/beta 0.5/0 (Y NaN at `nan(row, k)`'s
/// column, which beta = 0 must not read), 1/2 and 0/2 (A and X not read). The driver of the
/// inline-check tests (the kernels prove A's rows safe as they read them when validation
/// is off).
fn inline_checks_give_the_checked_bits(
    seed: u64,
    shapes: &[(Layout, usize, usize)],
    nan: fn(usize, usize) -> Option<usize>,
) {
    let mut rng = Rng::new(seed);
    let m = blocky(&mut rng, 300, 500);
    let on = Handle::new(1).unwrap();
    let off: Vec<Handle> = [1, 2, 3]
        .iter()
        .map(|&t| {
            let mut h = Handle::new(t).unwrap();
            h.options.validate = false;
            h
        })
        .collect();
    for vt in VALUE_TYPES {
        for ot in OFFSET_TYPES {
            for it in INDEX_TYPES {
                for base in [0, 1] {
                    let a = typed(&m, ot, it, vt, base, true);
                    for &(layout, k, pad) in shapes {
                        let x = Dense::new(m.ncols, k, pad, layout, &mut rng);
                        for (alpha, beta) in [(0.5, 0.0), (1.0, 2.0), (0.0, 2.0)] {
                            let mut y = Dense::new(m.nrows, k, pad, layout, &mut rng);
                            if beta == 0.0 {
                                for r in 0..m.nrows {
                                    if let Some(j) = nan(r, k) {
                                        y.set(r, j, f64::NAN);
                                    }
                                }
                            }
                            let what = format!(
                                "{vt:?} {ot:?} {it:?} base {base} {layout:?} k {k} pad {pad} {alpha}/{beta}"
                            );
                            let want =
                                product(&on, &a, Op::NonTranspose, alpha, &x, beta, &y, None)
                                    .unwrap();
                            let r =
                                reference(&m, Op::NonTranspose, alpha, &x, beta, &y, round_for(vt));
                            check(&want, &y, &r, vt, &what);
                            for h in &off {
                                let got =
                                    product(h, &a, Op::NonTranspose, alpha, &x, beta, &y, None)
                                        .unwrap();
                                assert!(
                                    same_bits(&got, &want),
                                    "{what}: {} threads, validation off differs",
                                    h.threads()
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Copies of `m` (float64, types `ot`/`it`, base `base`) each broken in one way deep in A,
/// with the start of the message the `check_rows` pass gives for it: a column index above
/// X's rows or below the base at position `tail`, a decreasing offset at row 285, a last
/// offset past the entries and (where the offset type can hold it) a first offset below
/// the base (the last two found before the kernels, from the arrays' lengths).
fn bad_structures(
    m: &Csr,
    ot: IndexType,
    it: IndexType,
    base: usize,
    tail: usize,
) -> Vec<(&'static str, Typed, String)> {
    let nnz = m.col.len();
    let good = || typed(m, ot, it, ValueType::Float64, base, true);
    let set_col = |a: &mut Typed, p: usize, v: i64| match &mut a.idx {
        Ix::I32(c) => c[p] = v as i32,
        Ix::I64(c) => c[p] = v,
    };
    let set_off = |a: &mut Typed, i: usize, v: i64| match &mut a.off {
        Off::I32(o) => o[i] = v as i32,
        Off::I64(o) => o[i] = v,
        Off::U64(o) => o[i] = v as u64,
    };
    let col_msg = format!("A: column index at position {tail} is outside");
    let off_msg = "A: row offsets decrease or overrun the entries at row".to_string();
    let mut cases = Vec::new();
    let mut a = good();
    set_col(&mut a, tail, (m.ncols + base) as i64);
    cases.push(("column past X", a, col_msg.clone()));
    let mut a = good();
    set_col(&mut a, tail, base as i64 - 1);
    cases.push(("column below base", a, col_msg));
    let mut a = good();
    set_off(&mut a, 285, (m.ptr[286] + base + 1) as i64);
    cases.push(("decreasing offset", a, off_msg));
    let mut a = good();
    set_off(&mut a, m.nrows, (nnz + base + 1) as i64);
    cases.push((
        "last offset past the entries",
        a,
        "A: row_offsets[".to_string(),
    ));
    if ot != IndexType::SizeT || base == 1 {
        let mut a = good();
        set_off(&mut a, 0, base as i64 - 1);
        cases.push((
            "first offset below base",
            a,
            "A: row_offsets[0]".to_string(),
        ));
    }
    cases
}

#[test]
fn row_major_inline_checks_give_the_checked_bits() {
    // The AVX-512 row-major kernel proves A's rows safe as it reads them: k not a multiple
    // of the vector length, ld > k, NaN in every row of Y under beta = 0.
    let shapes: Vec<_> = [2, 8, 13, 16, 24, 32, 70]
        .iter()
        .map(|&k| (Layout::RowMajor, k, k % 3))
        .collect();
    inline_checks_give_the_checked_bits(62, &shapes, |r, k| Some(r % k));
}

#[test]
fn row_major_inline_checks_catch_bad_structure() {
    // Validation off, row-major: each of `bad_structures`, anywhere in A, gives an error or a
    // panic (a status at the ABI), never a result.
    let mut rng = Rng::new(63);
    let m = blocky(&mut rng, 300, 500);
    let mut h = Handle::new(2).unwrap();
    h.options.validate = false;
    for ot in OFFSET_TYPES {
        for it in INDEX_TYPES {
            for base in [0usize, 1] {
                for (name, bad, _) in &bad_structures(&m, ot, it, base, m.ptr[290]) {
                    for k in [2, 8, 16, 20, 64] {
                        let x = Dense::new(m.ncols, k, 1, Layout::RowMajor, &mut rng);
                        let y = Dense::new(m.nrows, k, 1, Layout::RowMajor, &mut rng);
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            product(&h, bad, Op::NonTranspose, 1.0, &x, 0.0, &y, None)
                        }));
                        if let Ok(res) = r {
                            assert!(
                                res.is_err(),
                                "{ot:?} {it:?} base {base}: bad {name} accepted, k {k}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn spmv_inline_checks_give_the_checked_bits() {
    // k = 1: the SpMV kernel on A's own arrays proves the rows safe as it reads them, both
    // layouts, unit and padded strides (padded row-major takes the strided kernel), NaN in
    // every third row of Y under beta = 0.
    let shapes: Vec<_> = [Layout::RowMajor, Layout::ColMajor]
        .iter()
        .flat_map(|&l| [(l, 1, 0), (l, 1, 2)])
        .collect();
    inline_checks_give_the_checked_bits(64, &shapes, |r, _| (r % 3 == 0).then_some(0));
}

#[test]
fn spmv_inline_checks_catch_bad_structure_with_the_pass_messages() {
    // k = 1, validation off, both layouts, unit strides (the inline-checked kernel): each of
    // `bad_structures`, deep in A, gives an error or a panic (a status at the ABI), never a
    // result, and the message is the one of the `check_rows` pass.
    let mut rng = Rng::new(65);
    let m = blocky(&mut rng, 300, 500);
    let mut h = Handle::new(2).unwrap();
    h.options.validate = false;
    for ot in OFFSET_TYPES {
        for it in INDEX_TYPES {
            for base in [0usize, 1] {
                let tail = m.ptr[290] + 1;
                assert!(tail < m.ptr[291], "row 290 needs two entries");
                for (name, bad, msg) in &bad_structures(&m, ot, it, base, tail) {
                    for layout in LAYOUTS {
                        let x = Dense::new(m.ncols, 1, 0, layout, &mut rng);
                        let y = Dense::new(m.nrows, 1, 0, layout, &mut rng);
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            product(&h, bad, Op::NonTranspose, 1.0, &x, 0.0, &y, None)
                        }));
                        let what = format!("{ot:?} {it:?} base {base} {layout:?}: bad {name}");
                        let got = match r {
                            Ok(Ok(_)) => panic!("{what} accepted"),
                            Ok(Err(e)) => e.to_string(),
                            Err(p) => p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default(),
                        };
                        assert!(
                            got.contains(msg.as_str()),
                            "{what}: message {got:?}, want {msg:?}"
                        );
                    }
                }
            }
        }
    }
}

/// An SpMV with an analysis of a matrix with row groups (rows in runs of 1-5 with one
/// column list, FEM-like): the analysis keeps the groups and the kernels read each group's
/// columns once (validation on: A's digest compared; off: checked as read); Y is bitwise
/// the product without an analysis, at 1, 2 and 3 threads, with a k hint of 0 and 1.
#[test]
fn spmv_analysis_with_row_groups_same_bits() {
    let mut rng = Rng::new(77);
    let base = big(&mut rng);
    let (mut ptr, mut col, mut val) = (vec![0usize], Vec::new(), Vec::new());
    let mut i = 0;
    while ptr.len() <= 3000 {
        let src = i % base.nrows;
        i += 7;
        for _ in 0..1 + rng.below(5) {
            for p in base.ptr[src]..base.ptr[src + 1] {
                col.push(base.col[p]);
                val.push(rng.unit() * 2.0 - 1.0);
            }
            ptr.push(col.len());
        }
    }
    let m = Csr {
        nrows: ptr.len() - 1,
        ncols: base.ncols,
        ptr,
        col,
        val,
    };
    let handles: Vec<Handle> = [1, 2, 3].iter().map(|&t| Handle::new(t).unwrap()).collect();
    for vt in VALUE_TYPES {
        let a = typed(&m, IndexType::Int64, IndexType::Int32, vt, 1, true);
        for layout in LAYOUTS {
            let x = Dense::new(m.ncols, 1, 0, layout, &mut rng);
            let y = Dense::new(m.nrows, 1, 0, layout, &mut rng);
            let want = product(&handles[0], &a, Op::NonTranspose, 0.5, &x, 2.0, &y, None).unwrap();
            for h in &handles {
                for hint in [0, 1] {
                    let an = spgemm::analyse(h, Op::NonTranspose, &a.any(), layout, hint).unwrap();
                    let got =
                        product(h, &a, Op::NonTranspose, 0.5, &x, 2.0, &y, Some(&an)).unwrap();
                    assert!(
                        same_bits(&got, &want),
                        "{vt:?} {layout:?}: {} threads, hint {hint}",
                        h.threads()
                    );
                    let mut off = Handle::new(h.threads()).unwrap();
                    off.options.validate = false;
                    let got =
                        product(&off, &a, Op::NonTranspose, 0.5, &x, 2.0, &y, Some(&an)).unwrap();
                    assert!(same_bits(&got, &want), "{vt:?} {layout:?}: validation off");
                }
            }
        }
    }
}
