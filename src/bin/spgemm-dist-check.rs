//! Checks of the distributed SpMM backend, run under mpirun at any rank count:
//! `mpirun -np N spgemm-dist-check [--grid RxC] [--quick]`. Every algorithm on every grid
//! of N ranks (or only RxC), k in {1, 8, 64}, square and rectangular A, row- and
//! column-major, ranks owning no rows, power-law rows, 1-based and 64-bit inputs, f32 and
//! f64, alpha/beta including beta = 0 over NaN, plan reuse with new X and new values of
//! A; Y compared with the serial SpMM of the whole matrix (every rank builds the same
//! global matrices from one seed and passes its rows). Then bad input on one rank, bad
//! ranges, mismatched sizes and a memory limit: every rank must report the same status.
//! Prints `N passed, M failed` on rank 0 and exits non-zero on any failure.

#[path = "dist-check/spgemm.rs"]
mod spgemm_cases;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use spgemm::types::{Idx, Scalar, ValueType};
use spgemm::{
    AnyCsr, Backend, DenseArgs, DistAlgorithm as Algorithm, DistComm, DistGrid as Grid, DistMatrix,
    DistPlan, DistPlanOptions as PlanOptions, Handle, IndexSlice, Layout, OffsetSlice, Op, Result,
    Status, ValueSlice, ValueSliceMut, dist_spmm, dist_spmm_estimate, dist_spmm_plan,
    dist_spmm_project, dist_spmm_update_values,
};

/// The element types of the test's arrays as the API's type-erased slices (each type
/// answers for the roles it can take: offsets, column indices, values).
trait Erase: Sized {
    fn offsets(_: &[Self]) -> OffsetSlice<'_> {
        unreachable!("not an offset type")
    }
    fn indices(_: &[Self]) -> IndexSlice<'_> {
        unreachable!("not an index type")
    }
}
impl Erase for i32 {
    fn offsets(s: &[i32]) -> OffsetSlice<'_> {
        OffsetSlice::I32(s)
    }
    fn indices(s: &[i32]) -> IndexSlice<'_> {
        IndexSlice::I32(s)
    }
}
impl Erase for i64 {
    fn offsets(s: &[i64]) -> OffsetSlice<'_> {
        OffsetSlice::I64(s)
    }
    fn indices(s: &[i64]) -> IndexSlice<'_> {
        IndexSlice::I64(s)
    }
}
impl Erase for u64 {
    fn offsets(s: &[u64]) -> OffsetSlice<'_> {
        OffsetSlice::U64(s)
    }
}

/// The value types of the test (f32, f64).
trait Val: Scalar {
    fn erase(x: &[Self]) -> ValueSlice<'_>;
    fn erase_mut(y: &mut [Self]) -> ValueSliceMut<'_>;
}
impl Val for f32 {
    fn erase(x: &[f32]) -> ValueSlice<'_> {
        ValueSlice::F32(x)
    }
    fn erase_mut(y: &mut [f32]) -> ValueSliceMut<'_> {
        ValueSliceMut::F32(y)
    }
}
impl Val for f64 {
    fn erase(x: &[f64]) -> ValueSlice<'_> {
        ValueSlice::F64(x)
    }
    fn erase_mut(y: &mut [f64]) -> ValueSliceMut<'_> {
        ValueSliceMut::F64(y)
    }
}

/// One rank's rows as the API's distributed matrix.
#[allow(clippy::too_many_arguments)]
fn dist_matrix<'a, O: Erase, I: Erase, V: Val>(
    comm: &'a DistComm,
    (m, n): (usize, usize),
    row_start: usize,
    x_range: Option<(usize, usize)>,
    base: usize,
    offs: &'a [O],
    cols: &'a [I],
    vals: &'a [V],
) -> DistMatrix<'a> {
    DistMatrix {
        comm,
        global_rows: m,
        global_cols: n,
        row_start,
        x_range,
        local: AnyCsr {
            nrows: offs.len().saturating_sub(1),
            ncols: n,
            base,
            offsets: O::offsets(offs),
            indices: I::indices(cols),
            values: Some(V::erase(vals)),
            value_type: V::KIND,
        },
    }
}

/// One distributed product through the public API.
#[allow(clippy::too_many_arguments)]
fn execute<V: Val>(
    h: &Handle,
    plan: &mut DistPlan,
    alpha: f64,
    x: &[V],
    ldx: usize,
    beta: f64,
    y: &mut [V],
    ldy: usize,
) -> Result<spgemm::DistStats> {
    dist_spmm(h, plan, alpha, V::erase(x), ldx, beta, V::erase_mut(y), ldy)
}

/// splitmix64: the same stream on every rank.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn val(&mut self) -> f64 {
        // Values with few significant bits keep f32 products exact in most entries, but
        // sums of many still round: both kinds of comparison get exercised.
        (self.below(2001) as f64 - 1000.0) / 64.0
    }
}

