//! SpMV (k = 1) kernels on every instruction-set path against a reference, and on the FMA
//! paths the kernel that reads A's own arrays (`SparseRows::raw`) against the generic one
//! (the same rows through a wrapper without `raw`) bit for bit: both sum each row in four
//! interleaved fused partial sums, so they must agree exactly.
//! Covers rows of every length 0..=40 (every tail of the 4- and 8-entry steps), 32- and
//! 64-bit column indices, 0/1-based, f32 and f64, both layouts with unit and padded
//! strides, beta = 0 over NaN, alpha = 0, and blocks cut at odd rows (1, 2 and 3 threads,
//! bitwise the same); and rows made of runs of consecutive columns (lengths 1..=17, as in
//! stencil matrices), with duplicated runs and shuffled (unsorted) rows.

use spgemm::CsrRef;
use spgemm::cpu::spmm::rows::{CsrRows, SparseRows};
use spgemm::cpu::spmm::{self as kern, Isa, Layout, Problem, SpmmScalar, SpmvPrep};
use spgemm::types::{Idx, Scalar};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn val(&mut self) -> f64 {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// 0-based rows: (columns, values). Row i has length i % 41, then random lengths.
fn matrix(rng: &mut Rng, nrows: usize, ncols: usize) -> Vec<Vec<(usize, f64)>> {
    (0..nrows)
        .map(|i| {
            let len = if i < 3 * 41 { i % 41 } else { rng.below(12) };
            (0..len).map(|_| (rng.below(ncols), rng.val())).collect()
        })
        .collect()
}

struct Case<'a> {
    rows: &'a [Vec<(usize, f64)>],
    ncols: usize,
    base: usize,
    layout: Layout,
    pad: usize,
    alpha: f64,
    beta: f64,
}

/// Rows of `R` without `raw`: the kernels take their generic path.
struct NoRaw<'a, R>(&'a R);
impl<V: Scalar, R: SparseRows<V>> SparseRows<V> for NoRaw<'_, R> {
    fn nrows(&self) -> usize {
        self.0.nrows()
    }
    fn start(&self, i: usize) -> usize {
        self.0.start(i)
    }
    fn check_rows(&self, lo: usize, hi: usize, x_rows: usize) {
        self.0.check_rows(lo, hi, x_rows)
    }
    unsafe fn col(&self, p: usize) -> usize {
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.0.col(p) }
    }
    unsafe fn val(&self, p: usize) -> V {
        // SAFETY: as above.
        unsafe { self.0.val(p) }
    }
}

/// CSR arrays of `rows` with index base `base`.
fn arrays<O: Idx, I: Idx, V: SpmmScalar>(
    rows: &[Vec<(usize, f64)>],
    base: usize,
) -> (Vec<O>, Vec<I>, Vec<V>) {
    let mut offs = vec![O::try_from_usize(base).unwrap()];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for r in rows {
        for &(j, v) in r {
            cols.push(I::try_from_usize(j + base).unwrap());
            vals.push(V::from_f64(v));
        }
        offs.push(O::try_from_usize(cols.len() + base).unwrap());
    }
    (offs, cols, vals)
}

