//! Pinned vs unpinned workers: SpGEMM (symbolic + numeric) over the benchmark products,
//! through the C ABI as a caller would use it.
//!
//!   cargo run --release --example topo_bench -- [DIR] [REPS] [THREADS]
//!
//! DIR holds products.txt (label, A, B; B = "A" means A*A) and the .mtx files (default
//! /work/data/matrices). For each product, one handle per binding policy (`none`, and
//! the default `auto`) is created; repetitions alternate between them so drift on a shared
//! machine hits both alike. Prints the median times in milliseconds and auto/none ratios.
//! `TOPO_BENCH_CONTROL=1` makes the second handle unpinned too (an A/A run: its ratios
//! show the noise of the machine); `TOPO_BENCH_SKIP=label,label` leaves products out.

use std::ffi::c_void;
use std::ptr;
use std::time::Instant;

use spgemm::ffi::handle::*;
use spgemm::ffi::matrix::*;
use spgemm::ffi::plan::*;
use spgemm::ffi::topology::*;
use spgemm::ffi::*;

struct Csr {
    nrows: usize,
    ncols: usize,
    ptr: Vec<i64>,
    idx: Vec<i32>,
    val: Vec<f64>,
}

/// Reads a "coordinate real general" Matrix Market file into CSR (0-based).
fn read_mtx(path: &str) -> Csr {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines().filter(|l| !l.starts_with('%'));
    let dims: Vec<usize> = lines
        .next()
        .expect("size line")
        .split_whitespace()
        .map(|x| x.parse().expect("size"))
        .collect();
    let (nrows, ncols, nnz) = (dims[0], dims[1], dims[2]);
    let mut trip = Vec::with_capacity(nnz);
    for l in lines.take(nnz) {
        let mut it = l.split_whitespace();
        let r: usize = it.next().unwrap().parse().unwrap();
        let c: usize = it.next().unwrap().parse().unwrap();
        let v: f64 = it.next().map_or(1.0, |x| x.parse().unwrap());
        trip.push((r - 1, c - 1, v));
    }
    trip.sort_unstable_by_key(|&(r, c, _)| (r, c));
    let mut ptr = vec![0i64; nrows + 1];
    for &(r, _, _) in &trip {
        ptr[r + 1] += 1;
    }
    for i in 0..nrows {
        ptr[i + 1] += ptr[i];
    }
    Csr {
        nrows,
        ncols,
        ptr,
        idx: trip.iter().map(|t| t.1 as i32).collect(),
        val: trip.iter().map(|t| t.2).collect(),
    }
}

fn check(st: spgemm_status_t, what: &str) {
    if st != SPGEMM_STATUS_SUCCESS {
        // SAFETY: the thread's last error is a NUL-terminated string.
        let msg = unsafe { std::ffi::CStr::from_ptr(spgemm_last_error(ptr::null())) };
        panic!("{what} failed with status {st}: {}", msg.to_string_lossy());
    }
}

fn matrix(m: &Csr) -> *mut spgemm_matrix_t {
    let mut out = ptr::null_mut();
    // SAFETY: arrays live as long as `m`, which outlives the descriptor.
    check(
        unsafe {
            spgemm_matrix_create_csr(
                &mut out,
                m.nrows as i64,
                m.ncols as i64,
                SPGEMM_INDEX_INT64,
                m.ptr.as_ptr().cast::<c_void>(),
                SPGEMM_INDEX_INT32,
                m.idx.as_ptr().cast::<c_void>(),
                SPGEMM_VALUE_FLOAT64,
                m.val.as_ptr().cast::<c_void>(),
                SPGEMM_INDEX_BASE_ZERO,
            )
        },
        "matrix",
    );
    out
}

