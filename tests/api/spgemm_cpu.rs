//! SpGEMM on the CPU against the reference product: every index/value/base combination,
//! every algorithm, sorted and unsorted output, adversarial shapes, reuse, determinism.

use crate::common::*;
use spgemm::OutputFormat;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle};
use spgemm::{IndexVec, OffsetVec, ValueVec};
use spgemm::{Result, Status};

/// Every concrete algorithm plus the selector.
const ALGS: [Algorithm; 4] = [
    Algorithm::Auto,
    Algorithm::Dense,
    Algorithm::LinearProbe,
    Algorithm::LinkedList,
];

/// Symbolic + numeric through the typed layer, as the ABI does.
fn product(
    h: &Handle,
    a: &Typed,
    b: &Typed,
    format: OutputFormat,
    with_values: bool,
) -> Result<Out> {
    let plan = spgemm::symbolic(h, &a.any(), &b.any(), format)?;
    let out = numeric_out(h, &plan, a, b, format, with_values)?;
    assert_eq!(out.ptr, &plan.row_offsets().unwrap()[..]);
    Ok(out)
}

/// New values for A and B of the reuse tests (same structure): -0.0 in every ninth entry
/// of A, a NaN in round 3, small integers elsewhere (exact sums, so any change of the
/// summation order that changes bits is a real one).
fn new_values(a: &mut Csr, b: &mut Csr, rng: &mut Rng, round: usize) {
    for (t, v) in a.val.iter_mut().enumerate() {
        *v = match (t + round) % 9 {
            0 => -0.0,
            1 if round == 3 => f64::NAN,
            _ => (rng.below(7) as f64) - 3.0,
        };
    }
    for v in b.val.iter_mut() {
        *v = (rng.below(5) as f64) - 2.0;
    }
}

fn handle(threads: usize, alg: Algorithm, sorted: bool) -> Handle {
    let mut h = Handle::new(threads).unwrap();
    h.options.algorithm = alg;
    h.options.sorted_output = sorted;
    h
}

/// The reuse tests' handle (parallel path, memory limit `limit`, 0: none) and output format
/// (offsets and indices of type `it`, base `base`).
fn reuse_setup(
    threads: usize,
    sorted: bool,
    limit: usize,
    (it, base): (IndexType, usize),
) -> (Handle, OutputFormat) {
    let mut h = handle(threads, Algorithm::Auto, sorted);
    h.options.small_path = false;
    h.options.memory_limit = limit;
    let f = OutputFormat {
        offsets: it,
        indices: it,
        base,
    };
    (h, f)
}

fn check_all_algorithms(a: &Csr, b: &Csr, what: &str) {
    for vt in VALUE_TYPES {
        let want = expected(a, b, vt, true);
        for alg in ALGS {
            for sorted in [true, false] {
                let h = handle(2, alg, sorted);
                let ta = typed(a, IndexType::Int32, IndexType::Int32, vt, 0, true);
                let tb = typed(b, IndexType::Int32, IndexType::Int32, vt, 0, true);
                let f = OutputFormat {
                    offsets: IndexType::Int32,
                    indices: IndexType::Int32,
                    base: 0,
                };
                let got = product(&h, &ta, &tb, f, true).unwrap_or_else(|e| panic!("{what}: {e}"));
                let got = if sorted { got } else { sort_rows(&got) };
                assert_eq!(got, want, "{what}: alg {alg:?} sorted {sorted} {vt:?}");
            }
        }
    }
}

