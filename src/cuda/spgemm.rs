//! GPU SpGEMM: host side of kernels/spgemm.cu. Inputs are copied to the device as 0-based
//! int32 CSR (checked while converting, so a bad index never reaches a kernel); the plan
//! keeps the device copies of A's and B's structure, C's row offsets and the numeric bins,
//! so a numeric call only uploads values.

use std::borrow::Cow;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::bins::{self, Bin};
use super::device::{Gpu, Source, drv};
use crate::csr::{AnyCsr, CsrRef, FromAny, PairOp, dispatch_pair};
use crate::error::{Result, Status, err};
use crate::handle::{Algorithm, Handle};
use crate::output::IndexSliceMut;
use crate::plan::{InputShape, OutputFormat, Plan};
use crate::types::{Idx, Scalar};

/// Device state a plan keeps for its numeric calls.
pub struct GpuPlan {
    gpu: Arc<Gpu>,
    a_ptr: CudaSlice<i32>,
    a_col: CudaSlice<i32>,
    b_ptr: CudaSlice<i32>,
    b_col: CudaSlice<i32>,
    c_ptr: CudaSlice<i32>,
    /// Rows of C grouped by numeric bin, bin sizes and offsets into `num_rows`.
    num_rows: CudaSlice<i32>,
    num_bins: Vec<Bin>,
    num_sizes: Vec<usize>,
    num_offsets: Vec<usize>,
    /// Rows above the last shared bin and the size of their global tables.
    global_rows: usize,
    global_tsize: usize,
    value_bytes: usize,
    /// Rows the symbolic phase moved from shared to global-memory tables.
    symbolic_global_rows: usize,
}

impl std::fmt::Debug for GpuPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuPlan")
            .field("device", &self.gpu.name)
            .field("num_sizes", &self.num_sizes)
            .field("global_rows", &self.global_rows)
            .field("global_tsize", &self.global_tsize)
            .field("symbolic_global_rows", &self.symbolic_global_rows)
            .finish()
    }
}

impl GpuPlan {
    /// Rows per numeric bin (the last entry: rows on global-memory tables). For tests and
    /// reports.
    pub fn numeric_bin_sizes(&self) -> Vec<usize> {
        let mut v = self.num_sizes.clone();
        v.push(self.global_rows);
        v
    }

    /// Rows whose symbolic count overflowed the largest shared table.
    pub fn symbolic_global_rows(&self) -> usize {
        self.symbolic_global_rows
    }
}

fn too_big<T>(what: &str, n: usize) -> Result<T> {
    err(
        Status::NotSupported,
        format!("the GPU backend uses 32-bit device indices: {what} = {n} exceeds 2^31 - 1"),
    )
}

/// The caller's array itself when it already is 0-based int32 and was validated (no
/// copy, no page faults on a fresh buffer); else the checked conversion.
fn as_i32<T: Idx>(v: &[T], base: usize, validated: bool) -> Option<&[i32]> {
    (T::KIND == crate::types::IndexType::Int32 && base == 0 && validated).then(|| {
        // SAFETY: T is i32 (its KIND says so).
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<i32>(), v.len()) }
    })
}

fn dev_offsets_cow<'x, O: Idx>(
    name: &str,
    ptr: &'x [O],
    base: usize,
    validated: bool,
) -> Result<Cow<'x, [i32]>> {
    match as_i32(ptr, base, validated) {
        Some(v) => Ok(Cow::Borrowed(v)),
        None => dev_offsets(name, ptr, base).map(Cow::Owned),
    }
}

fn dev_cols_cow<'x, I: Idx>(
    name: &str,
    cols: &'x [I],
    base: usize,
    ncols: usize,
    validated: bool,
) -> Result<Cow<'x, [i32]>> {
    match as_i32(cols, base, validated) {
        Some(v) => Ok(Cow::Borrowed(v)),
        None => dev_cols(name, cols, base, ncols).map(Cow::Owned),
    }
}

