//! GPU SpGEMM benchmark: C = A*B from Matrix Market files on the CUDA backend, with the
//! CPU backend of the same build for reference. Host arrays in and out, so the GPU times
//! include the copies (values in, C out; plus structure in for the symbolic phase).
//!
//! usage: cuda_bench A.mtx [B.mtx|A] [reps] [cpu_threads]
//! prints one JSON line per backend.

use std::time::Instant;

use spgemm::csr::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use spgemm::exec;
use spgemm::handle::{Backend, Handle};
use spgemm::output::{IndexVec, OffsetVec, ValueVec};
use spgemm::plan::OutputFormat;
use spgemm::types::{IndexType, ValueType};

struct Csr {
    nrows: usize,
    ncols: usize,
    ptr: Vec<i32>,
    col: Vec<i32>,
    val: Vec<f64>,
}

impl Csr {
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

fn read_mtx(path: &str) -> Csr {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").to_lowercase();
    let symmetric = header.contains("symmetric");
    let pattern = header.contains("pattern");
    let mut lines = lines.filter(|l| !l.starts_with('%') && !l.trim().is_empty());
    let dims: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (m, n) = (dims[0], dims[1]);
    let mut coo: Vec<(u32, u32, f64)> = Vec::with_capacity(dims[2] * if symmetric { 2 } else { 1 });
    for l in lines {
        let mut it = l.split_whitespace();
        let i: u32 = it.next().unwrap().parse::<u32>().unwrap() - 1;
        let j: u32 = it.next().unwrap().parse::<u32>().unwrap() - 1;
        let v: f64 = if pattern {
            1.0
        } else {
            it.next().unwrap().parse().unwrap()
        };
        coo.push((i, j, v));
        if symmetric && i != j {
            coo.push((j, i, v));
        }
    }
    coo.sort_unstable_by_key(|&(i, j, _)| (i, j));
    let mut ptr = vec![0i32; m + 1];
    for &(i, _, _) in &coo {
        ptr[i as usize + 1] += 1;
    }
    for i in 0..m {
        ptr[i + 1] += ptr[i];
    }
    Csr {
        nrows: m,
        ncols: n,
        ptr,
        col: coo.iter().map(|x| x.1 as i32).collect(),
        val: coo.iter().map(|x| x.2).collect(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn run(h: &Handle, a: &Csr, b: &Csr, reps: usize, label: &str, name: &str) {
    let f = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    };
    // Warm-up (opens the device, compiles kernels on the first GPU call).
    let t = Instant::now();
    let plan = exec::symbolic(h, &a.any(), &b.any(), f).unwrap();
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut sym = Vec::new();
    let mut num = Vec::new();
    let mut nnz = 0;
    let mut checksum = 0.0;
    for _ in 0..reps {
        let t = Instant::now();
        let plan = exec::symbolic(h, &a.any(), &b.any(), f).unwrap();
        sym.push(t.elapsed().as_secs_f64() * 1e3);
        let mut off = OffsetVec::zeroed(f.offsets, plan.nrows() + 1).unwrap();
        exec::write_row_offsets(&plan, off.as_mut()).unwrap();
        let mut idx = IndexVec::zeroed(f.indices, plan.nnz()).unwrap();
        let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
        let t = Instant::now();
        exec::numeric(
            h,
            &plan,
            &a.any(),
            &b.any(),
            idx.as_mut(),
            Some(val.as_mut()),
        )
        .unwrap();
        num.push(t.elapsed().as_secs_f64() * 1e3);
        nnz = plan.nnz();
        if let ValueVec::F64(v) = &val {
            checksum = v.iter().sum();
        }
    }
    let (s, n) = (median(sym), median(num));
    let gflops = 2.0 * plan.flops as f64 / ((s + n) * 1e-3) / 1e9;
    println!(
        "{{\"product\":\"{name}\",\"backend\":\"{label}\",\"nnz_c\":{nnz},\"flops\":{},\"first_symbolic_ms\":{first_ms:.3},\"symbolic_ms\":{s:.3},\"numeric_ms\":{n:.3},\"total_ms\":{:.3},\"gflops\":{gflops:.3},\"checksum\":{checksum:.6e},\"on_gpu\":{}}}",
        plan.flops,
        s + n,
        plan.gpu.is_some()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: cuda_bench A.mtx [B.mtx|A] [reps] [cpu_threads]");
        std::process::exit(2);
    }
    let a = read_mtx(&args[1]);
    let bname = args.get(2).map(String::as_str).unwrap_or("A");
    let b_own;
    let b = if bname == "A" {
        &a
    } else {
        b_own = read_mtx(bname);
        &b_own
    };
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let threads: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let stem = |p: &str| {
        std::path::Path::new(p)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default()
    };
    let name = format!(
        "{}*{}",
        stem(&args[1]),
        if bname == "A" {
            stem(&args[1])
        } else {
            stem(bname)
        }
    );
    let mut h = Handle::new(threads).unwrap();
    eprintln!("device: {}", h.gpu.describe());
    h.options.backend = Backend::Cuda;
    if h.gpu.available() {
        run(&h, &a, b, reps, "cuda", &name);
    }
    h.options.backend = Backend::Cpu;
    run(&h, &a, b, reps, &format!("cpu{}", h.threads()), &name);
}
