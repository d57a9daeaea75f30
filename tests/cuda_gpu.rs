//! GPU SpGEMM and SpMM against the reference product (tests/common). Runs where a CUDA
//! device, driver and NVRTC are usable; elsewhere each GPU test prints
//! "SKIPPED <name>: <reason>" and passes. `no_device_is_reported_and_auto_uses_cpu` runs
//! everywhere. Values are small integers, so sums are exact in any order and results
//! compare bit for bit although the GPU accumulates with atomics.
#![cfg(feature = "cuda")]

mod common;

use common::*;
use spgemm::cuda::bins;
use spgemm::cuda::spmm::{Layout, spmm};
use spgemm::exec;
use spgemm::handle::{Backend, Handle};
use spgemm::output::{IndexVec, OffsetVec, ValueVec};
use spgemm::plan::{OutputFormat, Plan};
use spgemm::types::{IndexType, ValueType};
use spgemm::{Result, Status};

/// A handle on the GPU backend, or None after printing why the test is skipped.
fn gpu_handle(name: &str, sorted: bool) -> Option<Handle> {
    let mut h = Handle::new(2).unwrap();
    match h.gpu.check() {
        Ok(()) => {
            h.options.backend = Backend::Cuda;
            h.options.sorted_output = sorted;
            eprintln!("{name}: on {}", h.gpu.describe());
            Some(h)
        }
        Err(e) => {
            eprintln!("SKIPPED {name}: {e}");
            None
        }
    }
}

#[derive(Debug, PartialEq)]
struct Out {
    ptr: Vec<usize>,
    col: Vec<usize>,
    bits: Vec<u64>,
}

fn offsets_to_usize(o: &OffsetVec, base: usize) -> Vec<usize> {
    match o {
        OffsetVec::I32(v) => v.iter().map(|&x| x as usize - base).collect(),
        OffsetVec::I64(v) => v.iter().map(|&x| x as usize - base).collect(),
        OffsetVec::U64(v) => v.iter().map(|&x| x as usize - base).collect(),
    }
}

fn numeric_out(
    h: &Handle,
    plan: &Plan,
    a: &Typed,
    b: &Typed,
    format: OutputFormat,
    with_values: bool,
) -> Result<Out> {
    let mut off = OffsetVec::zeroed(format.offsets, plan.nrows() + 1)?;
    exec::write_row_offsets(plan, off.as_mut())?;
    let mut idx = IndexVec::zeroed(format.indices, plan.nnz())?;
    let mut val = if with_values {
        Some(ValueVec::zeroed(a.vt, plan.nnz())?)
    } else {
        None
    };
    exec::numeric(
        h,
        plan,
        &a.any(),
        &b.any(),
        idx.as_mut(),
        val.as_mut().map(|v| v.as_mut()),
    )?;
    let col = match &idx {
        IndexVec::I32(v) => v.iter().map(|&x| x as usize - format.base).collect(),
        IndexVec::I64(v) => v.iter().map(|&x| x as usize - format.base).collect(),
    };
    let bits = match &val {
        None => vec![],
        Some(ValueVec::F32(v)) => v.iter().map(|x| x.bits()).collect(),
        Some(ValueVec::F64(v)) => v.iter().map(|x| x.bits()).collect(),
    };
    Ok(Out {
        ptr: offsets_to_usize(&off, format.base),
        col,
        bits,
    })
}

fn expected(a: &Csr, b: &Csr, vt: ValueType, with_values: bool) -> Out {
    let (ptr, col, bits) = match vt {
        ValueType::Float32 => {
            let (p, c, v) = reference::<f32>(a, b);
            (p, c, v.iter().map(|x| x.bits()).collect::<Vec<_>>())
        }
        ValueType::Float64 => {
            let (p, c, v) = reference::<f64>(a, b);
            (p, c, v.iter().map(|x| x.bits()).collect::<Vec<_>>())
        }
    };
    Out {
        ptr,
        col,
        bits: if with_values { bits } else { vec![] },
    }
}

