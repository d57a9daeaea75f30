//! Small products: below a work threshold a product runs serially on the calling thread.
//! No worker is woken (waking one and waiting for it costs more than a product of a few
//! thousand multiplications), nothing is allocated but the plan (the accumulators are
//! kept on the handle, [`super::CpuState`]), and nothing that only pays on large products
//! runs: no flop-balanced partition, compression of B, row groups or software prefetch.
//!
//! The kernels are the parallel path's, over all rows as one chunk: the dense
//! accumulator's count ([`dense::count_rows`]), its numeric kernels
//! ([`gustavson::fill_chunk`]) and the replay of reused plans
//! ([`gustavson::replay_chunk`]). So each entry of C is the same sum in the same order as
//! on the parallel path, whatever its accumulator and thread count: results are bitwise
//! equal, and so are the columns of unsorted rows (first-touch order on both paths).
//! Whether a product is small is the dispatcher's choice ([`fits`] with the options).

use super::CpuState;
use super::args::Product;
use super::dense::{self, Counted, DenseRows, FLOP_BLOCK};
use super::gustavson::{self, ReplayReport};
use super::row_groups;
use crate::common::csr::CsrRef;
use crate::common::memory::{Footprint, bytes_of};
use crate::common::options::Op;
use crate::error::{Error, Result, Status};
use crate::platform::alloc::try_zeroed_vec;
use crate::types::{Idx, Scalar};

/// Products whose work (multiplications, plus the rows and entries of A and B that the
/// checks and row loops pass over) is at most this run serially: about 100-300 us on one
/// core. The parallel path costs ~100 us more per product (waking the workers for its
/// phases) and divides the rest by the threads; measured on 2
/// threads the serial path won or tied up to ~75k for one-shot products, ~15k for reused
/// plans, and with more threads both fall (docs/DESIGN-NOTES.md, cpu::small).
pub(crate) const SMALL_MAX_WORK: u64 = 1 << 15;

/// [`SMALL_MAX_WORK`] for a handle with one worker: the parallel path then divides
/// nothing and only adds the wake and wait of the worker for each phase, while what the
/// serial path leaves out (compression of B, row groups, prefetch, the column record)
/// pays only on larger products (docs/DESIGN-NOTES.md, cpu::small).
pub(crate) const SMALL_MAX_WORK_ONE_THREAD: u64 = (1 << 20) - 1;

/// The work up to which a product is small on a handle with `threads` workers.
/// `one_shot`: the plan serves one numeric call (`spgemm_multiply`), so only the one-shot
/// crossover counts: the parallel path's fixed cost F against serial work w*c and its own
/// w*c/t, even at w = F / (c (1 - 1/t)), i.e. [`SMALL_MAX_WORK`] * t / (t - 1) with the
/// threshold's 2F/c = 2^16 of 2 threads (measured crossover 40k-75k there; reused plans
/// keep [`SMALL_MAX_WORK`], whose replay pays the wake once: docs/DESIGN-NOTES.md,
/// cpu::small).
pub(crate) fn max_work(threads: usize, one_shot: bool) -> u64 {
    match threads {
        0 | 1 => SMALL_MAX_WORK_ONE_THREAD,
        t if one_shot => SMALL_MAX_WORK * t as u64 / (t as u64 - 1),
        _ => SMALL_MAX_WORK,
    }
}

/// Columns of C up to which a product may be small: the accumulators kept on the handle
/// take up to 24 bytes per column (slot, mark, order bit, a complex replay value): 1.5 MiB.
pub(crate) const SMALL_MAX_COLS: usize = 1 << 16;

