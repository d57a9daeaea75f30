//! The memory limit (`Options::memory_limit`, `spgemm_set_memory_limit`): every call
//! estimates its extra memory before allocating, fails with `AllocFailed` (estimate and
//! limit in the message) when the limit is one byte below the estimate, succeeds at the
//! estimate, and allocates no more than it. A test binary of its own: a counting global
//! allocator measures each call's peak, and the tests take one lock so none allocates
//! while another measures. (Compressed B lives in a mapping of its own, which this
//! allocator does not see; its bound is checked by reading, in `cpu::compress`.)

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use spgemm::types::{IndexType, ValueType};
use spgemm::{
    Algorithm, AnyCsr, Handle, IndexSlice, IndexSliceMut, Layout, OffsetSlice, Op, OutputFormat,
    Result, Status, ValueSlice, ValueSliceMut,
};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
/// Calls that allocated more than their estimate (all reported at the end of a test).
static OVER: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn over_estimate(what: &str, peak: usize, est: u64) {
    if peak as u64 > est {
        let line = format!("{what}: allocated {peak} bytes, above its estimate {est}");
        OVER.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }
}

fn assert_within() {
    let over = std::mem::take(&mut *OVER.lock().unwrap_or_else(|e| e.into_inner()));
    assert!(over.is_empty(), "{}", over.join("\n"));
}

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: AllocLayout) -> *mut u8 {
        // SAFETY: as the caller's contract.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: AllocLayout) -> *mut u8 {
        // SAFETY: as the caller's contract.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: AllocLayout) {
        // SAFETY: as the caller's contract.
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: AllocLayout, new: usize) -> *mut u8 {
        // SAFETY: as the caller's contract.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                CURRENT.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// `f`'s result and the most memory it held at once beyond what was held before it.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = CURRENT.load(Relaxed);
    PEAK.store(before, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed).saturating_sub(before))
}

/// The estimate named by an `AllocFailed` message of the memory limit.
fn estimate_of(e: &spgemm::Error) -> u64 {
    assert_eq!(e.status, Status::AllocFailed, "{}", e.message);
    let rest = e
        .message
        .split("needs an estimated ")
        .nth(1)
        .unwrap_or_else(|| panic!("no estimate in: {}", e.message));
    rest.split(' ').next().unwrap().parse().unwrap()
}

/// Runs `call` on fresh handles (from `fresh`, so that the measured call grows every
/// workspace it uses) under limits that start at 1 byte and rise to each estimate the
/// failures name (a one-call product checks twice: before its symbolic phase, and before
/// C's arrays with what C needs): the call must fail one byte below the last estimate,
/// succeed at it, and allocate at most that much. Returns the result and the limit.
fn within_estimate<R>(
    what: &str,
    fresh: impl Fn() -> Handle,
    mut call: impl FnMut(&Handle) -> Result<R>,
) -> (R, u64) {
    let mut limit = 1u64;
    loop {
        let mut h = fresh();
        h.options.memory_limit = limit as usize;
        let Err(e) = call(&h) else {
            assert!(limit > 1, "{what}: passed a 1-byte limit");
            break;
        };
        let est = estimate_of(&e);
        assert!(
            est > limit,
            "{what}: estimate {est} within the limit {limit}: {}",
            e.message
        );
        assert!(
            e.message
                .contains(&format!("over the memory limit of {limit} bytes")),
            "{}",
            e.message
        );
        limit = est;
    }
    let mut h = fresh();
    h.options.memory_limit = (limit - 1) as usize;
    let e = call(&h)
        .err()
        .unwrap_or_else(|| panic!("{what}: passed its estimate - 1"));
    assert_eq!(e.status, Status::AllocFailed, "{what}: {}", e.message);
    let mut h = fresh();
    h.options.memory_limit = limit as usize;
    let (r, peak) = peak_during(|| call(&h));
    let r = r.unwrap_or_else(|e| panic!("{what}: failed at its estimate {limit}: {}", e.message));
    over_estimate(what, peak, limit);
    (r, limit)
}

/// A square-ish sparse matrix in plain vectors (deterministic, some long rows).
struct Mat {
    nrows: usize,
    ncols: usize,
    ptr: Vec<i32>,
    col: Vec<i32>,
    val: Vec<f64>,
}

impl Mat {
    fn new(nrows: usize, ncols: usize, per_row: usize, seed: u64) -> Mat {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = |n: usize| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % n as u64) as usize
        };
        let (mut ptr, mut col, mut val) = (vec![0i32], Vec::new(), Vec::new());
        for i in 0..nrows {
            let len = if i % 97 == 0 {
                8 * per_row
            } else {
                next(per_row + 1)
            };
            let mut cols: Vec<i32> = (0..len).map(|_| next(ncols) as i32).collect();
            cols.sort_unstable();
            cols.dedup();
            for c in cols {
                col.push(c);
                val.push(1.0 + next(5) as f64);
            }
            ptr.push(col.len() as i32);
        }
        Mat {
            nrows,
            ncols,
            ptr,
            col,
            val,
        }
    }
    fn any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.nrows,
            ncols: self.ncols,
            base: 0,
            offsets: OffsetSlice::I32(&self.ptr),
            indices: IndexSlice::I32(&self.col),
            values: Some(ValueSlice::F64(&self.val)),
            value_type: ValueType::Float64,
        }
    }
}

const FORMAT: OutputFormat = OutputFormat {
    offsets: IndexType::Int64,
    indices: IndexType::Int32,
    base: 0,
};

fn handle(alg: Algorithm, sorted: bool, validate: bool) -> Handle {
    let mut h = Handle::new(2).unwrap();
    h.options.algorithm = alg;
    h.options.sorted_output = sorted;
    h.options.validate = validate;
    // The worker threads start with the first call that splits its work and are not
    // counted (see `spgemm_set_memory_limit`): started here, outside the measured calls.
    h.install(|| ()).unwrap();
    h
}

