//! `spgemm-bench dist-spmm`: the distributed SpMM `Y = A X` under mpirun (feature `mpi`).
//!
//! ```text
//! mpirun -np P spgemm-bench dist-spmm --a A.mtx|gen:NAME [--k 1,8,64] [--algo auto|1.5d|2d-a|2d-c|1d-halo]
//!        [--async] [--c N] [--reps N (default 5)] [--threads T (default 1 per rank)] [--layout row|col]
//! ```
//!
//! Every rank reads A and keeps rows floor(q m / P) .. floor((q + 1) m / P) and the same
//! share of the columns as its rows of X: the split of the PETSc driver
//! (bench/petsc/petsc_dist.c, `spmm`), so both multiply identical distributions. X(i, j)
//! is `spgemm-bench spmm`'s value (global i, j), so `sumC` and `sumabsC` (Kahan sums of
//! the gathered Y in memory order, as `spmm` sums its Y) equal the serial run's where the
//! algorithm keeps the serial summation order (docs/DISTRIBUTED.md), else agree to rounding.
//! Per k: `plan_s` (one plan, after a warm-up plan; the first plan on the communicator
//! also measures the network and the local rate, `calib_s`), one warm-up product, then
//! `total_s` the median over `reps` products on that plan (barrier before each, the
//! slowest rank's time). Bytes are the library's counters of the last product
//! (`DistStats`), with the model's prediction for the plan's algorithm and grid.
//! `--algo 1.5d --c N` forces the replication factor (grid (P/N) x N); `--async` takes
//! the one-sided variant of a 2D algorithm.

#[cfg(not(feature = "mpi"))]
pub fn main(_args: &[String]) -> i32 {
    eprintln!(
        "spgemm-bench dist-spmm: this build has no MPI (cargo build --release --features mpi --bin spgemm-bench)"
    );
    2
}

#[cfg(feature = "mpi")]
pub use on::main;

#[cfg(feature = "mpi")]
mod on {
    use std::time::Instant;

    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;

    use crate::dist_mode::on::{Mine, median};
    use crate::spmm_mode::{sum as ksum, xval};
    use spgemm::{
        DistAlgorithm, DistComm, DistPlanOptions, Handle, Layout, ValueSlice, ValueSliceMut,
        dist_spmm, dist_spmm_estimate, dist_spmm_plan,
    };

    struct Cfg {
        a: String,
        ks: Vec<usize>,
        algo: &'static str,
        one_sided: bool,
        c: Option<usize>,
        reps: usize,
        threads: usize,
        layout: Layout,
    }

    const USAGE: &str = "usage: spgemm-bench dist-spmm --a A.mtx|gen:NAME [--k 1,8,64] \
[--algo auto|1.5d|2d-a|2d-c|1d-halo] [--async] [--c N] [--reps N] [--threads T] [--layout row|col]";

