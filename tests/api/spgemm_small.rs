//! Small products (`Options::small_path`: serial on the calling thread below the CPU
//! backend's work threshold) against the reference product on random and adversarial
//! tiny inputs in every type, base, op and option; bitwise equal to the parallel path
//! (columns of unsorted rows included) for every thread count and algorithm; reused plans
//! (the serial replay); which products take the small path.

use crate::common::*;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle, IndexSliceMut, Op, OutputFormat, Plan, Result};

fn handle(threads: usize, small: bool) -> Handle {
    let mut h = Handle::new(threads).unwrap();
    h.options.small_path = small;
    h
}

const FORMAT: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

/// op(A)*op(B) through symbolic and numeric (as the ABI does): C and the plan.
fn run(
    h: &Handle,
    (op_a, a): (Op, &Typed),
    (op_b, b): (Op, &Typed),
    format: OutputFormat,
    with_values: bool,
) -> Result<(Out, Plan)> {
    let plan = spgemm::symbolic_op(h, op_a, &a.any(), op_b, &b.any(), format)?;
    let out = numeric_out(h, &plan, a, b, format, with_values)?;
    Ok((out, plan))
}

/// Tiny inputs A (m x n) and B (n x k) of every awkward kind: no rows, no columns, an
/// empty inner dimension, empty rows, duplicates, unsorted rows, explicit zeros, NaN and
/// Inf, a dense block, one long row, an outer product, rectangular shapes.
fn tiny_inputs(rng: &mut Rng) -> Vec<(&'static str, Csr, Csr)> {
    let empty = |nrows, ncols| Csr {
        nrows,
        ncols,
        ptr: vec![0; nrows + 1],
        col: vec![],
        val: vec![],
    };
    let dense = |nrows: usize, ncols: usize, rng: &mut Rng| Csr {
        nrows,
        ncols,
        ptr: (0..=nrows).map(|i| i * ncols).collect(),
        col: (0..nrows * ncols).map(|p| p % ncols).collect(),
        val: (0..nrows * ncols).map(|_| rng.unit() * 2.0 - 1.0).collect(),
    };
    let awkward = Shape {
        max_row: 5,
        empty_rows: 0.3,
        duplicates: true,
        unsorted: true,
        zeros: 0.15,
        non_finite: true,
        ..Default::default()
    };
    let shaped = |rng: &mut Rng, nrows, ncols, s: Shape| random(rng, Shape { nrows, ncols, ..s });
    let mut v = vec![
        ("0x0 * 0x0", empty(0, 0), empty(0, 0)),
        ("0x5 * 5x3", empty(0, 5), shaped(rng, 5, 3, awkward)),
        ("4x0 * 0x6", empty(4, 0), empty(0, 6)),
        ("3x4 * 4x0", shaped(rng, 3, 4, awkward), empty(4, 0)),
        ("empty rows", empty(5, 5), shaped(rng, 5, 5, awkward)),
        ("dense 24", dense(24, 24, rng), dense(24, 24, rng)),
        ("long row", dense(1, 40, rng), shaped(rng, 40, 30, awkward)),
        ("outer product", dense(20, 1, rng), dense(1, 20, rng)),
    ];
    let mut one = empty(1, 1);
    one.ptr = vec![0, 1];
    one.col = vec![0];
    one.val = vec![f64::NAN];
    v.push(("1x1 NaN", one.clone(), one));
    for (name, m, n, k) in [("10x10", 10, 10, 10), ("rect 13x7x19", 13, 7, 19)] {
        let a = shaped(rng, m, n, awkward);
        let b = shaped(rng, n, k, awkward);
        v.push((name, a, b));
    }
    let exact = Shape {
        integer_values: true,
        zeros: 0.1,
        ..awkward
    };
    let a = shaped(
        rng,
        30,
        25,
        Shape {
            max_row: 8,
            ..exact
        },
    );
    let b = shaped(
        rng,
        25,
        35,
        Shape {
            max_row: 8,
            ..exact
        },
    );
    v.push(("cancelling 30x25x35", a, b));
    v
}

/// The expected C, as the library writes it for `sorted` (unsorted rows are compared
/// after sorting them).
fn check(got: &Out, want: &Out, sorted: bool, what: &str) {
    let got = if sorted { got } else { &sort_rows(got) };
    assert_eq!(got, want, "{what}");
}

