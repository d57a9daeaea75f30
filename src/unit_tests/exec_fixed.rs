//! The node products of the distributed backend (`exec::symbolic_fixed_inputs`,
//! `exec::numeric_fixed_inputs`: inputs the backend built and never changes, validation
//! off): the plan keeps C's columns where a checked plan would, and every call's C is
//! bitwise the checked path's.

use super::common::*;
use spgemm::exec;
use spgemm::{Handle, IndexSliceMut, OffsetSliceMut, Op, Options, ValueSliceMut};

/// Runs the symbolic phase, a call without values (the distributed backend's structure
/// call) and `values.len()` numeric calls, one per set of A's values; returns the offsets,
/// the columns and each call's values. `fixed`: through the fixed-input calls, with
/// `structure` (the structure call announced to the symbolic phase).
fn run(
    h: &Handle,
    o: &Options,
    (fixed, structure): (bool, bool),
    (a, b): (&Csr, &Csr),
    values: &[Vec<f64>],
) -> Run {
    let e = h.engine();
    let (format, csr) = (FORMAT_I64_I32, typed_i64_i32);
    let (ta, tb) = (csr(a), csr(b));
    let nn = Op::NonTranspose;
    let plan = if fixed {
        exec::symbolic_fixed_inputs(e, o, &ta.any(), &tb.any(), format, structure)
    } else {
        exec::symbolic(e, o, (nn, &ta.any()), (nn, &tb.any()), format)
    }
    .unwrap();
    let record = plan.cpu_details().unwrap().record_bytes;
    let mut offs = vec![0i64; a.nrows + 1];
    exec::write_row_offsets(&plan, OffsetSliceMut::I64(&mut offs)).unwrap();
    let mut cols = vec![0i32; plan.nnz()];
    let numeric = |ta: &Typed, cols: &mut [i32], vals: Option<&mut [f64]>| {
        let (c, v) = (IndexSliceMut::I32(cols), vals.map(ValueSliceMut::F64));
        if fixed {
            exec::numeric_fixed_inputs(e, o, &plan, &ta.any(), &tb.any(), c, v)
        } else {
            exec::numeric(e, o, &plan, &ta.any(), &tb.any(), c, v)
        }
        .unwrap()
    };
    numeric(&ta, &mut cols, None);
    let mut out = Vec::new();
    for v in values {
        let mut am = a.clone();
        am.val.clone_from(v);
        let ta = csr(&am);
        let mut vals = vec![0f64; plan.nnz()];
        numeric(&ta, &mut cols, Some(&mut vals));
        out.push(vals);
    }
    (offs, cols, out, record)
}

/// The checked path's options and the fixed-input path's (validation off), sorted or not.
fn options(sorted: bool) -> (Options, Options) {
    let checked = Options {
        sorted_output: sorted,
        small_path: false,
        ..Options::default()
    };
    let fixed = Options {
        validate: false,
        ..checked
    };
    (checked, fixed)
}

type Run = (Vec<i64>, Vec<i32>, Vec<Vec<f64>>, usize);

/// `got`'s offsets, columns and every call's values are `want`'s, bit for bit.
fn assert_same(got: &Run, want: &Run, sorted: bool) {
    assert_eq!(got.0, want.0, "offsets (sorted {sorted})");
    assert_eq!(got.1, want.1, "columns (sorted {sorted})");
    for (g, w) in got.2.iter().zip(&want.2) {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(g), bits(w), "values (sorted {sorted})");
    }
}