/// One symbolic + numeric product; returns (symbolic ms, numeric ms, nnz(C)).
fn product(
    h: *mut spgemm_handle_t,
    a: *mut spgemm_matrix_t,
    b: *mut spgemm_matrix_t,
    nrows: usize,
) -> (f64, f64, i64) {
    let mut c_ptr = vec![0i64; nrows + 1];
    let mut plan = ptr::null_mut();
    let t0 = Instant::now();
    // SAFETY: live handle and matrices; c_ptr has nrows + 1 entries.
    check(
        unsafe {
            spgemm_symbolic(
                h,
                a,
                b,
                SPGEMM_INDEX_INT64,
                SPGEMM_INDEX_INT32,
                SPGEMM_INDEX_BASE_ZERO,
                c_ptr.as_mut_ptr().cast(),
                &mut plan,
            )
        },
        "symbolic",
    );
    let sym = t0.elapsed().as_secs_f64() * 1e3;
    let mut nnz = 0i64;
    // SAFETY: live plan.
    check(unsafe { spgemm_plan_get_nnz(plan, &mut nnz) }, "nnz");
    let mut cols = vec![0i32; nnz as usize];
    let mut vals = vec![0f64; nnz as usize];
    let t1 = Instant::now();
    // SAFETY: arrays of nnz entries.
    check(
        unsafe {
            spgemm_numeric(
                h,
                plan,
                a,
                b,
                cols.as_mut_ptr().cast(),
                vals.as_mut_ptr().cast(),
            )
        },
        "numeric",
    );
    let num = t1.elapsed().as_secs_f64() * 1e3;
    // SAFETY: plan from spgemm_symbolic.
    unsafe { spgemm_plan_destroy(plan) };
    (sym, num, nnz)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "/work/data/matrices".into());
    let reps: usize = args.get(2).map_or(5, |s| s.parse().expect("REPS"));
    let threads: i32 = args.get(3).map_or(0, |s| s.parse().expect("THREADS"));
    let list = std::fs::read_to_string(format!("{dir}/products.txt")).expect("products.txt");

    let control = std::env::var_os("TOPO_BENCH_CONTROL").is_some();
    let skip = std::env::var("TOPO_BENCH_SKIP").unwrap_or_default();
    let skip: Vec<&str> = skip.split(',').filter(|s| !s.is_empty()).collect();
    let second = if control {
        SPGEMM_BIND_NONE
    } else {
        SPGEMM_BIND_AUTO
    };
    let policies = [("none", SPGEMM_BIND_NONE), ("auto", second)];
    let handles: Vec<*mut spgemm_handle_t> = policies
        .iter()
        .map(|&(_, p)| {
            let mut h = ptr::null_mut();
            // SAFETY: valid out-pointer; then a live handle.
            unsafe {
                check(spgemm_create(&mut h), "create");
                if threads > 0 {
                    check(spgemm_set_num_threads(h, threads), "threads");
                }
                check(spgemm_set_thread_binding(h, p), "binding");
                // Inputs are known good; this also keeps the O(nnz) structure digest of
                // the numeric phase out of the timing (and out of the way: on main at
                // 5b22021 its parallel reduction is not associative, so the digest of a
                // large matrix can differ between calls and numeric reports PLAN_MISMATCH).
                check(spgemm_set_validation(h, 0), "validation");
            }
            h
        })
        .collect();
    for (&(name, _), &h) in policies.iter().zip(&handles) {
        let mut needed = 0usize;
        // SAFETY: query, then a buffer of `needed` bytes.
        let info = unsafe {
            check(
                spgemm_topology_info(h, ptr::null_mut(), 0, &mut needed),
                "info",
            );
            let mut buf = vec![0u8; needed];
            check(
                spgemm_topology_info(h, buf.as_mut_ptr().cast(), needed, &mut needed),
                "info",
            );
            String::from_utf8_lossy(&buf[..needed - 1]).into_owned()
        };
        eprintln!("[{name}] {info}");
    }

    println!(
        "| product | nnz(C) | sym none | sym auto | num none | num auto | sym auto/none | num auto/none |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let (mut log_sym, mut log_num, mut count) = (0.0f64, 0.0f64, 0usize);
    for line in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split('\t').collect();
        let (label, an, bn) = (f[0], f[1], f[2]);
        if skip.contains(&label) {
            continue;
        }
        let a = read_mtx(&format!("{dir}/{an}.mtx"));
        let b = if bn == "A" {
            None
        } else {
            Some(read_mtx(&format!("{dir}/{bn}.mtx")))
        };
        let am = matrix(&a);
        let bm = b.as_ref().map_or(am, matrix);
        let mut sym = vec![Vec::new(); policies.len()];
        let mut num = vec![Vec::new(); policies.len()];
        let mut nnz = 0;
        // One warm-up each (workspace growth, page faults), then alternate.
        for &h in &handles {
            product(h, am, bm, a.nrows);
        }
        for r in 0..reps {
            for k in 0..handles.len() {
                // Alternate the order so neither policy always runs first.
                let k = if r % 2 == 0 { k } else { handles.len() - 1 - k };
                let (s, n, z) = product(handles[k], am, bm, a.nrows);
                sym[k].push(s);
                num[k].push(n);
                nnz = z;
            }
        }
        let s: Vec<f64> = sym.into_iter().map(median).collect();
        let n: Vec<f64> = num.into_iter().map(median).collect();
        println!(
            "| {label} | {nnz} | {:.1} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} |",
            s[0],
            s[1],
            n[0],
            n[1],
            s[1] / s[0],
            n[1] / n[0]
        );
        log_sym += (s[1] / s[0]).ln();
        log_num += (n[1] / n[0]).ln();
        count += 1;
        // SAFETY: descriptors from spgemm_matrix_create_csr.
        unsafe {
            if bm != am {
                spgemm_matrix_destroy(bm);
            }
            spgemm_matrix_destroy(am);
        }
    }
    if count > 0 {
        println!(
            "\ngeometric mean auto/none: symbolic {:.3}, numeric {:.3} ({count} products, {reps} reps, median)",
            (log_sym / count as f64).exp(),
            (log_num / count as f64).exp()
        );
    }
    for h in handles {
        // SAFETY: handles from spgemm_create.
        unsafe { spgemm_destroy(h) };
    }
}
