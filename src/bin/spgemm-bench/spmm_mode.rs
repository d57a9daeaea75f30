//! The `spmm` mode of the benchmark program: Y = A * X through the C ABI (`spgemm_spmm`),
//! A from a Matrix Market file, X dense with the values the MKL anchor driver uses (so
//! `sumC` is comparable), for each k and layout. Prints one JSON line per (alg, k, layout)
//! with the SpMM fields of the anchors' SCHEMA.md:
//!
//! - alg `mm`: plain calls, no analysis (validation off, as MKL does not validate);
//! - alg `mm_opt`: after `spgemm_spmm_analysis_create` (its time in `inspect_s`).
//!
//! Usage: spgemm-bench spmm --a PATH[,PATH...] [--k 1,8,16,32,64,128] [--layout row|col|both]
//!        [--threads N] [--reps N] [--alg mm|mm_opt|both] [--beta B]
//! With SPGEMM_BENCH_TIMES set, every timed repetition is printed to stderr (microseconds).

use std::ffi::CStr;
use std::time::Instant;

use spgemm::ffi::handle::{
    spgemm_create, spgemm_destroy, spgemm_last_error, spgemm_set_num_threads, spgemm_set_validation,
};
use spgemm::ffi::matrix::{spgemm_matrix_create_csr, spgemm_matrix_destroy, spgemm_matrix_t};
use spgemm::ffi::spmm::{
    SPGEMM_LAYOUT_COL_MAJOR, SPGEMM_LAYOUT_ROW_MAJOR, SPGEMM_OPERATION_NON_TRANSPOSE, spgemm_spmm,
    spgemm_spmm_analysis_create, spgemm_spmm_analysis_destroy, spgemm_spmm_analysis_t,
};
use spgemm::ffi::{SPGEMM_INDEX_BASE_ZERO, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64};

struct Args {
    paths: Vec<String>,
    ks: Vec<usize>,
    layouts: Vec<&'static str>,
    threads: usize,
    reps: usize,
    algs: Vec<&'static str>,
    beta: f64,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        paths: vec![],
        ks: vec![1, 8, 16, 32, 64, 128],
        layouts: vec!["row", "col"],
        threads: 0,
        reps: 5,
        algs: vec!["mm", "mm_opt"],
        beta: 0.0,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--a" => a.paths.extend(val()?.split(',').map(String::from)),
            "--k" => {
                a.ks = val()?
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|_| format!("bad k '{s}'")))
                    .collect::<Result<_, _>>()?
            }
            "--layout" => {
                a.layouts = match val()?.as_str() {
                    "row" => vec!["row"],
                    "col" => vec!["col"],
                    "both" => vec!["row", "col"],
                    s => return Err(format!("bad layout '{s}'")),
                }
            }
            "--alg" => {
                a.algs = match val()?.as_str() {
                    "mm" => vec!["mm"],
                    "mm_opt" => vec!["mm_opt"],
                    "both" => vec!["mm", "mm_opt"],
                    s => return Err(format!("bad alg '{s}'")),
                }
            }
            "--threads" => a.threads = val()?.parse().map_err(|_| "bad --threads")?,
            "--reps" => a.reps = val()?.parse::<usize>().map_err(|_| "bad --reps")?.max(1),
            "--beta" => a.beta = val()?.parse().map_err(|_| "bad --beta")?,
            s => return Err(format!("unknown argument '{s}'")),
        }
    }
    if a.paths.is_empty() {
        return Err("--a PATH is required".into());
    }
    Ok(a)
}

/// X's entries, as in the MKL anchor driver (`mkl_spmm.c`).
pub(crate) fn xval(i: usize, j: usize) -> f64 {
    ((i as i64 * 7 + j as i64 * 13) % 17 - 8) as f64 / 8.0
}

/// Compensated sum (Kahan-Babuska), as the anchors' checksums.
pub(crate) fn sum(v: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for x in v {
        let t = s + x;
        if s.abs() >= x.abs() {
            c += (s - t) + x;
        } else {
            c += (x - t) + s;
        }
        s = t;
    }
    s + c
}