/// Y's storage after the kernel run on `isa` with `threads` workers, in f64 (`generic`:
/// through `NoRaw`), and the SpMV blocks the calling pool thread wrote with non-temporal
/// stores (`kern::path_counts`; every block, with one thread); the blocks it summed in the
/// gather kernel's order go to `GATHERED`.
fn run<O: Idx, I: Idx, V: SpmmScalar>(
    c: &Case,
    isa: Isa,
    threads: usize,
    generic: bool,
    x: &[f64],
    y: &[f64],
) -> (Vec<f64>, usize) {
    let (offs, cols, vals) = arrays::<O, I, V>(c.rows, c.base);
    let csr = CsrRef::new(c.rows.len(), c.ncols, c.base, &offs, &cols, Some(&vals)).unwrap();
    let a = CsrRows { csr, vals: &vals };
    let (ldx, ldy) = match c.layout {
        Layout::RowMajor => (1 + c.pad, 1 + c.pad),
        Layout::ColMajor => (c.ncols + c.pad, c.rows.len() + c.pad),
    };
    let xv: Vec<V> = x.iter().map(|&v| V::from_f64(v)).collect();
    let mut yv: Vec<V> = y.iter().map(|&v| V::from_f64(v)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let p = Problem {
        k: 1,
        layout: c.layout,
        alpha: V::from_f64(c.alpha),
        beta: V::from_f64(c.beta),
        x: &xv,
        ldx,
        x_rows: c.ncols,
        y: &mut yv,
        ldy,
        a_checked: false,
        pack: None,
        pack_vecs: 0,
        pack_window: 0,
        spmv: None,
    };
    let (streamed, gathered) = pool.install(|| {
        let before = kern::path_counts();
        if generic {
            kern::run(isa, &NoRaw(&a), p, None, threads, None)
        } else {
            kern::run(isa, &a, p, None, threads, None)
        }
        let after = kern::path_counts();
        (
            after.spmv_stream - before.spmv_stream,
            after.spmv_gather - before.spmv_gather,
        )
    });
    GATHERED.set(gathered);
    (yv.iter().map(|&v| v.to_f64()).collect(), streamed)
}

thread_local! {
    /// Blocks the last `run` on this thread summed in the gather kernel's order (counted on
    /// the calling pool thread: every block with one thread).
    static GATHERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Storage of a k = 1 operand of `rows` rows: entry i at i * stride, padding in between.
fn vector(rng: &mut Rng, rows: usize, c: &Case, fill: f64) -> (Vec<f64>, usize) {
    let stride = match c.layout {
        Layout::RowMajor => 1 + c.pad,
        Layout::ColMajor => 1,
    };
    let len = if rows == 0 {
        0
    } else {
        (rows - 1) * stride + 1
    };
    let mut v = vec![7777.0; len];
    for i in 0..rows {
        v[i * stride] = if fill.is_nan() { f64::NAN } else { rng.val() };
    }
    (v, stride)
}

/// 0-based rows made of runs of consecutive columns (stencil-like), `ncols` >= 40: rows
/// 0..17 are one run of length 1..=17; row 17 + j holds runs of length (j % 17) + 1 with
/// gaps of 1 or 2 up to 40 entries; then rows of random runs (lengths 1..=17), some of
/// them repeated (duplicate columns), some rows shuffled (unsorted columns).
fn runs_matrix(rng: &mut Rng, nrows: usize, ncols: usize) -> Vec<Vec<(usize, f64)>> {
    (0..nrows)
        .map(|i| {
            let mut row = Vec::new();
            if i < 17 {
                let c0 = rng.below(ncols - i);
                row.extend((0..=i).map(|t| (c0 + t, rng.val())));
                return row;
            }
            let fixed = i < 2 * 17;
            let mut c = rng.below(4);
            while row.len() < 40 {
                let len = if fixed {
                    (i - 17) % 17 + 1
                } else {
                    1 + rng.below(17)
                };
                if c + len > ncols {
                    break;
                }
                row.extend((c..c + len).map(|t| (t, rng.val())));
                if !fixed && rng.below(4) == 0 {
                    // The same run again: duplicate columns.
                    row.extend((c..c + len).map(|t| (t, rng.val())));
                }
                c += len + 1 + rng.below(2);
            }
            if !fixed && rng.below(3) == 0 {
                for t in (1..row.len()).rev() {
                    row.swap(t, rng.below(t + 1));
                }
            }
            row
        })
        .collect()
}

fn check_all<O: Idx, I: Idx, V: SpmmScalar>(seed: u64, tol: f64) {
    let mut rng = Rng(seed | 1);
    let m = matrix(&mut rng, 3 * 41 + 150, 37);
    check_rows::<O, I, V>(&mut rng, &m, 37, tol);
    let m = runs_matrix(&mut rng, 200, 97);
    check_rows::<O, I, V>(&mut rng, &m, 97, tol);
}

fn check_rows<O: Idx, I: Idx, V: SpmmScalar>(
    rng: &mut Rng,
    m: &[Vec<(usize, f64)>],
    ncols: usize,
    tol: f64,
) {
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        for pad in [0, 2] {
            for base in [0, 1] {
                for (alpha, beta) in [(1.0, 0.0), (-0.75, 0.5), (0.0, 0.5), (0.0, 0.0), (2.0, 1.0)]
                {
                    let c = Case {
                        rows: m,
                        ncols,
                        base,
                        layout,
                        pad,
                        alpha,
                        beta,
                    };
                    let (x, sx) = vector(rng, ncols, &c, 0.0);
                    let nan_y = beta == 0.0;
                    let (y, sy) = vector(rng, m.len(), &c, if nan_y { f64::NAN } else { 0.0 });
                    // Reference in f64 with the inputs rounded to V.
                    let r = |v: f64| V::from_f64(v).to_f64();
                    let mut want = y.clone();
                    let mut mag = vec![0.0; m.len()];
                    for (i, row) in m.iter().enumerate() {
                        let (mut s, mut g) = (0.0, 0.0);
                        for &(j, v) in row {
                            s += r(v) * r(x[j * sx]);
                            g += (r(v) * r(x[j * sx])).abs();
                        }
                        let yb = if beta == 0.0 {
                            0.0
                        } else {
                            r(beta) * r(y[i * sy])
                        };
                        want[i * sy] = if alpha == 0.0 { yb } else { r(alpha) * s + yb };
                        mag[i] = (r(alpha) * g).abs() + yb.abs();
                    }
                    for isa in [Isa::Base, Isa::Avx2, Isa::Avx512] {
                        if !isa.available() {
                            eprintln!("skipping {isa:?}: not available on this machine");
                            continue;
                        }
                        let mut first: Option<Vec<f64>> = None;
                        for threads in [1, 2, 3] {
                            let (got, _) = run::<O, I, V>(&c, isa, threads, false, &x, &y);
                            let what = format!(
                                "{isa:?} {layout:?} pad {pad} base {base} alpha {alpha} beta {beta} {threads} threads"
                            );
                            for (p, (&g, &w)) in got.iter().zip(&want).enumerate() {
                                if p % sy != 0 {
                                    assert_eq!(
                                        g.to_bits(),
                                        r(w).to_bits(),
                                        "{what}: padding {p} changed"
                                    );
                                    continue;
                                }
                                let i = p / sy;
                                assert!(
                                    (g - w).abs() <= tol * (mag[i] + 1e-30),
                                    "{what}: row {i} (length {}): got {g}, want {w}",
                                    m[i].len()
                                );
                            }
                            // The raw-array kernel (FMA paths) and the generic one: same bits.
                            let (generic, _) = run::<O, I, V>(&c, isa, threads, true, &x, &y);
                            let same = got
                                .iter()
                                .zip(&generic)
                                .all(|(u, v)| u.to_bits() == v.to_bits());
                            assert!(
                                same,
                                "{what}: raw-array kernel bits differ from the generic kernel's"
                            );
                            // Bitwise independent of the thread count.
                            match &first {
                                None => first = Some(got),
                                Some(f) => assert!(
                                    f.iter().zip(&got).all(|(u, v)| u.to_bits() == v.to_bits()),
                                    "{what}: bits differ from the 1-thread run"
                                ),
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn spmv_f64_i32_cols() {
    check_all::<i32, i32, f64>(1, 1e-13);
}

#[test]
fn spmv_f64_i64_cols() {
    check_all::<i64, i64, f64>(2, 1e-13);
}

#[test]
fn spmv_f64_u64_offsets_i32_cols() {
    check_all::<u64, i32, f64>(3, 1e-13);
}

#[test]
fn spmv_f32_i32_cols() {
    check_all::<i32, i32, f32>(4, 1e-5);
}

#[test]
fn spmv_f32_i64_cols() {
    check_all::<i32, i64, f32>(5, 1e-5);
}

/// Y written with non-temporal stores (`spmv::SPMV_STREAM_A_BYTES` = 0: any A) against plain
/// stores: the same bits, padding untouched, for each index width, value type and base.
/// `kern::path_counts` shows that the streamed path ran when forced (beta = 0) and not
/// otherwise, so equal bits cannot come from both runs taking the cached stores.
fn streamed_same_bits<O: Idx, I: Idx, V: SpmmScalar>(seed: u64) {
    use spgemm::cpu::spmm::spmv::SPMV_STREAM_A_BYTES;
    use std::sync::atomic::Ordering;
    let mut rng = Rng(seed | 1);
    let ncols = 37;
    let m = matrix(&mut rng, 3 * 41 + 150, ncols);
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        for base in [0, 1] {
            for (alpha, beta) in [(1.0, 0.0), (-0.75, 0.0), (2.0, 1.0)] {
                let c = Case {
                    rows: &m,
                    ncols,
                    base,
                    layout,
                    pad: 0,
                    alpha,
                    beta,
                };
                let (x, _) = vector(&mut rng, ncols, &c, 0.0);
                let (y, _) = vector(&mut rng, m.len(), &c, f64::NAN);
                for isa in [Isa::Avx2, Isa::Avx512] {
                    if !isa.available() {
                        continue;
                    }
                    for threads in [1, 2] {
                        SPMV_STREAM_A_BYTES.store(usize::MAX, Ordering::Relaxed);
                        let (cached, nt_cached) = run::<O, I, V>(&c, isa, threads, false, &x, &y);
                        SPMV_STREAM_A_BYTES.store(0, Ordering::Relaxed);
                        let (streamed, nt_streamed) =
                            run::<O, I, V>(&c, isa, threads, false, &x, &y);
                        SPMV_STREAM_A_BYTES.store(32 << 20, Ordering::Relaxed);
                        let (generic, _) = run::<O, I, V>(&c, isa, threads, true, &x, &y);
                        let same = |u: &[f64], v: &[f64]| {
                            u.iter().zip(v).all(|(p, q)| p.to_bits() == q.to_bits())
                        };
                        let what = format!(
                            "{isa:?} {layout:?} base {base} {alpha}/{beta} {threads} threads"
                        );
                        // The streamed path really ran (beta = 0 only), and only when asked.
                        assert_eq!(nt_cached, 0, "{what}: streamed with the threshold off");
                        if threads == 1 {
                            assert_eq!(
                                nt_streamed > 0,
                                beta == 0.0,
                                "{what}: {nt_streamed} streamed blocks"
                            );
                        }
                        assert!(same(&cached, &streamed), "{what}: streamed stores differ");
                        assert!(
                            same(&cached, &generic),
                            "{what}: differs from the generic kernel"
                        );
                        if beta == 0.0 {
                            assert!(cached.iter().all(|v| !v.is_nan()), "{what}: Y not written");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn spmv_streamed_stores_give_the_cached_bits() {
    streamed_same_bits::<i32, i32, f64>(11);
    streamed_same_bits::<i64, i64, f64>(12);
    streamed_same_bits::<u64, i32, f32>(13);
    streamed_same_bits::<i32, i64, f32>(14);
}

/// The gather kernel's order (8 lanes, `fast_gather`) is taken on the AVX-512 path exactly
/// where this process chose it (`SPGEMM_SPMV_GATHER`, or the CPU), by the raw-array kernel
/// and by the generic one alike, never on the other paths; `check_rows` above compares the
/// two bit for bit. `make check` runs this file again with `SPGEMM_SPMV_GATHER=0` and `=1`,
/// so both orders are checked on every AVX-512 machine.
#[test]
fn spmv_gather_order_where_chosen() {
    let mut rng = Rng(21);
    let ncols = 37;
    let m = matrix(&mut rng, 3 * 41 + 150, ncols);
    let c = Case {
        rows: &m,
        ncols,
        base: 1,
        layout: Layout::ColMajor,
        pad: 0,
        alpha: 1.0,
        beta: 0.0,
    };
    let (x, _) = vector(&mut rng, ncols, &c, 0.0);
    let (y, _) = vector(&mut rng, m.len(), &c, 0.0);
    let chosen = spgemm::platform::isa::fast_gather();
    if let Ok(v) = std::env::var("SPGEMM_SPMV_GATHER")
        && Isa::Avx512.available()
    {
        assert_eq!(
            chosen,
            v.trim() == "1",
            "SPGEMM_SPMV_GATHER={v} not followed"
        );
    }
    for isa in [Isa::Base, Isa::Avx2, Isa::Avx512] {
        if !isa.available() {
            continue;
        }
        for generic in [false, true] {
            run::<i32, i32, f64>(&c, isa, 1, generic, &x, &y);
            let g = GATHERED.get();
            assert_eq!(
                g > 0,
                chosen && isa == Isa::Avx512,
                "{isa:?} generic {generic}: {g} gathered blocks, fast_gather {chosen}"
            );
        }
    }
}

/// 0-based rows in runs of 1..=6 rows with one column list (0..=13 columns, repeats and any
/// order), each row with its own values: the row groups of FEM matrices.
fn grouped_matrix(rng: &mut Rng, nrows: usize, ncols: usize) -> Vec<Vec<(usize, f64)>> {
    let mut rows = Vec::new();
    while rows.len() < nrows {
        let cols: Vec<usize> = (0..rng.below(14)).map(|_| rng.below(ncols)).collect();
        for _ in 0..1 + rng.below(6) {
            rows.push(cols.iter().map(|&c| (c, rng.val())).collect());
        }
    }
    rows.truncate(nrows);
    rows
}

/// Y of an SpMV of rows `r0..r1` of `rows` (arrays of their own, as a distributed tile's
/// runs), A checked in full (`checked`) or by the kernels, with an analysis `prep` of the
/// whole matrix (`first` = r0) or without; and the chunks the calling thread summed with
/// the analysis.
#[allow(clippy::too_many_arguments)]
fn run_range<O: Idx, I: Idx, V: SpmmScalar>(
    c: &Case,
    (r0, r1): (usize, usize),
    checked: bool,
    prep: Option<SpmvPrep<'_, V>>,
    isa: Isa,
    threads: usize,
    x: &[f64],
    y: &[f64],
) -> (Vec<u64>, usize) {
    let rows = &c.rows[r0..r1];
    let (offs, cols, vals) = arrays::<O, I, V>(rows, c.base);
    let csr = CsrRef::new(rows.len(), c.ncols, c.base, &offs, &cols, Some(&vals)).unwrap();
    let a = CsrRows { csr, vals: &vals };
    let (ldx, ldy) = match c.layout {
        Layout::RowMajor => (1 + c.pad, 1 + c.pad),
        Layout::ColMajor => (c.ncols + c.pad, rows.len() + c.pad),
    };
    let stride = if c.layout == Layout::RowMajor { ldy } else { 1 };
    let xv: Vec<V> = x.iter().map(|&v| V::from_f64(v)).collect();
    let mut yv: Vec<V> = y[..(rows.len().max(1) - 1) * stride + 1]
        .iter()
        .map(|&v| V::from_f64(v))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let p = Problem {
        k: 1,
        layout: c.layout,
        alpha: V::from_f64(c.alpha),
        beta: V::from_f64(c.beta),
        x: &xv,
        ldx,
        x_rows: c.ncols,
        y: &mut yv,
        ldy,
        a_checked: checked,
        pack: None,
        pack_vecs: 0,
        pack_window: 0,
        spmv: prep.map(|s| (s, r0)),
    };
    let special = |n: kern::PathCounts| n.spmv_grouped + n.spmv_diag + n.spmv_ordered;
    let grouped = pool.install(|| {
        let before = special(kern::path_counts());
        kern::run(isa, &a, p, None, threads, None);
        special(kern::path_counts()) - before
    });
    let bits = yv.iter().map(|&v| v.to_f64().to_bits()).collect();
    (bits, grouped)
}

/// The SpMV by row groups (`spmv::grouped_rows`, PETSc's inodes; the distributed plans'
/// tiles) gives the ungrouped kernel's bits: groups of 1 to 4 rows, longer runs split,
/// groups cut by the chunks of 1-3 threads and by the ends of a range of rows (`first`),
/// rows of every tail length, beta = 0 over NaN and beta != 0, both layouts, and it is
/// taken wherever the FMA kernels read A's arrays with unit strides and no gathers.
fn grouped_same_bits<O: Idx, I: Idx, V: SpmmScalar>(seed: u64, base: usize) {
    let mut rng = Rng(seed);
    let ncols = 29;
    let m = grouped_matrix(&mut rng, 600, ncols);
    let mut offs = vec![0i64];
    let mut cols = Vec::new();
    for r in &m {
        cols.extend(r.iter().map(|&(j, _)| j as i32));
        offs.push(cols.len() as i64);
    }
    let whole = CsrRef::<i64, i32, f64>::new(m.len(), ncols, 0, &offs, &cols, None).unwrap();
    let groups = spgemm::cpu::row_groups::RowGroups::detect(&whole)
        .unwrap()
        .expect("the grouped matrix has row groups");
    assert!(groups.len() < m.len() * 2 / 3, "{}", groups.describe());
    let gather = spgemm::platform::isa::fast_gather();
    for layout in [Layout::ColMajor, Layout::RowMajor] {
        for (pad, alpha, beta) in [(0, 1.0, 0.0), (0, -0.75, 0.5), (2, 1.25, 0.0)] {
            let c = Case {
                rows: &m,
                ncols,
                base,
                layout,
                pad,
                alpha,
                beta,
            };
            let (x, _) = vector(&mut rng, ncols, &c, 0.0);
            let fill = if beta == 0.0 { f64::NAN } else { 0.0 };
            let (y, _) = vector(&mut rng, m.len(), &c, fill);
            for range in [(0, m.len()), (5, m.len() - 3), (7, 7 + m.len() / 2), (4, 4)] {
                for isa in [Isa::Base, Isa::Avx2, Isa::Avx512] {
                    if !isa.available() {
                        continue;
                    }
                    for (threads, checked) in
                        [(1, true), (2, true), (3, true), (1, false), (3, false)]
                    {
                        let (want, _) =
                            run_range::<O, I, V>(&c, range, true, None, isa, threads, &x, &y);
                        let (got, n) = run_range::<O, I, V>(
                            &c,
                            range,
                            checked,
                            Some(SpmvPrep::Groups(&groups)),
                            isa,
                            threads,
                            &x,
                            &y,
                        );
                        let at = format!(
                            "{layout:?} pad {pad} beta {beta} rows {range:?} {isa:?} threads {threads} checked {checked}"
                        );
                        assert_eq!(got, want, "{at}");
                        let unit = pad == 0 || layout == Layout::ColMajor;
                        let taken = isa != Isa::Base
                            && unit
                            && !(gather && isa == Isa::Avx512)
                            && range.1 > range.0;
                        // With several threads the calling thread may take no chunk.
                        if threads == 1 {
                            assert_eq!(n > 0, taken, "{at}: {n} grouped chunks");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn spmv_row_groups_give_the_ungrouped_bits() {
    grouped_same_bits::<i32, i32, f64>(31, 0);
    grouped_same_bits::<i64, i64, f32>(32, 1);
    grouped_same_bits::<u64, i32, f64>(33, 1);
    grouped_same_bits::<i32, i64, f32>(34, 0);
}

/// The checked grouped kernel (A not validated in full) on groups that no longer fit A:
/// rows of a group whose lengths differ are summed one by one (the ungrouped bits), and a
/// column outside X is reported by the check pass, never read.
#[test]
fn spmv_checked_row_groups_on_a_changed_structure() {
    let mut rng = Rng(41);
    let ncols = 23;
    let m = grouped_matrix(&mut rng, 300, ncols);
    let mut offs = vec![0i64];
    let mut cols = Vec::new();
    for r in &m {
        cols.extend(r.iter().map(|&(j, _)| j as i32));
        offs.push(cols.len() as i64);
    }
    let whole = CsrRef::<i64, i32, f64>::new(m.len(), ncols, 0, &offs, &cols, None).unwrap();
    let groups = spgemm::cpu::row_groups::RowGroups::detect(&whole)
        .unwrap()
        .expect("the grouped matrix has row groups");
    // Every group's second row gets one more entry.
    let mut changed = m.clone();
    for g in groups.iter().filter(|g| g.len() > 1) {
        let e = (rng.below(ncols), rng.val());
        changed[g.start + 1].push(e);
    }
    let isas: Vec<Isa> = [Isa::Avx2, Isa::Avx512]
        .into_iter()
        .filter(|i| i.available())
        .collect();
    for layout in [Layout::ColMajor, Layout::RowMajor] {
        let c = Case {
            rows: &changed,
            ncols,
            base: 0,
            layout,
            pad: 0,
            alpha: 1.5,
            beta: 0.0,
        };
        let (x, _) = vector(&mut rng, ncols, &c, 0.0);
        let (y, _) = vector(&mut rng, changed.len(), &c, f64::NAN);
        for &isa in &isas {
            let all = (0, changed.len());
            let (want, _) = run_range::<i32, i32, f64>(&c, all, true, None, isa, 1, &x, &y);
            let (got, n) = run_range::<i32, i32, f64>(
                &c,
                all,
                false,
                Some(SpmvPrep::Groups(&groups)),
                isa,
                1,
                &x,
                &y,
            );
            assert_eq!(got, want, "{layout:?} {isa:?}");
            if !(isa == Isa::Avx512 && spgemm::platform::isa::fast_gather()) {
                assert!(
                    n > 0,
                    "{layout:?} {isa:?}: the grouped kernel was not taken"
                );
            }
        }
    }
    // A column index past X in the first row of a group of three.
    let g = groups
        .iter()
        .find(|g| g.len() == 3 && !m[g.start].is_empty())
        .expect("a non-empty group of three");
    let mut bad = m.clone();
    bad[g.start][0].0 = ncols + 5;
    let c = Case {
        rows: &bad,
        ncols,
        base: 0,
        layout: Layout::ColMajor,
        pad: 0,
        alpha: 1.0,
        beta: 0.0,
    };
    let x = vec![1.0; ncols];
    let y = vec![0.0; bad.len()];
    for &isa in &isas {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_range::<i32, i32, f64>(
                &c,
                (0, bad.len()),
                false,
                Some(SpmvPrep::Groups(&groups)),
                isa,
                1,
                &x,
                &y,
            )
        }));
        let msg = r.expect_err("a column past X must be reported");
        let text = msg
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| msg.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(text.contains("column"), "{isa:?}: {text}");
    }
}

/// A banded matrix with the diagonals `offs` (rows cut at the borders), every `gap`-th row
/// given one entry less and every `extra`-th one more (runs broken), values random (some
/// zero).
fn diag_matrix(
    rng: &mut Rng,
    m: usize,
    offs: &[isize],
    gap: usize,
    extra: usize,
) -> Vec<Vec<(usize, f64)>> {
    (0..m)
        .map(|i| {
            let mut r: Vec<(usize, f64)> = offs
                .iter()
                .filter_map(|&d| usize::try_from(i as isize + d).ok().filter(|&c| c < m))
                .map(|c| (c, if rng.below(9) == 0 { 0.0 } else { rng.val() }))
                .collect();
            if i % gap == gap / 2 && r.len() > 1 {
                r.remove(r.len() / 2);
            }
            if i % extra == 1 {
                r.push((rng.below(m), rng.val()));
            }
            r
        })
        .collect()
}

/// An SpMV with the analysis `prep` of the whole matrix `rows` (`ncols` columns, stored
/// from `base`) gives the bits of the one without, over rows `ranges`, both layouts (a
/// padded one strided), beta = 0 over NaN and beta != 0, 1-3 threads, every ISA the machine
/// has; with one thread the analysis is used exactly where `taken(isa)` and X and Y have
/// unit strides.
fn prep_same_bits<O: Idx, I: Idx, V: SpmmScalar>(
    rng: &mut Rng,
    (rows, ncols, base): (&[Vec<(usize, f64)>], usize, usize),
    prep: SpmvPrep<'_, V>,
    ranges: &[(usize, usize)],
    taken: impl Fn(Isa) -> bool,
    what: &str,
) {
    for layout in [Layout::ColMajor, Layout::RowMajor] {
        for (pad, alpha, beta) in [(0, 1.0, 0.0), (0, -0.75, 0.5), (2, 1.25, 0.0)] {
            let c = Case {
                rows,
                ncols,
                base,
                layout,
                pad,
                alpha,
                beta,
            };
            let (x, _) = vector(rng, ncols, &c, 0.0);
            let fill = if beta == 0.0 { f64::NAN } else { 0.0 };
            let (y, _) = vector(rng, rows.len(), &c, fill);
            for &range in ranges {
                for isa in [Isa::Base, Isa::Avx2, Isa::Avx512] {
                    if !isa.available() {
                        continue;
                    }
                    for threads in [1, 2, 3] {
                        let run =
                            |p| run_range::<O, I, V>(&c, range, true, p, isa, threads, &x, &y);
                        let (want, _) = run(None);
                        let (got, n) = run(Some(prep));
                        let at = format!(
                            "{layout:?} pad {pad} beta {beta} rows {range:?} {isa:?} threads {threads}"
                        );
                        assert_eq!(got, want, "{at}");
                        let unit = pad == 0 || layout == Layout::ColMajor;
                        if threads == 1 {
                            assert_eq!(n > 0, taken(isa) && unit, "{at}: {n} chunks {what}");
                        }
                    }
                }
            }
        }
    }
}

/// The SpMV by diagonal runs (`spmv::diag_rows`, the distributed SpMV plans' stencil
/// tiles) gives the CSR kernel's bits: patterns of 1 to 9 diagonals (every tail length of
/// the four chains), runs broken by short and long rows and by the borders, blocks cut by
/// the chunks of 1-3 threads and by the ends of a range of rows (`first`), beta = 0 over
/// NaN and beta != 0, both layouts; and it is taken on the AVX-512 path without fast
/// gathers (the only path it serves).
fn diag_same_bits<O: Idx, I: Idx, V: SpmmScalar>(seed: u64, base: usize) {
    use spgemm::cpu::diag_runs::DiagRuns;
    let mut rng = Rng(seed);
    let gather = spgemm::platform::isa::fast_gather();
    let width = 64 / std::mem::size_of::<V>();
    let patterns: [&[isize]; 5] = [
        &[0],
        &[-1, 0, 1],
        &[-17, -1, 0, 1, 17],
        &[-40, -9, -1, 0, 1, 9, 40],
        &[-30, -29, -28, -1, 0, 1, 28, 29, 30],
    ];
    for offs in patterns {
        let m = 700;
        let rows = diag_matrix(&mut rng, m, offs, 97, 131);
        let (o, c, v) = arrays::<i64, i32, V>(&rows, 0);
        let whole = CsrRef::new(m, m, 0, &o, &c, Some(&v)).unwrap();
        let dr = DiagRuns::detect(&whole, width, usize::MAX)
            .unwrap()
            .expect("a banded matrix has diagonal runs");
        assert_eq!(dr.offsets(), offs);
        assert!(
            DiagRuns::detect(&whole, width, dr.bytes() - 1)
                .unwrap()
                .is_none()
        );
        let ranges = [
            (0, m),
            (5, m - 3),
            (7, 7 + m / 2),
            (3 * width + 1, 5 * width - 1),
        ];
        let taken = |isa: Isa| isa == Isa::Avx512 && !gather;
        let what = format!("{offs:?} by diagonals");
        prep_same_bits::<O, I, V>(
            &mut rng,
            (&rows, m, base),
            SpmvPrep::Diags(&dr),
            &ranges,
            taken,
            &what,
        );
    }
    // A 7-point stencil on a 24^3 grid: the interior pattern is found, though every 24th
    // row starts a grid line (a sample stride in phase with the grid would see boundary
    // rows only).
    let g = 24usize;
    let rows: Vec<Vec<(usize, f64)>> = (0..g * g * g)
        .map(|i| {
            let (x, y, z) = (i % g, i / g % g, i / (g * g));
            let mut r = Vec::new();
            for (ok, d) in [
                (z > 0, -576isize),
                (y > 0, -24),
                (x > 0, -1),
                (true, 0),
                (x + 1 < g, 1),
                (y + 1 < g, 24),
                (z + 1 < g, 576),
            ] {
                if ok {
                    r.push(((i as isize + d) as usize, rng.val()));
                }
            }
            r
        })
        .collect();
    let (o, c, v) = arrays::<i64, i32, V>(&rows, 0);
    let whole = CsrRef::new(g * g * g, g * g * g, 0, &o, &c, Some(&v)).unwrap();
    let dr = DiagRuns::detect(&whole, width, usize::MAX)
        .unwrap()
        .expect("a 24^3 stencil has diagonal runs");
    assert_eq!(dr.offsets(), &[-576, -24, -1, 0, 1, 24, 576]);
    // Rows without a common pattern: no runs.
    let rows: Vec<Vec<(usize, f64)>> = (0..500)
        .map(|_| (0..4).map(|_| (rng.below(500), rng.val())).collect())
        .collect();
    let (o, c, v) = arrays::<i64, i32, V>(&rows, 0);
    let whole = CsrRef::new(500, 500, 0, &o, &c, Some(&v)).unwrap();
    assert!(
        DiagRuns::detect(&whole, width, usize::MAX)
            .unwrap()
            .is_none()
    );
}

#[test]
fn spmv_diagonal_runs_give_the_csr_bits() {
    diag_same_bits::<i32, i32, f64>(51, 0);
    diag_same_bits::<i64, i64, f32>(52, 1);
    diag_same_bits::<u64, i32, f64>(53, 1);
}

/// The SpMV in length order (`spmv::ordered_rows`, the distributed SpMV plans' tiles with
/// rows of varied length) gives the CSR kernel's bits: rows of 0 to 40 entries (every tail
/// length), three windows and a partial one, windows cut by the chunks of 1-3 threads and
/// by the ends of a range (`first`), beta = 0 over NaN and beta != 0, both layouts, both
/// FMA paths; and it is taken wherever the FMA kernels read A's arrays with unit strides
/// and no gathers. Rows of one length, or a budget below the copy, give no order.
fn ordered_same_bits<O: Idx, I: Idx, V: SpmmScalar>(seed: u64, base: usize) {
    use spgemm::cpu::length_order::{LengthOrder, WINDOW};
    let mut rng = Rng(seed);
    let gather = spgemm::platform::isa::fast_gather();
    let (m, ncols) = (3 * WINDOW + 300, 700);
    let rows: Vec<Vec<(usize, f64)>> = (0..m)
        .map(|i| {
            let n = if i % 7 == 0 {
                rng.below(41)
            } else {
                rng.below(9)
            };
            (0..n).map(|_| (rng.below(ncols), rng.val())).collect()
        })
        .collect();
    let (o, c, v) = arrays::<i64, i32, V>(&rows, 0);
    let whole = CsrRef::new(m, ncols, 0, &o, &c, Some(&v)).unwrap();
    let ord = LengthOrder::detect(&whole, usize::MAX)
        .unwrap()
        .expect("rows of varied length are ordered");
    assert!(
        LengthOrder::detect(&whole, ord.bytes() - 1)
            .unwrap()
            .is_none()
    );
    let ranges = [
        (0, m),
        (5, m - 3),
        (WINDOW, m),
        (7, 2 * WINDOW + 9),
        (9, 900),
    ];
    let taken = |isa: Isa| isa != Isa::Base && !(gather && isa == Isa::Avx512);
    let prep = SpmvPrep::Ordered(&ord);
    prep_same_bits::<O, I, V>(
        &mut rng,
        (&rows, ncols, base),
        prep,
        &ranges,
        taken,
        "in length order",
    );
    let band = diag_matrix(&mut rng, 2 * WINDOW, &[-3, 0, 3], 1 << 20, 1 << 20);
    let (o, c, v) = arrays::<i64, i32, V>(&band, 0);
    let whole = CsrRef::new(band.len(), band.len(), 0, &o, &c, Some(&v)).unwrap();
    assert!(LengthOrder::detect(&whole, usize::MAX).unwrap().is_none());
}

#[test]
fn spmv_length_order_gives_the_csr_bits() {
    ordered_same_bits::<i32, i32, f64>(61, 0);
    ordered_same_bits::<i64, i64, f32>(62, 1);
    ordered_same_bits::<u64, i32, f64>(63, 1);
}
