//! SpGEMM with transposed operands and complex values on the CPU against the reference
//! (`reference_op`: a transpose lists each row's entries in increasing row of the operand,
//! the order the library keeps, so results compare bitwise): every op pair (N, T, C) for
//! real and complex values in every index type and base, sorted and unsorted, every
//! algorithm; shapes op makes wrong; numeric reuse after new values of A and B (through the
//! transposes and the conjugation, on the replay path too); determinism over thread
//! counts; the GPU backend's refusals, decided before any device is looked for.

use crate::common::*;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Backend, Handle, Op, OutputFormat, Plan};
use spgemm::{IndexVec, OffsetVec, ValueVec};
use spgemm::{Result, Status};

const ALGS: [Algorithm; 4] = [
    Algorithm::Auto,
    Algorithm::Dense,
    Algorithm::LinearProbe,
    Algorithm::LinkedList,
];

fn handle(threads: usize, alg: Algorithm, sorted: bool) -> Handle {
    let mut h = Handle::new(threads).unwrap();
    h.options.algorithm = alg;
    h.options.sorted_output = sorted;
    h
}

const F32: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

/// Symbolic + numeric of op(A)*op(B) through the typed API; C's row offsets checked
/// against the plan's.
fn product_op(
    h: &Handle,
    (op_a, a): (Op, &Typed),
    (op_b, b): (Op, &Typed),
    format: OutputFormat,
    with_values: bool,
) -> Result<Out> {
    let plan = spgemm::symbolic_op(h, op_a, &a.any(), op_b, &b.any(), format)?;
    assert_eq!(plan.ops(), (op_a, op_b));
    let out = numeric_out(h, &plan, a, b, format, with_values)?;
    assert_eq!(out.ptr, &plan.row_offsets().unwrap()[..]);
    Ok(out)
}

/// A (`m` x `n`) and a B that makes op_a(A) * op_b(B) defined, with `k` columns in C.
fn operands(
    rng: &mut Rng,
    (m, n, k): (usize, usize, usize),
    ops: (Op, Op),
    s: Shape,
) -> (Csr, Csr) {
    let a = random(
        rng,
        Shape {
            nrows: m,
            ncols: n,
            ..s
        },
    );
    let inner = ops.0.shape(m, n).1;
    let (bm, bn) = ops.1.shape(inner, k);
    let b = random(
        rng,
        Shape {
            nrows: bm,
            ncols: bn,
            ..s
        },
    );
    (a, b)
}

fn messy() -> Shape {
    Shape {
        max_row: 6,
        empty_rows: 0.2,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        ..Default::default()
    }
}