fn sort_rows(o: &Out) -> Out {
    let mut col = o.col.clone();
    let mut bits = o.bits.clone();
    for i in 0..o.ptr.len() - 1 {
        let (s, e) = (o.ptr[i], o.ptr[i + 1]);
        let mut pairs: Vec<(usize, u64)> = (s..e)
            .map(|p| (o.col[p], *o.bits.get(p).unwrap_or(&0)))
            .collect();
        pairs.sort_unstable();
        for (k, (c, v)) in pairs.into_iter().enumerate() {
            col[s + k] = c;
            if !bits.is_empty() {
                bits[s + k] = v;
            }
        }
    }
    Out {
        ptr: o.ptr.clone(),
        col,
        bits,
    }
}

const F32: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

/// Runs C = A*B on the GPU handle and compares with the reference (rows sorted first when
/// the handle leaves them unsorted). Returns the plan for further checks.
fn check(
    h: &Handle,
    a: &Csr,
    b: &Csr,
    ty: (IndexType, IndexType, ValueType),
    base: usize,
    with_values: bool,
    what: &str,
) -> Plan {
    let (ot, it, vt) = ty;
    let ta = typed(a, ot, it, vt, base, true);
    let tb = typed(b, ot, it, vt, base, true);
    let f = OutputFormat {
        offsets: ot,
        indices: it,
        base,
    };
    let plan = exec::symbolic(h, &ta.any(), &tb.any(), f).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(plan.gpu.is_some(), "{what}: plan was not made on the GPU");
    let got =
        numeric_out(h, &plan, &ta, &tb, f, with_values).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = if h.options.sorted_output {
        got
    } else {
        sort_rows(&got)
    };
    let want = expected(a, b, vt, with_values);
    assert_eq!(got.ptr, want.ptr, "{what}: row offsets");
    assert_eq!(got.col, want.col, "{what}: column indices");
    assert_eq!(got.bits, want.bits, "{what}: values");
    plan
}

fn int_shape(nrows: usize, ncols: usize, max_row: usize) -> Shape {
    Shape {
        nrows,
        ncols,
        max_row,
        empty_rows: 0.1,
        duplicates: true,
        unsorted: true,
        zeros: 0.05,
        integer_values: true,
        ..Default::default()
    }
}