/// A global CSR matrix (0-based, rows may be unsorted and hold duplicates).
struct Global {
    m: usize,
    n: usize,
    offs: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

fn gen_matrix(m: usize, n: usize, power: bool, seed: u64) -> Global {
    let mut r = Rng(seed);
    let mut offs = vec![0usize];
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for i in 0..m {
        let len = if power {
            // A few very long rows, most short: lengths ~ n / (1 + i') for a shuffled i'.
            let rank = (i * 7919 + 13) % m;
            (n / (1 + rank)).min(n).max(r.below(3))
        } else {
            r.below(9)
        };
        for _ in 0..len {
            cols.push(r.below(n));
            vals.push(r.val());
        }
        offs.push(cols.len());
    }
    Global {
        m,
        n,
        offs,
        cols,
        vals,
    }
}

/// A banded matrix: row i has entries at columns i - w .. i + w (clipped), scaled to n.
fn gen_banded(m: usize, n: usize, w: usize, seed: u64) -> Global {
    gen_band_far(m, n, w, None, seed)
}

/// [`gen_banded`] with, in every row `i % every == at` of `far = Some((every, at))`, one
/// more entry half the columns away: on thousands of rows per rank, 1D-halo's inner run
/// (rows reading no halo) with runs before and after it that do.
fn gen_band_far(m: usize, n: usize, w: usize, far: Option<(usize, usize)>, seed: u64) -> Global {
    let mut r = Rng(seed);
    let mut offs = vec![0usize];
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for i in 0..m {
        let c = i * n / m.max(1);
        for j in c.saturating_sub(w)..(c + w + 1).min(n) {
            cols.push(j);
            vals.push(r.val());
        }
        if far.is_some_and(|(every, at)| i % every == at) {
            cols.push((c + n / 2) % n);
            vals.push(r.val());
        }
        offs.push(cols.len());
    }
    Global {
        m,
        n,
        offs,
        cols,
        vals,
    }
}

/// The 1D-halo band of the checks: five diagonals, a far entry every 1999th row.
fn gen_band(m: usize, n: usize, seed: u64) -> Global {
    gen_band_far(m, n, 2, Some((1999, 700)), seed)
}

/// [`gen_band`] by nodes of three rows (an elasticity matrix's degrees of freedom): the
/// rows of a node share one column list (the band around the node's first row, and the far
/// entry where that row has one), each with its own values.
fn gen_band_nodes(m: usize, n: usize, seed: u64) -> Global {
    let band = gen_band(m, n, seed);
    let mut r = Rng(seed ^ 0x3);
    let mut offs = vec![0usize];
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    for i in 0..m {
        let f = i - i % 3;
        for &c in &band.cols[band.offs[f]..band.offs[f + 1]] {
            cols.push(c);
            vals.push(r.val());
        }
        offs.push(cols.len());
    }
    Global {
        m,
        n,
        offs,
        cols,
        vals,
    }
}

fn gen_dense(rows: usize, k: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    (0..rows * k).map(|_| r.val()).collect()
}

/// Row ranges of p ranks over m rows: balanced, with empty ranks, or geometric.
fn ranges(m: usize, p: usize, kind: usize) -> Vec<usize> {
    let mut s = vec![0usize; p + 1];
    match kind {
        0 => {
            for (q, x) in s.iter_mut().enumerate() {
                *x = q * m / p;
            }
        }
        1 => {
            // Ranks 1 and (for p > 3) p - 1 own nothing.
            let owners: Vec<usize> = (0..p)
                .filter(|&q| !(q == 1 || (p > 3 && q == p - 1)))
                .collect();
            let owners = if owners.is_empty() { vec![0] } else { owners };
            let mut acc = 0;
            let mut given = 0;
            for (q, x) in s.iter_mut().enumerate().take(p) {
                *x = acc;
                if owners.contains(&q) {
                    given += 1;
                    acc = given * m / owners.len();
                }
            }
            s[p] = m;
        }
        _ => {
            // Halving shares: rank 0 half, rank 1 a quarter, ...
            let mut left = m;
            for q in 0..p {
                let take = if q + 1 == p { left } else { left / 2 };
                s[q + 1] = s[q] + take;
                left -= take;
            }
        }
    }
    s
}

/// Element access in a layout.
fn idx(l: Layout, ld: usize, r: usize, c: usize) -> usize {
    match l {
        Layout::RowMajor => r * ld + c,
        Layout::ColMajor => c * ld + r,
    }
}

/// Copies rows r0..r1 of a row-major rows x k matrix into a layout with leading dimension ld.
fn to_layout<V: Scalar>(
    src: &[f64],
    k: usize,
    r0: usize,
    r1: usize,
    l: Layout,
    ld: usize,
) -> Vec<V> {
    let rows = r1 - r0;
    let len = match l {
        Layout::RowMajor => rows.saturating_sub(1) * ld + k,
        Layout::ColMajor => k.saturating_sub(1) * ld + rows,
    };
    let mut out = vec![V::from_f64(f64::NAN); if rows == 0 || k == 0 { 0 } else { len }];
    for r in 0..rows {
        for c in 0..k {
            out[idx(l, ld, r, c)] = V::from_f64(src[(r0 + r) * k + c]);
        }
    }
    out
}

/// The serial product of the whole matrix with the library's SpMM.
#[allow(clippy::too_many_arguments)]
fn serial<V: Val>(
    h: &Handle,
    a: &Global,
    vals: &[f64],
    x: &[f64],
    y0: &[f64],
    k: usize,
    l: Layout,
    alpha: f64,
    beta: f64,
) -> Vec<V> {
    let offs: Vec<i64> = a.offs.iter().map(|&o| o as i64).collect();
    let cols: Vec<i64> = a.cols.iter().map(|&c| c as i64).collect();
    let v: Vec<V> = vals.iter().map(|&x| V::from_f64(x)).collect();
    let ldx = if l == Layout::RowMajor { k } else { a.n.max(1) };
    let ldy = if l == Layout::RowMajor { k } else { a.m.max(1) };
    let xs = to_layout::<V>(x, k, 0, a.n, l, ldx);
    let mut ys = to_layout::<V>(y0, k, 0, a.m, l, ldy);
    let any = AnyCsr {
        nrows: a.m,
        ncols: a.n,
        base: 0,
        offsets: OffsetSlice::I64(&offs),
        indices: IndexSlice::I64(&cols),
        values: Some(V::erase(&v)),
        value_type: V::KIND,
    };
    let d = DenseArgs {
        layout: l,
        k,
        x: V::erase(&xs),
        ldx,
        y: V::erase_mut(&mut ys),
        ldy,
    };
    spgemm::spmm(h, Op::NonTranspose, alpha, &any, None, beta, d).expect("serial SpMM");
    // Back to row-major m x k.
    let mut out = vec![V::ZERO; a.m * k];
    for r in 0..a.m {
        for c in 0..k {
            out[r * k + c] = ys[idx(l, ldy, r, c)];
        }
    }
    out
}

/// One rank's copy of its rows in the index types and base of a case.
struct LocalA<O, I> {
    offs: Vec<O>,
    cols: Vec<I>,
}

fn local_rows<O: Idx, I: Idx>(a: &Global, r0: usize, r1: usize, base: usize) -> LocalA<O, I> {
    let s = a.offs[r0];
    let offs = (r0..=r1)
        .map(|i| O::try_from_usize(a.offs[i] - s + base).expect("offset fits"))
        .collect();
    let cols = a.cols[s..a.offs[r1]]
        .iter()
        .map(|&c| I::try_from_usize(c + base).expect("index fits"))
        .collect();
    LocalA { offs, cols }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    alg: Algorithm,
    grid: Option<Grid>,
    k: usize,
    layout: Layout,
    rect: bool,
    dist: usize,
    power: bool,
    /// `gen_band` with thousands of rows per rank instead of `gen_matrix`.
    band: bool,
    /// With `band`: rows in nodes of three with one column list (`gen_band_nodes`), which
    /// the SpMV plans multiply by row groups.
    nodes: bool,
    types: usize,
    f32: bool,
    ab: usize,
    seed: u64,
}

struct Report {
    passed: usize,
    failed: usize,
    me: usize,
}

impl Report {
    fn check(&mut self, ok: bool, what: &str) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            eprintln!("rank {}: FAILED {what}", self.me);
        }
    }
}