    fn parse(args: &[String]) -> Result<Cfg, String> {
        let mut c = Cfg {
            a: String::new(),
            ks: vec![1, 8, 64],
            algo: "auto",
            one_sided: false,
            c: None,
            reps: 5,
            threads: 1,
            layout: Layout::RowMajor,
        };
        let mut it = args.iter();
        while let Some(f) = it.next() {
            if f == "--async" {
                c.one_sided = true;
                continue;
            }
            let v = it.next().cloned().ok_or(format!("{f} needs a value"))?;
            let num = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|e| format!("{f} {s}: {e}"))
            };
            match f.as_str() {
                "--a" => c.a = v,
                "--k" => c.ks = v.split(',').map(num).collect::<Result<_, _>>()?,
                "--algo" => {
                    c.algo = match v.as_str() {
                        "auto" => "auto",
                        "1.5d" => "1.5d",
                        "2d-a" => "2d-a",
                        "2d-c" => "2d-c",
                        "1d-halo" => "1d-halo",
                        s => {
                            return Err(format!("--algo {s}: auto, 1.5d, 2d-a, 2d-c or 1d-halo"));
                        }
                    }
                }
                "--c" => c.c = Some(num(&v)?),
                "--reps" => c.reps = num(&v)?,
                "--threads" => c.threads = num(&v)?,
                "--layout" => {
                    c.layout = match v.as_str() {
                        "row" => Layout::RowMajor,
                        "col" => Layout::ColMajor,
                        s => return Err(format!("--layout {s}: row or col")),
                    }
                }
                x => return Err(format!("unknown argument {x}")),
            }
        }
        if c.a.is_empty() || c.reps == 0 || c.threads == 0 || c.ks.contains(&0) {
            return Err(USAGE.into());
        }
        if c.one_sided && !c.algo.starts_with("2d") {
            return Err("--async needs --algo 2d-a or 2d-c".into());
        }
        if c.c.is_some() && c.algo != "1.5d" {
            return Err("--c needs --algo 1.5d".into());
        }
        Ok(c)
    }

    fn algorithm(c: &Cfg) -> DistAlgorithm {
        match (c.algo, c.one_sided) {
            ("1.5d", _) => DistAlgorithm::SA15D,
            ("2d-a", false) => DistAlgorithm::SA2D,
            ("2d-a", true) => DistAlgorithm::SA2DAsync,
            ("2d-c", false) => DistAlgorithm::SC2D,
            ("2d-c", true) => DistAlgorithm::SC2DAsync,
            ("1d-halo", _) => DistAlgorithm::Halo1D,
            _ => DistAlgorithm::Auto,
        }
    }

    fn reduce(w: &SimpleCommunicator, x: f64, op: SystemOperation) -> f64 {
        let mut r = 0.0;
        w.all_reduce_into(&x, &mut r, op);
        r
    }

    /// The whole Y on rank 0 in `layout` (m x k, packed), from every rank's rows; empty
    /// elsewhere.
    fn gather_y(w: &SimpleCommunicator, y: &[f64], m: usize, k: usize, layout: Layout) -> Vec<f64> {
        let root = w.process_at_rank(0);
        let n = y.len() as i32;
        if w.rank() != 0 {
            root.gather_into(&n);
            root.gather_varcount_into(y);
            return Vec::new();
        }
        let mut counts = vec![0i32; w.size() as usize];
        root.gather_into_root(&n, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |s, &c| {
                let d = *s;
                *s += c;
                Some(d)
            })
            .collect();
        let mut blocks = vec![0.0; m * k];
        {
            let mut part = PartitionMut::new(&mut blocks[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(y, &mut part);
        }
        if layout == Layout::RowMajor {
            return blocks;
        }
        // Rank blocks (rows x k, column-major each) into one column-major m x k.
        let mut out = vec![0.0; m * k];
        let mut r0 = 0;
        for (&c, &d) in counts.iter().zip(&displs) {
            let rows = c as usize / k.max(1);
            for j in 0..k {
                let src = &blocks[d as usize + j * rows..d as usize + (j + 1) * rows];
                out[j * m + r0..j * m + r0 + rows].copy_from_slice(src);
            }
            r0 += rows;
        }
        out
    }

    fn run(w: &SimpleCommunicator, c: &Cfg) -> Result<(), String> {
        let p = w.size() as usize;
        let q = w.rank() as usize;
        let e = |x: spgemm::Error| x.to_string();
        let whole = crate::load_all(std::slice::from_ref(&c.a))?
            .pop()
            .ok_or("no matrix")?;
        let nnz = whole.col.len();
        let mine = Mine::new(&whole, p, q);
        drop(whole);
        let mut h = Handle::new(c.threads).map_err(e)?;
        h.options.backend = spgemm::Backend::Cpu;
        // SAFETY: the world communicator is live; c2f converts its handle.
        let fh = unsafe { mpi::ffi::RSMPI_Comm_c2f(w.as_raw()) };
        let comm = DistComm::from_fortran(fh).map_err(e)?;
        let a = mine.view(&comm);
        let opts_for = |k: usize| {
            let mut o = DistPlanOptions::new(k, c.layout);
            o.algorithm = algorithm(c);
            o.replication = c.c;
            o
        };
        // The first estimate on the communicator measures the network and the local rate.
        w.barrier();
        let t = Instant::now();
        dist_spmm_estimate(&h, &a, &opts_for(c.ks[0])).map_err(e)?;
        let calib_s = reduce(w, t.elapsed().as_secs_f64(), SystemOperation::max());
        let (xr, yr) = (mine.x.1, mine.offs.len() - 1);
        let lay = if c.layout == Layout::RowMajor {
            "row"
        } else {
            "col"
        };
        for &k in &c.ks {
            let opts = opts_for(k);
            drop(dist_spmm_plan(&h, &a, &opts).map_err(e)?);
            w.barrier();
            let t = Instant::now();
            let mut plan = dist_spmm_plan(&h, &a, &opts).map_err(e)?;
            let plan_s = reduce(w, t.elapsed().as_secs_f64(), SystemOperation::max());
            let (ldx, ldy) = match c.layout {
                Layout::RowMajor => (k, k),
                Layout::ColMajor => (xr.max(1), yr.max(1)),
            };
            let mut x = vec![0.0f64; xr * k];
            for i in 0..xr {
                for j in 0..k {
                    let at = if c.layout == Layout::RowMajor {
                        i * k + j
                    } else {
                        j * ldx + i
                    };
                    x[at] = xval(mine.x.0 + i, j);
                }
            }
            let mut y = vec![0.0f64; yr * k];
            let mut times = Vec::with_capacity(c.reps);
            for r in 0..=c.reps {
                w.barrier();
                let t = Instant::now();
                let ys = ValueSliceMut::F64(&mut y);
                dist_spmm(&h, &mut plan, 1.0, ValueSlice::F64(&x), ldx, 0.0, ys, ldy).map_err(e)?;
                let s = reduce(w, t.elapsed().as_secs_f64(), SystemOperation::max());
                if r > 0 {
                    times.push(s);
                }
            }
            let st = plan.last_stats();
            let recv = st.bytes_received as f64;
            let sent = st.bytes_sent as f64;
            let recv_max = reduce(w, recv, SystemOperation::max());
            let recv_sum = reduce(w, recv, SystemOperation::sum());
            let sent_max = reduce(w, sent, SystemOperation::max());
            let compute_max = reduce(w, st.compute_s, SystemOperation::max());
            let yall = gather_y(w, &y, mine.m, k, c.layout);
            let (sum_c, sumabs_c) = (
                ksum(yall.iter().copied()),
                ksum(yall.iter().map(|v| v.abs())),
            );
            let est = plan.estimate();
            let ch = est.choice().clone();
            let g = plan.grid();
            let t = median(times);
            let model_bytes = plan.predicted_bytes_total();
            let line = format!(
                "{{\"lib\":\"libspgemm\",\"mode\":\"dist-spmm\",\"A\":\"{}\",\"np\":{p},\"threads\":{},\
\"layout\":\"{lay}\",\"m\":{},\"n\":{},\"nnzA\":{nnz},\"k\":{k},\"algo_asked\":\"{}{}\",\"algo\":\"{}\",\
\"grid\":[{},{}],\"c\":{},\"reps\":{},\"calib_s\":{calib_s:.6e},\"plan_s\":{plan_s:.6e},\"total_s\":{t:.6e},\
\"compute_s_max\":{compute_max:.6e},\"gflops\":{:.4},\"bytes_recv_max\":{recv_max},\"bytes_recv_mean\":{:.1},\
\"bytes_sent_max\":{sent_max},\"model_bytes_total\":{model_bytes:.1},\"model_bytes_mean\":{:.1},\
\"model_time_s\":{:.6e},\"model_comm_s\":{:.6e},\"model_comp_s\":{:.6e},\"footprint\":{},\
\"alpha_s\":{:.4e},\"beta_s_per_byte\":{:.4e},\"async_gets\":{},\"rate\":[{:.4e},{:.4e},{:.4e},{:.4e}],\
\"sumC\":{sum_c:.17e},\"sumabsC\":{sumabs_c:.17e}}}",
                crate::input_name(&c.a),
                c.threads,
                mine.m,
                mine.n,
                c.algo,
                if c.one_sided { "-async" } else { "" },
                plan.algorithm().name(),
                g.pr,
                g.pc,
                g.pc,
                c.reps,
                2.0 * nnz as f64 * k as f64 / t / 1e9,
                recv_sum / p as f64,
                model_bytes / p as f64,
                ch.time_s,
                ch.comm_s,
                ch.comp_s,
                plan.footprint(),
                est.net.alpha_s,
                est.net.beta_s_per_byte,
                est.net.async_gets,
                est.rate.call_s,
                est.rate.per_entry_col_s[0],
                est.rate.per_entry_col_s[1],
                est.rate.per_entry_col_s[2],
            );
            if q == 0 {
                println!("{line}");
            }
        }
        drop(comm);
        Ok(())
    }

    pub fn main(args: &[String]) -> i32 {
        let c = match parse(args) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spgemm-bench dist-spmm: {e}");
                return 1;
            }
        };
        let Some(universe) = mpi::initialize() else {
            eprintln!("spgemm-bench dist-spmm: MPI_Init failed");
            return 2;
        };
        let w = universe.world();
        let r = run(&w, &c);
        let code = match &r {
            Ok(()) => 0,
            Err(e) => {
                if w.rank() == 0 {
                    println!(
                        "{{\"lib\":\"libspgemm\",\"mode\":\"dist-spmm\",\"A\":\"{}\",\"error\":{:?}}}",
                        crate::input_name(&c.a),
                        e
                    );
                }
                2
            }
        };
        drop(universe);
        code
    }
}