/// Row offsets as 0-based i32, checking that they never decrease.
fn dev_offsets<O: Idx>(name: &str, ptr: &[O], base: usize) -> Result<Vec<i32>> {
    let out: Vec<i32> = ptr
        .par_iter()
        .map(|&o| (o.to_usize().wrapping_sub(base)) as i32)
        .collect();
    if let Some(i) = (0..out.len().saturating_sub(1))
        .into_par_iter()
        .find_first(|&i| out[i] > out[i + 1])
    {
        return err(
            Status::InvalidStructure,
            format!("{name}: row offsets decrease at row {i}"),
        );
    }
    Ok(out)
}

/// Column indices as 0-based i32, checking the range (a bad index would make a kernel
/// read out of bounds).
fn dev_cols<I: Idx>(name: &str, cols: &[I], base: usize, ncols: usize) -> Result<Vec<i32>> {
    let out: Vec<i32> = cols
        .par_iter()
        .map(|&c| {
            let v = c.to_i128() - base as i128;
            if v < 0 || v >= ncols as i128 {
                -1
            } else {
                v as i32
            }
        })
        .collect();
    if let Some(p) = out.par_iter().position_first(|&c| c < 0) {
        return err(
            Status::IndexOutOfRange,
            format!(
                "{name}: column index {:?} at position {p} is outside [{base}, {})",
                cols[p],
                base + ncols
            ),
        );
    }
    Ok(out)
}

fn as_bytes<V: Scalar>(v: &[V]) -> &[u8] {
    // SAFETY: V is f32 or f64 (plain bytes, no padding).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn cfg(grid: usize, block: u32, smem: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem as u32,
    }
}

/// Device rows grouped by bin (OpSparse 5.1: shared-memory counters, one global atomic per
/// block and bin). Returns the grouped rows, the bin sizes and their offsets.
fn bin_rows(
    gpu: &Gpu,
    m: &super::device::Module,
    key: &CudaSlice<i64>,
    nrows: usize,
    bins: &[Bin],
) -> Result<(CudaSlice<i32>, Vec<usize>, Vec<usize>)> {
    let s = &gpu.main;
    let nb = bins.len() as i32;
    let limits: Vec<i64> = bins.iter().map(|b| b.limit).collect();
    let d_limits = drv(s.clone_htod(&limits), "copy")?;
    let mut d_size = drv(s.alloc_zeros::<i32>(bins.len()), "alloc")?;
    let n = nrows as i32;
    let grid = nrows.div_ceil(256);
    let mut d_rows = drv(s.alloc_zeros::<i32>(nrows.max(1)), "alloc")?;
    if nrows == 0 {
        return Ok((d_rows, vec![0; bins.len()], vec![0; bins.len()]));
    }
    // SAFETY: argument list matches bin_count's signature; arrays have the lengths used.
    drv(
        unsafe {
            s.launch_builder(m.f("bin_count")?)
                .arg(&n)
                .arg(key)
                .arg(&d_limits)
                .arg(&nb)
                .arg(&mut d_size)
                .launch(cfg(grid, 256, 0))
        },
        "bin_count",
    )?;
    let sizes: Vec<usize> = drv(s.clone_dtoh(&d_size), "copy")?
        .into_iter()
        .map(|x| x as usize)
        .collect();
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut acc = 0usize;
    for &sz in &sizes {
        offsets.push(acc);
        acc += sz;
    }
    let fill: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
    let mut d_fill = drv(s.clone_htod(&fill), "copy")?;
    // SAFETY: as above, for bin_scatter.
    drv(
        unsafe {
            s.launch_builder(m.f("bin_scatter")?)
                .arg(&n)
                .arg(key)
                .arg(&d_limits)
                .arg(&nb)
                .arg(&mut d_fill)
                .arg(&mut d_rows)
                .launch(cfg(grid, 256, 0))
        },
        "bin_scatter",
    )?;
    Ok((d_rows, sizes, offsets))
}

/// Bins in launch order (largest tables first), each with the stream it runs on. The side
/// streams first wait for the main stream's work (the binning).
fn schedule<'g>(gpu: &'g Gpu, sizes: &[usize]) -> Result<Vec<(usize, &'g Arc<CudaStream>)>> {
    for st in &gpu.side {
        drv(st.join(&gpu.main), "stream join")?;
    }
    Ok((0..sizes.len())
        .rev()
        .filter(|&b| sizes[b] > 0)
        .enumerate()
        .map(|(j, b)| (b, &gpu.side[j % gpu.side.len()]))
        .collect())
}