/// All ranks' verdicts combined: passes only where every rank passed.
fn all_ok(world: &SimpleCommunicator, ok: bool) -> bool {
    let mut r = 0i32;
    world.all_reduce_into(&(ok as i32), &mut r, SystemOperation::min());
    r == 1
}

const ABS: [(f64, f64); 4] = [(1.0, 0.0), (2.5, -0.5), (-1.0, 1.0), (0.0, 0.75)];

/// Runs a case; returns a description of the first mismatch on this rank, if any.
fn run_case<V: Val, O: Idx + Erase, I: Idx + Erase>(
    world: &SimpleCommunicator,
    comm: &DistComm,
    h: &Handle,
    c: &Case,
    base: usize,
) -> std::result::Result<(), String> {
    let p = comm.size();
    let me = comm.rank();
    let m = if c.band { 2600 * p } else { 60 + 7 * p } + (c.seed % 13) as usize;
    let n = if c.rect { m / 2 + 5 } else { m };
    let a = if c.band && c.nodes {
        gen_band_nodes(m, n, c.seed)
    } else if c.band && c.power {
        // Thousands of power-law rows per rank (an SpMV plan keeps them in length order).
        gen_matrix(m, n, true, c.seed)
    } else if c.band {
        gen_band(m, n, c.seed)
    } else {
        gen_matrix(m, n, c.power, c.seed)
    };
    let rows = ranges(m, p, c.dist);
    let xrows = if c.rect {
        ranges(n, p, (c.dist + 1) % 3)
    } else {
        rows.clone()
    };
    let (r0, r1) = (rows[me], rows[me + 1]);
    let (x0, x1) = (xrows[me], xrows[me + 1]);
    let k = c.k;
    let x = gen_dense(n, k, c.seed ^ 0x55);
    let y0 = gen_dense(m, k, c.seed ^ 0xAA);
    let (alpha, beta) = ABS[c.ab];
    let la = local_rows::<O, I>(&a, r0, r1, base);
    let vals_g: Vec<f64> = a.vals.clone();
    let lv: Vec<V> = vals_g[a.offs[r0]..a.offs[r1]]
        .iter()
        .map(|&v| V::from_f64(v))
        .collect();
    let dm = dist_matrix(
        comm,
        (m, n),
        r0,
        if c.rect { Some((x0, x1 - x0)) } else { None },
        base,
        &la.offs,
        &la.cols,
        &lv,
    );
    let mut opts = PlanOptions::new(k, c.layout);
    opts.algorithm = c.alg;
    opts.grid = c.grid;
    let mut plan = dist_spmm_plan(h, &dm, &opts).map_err(|e| format!("plan: {e}"))?;
    let g = plan.grid();
    // Leading dimensions above the minimum, to exercise strides.
    let ldx = match c.layout {
        Layout::RowMajor => k + 3,
        Layout::ColMajor => (x1 - x0) + 2,
    };
    let ldy = match c.layout {
        Layout::RowMajor => k + 1,
        Layout::ColMajor => (r1 - r0) + 5,
    };
    let xl = to_layout::<V>(&x, k, x0, x1, c.layout, ldx);
    let nan_y = beta == 0.0;
    let mut y: Vec<V> = if nan_y {
        vec![V::from_f64(f64::NAN); to_layout::<V>(&y0, k, r0, r1, c.layout, ldy).len()]
    } else {
        to_layout::<V>(&y0, k, r0, r1, c.layout, ldy)
    };
    let stats = execute(h, &mut plan, alpha, &xl, ldx, beta, &mut y, ldy)
        .map_err(|e| format!("execute: {e}"))?;
    let reference = serial::<V>(h, &a, &a.vals, &x, &y0, k, c.layout, alpha, beta);
    // Scale for the relative tolerance: |alpha| |A| |X| + |beta Y0|.
    let abs_vals: Vec<f64> = a.vals.iter().map(|v| v.abs()).collect();
    let abs_x: Vec<f64> = x.iter().map(|v| v.abs()).collect();
    let scale = serial::<f64>(
        h,
        &a,
        &abs_vals,
        &abs_x,
        &y0,
        k,
        Layout::RowMajor,
        alpha.abs(),
        0.0,
    );
    // Bitwise where each row's sum is one local product over the whole row in the caller's
    // layout: sA-1.5D with c = 1, 1D-halo, and any algorithm on one rank.
    let bitwise = (c.alg == Algorithm::SA15D && g.pc == 1)
        || c.alg == Algorithm::Halo1D
        || p == 1
        || alpha == 0.0;
    // Local verdicts are noted, not returned: every rank must still take part in the
    // collectives below.
    let mut fail: Option<String> = None;
    let tol = if V::KIND == ValueType::Float32 {
        1e-5
    } else {
        1e-12
    };
    for rr in 0..(r1 - r0) {
        for cc in 0..k {
            let got = y[idx(c.layout, ldy, rr, cc)];
            let want = reference[(r0 + rr) * k + cc];
            let ok = if bitwise {
                got.to_f64().to_bits() == want.to_f64().to_bits()
                    || (got.to_f64().is_nan() && want.to_f64().is_nan())
            } else {
                let s = scale[(r0 + rr) * k + cc] + (beta * y0[(r0 + rr) * k + cc]).abs();
                (got.to_f64() - want.to_f64()).abs() <= tol * s + f64::MIN_POSITIVE
            };
            if (!ok || got.to_f64().is_nan()) && fail.is_none() {
                fail = Some(format!(
                    "{} {}x{} Y[{}, {cc}] = {:?}, serial {:?} ({})",
                    plan.algorithm().name(),
                    g.pr,
                    g.pc,
                    r0 + rr,
                    got,
                    want,
                    if bitwise { "bitwise" } else { "tolerance" }
                ));
            }
        }
    }
    // Traffic: counted (all ranks) within 10% of the model's prediction.
    let mut total = 0u64;
    world.all_reduce_into(&stats.bytes_received, &mut total, SystemOperation::sum());
    let mut sent = 0u64;
    world.all_reduce_into(&stats.bytes_sent, &mut sent, SystemOperation::sum());
    let pred = if alpha == 0.0 {
        0.0
    } else {
        plan.predicted_bytes_total()
    };
    let close = if pred == 0.0 {
        total == 0
    } else {
        ((total as f64) - pred).abs() <= 0.10 * pred
    };
    if !close && fail.is_none() {
        fail = Some(format!(
            "{} {}x{}: counted {total} bytes, model {pred}",
            plan.algorithm().name(),
            g.pr,
            g.pc
        ));
    }
    // Two-sided traffic is conserved (what is sent is received).
    if !matches!(
        plan.algorithm(),
        Algorithm::SA2DAsync | Algorithm::SC2DAsync
    ) && sent != total
        && fail.is_none()
    {
        fail = Some(format!("sent {sent} bytes but received {total}"));
    }
    if plan.held_bytes() != plan.footprint() && fail.is_none() {
        fail = Some(format!(
            "{}: holds {} bytes, footprint predicted {}",
            plan.algorithm().name(),
            plan.held_bytes(),
            plan.footprint()
        ));
    }
    // Reuse: new X, then new values of A, through the same plan.
    let x2 = gen_dense(n, k, c.seed ^ 0x77);
    let xl2 = to_layout::<V>(&x2, k, x0, x1, c.layout, ldx);
    let vals2: Vec<f64> = a.vals.iter().map(|v| v * 0.5 - 1.0).collect();
    let lv2: Vec<V> = vals2[a.offs[r0]..a.offs[r1]]
        .iter()
        .map(|&v| V::from_f64(v))
        .collect();
    let dm2 = DistMatrix {
        local: AnyCsr {
            values: Some(V::erase(&lv2)),
            ..dm.local
        },
        ..dm
    };
    dist_spmm_update_values(h, &mut plan, &dm2).map_err(|e| format!("update_values: {e}"))?;
    let mut y2 = to_layout::<V>(&y0, k, r0, r1, c.layout, ldy);
    execute(h, &mut plan, alpha, &xl2, ldx, 0.5, &mut y2, ldy)
        .map_err(|e| format!("execute after update: {e}"))?;
    let ref2 = serial::<V>(h, &a, &vals2, &x2, &y0, k, c.layout, alpha, 0.5);
    let abs2: Vec<f64> = vals2.iter().map(|v| v.abs()).collect();
    let absx2: Vec<f64> = x2.iter().map(|v| v.abs()).collect();
    let scale2 = serial::<f64>(
        h,
        &a,
        &abs2,
        &absx2,
        &y0,
        k,
        Layout::RowMajor,
        alpha.abs(),
        0.0,
    );
    for rr in 0..(r1 - r0) {
        for cc in 0..k {
            let got = y2[idx(c.layout, ldy, rr, cc)].to_f64();
            let want = ref2[(r0 + rr) * k + cc].to_f64();
            let ok = if bitwise {
                got.to_bits() == want.to_bits()
            } else {
                let s = scale2[(r0 + rr) * k + cc] + (0.5 * y0[(r0 + rr) * k + cc]).abs();
                (got - want).abs() <= tol * s + f64::MIN_POSITIVE
            };
            if !ok && fail.is_none() {
                fail = Some(format!(
                    "reuse {}: Y[{}, {cc}] = {got}, serial {want}",
                    plan.algorithm().name(),
                    r0 + rr
                ));
            }
        }
    }
    fail.map_or(Ok(()), Err)
}