#[test]
fn every_op_pair_value_type_and_format() {
    let mut rng = Rng::new(11);
    let handles: Vec<Handle> = ALGS
        .iter()
        .flat_map(|&alg| [true, false].map(|sorted| handle(2, alg, sorted)))
        .collect();
    for op_a in OPS {
        for op_b in OPS {
            let (a, b) = operands(&mut rng, (17, 12, 14), (op_a, op_b), messy());
            for vt in ALL_VALUE_TYPES {
                let want = expected_op(&a, op_a, &b, op_b, vt, true);
                let mut t = 0usize;
                for ot in OFFSET_TYPES {
                    for it in INDEX_TYPES {
                        for (ab, bb) in [(0, 0), (1, 1), (0, 1), (1, 0)] {
                            for cot in OFFSET_TYPES {
                                for cit in INDEX_TYPES {
                                    t += 1;
                                    let h = &handles[t % handles.len()];
                                    let sorted = h.options.sorted_output;
                                    let ta = typed(&a, ot, it, vt, ab, true);
                                    let tb = typed(&b, ot, it, vt, bb, true);
                                    let f = OutputFormat {
                                        offsets: cot,
                                        indices: cit,
                                        base: (t / 3) % 2,
                                    };
                                    let what = format!(
                                        "{op_a:?} {op_b:?} {vt:?} {ot:?} {it:?} bases {ab}{bb} -> {f:?}, {:?} sorted {sorted}",
                                        h.options.algorithm
                                    );
                                    let got = product_op(h, (op_a, &ta), (op_b, &tb), f, true)
                                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                                    let got = if sorted { got } else { sort_rows(&got) };
                                    assert_eq!(got, want, "{what}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Every algorithm, sorted and unsorted, on larger inputs with long rows (the dense and
/// grouped kernels, compression of op(B)), complex and real.
#[test]
fn every_algorithm_on_larger_products() {
    let mut rng = Rng::new(12);
    let s = Shape {
        max_row: 24,
        empty_rows: 0.05,
        duplicates: true,
        unsorted: true,
        ..Default::default()
    };
    for (op_a, op_b) in [
        (Op::ConjugateTranspose, Op::NonTranspose),
        (Op::NonTranspose, Op::Transpose),
        (Op::Transpose, Op::ConjugateTranspose),
    ] {
        let (a, b) = operands(&mut rng, (300, 220, 260), (op_a, op_b), s);
        for vt in [
            ValueType::Complex64,
            ValueType::Complex32,
            ValueType::Float64,
        ] {
            let want = expected_op(&a, op_a, &b, op_b, vt, true);
            let ta = typed(&a, IndexType::Int64, IndexType::Int32, vt, 1, true);
            let tb = typed(&b, IndexType::Int64, IndexType::Int32, vt, 0, true);
            for alg in ALGS {
                for sorted in [true, false] {
                    let h = handle(2, alg, sorted);
                    let got = product_op(&h, (op_a, &ta), (op_b, &tb), F32, true).unwrap();
                    let got = if sorted { got } else { sort_rows(&got) };
                    assert_eq!(
                        got, want,
                        "{op_a:?} {op_b:?} {vt:?} {alg:?} sorted {sorted}"
                    );
                }
            }
        }
    }
}

/// Structure-only products with ops: the structure of the reference, values not read.
#[test]
fn pattern_only_products_with_ops() {
    let mut rng = Rng::new(13);
    for (op_a, op_b) in [
        (Op::Transpose, Op::NonTranspose),
        (Op::NonTranspose, Op::Transpose),
    ] {
        let (a, b) = operands(&mut rng, (40, 30, 25), (op_a, op_b), messy());
        for vt in ALL_VALUE_TYPES {
            let h = handle(2, Algorithm::Auto, true);
            let ta = typed(&a, IndexType::Int32, IndexType::Int64, vt, 0, false);
            let tb = typed(&b, IndexType::Int32, IndexType::Int64, vt, 1, false);
            let got = product_op(&h, (op_a, &ta), (op_b, &tb), F32, false).unwrap();
            assert_eq!(got, expected_op(&a, op_a, &b, op_b, vt, false), "{vt:?}");
            let c = spgemm::multiply_op(&h, op_a, &ta.any(), op_b, &tb.any(), F32).unwrap();
            assert!(c.values.is_none());
        }
    }
}

#[test]
fn shapes_op_makes_wrong_are_dimension_mismatches() {
    let mut rng = Rng::new(14);
    // A is 5 x 4, B is 5 x 3.
    let a = random(
        &mut rng,
        Shape {
            nrows: 5,
            ncols: 4,
            max_row: 3,
            ..Default::default()
        },
    );
    let b = random(
        &mut rng,
        Shape {
            nrows: 5,
            ncols: 3,
            max_row: 3,
            ..Default::default()
        },
    );
    let h = handle(1, Algorithm::Auto, true);
    for vt in [ValueType::Float64, ValueType::Complex32] {
        let ta = typed(&a, IndexType::Int32, IndexType::Int32, vt, 0, true);
        let tb = typed(&b, IndexType::Int32, IndexType::Int32, vt, 0, true);
        for op_a in OPS {
            for op_b in OPS {
                let defined = op_a.shape(5, 4).1 == op_b.shape(5, 3).0;
                let r = spgemm::symbolic_op(&h, op_a, &ta.any(), op_b, &tb.any(), F32);
                match r {
                    Ok(p) => {
                        assert!(defined, "{op_a:?} {op_b:?} accepted");
                        assert_eq!((p.nrows(), p.ncols()), (4, 3));
                    }
                    Err(e) => {
                        assert!(!defined, "{op_a:?} {op_b:?}: {e}");
                        assert_eq!(e.status, Status::DimensionMismatch, "{e}");
                        // A * B keeps the message of spgemm_symbolic.
                        let words = if (op_a, op_b) == (Op::NonTranspose, Op::NonTranspose) {
                            ["A's columns", "B's rows"]
                        } else {
                            ["op(A)", "op(B)"]
                        };
                        assert!(words.iter().all(|w| e.message.contains(w)), "{e}");
                    }
                }
            }
        }
    }
}

/// A and B of different value types, and a numeric call with another value type than the
/// plan's.
#[test]
fn value_types_must_agree() {
    let mut rng = Rng::new(15);
    let (a, b) = operands(
        &mut rng,
        (9, 7, 5),
        (Op::Transpose, Op::NonTranspose),
        messy(),
    );
    let h = handle(1, Algorithm::Auto, true);
    let i32_ = IndexType::Int32;
    let ac = typed(&a, i32_, i32_, ValueType::Complex64, 0, true);
    let ar = typed(&a, i32_, i32_, ValueType::Float64, 0, true);
    let bc = typed(&b, i32_, i32_, ValueType::Complex64, 0, true);
    let br = typed(&b, i32_, i32_, ValueType::Float64, 0, true);
    let t = Op::Transpose;
    let n = Op::NonTranspose;
    let e = spgemm::symbolic_op(&h, t, &ac.any(), n, &br.any(), F32).unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    let Err(e) = spgemm::multiply_op(&h, t, &ar.any(), n, &bc.any(), F32) else {
        panic!("float A times complex B accepted");
    };
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    let plan = spgemm::symbolic_op(&h, t, &ac.any(), n, &bc.any(), F32).unwrap();
    let e = numeric_out(&h, &plan, &ar, &br, F32, true).unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    // A C value array of another type than the plan's.
    let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).unwrap();
    let mut val = ValueVec::zeroed(ValueType::Complex32, plan.nnz()).unwrap();
    let e = spgemm::numeric(
        &h,
        &plan,
        &ac.any(),
        &bc.any(),
        idx.as_mut(),
        Some(val.as_mut()),
    )
    .unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
}

/// New values for the reuse rounds (same structure): -0.0 in every seventh entry, a NaN
/// in round 3, small integers elsewhere.
fn new_values(m: &mut Csr, rng: &mut Rng, round: usize) {
    for (t, v) in m.val.iter_mut().enumerate() {
        *v = match (t + round) % 7 {
            0 => -0.0,
            1 if round == 3 => f64::NAN,
            _ => (rng.below(7) as f64) - 3.0,
        };
    }
}

/// One plan, many numeric calls into the same C arrays while A's and B's values change:
/// every call equals the reference on the new values (the transposes' values are gathered
/// again, conjugated for A^H), with validation on (from the third call on the replay
/// kernel runs) and off, for every op pair and value type.
#[test]
fn numeric_reuse_picks_up_new_values_through_the_transposes() {
    let mut rng = Rng::new(16);
    for validate in [true, false] {
        for op_a in OPS {
            for op_b in OPS {
                for vt in ALL_VALUE_TYPES {
                    let (mut a, mut b) = operands(&mut rng, (60, 45, 50), (op_a, op_b), messy());
                    let mut h = handle(2, Algorithm::Auto, true);
                    h.options.validate = validate;
                    let (ot, it) = (IndexType::Int64, IndexType::Int32);
                    let ta = typed(&a, ot, it, vt, 1, true);
                    let tb = typed(&b, ot, it, vt, 0, true);
                    let plan: Plan =
                        spgemm::symbolic_op(&h, op_a, &ta.any(), op_b, &tb.any(), F32).unwrap();
                    let mut off = OffsetVec::zeroed(IndexType::Int32, plan.nrows() + 1).unwrap();
                    spgemm::write_row_offsets(&plan, off.as_mut()).unwrap();
                    let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).unwrap();
                    let mut val = ValueVec::zeroed(vt, plan.nnz()).unwrap();
                    for round in 0..5 {
                        if round > 0 {
                            new_values(&mut a, &mut rng, round);
                            new_values(&mut b, &mut rng, round + 2);
                        }
                        let ta = typed(&a, ot, it, vt, 1, true);
                        let tb = typed(&b, ot, it, vt, 0, true);
                        spgemm::numeric(
                            &h,
                            &plan,
                            &ta.any(),
                            &tb.any(),
                            idx.as_mut(),
                            Some(val.as_mut()),
                        )
                        .unwrap();
                        let got = collect_out(&off, &idx, Some(&val), 0);
                        let want = expected_op(&a, op_a, &b, op_b, vt, true);
                        assert_eq!(
                            got, want,
                            "{op_a:?} {op_b:?} {vt:?} validate {validate} round {round}"
                        );
                    }
                    let d = plan.cpu_details().unwrap();
                    assert_eq!(d.numeric_calls, 5);
                    if validate {
                        assert!(d.replayed_chunks > 0, "{op_a:?} {op_b:?}: {d:?}");
                    }
                }
            }
        }
    }
}

/// A changed structure is refused with validation on: the plan's digests are those of
/// A and B as given, not of their transposes.
#[test]
fn reuse_checks_the_callers_structure() {
    let mut rng = Rng::new(17);
    let (a, b) = operands(
        &mut rng,
        (30, 20, 25),
        (Op::ConjugateTranspose, Op::NonTranspose),
        messy(),
    );
    let h = handle(2, Algorithm::Auto, true);
    let vt = ValueType::Complex64;
    let ta = typed(&a, IndexType::Int32, IndexType::Int32, vt, 0, true);
    let tb = typed(&b, IndexType::Int32, IndexType::Int32, vt, 0, true);
    let op = Op::ConjugateTranspose;
    let plan = spgemm::symbolic_op(&h, op, &ta.any(), Op::NonTranspose, &tb.any(), F32).unwrap();
    let mut a2 = a.clone();
    let p = a2.col.iter().position(|&c| c + 1 < a2.ncols).unwrap();
    a2.col[p] += 1;
    let ta2 = typed(&a2, IndexType::Int32, IndexType::Int32, vt, 0, true);
    let e = numeric_out(&h, &plan, &ta2, &tb, F32, true).unwrap_err();
    assert_eq!(e.status, Status::PlanMismatch, "{e}");
    assert!(e.message.contains("A:"), "{e}");
    // The plan still works with the original A.
    let got = numeric_out(&h, &plan, &ta, &tb, F32, true).unwrap();
    assert_eq!(got, expected_op(&a, op, &b, Op::NonTranspose, vt, true));
}

/// The same product on 1, 2 and 3 threads and every algorithm gives the same bits.
#[test]
fn bitwise_identical_over_thread_counts() {
    let mut rng = Rng::new(18);
    let s = Shape {
        max_row: 16,
        empty_rows: 0.1,
        duplicates: true,
        unsorted: true,
        non_finite: true,
        ..Default::default()
    };
    for (op_a, op_b) in [
        (Op::ConjugateTranspose, Op::Transpose),
        (Op::Transpose, Op::NonTranspose),
    ] {
        let (a, b) = operands(&mut rng, (2000, 1500, 1800), (op_a, op_b), s);
        for vt in [
            ValueType::Complex64,
            ValueType::Complex32,
            ValueType::Float32,
        ] {
            let want = expected_op(&a, op_a, &b, op_b, vt, true);
            let ta = typed(&a, IndexType::Int32, IndexType::Int32, vt, 0, true);
            let tb = typed(&b, IndexType::Int32, IndexType::Int32, vt, 0, true);
            for threads in [1, 2, 3] {
                for alg in ALGS {
                    let h = handle(threads, alg, true);
                    let got = product_op(&h, (op_a, &ta), (op_b, &tb), F32, true).unwrap();
                    assert!(
                        got == want,
                        "{op_a:?} {op_b:?} {vt:?} {threads} threads {alg:?}"
                    );
                }
            }
        }
    }
}

/// The plan's shape is op(A)'s rows by op(B)'s columns; it reports its ops and the bytes
/// of its transposes; the one-call product equals the two-phase one.
#[test]
fn plans_report_their_ops_and_one_call_products_match() {
    let mut rng = Rng::new(19);
    let (a, b) = operands(
        &mut rng,
        (23, 31, 19),
        (Op::Transpose, Op::ConjugateTranspose),
        messy(),
    );
    let vt = ValueType::Complex64;
    let ta = typed(&a, IndexType::SizeT, IndexType::Int64, vt, 1, true);
    let tb = typed(&b, IndexType::SizeT, IndexType::Int64, vt, 1, true);
    let h = handle(2, Algorithm::Auto, true);
    let (t, c) = (Op::Transpose, Op::ConjugateTranspose);
    let plan = spgemm::symbolic_op(&h, t, &ta.any(), c, &tb.any(), F32).unwrap();
    assert_eq!(plan.ops(), (t, c));
    assert_eq!((plan.nrows(), plan.ncols()), (31, 19));
    let text = plan.describe();
    assert!(text.contains("operands: A^T * B^H"), "{text}");
    let f = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int64,
        base: 1,
    };
    let one = spgemm::multiply_op(&h, t, &ta.any(), c, &tb.any(), f).unwrap();
    assert_eq!((one.nrows, one.ncols), (31, 19));
    let got = collect_out(&one.offsets, &one.indices, one.values.as_ref(), 1);
    assert_eq!(got, expected_op(&a, t, &b, c, vt, true));
    // A*A^H of one matrix (the same arrays as both operands).
    let plan = spgemm::symbolic_op(&h, Op::NonTranspose, &ta.any(), c, &ta.any(), F32).unwrap();
    let got = numeric_out(&h, &plan, &ta, &ta, F32, true).unwrap();
    assert_eq!(got, expected_op(&a, Op::NonTranspose, &a, c, vt, true));
}

/// The GPU backend takes neither complex values nor transposed operands: `Cuda` refuses
/// them with `NotSupported` whether or not a GPU is present (no device is looked for);
/// `Auto`, and hybrid products, compute them on the CPU.
#[test]
fn gpu_backend_refuses_complex_values_and_transposes() {
    let mut rng = Rng::new(20);
    let (a, b) = operands(
        &mut rng,
        (12, 10, 8),
        (Op::NonTranspose, Op::NonTranspose),
        messy(),
    );
    let i32_ = IndexType::Int32;
    let ac = typed(&a, i32_, i32_, ValueType::Complex32, 0, true);
    let bc = typed(&b, i32_, i32_, ValueType::Complex32, 0, true);
    let ar = typed(&a, i32_, i32_, ValueType::Float64, 0, true);
    let (n, t) = (Op::NonTranspose, Op::Transpose);
    let mut h = handle(1, Algorithm::Auto, true);
    h.options.backend = Backend::Cuda;
    let e = spgemm::symbolic(&h, &ac.any(), &bc.any(), F32).unwrap_err();
    assert_eq!(e.status, Status::NotSupported, "{e}");
    assert!(e.message.contains("complex"), "{e}");
    let e = spgemm::symbolic_op(&h, t, &ar.any(), n, &ar.any(), F32).unwrap_err();
    assert_eq!(e.status, Status::NotSupported, "{e}");
    assert!(e.message.contains("A^T"), "{e}");
    h.options.hybrid = true;
    let Err(e) = spgemm::multiply_op(&h, n, &ar.any(), t, &ar.any(), F32) else {
        panic!("A*A^T accepted under SPGEMM_BACKEND_CUDA");
    };
    assert_eq!(e.status, Status::NotSupported, "{e}");
    for backend in [Backend::Auto, Backend::Cpu] {
        h.options.backend = backend;
        let plan = spgemm::symbolic(&h, &ac.any(), &bc.any(), F32).unwrap();
        assert_eq!(plan.kind(), spgemm::PlanKind::Cpu);
        let split = plan.split().expect("hybrid was asked for");
        assert_eq!(split.cpu_rows(), 12);
        if backend == Backend::Auto {
            assert!(split.describe().contains("complex"), "{}", split.describe());
        }
        let got = numeric_out(&h, &plan, &ac, &bc, F32, true).unwrap();
        assert_eq!(got, expected(&a, &b, ValueType::Complex32, true));
    }
}
