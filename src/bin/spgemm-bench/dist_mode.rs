//! `spgemm-bench dist-spgemm`: the distributed SpGEMM under mpirun (feature `mpi`).
//!
//! ```text
//! mpirun -np P spgemm-bench dist-spgemm (--a A --b B|A | --atb A,B | --rap R,A,P | --ptap A,P)
//!        [--reps N (default 5)] [--threads T (default 1 per rank)] [--sorted 0|1 (default 1: PETSc's rows are sorted)]
//!        [--validate 0|1 (default 1, the library's default: each call checks the matrices)]
//! ```
//!
//! Every rank reads the inputs (Matrix Market files or `gen:NAME`) and keeps its rows:
//! rank q owns rows floor(q m / P) .. floor((q + 1) m / P) of each matrix and the same
//! share of its columns (its `x_range`), the split the PETSc driver
//! (bench/petsc/petsc_dist.c) gives MPIAIJ, so both multiply identical distributions.
//! Timed (barrier before, the slowest rank's time; C's arrays allocated untimed, as a C
//! caller's malloc costs nothing of the library's): `symbolic_s` and `numeric_s` of the
//! first product, `total_s` the median over `reps` products from scratch (plan made and
//! dropped each time), `reuse_s` the median over `reps` numeric calls on one plan with
//! the values of A alternately scaled by 2 and back. Rank 0 prints one JSON line with
//! the global nnz and sum of |c_ij| of C, the scalar multiplications of the products
//! (all ranks), and the imported rows and bytes (largest rank and all ranks).

#[cfg(not(feature = "mpi"))]
pub fn main(_args: &[String]) -> i32 {
    eprintln!(
        "spgemm-bench dist-spgemm: this build has no MPI (cargo build --release --features mpi --bin spgemm-bench)"
    );
    2
}

#[cfg(feature = "mpi")]
pub use on::main;

#[cfg(feature = "mpi")]
pub(crate) mod on {
    use std::time::Instant;

    use mpi::collective::SystemOperation;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;

    use crate::mtx::Csr;
    use spgemm::types::IndexType;
    use spgemm::{
        AnyCsr, DistComm, DistMatrix, DistSpgemmPlan, Handle, IndexSlice, IndexSliceMut,
        OffsetSlice, OffsetSliceMut, Op, OutputFormat, Result, ValueSlice, ValueSliceMut,
        dist_rap_symbolic, dist_spgemm_numeric, dist_spgemm_symbolic,
    };

    struct Cfg {
        mode: &'static str,
        op: Op,
        inputs: Vec<String>,
        reps: usize,
        threads: usize,
        sorted: bool,
        validate: bool,
    }

    fn parse(args: &[String]) -> std::result::Result<Cfg, String> {
        let mut c = Cfg {
            mode: "",
            op: Op::NonTranspose,
            inputs: Vec::new(),
            reps: 5,
            threads: 1,
            sorted: true,
            validate: true,
        };
        let mut a = None;
        let mut b = None;
        let mut it = args.iter();
        while let Some(f) = it.next() {
            let mut val = || it.next().cloned().ok_or(format!("{f} needs a value"));
            let list = |v: String| v.split(',').map(String::from).collect::<Vec<_>>();
            match f.as_str() {
                "--a" => a = Some(val()?),
                "--b" => b = Some(val()?),
                "--atb" => (c.mode, c.op, c.inputs) = ("atb", Op::Transpose, list(val()?)),
                "--rap" => (c.mode, c.inputs) = ("rap", list(val()?)),
                "--ptap" => {
                    let v = list(val()?);
                    (c.mode, c.op) = ("ptap", Op::Transpose);
                    // P^T*A*P = op(R)*A*P with R = P.
                    c.inputs = v.get(1).into_iter().chain(&v).cloned().collect();
                }
                "--reps" => c.reps = val()?.parse().map_err(|e| format!("--reps: {e}"))?,
                "--threads" => c.threads = val()?.parse().map_err(|e| format!("--threads: {e}"))?,
                "--sorted" => c.sorted = val()? == "1",
                "--validate" => c.validate = val()? == "1",
                x => return Err(format!("unknown argument {x}")),
            }
        }
        if let Some(a) = a {
            let b = b.unwrap_or_else(|| "A".into());
            c.mode = "mm";
            c.inputs = vec![a.clone(), if b == "A" { a } else { b }];
        }
        let want = if matches!(c.mode, "rap" | "ptap") {
            3
        } else {
            2
        };
        if c.inputs.len() != want || c.reps == 0 || c.threads == 0 {
            return Err("usage: spgemm-bench dist-spgemm (--a A --b B|A | --atb A,B | --rap R,A,P | --ptap A,P) [--reps N] [--threads T] [--sorted 0|1] [--validate 0|1]".into());
        }
        Ok(c)
    }