fn case_dispatch(
    world: &SimpleCommunicator,
    comm: &DistComm,
    h: &Handle,
    c: &Case,
) -> std::result::Result<(), String> {
    match (c.f32, c.types) {
        (false, 0) => run_case::<f64, i32, i32>(world, comm, h, c, 0),
        (false, 1) => run_case::<f64, i64, i64>(world, comm, h, c, 1),
        (false, _) => run_case::<f64, u64, i32>(world, comm, h, c, 0),
        (true, 0) => run_case::<f32, i32, i32>(world, comm, h, c, 1),
        (true, 1) => run_case::<f32, i64, i64>(world, comm, h, c, 0),
        (true, _) => run_case::<f32, u64, i32>(world, comm, h, c, 1),
    }
}

/// Statuses of every rank (to check that all agree).
fn statuses(world: &SimpleCommunicator, s: i32) -> Vec<i32> {
    let mut all = vec![0i32; world.size() as usize];
    world.all_gather_into(&s, &mut all[..]);
    all
}

fn code<T>(r: &Result<T>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.status as i32,
    }
}

/// One error check: every rank's status is `want` (rank 0 says which were not, and with
/// DIST_CHECK_VERBOSE prints the message).
fn expect_status<T>(
    world: &SimpleCommunicator,
    name: &str,
    r: &Result<T>,
    want: Status,
    rep: &mut Report,
) {
    let all = statuses(world, code(r));
    let ok = all.iter().all(|&s| s == want as i32);
    let me = world.rank();
    if me == 0 && !ok {
        eprintln!("{name}: statuses {all:?}, expected {want:?}");
    }
    if let Err(e) = r
        && me == 0
        && std::env::var_os("DIST_CHECK_VERBOSE").is_some()
    {
        eprintln!("{name}: {e}");
    }
    rep.check(all_ok(world, ok), name);
}