fn join_side(gpu: &Gpu) -> Result<()> {
    for st in &gpu.side {
        drv(gpu.main.join(st), "stream join")?;
    }
    Ok(())
}

/// Global-table blocks: enough to fill the device, fewer when the pool would not fit.
fn pool_blocks(gpu: &Gpu, rows: usize, bytes_per_block: usize) -> usize {
    let budget = 1usize << 30;
    let by_mem = (budget / bytes_per_block.max(1)).max(1);
    rows.min(2 * gpu.sm_count as usize).min(by_mem).max(1)
}

struct GpuSymbolicOp<'h> {
    handle: &'h Handle,
    format: OutputFormat,
}

impl PairOp for GpuSymbolicOp<'_> {
    type Out = Plan;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Plan>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let h = self.handle;
        if a.ncols() != b.nrows() {
            return err(
                Status::DimensionMismatch,
                format!(
                    "A is {} x {} but B is {} x {}: A's columns must equal B's rows",
                    a.nrows(),
                    a.ncols(),
                    b.nrows(),
                    b.ncols()
                ),
            );
        }
        let k = b.ncols();
        crate::exec::check_format(&self.format, k)?;
        let lim = i32::MAX as usize;
        for (what, n) in [
            ("rows of A", a.nrows()),
            ("columns of A", a.ncols()),
            ("columns of B", k),
            ("nnz(A)", a.nnz()),
            ("nnz(B)", b.nnz()),
        ] {
            if n >= lim {
                return too_big(what, n);
            }
        }
        let gpu = h.gpu.get()?;
        h.install(|| {
            let timing = Timing::new(&gpu.main);
            let digests = if h.options.validate {
                a.validate("A")?;
                b.validate("B")?;
                Some((a.structure_digest(), b.structure_digest()))
            } else {
                None
            };
            timing.mark("symbolic: validate, digest")?;
            let v = digests.is_some();
            let a_ptr = dev_offsets_cow("A", a.row_offsets(), a.base(), v)?;
            let a_col = dev_cols_cow("A", a.col_indices(), a.base(), a.ncols(), v)?;
            let b_ptr = dev_offsets_cow("B", b.row_offsets(), b.base(), v)?;
            let b_col = dev_cols_cow("B", b.col_indices(), b.base(), k, v)?;
            timing.mark("symbolic: convert A, B to int32")?;
            let sym = symbolic_on_device(&gpu, a.nrows(), &a_ptr, &a_col, &b_ptr, &b_col, k)?;
            timing.mark("symbolic: on device (copies, n_prod, bins, hash kernels, n_nz back)")?;
            let m = a.nrows();
            let mut row_ptr = crate::alloc::try_filled(m + 1, 0usize, "row offsets of C")?;
            for i in 0..m {
                row_ptr[i + 1] = row_ptr[i] + sym.row_nnz[i] as usize;
            }
            let nnz = row_ptr[m];
            let limit = self.format.offsets.max_usize() - self.format.base;
            if nnz > limit {
                return err(
                    Status::IndexOverflow,
                    format!(
                        "C has {nnz} entries, more than {} row offsets can address ({limit})",
                        self.format.offsets.name()
                    ),
                );
            }
            if nnz >= lim {
                return too_big("nnz(C)", nnz);
            }
            let gplan = plan_numeric(&gpu, sym, &row_ptr, std::mem::size_of::<V>(), V::KIND)?;
            timing.mark("symbolic: prefix sum, numeric bins, C offsets up")?;
            let max_row_nnz = (0..m)
                .map(|i| row_ptr[i + 1] - row_ptr[i])
                .max()
                .unwrap_or(0);
            Ok(Plan {
                shape: InputShape {
                    sig: crate::exec::a_sig::<O, I, V>(),
                    a_nrows: a.nrows(),
                    a_ncols: a.ncols(),
                    b_ncols: k,
                    a_nnz: a.nnz(),
                    b_nnz: b.nnz(),
                    a_base: a.base(),
                    b_base: b.base(),
                },
                digests,
                format: self.format,
                flops: gplan.1,
                max_row_flops: gplan.2,
                row_ptr,
                chunks: Vec::new(),
                max_row_nnz,
                symbolic_alg: Algorithm::LinearProbe,
                numeric_alg: Algorithm::LinearProbe,
                sorted: h.options.sorted_output,
                gpu: Some(Box::new(gplan.0)),
            })
        })
    }
}

