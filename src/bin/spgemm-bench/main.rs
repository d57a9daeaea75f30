//! spgemm-bench: times libspgemm's SpGEMM through the typed Rust API (the same calls the C
//! ABI makes) and prints one JSON line per algorithm in the peers' schema
//! (anchors/SCHEMA.md), after checking the result independently.
//!
//! ```text
//! spgemm-bench list-algs
//! spgemm-bench spgemm --a A.mtx|gen:NAME --b B.mtx|gen:NAME|A
//!              [--alg|--algo auto,kkdense,...|all] [--threads N] [--reps N]
//!              [--sorted [0|1] | --unsorted] [--validate 0|1] [--check-rows N]
//!              [--output caller|owned]
//! spgemm-bench gen OUTDIR [--only NAME,...]
//! mpirun -np P spgemm-bench dist-spgemm ... (built with --features mpi; see dist_mode.rs)
//! mpirun -np P spgemm-bench dist-spmm ... (built with --features mpi; see dist_spmm_mode.rs)
//! ```
//!
//! An input is a Matrix Market file or `gen:NAME`, a matrix of
//! `shared/anchors/gen_matrices.py` generated in memory by `gen.rs` (e.g.
//! `--a gen:lap3d_7pt_64 --b A`, `--a gen:sa_poisson_A --b gen:sa_poisson_P`; grid families
//! take any size: `gen:lap3d_7pt_20`); the JSON "A"/"B" fields carry NAME. `--b A` squares
//! A. `--sorted` alone means `--sorted 1`, `--unsorted` means `--sorted 0`. The `gen`
//! subcommand writes the generated matrices as Matrix Market files into OUTDIR (with
//! manifest.tsv and products.txt as gen_matrices.py writes them); `--only` takes group
//! names (lap3d_7pt, sa_poisson, rect, ...) or matrix names.
//!
//! Per algorithm: one warm-up, then `reps` timed products from scratch (symbolic + row
//! offsets into a fresh array = `symbolic_s`; numeric into fresh C arrays = `numeric_s`,
//! their allocation untimed: a C caller's malloc does not clear them, `vec!` does;
//! `total_s` = median symbolic + median numeric, as the MKL driver reports it), then
//! one warm-up and `reps` timed numeric-only calls on the last plan with the values of A
//! alternately scaled by 2 (`reuse_s`, median), checked to have picked up the new values.
//!
//! `--output caller` (default): C's arrays are the benchmark's, allocated fresh for every
//! product like a C caller's malloc (MKL's driver gets a fresh C from MKL the same way).
//! `--output owned`: C is a library-owned result (`exec::numeric_owned`, the numeric
//! half of `spgemm_multiply`), whose arrays come from the handle's cache of destroyed
//! results, as in a loop of `spgemm_multiply` calls (`symbolic_s` is then the symbolic
//! phase alone; the row offsets are written in `numeric_s`).

mod check;
mod dist_mode;
mod dist_model_mode;
mod dist_spmm_mode;
// `gen` is a reserved word in edition 2024: the module is gen.rs, named generators here.
#[path = "gen.rs"]
mod generators;
mod mtx;
mod spmm_mode;

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle, Options};
use spgemm::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use spgemm::{Error, Status};
use spgemm::{
    IndexSliceMut, IndexVec, OffsetSliceMut, OffsetVec, OwnedCsr, ValueSliceMut, ValueVec,
};
use spgemm::{OutputFormat, Plan};

use mtx::Csr;

const USAGE: &str = "usage: spgemm-bench list-algs | spgemm-bench spmm --a A.mtx ... (see `spgemm-bench spmm --help`) \
| spgemm-bench gen OUTDIR [--only GROUP|NAME,...] \
| spgemm-bench spgemm --a A.mtx|gen:NAME --b B.mtx|gen:NAME|A [--alg|--algo auto,kkdense,...|all] \
[--threads N (default 2)] [--reps N (default 5)] [--sorted [0|1] | --unsorted (default sorted)] \
[--validate 0|1 (default 1)] [--check-rows N (default 200)] [--output caller|owned (default caller)]. \
gen:NAME generates a gen_matrices.py input in memory; NAME is one of";

fn usage() -> String {
    format!("{USAGE} {}", generators::NAMES_HELP)
}