/// The projection (A whole on one process, the same even split) predicts what the
/// collective estimate does for every candidate, from the same network and local rate.
fn projection_check(
    world: &SimpleCommunicator,
    comm: &DistComm,
    h: &Handle,
    a: &Global,
    rep: &mut Report,
    name: &str,
) {
    let (p, me) = (comm.size(), comm.rank());
    let rows = ranges(a.m, p, 0);
    let (r0, r1) = (rows[me], rows[me + 1]);
    let la = local_rows::<i32, i32>(a, r0, r1, 0);
    let lv: Vec<f64> = a.vals[a.offs[r0]..a.offs[r1]].to_vec();
    let dm = dist_matrix(comm, (a.m, a.n), r0, None, 0, &la.offs, &la.cols, &lv);
    let opts = PlanOptions::new(4, Layout::RowMajor);
    let est = dist_spmm_estimate(h, &dm, &opts).expect("estimate");
    let offs: Vec<i64> = a.offs.iter().map(|&x| x as i64).collect();
    let cols: Vec<i64> = a.cols.iter().map(|&x| x as i64).collect();
    let whole = AnyCsr {
        nrows: a.m,
        ncols: a.n,
        base: 0,
        offsets: OffsetSlice::I64(&offs),
        indices: IndexSlice::I64(&cols),
        values: Some(ValueSlice::F64(&a.vals)),
        value_type: ValueType::Float64,
    };
    let (proj, _) = dist_spmm_project(&whole, p, &opts, est.net, &est.rate).expect("projection");
    let same = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    let ok = est.candidates.iter().all(|c| {
        proj.iter().any(|q| {
            q.algorithm == c.algorithm
                && q.grid == c.grid
                && same(q.time_s, c.time_s)
                && same(q.comm_s, c.comm_s)
                && same(q.bytes_total, c.bytes_total)
                && q.memory_max == c.memory_max
        })
    });
    rep.check(all_ok(world, ok), name);
}

