//! Plans made with validation off keep no structure digests. A numeric call on such a plan
//! after a legal change of A's or B's structure (issue 27: a fuzz finding) must give the
//! product of the new structure or `PlanMismatch` naming what differs; never `Internal`, a
//! panic, or a silently wrong C. Every algorithm, sorted and unsorted C, every op pair,
//! real and complex values, with and without values; rows of C that grow past each level
//! of the hash accumulators, shrink, or keep their length with other columns; changes of
//! A and of B. Then the same with validation off (any result but `Internal`), and the
//! SpMM analysis, which always keeps a digest.

use crate::common::*;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, DenseArgs, Handle, Layout, Op, OutputFormat, Status, ValueVec};

const ALGS: [Algorithm; 4] = [
    Algorithm::Auto,
    Algorithm::Dense,
    Algorithm::LinearProbe,
    Algorithm::LinkedList,
];

const F32: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

/// The transpose of `m` (each row lists its entries in increasing row of `m`).
fn transpose(m: &Csr) -> Csr {
    let mut ptr = vec![0usize; m.ncols + 1];
    for &c in &m.col {
        ptr[c + 1] += 1;
    }
    for j in 0..m.ncols {
        ptr[j + 1] += ptr[j];
    }
    let mut next = ptr.clone();
    let (mut col, mut val) = (vec![0; m.col.len()], vec![0.0; m.col.len()]);
    for i in 0..m.nrows {
        for p in m.ptr[i]..m.ptr[i + 1] {
            let t = &mut next[m.col[p]];
            col[*t] = i;
            val[*t] = m.val[p];
            *t += 1;
        }
    }
    Csr {
        nrows: m.ncols,
        ncols: m.nrows,
        ptr,
        col,
        val,
    }
}

/// The matrix to pass for an operand whose op(M) is `logical`.
fn stored(op: Op, logical: &Csr) -> Csr {
    if op.transposes() {
        transpose(logical)
    } else {
        logical.clone()
    }
}

fn csr(ncols: usize, rows: &[Vec<usize>]) -> Csr {
    let mut m = Csr {
        nrows: rows.len(),
        ncols,
        ptr: vec![0],
        col: vec![],
        val: vec![],
    };
    for r in rows {
        for &c in r {
            m.col.push(c);
            m.val.push(((m.col.len() % 7) as f64 - 3.0) * 0.5);
        }
        m.ptr.push(m.col.len());
    }
    m
}

/// A legal change of structure that keeps nnz: entry `p` moves to column `c`.
fn moved(m: &Csr, p: usize, c: usize) -> Csr {
    let mut m = m.clone();
    m.col[p] = c;
    m
}

/// A legal change of structure that keeps nnz: the last entry of row `i` becomes the
/// first of row `i + 1`.
fn shifted(m: &Csr, i: usize) -> Csr {
    let mut m = m.clone();
    assert!(m.ptr[i + 1] > m.ptr[i]);
    m.ptr[i + 1] -= 1;
    m
}

