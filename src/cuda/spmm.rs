//! GPU SpMM, Y = alpha * A * X + beta * Y (host arrays in and out).

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::device::{Gpu, Source, drv};
use crate::common::csr::CsrRef;
use crate::common::options::Layout;
use crate::error::{Result, Status, err};
use crate::types::{Idx, Scalar};

fn needed(rows: usize, cols: usize, ld: usize, layout: Layout) -> usize {
    if rows == 0 || cols == 0 {
        return 0;
    }
    match layout {
        Layout::RowMajor => (rows - 1) * ld + cols,
        Layout::ColMajor => (cols - 1) * ld + rows,
    }
}

/// Y (m x n) = alpha * A (m x k) * X (k x n) + beta * Y on the GPU (A checked by the
/// caller when validating). With beta = 0 Y is only written.
pub fn spmm<O: Idx, I: Idx, V: Scalar>(
    gpu: &Gpu,
    a: &CsrRef<'_, O, I, V>,
    layout: Layout,
    n: usize,
    (x, ldx): (&[V], usize),
    (alpha, beta): (V, V),
    (y, ldy): (&mut [V], usize),
) -> Result<()> {
    let (m, k) = (a.nrows(), a.ncols());
    let Some(av) = a.values() else {
        return err(Status::InvalidValue, "A has no values");
    };
    let (min_ldx, min_ldy) = match layout {
        Layout::RowMajor => (n, n),
        Layout::ColMajor => (k, m),
    };
    if ldx < min_ldx.max(1) || ldy < min_ldy.max(1) {
        return err(
            Status::InvalidValue,
            format!("ldx = {ldx} or ldy = {ldy} is below the minimum {min_ldx} / {min_ldy}"),
        );
    }
    if x.len() < needed(k, n, ldx, layout) || y.len() < needed(m, n, ldy, layout) {
        return err(
            Status::InvalidValue,
            "X or Y is shorter than its shape and ld need",
        );
    }
    super::limits::check(&[
        ("rows of A", m),
        ("columns of A", k),
        ("nnz(A)", a.nnz()),
        ("columns of X", n),
    ])?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    let md = gpu.module(Source::Spmm, V::KIND)?;
    let s = &gpu.main;
    let ptr: Vec<i32> = (0..=m).map(|i| a.row_start(i) as i32).collect();
    let mut col: Vec<i32> = (0..a.nnz()).map(|p| a.col(p) as i32).collect();
    if col.iter().any(|&c| c < 0 || c as usize >= k) {
        return err(Status::IndexOutOfRange, "A: a column index is out of range");
    }
    let mut aval = av.to_vec();
    if col.is_empty() {
        col.push(0);
        aval.push(V::ZERO);
    }
    let d_ptr = drv(s.clone_htod(&ptr), "copy A")?;
    let d_col = drv(s.clone_htod(&col), "copy A")?;
    let d_val = drv(s.clone_htod(bytes(&aval)), "copy A")?;
    let d_x = drv(
        s.clone_htod(bytes(if x.is_empty() { &aval[..1] } else { x })),
        "copy X",
    )?;
    let ylen = needed(m, n, ldy, layout);
    let mut d_y = drv(s.clone_htod(bytes(&y[..ylen])), "copy Y")?;
    let (mi, ni, ldxi, ldyi) = (m as i32, n as i32, ldx as i64, ldy as i64);
    let (f, cfg) = match layout {
        Layout::ColMajor => (
            md.f("spmm_halfwarp")?,
            LaunchConfig {
                grid_dim: ((m * 16).div_ceil(256) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            },
        ),
        Layout::RowMajor => {
            let tx = n.next_power_of_two().min(32) as u32;
            let ty = 256 / tx;
            (
                md.f("spmm_rowmajor")?,
                LaunchConfig {
                    grid_dim: (
                        m.div_ceil(ty as usize) as u32,
                        n.div_ceil(tx as usize) as u32,
                        1,
                    ),
                    block_dim: (tx, ty, 1),
                    shared_mem_bytes: 0,
                },
            )
        }
    };
    // Scalars travel as their own type (float or double, as the kernel's value_t).
    let (alpha64, beta64) = (alpha.to_f64(), beta.to_f64());
    let (alpha32, beta32) = (alpha64 as f32, beta64 as f32);
    let mut lb = s.launch_builder(f);
    lb.arg(&mi)
        .arg(&ni)
        .arg(&d_ptr)
        .arg(&d_col)
        .arg(&d_val)
        .arg(&d_x)
        .arg(&ldxi)
        .arg(&mut d_y)
        .arg(&ldyi);
    if std::mem::size_of::<V>() == 8 {
        lb.arg(&alpha64).arg(&beta64);
    } else {
        lb.arg(&alpha32).arg(&beta32);
    }
    // SAFETY: arguments match the kernel; X and Y hold the elements their ld and shape use.
    drv(unsafe { lb.launch(cfg) }, "spmm")?;
    let out = drv(s.clone_dtoh(&d_y), "copy Y")?;
    // SAFETY: V is plain data (f32, f64; the complex types are #[repr(C)] pairs of them).
    let dst = unsafe {
        std::slice::from_raw_parts_mut(y.as_mut_ptr().cast::<u8>(), ylen * size_of::<V>())
    };
    dst.copy_from_slice(&out);
    Ok(())
}

fn bytes<V: Scalar>(v: &[V]) -> &[u8] {
    // SAFETY: V is plain data (f32, f64, or a #[repr(C)] complex pair of them).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}