/// Bad inputs: each must give the same status on every rank, and the next collective
/// must still work (nothing left half-done).
fn error_checks(world: &SimpleCommunicator, comm: &DistComm, h: &Handle, rep: &mut Report) {
    let p = comm.size();
    let me = comm.rank();
    let m = 40 + p;
    let a = gen_matrix(m, m, false, 99);
    let rows = ranges(m, p, 0);
    let (r0, r1) = (rows[me], rows[me + 1]);
    let la = local_rows::<i32, i32>(&a, r0, r1, 0);
    let lv: Vec<f64> = a.vals[a.offs[r0]..a.offs[r1]].to_vec();
    let good = dist_matrix(comm, (m, m), r0, None, 0, &la.offs, &la.cols, &lv);
    let opts = PlanOptions::new(4, Layout::RowMajor);
    let expect = |name: &str, r: Result<DistPlan>, want: Status, rep: &mut Report| {
        expect_status(world, name, &r, want, rep)
    };
    // A column index out of range on rank 1 only (rank 0 when alone).
    let bad_rank = 1.min(p - 1);
    let mut bad_cols = la.cols.clone();
    if me == bad_rank {
        bad_cols[0] = m as i32 + 7;
    }
    let bad_a = DistMatrix {
        local: AnyCsr {
            indices: IndexSlice::I32(&bad_cols),
            ..good.local
        },
        ..good
    };
    expect(
        "bad column index on one rank",
        dist_spmm_plan(h, &bad_a, &opts),
        Status::IndexOutOfRange,
        rep,
    );
    // Overlapping ranges: the last rank also claims its predecessor's last row (alone: a
    // range that starts at row 1 and so runs past the end).
    let over = if me + 1 == p {
        DistMatrix {
            row_start: if p == 1 { 1 } else { r0 - 1 },
            ..good
        }
    } else {
        good
    };
    expect(
        "overlapping row ranges",
        dist_spmm_plan(h, &over, &opts),
        Status::InvalidValue,
        rep,
    );
    // Mismatched global sizes: rank 0 says one more column.
    let mism = if me == 0 {
        DistMatrix {
            global_cols: m + 1,
            x_range: Some((r0, r1 - r0)),
            local: AnyCsr {
                ncols: m + 1,
                ..good.local
            },
            ..good
        }
    } else {
        good
    };
    // Alone, the sizes cannot disagree; they then contradict the X ranges instead.
    let want = if p == 1 {
        Status::InvalidValue
    } else {
        Status::DimensionMismatch
    };
    expect(
        "mismatched global sizes",
        dist_spmm_plan(h, &mism, &opts),
        want,
        rep,
    );
    // Over the memory limit: every rank fails with AllocFailed, message with the estimate.
    let lim = PlanOptions {
        memory_limit: Some(64),
        ..opts
    };
    let r = dist_spmm_plan(h, &good, &lim);
    let msg_ok = match &r {
        Err(e) => e.message.contains("bytes on rank") && e.message.contains("limit"),
        Ok(_) => false,
    };
    rep.check(
        all_ok(world, msg_ok),
        "memory-limit message names the estimate",
    );
    expect("over the memory limit", r, Status::AllocFailed, rep);
    // 1D-halo forced on a grid other than p x 1 (1 x p where p > 1): invalid on all ranks.
    if p > 1 {
        let wrong = PlanOptions {
            algorithm: Algorithm::Halo1D,
            grid: Some(Grid { pr: 1, pc: p }),
            ..opts
        };
        expect(
            "1D-halo on a 1 x p grid",
            dist_spmm_plan(h, &good, &wrong),
            Status::InvalidValue,
            rep,
        );
    }
    // 1D-halo with a bad column on one rank: the same status everywhere.
    let halo_bad = PlanOptions {
        algorithm: Algorithm::Halo1D,
        ..opts
    };
    expect(
        "1D-halo, bad index on one rank",
        dist_spmm_plan(h, &bad_a, &halo_bad),
        Status::IndexOutOfRange,
        rep,
    );
    // The estimate reports footprints before running; a limit at the smallest one works.
    let est = dist_spmm_estimate(h, &good, &opts).expect("estimate");
    projection_check(world, comm, h, &a, rep, "projection equals the estimate");
    let band = gen_band(2600 * p, 2600 * p, 7);
    projection_check(
        world,
        comm,
        h,
        &band,
        rep,
        "projection equals the estimate, band",
    );
    let least = est
        .candidates
        .iter()
        .map(|c| c.memory_max)
        .min()
        .unwrap_or(0);
    let fit = PlanOptions {
        memory_limit: Some(least),
        ..opts
    };
    let r = dist_spmm_plan(h, &good, &fit);
    let ok = r.as_ref().is_ok_and(|pl| pl.footprint() <= least);
    rep.check(
        all_ok(world, ok),
        "plan within a limit equal to the smallest footprint",
    );
    drop(r);
    // Different alpha on one rank: the execute fails alike everywhere.
    let mut plan = dist_spmm_plan(h, &good, &opts).expect("plan");
    let x = vec![1.0; (r1 - r0) * 4];
    let mut y = vec![0.0; (r1 - r0) * 4];
    let alpha = if me == 0 { 2.0 } else { 1.0 };
    let r = execute(h, &mut plan, alpha, &x, 4, 0.0, &mut y, 4);
    let all = statuses(world, code(&r));
    let want = if p == 1 {
        0
    } else {
        Status::InvalidValue as i32
    };
    rep.check(
        all_ok(world, all.iter().all(|&s| s == want)),
        "alpha differs on one rank",
    );
    // X too short on the last rank.
    let short = if me + 1 == p {
        &x[..x.len() - 1]
    } else {
        &x[..]
    };
    let r = execute(h, &mut plan, 1.0, short, 4, 0.0, &mut y, 4);
    let all = statuses(world, code(&r));
    let ok = all.iter().all(|&s| s == Status::InvalidValue as i32);
    rep.check(all_ok(world, ok), "short X on one rank");
    // New values with a changed structure on rank 0: PlanMismatch everywhere.
    let mut moved = la.cols.clone();
    if me == 0 {
        moved[0] = (moved[0] + 1) % m as i32;
    }
    let changed = DistMatrix {
        local: AnyCsr {
            indices: IndexSlice::I32(&moved),
            ..good.local
        },
        ..good
    };
    let r = dist_spmm_update_values(h, &mut plan, &changed);
    let all = statuses(world, code(&r));
    let ok = all.iter().all(|&s| s == Status::PlanMismatch as i32);
    rep.check(all_ok(world, ok), "update_values with a changed structure");
    // Still usable after all that.
    let r = execute(h, &mut plan, 1.0, &x, 4, 0.0, &mut y, 4);
    rep.check(all_ok(world, r.is_ok()), "plan usable after failed calls");
}