/// op(A) (6 x 5) and op(B) (5 x 700) with rows of C of 3, 0, 1, 4, 20 and 1 entries (the
/// longest row 20: no second hash level is prepared), and the changes: (what, op(A)',
/// op(B)'). B's row 1 has 600 columns, more than both levels of KKMEM and KKLP take for
/// a row planned short.
#[allow(clippy::type_complexity)]
fn crafted(long_row_planned: bool) -> (Csr, Csr, Vec<(&'static str, Csr, Csr)>) {
    let long: Vec<usize> = (0..600).map(|c| (c * 3) % 700).collect();
    let lb = csr(
        700,
        &[vec![0, 1, 2], long, (100..120).collect(), vec![5], vec![7]],
    );
    // With `long_row_planned`, row 1 reads B's long row: the plan's longest row is 600
    // and the second levels are prepared (for rows planned that long only).
    let row1 = if long_row_planned { vec![1] } else { vec![] };
    let la = csr(5, &[vec![0], row1, vec![3], vec![0, 3], vec![2], vec![3]]);
    let at = |row: usize, k: usize| la.ptr[row] + k;
    let changes = vec![
        // Row 2: 1 entry planned, 600 now (past every level of every accumulator).
        ("A: row 2 grows to 600", moved(&la, at(2, 0), 1), lb.clone()),
        // Row 0: 3 planned, 20 now (past KKLP's first level for a row of 3).
        ("A: row 0 grows to 20", moved(&la, at(0, 0), 2), lb.clone()),
        ("A: row 4 shrinks to 1", moved(&la, at(4, 0), 3), lb.clone()),
        // Row 5: 1 entry, another column (same row lengths in C).
        ("A: row 5 other column", moved(&la, at(5, 0), 4), lb.clone()),
        ("A: entry to the next row", shifted(&la, 3), lb.clone()),
        (
            "B: row 3 other column",
            la.clone(),
            moved(&lb, lb.ptr[3], 6),
        ),
        ("B: entry to the next row", la.clone(), shifted(&lb, 2)),
        ("B: row 0 grows", la.clone(), shifted(&lb, 3)),
    ];
    (la, lb, changes)
}

/// Random op(A), op(B) and random moves of an entry of either.
#[allow(clippy::type_complexity)]
fn random_case(rng: &mut Rng) -> (Csr, Csr, Vec<(&'static str, Csr, Csr)>) {
    let s = Shape {
        max_row: 6,
        empty_rows: 0.3,
        duplicates: true,
        unsorted: true,
        ..Default::default()
    };
    let la = random(
        rng,
        Shape {
            nrows: 40,
            ncols: 30,
            ..s
        },
    );
    let lb = random(
        rng,
        Shape {
            nrows: 30,
            ncols: 50,
            max_row: 24,
            ..s
        },
    );
    let mut changes = Vec::new();
    for _ in 0..3 {
        if !la.col.is_empty() {
            let p = rng.below(la.col.len());
            changes.push(("A: random move", moved(&la, p, rng.below(30)), lb.clone()));
        }
        if !lb.col.is_empty() {
            let p = rng.below(lb.col.len());
            changes.push(("B: random move", la.clone(), moved(&lb, p, rng.below(50))));
        }
    }
    (la, lb, changes)
}

/// The result of a numeric call after a structure change with validation on: the new
/// product (false), or `PlanMismatch` with a message saying what differs (true).
fn check_outcome(got: spgemm::Result<Out>, want: &Out, sorted: bool) -> Result<bool, String> {
    match got {
        Ok(out) => {
            let out = if sorted { out } else { sort_rows(&out) };
            if &out != want {
                return Err("wrong C after a change of structure".into());
            }
            Ok(false)
        }
        Err(e) if e.status == Status::PlanMismatch && e.message.contains("plan") => Ok(true),
        Err(e) => Err(format!("{e}")),
    }
}

#[test]
fn changed_structure_on_a_plan_made_without_validation() {
    let mut rng = Rng::new(27);
    let mut cases = vec![crafted(false), crafted(true)];
    for _ in 0..4 {
        cases.push(random_case(&mut rng));
    }
    let (mut mismatches, mut correct) = (0, 0);
    let mut failures = Vec::new();
    for (la, lb, changes) in &cases {
        for alg in ALGS {
            for sorted in [false, true] {
                let mut h = Handle::new(2).unwrap();
                h.options.algorithm = alg;
                h.options.sorted_output = sorted;
                for (op_a, op_b) in [
                    (Op::NonTranspose, Op::NonTranspose),
                    (Op::Transpose, Op::NonTranspose),
                    (Op::NonTranspose, Op::ConjugateTranspose),
                    (Op::ConjugateTranspose, Op::Transpose),
                ] {
                    for vt in [ValueType::Float64, ValueType::Complex64, ValueType::Float32] {
                        let (a, b) = (stored(op_a, la), stored(op_b, lb));
                        let (ot, it) = (IndexType::Int64, IndexType::Int32);
                        let ta = typed(&a, ot, it, vt, 1, true);
                        let tb = typed(&b, ot, it, vt, 0, true);
                        h.options.validate = false;
                        let plan =
                            spgemm::symbolic_op(&h, op_a, &ta.any(), op_b, &tb.any(), F32).unwrap();
                        for (change, la2, lb2) in changes {
                            let (a2, b2) = (stored(op_a, la2), stored(op_b, lb2));
                            let ta2 = typed(&a2, ot, it, vt, 1, true);
                            let tb2 = typed(&b2, ot, it, vt, 0, true);
                            for with_values in [true, false] {
                                let what = format!(
                                    "{alg:?} sorted {sorted} {op_a:?} {op_b:?} {vt:?} values \
                                     {with_values}: {change}"
                                );
                                let want = expected_op(&a2, op_a, &b2, op_b, vt, with_values);
                                h.options.validate = true;
                                let got = numeric_out(&h, &plan, &ta2, &tb2, F32, with_values);
                                match check_outcome(got, &want, sorted) {
                                    Ok(true) => mismatches += 1,
                                    Ok(false) => correct += 1,
                                    Err(e) => failures.push(format!("{what}: {e}")),
                                }
                                // Validation off: the caller's promise is broken, any result
                                // may come but no internal error (the kernels check rows).
                                h.options.validate = false;
                                if let Err(e) = numeric_out(&h, &plan, &ta2, &tb2, F32, with_values)
                                    && e.status == Status::Internal
                                {
                                    failures.push(format!("{what}: validation off: {e}"));
                                }
                                // The plan and the handle still work with the planned inputs.
                                h.options.validate = true;
                                let want = expected_op(&a, op_a, &b, op_b, vt, with_values);
                                match numeric_out(&h, &plan, &ta, &tb, F32, with_values) {
                                    Ok(got) if sorted && got == want => {}
                                    Ok(got) if !sorted && sort_rows(&got) == want => {}
                                    Ok(_) => failures.push(format!("{what}: planned inputs after")),
                                    Err(e) => failures.push(format!("{what}: planned inputs: {e}")),
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Both outcomes occur: changes that keep C's row lengths give the new product.
    assert!(mismatches > 0 && correct > 0, "{mismatches} {correct}");
}

/// The SpMM analysis is made with validation whatever the option, so it has a digest: a
/// changed A is refused with validation on, and with validation off the product runs.
#[test]
fn spmm_analysis_of_a_changed_matrix() {
    let (la, _, changes) = crafted(false);
    for op in [Op::NonTranspose, Op::Transpose, Op::ConjugateTranspose] {
        for vt in [ValueType::Float64, ValueType::Complex64] {
            let mut h = Handle::new(2).unwrap();
            h.options.validate = false;
            let ta = typed(&la, IndexType::Int32, IndexType::Int32, vt, 0, true);
            let an = spgemm::analyse(&h, op, &ta.any(), Layout::RowMajor, 3).unwrap();
            for (change, la2, _) in &changes {
                if la2 == &la {
                    continue;
                }
                let what = format!("{op:?} {vt:?}: {change}");
                let ta2 = typed(la2, IndexType::Int32, IndexType::Int32, vt, 0, true);
                let (rows_x, rows_y) = spgemm::operand_rows(op, la.nrows, la.ncols);
                for validate in [true, false] {
                    h.options.validate = validate;
                    let x = ValueVec::zeroed(vt, rows_x * 3).unwrap();
                    let mut y = ValueVec::zeroed(vt, rows_y * 3).unwrap();
                    let r = spgemm::spmm(
                        &h,
                        op,
                        1.0,
                        &ta2.any(),
                        Some(&an),
                        0.0,
                        DenseArgs {
                            layout: Layout::RowMajor,
                            k: 3,
                            x: x.as_slice(),
                            ldx: 3,
                            y: y.as_mut(),
                            ldy: 3,
                        },
                    );
                    match (validate, r) {
                        (true, Err(e)) => assert_eq!(e.status, Status::PlanMismatch, "{what}"),
                        (true, Ok(())) => panic!("{what}: changed A accepted"),
                        (false, r) => r.unwrap_or_else(|e| panic!("{what}: {e}")),
                    }
                }
            }
        }
    }
}
