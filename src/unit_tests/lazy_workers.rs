//! A handle's workers start on first use: creating a handle, changing its thread count and
//! small products start no thread; a product worth splitting starts them; a change of the
//! thread count stops them until the next such product. Every product is checked.

use super::common::*;
use spgemm::exec;
use spgemm::{Handle, IndexSliceMut, OffsetSliceMut, Op, Options, ValueSliceMut};

/// C = A*B through the handle (sorted rows), checked against the reference.
fn product_is_right(h: &Handle, a: &Csr, b: &Csr) {
    let o = Options {
        sorted_output: true,
        ..Options::default()
    };
    let (ta, tb) = (typed_i64_i32(a), typed_i64_i32(b));
    let nn = Op::NonTranspose;
    let e = h.engine();
    let plan = exec::symbolic(e, &o, (nn, &ta.any()), (nn, &tb.any()), FORMAT_I64_I32).unwrap();
    let mut offs = vec![0i64; a.nrows + 1];
    exec::write_row_offsets(&plan, OffsetSliceMut::I64(&mut offs)).unwrap();
    let mut cols = vec![0i32; plan.nnz()];
    let mut vals = vec![0f64; plan.nnz()];
    exec::numeric(
        e,
        &o,
        &plan,
        &ta.any(),
        &tb.any(),
        IndexSliceMut::I32(&mut cols),
        Some(ValueSliceMut::F64(&mut vals)),
    )
    .unwrap();
    let (rp, rc, rv) = reference::<f64>(a, b);
    assert_eq!(offs.iter().map(|&x| x as usize).collect::<Vec<_>>(), rp);
    assert_eq!(cols.iter().map(|&x| x as usize).collect::<Vec<_>>(), rc);
    for (g, w) in vals.iter().zip(&rv) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
    }
}

#[test]
fn workers_start_on_the_first_split_call() {
    let mut rng = Rng::new(29);
    let shape = |n: usize, max_row: usize| Shape {
        nrows: n,
        ncols: n,
        max_row,
        integer_values: true,
        ..Shape::default()
    };
    let (sa, sb) = (
        random(&mut rng, shape(10, 3)),
        random(&mut rng, shape(10, 3)),
    );
    let (la, lb) = (
        random(&mut rng, shape(60_000, 12)),
        random(&mut rng, shape(60_000, 12)),
    );

    let mut h = Handle::new(2).unwrap();
    assert!(!h.workers_started(), "a new handle starts no thread");
    h.set_threads(3).unwrap();
    assert!(!h.workers_started(), "a new thread count starts no thread");
    product_is_right(&h, &sa, &sb);
    assert!(
        !h.workers_started(),
        "a small product runs on the calling thread"
    );
    product_is_right(&h, &la, &lb);
    assert!(h.workers_started(), "a large product starts the workers");
    h.set_threads(2).unwrap();
    assert!(
        !h.workers_started(),
        "the old workers are gone, the new ones not yet started"
    );
    product_is_right(&h, &la, &lb);
    assert!(h.workers_started());
    assert_eq!(h.install(rayon::current_num_threads).unwrap(), 2);
    h.set_threads(1).unwrap();
    assert_eq!(h.bind_outcomes().len(), 1);
    assert!(
        h.workers_started(),
        "asking where the workers run starts them"
    );
}