struct Config {
    a: String,
    b: String,
    algs: Vec<Algorithm>,
    threads: usize,
    reps: usize,
    sorted: bool,
    validate: bool,
    check_rows: usize,
    /// C in library-owned (recycled) arrays instead of fresh caller arrays.
    owned: bool,
}

fn algorithm_names() -> String {
    Algorithm::ALL
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_args(args: &[String]) -> Result<Config, String> {
    if args.first().map(String::as_str) != Some("spgemm") {
        return Err(usage());
    }
    let mut cfg = Config {
        a: String::new(),
        b: String::new(),
        algs: vec![Algorithm::Auto],
        threads: 2,
        reps: 5,
        sorted: true,
        validate: true,
        check_rows: 200,
        owned: false,
    };
    let mut it = args[1..].iter().peekable();
    while let Some(key) = it.next() {
        // Plain flags: `--unsorted`, and `--sorted` when no 0|1 follows it.
        if key == "--unsorted" {
            cfg.sorted = false;
            continue;
        }
        if key == "--sorted" && !matches!(it.peek().map(|v| v.as_str()), Some("0" | "1")) {
            cfg.sorted = true;
            continue;
        }
        let val = it
            .next()
            .ok_or_else(|| format!("{key}: missing value\n{}", usage()))?;
        let num = |what: &str| {
            val.parse::<usize>()
                .map_err(|_| format!("{what}: '{val}' is not a non-negative integer"))
        };
        let flag = |what: &str| match val.as_str() {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(format!("{what}: '{val}' is not 0 or 1")),
        };
        match key.as_str() {
            "--a" => cfg.a = val.clone(),
            "--b" => cfg.b = val.clone(),
            "--alg" | "--algo" => {
                cfg.algs = if val == "all" {
                    Algorithm::ALL.to_vec()
                } else {
                    val.split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| {
                            Algorithm::from_name(s).ok_or_else(|| {
                                format!(
                                    "--alg: unknown algorithm '{s}' (known: {})",
                                    algorithm_names()
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?
                };
                if cfg.algs.is_empty() {
                    return Err("--alg: empty list".into());
                }
            }
            "--threads" => cfg.threads = num("--threads")?,
            "--reps" => cfg.reps = num("--reps")?,
            "--sorted" => cfg.sorted = flag("--sorted")?,
            "--validate" => cfg.validate = flag("--validate")?,
            "--check-rows" => cfg.check_rows = num("--check-rows")?,
            "--output" => {
                cfg.owned = match val.as_str() {
                    "caller" => false,
                    "owned" => true,
                    _ => return Err(format!("--output: '{val}' is not caller or owned")),
                }
            }
            _ => return Err(format!("unknown option '{key}'\n{}", usage())),
        }
    }
    if cfg.a.is_empty() || cfg.b.is_empty() {
        return Err(format!("--a and --b are required\n{}", usage()));
    }
    if cfg.threads == 0 || cfg.reps == 0 {
        return Err("--threads and --reps must be at least 1".into());
    }
    Ok(cfg)
}

/// The name the JSON lines carry: NAME for `gen:NAME`, the file's stem for a path.
fn input_name(spec: &str) -> String {
    match spec.strip_prefix(GEN_PREFIX) {
        Some(name) => name.to_string(),
        None => stem(spec),
    }
}

/// `--a` / `--b` value naming a generated matrix.
const GEN_PREFIX: &str = "gen:";

/// A and B (None: B is A) from files or generators; two operators of one SA level are
/// generated by a single setup.
fn load_inputs(a_spec: &str, b_spec: &str) -> Result<(Csr, Option<Csr>), String> {
    let a_gen = a_spec.strip_prefix(GEN_PREFIX);
    let b_gen = if b_spec == "A" {
        None
    } else {
        b_spec.strip_prefix(GEN_PREFIX)
    };
    if let (Some(an), Some(bn)) = (a_gen, b_gen)
        && generators::GROUPS
            .iter()
            .any(|(_, ns)| ns.contains(&an) && ns.contains(&bn))
    {
        let group = generators::generate_group_of(an)?;
        let pick = |n: &str| {
            group
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, m)| m.clone())
                .ok_or_else(|| {
                    format!(
                        "gen:{n}: unknown matrix (known: {})",
                        generators::NAMES_HELP
                    )
                })
        };
        return Ok((pick(an)?, Some(pick(bn)?)));
    }
    let load = |spec: &str, which: &str| match spec.strip_prefix(GEN_PREFIX) {
        Some(name) => generators::generate(name).map_err(|e| format!("{which} {e}")),
        None => mtx::read_mtx(Path::new(spec)).map_err(|e| format!("{which} {e}")),
    };
    let a = load(a_spec, "--a")?;
    let b = if b_spec == "A" {
        None
    } else {
        Some(load(b_spec, "--b")?)
    };
    Ok((a, b))
}

/// Several inputs from files or generators (matrices of one generated group made once).
fn load_all(specs: &[String]) -> Result<Vec<Csr>, String> {
    let mut groups: Vec<Vec<(String, Csr)>> = Vec::new();
    let mut out = Vec::new();
    for s in specs {
        let m = match s.strip_prefix(GEN_PREFIX) {
            None => mtx::read_mtx(Path::new(s))?,
            Some(name) => {
                let known = groups.iter().flatten().find(|(k, _)| k == name);
                match known {
                    Some((_, m)) => m.clone(),
                    None => {
                        let g = generators::generate_group_of(name).or_else(|_| {
                            generators::generate(name).map(|m| vec![(name.to_string(), m)])
                        })?;
                        let m = g
                            .iter()
                            .find(|(k, _)| k == name)
                            .map(|(_, m)| m.clone())
                            .ok_or_else(|| format!("gen:{name}: unknown matrix"))?;
                        groups.push(g);
                        m
                    }
                }
            }
        };
        out.push(m);
    }
    Ok(out)
}

/// `spgemm-bench gen OUTDIR [--only NAME,...]`: writes the generated matrices as Matrix
/// Market files, manifest.tsv and products.txt (gen_matrices.py's layout).
fn gen_main(args: &[String]) -> Result<(), String> {
    let (dir, only) = match args {
        [dir] => (dir, Vec::new()),
        [dir, flag, list] if flag == "--only" => (
            dir,
            list.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect::<Vec<_>>(),
        ),
        _ => return Err(usage()),
    };
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // What to build: whole groups (a group name, or one of its fixed-size matrices), and
    // grid matrices of other sizes by their own name (e.g. lap3d_7pt_10).
    let mut jobs: Vec<(&str, String)> = Vec::new();
    for (g, names) in generators::GROUPS {
        if only.is_empty() || only.iter().any(|o| o == g || names.contains(&o.as_str())) {
            jobs.push((g, names[0].to_string()));
        }
    }
    for (g, names) in generators::NAMED_ONLY {
        if only.iter().any(|o| o == g || names.contains(&o.as_str())) {
            jobs.push((g, names[0].to_string()));
        }
    }
    for o in &only {
        let in_groups = generators::GROUPS
            .iter()
            .chain(generators::NAMED_ONLY)
            .any(|(g, ns)| o == g || ns.contains(&o.as_str()));
        match generators::group_of(o) {
            Some(g) if !in_groups => jobs.push((g, o.clone())),
            None if !in_groups => {
                return Err(format!("--only: unknown group or matrix '{o}'"));
            }
            _ => {}
        }
    }
    let mut present: Vec<(String, &str)> = Vec::new();
    for (g, first) in jobs {
        let t0 = Instant::now();
        for (name, m) in generators::generate_group_of(&first)? {
            let path = dir.join(format!("{name}.mtx"));
            generators::write_mtx(
                &path,
                &m,
                &format!("generated by spgemm-bench gen group={g}"),
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("[gen] {name}: {} x {}, nnz={}", m.nrows, m.ncols, m.nnz());
            present.push((name, g));
        }
        eprintln!("[gen] {g}: {:.1} s", t0.elapsed().as_secs_f64());
    }
    // The manifest and the product list cover what was written now and every matrix of
    // the fixed list already present in OUTDIR (as gen_matrices.py keeps its manifest).
    for (g, ns) in generators::GROUPS.iter().chain(generators::NAMED_ONLY) {
        for n in *ns {
            if dir.join(format!("{n}.mtx")).exists() && !present.iter().any(|(p, _)| p == n) {
                present.push((n.to_string(), g));
            }
        }
    }
    present.sort();
    let mut manifest = String::from("#name\tgroup\trows\tcols\tnnz\tbytes\n");
    for (name, g) in &present {
        let path = dir.join(format!("{name}.mtx"));
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let header = mtx_size_line(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dims: Vec<&str> = header.split_whitespace().collect();
        manifest.push_str(&format!(
            "{name}\t{g}\t{}\t{}\n",
            dims.join("\t"),
            meta.len()
        ));
    }
    let present: Vec<String> = present.into_iter().map(|(n, _)| n).collect();
    let mut prods = String::new();
    for (label, a, b) in generators::products(&present) {
        prods.push_str(&format!("{label}\t{a}\t{b}\n"));
    }
    for (file, text) in [("manifest.tsv", manifest), ("products.txt", prods)] {
        let path = dir.join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The size line ("rows cols nnz") of a Matrix Market file.
fn mtx_size_line(path: &Path) -> std::io::Result<String> {
    use std::io::BufRead;
    let f = std::io::BufReader::new(std::fs::File::open(path)?);
    for line in f.lines() {
        let line = line?;
        if !line.starts_with('%') && !line.trim().is_empty() {
            return Ok(line.trim().to_string());
        }
    }
    Ok(String::new())
}

fn stem(path: &str) -> String {
    let base = Path::new(path)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    base.strip_suffix(".mtx").unwrap_or(&base).to_string()
}

fn any<'a>(m: &'a Csr, vals: &'a [f64]) -> AnyCsr<'a> {
    AnyCsr {
        nrows: m.nrows,
        ncols: m.ncols,
        base: 0,
        offsets: OffsetSlice::I32(&m.row_ptr),
        indices: IndexSlice::I32(&m.col),
        values: Some(ValueSlice::F64(vals)),
        value_type: ValueType::Float64,
    }
}

/// The kernel's peak resident memory of this process (since the last reset), KiB.
fn kernel_peak_kib() -> Option<u64> {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is a valid initial value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (rc == 0).then_some(ru.ru_maxrss as u64)
}

/// Peak resident memory seen before the last [`forget_check_memory`], KiB.
static PEAK_BEFORE_CHECKS_KIB: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Keeps the peak so far; called before the reference checks.
fn keep_peak() {
    let peak = kernel_peak_kib().unwrap_or(0);
    PEAK_BEFORE_CHECKS_KIB.fetch_max(peak, std::sync::atomic::Ordering::Relaxed);
}

/// Resets the kernel's peak to the current resident memory (Linux `/proc/self/clear_refs`
/// 5) after the reference checks: their buffers (up to tens of MB for a hub row's
/// products) are the benchmark's, not the library's, and the peer drivers have none.
/// Where the reset is not available the peak keeps counting them. The checks' freed
/// buffers are first handed back to the system (glibc keeps freed blocks below its
/// dynamic mmap threshold, up to 32 MiB, in its heaps, where the reset would count them).
fn forget_check_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process so far, MiB, without the reference checks'
/// buffers (see [`forget_check_memory`]).
fn peak_rss_mb() -> f64 {
    match kernel_peak_kib() {
        Some(now) => {
            let before = PEAK_BEFORE_CHECKS_KIB.load(std::sync::atomic::Ordering::Relaxed);
            now.max(before) as f64 / 1024.0
        }
        None => f64::NAN,
    }
}

/// With SPGEMM_BENCH_MEMTRACE set, prints the resident and peak resident memory (MiB) at
/// stage `at` to stderr: what the peak_rss_mb of a run consists of.
fn memtrace(at: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("SPGEMM_BENCH_MEMTRACE").is_some()) {
        let st = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let get = |k: &str| {
            st.lines()
                .find(|l| l.starts_with(k))
                .map(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .unwrap_or("0")
                        .parse::<f64>()
                        .unwrap_or(0.0)
                        / 1024.0
                })
                .unwrap_or(0.0)
        };
        eprintln!(
            "memtrace {at}: rss {:.1} hwm {:.1}",
            get("VmRSS:"),
            get("VmHWM:")
        );
    }
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut t = v.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2]
    } else {
        0.5 * (t[n / 2 - 1] + t[n / 2])
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// C's row offsets as the caller's array (int32 unless nnz(C) needs int64).
enum Offsets {
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl Offsets {
    fn zeroed(kind: IndexType, len: usize) -> Offsets {
        // vec![0; n] gets fresh zero pages from the allocator, like a C caller's malloc:
        // first-touch cost lands in the phase that writes the array.
        match kind {
            IndexType::Int32 => Offsets::I32(vec![0; len]),
            _ => Offsets::I64(vec![0; len]),
        }
    }
    fn as_mut(&mut self) -> OffsetSliceMut<'_> {
        match self {
            Offsets::I32(v) => OffsetSliceMut::I32(v),
            Offsets::I64(v) => OffsetSliceMut::I64(v),
        }
    }
    fn view(&self) -> check::Offsets<'_> {
        match self {
            Offsets::I32(v) => check::Offsets::I32(v),
            Offsets::I64(v) => check::Offsets::I64(v),
        }
    }
}

/// C as the benchmark's own arrays or as a library-owned result (`--output`).
enum Output {
    Caller {
        offsets: Offsets,
        cols: Vec<i32>,
        vals: Vec<f64>,
    },
    Owned(OwnedCsr),
}

impl Output {
    fn offsets(&self) -> check::Offsets<'_> {
        match self {
            Output::Caller { offsets, .. } => offsets.view(),
            Output::Owned(c) => match &c.offsets {
                OffsetVec::I32(v) => check::Offsets::I32(v),
                OffsetVec::I64(v) => check::Offsets::I64(v),
                OffsetVec::U64(_) => unreachable!("the benchmark asks for i32 or i64 offsets"),
            },
        }
    }
    fn cols(&self) -> &[i32] {
        match self {
            Output::Caller { cols, .. } => cols,
            Output::Owned(c) => match &c.indices {
                IndexVec::I32(v) => v,
                IndexVec::I64(_) => unreachable!("the benchmark asks for i32 column indices"),
            },
        }
    }
    fn vals(&self) -> &[f64] {
        match self {
            Output::Caller { vals, .. } => vals,
            Output::Owned(c) => match &c.values {
                Some(ValueVec::F64(v)) => v,
                _ => unreachable!("the benchmark's inputs are f64"),
            },
        }
    }
    fn arrays_mut(&mut self) -> (IndexSliceMut<'_>, ValueSliceMut<'_>) {
        match self {
            Output::Caller { cols, vals, .. } => {
                (IndexSliceMut::I32(cols), ValueSliceMut::F64(vals))
            }
            Output::Owned(c) => (
                c.indices.as_mut(),
                c.values
                    .as_mut()
                    .expect("the benchmark's inputs have values")
                    .as_mut(),
            ),
        }
    }
}

fn lib_err(what: &str, e: Error) -> String {
    format!("{what}: {:?}: {}", e.status, e.message)
}

/// Inputs of one benchmark run.
struct Inputs {
    a: Csr,
    b: Option<Csr>, // None: B is A
    a_name: String,
    b_name: String,
    mults: u64,
    /// Rows of C recomputed by the reference check.
    sample: Vec<usize>,
    sum_ref: (f64, f64),
}

impl Inputs {
    fn b(&self) -> &Csr {
        self.b.as_ref().unwrap_or(&self.a)
    }
    /// A and B (B = A when squaring: then it follows A's values).
    fn pair(&self) -> (AnyCsr<'_>, AnyCsr<'_>) {
        let a = any(&self.a, &self.a.val);
        let b = match &self.b {
            Some(b) => any(b, &b.val),
            None => a,
        };
        (a, b)
    }
    /// Multiplies A's values by `f` (a power of two: exact), outside any timed region.
    /// In place, like the MKL driver, so no second copy of A counts in the peak RSS.
    fn scale_a(&mut self, f: f64) {
        self.a.val.iter_mut().for_each(|v| *v *= f);
    }
}

/// What one algorithm produced.
struct AlgResult {
    plan_symbolic: Algorithm,
    plan_numeric: Algorithm,
    nnz_c: usize,
    sym: Vec<f64>,
    num: Vec<f64>,
    reuse: Vec<f64>,
    sum_c: f64,
    sumabs_c: f64,
    rows_sorted: bool,
    checks: Vec<String>,
    failures: Vec<String>,
}

fn product_from_scratch(
    h: &Handle,
    inp: &Inputs,
    offs_kind: IndexType,
    owned: bool,
) -> Result<(Plan, Output, f64, f64), Error> {
    let (a, b) = inp.pair();
    let format = OutputFormat {
        offsets: offs_kind,
        indices: IndexType::Int32,
        base: 0,
    };
    memtrace("before symbolic");
    let t0 = Instant::now();
    let plan = spgemm::symbolic(h, &a, &b, format)?;
    memtrace("after symbolic");
    // With SPGEMM_BENCH_PLAN set, what the plan chose (compressed B, record, groups).
    if std::env::var_os("SPGEMM_BENCH_PLAN").is_some() {
        eprintln!("{}", plan.describe());
    }
    if owned {
        let t1 = Instant::now();
        let c = spgemm::numeric_owned(h, &plan, &a, &b)?;
        let t2 = Instant::now();
        memtrace("after numeric");
        return Ok((
            plan,
            Output::Owned(c),
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
        ));
    }
    let mut offsets = Offsets::zeroed(offs_kind, plan.nrows() + 1);
    spgemm::write_row_offsets_on(h, &plan, offsets.as_mut())?;
    let ts = t0.elapsed().as_secs_f64();
    // The caller's allocation of C is not the library's work (a C caller's malloc does not
    // clear it; vec! clears memory glibc reuses, serially). Fresh pages still fault in the
    // numeric call, where the library touches them first.
    let nnz = plan.nnz();
    let mut cols = vec![0i32; nnz];
    let mut vals = vec![0f64; nnz];
    let t1 = Instant::now();
    spgemm::numeric(
        h,
        &plan,
        &a,
        &b,
        IndexSliceMut::I32(&mut cols),
        Some(ValueSliceMut::F64(&mut vals)),
    )?;
    let t2 = Instant::now();
    memtrace("after numeric");
    Ok((
        plan,
        Output::Caller {
            offsets,
            cols,
            vals,
        },
        ts,
        (t2 - t1).as_secs_f64(),
    ))
}

fn run_alg(cfg: &Config, inp: &mut Inputs, alg: Algorithm) -> Result<AlgResult, String> {
    let mut h = Handle::new(cfg.threads).map_err(|e| lib_err("handle", e))?;
    h.options = Options {
        algorithm: alg,
        sorted_output: cfg.sorted,
        validate: cfg.validate,
        ..Options::default()
    };
    let mut offs_kind = IndexType::Int32;
    let mut sym = Vec::with_capacity(cfg.reps);
    let mut num = Vec::with_capacity(cfg.reps);
    let mut last: Option<(Plan, Output)> = None;
    for it in 0..=cfg.reps {
        // Free the previous C first, as a caller replacing its product would.
        drop(last.take());
        let r = match product_from_scratch(&h, inp, offs_kind, cfg.owned) {
            Err(e) if it == 0 && e.status == Status::IndexOverflow => {
                offs_kind = IndexType::Int64;
                product_from_scratch(&h, inp, offs_kind, cfg.owned)
            }
            r => r,
        };
        let (plan, out, ts, tn) = r.map_err(|e| lib_err("product", e))?;
        if it > 0 {
            sym.push(ts);
            num.push(tn);
        }
        last = Some((plan, out));
    }
    let (plan, mut out) = last.expect("at least one product");
    let (sum_c, sumabs_c) = check::checksums(out.vals());

    // Check the product before the reuse runs overwrite it; the peak memory so far is kept
    // and the checks' own buffers left out of it (see `forget_check_memory`).
    keep_peak();
    let mut checks = Vec::new();
    let mut failures = Vec::new();
    let c = check::Product {
        ncols: inp.b().ncols,
        row_ptr: out.offsets(),
        col: out.cols(),
        val: out.vals(),
    };
    let mut record = |name: &str, r: Result<(), String>| match r {
        Ok(()) => checks.push(name.to_string()),
        Err(e) => failures.push(format!("{name}: {e}")),
    };
    if plan.flops() == inp.mults {
        record("flops", Ok(()));
    } else {
        record(
            "flops",
            Err(format!(
                "plan counts {} multiplications, the benchmark {}",
                plan.flops(),
                inp.mults
            )),
        );
    }
    let mut rows_sorted = false;
    record(
        "structure",
        check::structure(&c, cfg.sorted).map(|s| rows_sorted = s),
    );
    record("sums", check::sums(sum_c, sumabs_c, inp.sum_ref));
    record(
        &format!("rows:{}", inp.sample.len()),
        check::rows(&inp.a, inp.b(), &c, &inp.sample),
    );

    forget_check_memory();
    // Reuse: numeric only, same plan and output arrays, values of A changed before every
    // call (x2, /2, ...). The count is chosen so the last call sees A scaled by 2, so
    // stale output is caught below; A is restored afterwards.
    let mut reuse = Vec::with_capacity(cfg.reps);
    let mut scaled = false;
    let mut result = Ok(());
    for r in 0..=cfg.reps {
        let want_scaled = (cfg.reps - r).is_multiple_of(2);
        if want_scaled != scaled {
            inp.scale_a(if want_scaled { 2.0 } else { 0.5 });
            scaled = want_scaled;
        }
        let (a, b) = inp.pair();
        let (cols, vals) = out.arrays_mut();
        let t0 = Instant::now();
        result = spgemm::numeric(&h, &plan, &a, &b, cols, Some(vals));
        if result.is_err() {
            break;
        }
        if r > 0 {
            reuse.push(t0.elapsed().as_secs_f64());
        }
        memtrace("after reuse call");
    }
    if scaled {
        inp.scale_a(0.5);
    }
    result.map_err(|e| lib_err("reuse", e))?;
    // With SPGEMM_BENCH_PLAN set, also what the reuse calls learned (slot maps).
    if std::env::var_os("SPGEMM_BENCH_PLAN").is_some() {
        eprintln!("after the reuse calls:\n{}", plan.describe());
    }
    // Scaling by a power of two is exact, so C must scale exactly (up to the summation).
    let factor = if inp.b.is_none() { 4.0 } else { 2.0 };
    let (s2, sa2) = check::checksums(out.vals());
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * y.abs() + f64::MIN_POSITIVE;
    if close(sa2, factor * sumabs_c) && close(s2, factor * sum_c) {
        checks.push("reuse".into());
    } else {
        failures.push(format!(
            "reuse: after scaling A by 2, sumabsC = {sa2:e}, expected {:e} (stale or wrong values)",
            factor * sumabs_c
        ));
    }
    Ok(AlgResult {
        plan_symbolic: plan.algorithms().0,
        plan_numeric: plan.algorithms().1,
        nnz_c: plan.nnz(),
        sym,
        num,
        reuse,
        sum_c,
        sumabs_c,
        rows_sorted,
        checks,
        failures,
    })
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        "null".into()
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn common_fields(cfg: &Config, inp: &Inputs, alg: Algorithm) -> Vec<(&'static str, String)> {
    let b = inp.b();
    vec![
        ("lib", json_str("libspgemm")),
        ("alg", json_str(alg.name())),
        ("A", json_str(&inp.a_name)),
        ("B", json_str(&inp.b_name)),
        ("threads", cfg.threads.to_string()),
        ("m", inp.a.nrows.to_string()),
        ("n", b.ncols.to_string()),
        ("k", inp.a.ncols.to_string()),
        ("nnzA", inp.a.nnz().to_string()),
        ("nnzB", b.nnz().to_string()),
    ]
}

fn print_line(fields: &[(&str, String)]) {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", json_str(k)))
        .collect();
    println!("{{{}}}", body.join(","));
}

/// First successful algorithm's result, the others are compared with it.
struct CrossRef {
    alg: &'static str,
    nnz_c: usize,
    sumabs_c: f64,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("spmm") {
        return ExitCode::from(spmm_mode::main(&args[1..]).clamp(0, 255) as u8);
    }
    if args.first().map(String::as_str) == Some("dist-spgemm") {
        return ExitCode::from(dist_mode::main(&args[1..]).clamp(0, 255) as u8);
    }
    if args.first().map(String::as_str) == Some("dist-model") {
        return ExitCode::from(dist_model_mode::main(&args[1..]).clamp(0, 255) as u8);
    }
    if args.first().map(String::as_str) == Some("dist-spmm") {
        return ExitCode::from(dist_spmm_mode::main(&args[1..]).clamp(0, 255) as u8);
    }
    if args.first().map(String::as_str) == Some("gen") {
        return match gen_main(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("spgemm-bench gen: {e}");
                ExitCode::from(2)
            }
        };
    }
    if args.first().map(String::as_str) == Some("list-algs") {
        // For scripts: every algorithm the library offers, one name a line.
        for a in Algorithm::ALL {
            println!("{}", a.name());
        }
        return ExitCode::SUCCESS;
    }
    let cfg = match parse_args(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spgemm-bench: {e}");
            return ExitCode::from(1);
        }
    };
    let (a, b) = match load_inputs(&cfg.a, &cfg.b) {
        Ok(ab) => ab,
        Err(e) => {
            eprintln!("spgemm-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let b_ref = b.as_ref().unwrap_or(&a);
    if a.ncols != b_ref.nrows {
        eprintln!(
            "spgemm-bench: A is {} x {} but B is {} x {}",
            a.nrows, a.ncols, b_ref.nrows, b_ref.ncols
        );
        return ExitCode::from(2);
    }
    let mults = check::multiplications(&a, b_ref);
    let sample = check::sample_rows(&check::row_multiplications(&a, b_ref), cfg.check_rows);
    let sum_ref = check::sum_reference(&a, b_ref);
    let a_name = input_name(&cfg.a);
    let b_name = if b.is_none() {
        a_name.clone()
    } else {
        input_name(&cfg.b)
    };
    let mut inp = Inputs {
        a,
        b,
        a_name,
        b_name,
        mults,
        sample,
        sum_ref,
    };

    memtrace("inputs read");
    let mut failed = false;
    let mut cross: Option<CrossRef> = None;
    for &alg in &cfg.algs {
        let mut fields = common_fields(&cfg, &inp, alg);
        let result = run_alg(&cfg, &mut inp, alg);
        match result {
            Ok(mut r) => {
                match &cross {
                    None => {
                        cross = Some(CrossRef {
                            alg: alg.name(),
                            nnz_c: r.nnz_c,
                            sumabs_c: r.sumabs_c,
                        })
                    }
                    Some(x) => {
                        let name = format!("xalg:{}", x.alg);
                        if r.nnz_c != x.nnz_c {
                            r.failures
                                .push(format!("{name}: nnzC {} vs {}", r.nnz_c, x.nnz_c));
                        } else if !check::within(
                            (r.sumabs_c - x.sumabs_c).abs(),
                            1e-10 * x.sumabs_c,
                        ) {
                            r.failures.push(format!(
                                "{name}: sumabsC {:e} vs {:e}",
                                r.sumabs_c, x.sumabs_c
                            ));
                        } else {
                            r.checks.push(name);
                        }
                    }
                }
                let (ts, tn) = (median(&r.sym), median(&r.num));
                let total = ts + tn;
                let per_rep: Vec<f64> = r.sym.iter().zip(&r.num).map(|(s, n)| s + n).collect();
                let flops = 2 * inp.mults;
                let ok = r.failures.is_empty();
                failed |= !ok;
                fields.extend([
                    ("nnzC", r.nnz_c.to_string()),
                    ("flops", flops.to_string()),
                    ("symbolic_s", json_num(ts)),
                    ("numeric_s", json_num(tn)),
                    ("total_s", json_num(total)),
                    ("reuse_s", json_num(median(&r.reuse))),
                    ("gflops", json_num(flops as f64 / total / 1e9)),
                    ("sorted_output", r.rows_sorted.to_string()),
                    ("sumC", json_num(r.sum_c)),
                    ("sumabsC", json_num(r.sumabs_c)),
                    ("alg_symbolic", json_str(r.plan_symbolic.name())),
                    ("alg_numeric", json_str(r.plan_numeric.name())),
                    ("sort_requested", cfg.sorted.to_string()),
                    ("validate", cfg.validate.to_string()),
                    (
                        "output",
                        json_str(if cfg.owned { "owned" } else { "caller" }),
                    ),
                    ("reps", cfg.reps.to_string()),
                    ("total_min_s", json_num(min(&per_rep))),
                    ("reuse_min_s", json_num(min(&r.reuse))),
                    (
                        "check",
                        json_str(&if ok {
                            "ok".to_string()
                        } else {
                            format!("FAIL: {}", r.failures.join("; "))
                        }),
                    ),
                    ("checked", json_str(&r.checks.join(","))),
                    ("peak_rss_mb", format!("{:.1}", peak_rss_mb())),
                ]);
            }
            Err(e) => {
                failed = true;
                fields.extend([
                    ("sort_requested", cfg.sorted.to_string()),
                    ("validate", cfg.validate.to_string()),
                    ("check", json_str("error")),
                    ("error", json_str(&e)),
                    ("peak_rss_mb", format!("{:.1}", peak_rss_mb())),
                ]);
            }
        }
        print_line(&fields);
    }
    if failed {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}