#[test]
fn no_device_is_reported_and_auto_uses_cpu() {
    let mut rng = Rng::new(7);
    let a = random(&mut rng, int_shape(50, 40, 6));
    let b = random(&mut rng, int_shape(40, 30, 6));
    let ta = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let tb = typed(
        &b,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let mut h = Handle::new(1).unwrap();
    // Auto: small products stay on the CPU whether or not a GPU exists.
    let plan = exec::symbolic(&h, &ta.any(), &tb.any(), F32).unwrap();
    assert!(plan.gpu.is_none());
    h.options.backend = Backend::Cuda;
    let r = exec::symbolic(&h, &ta.any(), &tb.any(), F32);
    if h.gpu.available() {
        assert!(r.unwrap().gpu.is_some());
        eprintln!(
            "no_device_is_reported_and_auto_uses_cpu: device present, NO_DEVICE path not exercised"
        );
        return;
    }
    let e = r.unwrap_err();
    assert_eq!(e.status, Status::NoDevice, "{e}");
    assert!(!e.message.is_empty());
    // Through the ABI: setting the CUDA backend fails, the option stays AUTO.
    use spgemm::ffi::handle::*;
    use spgemm::ffi::*;
    let mut hp = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the handle is destroyed below.
    unsafe {
        assert_eq!(spgemm_create(&mut hp), SPGEMM_STATUS_SUCCESS);
        assert_eq!(
            spgemm_set_backend(hp, SPGEMM_BACKEND_CUDA),
            SPGEMM_STATUS_NO_DEVICE
        );
        let msg = std::ffi::CStr::from_ptr(spgemm_last_error(hp))
            .to_string_lossy()
            .to_string();
        assert!(
            msg.contains("GPU") || msg.contains("CUDA") || msg.contains("NVRTC"),
            "{msg}"
        );
        let mut b = -1;
        assert_eq!(spgemm_get_backend(hp, &mut b), SPGEMM_STATUS_SUCCESS);
        assert_eq!(b, SPGEMM_BACKEND_AUTO);
        assert_eq!(spgemm_set_backend(hp, 7), SPGEMM_STATUS_INVALID_VALUE);
        assert_eq!(
            spgemm_set_backend(hp, SPGEMM_BACKEND_CPU),
            SPGEMM_STATUS_SUCCESS
        );
        assert_eq!(spgemm_destroy(hp), SPGEMM_STATUS_SUCCESS);
    }
}

#[test]
fn gpu_matches_reference_every_type_base_and_order() {
    for sorted in [true, false] {
        let Some(h) = gpu_handle("gpu_matches_reference_every_type_base_and_order", sorted) else {
            return;
        };
        let mut rng = Rng::new(11);
        for trial in 0..3 {
            let a = random(&mut rng, int_shape(300, 200, 12 + 20 * trial));
            let b = random(&mut rng, int_shape(200, 500, 30));
            for ot in OFFSET_TYPES {
                for it in INDEX_TYPES {
                    for vt in VALUE_TYPES {
                        for base in [0, 1] {
                            let what = format!(
                                "trial {trial} {ot:?}/{it:?}/{vt:?} base {base} sorted {sorted}"
                            );
                            check(&h, &a, &b, (ot, it, vt), base, true, &what);
                        }
                    }
                }
            }
            // Structure only.
            check(
                &h,
                &a,
                &b,
                (IndexType::Int64, IndexType::Int32, ValueType::Float64),
                0,
                false,
                "pattern",
            );
        }
    }
}

#[test]
fn gpu_adversarial_shapes() {
    let Some(h) = gpu_handle("gpu_adversarial_shapes", true) else {
        return;
    };
    let mut rng = Rng::new(3);
    let t = (IndexType::Int32, IndexType::Int32, ValueType::Float64);
    let cases = [
        (0, 5, 7),
        (5, 0, 7),
        (5, 7, 0),
        (1, 1, 1),
        (64, 3, 1000),
        (3, 1000, 2),
    ];
    for (m, k, n) in cases {
        let a = random(&mut rng, int_shape(m, k, 4));
        let b = random(&mut rng, int_shape(k, n, 4));
        check(&h, &a, &b, t, 0, true, &format!("{m}x{k} * {k}x{n}"));
    }
    let mut empty = int_shape(40, 40, 5);
    empty.empty_rows = 1.0;
    let a = random(&mut rng, empty);
    let b = random(&mut rng, int_shape(40, 40, 5));
    check(&h, &a, &b, t, 0, true, "all rows of A empty");
    // NaN and Inf propagate like on the CPU (compared by value class, sums of one term).
    let mut s = int_shape(30, 30, 1);
    s.duplicates = false;
    let mut a = random(&mut rng, s);
    let b = random(&mut rng, s);
    if let Some(v) = a.val.first_mut() {
        *v = f64::NAN;
    }
    check(&h, &a, &b, t, 0, true, "NaN in A");
}

/// A product whose rows land in every symbolic and numeric bin of this device, including
/// rows that overflow the largest shared table into the global-memory kernels.
#[test]
fn gpu_every_bin_and_global_fallback() {
    for sorted in [true, false] {
        let Some(h) = gpu_handle("gpu_every_bin_and_global_fallback", sorted) else {
            return;
        };
        let smem = h.gpu.get().unwrap().smem_per_block;
        let long = 64usize;
        let nlong = 2048usize;
        let k = nlong * long + long;
        // B: `nlong` rows of 64 distinct columns (disjoint), then 64 rows of one column each.
        let mut b = Csr {
            nrows: nlong + long,
            ncols: k,
            ptr: vec![0],
            col: vec![],
            val: vec![],
        };
        for r in 0..nlong {
            for j in 0..long {
                b.col.push(r * long + j);
                b.val.push(((r + j) % 5) as f64 - 2.0);
            }
            b.ptr.push(b.col.len());
        }
        for s in 0..long {
            b.col.push(nlong * long + s);
            b.val.push(1.0 + (s % 3) as f64);
            b.ptr.push(b.col.len());
        }
        // Target n_nz per row of C: one per numeric bin, one above the last shared numeric
        // bin, one above the symbolic overflow threshold, plus a row with n_prod far above
        // its n_nz (one B row repeated).
        let vb = 8;
        let nb = bins::numeric(smem, vb);
        let sb = bins::symbolic(smem);
        let mut targets = vec![0usize];
        let mut prev = 0i64;
        for bin in &nb {
            targets.push(((prev + 1 + bin.limit) / 2) as usize);
            prev = bin.limit;
        }
        for bin in &sb[..sb.len() - 1] {
            targets.push(bin.limit as usize);
        }
        targets.push(nb.last().unwrap().limit as usize * 3 / 2);
        targets.push(bins::symbolic_fail_at(sb.last().unwrap()) as usize + 2000);
        let mut a = Csr {
            nrows: 0,
            ncols: b.nrows,
            ptr: vec![0],
            col: vec![],
            val: vec![],
        };
        for (i, &p) in targets.iter().enumerate() {
            let (q, r) = (p / long, p % long);
            assert!(q <= nlong);
            for t in 0..q {
                a.col.push((i * 37 + t) % nlong);
                a.val.push(((i + t) % 3) as f64 + 1.0);
            }
            for s in 0..r {
                a.col.push(nlong + s);
                a.val.push(-1.0);
            }
            a.ptr.push(a.col.len());
        }
        for _ in 0..200 {
            a.col.push(5);
            a.val.push(1.0);
        }
        a.ptr.push(a.col.len());
        a.nrows = a.ptr.len() - 1;
        for vt in VALUE_TYPES {
            let plan = check(
                &h,
                &a,
                &b,
                (IndexType::Int32, IndexType::Int32, vt),
                0,
                true,
                &format!("every bin {vt:?} sorted {sorted}"),
            );
            let g = plan.gpu.as_ref().unwrap();
            let sizes = g.numeric_bin_sizes();
            eprintln!(
                "{vt:?}: numeric rows per bin {sizes:?}, symbolic global rows {}",
                g.symbolic_global_rows()
            );
            if vt == ValueType::Float64 {
                assert!(
                    sizes.iter().all(|&s| s > 0),
                    "a numeric bin is empty: {sizes:?}"
                );
            }
            assert!(
                *sizes.last().unwrap() > 0,
                "no row reached the global numeric kernel"
            );
            assert!(
                g.symbolic_global_rows() > 0,
                "no row overflowed into the global symbolic kernel"
            );
        }
    }
}

#[test]
fn gpu_reuse_with_new_values() {
    let Some(h) = gpu_handle("gpu_reuse_with_new_values", true) else {
        return;
    };
    let mut rng = Rng::new(5);
    let a = random(&mut rng, int_shape(500, 400, 20));
    let mut b = random(&mut rng, int_shape(400, 300, 20));
    let vt = ValueType::Float64;
    let ta = typed(&a, IndexType::Int32, IndexType::Int64, vt, 1, true);
    let f = OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int64,
        base: 1,
    };
    let tb = typed(&b, IndexType::Int32, IndexType::Int64, vt, 1, true);
    let plan = exec::symbolic(&h, &ta.any(), &tb.any(), f).unwrap();
    assert!(plan.gpu.is_some());
    for round in 0..3 {
        for v in b.val.iter_mut() {
            *v = (*v + round as f64 + 1.0) % 5.0 - 2.0;
        }
        let tb = typed(&b, IndexType::Int32, IndexType::Int64, vt, 1, true);
        let got = numeric_out(&h, &plan, &ta, &tb, f, true).unwrap();
        assert_eq!(got, expected(&a, &b, vt, true), "round {round}");
    }
    // A changed structure is caught before any device work.
    let mut b2 = b.clone();
    if let Some(c) = b2.col.first_mut() {
        *c = (*c + 1) % b2.ncols;
    }
    let tb2 = typed(&b2, IndexType::Int32, IndexType::Int64, vt, 1, true);
    let e = numeric_out(&h, &plan, &ta, &tb2, f, true).unwrap_err();
    assert_eq!(e.status, Status::PlanMismatch);
}