/// `--model M`: the model's candidates for an M x M power-law matrix, k = 32, next to one
/// timed execute of each (informative, not a check).
fn model_table(world: &SimpleCommunicator, comm: &DistComm, h: &Handle, m: usize) {
    let (p, me) = (comm.size(), comm.rank());
    let k = 32;
    let a = gen_matrix(m, m, true, 7);
    let rows = ranges(m, p, 0);
    let (r0, r1) = (rows[me], rows[me + 1]);
    let la = local_rows::<i64, i32>(&a, r0, r1, 0);
    let lv: Vec<f64> = a.vals[a.offs[r0]..a.offs[r1]].to_vec();
    let dm = dist_matrix(comm, (m, m), r0, None, 0, &la.offs, &la.cols, &lv);
    let opts = PlanOptions::new(k, Layout::RowMajor);
    let est = dist_spmm_estimate(h, &dm, &opts).expect("estimate");
    let x = vec![1.0; (r1 - r0) * k];
    let mut y = vec![0.0; (r1 - r0) * k];
    if me == 0 {
        println!(
            "{m} x {m}, nnz {}, k {k}, {p} ranks; alpha {:.2e} s, beta {:.2e} s/B",
            a.cols.len(),
            est.net.alpha_s,
            est.net.beta_s_per_byte
        );
        println!("algorithm   grid   model ms  measured ms  model MB  counted MB  max MB/rank");
    }
    for (n, c) in est.candidates.iter().enumerate() {
        let o = PlanOptions {
            algorithm: c.algorithm,
            grid: Some(c.grid),
            ..opts
        };
        let mut plan = dist_spmm_plan(h, &dm, &o).expect("plan");
        execute(h, &mut plan, 1.0, &x, k, 0.0, &mut y, k).expect("warm-up");
        let st = execute(h, &mut plan, 1.0, &x, k, 0.0, &mut y, k).expect("execute");
        let mut t = 0.0f64;
        world.all_reduce_into(&st.total_s, &mut t, SystemOperation::max());
        let mut b = 0u64;
        world.all_reduce_into(&st.bytes_received, &mut b, SystemOperation::sum());
        if me == 0 {
            println!(
                "{:<11} {}x{:<4} {:>8.3} {:>12.3} {:>9.3} {:>11.3} {:>12.3}{}",
                c.algorithm.name(),
                c.grid.pr,
                c.grid.pc,
                c.time_s * 1e3,
                t * 1e3,
                c.bytes_total / 1e6,
                b as f64 / 1e6,
                c.memory_max as f64 / 1e6,
                if n == est.chosen { "  <- auto" } else { "" }
            );
        }
    }
}

/// A small plan for the lifecycle checks (A = the error checks' matrix).
fn small_plan(comm: &DistComm, h: &Handle, alg: Algorithm) -> DistPlan {
    let (p, me) = (comm.size(), comm.rank());
    let m = 40 + p;
    let a = gen_matrix(m, m, false, 99);
    let rows = ranges(m, p, 0);
    let (r0, r1) = (rows[me], rows[me + 1]);
    let la = local_rows::<i32, i32>(&a, r0, r1, 0);
    let lv: Vec<f64> = a.vals[a.offs[r0]..a.offs[r1]].to_vec();
    let dm = dist_matrix(comm, (m, m), r0, None, 0, &la.offs, &la.cols, &lv);
    let mut opts = PlanOptions::new(4, Layout::RowMajor);
    opts.algorithm = alg;
    dist_spmm_plan(h, &dm, &opts).expect("small plan")
}