/// What the symbolic phase leaves on the device and brings back.
struct Symbolic {
    a_ptr: CudaSlice<i32>,
    a_col: CudaSlice<i32>,
    b_ptr: CudaSlice<i32>,
    b_col: CudaSlice<i32>,
    row_nnz: Vec<i32>,
    flops: u64,
    max_row_flops: u64,
    global_rows: usize,
}

fn symbolic_on_device(
    gpu: &Gpu,
    m: usize,
    a_ptr: &[i32],
    a_col: &[i32],
    b_ptr: &[i32],
    b_col: &[i32],
    k: usize,
) -> Result<Symbolic> {
    let s = &gpu.main;
    // The symbolic kernels do not touch values: any value type's module has them.
    let md = gpu.module(Source::Spgemm, crate::types::ValueType::Float64)?;
    let d_aptr = drv(s.clone_htod(a_ptr), "copy A")?;
    let d_acol = drv(s.clone_htod(&*nonempty(a_col)), "copy A")?;
    let d_bptr = drv(s.clone_htod(b_ptr), "copy B")?;
    let d_bcol = drv(s.clone_htod(&*nonempty(b_col)), "copy B")?;
    let mut d_nprod = drv(s.alloc_zeros::<i64>(m.max(1)), "alloc")?;
    let mi = m as i32;
    if m > 0 {
        // SAFETY: arguments match row_nprod; arrays sized m + 1 / nnz.
        drv(
            unsafe {
                s.launch_builder(md.f("row_nprod")?)
                    .arg(&mi)
                    .arg(&d_aptr)
                    .arg(&d_acol)
                    .arg(&d_bptr)
                    .arg(&mut d_nprod)
                    .launch(cfg((m * 32).div_ceil(256), 256, 0))
            },
            "row_nprod",
        )?;
    }
    let nprod = drv(s.clone_dtoh(&d_nprod), "copy")?;
    let nprod = &nprod[..m];
    let flops: u64 = nprod.iter().map(|&x| x as u64).sum();
    let max_row_flops = nprod.iter().copied().max().unwrap_or(0) as u64;

    let sbins = bins::symbolic(gpu.smem_per_block);
    let (d_rows, sizes, offsets) = bin_rows(gpu, &md, &d_nprod, m, &sbins)?;
    let mut d_row_nnz = drv(s.alloc_zeros::<i32>(m.max(1)), "alloc")?;
    let last = sbins.len() - 1;
    let mut d_failed = drv(s.alloc_zeros::<i32>(sizes[last].max(1)), "alloc")?;
    let mut d_nfailed = drv(s.alloc_zeros::<i32>(1), "alloc")?;
    for (bi, st) in schedule(gpu, &sizes)? {
        let bin = &sbins[bi];
        let rows = d_rows.slice(offsets[bi]..offsets[bi] + sizes[bi]);
        let n = sizes[bi] as i32;
        let tsize = bin.tsize as i32;
        let tpr = bin.tpr as i32;
        let fail_at = if bi == last {
            bins::symbolic_fail_at(bin) as i32
        } else {
            tsize + 1
        };
        let grid = sizes[bi].div_ceil(bin.rows_per_block() as usize);
        // SAFETY: arguments match sym_shared; dynamic shared memory holds the tables.
        drv(
            unsafe {
                st.launch_builder(md.f("sym_shared")?)
                    .arg(&rows)
                    .arg(&n)
                    .arg(&tsize)
                    .arg(&tpr)
                    .arg(&fail_at)
                    .arg(&d_aptr)
                    .arg(&d_acol)
                    .arg(&d_bptr)
                    .arg(&d_bcol)
                    .arg(&mut d_row_nnz)
                    .arg(&mut d_failed)
                    .arg(&mut d_nfailed)
                    .launch(cfg(grid, bin.block, bins::symbolic_smem(bin)))
            },
            "sym_shared",
        )?;
    }
    join_side(gpu)?;
    let nfailed = drv(s.clone_dtoh(&d_nfailed), "copy")?[0] as usize;
    if nfailed > 0 {
        let failed = drv(s.clone_dtoh(&d_failed), "copy")?;
        let widest = failed[..nfailed]
            .iter()
            .map(|&r| (nprod[r as usize] as u64).min(k as u64))
            .max()
            .unwrap_or(1);
        // At most half full, and never smaller than the shared table that overflowed.
        let tsize = (2 * widest)
            .next_power_of_two()
            .max(sbins[last].tsize as u64) as usize;
        if tsize > i32::MAX as usize {
            return too_big("a global hash table", tsize);
        }
        let blocks = pool_blocks(gpu, nfailed, tsize * 4);
        let mut pool = drv(s.alloc_zeros::<i32>(blocks * tsize), "alloc hash pool")?;
        let mut next = drv(s.alloc_zeros::<i32>(1), "alloc")?;
        let (n, ts) = (nfailed as i32, tsize as i32);
        // SAFETY: arguments match sym_global; the pool holds `blocks` tables.
        drv(
            unsafe {
                s.launch_builder(md.f("sym_global")?)
                    .arg(&d_failed)
                    .arg(&n)
                    .arg(&ts)
                    .arg(&d_aptr)
                    .arg(&d_acol)
                    .arg(&d_bptr)
                    .arg(&d_bcol)
                    .arg(&mut d_row_nnz)
                    .arg(&mut pool)
                    .arg(&mut next)
                    .launch(cfg(blocks, 1024, 0))
            },
            "sym_global",
        )?;
    }
    let mut row_nnz = drv(s.clone_dtoh(&d_row_nnz), "copy")?;
    row_nnz.truncate(m);
    Ok(Symbolic {
        a_ptr: d_aptr,
        a_col: d_acol,
        b_ptr: d_bptr,
        b_col: d_bcol,
        row_nnz,
        flops,
        max_row_flops,
        global_rows: nfailed,
    })
}

