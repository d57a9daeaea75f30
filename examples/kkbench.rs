//! Ad-hoc timing of the SpGEMM phases on Matrix Market files (development aid, not the
//! benchmark harness). Usage: kkbench A.mtx B.mtx|A [threads] [alg] [reps] [sorted 0/1]
/// Process CPU time in seconds: on a loaded machine it tracks the work done better than
/// wall time (run with 1 thread to compare kernels).
struct Instant(f64);
impl Instant {
    fn now() -> Instant {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let clock = if std::env::var("KKBENCH_WALL").is_ok() {
            libc::CLOCK_MONOTONIC
        } else {
            libc::CLOCK_PROCESS_CPUTIME_ID
        };
        // SAFETY: valid pointer to a timespec.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        Instant(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
    }
    fn elapsed(&self) -> D {
        D(Instant::now().0 - self.0)
    }
}
struct D(f64);
impl D {
    fn as_secs_f64(&self) -> f64 {
        self.0
    }
}
impl std::ops::Sub for Instant {
    type Output = D;
    fn sub(self, o: Instant) -> D {
        D(self.0 - o.0)
    }
}

use spgemm::OutputFormat;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle};
use spgemm::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use spgemm::{IndexVec, ValueVec};

fn read_mtx(path: &str) -> (usize, usize, Vec<i32>, Vec<i32>, Vec<f64>) {
    let text = std::fs::read_to_string(path).expect("read");
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let hdr: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (m, n, nnz) = (hdr[0], hdr[1], hdr[2]);
    let mut trip = Vec::with_capacity(nnz);
    for l in lines {
        let mut it = l.split_whitespace();
        let i: usize = it.next().unwrap().parse().unwrap();
        let j: usize = it.next().unwrap().parse().unwrap();
        let v: f64 = it.next().map(|x| x.parse().unwrap()).unwrap_or(1.0);
        trip.push((i - 1, j - 1, v));
    }
    trip.sort_by_key(|t| (t.0, t.1));
    let mut ptr = vec![0i32; m + 1];
    for t in &trip {
        ptr[t.0 + 1] += 1;
    }
    for i in 0..m {
        ptr[i + 1] += ptr[i];
    }
    let cols = trip.iter().map(|t| t.1 as i32).collect();
    let vals = trip.iter().map(|t| t.2).collect();
    (m, n, ptr, cols, vals)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let a = read_mtx(&args[1]);
    let b = if args[2] == "A" {
        None
    } else {
        Some(read_mtx(&args[2]))
    };
    let threads: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(2);
    let alg = args
        .get(4)
        .map(|s| {
            (0..16)
                .filter_map(Algorithm::from_code)
                .find(|a| a.name() == s)
                .expect("algorithm name")
        })
        .unwrap_or(Algorithm::Auto);
    let reps: usize = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(5);
    let sorted = args.get(6).map(|s| s == "1").unwrap_or(true);
    let any = |x: &(usize, usize, Vec<i32>, Vec<i32>, Vec<f64>)| -> (usize, usize, *const ()) {
        (x.0, x.1, std::ptr::null())
    };
    let _ = any;
    let av = AnyCsr {
        nrows: a.0,
        ncols: a.1,
        base: 0,
        offsets: OffsetSlice::I32(&a.2),
        indices: IndexSlice::I32(&a.3),
        values: Some(ValueSlice::F64(&a.4)),
        value_type: ValueType::Float64,
    };
    let bv = match &b {
        None => av,
        Some(b) => AnyCsr {
            nrows: b.0,
            ncols: b.1,
            base: 0,
            offsets: OffsetSlice::I32(&b.2),
            indices: IndexSlice::I32(&b.3),
            values: Some(ValueSlice::F64(&b.4)),
            value_type: ValueType::Float64,
        },
    };
    let mut h = Handle::new(threads).unwrap();
    h.options.algorithm = alg;
    h.options.sorted_output = sorted;
    let fmt = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    let (mut ts, mut tn, mut tr) = (f64::MAX, f64::MAX, f64::MAX);
    let mut algs = String::new();
    for _ in 0..reps {
        let t0 = Instant::now();
        let plan = spgemm::symbolic(&h, &av, &bv, fmt).unwrap();
        let t1 = Instant::now();
        let mut ci = IndexVec::zeroed(IndexType::Int32, plan.nnz()).unwrap();
        let mut cv = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
        let t2 = Instant::now();
        spgemm::numeric(&h, &plan, &av, &bv, ci.as_mut(), Some(cv.as_mut())).unwrap();
        let t3 = Instant::now();
        for _ in 0..3 {
            let t4 = Instant::now();
            spgemm::numeric(&h, &plan, &av, &bv, ci.as_mut(), Some(cv.as_mut())).unwrap();
            tr = tr.min(t4.elapsed().as_secs_f64());
        }
        ts = ts.min((t1 - t0).as_secs_f64());
        tn = tn.min((t3 - t2).as_secs_f64());
        algs = format!(
            "{}/{}",
            plan.algorithms().0.name(),
            plan.algorithms().1.name()
        );
        if reps == 1 {
            eprintln!("nnz(C) = {} flops = {}", plan.nnz(), plan.flops());
        }
    }
    println!(
        "{:<22} t={threads} {:<18} sym {:.4} num {:.4} total {:.4} reuse {:.4}",
        args[1].rsplit('/').next().unwrap(),
        algs,
        ts,
        tn,
        ts + tn,
        tr
    );
}