fn main() {
    // Before MPI_Init: an error, and no MPI call.
    let early = DistComm::from_fortran(0);
    let early_ok = matches!(&early, Err(e) if e.status == Status::InvalidValue
        && e.message.contains("not initialised"));
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    let me = world.rank() as usize;
    let p = world.size() as usize;
    let args: Vec<String> = std::env::args().collect();
    let forced: Option<Grid> = args.iter().position(|a| a == "--grid").and_then(|i| {
        let s = args.get(i + 1)?;
        let (r, c) = s.split_once('x')?;
        Some(Grid {
            pr: r.parse().ok()?,
            pc: c.parse().ok()?,
        })
    });
    let quick = args.iter().any(|a| a == "--quick");
    let mut h = Handle::new(1).expect("handle");
    h.options.backend = Backend::Cpu;
    // The library works on a duplicate; the Fortran-handle path is the C/Fortran one.
    // SAFETY: the world communicator is live; c2f only converts its handle.
    let fh = unsafe { mpi::ffi::RSMPI_Comm_c2f(world.as_raw()) };
    let comm = DistComm::from_fortran(fh).expect("communicator from its Fortran handle");
    if let Some(i) = args.iter().position(|a| a == "--model") {
        let m: usize = args
            .get(i + 1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(20_000);
        model_table(&world, &comm, &h, m);
        drop(comm);
        return;
    }
    let mut rep = Report {
        passed: 0,
        failed: 0,
        me,
    };
    if args.iter().any(|a| a == "--spgemm") {
        let n = spgemm_cases::run_all(&world, &comm, &mut h, &mut rep);
        let mut failed = 0usize;
        world.all_reduce_into(&rep.failed, &mut failed, SystemOperation::max());
        if me == 0 {
            println!("spgemm-dist-check --spgemm: {p} ranks, {n} cases");
            println!("{} passed, {} failed", rep.passed, failed);
        }
        drop(comm);
        drop(universe);
        std::process::exit(if failed == 0 { 0 } else { 1 });
    }
    let grids: Vec<Grid> = match forced {
        Some(g) => vec![g],
        None => (1..=p)
            .filter(|&d| p.is_multiple_of(d))
            .map(|d| Grid { pr: p / d, pc: d })
            .collect(),
    };
    let mut cases = Vec::new();
    let mut seed = 1u64;
    let ks: &[usize] = if quick { &[8] } else { &[1, 8, 64] };
    for &g in &grids {
        for alg in Algorithm::ALL {
            // 1D-halo runs on the p x 1 grid only.
            if alg == Algorithm::Halo1D && g.pc != 1 {
                continue;
            }
            for &k in ks {
                for layout in [Layout::RowMajor, Layout::ColMajor] {
                    for rect in [false, true] {
                        seed += 1;
                        cases.push(Case {
                            alg,
                            grid: Some(g),
                            k,
                            layout,
                            rect,
                            dist: (seed % 3) as usize,
                            power: seed % 4 == 1,
                            band: false,
                            nodes: false,
                            types: (seed % 3) as usize,
                            f32: seed % 5 == 2,
                            ab: (seed % 4) as usize,
                            seed,
                        });
                    }
                }
            }
        }
    }
    // 1D-halo on a band of thousands of rows per rank: an inner run multiplied while the
    // halo travels, and runs before and after it.
    if forced.is_none_or(|g| g.pc == 1) {
        for &k in ks {
            for layout in [Layout::RowMajor, Layout::ColMajor] {
                for (rect, dist) in [(false, 0), (true, 1), (false, 2)] {
                    seed += 1;
                    cases.push(Case {
                        alg: Algorithm::Halo1D,
                        grid: None,
                        k,
                        layout,
                        rect,
                        dist,
                        power: false,
                        band: true,
                        nodes: false,
                        types: (seed % 3) as usize,
                        f32: seed % 5 == 2,
                        ab: (seed % 4) as usize,
                        seed,
                    });
                }
            }
        }
        // SpMV by row groups (rows in nodes of three), by diagonal runs (the square band)
        // and in length order (power-law rows; the last two with a copy of the values that
        // `update_values` makes again), cut by the ranks' ranges and by the inner run at any
        // row, through 1D-halo and sA-1.5D.
        for (alg, nodes, power) in [
            (Algorithm::Halo1D, true, false),
            (Algorithm::SA15D, true, false),
            (Algorithm::SA15D, false, false),
            (Algorithm::Halo1D, false, true),
            (Algorithm::SA15D, false, true),
        ] {
            for layout in [Layout::RowMajor, Layout::ColMajor] {
                for (rect, dist) in [(false, 0), (true, 1), (false, 2)] {
                    seed += 1;
                    cases.push(Case {
                        alg,
                        grid: (alg == Algorithm::SA15D).then_some(Grid { pr: p, pc: 1 }),
                        k: 1,
                        layout,
                        rect,
                        dist,
                        power,
                        band: true,
                        nodes,
                        types: (seed % 3) as usize,
                        f32: seed % 5 == 2,
                        ab: (seed % 4) as usize,
                        seed,
                    });
                }
            }
        }
    }
    // Auto choices, both value types.
    for f32 in [false, true] {
        seed += 1;
        cases.push(Case {
            alg: Algorithm::Auto,
            grid: None,
            k: 8,
            layout: Layout::RowMajor,
            rect: false,
            dist: 2,
            power: true,
            band: false,
            nodes: false,
            types: 1,
            f32,
            ab: 1,
            seed,
        });
    }
    for c in &cases {
        let r = case_dispatch(&world, &comm, &h, c);
        if let Err(e) = &r {
            eprintln!("rank {me}: {c:?}: {e}");
        }
        rep.check(all_ok(&world, r.is_ok()), "case");
    }
    error_checks(&world, &comm, &h, &mut rep);
    rep.check(
        all_ok(&world, early_ok),
        "DistComm before MPI_Init is an error",
    );
    // An invalid Fortran handle: an error on every rank (no collective is reached).
    let bad = DistComm::from_fortran(987_654);
    let bad_ok = matches!(&bad, Err(e) if e.status == Status::InvalidValue);
    rep.check(all_ok(&world, bad_ok), "invalid Fortran handle");
    // A plan with RMA windows (where one-sided MPI works), kept past MPI_Finalize.
    let alg = if comm.rma_available().unwrap_or(false) {
        Algorithm::SC2DAsync
    } else {
        Algorithm::SA15D
    };
    let mut late = small_plan(&comm, &h, alg);
    let mut failed = 0usize;
    world.all_reduce_into(&rep.failed, &mut failed, SystemOperation::max());
    if me == 0 {
        println!("spgemm-dist-check: {p} ranks, {} cases", cases.len());
        println!("{} passed, {} failed", rep.passed, failed);
    }
    drop(universe);
    // After MPI_Finalize: errors without MPI calls; drops free nothing (no crash).
    let after = DistComm::from_fortran(fh);
    let mut post_ok = matches!(&after, Err(e) if e.message.contains("finalised"));
    // Larger than this rank's rows of the small plan's X and Y.
    let x = vec![1.0; 4 * (40 + p)];
    let mut y = vec![0.0; 4 * (40 + p)];
    post_ok &= matches!(execute(&h, &mut late, 1.0, &x, 4, 0.0, &mut y, 4),
        Err(e) if e.status == Status::InvalidValue);
    drop(late);
    drop(comm);
    if !post_ok {
        eprintln!("rank {me}: FAILED calls after MPI_Finalize");
    } else if me == 0 {
        println!("after MPI_Finalize: calls return an error, drops skip the frees");
    }
    std::process::exit(if failed == 0 && post_ok { 0 } else { 1 });
}