/// Symbolic, numeric (with values, structure only, and the replay of a reused plan) and
/// the one-call product, for A (m x n) times B (n x k).
fn product_cases(a: &Mat, b: &Mat, op_a: Op, what: &str) {
    for alg in Algorithm::ALL.iter().copied() {
        for (sorted, validate) in [(true, true), (false, true), (true, false)] {
            let w = format!("{what} {alg:?} sorted {sorted} validate {validate}");
            let fresh = || handle(alg, sorted, validate);
            let (plan, _) = within_estimate(&format!("{w}: symbolic"), fresh, |h| {
                spgemm::symbolic_op(h, op_a, &a.any(), Op::NonTranspose, &b.any(), FORMAT)
            });
            let nnz = plan.nnz();
            let mut cols = vec![0i32; nnz];
            let mut vals = vec![0f64; nnz];
            within_estimate(&format!("{w}: numeric"), fresh, |h| {
                let (c, v) = (IndexSliceMut::I32(&mut cols), ValueSliceMut::F64(&mut vals));
                spgemm::numeric(h, &plan, &a.any(), &b.any(), c, Some(v))
            });
            within_estimate(&format!("{w}: numeric (structure)"), fresh, |h| {
                let c = IndexSliceMut::I32(&mut cols);
                spgemm::numeric(h, &plan, &a.any(), &b.any(), c, None)
            });
            // Two more calls with the same arrays teach the plan C's columns; the next one
            // replays them (a fresh handle grows the replay's arrays).
            let h = fresh();
            for _ in 0..2 {
                let (c, v) = (IndexSliceMut::I32(&mut cols), ValueSliceMut::F64(&mut vals));
                spgemm::numeric(&h, &plan, &a.any(), &b.any(), c, Some(v)).unwrap();
            }
            let mut h = fresh();
            h.options.memory_limit = usize::MAX;
            let (r, peak) = peak_during(|| {
                let (c, v) = (IndexSliceMut::I32(&mut cols), ValueSliceMut::F64(&mut vals));
                spgemm::numeric(&h, &plan, &a.any(), &b.any(), c, Some(v))
            });
            r.unwrap();
            let mut probe = fresh();
            probe.options.memory_limit = 1;
            let est = {
                let (c, v) = (IndexSliceMut::I32(&mut cols), ValueSliceMut::F64(&mut vals));
                let e = spgemm::numeric(&probe, &plan, &a.any(), &b.any(), c, Some(v));
                estimate_of(&e.unwrap_err())
            };
            over_estimate(&format!("{w}: numeric (replay)"), peak, est);
            within_estimate(&format!("{w}: multiply"), fresh, |h| {
                spgemm::multiply_op(h, op_a, &a.any(), Op::NonTranspose, &b.any(), FORMAT)
            });
        }
    }
}

#[test]
fn spgemm_phases_stay_within_their_estimates() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Few columns (the dense accumulator's choice) and many (the hash accumulators').
    let a = Mat::new(1500, 1200, 12, 1);
    let narrow = Mat::new(1200, 300, 6, 2);
    let wide = Mat::new(1200, 400_000, 10, 3);
    product_cases(&a, &narrow, Op::NonTranspose, "narrow");
    product_cases(&a, &wide, Op::NonTranspose, "wide");
    // op(A) = A^T: the plan keeps A^T's structure; numeric calls gather its values.
    let at = Mat::new(1200, 1500, 12, 4);
    product_cases(&at, &narrow, Op::Transpose, "A^T");
    // Small products, serial on the calling thread (Auto only).
    let (tiny_a, tiny_b) = (Mat::new(40, 30, 4, 8), Mat::new(30, 25, 3, 9));
    product_cases(&tiny_a, &tiny_b, Op::NonTranspose, "small");
    product_cases(
        &Mat::new(30, 40, 4, 10),
        &tiny_b,
        Op::Transpose,
        "small A^T",
    );
    assert_within();
}

#[test]
fn spmm_analysis_stays_within_its_estimate() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let a = Mat::new(3000, 2000, 9, 5);
    for op in [Op::NonTranspose, Op::Transpose, Op::ConjugateTranspose] {
        let (_, est) = within_estimate(
            &format!("analysis {op:?}"),
            || handle(Algorithm::Auto, true, true),
            |h| spgemm::analyse(h, op, &a.any(), Layout::RowMajor, 8),
        );
        assert!(est > 0);
    }
    assert_within();
}

#[test]
fn no_limit_and_a_large_limit_change_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let a = Mat::new(400, 300, 7, 6);
    let b = Mat::new(300, 500, 7, 7);
    let mut h = handle(Algorithm::Auto, true, true);
    let free = spgemm::multiply(&h, &a.any(), &b.any(), FORMAT).unwrap();
    h.options.memory_limit = usize::MAX;
    let limited = spgemm::multiply(&h, &a.any(), &b.any(), FORMAT).unwrap();
    assert_eq!(free.as_any().nnz(), limited.as_any().nnz());
    // A failed call under a small limit leaves the handle as it was.
    h.options.memory_limit = 16;
    let e = spgemm::multiply(&h, &a.any(), &b.any(), FORMAT)
        .err()
        .expect("a 16-byte limit fails");
    assert_eq!(e.status, Status::AllocFailed);
    assert!(
        e.message.contains("spgemm_set_memory_limit"),
        "{}",
        e.message
    );
    h.options.memory_limit = 0;
    let again = spgemm::multiply(&h, &a.any(), &b.any(), FORMAT).unwrap();
    assert_eq!(free.as_any().nnz(), again.as_any().nnz());
}