fn check(st: i32, h: *const spgemm::ffi::handle::spgemm_handle_t, what: &str) {
    if st != 0 {
        // SAFETY: the library returns a NUL-terminated string.
        let msg = unsafe { CStr::from_ptr(spgemm_last_error(h)) };
        eprintln!("{what} failed: status {st}: {}", msg.to_string_lossy());
        std::process::exit(4);
    }
}

pub fn main(args: &[String]) -> i32 {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("spmm: {e}\n{}", USAGE);
            return 2;
        }
    };
    if std::env::var_os("SPGEMM_BENCH_NO_STREAM").is_some() {
        // A/B switch for the non-temporal stores of Y (library default: Y >= 16 MiB).
        spgemm::tuning::STREAM_Y_BYTES.store(usize::MAX, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(v) = std::env::var("SPGEMM_BENCH_WINDOW_BYTES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // A/B switch for the column-major window rings (0: off; library default 512 KiB).
        spgemm::tuning::WINDOW_BYTES.store(v, std::sync::atomic::Ordering::Relaxed);
    }
    let mut h = std::ptr::null_mut();
    // SAFETY (all ABI calls below): arguments follow the header's contracts; arrays outlive
    // the descriptors and products that use them.
    unsafe {
        check(spgemm_create(&mut h), h, "spgemm_create");
        check(
            spgemm_set_num_threads(h, a.threads as i32),
            h,
            "set_num_threads",
        );
        check(spgemm_set_validation(h, 0), h, "set_validation");
    }
    let mut threads = 0i32;
    // SAFETY: as above.
    unsafe { spgemm::ffi::handle::spgemm_get_num_threads(h, &mut threads) };
    for path in &a.paths {
        let csr = match crate::mtx::read_mtx(std::path::Path::new(path)) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("spmm: {e}");
                return 3;
            }
        };
        let (m, n, nnz) = (csr.nrows, csr.ncols, csr.col.len());
        let mut desc: *mut spgemm_matrix_t = std::ptr::null_mut();
        // SAFETY: as above.
        unsafe {
            check(
                spgemm_matrix_create_csr(
                    &mut desc,
                    m as i64,
                    n as i64,
                    SPGEMM_INDEX_INT32,
                    csr.row_ptr.as_ptr().cast(),
                    SPGEMM_INDEX_INT32,
                    csr.col.as_ptr().cast(),
                    SPGEMM_VALUE_FLOAT64,
                    csr.val.as_ptr().cast(),
                    SPGEMM_INDEX_BASE_ZERO,
                ),
                h,
                "matrix_create_csr",
            );
        }
        for &k in &a.ks {
            let (mut xbuf, mut ybuf) = (vec![0.0f64; n * k + 8], vec![0.0f64; m * k + 8]);
            let x = aligned(&mut xbuf, n * k);
            let y = aligned(&mut ybuf, m * k);
            for &lay in &a.layouts {
                let (layout, ldx, ldy) = if lay == "row" {
                    (SPGEMM_LAYOUT_ROW_MAJOR, k, k)
                } else {
                    (SPGEMM_LAYOUT_COL_MAJOR, n.max(1), m.max(1))
                };
                for i in 0..n {
                    for j in 0..k {
                        let p = if lay == "row" { i * k + j } else { j * n + i };
                        x[p] = xval(i, j);
                    }
                }
                for &alg in &a.algs {
                    y.iter_mut().for_each(|v| *v = 0.0);
                    let mut an: *mut spgemm_spmm_analysis_t = std::ptr::null_mut();
                    let mut inspect = f64::NAN;
                    if alg == "mm_opt" {
                        let t0 = Instant::now();
                        // SAFETY: as above.
                        unsafe {
                            check(
                                spgemm_spmm_analysis_create(
                                    h,
                                    SPGEMM_OPERATION_NON_TRANSPOSE,
                                    desc,
                                    layout,
                                    k as i64,
                                    &mut an,
                                ),
                                h,
                                "spmm_analysis_create",
                            );
                        }
                        inspect = t0.elapsed().as_secs_f64();
                    }
                    let mut times = Vec::with_capacity(a.reps);
                    for it in 0..=a.reps {
                        let t0 = Instant::now();
                        // SAFETY: as above.
                        unsafe {
                            check(
                                spgemm_spmm(
                                    h,
                                    SPGEMM_OPERATION_NON_TRANSPOSE,
                                    1.0,
                                    desc,
                                    an,
                                    layout,
                                    k as i64,
                                    x.as_ptr().cast(),
                                    ldx as i64,
                                    a.beta,
                                    y.as_mut_ptr().cast(),
                                    ldy as i64,
                                ),
                                h,
                                "spgemm_spmm",
                            );
                        }
                        if it > 0 {
                            times.push(t0.elapsed().as_secs_f64());
                        }
                    }
                    if std::env::var_os("SPGEMM_BENCH_TIMES").is_some() {
                        let us: Vec<String> =
                            times.iter().map(|t| format!("{:.0}", t * 1e6)).collect();
                        eprintln!("times_us {alg} {lay} k={k}: {}", us.join(" "));
                    }
                    // SAFETY: as above.
                    unsafe { spgemm_spmm_analysis_destroy(an) };
                    let t = crate::median(&times);
                    let t_min = times.iter().copied().fold(f64::INFINITY, f64::min);
                    let flops = 2.0 * nnz as f64 * k as f64;
                    let mut bytes = 12.0 * nnz as f64
                        + 4.0 * (m + 1) as f64
                        + 8.0 * (n * k) as f64
                        + 8.0 * (m * k) as f64;
                    if a.beta != 0.0 {
                        bytes += 8.0 * (m * k) as f64;
                    }
                    let sum_c = sum(y.iter().copied());
                    let sumabs = sum(y.iter().map(|v| v.abs()));
                    let isa = spgemm::tuning::Isa::detect().name();
                    println!(
                        "{{\"lib\":\"libspgemm\",\"alg\":\"{alg}\",\"op\":\"spmm\",\"A\":\"{}\",\"B\":\"dense_k{k}_{lay}\",\"layout\":\"{lay}\",\"threads\":{threads},\"m\":{m},\"n\":{n},\"k\":{k},\"nnzA\":{nnz},\"flops\":{},\"beta\":{},\"inspect_s\":{},\"total_s\":{:.9},\"min_s\":{:.9},\"gflops\":{:.4},\"gbs\":{:.4},\"sumC\":{:.17e},\"sumabsC\":{:.17e},\"isa\":\"{isa}\",\"peak_rss_mb\":{:.1}}}",
                        crate::stem(path),
                        2 * nnz * k,
                        a.beta,
                        if inspect.is_nan() {
                            "null".to_string()
                        } else {
                            format!("{inspect:.9}")
                        },
                        t,
                        t_min,
                        flops / t / 1e9,
                        bytes / t / 1e9,
                        sum_c,
                        sumabs,
                        crate::peak_rss_mb()
                    );
                }
            }
        }
        // SAFETY: as above.
        unsafe { spgemm_matrix_destroy(desc) };
    }
    // SAFETY: as above.
    unsafe { spgemm_destroy(h) };
    0
}

pub const USAGE: &str = "usage: spgemm-bench spmm --a PATH[,PATH...] [--k 1,8,16,32,64,128] \
[--layout row|col|both] [--threads N] [--reps N] [--alg mm|mm_opt|both] [--beta B]";

/// `len` entries of `buf` (`len + 8` long) starting on a 64-byte boundary, as the MKL
/// driver's `mkl_malloc(.., 64)`; with `SPGEMM_BENCH_UNALIGNED` set, 16 bytes past one
/// instead (what a plain large `malloc` returns on glibc).
fn aligned(buf: &mut [f64], len: usize) -> &mut [f64] {
    let mis = (buf.as_ptr() as usize / 8) % 8;
    let mut off = (8 - mis) % 8;
    if std::env::var_os("SPGEMM_BENCH_UNALIGNED").is_some() {
        off = (off + 2) % 8;
    }
    &mut buf[off..off + len]
}
