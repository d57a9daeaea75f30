//! Small products wake no thread and start none: the handle's workers are not scheduled
//! while the calling thread makes small products (their context switch counts in
//! /proc stay put), and the process keeps its threads. A test binary of its own, with one
//! test, so that no other test's threads run meanwhile; the control (the same products
//! on the parallel path) shows that the counts do move when workers are woken.

use spgemm::types::{IndexType, ValueType};
use spgemm::{AnyCsr, Handle, IndexSlice, IndexSliceMut, OffsetSlice, OutputFormat, ValueSlice};
use spgemm::{ValueSliceMut, multiply, numeric, symbolic};

/// Context switches of every thread of the process but the caller's, by thread id.
fn switches() -> Vec<(u32, u64)> {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() } as u32;
    let mut v = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap() {
        let tid: u32 = t.unwrap().file_name().to_str().unwrap().parse().unwrap();
        if tid == me {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")) else {
            continue;
        };
        let n: u64 = status
            .lines()
            .filter(|l| l.contains("ctxt_switches"))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
            .sum();
        v.push((tid, n));
    }
    v.sort_unstable();
    v
}

/// An n x n matrix's arrays, three entries per row at scattered columns.
fn arrays(n: usize) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
    let ptr = (0..=n as i32).map(|i| 3 * i).collect();
    let col = (0..3 * n).map(|p| ((p * 7 + p / 3) % n) as i32).collect();
    let val = (0..3 * n).map(|p| p as f64 * 0.25 - 3.0).collect();
    (ptr, col, val)
}

/// A CSR view of [`arrays`].
fn view<'a>(n: usize, (ptr, col, val): &'a (Vec<i32>, Vec<i32>, Vec<f64>)) -> AnyCsr<'a> {
    AnyCsr {
        nrows: n,
        ncols: n,
        base: 0,
        offsets: OffsetSlice::I32(ptr),
        indices: IndexSlice::I32(col),
        values: Some(ValueSlice::F64(val)),
        value_type: ValueType::Float64,
    }
}

#[test]
fn small_products_wake_no_worker() {
    if !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("SKIPPED: no /proc/self/task");
        return;
    }
    let small = arrays(30);
    let a = view(30, &small);
    let format = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    };
    let mut h = Handle::new(2).unwrap();
    let products = |h: &Handle| {
        let plan = symbolic(h, &a, &a, format).unwrap();
        let (mut cols, mut vals) = (vec![0i32; plan.nnz()], vec![0f64; plan.nnz()]);
        for _ in 0..50 {
            let c = multiply(h, &a, &a, format).unwrap();
            assert_eq!(c.as_any().nnz(), plan.nnz());
            let (c, v) = (IndexSliceMut::I32(&mut cols), ValueSliceMut::F64(&mut vals));
            numeric(h, &plan, &a, &a, c, Some(v)).unwrap();
        }
        plan.small()
    };
    // Warm up (the accumulators grow once), then let the workers fall asleep.
    assert!(products(&h));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = switches();
    assert!(products(&h));
    let after = switches();
    assert_eq!(
        before.iter().map(|t| t.0).collect::<Vec<_>>(),
        after.iter().map(|t| t.0).collect::<Vec<_>>(),
        "threads came or went during small products"
    );
    assert_eq!(
        before, after,
        "a thread was scheduled during small products"
    );
    // A one-call product above the threshold of plans (work 2^15 to 2^16 on 2 threads:
    // about 16 per row here) runs serially too, its plan made for one numeric call.
    let larger = arrays(2800);
    let mid = view(2800, &larger);
    let plan = symbolic(&h, &mid, &mid, format).unwrap();
    assert!(
        !plan.small(),
        "the plan of a product of work above 2^15 is small"
    );
    let nnz = multiply(&h, &mid, &mid, format).unwrap().as_any().nnz();
    assert_eq!(nnz, plan.nnz());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = switches();
    for _ in 0..20 {
        multiply(&h, &mid, &mid, format).unwrap();
    }
    assert_eq!(
        before,
        switches(),
        "a worker was scheduled during one-call products of work up to 2^16"
    );
    // Control: the parallel path wakes the workers, and the counts show it.
    h.options.small_path = false;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = switches();
    assert!(!products(&h));
    let after = switches();
    assert_ne!(before, after, "waking the workers did not show");
}