#[test]
fn gpu_rejects_bad_indices_without_validation() {
    let Some(mut h) = gpu_handle("gpu_rejects_bad_indices_without_validation", true) else {
        return;
    };
    h.options.validate = false;
    let mut rng = Rng::new(9);
    let a = random(&mut rng, int_shape(20, 20, 4));
    let b = random(&mut rng, int_shape(20, 20, 4));
    let ta = typed(
        &a,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let mut tb = typed(
        &b,
        IndexType::Int32,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    if let Ix::I32(v) = &mut tb.idx {
        v[0] = 1000;
    }
    let e = exec::symbolic(&h, &ta.any(), &tb.any(), F32).unwrap_err();
    assert_eq!(e.status, Status::IndexOutOfRange, "{e}");
}

#[allow(clippy::too_many_arguments)]
fn spmm_ref(
    a: &Csr,
    x: &[f64],
    n: usize,
    layout: Layout,
    ldx: usize,
    y: &mut [f64],
    ldy: usize,
    alpha: f64,
    beta: f64,
) {
    let at = |i: usize, j: usize, ld: usize| match layout {
        Layout::RowMajor => i * ld + j,
        Layout::ColMajor => i + j * ld,
    };
    for i in 0..a.nrows {
        for j in 0..n {
            let mut s = 0.0;
            for p in a.ptr[i]..a.ptr[i + 1] {
                s += a.val[p] * x[at(a.col[p], j, ldx)];
            }
            let yi = &mut y[at(i, j, ldy)];
            *yi = if beta == 0.0 {
                alpha * s
            } else {
                alpha * s + beta * *yi
            };
        }
    }
}

#[test]
fn gpu_spmm_both_layouts() {
    let Some(h) = gpu_handle("gpu_spmm_both_layouts", true) else {
        return;
    };
    let mut rng = Rng::new(21);
    for (m, k, n) in [(300, 200, 1), (300, 200, 7), (1000, 500, 33), (5, 5, 64)] {
        let a = random(&mut rng, int_shape(m, k, 15));
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let (ldx, ldy) = match layout {
                Layout::RowMajor => (n + 3, n + 1),
                Layout::ColMajor => (k + 2, m + 5),
            };
            let xlen = match layout {
                Layout::RowMajor => k * ldx,
                Layout::ColMajor => n * ldx,
            };
            let ylen = match layout {
                Layout::RowMajor => m * ldy,
                Layout::ColMajor => n * ldy,
            };
            let x: Vec<f64> = (0..xlen).map(|i| (i % 7) as f64 - 3.0).collect();
            let y0: Vec<f64> = (0..ylen).map(|i| (i % 5) as f64).collect();
            for (alpha, beta) in [(1.0, 0.0), (2.0, -1.0)] {
                let mut want = y0.clone();
                spmm_ref(&a, &x, n, layout, ldx, &mut want, ldy, alpha, beta);
                let ta = typed(
                    &a,
                    IndexType::Int64,
                    IndexType::Int32,
                    ValueType::Float64,
                    0,
                    true,
                );
                let Some(Val::F64(av)) = &ta.val else {
                    unreachable!()
                };
                let (Off::I64(ap), Ix::I32(ai)) = (&ta.off, &ta.idx) else {
                    unreachable!()
                };
                let ar = spgemm::csr::CsrRef::new(m, k, 0, ap, ai, Some(av)).unwrap();
                let mut y = y0.clone();
                spmm(&h, &ar, layout, n, &x, ldx, alpha, beta, &mut y, ldy).unwrap();
                assert_eq!(
                    y, want,
                    "f64 {m}x{k}x{n} {layout:?} alpha {alpha} beta {beta}"
                );
                // f32 on the same data (small integers: exact).
                let av32: Vec<f32> = av.iter().map(|&v| v as f32).collect();
                let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                let mut y32: Vec<f32> = y0.iter().map(|&v| v as f32).collect();
                let ar32 = spgemm::csr::CsrRef::new(m, k, 0, ap, ai, Some(&av32[..])).unwrap();
                spmm(
                    &h,
                    &ar32,
                    layout,
                    n,
                    &x32,
                    ldx,
                    alpha as f32,
                    beta as f32,
                    &mut y32,
                    ldy,
                )
                .unwrap();
                let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
                assert_eq!(y32, want32, "f32 {m}x{k}x{n} {layout:?}");
            }
        }
    }
}
