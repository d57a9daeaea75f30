//! GPU SpGEMM benchmark: C = A*B from Matrix Market files on the CUDA backend, with the
//! CPU backend of the same build for reference. Three modes:
//! - `host`: host arrays in and out, so the GPU times include the copies (values in, C out;
//!   plus structure in for the symbolic phase);
//! - `device`: A and B uploaded once before timing, C written to device arrays allocated
//!   inside the timed region (what cuSPARSE's device-resident product pays), plus the
//!   numeric-only reuse time on the same plan;
//! - `cpu`: the CPU backend with host arrays;
//! - `hybrid`: host arrays, rows split between the CPU and the GPU (the split's rates are
//!   learned from the warm-up call);
//! - `repro`: `device` with the reproducible option (the same bits on every run).
//!
//! usage: cuda_bench A.mtx [B.mtx|A] [reps] [cpu_threads] [modes: host,device,cpu,hybrid,repro]
//! prints one JSON line per mode.

use std::time::Instant;

use spgemm::OutputFormat;
use spgemm::types::{IndexType, ValueType};
use spgemm::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use spgemm::{Backend, Handle};
use spgemm::{IndexVec, OffsetVec, ValueVec};

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
    let plan = spgemm::symbolic(h, &a.any(), &b.any(), f).unwrap();
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut sym = Vec::new();
    let mut num = Vec::new();
    let mut nnz = 0;
    let mut checksum = 0.0;
    let mut info = plan.describe();
    for _ in 0..reps {
        let t = Instant::now();
        let plan = spgemm::symbolic(h, &a.any(), &b.any(), f).unwrap();
        sym.push(t.elapsed().as_secs_f64() * 1e3);
        let mut off = OffsetVec::zeroed(f.offsets, plan.nrows() + 1).unwrap();
        spgemm::write_row_offsets(&plan, off.as_mut()).unwrap();
        let mut idx = IndexVec::zeroed(f.indices, plan.nnz()).unwrap();
        let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).unwrap();
        let t = Instant::now();
        spgemm::numeric(
            h,
            &plan,
            &a.any(),
            &b.any(),
            idx.as_mut(),
            Some(val.as_mut()),
        )
        .unwrap();
        num.push(t.elapsed().as_secs_f64() * 1e3);
        info = plan.describe();
        nnz = plan.nnz();
        if let ValueVec::F64(v) = &val {
            checksum = v.iter().sum();
        }
    }
    let (s, n) = (median(sym), median(num));
    if label == "hybrid" {
        // The split and the hybrid's own set-up, of the last plan (made with the rates the
        // earlier calls measured).
        eprintln!("{name} hybrid plan:\n{info}");
    }
    let gflops = 2.0 * plan.flops() as f64 / ((s + n) * 1e-3) / 1e9;
    println!(
        "{{\"product\":\"{name}\",\"backend\":\"{label}\",\"nnz_c\":{nnz},\"flops\":{},\"first_symbolic_ms\":{first_ms:.3},\"symbolic_ms\":{s:.3},\"numeric_ms\":{n:.3},\"total_ms\":{:.3},\"gflops\":{gflops:.3},\"checksum\":{checksum:.6e},\"on_gpu\":{},\"plan\":\"{:?}\"}}",
        plan.flops(),
        s + n,
        plan.kind() == spgemm::PlanKind::Gpu,
        plan.kind()
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
    let modes = args.get(5).map(String::as_str).unwrap_or("host,device,cpu");
    let want = |m: &str| modes.split(',').any(|x| x == m);
    let mut h = Handle::new(threads).unwrap();
    eprintln!("device: {}", h.gpu_describe());
    h.options.backend = Backend::Cuda;
    if h.gpu_available() {
        if want("host") {
            run(&h, &a, b, reps, "cuda", &name);
        }
        #[cfg(feature = "cuda")]
        if want("device") {
            device::run(&h, &a, b, reps, &name, "cuda-device");
        }
        #[cfg(feature = "cuda")]
        if want("repro") {
            h.options.reproducible = true;
            device::run(&h, &a, b, reps, &name, "cuda-device-repro");
            h.options.reproducible = false;
        }
        if want("hybrid") {
            h.options.backend = Backend::Auto;
            h.options.hybrid = true;
            run(&h, &a, b, reps, "hybrid", &name);
            h.options.hybrid = false;
            h.options.backend = Backend::Cuda;
        }
    }
    if want("cpu") {
        h.options.backend = Backend::Cpu;
        run(&h, &a, b, reps, &format!("cpu{}", h.threads()), &name);
    }
}

/// Device-resident inputs and outputs through the typed device API.
#[cfg(feature = "cuda")]
mod device {
    use std::sync::Arc;
    use std::time::Instant;