    /// This rank's rows of a whole matrix (0-based, int32, f64) and its block of the
    /// dense operand's rows (`spgemm-bench dist-spmm` reads them too).
    pub(crate) struct Mine {
        pub(crate) offs: Vec<i32>,
        cols: Vec<i32>,
        vals: Vec<f64>,
        pub(crate) m: usize,
        pub(crate) n: usize,
        start: usize,
        pub(crate) x: (usize, usize),
    }

    fn split(n: usize, p: usize, q: usize) -> (usize, usize) {
        (q * n / p, (q + 1) * n / p)
    }

    impl Mine {
        pub(crate) fn new(g: &Csr, p: usize, q: usize) -> Mine {
            let (r0, r1) = split(g.nrows, p, q);
            let (x0, x1) = split(g.ncols, p, q);
            let s = g.row_ptr[r0];
            let e = g.row_ptr[r1] as usize;
            Mine {
                offs: g.row_ptr[r0..=r1].iter().map(|&o| o - s).collect(),
                cols: g.col[s as usize..e].to_vec(),
                vals: g.val[s as usize..e].to_vec(),
                m: g.nrows,
                n: g.ncols,
                start: r0,
                x: (x0, x1 - x0),
            }
        }
        pub(crate) fn view<'a>(&'a self, comm: &'a DistComm) -> DistMatrix<'a> {
            DistMatrix {
                comm,
                global_rows: self.m,
                global_cols: self.n,
                row_start: self.start,
                x_range: Some(self.x),
                local: AnyCsr {
                    nrows: self.offs.len() - 1,
                    ncols: self.n,
                    base: 0,
                    offsets: OffsetSlice::I32(&self.offs),
                    indices: IndexSlice::I32(&self.cols),
                    values: Some(ValueSlice::F64(&self.vals)),
                    value_type: spgemm::types::ValueType::Float64,
                },
            }
        }
    }

    fn max(w: &SimpleCommunicator, x: f64) -> f64 {
        let mut r = 0.0;
        w.all_reduce_into(&x, &mut r, SystemOperation::max());
        r
    }

    fn sum(w: &SimpleCommunicator, x: f64) -> f64 {
        let mut r = 0.0;
        w.all_reduce_into(&x, &mut r, SystemOperation::sum());
        r
    }

    pub(crate) fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// C's arrays on this rank.
    struct Out {
        offs: Vec<i64>,
        cols: Vec<i64>,
        vals: Vec<f64>,
    }