/// Kernels reject zero-length arrays: an empty input becomes one unused element.
fn nonempty(v: &[i32]) -> Cow<'_, [i32]> {
    if v.is_empty() {
        Cow::Owned(vec![0])
    } else {
        Cow::Borrowed(v)
    }
}

/// Uploads C's row offsets and groups C's rows by n_nz for the numeric kernels.
fn plan_numeric(
    gpu: &Arc<Gpu>,
    sym: Symbolic,
    row_ptr: &[usize],
    value_bytes: usize,
    vt: crate::types::ValueType,
) -> Result<(GpuPlan, u64, u64)> {
    let s = &gpu.main;
    let m = row_ptr.len() - 1;
    let md = gpu.module(Source::Spgemm, vt)?;
    let c_ptr: Vec<i32> = row_ptr.iter().map(|&x| x as i32).collect();
    let d_cptr = drv(s.clone_htod(&c_ptr), "copy")?;
    let nnz_key: Vec<i64> = sym.row_nnz.iter().map(|&x| x as i64).collect();
    let d_key = drv(s.clone_htod(&*nonempty_i64(&nnz_key)), "copy")?;
    let mut nbins = bins::numeric(gpu.smem_per_block, value_bytes);
    let shared_limit = nbins.last().map(|b| b.limit).unwrap_or(0);
    // One more, open-ended bin for the global kernel.
    nbins.push(Bin {
        limit: i64::MAX,
        tsize: 0,
        block: 1024,
        tpr: 1024,
    });
    let (d_rows, mut sizes, mut offsets) = bin_rows(gpu, &md, &d_key, m, &nbins)?;
    let widest = sym
        .row_nnz
        .iter()
        .filter(|&&x| x as i64 > shared_limit)
        .map(|&x| x as usize)
        .max()
        .unwrap_or(0);
    let global_tsize = (2 * widest).next_power_of_two();
    if global_tsize > i32::MAX as usize {
        return too_big("a global hash table", global_tsize);
    }
    nbins.pop();
    let global_rows = sizes.pop().unwrap_or(0);
    let global_offset = offsets.pop().unwrap_or(0);
    // Keep the global rows' offset reachable as an extra entry after the shared bins.
    offsets.push(global_offset);
    drv(s.synchronize(), "synchronize")?;
    Ok((
        GpuPlan {
            gpu: gpu.clone(),
            a_ptr: sym.a_ptr,
            a_col: sym.a_col,
            b_ptr: sym.b_ptr,
            b_col: sym.b_col,
            c_ptr: d_cptr,
            num_rows: d_rows,
            num_bins: nbins,
            num_sizes: sizes,
            num_offsets: offsets,
            global_rows,
            global_tsize,
            value_bytes,
            symbolic_global_rows: sym.global_rows,
        },
        sym.flops,
        sym.max_row_flops,
    ))
}