#[test]
fn small_products_match_the_reference() {
    let mut rng = Rng::new(25);
    let mut h = handle(2, true);
    for (name, a, b) in tiny_inputs(&mut rng) {
        for vt in ALL_VALUE_TYPES {
            let want = expected(&a, &b, vt, true);
            let want_pattern = expected(&a, &b, vt, false);
            for (t, ot) in OFFSET_TYPES.into_iter().enumerate() {
                for it in INDEX_TYPES {
                    for (ab, bb, cb) in [(0, 0, 0), (1, 1, 1), (0, 1, 1), (1, 0, 0)] {
                        for (sorted, validate) in [(true, true), (false, true), (true, false)] {
                            h.options.sorted_output = sorted;
                            h.options.validate = validate;
                            let ta = typed(&a, ot, it, vt, ab, true);
                            let tb = typed(&b, ot, it, vt, bb, true);
                            let f = OutputFormat {
                                offsets: OFFSET_TYPES[(t + cb) % 3],
                                indices: it,
                                base: cb,
                            };
                            let what = format!(
                                "{name}: {vt:?} {ot:?} {it:?} bases {ab}{bb}{cb} sorted {sorted} \
                                 validate {validate}"
                            );
                            let (got, plan) = run(
                                &h,
                                (Op::NonTranspose, &ta),
                                (Op::NonTranspose, &tb),
                                f,
                                true,
                            )
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                            assert!(plan.small(), "{what}: not a small product");
                            assert_eq!(plan.flops() as usize, flops(&a, &b), "{what}");
                            check(&got, &want, sorted, &what);
                            // Structure only, on the same plan.
                            let got = numeric_out(&h, &plan, &ta, &tb, f, false).unwrap();
                            check(&got, &want_pattern, sorted, &format!("{what} (structure)"));
                        }
                    }
                }
            }
        }
    }
}

/// Multiplications of A*B.
fn flops(a: &Csr, b: &Csr) -> usize {
    a.col.iter().map(|&j| b.ptr[j + 1] - b.ptr[j]).sum()
}

/// A random m x n matrix for op = N, or n x m for a transposing op.
fn operand(rng: &mut Rng, op: Op, m: usize, n: usize, s: Shape) -> Csr {
    let (nrows, ncols) = if op == Op::NonTranspose {
        (m, n)
    } else {
        (n, m)
    };
    random(rng, Shape { nrows, ncols, ..s })
}

#[test]
fn small_products_with_transposed_operands() {
    let mut rng = Rng::new(26);
    let mut h = handle(2, true);
    let s = Shape {
        max_row: 5,
        empty_rows: 0.2,
        duplicates: true,
        unsorted: true,
        zeros: 0.1,
        non_finite: true,
        ..Default::default()
    };
    for (m, n, k) in [(9, 14, 11), (1, 30, 1), (25, 3, 17)] {
        for op_a in OPS {
            for op_b in OPS {
                let a = operand(&mut rng, op_a, m, n, s);
                let b = operand(&mut rng, op_b, n, k, s);
                for vt in ALL_VALUE_TYPES {
                    let want = expected_op(&a, op_a, &b, op_b, vt, true);
                    for (sorted, validate) in [(true, true), (false, false)] {
                        h.options.sorted_output = sorted;
                        h.options.validate = validate;
                        let ta = typed(&a, IndexType::Int64, IndexType::Int32, vt, 1, true);
                        let tb = typed(&b, IndexType::Int64, IndexType::Int32, vt, 0, true);
                        let what = format!("{m}x{n}x{k} {op_a:?} {op_b:?} {vt:?} sorted {sorted}");
                        let (got, plan) = run(&h, (op_a, &ta), (op_b, &tb), FORMAT, true)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert!(plan.small(), "{what}: not a small product");
                        check(&got, &want, sorted, &what);
                    }
                }
            }
        }
    }
}

