//! Where the serial small-product path stops paying (development aid for
//! `cpu::small::SMALL_MAX_WORK` and, with one thread, `SMALL_MAX_WORK_ONE_THREAD`, under
//! which every case here falls): the same products on one handle with the small path on
//! and off, alternated round by round, wall time per product (median of the rounds).
//! Products above the threshold take the parallel path either way: to measure beyond it,
//! build with the threshold raised (below `AUTO_MIN_INPUT_NNZ`; docs/DESIGN-NOTES.md,
//! cpu::small). Usage: small_crossover [threads] [rounds]
//! Each line: input, work (multiplications + rows + entries of A and B), nnz(C), whether
//! the product is small, then multiply (library-owned C) and reuse (numeric on a kept plan
//! into the same arrays) in microseconds, small path on / off.

use std::time::Instant;

use spgemm::types::{IndexType, ValueType};
use spgemm::{AnyCsr, Handle, IndexSlice, IndexSliceMut, OffsetSlice, OutputFormat, ValueSlice};
use spgemm::{ValueSliceMut, multiply, numeric, symbolic};

struct Mat {
    n: usize,
    ptr: Vec<i32>,
    col: Vec<i32>,
    val: Vec<f64>,
}

impl Mat {
    fn any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.n,
            ncols: self.n,
            base: 0,
            offsets: OffsetSlice::I32(&self.ptr),
            indices: IndexSlice::I32(&self.col),
            values: Some(ValueSlice::F64(&self.val)),
            value_type: ValueType::Float64,
        }
    }
}

/// n x n, 0 to 10 entries per row (5 on average) in random columns.
fn random(n: usize, seed: u64) -> Mat {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let (mut ptr, mut col, mut val) = (vec![0i32], vec![], vec![]);
    for _ in 0..n {
        for _ in 0..next() % 11 {
            col.push((next() % n as u64) as i32);
            val.push((next() % 7) as f64 + 0.5);
        }
        ptr.push(col.len() as i32);
    }
    Mat { n, ptr, col, val }
}

/// The 5-point Laplacian on a g x g grid.
fn laplacian(g: usize) -> Mat {
    let (mut ptr, mut col, mut val) = (vec![0i32], vec![], vec![]);
    for i in 0..g {
        for j in 0..g {
            let r = (i * g + j) as i32;
            let g = g as i32;
            for (c, v) in [
                (r - g, -1.0),
                (r - 1, -1.0),
                (r, 4.0),
                (r + 1, -1.0),
                (r + g, -1.0),
            ] {
                let same_row = (c - r).abs() != 1 || c / g == r / g;
                if c >= 0 && c < g * g && same_row {
                    col.push(c);
                    val.push(v);
                }
            }
            ptr.push(col.len() as i32);
        }
    }
    Mat {
        n: g * g,
        ptr,
        col,
        val,
    }
}

const FORMAT: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Microseconds per call of `f`, in batches of about 3 ms.
fn per_call(f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let reps = (3e-3 / t.elapsed().as_secs_f64().max(1e-7)).clamp(1.0, 10_000.0) as usize;
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / reps as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads = args.get(1).map_or(0, |s| s.parse().unwrap());
    let rounds = args.get(2).map_or(9, |s| s.parse().unwrap());
    let mut h = Handle::new(threads).unwrap();
    println!("threads {}", h.threads());
    let mut cases: Vec<(String, Mat, Mat)> = Vec::new();
    for n in [100, 300, 1000, 2000, 3000, 5000, 10000, 20000, 28000] {
        cases.push((
            format!("random {n}"),
            random(n, 7 + n as u64),
            random(n, 11 + n as u64),
        ));
    }
    for g in [10, 20, 32, 45, 64, 100, 128, 160] {
        cases.push((format!("lap2d {g}x{g}"), laplacian(g), laplacian(g)));
    }
    println!("| input | work | nnz(C) | small | multiply us (on / off) | reuse us (on / off) |");
    println!("|---|---|---|---|---|---|");
    for (name, a, b) in &cases {
        let (a, b) = (a.any(), b.any());
        let mut times = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        let mut info = (0, 0, false);
        for _ in 0..rounds {
            for (t, on) in [true, false].into_iter().enumerate() {
                h.options.small_path = on;
                let plan = symbolic(&h, &a, &b, FORMAT).unwrap();
                let work = plan.flops() as usize + a.nrows + b.nrows + a.nnz() + b.nnz();
                if on {
                    info = (work, plan.nnz(), plan.small());
                }
                let (mut cols, mut vals) = (vec![0i32; plan.nnz()], vec![0f64; plan.nnz()]);
                times[0][t].push(per_call(&mut || {
                    multiply(&h, &a, &b, FORMAT).unwrap();
                }));
                times[1][t].push(per_call(&mut || {
                    let c = IndexSliceMut::I32(&mut cols);
                    let v = ValueSliceMut::F64(&mut vals);
                    numeric(&h, &plan, &a, &b, c, Some(v)).unwrap();
                }));
            }
        }
        let [m, r] = times.map(|p| p.map(median));
        println!(
            "| {name} | {} | {} | {} | {:.1} / {:.1} | {:.1} / {:.1} |",
            info.0, info.1, info.2, m[0], m[1], r[0], r[1]
        );
    }
}