/// Whether op(A)*op(B) is small: C has at most [`SMALL_MAX_COLS`] columns and its work is
/// at most `max_work` ([`max_work`]); above [`SMALL_MAX_WORK`] also A (not transposed)
/// unlikely to have row groups ([`row_groups::likely`]). Reads only row offsets, for A*B
/// and A^T*B^T the column indices of A (resp. B), stopping once the bound is passed, and
/// for the row groups 64 rows of A; never panics on invalid input (validation may be
/// off): an index outside the other operand makes the product not small, and the
/// parallel path reports it.
pub fn fits<O: Idx, I: Idx, V: Scalar>(
    (op_a, a): (Op, &CsrRef<'_, O, I, V>),
    (op_b, b): (Op, &CsrRef<'_, O, I, V>),
    max_work: u64,
) -> bool {
    let k = if op_b.transposes() {
        b.nrows()
    } else {
        b.ncols()
    };
    if k > SMALL_MAX_COLS {
        return false;
    }
    // A transposed operand is built by a counting sort over its columns.
    let ta = if op_a.transposes() { a.ncols() } else { 0 };
    let tb = if op_b.transposes() { b.ncols() } else { 0 };
    let inputs = [a.nrows(), b.nrows(), a.nnz(), b.nnz(), ta, tb]
        .iter()
        .fold(0u64, |s, &x| s.saturating_add(x as u64));
    if inputs > max_work {
        return false;
    }
    let budget = max_work - inputs;
    let flops = match (op_a.transposes(), op_b.transposes()) {
        // Row i of op(A) meets row col(p) of B for each entry p of A.
        (false, false) => entries_times_rows(a, b, budget),
        // A^T*B: entry (i, j) of A meets row i of B.
        (true, false) => rows_times_rows(a, b, budget),
        // A^T*B^T = (B*A)^T: the multiplications of B*A.
        (true, true) => entries_times_rows(b, a, budget),
        // A*B^T: at most every entry of A times every entry of B.
        (false, true) => Some((a.nnz() as u64).saturating_mul(b.nnz() as u64)),
    };
    let Some(flops) = flops.filter(|&f| f <= budget) else {
        return false;
    };
    // Above the base threshold (one worker) A's row groups pay more than the wake saves.
    inputs + flops <= SMALL_MAX_WORK || op_a.transposes() || !row_groups::likely(a)
}

/// Length of row `i` of `m` read without trusting the offsets (None: not a row).
fn row_len<O: Idx, I: Idx, V: Scalar>(m: &CsrRef<'_, O, I, V>, i: usize) -> Option<u64> {
    let offs = m.row_offsets();
    let (s, e) = (offs.get(i)?.to_usize(), offs.get(i + 1)?.to_usize());
    Some(e.saturating_sub(s) as u64)
}

/// Sum over the entries of `x` of the length of the row of `y` its column names (the
/// multiplications of x*y), or None once it passes `budget` or an index is not a row of y.
fn entries_times_rows<O: Idx, I: Idx, V: Scalar>(
    x: &CsrRef<'_, O, I, V>,
    y: &CsrRef<'_, O, I, V>,
    budget: u64,
) -> Option<u64> {
    let mut f = 0u64;
    for &j in x.col_indices() {
        f = f.saturating_add(row_len(y, x.col_of(j))?);
        if f > budget {
            return None;
        }
    }
    Some(f)
}

/// Sum over rows i of the length of row i of `x` times that of row i of `y` (the
/// multiplications of x^T*y), or None once it passes `budget`.
fn rows_times_rows<O: Idx, I: Idx, V: Scalar>(
    x: &CsrRef<'_, O, I, V>,
    y: &CsrRef<'_, O, I, V>,
    budget: u64,
) -> Option<u64> {
    let mut f = 0u64;
    for i in 0..x.nrows().min(y.nrows()) {
        f = f.saturating_add(row_len(x, i)?.saturating_mul(row_len(y, i)?));
        if f > budget {
            return None;
        }
    }
    Some(f)
}

/// The plan's own allocations besides the row offsets (the plan, its one chunk), rounded
/// up.
const PLAN_BYTES: u64 = 1024;

/// What [`symbolic`] may allocate for C with `m` rows and `k` columns: the row offsets
/// and the handle's symbolic marks (grown once, counted on every call).
pub fn symbolic_footprint(m: usize, k: usize) -> Footprint {
    let mut f = Footprint::default();
    f.add("plan", PLAN_BYTES);
    f.add("row offsets of C", bytes_of::<usize>(m.saturating_add(1)));
    f.add(
        "small-product marks",
        DenseRows::<f64>::symbolic_bytes(k, false),
    );
    f
}

/// Symbolic phase of a small product on the calling thread: C's row offsets, the
/// multiplications and the longest row. `chunks` is the one chunk of all rows.
pub fn symbolic<O: Idx, I: Idx, V: Scalar>(
    state: &CpuState,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<Counted> {
    let m = a.nrows();
    let mut row_ptr = try_zeroed_vec::<usize>(m + 1, "row offsets of C")?;
    let mut ws = state.small.lock();
    let acc = ws.dense_rows::<V>();
    acc.prepare_symbolic(b.ncols(), false, (false, false))?;
    let (mut flops, mut max_row_nnz) = (0u64, 0usize);
    let mut overflow = false;
    for r0 in (0..m).step_by(FLOP_BLOCK) {
        let r1 = (r0 + FLOP_BLOCK).min(m);
        let mut block = [0u64];
        let rows = &mut row_ptr[r0 + 1..r1 + 1];
        let t = dense::count_rows(acc, (a, b), None, None, r0..r1, rows, &mut block, None);
        let (f, o) = flops.overflowing_add(t.flops);
        flops = f;
        overflow |= o | t.overflow;
        max_row_nnz = max_row_nnz.max(t.max_nnz);
    }
    if overflow {
        return Err(Error::new(
            Status::IndexOverflow,
            "the number of multiplications of A*B exceeds 2^64",
        ));
    }
    // No overflow: each row's count is at most its multiplications, summed above.
    for i in 0..m {
        row_ptr[i + 1] += row_ptr[i];
    }
    Ok(Counted {
        record: None,
        row_ptr,
        flops,
        chunks: vec![0, m],
        max_row_nnz,
    })
}

/// Numeric phase of a small product's plan on the calling thread (`p.plan` has one
/// chunk): C's columns (plus the plan's base) and, when `vals` is given and A and B carry
/// values, its values, with the plan's accumulator.
pub fn numeric<O: Idx, I: Idx, V: Scalar, J: Idx>(
    state: &CpuState,
    p: &Product<'_, O, I, V>,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    gustavson::fill_chunk(&mut state.small.lock(), p, 0..p.a.nrows(), cols, vals)
}

/// [`gustavson::replay`] of a small product's plan (one chunk, digest `want`) on the
/// calling thread.
pub fn replay<O: Idx, I: Idx, V: Scalar, J: Idx>(
    state: &CpuState,
    p: &Product<'_, O, I, V>,
    want: u64,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<ReplayReport> {
    let mut ws = state.small.lock();
    let replayed = gustavson::replay_chunk(&mut ws, p, false, 0..p.a.nrows(), cols, vals, want)?;
    Ok(ReplayReport {
        replayed: replayed as usize,
        refilled: !replayed as usize,
    })
}