/// The small path and the parallel path, with every algorithm and 1 to 3 threads, write
/// the same bits: each entry is the same sum in the same order, and unsorted rows list
/// their columns in the same (first-touch) order.
#[test]
fn small_and_parallel_paths_are_bitwise_equal() {
    let mut rng = Rng::new(27);
    let mut handles: Vec<Handle> = [1, 2, 3].map(|t| handle(t, true)).into();
    let mut inputs = tiny_inputs(&mut rng);
    // Random values (no exact sums): any change of the order of the additions shows.
    let s = Shape {
        max_row: 9,
        empty_rows: 0.1,
        duplicates: true,
        unsorted: true,
        ..Default::default()
    };
    for (m, n, k) in [(60, 40, 70), (200, 150, 120), (7, 300, 9)] {
        let a = random(
            &mut rng,
            Shape {
                nrows: m,
                ncols: n,
                ..s
            },
        );
        let b = random(
            &mut rng,
            Shape {
                nrows: n,
                ncols: k,
                ..s
            },
        );
        inputs.push(("random", a, b));
    }
    for (name, a, b) in &inputs {
        for vt in [ValueType::Float64, ValueType::Complex32] {
            let ta = typed(a, IndexType::Int32, IndexType::Int32, vt, 0, true);
            let tb = typed(b, IndexType::Int32, IndexType::Int32, vt, 0, true);
            for sorted in [true, false] {
                let mut first: Option<Out> = None;
                for h in handles.iter_mut() {
                    for small in [true, false] {
                        let algs: &[Algorithm] = if small {
                            &[Algorithm::Auto]
                        } else {
                            Algorithm::ALL
                        };
                        for &alg in algs {
                            h.options.small_path = small;
                            h.options.algorithm = alg;
                            h.options.sorted_output = sorted;
                            let what = format!(
                                "{name} {vt:?} sorted {sorted} threads {} small {small} {alg:?}",
                                h.threads()
                            );
                            let (got, plan) = run(
                                h,
                                (Op::NonTranspose, &ta),
                                (Op::NonTranspose, &tb),
                                FORMAT,
                                true,
                            )
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                            assert_eq!(plan.small(), small, "{what}");
                            match &first {
                                None => first = Some(got),
                                Some(f) => {
                                    assert_eq!(&got, f, "{what}: differs from the first run")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A reused small plan: every numeric call with new values matches the reference; from
/// the third call with the same arrays (validation on) the serial replay recomputes only
/// the values, a changed column array is computed afresh, and without validation every
/// call is computed afresh.
#[test]
fn reused_small_plans_replay_new_values() {
    let mut rng = Rng::new(28);
    let s = Shape {
        max_row: 6,
        empty_rows: 0.2,
        duplicates: true,
        unsorted: true,
        integer_values: true,
        ..Default::default()
    };
    let mut a = random(
        &mut rng,
        Shape {
            nrows: 40,
            ncols: 30,
            ..s
        },
    );
    let mut b = random(
        &mut rng,
        Shape {
            nrows: 30,
            ncols: 50,
            ..s
        },
    );
    for (vt, sorted, validate) in [
        (ValueType::Float64, true, true),
        (ValueType::Complex64, false, true),
        (ValueType::Float32, true, false),
    ] {
        let mut h = handle(2, true);
        h.options.sorted_output = sorted;
        h.options.validate = validate;
        let ta = typed(&a, IndexType::Int64, IndexType::Int64, vt, 1, true);
        let tb = typed(&b, IndexType::Int64, IndexType::Int64, vt, 1, true);
        let plan = spgemm::symbolic(&h, &ta.any(), &tb.any(), FORMAT).unwrap();
        assert!(plan.small());
        let mut cols = vec![0i32; plan.nnz()];
        let mut vals = spgemm::ValueVec::zeroed(vt, plan.nnz()).unwrap();
        let mut off = spgemm::OffsetVec::zeroed(IndexType::Int32, plan.nrows() + 1).unwrap();
        spgemm::write_row_offsets(&plan, off.as_mut()).unwrap();
        for round in 0..6 {
            for v in a.val.iter_mut() {
                *v = (rng.below(7) as f64) - 3.0;
            }
            for v in b.val.iter_mut() {
                *v = if round == 3 {
                    f64::NAN
                } else {
                    (rng.below(5) as f64) - 2.0
                };
            }
            if round == 4 {
                // The caller changed C's columns: the replay must notice.
                cols.reverse();
            }
            let ta = typed(&a, IndexType::Int64, IndexType::Int64, vt, 1, true);
            let tb = typed(&b, IndexType::Int64, IndexType::Int64, vt, 1, true);
            let before = plan.cpu_details().unwrap();
            spgemm::numeric(
                &h,
                &plan,
                &ta.any(),
                &tb.any(),
                IndexSliceMut::I32(&mut cols),
                Some(vals.as_mut()),
            )
            .unwrap();
            let after = plan.cpu_details().unwrap();
            let what = format!("{vt:?} sorted {sorted} validate {validate} round {round}");
            let got = collect_out(&off, &spgemm::IndexVec::I32(cols.clone()), Some(&vals), 0);
            check(&got, &expected(&a, &b, vt, true), sorted, &what);
            let replayed = after.replayed_chunks - before.replayed_chunks;
            let refilled = after.refilled_chunks - before.refilled_chunks;
            match (validate, round) {
                (true, 0 | 1) => assert_eq!((replayed, refilled), (0, 0), "{what}"),
                (true, 4) => assert_eq!((replayed, refilled), (0, 1), "{what}"),
                (true, _) => assert_eq!((replayed, refilled), (1, 0), "{what}"),
                (false, _) => assert!(!after.replay_ready && replayed == 0, "{what}"),
            }
        }
    }
}

/// Which products run as small ones: below the work threshold, under `Auto`, with the
/// option on; not with an explicit algorithm, not above the threshold, not with it off.
#[test]
fn the_small_path_is_taken_below_the_threshold_only() {
    let mut rng = Rng::new(29);
    let s = Shape {
        max_row: 8,
        ..Default::default()
    };
    let a = random(
        &mut rng,
        Shape {
            nrows: 50,
            ncols: 50,
            ..s
        },
    );
    let t = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let mut h = handle(2, true);
    let small = |h: &Handle, a: &Typed, b: &Typed| {
        spgemm::symbolic(h, &a.any(), &b.any(), FORMAT)
            .unwrap()
            .small()
    };
    assert!(small(&h, &t, &t));
    for alg in [
        Algorithm::Dense,
        Algorithm::LinearProbe,
        Algorithm::LinkedList,
    ] {
        h.options.algorithm = alg;
        assert!(!small(&h, &t, &t), "{alg:?}");
    }
    h.options.algorithm = Algorithm::Auto;
    h.options.small_path = false;
    assert!(!small(&h, &t, &t));
    h.options.small_path = true;
    // A dense 200 x 200 times itself: 8 million multiplications.
    let d = Csr {
        nrows: 200,
        ncols: 200,
        ptr: (0..=200).map(|i| i * 200).collect(),
        col: (0..200 * 200).map(|p| p % 200).collect(),
        val: vec![1.0; 200 * 200],
    };
    let td = typed(
        &d,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    assert!(!small(&h, &td, &td));
    // Many rows and nothing in them: the row loops are the work.
    let e = Csr {
        nrows: 100_000,
        ncols: 100_000,
        ptr: vec![0; 100_001],
        col: vec![],
        val: vec![],
    };
    let te = typed(
        &e,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    assert!(!small(&h, &te, &te));
}

/// A handle with one worker takes the serial path up to a larger work (the parallel path
/// would only add the worker's wake and wait), except where A's row groups pay; the two
/// paths give bitwise the same C there too.
#[test]
fn one_worker_handles_take_the_small_path_further() {
    let mut rng = Rng::new(31);
    let f64_typed = |c: &Csr| {
        typed(
            c,
            IndexType::Int32,
            IndexType::Int32,
            ValueType::Float64,
            0,
            true,
        )
    };
    // 20,000 rows of 0-8 entries: about 400,000 multiplications.
    let a = random(
        &mut rng,
        Shape {
            nrows: 20_000,
            ncols: 20_000,
            max_row: 8,
            ..Default::default()
        },
    );
    let ta = f64_typed(&a);
    let w = flops(&a, &a) + 2 * (a.nrows + a.col.len());
    assert!(w > 1 << 15 && w < 1 << 20, "work {w}");
    let small = |h: &Handle, a: &Typed| {
        spgemm::symbolic(h, &a.any(), &a.any(), FORMAT)
            .unwrap()
            .small()
    };
    assert!(small(&handle(1, true), &ta));
    assert!(!small(&handle(2, true), &ta));
    // The same rows, each repeated three times (row groups of 3, as FEM operators with
    // three unknowns per node have): left to the parallel path's grouped kernels.
    let mut g = Csr {
        nrows: 3 * 4000,
        ncols: 3 * 4000,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    for i in 0..4000 {
        let r = a.ptr[i]..a.ptr[i + 1];
        for _ in 0..3 {
            g.col.extend(a.col[r.clone()].iter().map(|&c| c % g.ncols));
            g.val.extend_from_slice(&a.val[r.clone()]);
            g.ptr.push(g.col.len());
        }
    }
    let tg = f64_typed(&g);
    let wg = flops(&g, &g) + 2 * (g.nrows + g.col.len());
    assert!(wg > 1 << 15 && wg < 1 << 20, "work {wg}");
    assert!(!small(&handle(1, true), &tg));
    // Bitwise equal to the parallel path on one worker, sorted and unsorted.
    for sorted in [false, true] {
        let (on, off) = (handle(1, true), handle(1, false));
        let mut outs = Vec::new();
        for h in [on, off] {
            let mut h = h;
            h.options.sorted_output = sorted;
            let (out, plan) = run(
                &h,
                (Op::NonTranspose, &ta),
                (Op::NonTranspose, &ta),
                FORMAT,
                true,
            )
            .unwrap();
            outs.push((out, plan.small()));
        }
        assert!(outs[0].1 && !outs[1].1);
        assert_eq!(outs[0].0, outs[1].0, "sorted {sorted}");
    }
}