#[test]
fn fixed_inputs_keep_c_columns_and_match_the_checked_path() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(2027);
    // Rows of about 320 products for at most 48 columns (R*A-like, C much smaller than
    // the products): the record pays (224 products per row sorted, 64 unsorted) and fits
    // its budget; explicit zeros, empty rows and unsorted rows in A and B.
    let shape = |ncols, max_row| Shape {
        nrows: 4000,
        ncols,
        max_row,
        empty_rows: 0.05,
        unsorted: true,
        zeros: 0.05,
        ..Default::default()
    };
    let a = random(&mut rng, shape(4000, 160));
    let b = random(&mut rng, shape(48, 8));
    let values: Vec<Vec<f64>> = (0..2)
        .map(|k| a.val.iter().map(|&x| x * (k as f64 + 1.5) - 0.25).collect())
        .collect();
    for sorted in [true, false] {
        let (checked, fixed) = options(sorted);
        let want = run(&h, &checked, (false, false), (&a, &b), &values);
        let got = run(&h, &fixed, (true, false), (&a, &b), &values);
        assert_same(&got, &want, sorted);
        // As much of C's columns kept as the checked plan keeps (sorted: some).
        assert_eq!(got.3, want.3, "record bytes (sorted {sorted})");
        if sorted {
            assert!(
                got.3 > 0,
                "a sorted plan of rows this long keeps C's columns"
            );
        }
        // And the values are the product's (the reference, sorted by column).
        let mut am = a.clone();
        am.val.clone_from(&values[1]);
        let (rp, rc, rv) = reference::<f64>(&am, &b);
        for i in 0..a.nrows {
            let (s, e) = (got.0[i] as usize, got.0[i + 1] as usize);
            let mut row: Vec<(usize, u64)> = (s..e)
                .map(|p| (got.1[p] as usize, got.2[1][p].to_bits()))
                .collect();
            row.sort_unstable();
            let r: Vec<(usize, f64)> = (rp[i]..rp[i + 1]).map(|p| (rc[p], rv[p])).collect();
            assert_eq!(row.len(), r.len(), "row {i}");
            for ((c, v), (rc, rv)) in row.iter().zip(&r) {
                assert_eq!(c, rc, "row {i}");
                let (v, rv) = (f64::from_bits(*v), *rv);
                assert!(
                    (v - rv).abs() <= 1e-12 * (1.0 + rv.abs()),
                    "row {i}: {v} vs {rv}"
                );
            }
        }
    }
}

#[test]
fn announced_structure_keeps_c_columns_of_short_rows() {
    let h = Handle::new(2).unwrap();
    let mut rng = Rng::new(2028);
    // A*P of an aggregation hierarchy: A a band of up to 9 entries per row (some dropped,
    // explicit zeros), P one or two entries per row (aggregates of 4 rows); about 12
    // products for 3-4 columns per row. No record without the announcement (64 products
    // per row), one with it, sorted or not; C bitwise the checked path's either way.
    let n = 20_000;
    let mut a = Csr {
        nrows: n,
        ncols: n,
        ptr: vec![0],
        col: Vec::new(),
        val: Vec::new(),
    };
    for i in 0..n {
        for j in i.saturating_sub(4)..(i + 5).min(n) {
            if rng.below(10) > 0 {
                a.col.push(j);
                a.val
                    .push(if rng.below(20) == 0 { 0.0 } else { rng.unit() });
            }
        }
        a.ptr.push(a.col.len());
    }
    let mut b = Csr {
        nrows: n,
        ncols: n / 4,
        ptr: vec![0],
        col: Vec::new(),
        val: Vec::new(),
    };
    for i in 0..n {
        b.col.push(i / 4);
        b.val.push(rng.unit());
        if i % 4 == 3 && i / 4 + 1 < n / 4 {
            b.col.push(i / 4 + 1);
            b.val.push(rng.unit());
        }
        b.ptr.push(b.col.len());
    }
    let values: Vec<Vec<f64>> = (0..2)
        .map(|k| {
            a.val
                .iter()
                .map(|&x| x * (k as f64 + 0.5) + 0.125)
                .collect()
        })
        .collect();
    for sorted in [true, false] {
        let (checked, fixed) = options(sorted);
        let want = run(&h, &checked, (false, false), (&a, &b), &values);
        let plain = run(&h, &fixed, (true, false), (&a, &b), &values);
        let got = run(&h, &fixed, (true, true), (&a, &b), &values);
        assert_eq!(
            plain.3, 0,
            "short rows: no record unless announced (sorted {sorted})"
        );
        assert!(got.3 > 0, "announced: C's columns kept (sorted {sorted})");
        for r in [&plain, &got] {
            assert_same(r, &want, sorted);
        }
    }
}