#[test]
fn every_type_and_base_combination() {
    let mut rng = Rng::new(1);
    let shape = Shape {
        nrows: 37,
        ncols: 29,
        max_row: 6,
        empty_rows: 0.2,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        ..Default::default()
    };
    let a = random(&mut rng, shape);
    let b = random(
        &mut rng,
        Shape {
            nrows: 29,
            ncols: 41,
            ..shape
        },
    );
    for vt in VALUE_TYPES {
        let want = expected(&a, &b, vt, true);
        for ot in OFFSET_TYPES {
            for it in INDEX_TYPES {
                for (ab, bb) in [(0, 0), (1, 1), (0, 1), (1, 0)] {
                    for cot in OFFSET_TYPES {
                        for cit in INDEX_TYPES {
                            let cb = (ab + bb + cot as usize) % 2;
                            // Every algorithm (not only the selector's pick on these
                            // small inputs), sorted and unsorted in turn.
                            for (t, alg) in ALGS.into_iter().enumerate() {
                                let sorted = (t + cit as usize + ab).is_multiple_of(2);
                                let h = handle(2, alg, sorted);
                                let ta = typed(&a, ot, it, vt, ab, true);
                                let tb = typed(&b, ot, it, vt, bb, true);
                                let f = OutputFormat {
                                    offsets: cot,
                                    indices: cit,
                                    base: cb,
                                };
                                let got = product(&h, &ta, &tb, f, true).unwrap();
                                let got = if sorted { got } else { sort_rows(&got) };
                                assert_eq!(
                                    got, want,
                                    "{alg:?} sorted {sorted}: {ot:?} {it:?} {vt:?} bases {ab}{bb} -> C {cot:?} {cit:?} base {cb}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn random_products_all_algorithms() {
    let mut rng = Rng::new(7);
    for trial in 0..12 {
        let m = rng.below(120);
        let n = rng.below(90) + 1;
        let k = rng.below(150) + 1;
        let s = Shape {
            nrows: m,
            ncols: n,
            max_row: rng.below(12),
            empty_rows: 0.1,
            duplicates: trial % 2 == 0,
            unsorted: trial % 3 == 0,
            zeros: 0.05,
            ..Default::default()
        };
        let a = random(&mut rng, s);
        let b = random(
            &mut rng,
            Shape {
                nrows: n,
                ncols: k,
                ..s
            },
        );
        check_all_algorithms(&a, &b, &format!("trial {trial} ({m}x{n} * {n}x{k})"));
    }
}

#[test]
fn adversarial_shapes() {
    let mut rng = Rng::new(3);
    let dims: [(usize, usize, usize); 8] = [
        (0, 5, 7),
        (5, 0, 7),
        (5, 7, 0),
        (0, 0, 0),
        (1, 1, 1),
        (1, 300, 1),
        (200, 1, 200),
        (3, 2, 1000),
    ];
    for (m, n, k) in dims {
        let a = random(
            &mut rng,
            Shape {
                nrows: m,
                ncols: n,
                max_row: 5,
                ..Default::default()
            },
        );
        let b = random(
            &mut rng,
            Shape {
                nrows: n,
                ncols: k,
                max_row: 250,
                duplicates: true,
                ..Default::default()
            },
        );
        check_all_algorithms(&a, &b, &format!("{m}x{n} * {n}x{k}"));
    }
    // All rows empty.
    let a = random(
        &mut rng,
        Shape {
            nrows: 10,
            ncols: 10,
            max_row: 3,
            empty_rows: 1.0,
            ..Default::default()
        },
    );
    let b = random(
        &mut rng,
        Shape {
            nrows: 10,
            ncols: 10,
            max_row: 3,
            ..Default::default()
        },
    );
    check_all_algorithms(&a, &b, "empty A");
    check_all_algorithms(&b, &a, "empty B");
}

#[test]
fn duplicates_cancellation_nan_inf() {
    let mut rng = Rng::new(11);
    let s = Shape {
        nrows: 60,
        ncols: 40,
        max_row: 10,
        duplicates: true,
        unsorted: true,
        zeros: 0.2,
        integer_values: true,
        ..Default::default()
    };
    let a = random(&mut rng, s);
    let b = random(
        &mut rng,
        Shape {
            nrows: 40,
            ncols: 50,
            ..s
        },
    );
    check_all_algorithms(&a, &b, "integers with cancellation");
    // Entries that cancel to exactly zero stay in the structure.
    let (_, _, v) = reference::<f64>(&a, &b);
    assert!(v.contains(&0.0), "test data should produce cancellations");
    let a = random(
        &mut rng,
        Shape {
            non_finite: true,
            ..s
        },
    );
    check_all_algorithms(&a, &b, "NaN and Inf");
    // A row with one column repeated many times.
    let a = Csr {
        nrows: 1,
        ncols: 3,
        ptr: vec![0, 5],
        col: vec![2, 2, 0, 2, 0],
        val: vec![1.0, 2.0, 3.0, -3.0, 0.5],
    };
    let b = Csr {
        nrows: 3,
        ncols: 2,
        ptr: vec![0, 2, 2, 4],
        col: vec![1, 1, 0, 1],
        val: vec![1.0, 1.0, 2.0, 4.0],
    };
    check_all_algorithms(&a, &b, "repeated column");
}

#[test]
fn bitwise_identical_across_thread_counts() {
    let mut rng = Rng::new(5);
    let s = Shape {
        nrows: 3000,
        ncols: 2000,
        max_row: 20,
        empty_rows: 0.05,
        duplicates: true,
        unsorted: true,
        ..Default::default()
    };
    let a = random(&mut rng, s);
    let b = random(
        &mut rng,
        Shape {
            nrows: 2000,
            ncols: 2500,
            ..s
        },
    );
    let f = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    };
    for alg in ALGS {
        for sorted in [true, false] {
            let runs: Vec<Out> = [1, 2, 3, 4, 7]
                .iter()
                .map(|&t| {
                    let h = handle(t, alg, sorted);
                    let ta = typed(
                        &a,
                        IndexType::Int32,
                        IndexType::Int32,
                        ValueType::Float64,
                        0,
                        true,
                    );
                    let tb = typed(
                        &b,
                        IndexType::Int32,
                        IndexType::Int32,
                        ValueType::Float64,
                        0,
                        true,
                    );
                    product(&h, &ta, &tb, f, true).unwrap()
                })
                .collect();
            for r in &runs[1..] {
                assert_eq!(r, &runs[0], "alg {alg:?} sorted {sorted}");
            }
        }
    }
}

#[test]
fn structure_only_and_pattern_inputs() {
    let mut rng = Rng::new(9);
    let s = Shape {
        nrows: 50,
        ncols: 50,
        max_row: 8,
        duplicates: true,
        ..Default::default()
    };
    let a = random(&mut rng, s);
    let b = random(&mut rng, s);
    let want = expected(&a, &b, ValueType::Float64, false);
    for alg in ALGS {
        let h = handle(2, alg, true);
        let ta = typed(
            &a,
            IndexType::Int64,
            IndexType::Int64,
            ValueType::Float64,
            1,
            false,
        );
        let tb = typed(
            &b,
            IndexType::Int64,
            IndexType::Int64,
            ValueType::Float64,
            1,
            false,
        );
        let f = OutputFormat {
            offsets: IndexType::Int64,
            indices: IndexType::Int64,
            base: 1,
        };
        assert_eq!(product(&h, &ta, &tb, f, false).unwrap(), want);
        // Asking for values from pattern-only inputs is an error, not garbage.
        let e = product(&h, &ta, &tb, f, true).unwrap_err();
        assert_eq!(e.status, Status::InvalidValue);
    }
}

#[test]
fn reuse_with_new_values() {
    let mut rng = Rng::new(13);
    let s = Shape {
        nrows: 200,
        ncols: 200,
        max_row: 9,
        unsorted: true,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(&mut rng, s);
    let f = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    for alg in ALGS {
        let h = handle(2, alg, true);
        let plan = {
            let ta = typed(
                &a,
                IndexType::Int32,
                IndexType::Int32,
                ValueType::Float64,
                0,
                true,
            );
            let tb = typed(
                &b,
                IndexType::Int32,
                IndexType::Int32,
                ValueType::Float64,
                0,
                true,
            );
            spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap()
        };
        for round in 0..4 {
            for v in a.val.iter_mut() {
                *v = rng.unit() - 0.5;
            }
            if round % 2 == 1 {
                for v in b.val.iter_mut() {
                    *v = rng.unit() * 3.0;
                }
            }
            let ta = typed(
                &a,
                IndexType::Int32,
                IndexType::Int32,
                ValueType::Float64,
                0,
                true,
            );
            let tb = typed(
                &b,
                IndexType::Int32,
                IndexType::Int32,
                ValueType::Float64,
                0,
                true,
            );
            let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).unwrap();
            let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
            spgemm::numeric(
                &h,
                &plan,
                &ta.any(),
                &tb.any(),
                idx.as_mut(),
                Some(val.as_mut()),
            )
            .unwrap();
            let (_, rc, rv) = reference::<f64>(&a, &b);
            let IndexVec::I32(ci) = &idx else {
                unreachable!()
            };
            let ValueVec::F64(cv) = &val else {
                unreachable!()
            };
            assert_eq!(ci.iter().map(|&x| x as usize).collect::<Vec<_>>(), rc);
            assert_eq!(
                cv.iter().map(|x| x.bits()).collect::<Vec<_>>(),
                rv.iter().map(|x| x.bits()).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn numeric_detects_changed_structure() {
    let mut rng = Rng::new(17);
    let s = Shape {
        nrows: 40,
        ncols: 40,
        max_row: 5,
        ..Default::default()
    };
    let a = random(&mut rng, s);
    let b = random(&mut rng, s);
    let h = handle(2, Algorithm::Auto, true);
    let f = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    let ta = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let tb = typed(
        &b,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
    // Same nnz, one column index moved: the digest catches it.
    let mut a2 = a.clone();
    let p = a2.col.iter().position(|_| true).expect("non-empty");
    a2.col[p] = (a2.col[p] + 1) % a2.ncols;
    let ta2 = typed(
        &a2,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).unwrap();
    let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
    let e = spgemm::numeric(
        &h,
        &plan,
        &ta2.any(),
        &tb.any(),
        idx.as_mut(),
        Some(val.as_mut()),
    )
    .unwrap_err();
    assert_eq!(e.status, Status::PlanMismatch, "{e}");
    // Different types than the plan.
    let ta64 = typed(
        &a,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let tb64 = typed(
        &b,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let e = spgemm::numeric(
        &h,
        &plan,
        &ta64.any(),
        &tb64.any(),
        idx.as_mut(),
        Some(val.as_mut()),
    )
    .unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch, "{e}");
    // Different shape (B transposed role): A*A with a plan for A*B of other nnz.
    let e = spgemm::numeric(
        &h,
        &plan,
        &ta.any(),
        &ta.any(),
        idx.as_mut(),
        Some(val.as_mut()),
    );
    if a.col.len() != b.col.len() {
        assert_eq!(e.unwrap_err().status, Status::PlanMismatch);
    }
}

#[test]
fn invalid_inputs_are_reported() {
    let h = handle(2, Algorithm::Auto, true);
    let f = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    let good = Csr {
        nrows: 2,
        ncols: 3,
        ptr: vec![0, 2, 3],
        col: vec![0, 2, 1],
        val: vec![1.0, 2.0, 3.0],
    };
    let b = Csr {
        nrows: 3,
        ncols: 2,
        ptr: vec![0, 1, 2, 3],
        col: vec![0, 1, 1],
        val: vec![1.0, 1.0, 1.0],
    };
    let tb = typed(
        &b,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let run = |a: &Csr| {
        let ta = typed(
            a,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        );
        spgemm::symbolic(&h, &ta.any(), &tb.any(), f).map(|_| ())
    };
    assert!(run(&good).is_ok());
    // Decreasing offsets.
    let bad = Csr {
        ptr: vec![0, 3, 2],
        col: vec![0, 2],
        val: vec![1.0, 2.0],
        ..good.clone()
    };
    let e = run(&Csr {
        ptr: vec![0, 3, 3],
        col: vec![0, 2, 1],
        ..good.clone()
    });
    assert!(e.is_ok());
    let e = run(&bad).unwrap_err();
    assert_eq!(e.status, Status::InvalidStructure, "{e}");
    // Column out of range, named with position and row.
    let e = run(&Csr {
        col: vec![0, 2, 3],
        ..good.clone()
    })
    .unwrap_err();
    assert_eq!(e.status, Status::IndexOutOfRange);
    assert!(
        e.message.contains("position 2") && e.message.contains("row 1"),
        "{e}"
    );
    // Dimension mismatch.
    let e = run(&Csr {
        ncols: 4,
        ..good.clone()
    })
    .unwrap_err();
    assert_eq!(e.status, Status::DimensionMismatch);
    // Type mismatch between A and B.
    let ta = typed(
        &good,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let e = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap_err();
    assert_eq!(e.status, Status::TypeMismatch);
    // Negative column index with 1-based input (0 is below the base).
    let ta = typed(
        &good,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        1,
        true,
    );
    let mut t = ta;
    if let Off::I32(o) = &mut t.off {
        o[0] = 0;
    }
    let e = spgemm::symbolic(&h, &t.any(), &tb.any(), f).unwrap_err();
    assert_eq!(e.status, Status::InvalidStructure, "{e}");
}

#[test]
fn column_index_overflow_of_output_type() {
    // B has more columns than int32 can address: C with int32 indices is refused up front.
    let h = handle(1, Algorithm::Auto, true);
    let a = Csr {
        nrows: 1,
        ncols: 1,
        ptr: vec![0, 1],
        col: vec![0],
        val: vec![1.0],
    };
    let k = (i32::MAX as usize) + 10;
    let b = Csr {
        nrows: 1,
        ncols: k,
        ptr: vec![0, 1],
        col: vec![k - 1],
        val: vec![2.0],
    };
    let ta = typed(
        &a,
        IndexType::Int64,
        IndexType::Int64,
        ValueType::Float64,
        0,
        true,
    );
    let tb = typed(
        &b,
        IndexType::Int64,
        IndexType::Int64,
        ValueType::Float64,
        0,
        true,
    );
    let f32_ = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    };
    assert_eq!(
        spgemm::symbolic(&h, &ta.any(), &tb.any(), f32_)
            .unwrap_err()
            .status,
        Status::IndexOverflow
    );
    // With int64 indices it works (and the auto selector avoids a dense accumulator of k).
    let f64_ = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int64,
        base: 0,
    };
    let got = product(&h, &ta, &tb, f64_, true).unwrap();
    assert_eq!(got.col, vec![k - 1]);
    // int32 input indices cannot describe that many columns.
    let tb32 = typed(
        &b,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let ta32 = typed(
        &a,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    assert_eq!(
        spgemm::symbolic(&h, &ta32.any(), &tb32.any(), f64_)
            .unwrap_err()
            .status,
        Status::IndexOverflow
    );
}

#[test]
fn nnz_overflow_of_int32_offsets_is_caught_before_writing() {
    // C = u * v^T with u of 46341 ones and v of 46341 ones: nnz(C) = 46341^2 > 2^31 - 1.
    let n = 46_341usize;
    let a = Csr {
        nrows: n,
        ncols: 1,
        ptr: (0..=n).collect(),
        col: vec![0; n],
        val: vec![1.0; n],
    };
    let b = Csr {
        nrows: 1,
        ncols: n,
        ptr: vec![0, n],
        col: (0..n).collect(),
        val: vec![1.0; n],
    };
    let h = handle(2, Algorithm::Auto, true);
    let ta = typed(
        &a,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float32,
        0,
        true,
    );
    let tb = typed(
        &b,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float32,
        0,
        true,
    );
    let f = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    let e = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap_err();
    assert_eq!(e.status, Status::IndexOverflow, "{e}");
    let f = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    };
    let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
    assert_eq!(plan.nnz(), n * n);
}

/// Rows of C long enough to spill every hash map into its second level (more than 512
/// distinct columns and more than 512 distinct 64-column words), with k large and small
/// so both the dense and the hash paths of the selector run, and with B compressible
/// (contiguous column runs) and not.
#[test]
fn long_rows_use_second_level() {
    let mut rng = Rng::new(29);
    for (k, run) in [(100_000usize, 1usize), (3000, 1), (70_000, 24)] {
        let n = 60;
        // B: rows of `run`-long contiguous column runs.
        let mut bptr = vec![0];
        let mut bcol = vec![];
        for _ in 0..n {
            let mut cols = vec![];
            for _ in 0..(240 / run) {
                let c0 = rng.below(k - run);
                cols.extend(c0..c0 + run);
            }
            cols.sort_unstable();
            cols.dedup();
            bcol.extend(cols);
            bptr.push(bcol.len());
        }
        let bval = (0..bcol.len()).map(|_| rng.unit() - 0.5).collect();
        let b = Csr {
            nrows: n,
            ncols: k,
            ptr: bptr,
            col: bcol,
            val: bval,
        };
        let a = random(
            &mut rng,
            Shape {
                nrows: 7,
                ncols: n,
                max_row: n,
                duplicates: true,
                unsorted: true,
                ..Default::default()
            },
        );
        check_all_algorithms(&a, &b, &format!("long rows k={k} run={run}"));
    }
}

/// Reused plans: from the third numeric call on, chunks whose columns in the caller's array
/// still have the recorded digest are replayed (values only); a fresh array or one with a
/// changed column is computed afresh. Every call must equal a fresh product bitwise (values
/// with -0.0, NaN, cancellation), for every algorithm, sorted and unsorted, both bases and
/// index widths and thread counts; a structure change after the cache was learned is still
/// reported.
#[test]
fn reuse_replay_matches_fresh_products() {
    let mut rng = Rng::new(31);
    let s = Shape {
        nrows: 150,
        ncols: 120,
        max_row: 11,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        integer_values: true,
        empty_rows: 0.1,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 120,
            ncols: 170,
            ..s
        },
    );
    for alg in ALGS {
        for sorted in [true, false] {
            for (it, base, threads) in
                [(IndexType::Int32, 0usize, 2usize), (IndexType::Int64, 1, 3)]
            {
                let h = handle(threads, alg, sorted);
                let f = OutputFormat {
                    offsets: it,
                    indices: it,
                    base,
                };
                let view = |m: &Csr| typed(m, it, it, ValueType::Float64, base, true);
                let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
                let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
                // The structure-only calls' arrays live to the end: the plan remembers the
                // addresses it filled, and round 3's fresh array must not reuse one of them.
                let mut kept = Vec::new();
                for round in 0..6 {
                    new_values(&mut a, &mut b, &mut rng, round);
                    let (ta, tb) = (view(&a), view(&b));
                    let chunks = plan.cpu_details().unwrap().chunks.len() - 1;
                    match round {
                        // A fresh array: never read, computed in full (and learned again).
                        3 => {
                            idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                        }
                        // One column changed (still in range): its chunk only.
                        5 if plan.nnz() > 0 => {
                            bump_column(&mut idx, plan.nnz() / 2, b.ncols);
                        }
                        _ => {}
                    }
                    let before = {
                        let c = plan.cpu_details().unwrap();
                        (c.replayed_chunks, c.refilled_chunks)
                    };
                    spgemm::numeric(
                        &h,
                        &plan,
                        &ta.any(),
                        &tb.any(),
                        idx.as_mut(),
                        Some(val.as_mut()),
                    )
                    .unwrap();
                    let fresh = product(&h, &ta, &tb, f, true).unwrap();
                    let got = plan_output(&plan, &idx, &val, base);
                    assert_eq!(
                        got, fresh,
                        "{alg:?} sorted={sorted} base={base} round {round}"
                    );
                    let after = {
                        let c = plan.cpu_details().unwrap();
                        (c.replayed_chunks, c.refilled_chunks)
                    };
                    let (replayed, refilled) = (after.0 - before.0, after.1 - before.1);
                    match round {
                        // The first call computes; the second (structure only, below) records.
                        0 => assert_eq!((replayed, refilled), (0, 0)),
                        3 => assert_eq!((replayed, refilled), (0, 0)),
                        5 if plan.nnz() > 0 => assert_eq!((replayed, refilled), (chunks - 1, 1)),
                        _ => assert_eq!((replayed, refilled), (chunks, 0), "round {round}"),
                    }
                    // Structure-only calls on a reused plan write the same columns.
                    let mut idx2 = IndexVec::zeroed(it, plan.nnz()).unwrap();
                    spgemm::numeric(&h, &plan, &ta.any(), &tb.any(), idx2.as_mut(), None).unwrap();
                    let same = match (&idx, &idx2) {
                        (IndexVec::I32(x), IndexVec::I32(y)) => x == y,
                        (IndexVec::I64(x), IndexVec::I64(y)) => x == y,
                        _ => false,
                    };
                    assert!(same);
                    kept.push(idx2);
                }
                assert!(plan.cpu_details().unwrap().replay_ready);
                // Move one entry of B to another column: same nnz, different structure.
                let mut b2 = b.clone();
                let p = b2.ptr[1];
                if p < b2.col.len() {
                    b2.col[p] = (b2.col[p] + 1) % b2.ncols;
                    let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                    let e = spgemm::numeric(
                        &h,
                        &plan,
                        &view(&a).any(),
                        &view(&b2).any(),
                        idx.as_mut(),
                        None,
                    )
                    .unwrap_err();
                    assert_eq!(e.status, Status::PlanMismatch);
                }
            }
        }
    }
}

/// Reused plans whose rows of B are short (under 8 entries per entry of A) with few
/// products per entry of C: the replay's maps in their short-row form
/// (`cpu::slot_map::Form::Short`) where the machine has AVX-512 and the values are real,
/// none otherwise (complex values; `SPGEMM_SPMM_ISA` forcing another path). Every call
/// equals a fresh product bitwise (-0.0, NaN, duplicates), sorted and unsorted, both bases
/// and index widths, f32, f64 and complex; a changed column is computed afresh.
#[test]
fn reuse_through_short_row_maps_matches_fresh_products() {
    let mut rng = Rng::new(91);
    let s = Shape {
        nrows: 1200,
        ncols: 700,
        max_row: 4,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        integer_values: true,
        empty_rows: 0.1,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 700,
            ncols: 5000,
            max_row: 12,
            ..s
        },
    );
    let x86_avx512 = {
        #[cfg(target_arch = "x86_64")]
        {
            ["avx512f", "avx512vl", "avx512dq", "avx512bw", "avx2", "fma"]
                .iter()
                .all(|f| feature(f))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    };
    let forced = std::env::var("SPGEMM_SPMM_ISA").ok();
    let short_form = x86_avx512 && forced.as_deref().is_none_or(|v| v.trim() == "avx512");
    for vt in [ValueType::Float64, ValueType::Float32, ValueType::Complex64] {
        for sorted in [false, true] {
            for (it, base, threads) in
                [(IndexType::Int32, 0usize, 2usize), (IndexType::Int64, 1, 3)]
            {
                let what = format!("{vt:?} sorted={sorted} base={base} threads={threads}");
                let setup = reuse_setup(threads, sorted, 0, (it, base));
                let mapped = short_form && vt != ValueType::Complex64;
                reuse_rounds(
                    setup,
                    (&mut a, &mut b),
                    &mut rng,
                    (it, vt),
                    &what,
                    |chunks, d| {
                        assert_eq!(d.mapped_chunks, if mapped { chunks } else { 0 }, "{what}");
                    },
                );
            }
        }
    }
}

/// Six numeric calls on one plan of A*B (values of type `vt`, C's offsets and indices as
/// `setup` gives them), with new values each round and (round 4) a column of C's array
/// moved: every call equals a fresh product bitwise, and only round 4 computes a chunk
/// afresh; from round 2 on (after the call that builds the replay's slot maps) `maps`
/// checks the plan's details, given its number of chunks.
fn reuse_rounds(
    (h, f): (Handle, OutputFormat),
    (a, b): (&mut Csr, &mut Csr),
    rng: &mut Rng,
    (it, vt): (IndexType, ValueType),
    what: &str,
    maps: impl Fn(usize, &spgemm::CpuDetails),
) {
    let base = f.base;
    let view = |m: &Csr| typed(m, it, it, vt, base, true);
    let plan = spgemm::symbolic(&h, &view(a).any(), &view(b).any(), f).unwrap();
    let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
    let mut val = ValueVec::zeroed(vt, plan.nnz()).unwrap();
    let chunks = plan.cpu_details().unwrap().chunks.len() - 1;
    assert!(chunks >= 2, "{what}");
    for round in 0..6 {
        new_values(a, b, rng, round);
        let (ta, tb) = (view(a), view(b));
        if round == 4 {
            // One column changed (still in range): its chunk is computed afresh.
            bump_column(&mut idx, plan.nnz() / 3, b.ncols);
        }
        let before = plan.cpu_details().unwrap().refilled_chunks;
        spgemm::numeric(
            &h,
            &plan,
            &ta.any(),
            &tb.any(),
            idx.as_mut(),
            Some(val.as_mut()),
        )
        .unwrap();
        let fresh = product(&h, &ta, &tb, f, true).unwrap();
        let got = plan_output(&plan, &idx, &val, base);
        assert_eq!(got, fresh, "{what} round {round}");
        let d = plan.cpu_details().unwrap();
        assert_eq!(
            d.refilled_chunks - before,
            usize::from(round == 4),
            "{what}"
        );
        if round >= 2 {
            maps(chunks, &d);
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn feature(f: &str) -> bool {
    match f {
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
        "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
        "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        _ => std::arch::is_x86_feature_detected!("fma"),
    }
}

/// Reused plans whose rows of B are long enough for the replay's slot maps
/// (`cpu::slot_map`): the first replay builds them, later calls replay through them. Every
/// call equals a fresh product bitwise (-0.0, duplicates, cancellation), sorted and
/// unsorted, both bases and index widths; the chunk holding a row of C longer than a slot
/// addresses keeps the dense replay; a changed column in the caller's array is computed
/// afresh; a handle with a memory limit keeps no maps.
#[test]
fn reuse_through_slot_maps_matches_fresh_products() {
    let mut rng = Rng::new(57);
    let s = Shape {
        nrows: 1500,
        ncols: 800,
        max_row: 3,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        integer_values: true,
        empty_rows: 0.1,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 800,
            ncols: 900,
            max_row: 40,
            ..s
        },
    );
    // A's last row takes every row of B: its row of C is longer than a slot addresses.
    a.col.extend(0..a.ncols);
    a.val.extend((0..a.ncols).map(|t| (t % 5) as f64));
    *a.ptr.last_mut().unwrap() = a.col.len();
    for sorted in [false, true] {
        for (it, base, threads) in [(IndexType::Int32, 0usize, 2usize), (IndexType::Int64, 1, 3)] {
            for limit in [0usize, 1 << 40] {
                let what = format!("sorted={sorted} base={base} threads={threads} limit={limit}");
                let setup = reuse_setup(threads, sorted, limit, (it, base));
                let vt = ValueType::Float64;
                reuse_rounds(
                    setup,
                    (&mut a, &mut b),
                    &mut rng,
                    (it, vt),
                    &what,
                    |chunks, d| {
                        if limit == 0 {
                            // Every chunk but the long row's.
                            assert_eq!(d.mapped_chunks, chunks - 1, "{what}");
                            assert!(d.slot_map_bytes > 0, "{what}");
                        } else {
                            assert_eq!(d.mapped_chunks, 0, "{what}");
                        }
                    },
                );
            }
        }
    }
}

/// A plan with a record of C's columns (compressed count) whose every chunk gets a slot
/// map drops the record when the maps are built (`cpu::slot_map::columns_mapped`): a fresh
/// array is then filled through the maps, bitwise the fresh product (columns in the
/// record's order, unsorted too), with or without values; an array this plan filled whose
/// columns changed is restored from the maps; a memory limit keeps the record and no maps.
#[test]
fn slot_maps_replace_the_record() {
    let mut rng = Rng::new(58);
    // A: 4,000 rows of ~15 entries over B's 8,000 rows (B twice A's entries, so the
    // record's first prediction fits); B: ~18 entries per row within 16 columns
    // (a compressed count, rows of C of at most 16 entries, ~270 products per row: record
    // and maps both within the budget of half A's and B's bytes, which the 16 symbolic
    // chunks draw from in blocks of 16K columns, so C is not small). B's rows average over
    // 16 entries, so no prefetch whatever the L2 size (with rows of ~9, the 64-bit B
    // outgrew the 1 MiB L2 of an AMD Zen 5: prefetch, no maps).
    let s = Shape {
        nrows: 4_000,
        ncols: 8_000,
        max_row: 30,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        integer_values: true,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 8_000,
            ncols: 16,
            max_row: 36,
            ..s
        },
    );
    for sorted in [false, true] {
        for (it, base, threads) in [(IndexType::Int32, 0usize, 2usize), (IndexType::Int64, 1, 2)] {
            for limit in [0usize, 1 << 40] {
                let (h, f) = reuse_setup(threads, sorted, limit, (it, base));
                let what = format!("sorted={sorted} base={base} threads={threads} limit={limit}");
                let view = |m: &Csr| typed(m, it, it, ValueType::Float64, base, true);
                let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
                let d = plan.cpu_details().unwrap();
                let chunks = d.chunks.len() - 1;
                assert!(chunks >= 2 && d.compressed, "{what}");
                assert!(!d.prefetch, "{what}: a prefetching plan keeps no maps");
                // An unsorted record would exceed a tenth of A, B and C (`cpu::record`).
                assert_eq!(d.record_bytes > 0, limit == 0 && sorted, "{what}");
                let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
                let numeric = |idx: &mut IndexVec, val: Option<&mut ValueVec>, a: &Csr, b: &Csr| {
                    let (ta, tb) = (view(a), view(b));
                    spgemm::numeric(
                        &h,
                        &plan,
                        &ta.any(),
                        &tb.any(),
                        idx.as_mut(),
                        val.map(|v| v.as_mut()),
                    )
                    .unwrap();
                };
                for round in 0..8 {
                    new_values(&mut a, &mut b, &mut rng, round);
                    let fresh = product(&h, &view(&a), &view(&b), f, true).unwrap();
                    let before = plan.cpu_details().unwrap().refilled_chunks;
                    match round {
                        // A fresh array, with values and (round 5) without.
                        4 | 5 => {
                            let mut i2 = IndexVec::zeroed(it, plan.nnz()).unwrap();
                            let mut v2 = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
                            numeric(&mut i2, (round == 4).then_some(&mut v2), &a, &b);
                            assert_eq!(columns(&i2, base), fresh.col, "{what} round {round}");
                            if round == 4 {
                                let got = plan_output(&plan, &i2, &v2, base);
                                assert_eq!(got, fresh, "{what} round {round}");
                            }
                            continue;
                        }
                        // One column of the filled array changed: restored.
                        6 => bump_column(&mut idx, plan.nnz() / 3, b.ncols),
                        _ => {}
                    }
                    numeric(&mut idx, Some(&mut val), &a, &b);
                    let got = plan_output(&plan, &idx, &val, base);
                    assert_eq!(got, fresh, "{what} round {round}");
                    let d = plan.cpu_details().unwrap();
                    assert_eq!(
                        d.refilled_chunks - before,
                        usize::from(round == 6),
                        "{what} round {round}"
                    );
                    if round >= 2 && limit == 0 {
                        assert_eq!(d.mapped_chunks, chunks, "{what} round {round}");
                        assert_eq!(d.record_bytes, 0, "{what} round {round}");
                    }
                    if limit != 0 {
                        assert_eq!((d.mapped_chunks, d.record_bytes), (0, 0), "{what}");
                    }
                }
            }
        }
    }
}

/// Sorted output of the dense kernel emits narrow rows (columns spanning fewer than two
/// 64-bit words per entry, rows of at least 16 entries) in order from a bit map and sorts
/// the others (src/cpu/dense.rs). One product holds both kinds, rows at the last word of
/// C, short rows, duplicates and empty rows; every algorithm, both value types, sorted and
/// unsorted, must equal the reference bitwise, also with 1-based 64-bit output and for
/// every thread count.
#[test]
fn sorted_output_narrow_and_wide_rows() {
    let mut rng = Rng::new(37);
    let k = 20_000;
    let nb = 400;
    // B row j: a random subset of a 100-column window that moves with j (three rows in
    // four, the last ones ending at column k - 1), or 30 columns anywhere.
    let mut b = Csr {
        nrows: nb,
        ncols: k,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    for j in 0..nb {
        let cols: Vec<usize> = if j % 4 == 3 {
            (0..30).map(|_| rng.below(k)).collect()
        } else {
            let c0 = if j >= nb - 8 {
                k - 100
            } else {
                j * (k - 100) / nb + rng.below(20)
            };
            (0..20 + rng.below(40))
                .map(|_| c0 + rng.below(100))
                .collect()
        };
        for c in cols {
            b.col.push(c);
            b.val.push(if rng.below(5) == 0 {
                (rng.below(7) as f64) - 3.0
            } else {
                rng.unit() * 2.0 - 1.0
            });
        }
        b.ptr.push(b.col.len());
    }
    // A row i: B rows near some j0 (narrow rows of C), sometimes with a wide B row or a
    // far B row mixed in (wide rows), sometimes a single entry (short rows) or none.
    let m = 600;
    let mut a = Csr {
        nrows: m,
        ncols: nb,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    for i in 0..m {
        let j0 = rng.below(nb - 6);
        let mut cols: Vec<usize> = match i % 6 {
            0 => vec![],
            1 => vec![j0],
            _ => (0..2 + rng.below(6)).map(|_| j0 + rng.below(6)).collect(),
        };
        if i % 6 == 5 {
            cols.push(rng.below(nb));
        }
        for c in cols {
            a.col.push(c);
            a.val.push(rng.unit() * 2.0 - 1.0);
        }
        a.ptr.push(a.col.len());
    }
    // Both kinds of rows occur (the rule of src/cpu/dense.rs, restated).
    let (ptr, col, _) = reference::<f64>(&a, &b);
    let (mut narrow, mut wide) = (0, 0);
    for i in 0..m {
        let r = &col[ptr[i]..ptr[i + 1]];
        if r.len() >= 16 {
            let words = r[r.len() - 1] / 64 - r[0] / 64;
            if words < 2 * r.len() {
                narrow += 1;
            } else {
                wide += 1;
            }
        }
    }
    assert!(narrow > 100 && wide > 20, "narrow {narrow} wide {wide}");
    assert!(col.contains(&(k - 1)));
    check_sorted_everywhere(&a, &b, "narrow and wide rows");
}

/// All algorithms sorted and unsorted, then 1-based 64-bit sorted output of the dense
/// kernel at every thread count: bitwise the reference.
fn check_sorted_everywhere(a: &Csr, b: &Csr, what: &str) {
    check_all_algorithms(a, b, what);
    for vt in VALUE_TYPES {
        let want = expected(a, b, vt, true);
        for threads in [1, 2, 3, 5] {
            let h = handle(threads, Algorithm::Dense, true);
            let ta = typed(a, IndexType::Int64, IndexType::Int64, vt, 1, true);
            let tb = typed(b, IndexType::Int64, IndexType::Int64, vt, 0, true);
            let f = OutputFormat {
                offsets: IndexType::Int64,
                indices: IndexType::Int64,
                base: 1,
            };
            let got = product(&h, &ta, &tb, f, true).unwrap();
            assert_eq!(got, want, "{what}: {vt:?} threads {threads}");
        }
    }
}

/// Sorted output of sparse rows over many columns: the dense kernel walks summary levels
/// of its order bit map (a bit per 64 columns, and one per 4096 when a row's span is over
/// 4096 columns per entry; see src/cpu/dense.rs), rows of up to 32 entries are sorted.
#[test]
fn sorted_output_sparse_rows_over_many_columns() {
    let mut rng = Rng::new(41);
    // Not a multiple of 64: the last word is partial; over 2^18: two words at the top
    // level.
    let k = (1 << 18) + 37;
    let nb = 60;
    let mut b = Csr {
        nrows: nb,
        ncols: k,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    // B row j: 8 random columns below `limit(j)` (one of the widths 300, 5000, 2^17, k),
    // the last rows also column k - 1.
    for j in 0..nb {
        let limit = [300, 5000, 1 << 17, k][j % 4];
        let mut cols: Vec<usize> = (0..8).map(|_| rng.below(limit)).collect();
        if j >= nb - 4 {
            cols.push(k - 1);
        }
        for c in cols {
            b.col.push(c);
            b.val.push(rng.unit() * 2.0 - 1.0);
        }
        b.ptr.push(b.col.len());
    }
    // A row i: 0 to 11 random rows of B (rows of C from 0 to ~90 entries).
    let m = 300;
    let mut a = Csr {
        nrows: m,
        ncols: nb,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    for _ in 0..m {
        for _ in 0..rng.below(12) {
            a.col.push(rng.below(nb));
            a.val.push(rng.unit() * 2.0 - 1.0);
        }
        a.ptr.push(a.col.len());
    }
    // Each way of the rule occurs: rows over 32 entries whose span is under 4096
    // columns per entry (two levels) and over it (three), wide rows of up to 32 entries.
    let (ptr, col, _) = reference::<f64>(&a, &b);
    let (mut two, mut three, mut short) = (0, 0, 0);
    for i in 0..m {
        let r = &col[ptr[i]..ptr[i + 1]];
        if r.len() > 32 && r[r.len() - 1] / 64 - r[0] / 64 >= 2 * r.len() {
            if r[r.len() - 1] / 4096 - r[0] / 4096 < r.len() {
                two += 1;
            } else {
                three += 1;
            }
        } else if (1..=32).contains(&r.len()) {
            short += 1;
        }
    }
    assert!(
        two > 10 && three > 10 && short > 10,
        "{two} {three} {short}"
    );
    assert!(col.contains(&(k - 1)));
    check_sorted_everywhere(&a, &b, "sparse rows over many columns");
}

/// Products where every entry of C sums many multiplications (here about 60) take the
/// dense value kernel (the selector's `numeric_kind`: from 24 per entry on); it must give the
/// reference's bits like every other kernel, with duplicates, zeros, NaN and Inf, in
/// both bases and sorted or not.
#[test]
fn many_products_per_entry_value_kernel() {
    let mut rng = Rng::new(24);
    for trial in 0..4 {
        let s = Shape {
            nrows: 70,
            ncols: 48,
            max_row: 64,
            empty_rows: 0.1,
            duplicates: true,
            unsorted: trial % 2 == 0,
            zeros: 0.05,
            non_finite: trial == 3,
            integer_values: trial == 1,
        };
        let a = random(&mut rng, s);
        let b = random(
            &mut rng,
            Shape {
                nrows: 48,
                ncols: 4 + trial,
                max_row: 16,
                empty_rows: 0.0,
                non_finite: false,
                ..s
            },
        );
        let want_f = |vt| expected(&a, &b, vt, true);
        let flops: usize = (0..a.nrows)
            .flat_map(|i| a.ptr[i]..a.ptr[i + 1])
            .map(|p| b.ptr[a.col[p] + 1] - b.ptr[a.col[p]])
            .sum();
        let nnz_c = reference::<f64>(&a, &b).1.len();
        assert!(
            flops >= 24 * nnz_c,
            "trial {trial}: {flops} products for {nnz_c} entries"
        );
        check_all_algorithms(&a, &b, &format!("value kernel trial {trial}"));
        for vt in VALUE_TYPES {
            let want = want_f(vt);
            for base in [0, 1] {
                for sorted in [true, false] {
                    let h = handle(2, Algorithm::Dense, sorted);
                    let ta = typed(&a, IndexType::Int64, IndexType::Int32, vt, base, true);
                    let tb = typed(&b, IndexType::Int64, IndexType::Int32, vt, base, true);
                    let f = OutputFormat {
                        offsets: IndexType::Int64,
                        indices: IndexType::Int64,
                        base,
                    };
                    let got = product(&h, &ta, &tb, f, true).unwrap();
                    let got = if sorted { got } else { sort_rows(&got) };
                    assert_eq!(
                        got, want,
                        "trial {trial} {vt:?} base {base} sorted {sorted}"
                    );
                }
            }
        }
    }
}

/// A with row groups (runs of 1..=6 rows sharing a column list: duplicates, unsorted,
/// empty lists) and its own values per row.
fn grouped_rows(rng: &mut Rng, groups: usize, ncols: usize) -> Csr {
    let mut ptr = vec![0];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    let mut nrows = 0;
    for _ in 0..groups {
        let len = if rng.below(8) == 0 { 0 } else { rng.below(9) };
        let cols: Vec<usize> = (0..len).map(|_| rng.below(ncols)).collect();
        for _ in 0..1 + rng.below(6) {
            for &c in &cols {
                col.push(c);
                val.push((rng.below(7) as f64) - 3.0);
            }
            ptr.push(col.len());
            nrows += 1;
        }
    }
    Csr {
        nrows,
        ncols,
        ptr,
        col,
        val,
    }
}

/// Row groups of A (see the CPU backend's row groups): the plan finds them, no numeric chunk splits
/// one, and the symbolic counts, the first and second numeric calls and the replayed ones
/// (3rd on) equal the reference bitwise (values with -0.0, NaN and cancellation), for every
/// algorithm, sorted and unsorted, both bases and index widths, 2 and 3 threads; unsorted
/// rows of a group list their columns in the same order.
#[test]
fn row_groups_match_reference_on_every_call() {
    let mut rng = Rng::new(77);
    let mut a = grouped_rows(&mut rng, 160, 90);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 90,
            ncols: 130,
            max_row: 9,
            duplicates: true,
            unsorted: true,
            zeros: 0.1,
            integer_values: true,
            empty_rows: 0.1,
            ..Default::default()
        },
    );
    check_all_algorithms(&a, &b, "row groups");
    for alg in ALGS {
        for sorted in [true, false] {
            for (it, base, threads) in
                [(IndexType::Int32, 0usize, 2usize), (IndexType::Int64, 1, 3)]
            {
                let mut h = handle(threads, alg, sorted);
                // The row groups' kernels: a small product (serial path) has none.
                h.options.small_path = false;
                let f = OutputFormat {
                    offsets: it,
                    indices: it,
                    base,
                };
                let view = |m: &Csr| typed(m, it, it, ValueType::Float64, base, true);
                let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
                let d = plan.cpu_details().unwrap();
                let groups = d.row_groups.as_ref().expect("A has row groups");
                assert!(plan.describe().contains("row groups"));
                let starts: Vec<usize> = groups.iter().map(|g| g.start).collect();
                assert!(d.chunks.len() > 4, "{:?}", d.chunks);
                for &c in &d.chunks[1..d.chunks.len() - 1] {
                    assert!(
                        starts.binary_search(&c).is_ok(),
                        "chunk bound {c} splits a group"
                    );
                }
                for g in groups.iter() {
                    assert!(g.len() <= 4);
                    let n = a.ptr[g.start + 1] - a.ptr[g.start];
                    for i in g.clone() {
                        assert_eq!(a.ptr[i + 1] - a.ptr[i], n);
                    }
                }
                let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
                for round in 0..5 {
                    new_values(&mut a, &mut b, &mut rng, round);
                    let (ta, tb) = (view(&a), view(&b));
                    let before = plan.cpu_details().unwrap().replayed_chunks;
                    spgemm::numeric(
                        &h,
                        &plan,
                        &ta.any(),
                        &tb.any(),
                        idx.as_mut(),
                        Some(val.as_mut()),
                    )
                    .unwrap();
                    let replayed = plan.cpu_details().unwrap().replayed_chunks - before;
                    // Round 1 records the columns; replays from round 2 on.
                    assert_eq!(replayed > 0, round >= 2, "round {round}");
                    let got = plan_output(&plan, &idx, &val, base);
                    if !sorted {
                        for g in groups.iter() {
                            let r0 = &got.col[got.ptr[g.start]..got.ptr[g.start + 1]];
                            for i in g.clone() {
                                assert_eq!(&got.col[got.ptr[i]..got.ptr[i + 1]], r0);
                            }
                        }
                    }
                    let got = if sorted { got } else { sort_rows(&got) };
                    assert_eq!(
                        got,
                        expected(&a, &b, ValueType::Float64, true),
                        "{alg:?} sorted={sorted} base={base} round {round}"
                    );
                }
            }
        }
    }
}

/// B whose rows are runs of consecutive columns of every length 1..=17 (the AVX-512 run
/// kernels of `cpu::runs` take up to 8 lanes), some with a duplicated column inside a
/// run, some reversed or shuffled, some over 64 entries; values with -0.0, NaN and Inf.
fn run_rows(rng: &mut Rng, ncols: usize) -> Csr {
    let mut ptr = vec![0];
    let mut col = Vec::new();
    for len in 1..=17usize {
        for variant in 0..5 {
            let mut r = Vec::new();
            for _ in 0..1 + variant % 3 {
                let c0 = rng.below(ncols - len + 1);
                r.extend(c0..c0 + len);
            }
            match variant {
                1 => r.reverse(),
                2 => {
                    let t = rng.below(r.len());
                    r.insert(t, r[t]);
                }
                3 => {
                    for t in (1..r.len()).rev() {
                        if rng.below(3) == 0 {
                            r.swap(t, rng.below(t + 1));
                        }
                    }
                }
                4 if len > 12 => {
                    let c0 = rng.below(ncols - 70);
                    r.extend(c0..c0 + 70);
                }
                _ => {}
            }
            col.extend(r);
            ptr.push(col.len());
        }
    }
    let val = (0..col.len())
        .map(|t| match t % 23 {
            0 => -0.0,
            5 => f64::NAN,
            11 => f64::INFINITY,
            _ => (rng.below(41) as f64) / 4.0 - 5.0,
        })
        .collect();
    Csr {
        nrows: ptr.len() - 1,
        ncols,
        ptr,
        col,
        val,
    }
}

/// Products whose B has runs of consecutive columns (see `run_rows`): the first, second
/// and replayed calls (3rd on) of every algorithm equal the reference bitwise, for both
/// value types, 32- and 64-bit indices, bases 0 and 1, sorted and unsorted. The run
/// kernels themselves are compared with the scalar loops in `cpu::runs`' unit tests.
#[test]
fn runs_of_consecutive_columns_match_reference() {
    let mut rng = Rng::new(1117);
    let b = run_rows(&mut rng, 150);
    let a = random(
        &mut rng,
        Shape {
            nrows: 120,
            ncols: b.nrows,
            max_row: 10,
            duplicates: true,
            unsorted: true,
            zeros: 0.1,
            empty_rows: 0.05,
            ..Default::default()
        },
    );
    for vt in VALUE_TYPES {
        let want = expected(&a, &b, vt, true);
        for it in INDEX_TYPES {
            for base in [0, 1] {
                for alg in ALGS {
                    for sorted in [true, false] {
                        let h = handle(2, alg, sorted);
                        let f = OutputFormat {
                            offsets: it,
                            indices: it,
                            base,
                        };
                        let ta = typed(&a, it, it, vt, base, true);
                        let tb = typed(&b, it, it, vt, base, true);
                        let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
                        let mut off = OffsetVec::zeroed(it, plan.nrows() + 1).unwrap();
                        spgemm::write_row_offsets(&plan, off.as_mut()).unwrap();
                        let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                        let mut val = ValueVec::zeroed(vt, plan.nnz()).unwrap();
                        for call in 0..4 {
                            spgemm::numeric(
                                &h,
                                &plan,
                                &ta.any(),
                                &tb.any(),
                                idx.as_mut(),
                                Some(val.as_mut()),
                            )
                            .unwrap();
                            let got = collect_out(&off, &idx, Some(&val), base);
                            let got = if sorted { got } else { sort_rows(&got) };
                            let what = format!("{alg:?} {vt:?} {it:?} base {base} call {call}");
                            assert_eq!(got, want, "{what} sorted {sorted}");
                        }
                        assert!(plan.cpu_details().unwrap().replayed_chunks > 0);
                    }
                }
            }
        }
    }
}

/// A with row groups of sizes cycling through 1..=5 (detected as groups of at most 4),
/// rows of up to `max_len` entries over `ncols` columns (duplicates, unsorted), values
/// with -0.0, a NaN now and then, small integers elsewhere; every seventh group of two or
/// more rows is broken by one differing column in one of its later rows.
fn grouped_first_call_a(rng: &mut Rng, groups: usize, ncols: usize, max_len: usize) -> Csr {
    let mut ptr = vec![0];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    let mut nrows = 0;
    for g in 0..groups {
        let size = 1 + g % 5;
        let len = if g % 11 == 3 {
            0
        } else {
            1 + rng.below(max_len)
        };
        let cols: Vec<usize> = (0..len).map(|_| rng.below(ncols)).collect();
        let broken =
            (g % 7 == 1 && size >= 2).then(|| (1 + rng.below(size - 1), rng.below(len.max(1))));
        for r in 0..size {
            for (t, &c) in cols.iter().enumerate() {
                let c = match broken {
                    Some((br, bt)) if br == r && bt == t => (c + 1 + rng.below(ncols - 1)) % ncols,
                    _ => c,
                };
                col.push(c);
                val.push(match rng.below(23) {
                    0 => -0.0,
                    1 if g % 13 == 5 => f64::NAN,
                    _ => (rng.below(7) as f64) - 3.0,
                });
            }
            ptr.push(col.len());
            nrows += 1;
        }
    }
    Csr {
        nrows,
        ncols,
        ptr,
        col,
        val,
    }
}

/// The first numeric call over row groups (`dense::fill_rows` and, with many products per
/// entry, `fill_rows_by_value`, grouped): bitwise the reference (and so every other
/// algorithm) for groups of 2..=5 rows, broken groups, -0.0 and NaN, f32 and f64, both
/// bases and index widths, sorted and unsorted, with and without values; unsorted rows of
/// an intact group list their columns in the same order.
#[test]
fn row_groups_first_numeric_call_bitwise() {
    let mut rng = Rng::new(91);
    // (columns of A = rows of B, columns of B, longest row of A, row of B): the slot
    // kernel, then the value kernel (at least 24 products per entry of C).
    for (case, (inner, ncols, max_len, b_row)) in
        [(60, 150, 9, 8), (48, 5, 40, 16)].into_iter().enumerate()
    {
        let a = grouped_first_call_a(&mut rng, 120, inner, max_len);
        let mut b = random(
            &mut rng,
            Shape {
                nrows: inner,
                ncols,
                max_row: b_row,
                duplicates: true,
                unsorted: true,
                zeros: 0.1,
                integer_values: true,
                empty_rows: if case == 0 { 0.1 } else { 0.0 },
                ..Default::default()
            },
        );
        b.val[3] = -0.0;
        if case == 1 {
            let flops: usize = (0..a.nrows)
                .flat_map(|i| a.ptr[i]..a.ptr[i + 1])
                .map(|p| b.ptr[a.col[p] + 1] - b.ptr[a.col[p]])
                .sum();
            let nnz_c = reference::<f64>(&a, &b).1.len();
            assert!(flops >= 24 * nnz_c, "{flops} products for {nnz_c} entries");
        }
        check_all_algorithms(&a, &b, &format!("grouped first call, case {case}"));
        for vt in VALUE_TYPES {
            for (it, base) in [(IndexType::Int32, 0usize), (IndexType::Int64, 1)] {
                for sorted in [true, false] {
                    for with_values in [true, false] {
                        let h = handle(2, Algorithm::Dense, sorted);
                        let (ta, tb) = (
                            typed(&a, it, it, vt, base, true),
                            typed(&b, it, it, vt, base, true),
                        );
                        let f = OutputFormat {
                            offsets: it,
                            indices: it,
                            base,
                        };
                        let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
                        let d = plan.cpu_details().unwrap();
                        let groups = d.row_groups.as_ref().expect("A has row groups");
                        let got = numeric_out(&h, &plan, &ta, &tb, f, with_values).unwrap();
                        let what = format!(
                            "case {case} {vt:?} {it:?} base {base} sorted {sorted} values {with_values}"
                        );
                        if !sorted {
                            for g in groups.iter() {
                                let intact = g.clone().all(|i| {
                                    a.col[a.ptr[i]..a.ptr[i + 1]]
                                        == a.col[a.ptr[g.start]..a.ptr[g.start + 1]]
                                });
                                if !intact {
                                    continue;
                                }
                                let r0 = &got.col[got.ptr[g.start]..got.ptr[g.start + 1]];
                                for i in g.clone() {
                                    assert_eq!(&got.col[got.ptr[i]..got.ptr[i + 1]], r0, "{what}");
                                }
                            }
                        }
                        let got = if sorted { got } else { sort_rows(&got) };
                        assert_eq!(got, expected(&a, &b, vt, with_values), "{what}");
                    }
                }
            }
        }
    }
}

/// A's structure changes between the symbolic and the first numeric call with
/// validation off (so nothing but the kernels sees it): a later row of a group gets another
/// column. Where B's rows for the old and new column have the same columns (C's structure
/// is the plan's) the values must be A'*B's, bitwise (grouped kernels trusting the groups
/// would use the old column's row of B); where they differ, PlanMismatch or the right
/// product, never a wrong one.
#[test]
fn row_groups_changed_structure_without_validation() {
    let mut rng = Rng::new(93);
    for (case, (inner, ncols, max_len, b_row)) in
        [(60, 150, 9, 8), (48, 5, 40, 16)].into_iter().enumerate()
    {
        let a = grouped_first_call_a(&mut rng, 80, inner, max_len);
        let mut b = random(
            &mut rng,
            Shape {
                nrows: inner,
                ncols,
                max_row: b_row,
                duplicates: true,
                unsorted: true,
                integer_values: true,
                ..Default::default()
            },
        );
        // Rows 2q + 1 of B: row 2q's columns, other values.
        let mut ptr = vec![0];
        let (mut col, mut val) = (Vec::new(), Vec::new());
        for i in 0..inner {
            let src = i & !1;
            for p in b.ptr[src]..b.ptr[src + 1] {
                col.push(b.col[p]);
                val.push(if i == src {
                    b.val[p]
                } else {
                    b.val[p] * 3.0 + 1.0
                });
            }
            ptr.push(col.len());
        }
        b.ptr = ptr;
        b.col = col;
        b.val = val;
        for sorted in [true, false] {
            for alg in [Algorithm::Dense, Algorithm::Auto] {
                let mut h = handle(2, alg, sorted);
                h.options.validate = false;
                // The row groups' kernels: a small product (serial path) has none.
                h.options.small_path = false;
                let f = OutputFormat {
                    offsets: IndexType::Int32,
                    indices: IndexType::Int32,
                    base: 0,
                };
                let view = |m: &Csr| {
                    typed(
                        m,
                        IndexType::Int32,
                        IndexType::Int32,
                        ValueType::Float64,
                        0,
                        true,
                    )
                };
                let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
                let groups: Vec<_> = plan
                    .cpu_details()
                    .unwrap()
                    .row_groups
                    .expect("A has row groups")
                    .into_iter()
                    .filter(|g| g.len() >= 2 && a.ptr[g.start + 1] > a.ptr[g.start])
                    .collect();
                assert!(groups.len() > 10);
                for (t, g) in groups.iter().enumerate().step_by(3) {
                    let row = g.start + 1 + t % (g.len() - 1);
                    let p = a.ptr[row] + t % (a.ptr[row + 1] - a.ptr[row]);
                    for same_structure in [true, false] {
                        let mut a2 = a.clone();
                        a2.col[p] = if same_structure {
                            a.col[p] ^ 1
                        } else {
                            (a.col[p] + 2 + t) % inner
                        };
                        let what = format!(
                            "case {case} sorted {sorted} {alg:?} row {row} same {same_structure}"
                        );
                        let want = expected(&a2, &b, ValueType::Float64, true);
                        match numeric_out(&h, &plan, &view(&a2), &view(&b), f, true) {
                            Ok(got) => {
                                let got = if sorted { got } else { sort_rows(&got) };
                                assert_eq!(got, want, "{what}");
                            }
                            Err(e) => {
                                assert!(!same_structure, "{what}: {e}");
                                assert_eq!(e.status, Status::PlanMismatch, "{what}: {e}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The replay writes C's values with non-temporal stores once they take at least
/// `REPLAY_STREAM_MIN_BYTES` (64 MiB, src/cpu/gustavson.rs): a rectangular product whose
/// f64 values are about 73 MiB (each entry of C gets one or two products, as in the rect
/// benchmark), replayed with new values (-0.0 and, in round 3, a NaN in A) must equal the
/// reference bitwise on every call, unsorted with 32-bit 0-based and sorted with 64-bit
/// 1-based indices. f32 and the kernel's edge cases are covered by the unit tests there.
/// Release only: C has ~10 million entries.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "needs a release build (C has ~10M entries)"
)]
fn streamed_replay_of_a_large_output_matches_reference() {
    let mut rng = Rng::new(1212);
    let s = Shape {
        nrows: 100_000,
        ncols: 200,
        max_row: 8,
        duplicates: true,
        unsorted: true,
        integer_values: true,
        empty_rows: 0.02,
        ..Default::default()
    };
    let mut a = random(&mut rng, s);
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 200,
            ncols: 30_000,
            max_row: 50,
            ..s
        },
    );
    for (it, base, sorted) in [
        (IndexType::Int32, 0usize, false),
        (IndexType::Int64, 1, true),
    ] {
        let h = handle(2, Algorithm::Auto, sorted);
        let f = OutputFormat {
            offsets: it,
            indices: it,
            base,
        };
        let view = |m: &Csr| typed(m, it, it, ValueType::Float64, base, true);
        let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
        assert!(
            plan.nnz() * 8 >= 64 << 20,
            "C too small to stream: {}",
            plan.nnz()
        );
        let mut off = OffsetVec::zeroed(it, plan.nrows() + 1).unwrap();
        spgemm::write_row_offsets(&plan, off.as_mut()).unwrap();
        let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
        let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
        for round in 0..4 {
            new_values(&mut a, &mut b, &mut rng, round);
            let (ta, tb) = (view(&a), view(&b));
            spgemm::numeric(
                &h,
                &plan,
                &ta.any(),
                &tb.any(),
                idx.as_mut(),
                Some(val.as_mut()),
            )
            .unwrap();
            let got = collect_out(&off, &idx, Some(&val), base);
            let got = if sorted { got } else { sort_rows(&got) };
            let want = expected(&a, &b, ValueType::Float64, true);
            assert!(
                got == want,
                "{it:?} base {base} sorted {sorted} round {round}"
            );
        }
        let c = plan.cpu_details().unwrap();
        assert!(c.replayed_chunks > 0 && c.refilled_chunks == 0);
    }
}

/// Library-owned results (`spgemm::multiply`, behind `spgemm_multiply`) take the arrays of
/// destroyed ones from the handle's cache (`spgemm::output_cache`). The recycled arrays
/// still hold the previous product's numbers, so every product must come out exactly as
/// the reference also when it lands in them: a smaller C after a larger one, f32 values in
/// arrays that held f32 values of another product, a pattern-only C after a valued one.
/// With the cache off nothing is kept or reused.
#[test]
fn owned_results_in_recycled_arrays_match_the_reference() {
    let mut rng = Rng::new(0x0c13);
    let shape = Shape {
        nrows: 40_000,
        ncols: 30_000,
        max_row: 8,
        duplicates: true,
        zeros: 0.1,
        ..Default::default()
    };
    let a = random(&mut rng, shape);
    let b = random(
        &mut rng,
        Shape {
            nrows: 30_000,
            ncols: 50_000,
            ..shape
        },
    );
    // About 3/4 of the first product: fits its arrays (at most twice the size needed).
    let a2 = random(
        &mut rng,
        Shape {
            nrows: 30_000,
            ..shape
        },
    );
    let mut h = Handle::new(2).unwrap();
    h.options.sorted_output = false;
    let format = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 1,
    };
    let owned = |h: &Handle, x: &Csr, y: &Csr, vt: ValueType, with_values: bool| {
        let tx = typed(x, IndexType::Int32, IndexType::Int32, vt, 0, with_values);
        let ty = typed(y, IndexType::Int32, IndexType::Int32, vt, 0, with_values);
        let c = spgemm::multiply(h, &tx.any(), &ty.any(), format).unwrap();
        let got = collect_out(&c.offsets, &c.indices, c.values.as_ref(), format.base);
        assert_eq!(
            sort_rows(&got),
            expected(x, y, vt, with_values),
            "{vt:?} values {with_values}"
        );
        c
    };
    for vt in [ValueType::Float64, ValueType::Float32] {
        h.outputs.set_limit(1 << 30);
        let s0 = h.outputs.stats();
        drop(owned(&h, &a, &b, vt, true));
        let s1 = h.outputs.stats();
        assert!(s1.held > 0, "{s1:?}");
        // Column indices and values both come from the cache.
        drop(owned(&h, &a2, &b, vt, true));
        assert_eq!(h.outputs.stats().hits, s1.hits + 2);
        drop(owned(&h, &a, &b, vt, false));
        assert_eq!(h.outputs.stats().hits, s1.hits + 3);
        assert!(h.outputs.stats().hits > s0.hits);
        // Off: what is kept is freed, nothing more is kept or taken.
        h.outputs.set_limit(0);
        let s2 = h.outputs.stats();
        assert_eq!(s2.held, 0);
        drop(owned(&h, &a, &b, vt, true));
        let s3 = h.outputs.stats();
        assert_eq!((s3.held, s3.hits), (0, s2.hits));
    }
}

/// A product whose plan prefetches B's rows (A's columns scattered, B larger than the L2
/// cache; see `spgemm::cpu::prefetch`): every algorithm against the reference, and the
/// dense kernels' first call, second call and replay (third call) on the same plan.
#[test]
fn prefetching_products_match_reference() {
    let mut rng = Rng::new(41);
    let s = Shape {
        nrows: 3000,
        ncols: 60_000,
        max_row: 16,
        empty_rows: 0.05,
        duplicates: true,
        unsorted: true,
        zeros: 0.05,
        ..Default::default()
    };
    let a = random(&mut rng, s);
    let b = random(
        &mut rng,
        Shape {
            nrows: 60_000,
            ncols: 50_000,
            ..s
        },
    );
    let b_bytes = b.col.len() * 12 + b.nrows * 4;
    let vt = ValueType::Float64;
    let want = expected(&a, &b, vt, true);
    for (it, base) in [(IndexType::Int32, 0usize), (IndexType::Int64, 1)] {
        let f = OutputFormat {
            offsets: it,
            indices: it,
            base,
        };
        let (ta, tb) = (
            typed(&a, it, it, vt, base, true),
            typed(&b, it, it, vt, base, true),
        );
        for alg in ALGS {
            for sorted in [true, false] {
                let h = handle(2, alg, sorted);
                let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
                if b_bytes > spgemm::cache_sizes().l2 {
                    assert!(
                        plan.cpu_details().unwrap().prefetch,
                        "{alg:?}: scattered A, B of {b_bytes} bytes"
                    );
                    assert!(plan.describe().contains("prefetch"));
                }
                let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
                let mut val = ValueVec::zeroed(vt, plan.nnz()).unwrap();
                for call in 0..3 {
                    spgemm::numeric(
                        &h,
                        &plan,
                        &ta.any(),
                        &tb.any(),
                        idx.as_mut(),
                        Some(val.as_mut()),
                    )
                    .unwrap();
                    let got = plan_output(&plan, &idx, &val, base);
                    let got = if sorted { got } else { sort_rows(&got) };
                    assert_eq!(got, want, "{alg:?} sorted {sorted} {it:?} call {call}");
                }
            }
        }
    }
}

/// Plans whose symbolic phase keeps C's columns (`cpu::record`: rows of 64 products or more,
/// validation on, no memory limit, and for unsorted output a compressed count): the first
/// numeric call fills C from the record, and every call, on the same or a fresh array, with
/// or without values, equals the reference and writes the same columns in the same order;
/// unsorted over a plain B, and with validation off, there is no record.
#[test]
fn recorded_columns_fill_the_first_numeric_call() {
    let mut rng = Rng::new(2525);
    // Above the small-product path, C within the record's budget (half the bytes of A and
    // B). Plain count: ~280 products per row (a sorted record wants 224), B's rows spread
    // over 11 words of 64 columns, B has many rows A touches few of. Compressed count:
    // ~240 products per row, B's rows
    // sorted on one word (about 12 entries per pair), most of them empty, so A's entries
    // that meet them add to the budget and not to C; unsorted, the record must also stay
    // within a tenth of A, B and C (`cpu::record::unsorted_budget_bytes`), which with
    // 64-bit indices and f64 values it does.
    let s = Shape {
        nrows: 1500,
        ncols: 60_000,
        max_row: 56,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        integer_values: true,
        empty_rows: 0.05,
        ..Default::default()
    };
    let plain = (
        s,
        Shape {
            nrows: 60_000,
            ncols: 700,
            max_row: 20,
            ..s
        },
    );
    let words = (
        Shape {
            ncols: 2_000,
            max_row: 200,
            ..s
        },
        Shape {
            nrows: 2_000,
            ncols: 64,
            max_row: 24,
            empty_rows: 0.8,
            unsorted: false,
            ..s
        },
    );
    for (it, base, sorted, threads, (sa, sb)) in [
        (IndexType::Int32, 0usize, true, 2usize, plain),
        (IndexType::Int64, 1, false, 3, plain),
        (IndexType::Int32, 1, false, 1, words),
        (IndexType::Int64, 0, false, 2, words),
    ] {
        let mut a = random(&mut rng, sa);
        let mut b = random(&mut rng, sb);
        let f = OutputFormat {
            offsets: it,
            indices: it,
            base,
        };
        for vt in VALUE_TYPES {
            let mut h = handle(threads, Algorithm::Auto, sorted);
            // The record is the parallel path's (one worker would take these serially).
            h.options.small_path = false;
            let view = |m: &Csr| typed(m, it, it, vt, base, true);
            let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
            let what = format!("{it:?} base {base} sorted {sorted} {vt:?} B {}", sb.ncols);
            let d = plan.cpu_details().unwrap();
            // B's full words make a compressed count (the unsorted record's).
            assert_eq!(d.compressed, sb.ncols == 64, "{what}");
            // The unsorted record's predicted 4 bytes per 4 multiplications within
            // 4 (|A| + |B|) / (40 - entry) bytes.
            let entry = it.size() + vt.size();
            let ab = (a.col.len() + b.col.len()) * entry;
            let flops: usize = (a.col.iter()).map(|&j| b.ptr[j + 1] - b.ptr[j]).sum();
            let fits = flops * (40 - entry) <= 4 * ab;
            assert_eq!(
                d.record_bytes > 0,
                sorted || (d.compressed && fits),
                "{what}"
            );
            if d.compressed && it == IndexType::Int64 && vt == ValueType::Float64 {
                assert!(
                    d.record_bytes > 0,
                    "{what}: an unsorted record stays tested"
                );
            }
            let mut first: Option<Vec<usize>> = None;
            for round in 0..3 {
                if round > 0 {
                    new_values(&mut a, &mut b, &mut rng, round);
                }
                let (ta, tb) = (view(&a), view(&b));
                // A fresh array every call: each one is filled from the record.
                let got = numeric_out(&h, &plan, &ta, &tb, f, true).unwrap();
                let pattern = numeric_out(&h, &plan, &ta, &tb, f, false).unwrap();
                assert_eq!((&pattern.ptr, &pattern.col), (&got.ptr, &got.col), "{what}");
                match &first {
                    None => first = Some(got.col.clone()),
                    Some(c) => assert_eq!(c, &got.col, "{what}: same order every call"),
                }
                let want = expected(&a, &b, vt, true);
                let cmp = if sorted { got } else { sort_rows(&got) };
                assert_eq!(cmp, want, "{what} round {round}");
            }
            // An array this plan filled, its columns then overwritten (what a fresh array
            // at a freed one's address looks like): refilled in the record's order.
            let (ta, tb) = (view(&a), view(&b));
            let mut idx = IndexVec::zeroed(it, plan.nnz()).unwrap();
            let mut val = ValueVec::zeroed(vt, plan.nnz()).unwrap();
            for scramble in [false, true] {
                if scramble {
                    match &mut idx {
                        IndexVec::I32(v) => v.iter_mut().for_each(|c| *c = base as i32),
                        IndexVec::I64(v) => v.iter_mut().for_each(|c| *c = base as i64),
                    }
                }
                spgemm::numeric(
                    &h,
                    &plan,
                    &ta.any(),
                    &tb.any(),
                    idx.as_mut(),
                    Some(val.as_mut()),
                )
                .unwrap();
                let cols = columns(&idx, base);
                assert_eq!(first.as_ref(), Some(&cols), "{what}: scrambled {scramble}");
            }
            let mut h = handle(threads, Algorithm::Auto, sorted);
            h.options.validate = false;
            h.options.small_path = false;
            let plan = spgemm::symbolic(&h, &view(&a).any(), &view(&b).any(), f).unwrap();
            assert!(!plan.small(), "{what}");
            assert_eq!(plan.cpu_details().unwrap().record_bytes, 0, "{what}");
        }
    }
}