    fn symbolic(
        h: &Handle,
        c: &Cfg,
        mats: &[DistMatrix<'_>],
        out: &mut Out,
    ) -> Result<DistSpgemmPlan> {
        let fmt = OutputFormat {
            offsets: IndexType::Int64,
            indices: IndexType::Int64,
            base: 0,
        };
        let rows = match (mats.len(), c.op) {
            (_, Op::NonTranspose) => mats[0].local.nrows,
            (_, _) => mats[0].x_range.map_or(0, |x| x.1),
        };
        out.offs = vec![0; rows + 1];
        let offs = OffsetSliceMut::I64(&mut out.offs);
        let plan = if mats.len() == 3 {
            dist_rap_symbolic(h, c.op, (&mats[0], &mats[1], &mats[2]), fmt, offs)?
        } else {
            dist_spgemm_symbolic(h, c.op, &mats[0], &mats[1], fmt, offs)?
        };
        Ok(plan)
    }

    /// The caller's C arrays for `plan`, allocated outside the timed phases (a C caller's
    /// malloc does not clear them, `vec!` does) or kept from the last product of this size.
    fn alloc_c(plan: &DistSpgemmPlan, out: &mut Out) {
        if out.cols.len() != plan.nnz() {
            out.cols = vec![0; plan.nnz()];
            out.vals = vec![0.0; plan.nnz()];
        }
    }

    fn numeric(
        h: &Handle,
        plan: &mut DistSpgemmPlan,
        mats: &[DistMatrix<'_>],
        out: &mut Out,
    ) -> Result<()> {
        let refs: Vec<&DistMatrix<'_>> = mats.iter().collect();
        dist_spgemm_numeric(
            h,
            plan,
            &refs,
            IndexSliceMut::I64(&mut out.cols),
            ValueSliceMut::F64(&mut out.vals),
        )
    }

    fn run(w: &SimpleCommunicator, c: &Cfg) -> std::result::Result<String, String> {
        let p = w.size() as usize;
        let q = w.rank() as usize;
        let e = |x: spgemm::Error| x.to_string();
        let wholes = crate::load_all(&c.inputs)?;
        let mut mine: Vec<Mine> = wholes.iter().map(|g| Mine::new(g, p, q)).collect();
        let mut h = Handle::new(c.threads).map_err(e)?;
        h.options.backend = spgemm::Backend::Cpu;
        h.options.sorted_output = c.sorted;
        h.options.validate = c.validate;
        // SAFETY: the world communicator is live; c2f converts its handle.
        let fh = unsafe { mpi::ffi::RSMPI_Comm_c2f(w.as_raw()) };
        let comm = DistComm::from_fortran(fh).map_err(e)?;
        let mut out = Out {
            offs: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        };
        let timed = |f: &mut dyn FnMut() -> Result<()>| -> std::result::Result<f64, String> {
            w.barrier();
            let t = Instant::now();
            f().map_err(e)?;
            Ok(max(w, t.elapsed().as_secs_f64()))
        };
        // Warm-up, then the first product's phases.
        {
            let views: Vec<DistMatrix<'_>> = mine.iter().map(|m| m.view(&comm)).collect();
            let mut plan = symbolic(&h, c, &views, &mut out).map_err(e)?;
            alloc_c(&plan, &mut out);
            numeric(&h, &mut plan, &views, &mut out).map_err(e)?;
        }
        let views: Vec<DistMatrix<'_>> = mine.iter().map(|m| m.view(&comm)).collect();
        let mut plan = None;
        let symbolic_s = timed(&mut || {
            plan = Some(symbolic(&h, c, &views, &mut out)?);
            Ok(())
        })?;
        let mut plan = plan.expect("made");
        alloc_c(&plan, &mut out);
        let numeric_s = timed(&mut || numeric(&h, &mut plan, &views, &mut out))?;
        let nnz = plan.global_nnz();
        let sumabs = sum(w, out.vals.iter().map(|v| v.abs()).sum());
        let st = plan.stats();
        let flops = sum(w, st.flops as f64);
        let rows_max = max(w, st.rows_imported as f64);
        let bytes_max = max(w, (st.numeric_bytes_received) as f64);
        let bytes_sum = sum(w, (st.numeric_bytes_received) as f64);
        let sym_bytes_sum = sum(w, st.symbolic_bytes_received as f64);
        drop(plan);
        let mut totals = Vec::new();
        for _ in 0..c.reps {
            totals.push(timed(&mut || {
                let mut pl = symbolic(&h, c, &views, &mut out)?;
                alloc_c(&pl, &mut out);
                numeric(&h, &mut pl, &views, &mut out)
            })?);
        }
        let mut plan = symbolic(&h, c, &views, &mut out).map_err(e)?;
        alloc_c(&plan, &mut out);
        drop(views);
        let mut reuse = Vec::new();
        for r in 0..=c.reps {
            let f = if r % 2 == 0 { 2.0 } else { 0.5 };
            // A's values change (A is the middle matrix of R*A*P).
            let which = if mine.len() == 3 { 1 } else { 0 };
            mine[which].vals.iter_mut().for_each(|v| *v *= f);
            let views: Vec<DistMatrix<'_>> = mine.iter().map(|m| m.view(&comm)).collect();
            let t = timed(&mut || numeric(&h, &mut plan, &views, &mut out))?;
            if r > 0 {
                reuse.push(t);
            }
        }
        drop(plan);
        drop(comm);
        let names: Vec<String> = c
            .inputs
            .iter()
            .map(|s| format!("\"{}\"", crate::input_name(s)))
            .collect();
        Ok(format!(
            "{{\"lib\":\"libspgemm\",\"mode\":\"{}\",\"np\":{p},\"threads\":{},\"sorted\":{},\"validate\":{},\"inputs\":[{}],\"reps\":{},\
\"symbolic_s\":{symbolic_s:.6e},\"numeric_s\":{numeric_s:.6e},\"total_s\":{:.6e},\"reuse_s\":{:.6e},\
\"nnzC\":{nnz},\"sumabsC\":{sumabs:.10e},\"flops\":{flops},\"rows_imported_max\":{rows_max},\
\"numeric_bytes_received_max\":{bytes_max},\"numeric_bytes_received_sum\":{bytes_sum},\
\"symbolic_bytes_received_sum\":{sym_bytes_sum}}}",
            c.mode,
            c.threads,
            c.sorted,
            c.validate,
            names.join(","),
            c.reps,
            median(totals),
            median(reuse),
        ))
    }

    pub fn main(args: &[String]) -> i32 {
        let c = match parse(args) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spgemm-bench dist-spgemm: {e}");
                return 1;
            }
        };
        let Some(universe) = mpi::initialize() else {
            eprintln!("spgemm-bench dist-spgemm: MPI_Init failed");
            return 2;
        };
        let w = universe.world();
        let r = run(&w, &c);
        let code = match &r {
            Ok(line) => {
                if w.rank() == 0 {
                    println!("{line}");
                }
                0
            }
            Err(e) => {
                if w.rank() == 0 {
                    println!(
                        "{{\"lib\":\"libspgemm\",\"mode\":\"{}\",\"error\":{:?}}}",
                        c.mode, e
                    );
                }
                2
            }
        };
        drop(universe);
        code
    }
}