fn nonempty_i64(v: &[i64]) -> Cow<'_, [i64]> {
    if v.is_empty() {
        Cow::Owned(vec![0])
    } else {
        Cow::Borrowed(v)
    }
}

/// Symbolic phase on the GPU (the handle's backend chose it).
pub fn symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    dispatch_pair(a, b, GpuSymbolicOp { handle, format })
}

/// Numeric phase of a GPU plan: uploads the values, runs the bins (largest first, over
/// several streams), downloads C. Inputs were checked against the plan by the caller.
pub fn numeric<O: Idx, I: Idx, V: Scalar>(
    _handle: &Handle,
    plan: &Plan,
    g: &GpuPlan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    cols: IndexSliceMut<'_>,
    vals: Option<&mut [V]>,
) -> Result<()> {
    let gpu = &g.gpu;
    let s = &gpu.main;
    let timing = Timing::new(s);
    if std::mem::size_of::<V>() != g.value_bytes {
        return err(Status::TypeMismatch, "values differ from the plan's type");
    }
    let md = gpu.module(Source::Spgemm, V::KIND)?;
    let nnz = plan.nnz();
    let has_vals = vals.is_some() as i32;
    let sorted = plan.sorted as i32;
    let vb = g.value_bytes;
    let (d_aval, d_bval) = match (has_vals, a.values(), b.values()) {
        (1, Some(av), Some(bv)) if !av.is_empty() && !bv.is_empty() => (
            drv(s.clone_htod(as_bytes(av)), "copy A values")?,
            drv(s.clone_htod(as_bytes(bv)), "copy B values")?,
        ),
        _ => (
            drv(s.alloc_zeros::<u8>(vb), "alloc")?,
            drv(s.alloc_zeros::<u8>(vb), "alloc")?,
        ),
    };
    let mut d_ccol = drv(s.alloc_zeros::<i32>(nnz.max(1)), "alloc C")?;
    let mut d_cval = drv(
        s.alloc_zeros::<u8>(if has_vals == 1 { nnz * vb } else { 0 }.max(vb)),
        "alloc C",
    )?;
    timing.mark("upload values, allocate C")?;
    let sizes = &g.num_sizes;
    for (bi, st) in schedule(gpu, sizes)? {
        let bin = &g.num_bins[bi];
        let rows = g
            .num_rows
            .slice(g.num_offsets[bi]..g.num_offsets[bi] + sizes[bi]);
        let (n, tsize, tpr) = (sizes[bi] as i32, bin.tsize as i32, bin.tpr as i32);
        let grid = sizes[bi].div_ceil(bin.rows_per_block() as usize);
        // SAFETY: arguments match num_shared; dynamic shared memory holds the tables.
        drv(
            unsafe {
                st.launch_builder(md.f("num_shared")?)
                    .arg(&rows)
                    .arg(&n)
                    .arg(&tsize)
                    .arg(&tpr)
                    .arg(&g.a_ptr)
                    .arg(&g.a_col)
                    .arg(&d_aval)
                    .arg(&g.b_ptr)
                    .arg(&g.b_col)
                    .arg(&d_bval)
                    .arg(&g.c_ptr)
                    .arg(&mut d_ccol)
                    .arg(&mut d_cval)
                    .arg(&sorted)
                    .arg(&has_vals)
                    .launch(cfg(grid, bin.block, bins::numeric_smem(bin, vb)))
            },
            "num_shared",
        )?;
    }
    let mut pools = None;
    if g.global_rows > 0 {
        let st = &gpu.side[0];
        let ts = g.global_tsize;
        let blocks = pool_blocks(gpu, g.global_rows, ts * (4 + vb));
        let kp = drv(st.alloc_zeros::<i32>(blocks * ts), "alloc hash pool")?;
        let vp = drv(st.alloc_zeros::<u8>(blocks * ts * vb), "alloc hash pool")?;
        let next = drv(st.alloc_zeros::<i32>(1), "alloc")?;
        let off = *g.num_offsets.last().unwrap_or(&0);
        let rows = g.num_rows.slice(off..off + g.global_rows);
        let (n, tsi) = (g.global_rows as i32, ts as i32);
        // SAFETY: arguments match num_global; the pools hold `blocks` tables.
        drv(
            unsafe {
                st.launch_builder(md.f("num_global")?)
                    .arg(&rows)
                    .arg(&n)
                    .arg(&tsi)
                    .arg(&g.a_ptr)
                    .arg(&g.a_col)
                    .arg(&d_aval)
                    .arg(&g.b_ptr)
                    .arg(&g.b_col)
                    .arg(&d_bval)
                    .arg(&g.c_ptr)
                    .arg(&mut d_ccol)
                    .arg(&mut d_cval)
                    .arg(&sorted)
                    .arg(&has_vals)
                    .arg(&kp)
                    .arg(&vp)
                    .arg(&next)
                    .launch(cfg(blocks, 1024, 0))
            },
            "num_global",
        )?;
        pools = Some((kp, vp, next));
    }
    join_side(gpu)?;
    timing.mark("numeric kernels")?;
    // Straight into the caller's arrays: a staging copy costs a second pass over C and
    // page faults on a fresh buffer.
    let base = plan.format.base;
    if nnz > 0 {
        match cols {
            IndexSliceMut::I32(c) => {
                drv(s.memcpy_dtoh(&d_ccol.slice(0..nnz), c), "copy C")?;
                drv(s.synchronize(), "synchronize")?;
                if base != 0 {
                    c.par_iter_mut().for_each(|x| *x += base as i32);
                }
            }
            IndexSliceMut::I64(c) => {
                let ccol = drv(s.clone_dtoh(&d_ccol), "copy C")?;
                c.par_iter_mut()
                    .zip(ccol.par_iter())
                    .for_each(|(o, &x)| *o = x as i64 + base as i64);
            }
        }
    }
    timing.mark("download C columns")?;
    if let Some(v) = vals
        && nnz > 0
    {
        // SAFETY: V is f32 or f64; the caller's buffer holds nnz values.
        let dst = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), nnz * vb) };
        drv(s.memcpy_dtoh(&d_cval.slice(0..nnz * vb), dst), "copy C")?;
    }
    drv(s.synchronize(), "synchronize")?;
    timing.mark("download C values")?;
    drop(pools);
    Ok(())
}

/// Phase times of a numeric call, printed to stderr when SPGEMM_CUDA_TIMING=1 (for
/// docs/GPU.md; each mark synchronises the stream).
struct Timing<'s> {
    stream: Option<&'s CudaStream>,
    last: std::cell::Cell<std::time::Instant>,
}

impl<'s> Timing<'s> {
    fn new(stream: &'s CudaStream) -> Self {
        let on = std::env::var("SPGEMM_CUDA_TIMING").is_ok_and(|v| v == "1");
        Timing {
            stream: on.then_some(stream),
            last: std::cell::Cell::new(std::time::Instant::now()),
        }
    }
    fn mark(&self, what: &str) -> Result<()> {
        if let Some(s) = self.stream {
            drv(s.synchronize(), "synchronize")?;
            let now = std::time::Instant::now();
            eprintln!(
                "spgemm cuda numeric: {what}: {:.3} ms",
                (now - self.last.get()).as_secs_f64() * 1e3
            );
            self.last.set(now);
        }
        Ok(())
    }
}