    use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr as _};
    use spgemm::Handle;
    use spgemm::OutputFormat;
    use spgemm::types::{IndexType, ValueType};
    use spgemm::{DeviceCsr, DeviceOut, DevicePtr};
    use spgemm::{NumericInputs, NumericOutputs, numeric_device, symbolic_device};

    use super::{Csr, median};

    fn addr<T>(s: &CudaSlice<T>, st: &Arc<CudaStream>) -> DevicePtr {
        let (p, _sync) = s.device_ptr(st);
        DevicePtr::from_addr(p as usize)
    }

    struct Up {
        _bufs: (CudaSlice<i32>, CudaSlice<i32>, CudaSlice<f64>),
        csr: DeviceCsr,
    }

    fn upload(st: &Arc<CudaStream>, m: &Csr) -> Up {
        let nz = |v: &[i32]| if v.is_empty() { vec![0] } else { v.to_vec() };
        let p = st.clone_htod(&m.ptr).unwrap();
        let c = st.clone_htod(&nz(&m.col)).unwrap();
        let v = st
            .clone_htod(&if m.val.is_empty() {
                vec![0.0]
            } else {
                m.val.clone()
            })
            .unwrap();
        let csr = DeviceCsr {
            nrows: m.nrows,
            ncols: m.ncols,
            nnz: m.col.len(),
            base: 0,
            offset_type: IndexType::Int32,
            row_offsets: addr(&p, st),
            index_type: IndexType::Int32,
            col_indices: addr(&c, st),
            value_type: ValueType::Float64,
            values: Some(addr(&v, st)),
        };
        Up {
            _bufs: (p, c, v),
            csr,
        }
    }

    pub fn run(h: &Handle, a: &Csr, b: &Csr, reps: usize, name: &str, label: &str) {
        let ctx = CudaContext::new(0).unwrap();
        let st = ctx.default_stream();
        let (da, db) = (upload(&st, a), upload(&st, b));
        ctx.synchronize().unwrap();
        // int32 0-based output, as cuSPARSE's CSR.
        let f = OutputFormat {
            offsets: IndexType::Int32,
            indices: IndexType::Int32,
            base: 0,
        };
        let product = |reps: usize| {
            let (mut sym, mut tot, mut reuse) = (Vec::new(), Vec::new(), Vec::new());
            let mut last = None;
            for _ in 0..reps {
                let t = Instant::now();
                let plan = symbolic_device(h, &da.csr, &db.csr, f).unwrap();
                let ts = t.elapsed().as_secs_f64() * 1e3;
                // SAFETY: every element is written by the numeric call before it is read.
                let rp = unsafe { st.alloc::<i32>(plan.nrows() + 1) }.unwrap();
                let ci = unsafe { st.alloc::<i32>(plan.nnz().max(1)) }.unwrap();
                let cv = unsafe { st.alloc::<f64>(plan.nnz().max(1)) }.unwrap();
                let out = DeviceOut {
                    row_offsets: Some(addr(&rp, &st)),
                    col_indices: addr(&ci, &st),
                    values: Some(addr(&cv, &st)),
                };
                let run_numeric = || {
                    numeric_device(
                        h,
                        &plan,
                        NumericInputs::Device(&da.csr, &db.csr),
                        NumericOutputs::Device(out),
                    )
                    .unwrap();
                    ctx.synchronize().unwrap();
                };
                run_numeric();
                tot.push(t.elapsed().as_secs_f64() * 1e3);
                sym.push(ts);
                let t = Instant::now();
                run_numeric();
                reuse.push(t.elapsed().as_secs_f64() * 1e3);
                last = Some((plan.nnz(), plan.flops(), st.clone_dtoh(&cv).unwrap()));
            }
            (sym, tot, reuse, last.unwrap())
        };
        let t = Instant::now();
        product(1);
        let first_ms = t.elapsed().as_secs_f64() * 1e3;
        let (sym, tot, reuse, (nnz, flops, vals)) = product(reps);
        let (s, t, r) = (median(sym), median(tot), median(reuse));
        let checksum: f64 = vals[..nnz].iter().sum();
        println!(
            "{{\"product\":\"{name}\",\"backend\":\"{label}\",\"nnz_c\":{nnz},\"flops\":{flops},\"first_ms\":{first_ms:.3},\"symbolic_ms\":{s:.3},\"total_ms\":{t:.3},\"reuse_ms\":{r:.3},\"gflops\":{:.3},\"gflops_reuse\":{:.3},\"checksum\":{checksum:.6e},\"on_gpu\":true}}",
            2.0 * flops as f64 / (t * 1e-3) / 1e9,
            2.0 * flops as f64 / (r * 1e-3) / 1e9,
        );
    }
}
