//! GPU SpGEMM: host side of kernels/spgemm.cu. Inputs are copied to the device as 0-based
//! int32 CSR (checked while converting, so a bad index never reaches a kernel); the plan
//! keeps the device copies of A's and B's structure, C's row offsets and the numeric bins,
//! so a numeric call only uploads values.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::bins::{self, Bin};
use super::device::{Gpu, Source, drv};
use super::io::{COut, ValuesIn};
use super::limits;
use crate::common::csr::CsrRef;
use crate::common::device::{DeviceCsr, DeviceOut, DevicePtr};
use crate::common::options::OutputFormat;
use crate::common::slices::IndexSliceMut;
use crate::error::{Result, Status, err};
use crate::types::{Idx, IndexType, Scalar, ValueType};

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
    /// B's columns when the global rows use dense rows (`num_dense`), else 0 (hash tables).
    global_dense_cols: usize,
    value_bytes: usize,
    /// Rows the symbolic phase moved from shared to global-memory tables.
    symbolic_global_rows: usize,
    /// Rows split across blocks (after the global rows in `num_rows`), their table size,
    /// blocks per row and each row's products (None: no split rows).
    split: Option<NumericSplit>,
    /// Rows of C this plan computes, and the entries of A they read (all of A, or the
    /// GPU's rows of a hybrid split).
    rows: usize,
    a_entries: Range<usize>,
    /// Entries of C in these rows, and whether each row comes out sorted.
    nnz: usize,
    sorted: bool,
}

/// The numeric phase's split rows.
struct NumericSplit {
    rows: usize,
    offset: usize,
    tsize: usize,
    parts: u32,
    d_nprod: CudaSlice<i64>,
    /// B's columns when split rows use dense rows, else 0 (hash tables).
    dense_cols: usize,
}

impl std::fmt::Debug for GpuPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuPlan")
            .field("device", &self.gpu.name)
            .field("num_sizes", &self.num_sizes)
            .field("global_rows", &self.global_rows)
            .field("global_tsize", &self.global_tsize)
            .field("global_dense_cols", &self.global_dense_cols)
            .field("symbolic_global_rows", &self.symbolic_global_rows)
            .field("split_rows", &self.split_rows())
            .finish()
    }
}

impl GpuPlan {
    /// Rows per numeric bin (the last entry: rows on global-memory tables). For tests.
    #[cfg(test)]
    pub fn numeric_bin_sizes(&self) -> Vec<usize> {
        let mut v = self.num_sizes.clone();
        v.push(self.global_rows);
        v
    }

    /// Rows whose products are shared by several blocks.
    pub fn split_rows(&self) -> usize {
        self.split.as_ref().map_or(0, |x| x.rows)
    }

    /// Entries of C in this plan's rows.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Which of A (its last `rows` rows: all of it, or a hybrid split's GPU rows) and B,
    /// as the caller holds them now, differs from the structure this plan copied to the
    /// device (None: neither): read back and compared, O(nnz) copied. The check of a plan
    /// made without structure digests when validation is on (A and B validated first).
    pub fn structure_differs<O: Idx, I: Idx, V: Scalar>(
        &self,
        a: &CsrRef<'_, O, I, V>,
        b: &CsrRef<'_, O, I, V>,
    ) -> Result<Option<&'static str>> {
        let m = a.nrows();
        let Some(start) = m.checked_sub(self.rows) else {
            return Ok(Some("A"));
        };
        let offs = &a.row_offsets()[start..=m];
        let first = offs[0].to_usize();
        let entries = first - a.base()..offs[offs.len() - 1].to_usize() - a.base();
        if entries != self.a_entries {
            return Ok(Some("A"));
        }
        let s = &self.gpu.main;
        let back = |d: &CudaSlice<i32>| drv(s.clone_dtoh(d), "copy");
        let (ap, ac) = (back(&self.a_ptr)?, back(&self.a_col)?);
        let (bp, bc) = (back(&self.b_ptr)?, back(&self.b_col)?);
        drv(s.synchronize(), "synchronize")?;
        // An empty column array went to the device as one element (see `nonempty`).
        let same = |dev: &[i32], host: &[i32]| {
            dev.len() == host.len().max(1) && dev[..host.len()] == *host
        };
        let a_ptr = dev_offsets_cow("A", offs, first, true)?;
        let a_col = dev_cols_cow("A", &a.col_indices()[entries], a.base(), a.ncols(), true)?;
        if !same(&ap, &a_ptr) || !same(&ac, &a_col) {
            return Ok(Some("A"));
        }
        let b_ptr = dev_offsets_cow("B", b.row_offsets(), b.base(), true)?;
        let b_col = dev_cols_cow("B", b.col_indices(), b.base(), b.ncols(), true)?;
        if !same(&bp, &b_ptr) || !same(&bc, &b_col) {
            return Ok(Some("B"));
        }
        Ok(None)
    }

    /// C's row offsets (0-based, m + 1) from the device copy the plan keeps.
    pub fn row_offsets(&self) -> Result<Vec<i32>> {
        let p = drv(self.gpu.main.clone_dtoh(&self.c_ptr), "copy")?;
        drv(self.gpu.main.synchronize(), "synchronize")?;
        Ok(p)
    }

    /// B's column count when rows above the shared bins use dense rows, else 0 (hash).
    #[cfg(test)]
    pub fn global_dense_cols(&self) -> usize {
        self.global_dense_cols
    }
    /// Rows whose symbolic count overflowed the largest shared table.
    #[cfg(test)]
    pub fn symbolic_global_rows(&self) -> usize {
        self.symbolic_global_rows
    }
}

fn too_big<T>(what: &str, n: usize) -> Result<T> {
    limits::check(&[(what, n)])?;
    err(
        Status::Internal,
        format!("{what} = {n} was reported too big for the device"),
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

/// Row offsets as 0-based int32: `sub` is the first offset (the base for a whole matrix,
/// the first row's start for a range of rows).
fn dev_offsets_cow<'x, O: Idx>(
    name: &str,
    ptr: &'x [O],
    sub: usize,
    validated: bool,
) -> Result<Cow<'x, [i32]>> {
    match as_i32(ptr, sub, validated) {
        Some(v) => Ok(Cow::Borrowed(v)),
        None => dev_offsets(name, ptr, sub).map(Cow::Owned),
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
    // SAFETY: V is plain data without padding (f32, f64, or a #[repr(C)] complex pair).
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
const POOL_BUDGET: usize = 1 << 30;

/// Kernel for the rows above the last shared numeric bin: chosen per plan (0), or forced
/// to hash tables (1) or dense rows (2) so tests can run both on one input.
static GLOBAL_ROWS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
const GLOBAL_HASH: u8 = 1;
const GLOBAL_DENSE: u8 = 2;

/// Which kernel plans made from now on use for rows too wide for shared memory (tests).
#[cfg(test)]
pub fn force_global_rows_kernel(kernel: Option<bool>) {
    let v = match kernel {
        None => 0,
        Some(false) => GLOBAL_HASH,
        Some(true) => GLOBAL_DENSE,
    };
    GLOBAL_ROWS.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// n_prod above which rows are split across blocks: the plan's policy (0) or a forced value
/// (tests, so small inputs reach the split kernels).
static SPLIT_AT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Splits rows of more than `at` products in plans made from now on (None: the policy;
/// u64::MAX: no split rows at all, the few-wide-rows rule included).
#[cfg(test)]
pub fn force_split_at(at: Option<u64>) {
    SPLIT_AT.store(at.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

fn split_at(gpu: &Gpu, flops: u64) -> u64 {
    match SPLIT_AT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => bins::split_threshold(flops, gpu.sm_count),
        at => at,
    }
}

/// Whether split rows use dense rows of B's k columns (`slot_bytes` each) rather than
/// hash tables of `tsize` slots: unless B is far wider than the tables (a dense row is
/// cleared and read whole), or the tests force one kind.
fn split_dense(k: usize, slot_bytes: usize, tsize: usize) -> bool {
    let fits = k * slot_bytes <= bins::SPLIT_BUDGET;
    match GLOBAL_ROWS.load(std::sync::atomic::Ordering::Relaxed) {
        GLOBAL_HASH => false,
        GLOBAL_DENSE => fits,
        _ => fits && k <= 32 * tsize,
    }
}

/// Numeric rows above the last shared bin that are split (dense or hash kernels over many
/// blocks) when there are at most this many per multiprocessor: one block per row left
/// most of the device idle while a few wide rows were summed and sorted.
const FEW_WIDE_ROWS_PER_SM: usize = 2;

/// Launch grid of a grid-stride kernel over n elements.
fn fill_grid(gpu: &Gpu, n: usize) -> usize {
    n.div_ceil(256).clamp(1, 8 * gpu.sm_count.max(1) as usize)
}

fn pool_blocks(gpu: &Gpu, rows: usize, bytes_per_block: usize) -> usize {
    let by_mem = (POOL_BUDGET / bytes_per_block.max(1)).max(1);
    rows.min(2 * gpu.sm_count as usize).min(by_mem).max(1)
}

/// The GPU's share of a product: rows `rows` of A times B, symbolic phase done, numeric
/// bins ready. `row_ptr[i + 1] - row_ptr[i]` is the length of row `rows.start + i` of C.
pub struct GpuPart {
    pub plan: GpuPlan,
    /// C's row offsets for these rows, from 0 (m + 1 entries), when asked for; else empty
    /// (they stay on the device).
    pub row_ptr: Vec<usize>,
    pub nnz: usize,
    pub flops: u64,
}

/// Symbolic phase of rows `rows` of A times B on the GPU (host inputs, already validated
/// when `validated`). The whole product is `rows = 0..m`; a hybrid split gives the GPU
/// its rows this way.
#[allow(clippy::too_many_arguments)]
pub fn symbolic_rows<O: Idx, I: Idx, V: Scalar>(
    gpu: &Arc<Gpu>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: Range<usize>,
    vt: ValueType,
    validated: bool,
    sorted: bool,
    host_offsets: bool,
    timing: &Timing<'_>,
) -> Result<GpuPart> {
    let k = b.ncols();
    let offs = &a.row_offsets()[rows.start..=rows.end];
    let first = offs[0].to_usize();
    let entries = first - a.base()..offs[offs.len() - 1].to_usize() - a.base();
    let a_ptr = dev_offsets_cow("A", offs, first, validated)?;
    let a_col = dev_cols_cow(
        "A",
        &a.col_indices()[entries.clone()],
        a.base(),
        a.ncols(),
        validated,
    )?;
    let b_ptr = dev_offsets_cow("B", b.row_offsets(), b.base(), validated)?;
    let b_col = dev_cols_cow("B", b.col_indices(), b.base(), k, validated)?;
    timing.mark("symbolic: convert A, B to int32")?;
    let s = &gpu.main;
    let dev = DevStructure {
        a_ptr: drv(s.clone_htod(&*a_ptr), "copy A")?,
        a_col: drv(s.clone_htod(&*nonempty(&a_col)), "copy A")?,
        b_ptr: drv(s.clone_htod(&*b_ptr), "copy B")?,
        b_col: drv(s.clone_htod(&*nonempty(&b_col)), "copy B")?,
    };
    let part = symbolic_part(
        gpu,
        dev,
        rows.len(),
        k,
        entries,
        sorted,
        vt,
        host_offsets,
        timing,
    )?;
    timing.mark("symbolic: on device (n_prod, bins, hash kernels, n_nz back, numeric bins)")?;
    Ok(part)
}

/// Runs the symbolic kernels on structure already on the device and prepares the numeric
/// bins.
#[allow(clippy::too_many_arguments)]
fn symbolic_part(
    gpu: &Arc<Gpu>,
    dev: DevStructure,
    m: usize,
    k: usize,
    a_entries: Range<usize>,
    sorted: bool,
    vt: ValueType,
    host_offsets: bool,
    timing: &Timing<'_>,
) -> Result<GpuPart> {
    let sym = symbolic_on_device(gpu, m, dev, k, timing)?;
    let md = gpu.module(Source::Spgemm, vt)?;
    let (d_cptr, nnz, max_row_nnz) = row_offsets_on_device(gpu, &md, &sym.d_row_nnz, m)?;
    if nnz >= limits::DEVICE_INDEX_LIMIT {
        return too_big("nnz(C)", nnz);
    }
    // A hybrid plan stitches C's row offsets on the host; a GPU plan leaves them on the
    // device (copying and widening them took half the 7-point stencil squared's symbolic
    // phase; docs/DESIGN-NOTES.md, cuda::spgemm), and `write_row_offsets` reads them
    // when asked.
    let row_ptr = if host_offsets {
        let c_ptr = drv(gpu.main.clone_dtoh(&d_cptr), "copy")?;
        let mut row_ptr = crate::platform::alloc::try_with_capacity(m + 1, "row offsets of C")?;
        row_ptr.extend(c_ptr.iter().map(|&x| x as usize));
        row_ptr
    } else {
        Vec::new()
    };
    let value_bytes = match vt {
        ValueType::Float32 | ValueType::Float64 => vt.size(),
        // The dispatcher never sends complex values here.
        ValueType::Complex32 | ValueType::Complex64 => {
            return err(
                Status::NotSupported,
                format!("{} values: the GPU has no kernels for them", vt.name()),
            );
        }
    };
    timing.mark("symbolic: C's row offsets (device scan)")?;
    let (plan, flops) = plan_numeric(
        gpu,
        sym,
        k,
        d_cptr,
        nnz,
        max_row_nnz,
        value_bytes,
        vt,
        a_entries,
        sorted,
    )?;
    timing.mark("symbolic: numeric bins")?;
    Ok(GpuPart {
        plan,
        row_ptr,
        nnz,
        flops,
    })
}

/// C's row offsets (0-based int32, m + 1) as the exclusive scan of the row counts, on the
/// device, nnz(C) (64-bit, so an overflow of 32-bit offsets is seen before use) and the
/// longest row.
fn row_offsets_on_device(
    gpu: &Gpu,
    md: &super::device::Module,
    row_nnz: &CudaSlice<i32>,
    m: usize,
) -> Result<(CudaSlice<i32>, usize, usize)> {
    const TILE: usize = 2048; // SCAN_TILE in kernels/spgemm.cu
    let s = &gpu.main;
    let mut ptr = drv(s.alloc_zeros::<i32>(m + 1), "alloc")?;
    if m == 0 {
        return Ok((ptr, 0, 0));
    }
    let tiles = m.div_ceil(TILE);
    let mut sums = drv(s.alloc_zeros::<i64>(tiles + 1), "alloc")?;
    let mut longest = drv(s.alloc_zeros::<u64>(1), "alloc")?;
    let (mi, ti) = (m as i32, tiles as i32);
    // SAFETY: arguments match scan_tiles / scan_tile_sums / scan_finish: row_nnz holds m
    // counts, sums tiles + 1 entries, ptr m + 1 offsets.
    unsafe {
        drv(
            s.launch_builder(md.f("scan_tiles")?)
                .arg(&mi)
                .arg(row_nnz)
                .arg(&mut sums)
                .arg(&mut longest)
                .launch(cfg(tiles, 256, 0)),
            "scan_tiles",
        )?;
        drv(
            s.launch_builder(md.f("scan_tile_sums")?)
                .arg(&ti)
                .arg(&mut sums)
                .arg(&mi)
                .arg(&mut ptr)
                .launch(cfg(1, 1024, 0)),
            "scan_tile_sums",
        )?;
        drv(
            s.launch_builder(md.f("scan_finish")?)
                .arg(&mi)
                .arg(row_nnz)
                .arg(&sums)
                .arg(&mut ptr)
                .launch(cfg(tiles, 256, 0)),
            "scan_finish",
        )?;
    }
    let mut total = [0i64];
    drv(
        s.memcpy_dtoh(&sums.slice(tiles..tiles + 1), &mut total[..]),
        "copy",
    )?;
    let longest = drv(s.clone_dtoh(&longest), "copy")?[0] as usize;
    drv(s.synchronize(), "synchronize")?;
    Ok((ptr, total[0] as usize, longest))
}

/// A's and B's structure on the device, 0-based int32.
struct DevStructure {
    a_ptr: CudaSlice<i32>,
    a_col: CudaSlice<i32>,
    b_ptr: CudaSlice<i32>,
    b_col: CudaSlice<i32>,
}

/// What the symbolic phase leaves on the device and brings back.
struct Symbolic {
    dev: DevStructure,
    /// C's row counts (the numeric bins' keys and the scan's input).
    d_row_nnz: CudaSlice<i32>,
    flops: u64,
    global_rows: usize,
    /// Each row's products (the split rows' keys and kernels need them), the largest,
    /// and the n_prod above which rows were split (None: no row was).
    d_nprod: CudaSlice<i64>,
    largest: u64,
    split_at: Option<u64>,
}

fn symbolic_on_device(
    gpu: &Gpu,
    m: usize,
    dev: DevStructure,
    k: usize,
    timing: &Timing<'_>,
) -> Result<Symbolic> {
    let s = &gpu.main;
    // The symbolic kernels do not touch values: any value type's module has them.
    let md = gpu.module(Source::Spgemm, crate::types::ValueType::Float64)?;
    let (d_aptr, d_acol, d_bptr, d_bcol) = (&dev.a_ptr, &dev.a_col, &dev.b_ptr, &dev.b_col);
    let mut d_nprod = drv(s.alloc_zeros::<i64>(m.max(1)), "alloc")?;
    let mut d_stats = drv(s.alloc_zeros::<u64>(2), "alloc")?;
    let mi = m as i32;
    if m > 0 {
        let (mut d_total, mut d_max) = d_stats.split_at_mut(1);
        // SAFETY: arguments match row_nprod; arrays sized m + 1 / nnz, two counters.
        drv(
            unsafe {
                s.launch_builder(md.f("row_nprod")?)
                    .arg(&mi)
                    .arg(d_aptr)
                    .arg(d_acol)
                    .arg(d_bptr)
                    .arg(&mut d_nprod)
                    .arg(&mut d_total)
                    .arg(&mut d_max)
                    .launch(cfg((m * 32).div_ceil(256), 256, 0))
            },
            "row_nprod",
        )?;
    }
    let stats = drv(s.clone_dtoh(&d_stats), "copy")?;
    let (flops, largest) = (stats[0], stats[1]);
    timing.mark("symbolic: n_prod per row (flops, largest row back)")?;

    let mut sbins = bins::symbolic(gpu.smem_per_block);
    let last = sbins.len() - 1;
    // Rows above the split threshold get a bin of their own after the shared ones.
    let at = split_at(gpu, flops);
    let splitting = largest > at;
    if splitting {
        sbins[last].limit = at as i64;
        sbins.push(Bin {
            limit: i64::MAX,
            tsize: 0,
            block: bins::SPLIT_BLOCK,
            tpr: bins::SPLIT_BLOCK,
        });
    }
    let (d_rows, mut sizes, offsets) = bin_rows(gpu, &md, &d_nprod, m, &sbins)?;
    let nsplit = if splitting {
        sizes.pop().unwrap_or(0)
    } else {
        0
    };
    timing.mark("symbolic: bin rows by n_prod")?;
    let mut d_row_nnz = drv(s.alloc_zeros::<i32>(m.max(1)), "alloc")?;
    let mut d_failed = drv(s.alloc_zeros::<i32>(sizes[last].max(1)), "alloc")?;
    let mut d_nfailed = drv(s.alloc_zeros::<i32>(1), "alloc")?;
    let shared_bins = schedule(gpu, &sizes)?;
    if nsplit > 0 {
        // On the main stream, beside the shared bins on the side streams.
        let rows = d_rows.slice(offsets[last + 1]..offsets[last + 1] + nsplit);
        symbolic_split(
            gpu,
            &md,
            &rows,
            nsplit,
            largest,
            k,
            &dev,
            &d_nprod,
            &mut d_row_nnz,
        )?;
        timing.bin(s, "sym_split", nsplit, 0)?;
    }
    for (bi, st) in shared_bins {
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
                    .arg(d_aptr)
                    .arg(d_acol)
                    .arg(d_bptr)
                    .arg(d_bcol)
                    .arg(&mut d_row_nnz)
                    .arg(&mut d_failed)
                    .arg(&mut d_nfailed)
                    .launch(cfg(grid, bin.block, bins::symbolic_smem(bin)))
            },
            "sym_shared",
        )?;
        timing.bin(st, "sym_shared", sizes[bi], bin.tsize)?;
    }
    join_side(gpu)?;
    let nfailed = drv(s.clone_dtoh(&d_nfailed), "copy")?[0] as usize;
    timing.mark("symbolic: shared-memory hash kernels")?;
    if nfailed > 0 {
        // Rare (rows of more than ~26K distinct columns on Hopper): only then is n_prod
        // brought back, to size the global tables.
        let nprod = drv(s.clone_dtoh(&d_nprod), "copy")?;
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
        let (n, ts, ki) = (nfailed as i32, tsize as i32, k as i32);
        // SAFETY: arguments match sym_global; the pool holds `blocks` tables.
        drv(
            unsafe {
                s.launch_builder(md.f("sym_global")?)
                    .arg(&d_failed)
                    .arg(&n)
                    .arg(&ts)
                    .arg(d_aptr)
                    .arg(d_acol)
                    .arg(d_bptr)
                    .arg(d_bcol)
                    .arg(&d_nprod)
                    .arg(&ki)
                    .arg(&mut d_row_nnz)
                    .arg(&mut pool)
                    .arg(&mut next)
                    .launch(cfg(blocks, 1024, 0))
            },
            "sym_global",
        )?;
    }
    timing.mark("symbolic: global hash kernel")?;
    Ok(Symbolic {
        dev,
        d_row_nnz,
        flops,
        global_rows: nfailed,
        d_nprod,
        largest,
        split_at: (nsplit > 0).then_some(at),
    })
}

/// Symbolic counts of split rows on dense rows of k flags, in batches that fit
/// SPLIT_BUDGET, on the main stream.
#[allow(clippy::too_many_arguments)]
fn symbolic_split_dense(
    gpu: &Gpu,
    md: &super::device::Module,
    rows: &cudarc::driver::CudaView<'_, i32>,
    n: usize,
    parts: u32,
    k: usize,
    dev: &DevStructure,
    d_nprod: &CudaSlice<i64>,
    d_row_nnz: &mut CudaSlice<i32>,
) -> Result<()> {
    const COLS_PER_BLOCK: usize = 8 * 1024; // DENSE_RUN x 1024 threads
    let s = &gpu.main;
    let batch = bins::split_batch(k, 4).min(n);
    let chunks = k.div_ceil(COLS_PER_BLOCK);
    // SAFETY: split_dense_clear sets every flag of the batch before sym_split_dense.
    let mut flags = drv(unsafe { s.alloc::<i32>(batch * k) }, "alloc split rows")?;
    let mut no_vals = drv(s.alloc_zeros::<u8>(8), "alloc")?;
    let (pi, ki, ci, zero) = (parts as i32, k as i32, chunks as i32, 0i32);
    for start in (0..n).step_by(batch) {
        let nb = batch.min(n - start);
        let part_rows = rows.slice(start..start + nb);
        let (nbi, slots) = (nb as i32, (nb * k) as i64);
        // SAFETY: arguments match split_dense_clear, sym_split_dense and sym_dense_count;
        // `flags` holds `batch` rows of k flags, `part_rows` nb rows, row_nnz and nprod one
        // entry per row of A.
        unsafe {
            drv(
                s.launch_builder(md.f("split_dense_clear")?)
                    .arg(&slots)
                    .arg(&mut flags)
                    .arg(&mut no_vals)
                    .arg(&zero)
                    .launch(cfg(fill_grid(gpu, nb * k), 256, 0)),
                "split_dense_clear",
            )?;
            drv(
                s.launch_builder(md.f("sym_split_dense")?)
                    .arg(&part_rows)
                    .arg(&nbi)
                    .arg(&pi)
                    .arg(&ki)
                    .arg(&dev.a_ptr)
                    .arg(&dev.a_col)
                    .arg(&dev.b_ptr)
                    .arg(&dev.b_col)
                    .arg(d_nprod)
                    .arg(&mut flags)
                    .launch(cfg(nb * parts as usize, bins::SPLIT_BLOCK, 0)),
                "sym_split_dense",
            )?;
            drv(
                s.launch_builder(md.f("sym_dense_count")?)
                    .arg(&part_rows)
                    .arg(&nbi)
                    .arg(&ci)
                    .arg(&ki)
                    .arg(&flags)
                    .arg(&mut *d_row_nnz)
                    .launch(cfg(nb * chunks, 1024, 0)),
                "sym_dense_count",
            )?;
        }
    }
    Ok(())
}

/// Symbolic counts of the split rows `rows` (n of them), in batches whose tables fit
/// SPLIT_BUDGET, on the main stream.
#[allow(clippy::too_many_arguments)]
fn symbolic_split(
    gpu: &Gpu,
    md: &super::device::Module,
    rows: &cudarc::driver::CudaView<'_, i32>,
    n: usize,
    largest: u64,
    k: usize,
    dev: &DevStructure,
    d_nprod: &CudaSlice<i64>,
    d_row_nnz: &mut CudaSlice<i32>,
) -> Result<()> {
    let s = &gpu.main;
    let ts_max = bins::split_tsize(largest.min(k as u64));
    if ts_max > i32::MAX as usize {
        return too_big("a split row's hash table", ts_max);
    }
    let parts = bins::split_parts(largest);
    if split_dense(k, 4, ts_max) {
        return symbolic_split_dense(gpu, md, rows, n, parts, k, dev, d_nprod, d_row_nnz);
    }
    let batch = bins::split_batch(ts_max, 4).min(n);
    let mut pool = drv(s.alloc_zeros::<i32>(batch * ts_max), "alloc split tables")?;
    // SAFETY: a one-element stand-in; split_clear is told there are no values.
    let mut no_vals = drv(s.alloc_zeros::<u8>(8), "alloc")?;
    let (ti, pi, ki, zero) = (ts_max as i32, parts as i32, k as i32, 0i32);
    for start in (0..n).step_by(batch) {
        let nb = batch.min(n - start);
        let part_rows = rows.slice(start..start + nb);
        let slots = (nb * ts_max) as i64;
        let nbi = nb as i32;
        // SAFETY: arguments match split_clear and sym_split; the pool holds `batch` tables
        // of ts_max slots, `part_rows` nb rows, row_nnz and nprod one entry per row.
        unsafe {
            drv(
                s.launch_builder(md.f("split_clear")?)
                    .arg(&slots)
                    .arg(&mut pool)
                    .arg(&mut no_vals)
                    .arg(&zero)
                    .launch(cfg(fill_grid(gpu, nb * ts_max), 256, 0)),
                "split_clear",
            )?;
            drv(
                s.launch_builder(md.f("sym_split")?)
                    .arg(&part_rows)
                    .arg(&nbi)
                    .arg(&pi)
                    .arg(&ti)
                    .arg(&dev.a_ptr)
                    .arg(&dev.a_col)
                    .arg(&dev.b_ptr)
                    .arg(&dev.b_col)
                    .arg(d_nprod)
                    .arg(&ki)
                    .arg(&mut *d_row_nnz)
                    .arg(&mut pool)
                    .launch(cfg(nb * parts as usize, bins::SPLIT_BLOCK, 0)),
                "sym_split",
            )?;
        }
    }
    // The pool is freed when this returns; the main stream's order keeps it alive for the
    // kernels (cudarc frees stream-ordered).
    Ok(())
}

/// Kernels reject zero-length arrays: an empty input becomes one unused element.
fn nonempty(v: &[i32]) -> Cow<'_, [i32]> {
    if v.is_empty() {
        Cow::Owned(vec![0])
    } else {
        Cow::Borrowed(v)
    }
}

/// Numeric bin keys on the device: a row's n_nz, or SPLIT_KEY for a split row (more than
/// `split_at` products or more than `wide_at` entries).
fn numeric_keys(
    gpu: &Gpu,
    md: &super::device::Module,
    (m, sym): (usize, &Symbolic),
    split_at: i64,
    wide_at: i64,
    d_key: &mut CudaSlice<i64>,
) -> Result<()> {
    const SPLIT_KEY: i64 = i64::MAX / 4;
    if m == 0 {
        return Ok(());
    }
    let mi = m as i32;
    // SAFETY: arguments match num_keys; row_nnz, nprod and key hold m entries each.
    drv(
        unsafe {
            gpu.main
                .launch_builder(md.f("num_keys")?)
                .arg(&mi)
                .arg(&sym.d_row_nnz)
                .arg(&sym.d_nprod)
                .arg(&split_at)
                .arg(&wide_at)
                .arg(&SPLIT_KEY)
                .arg(d_key)
                .launch(cfg(m.div_ceil(256), 256, 0))
        },
        "num_keys",
    )?;
    Ok(())
}

/// Groups C's rows by n_nz for the numeric kernels.
#[allow(clippy::too_many_arguments)]
fn plan_numeric(
    gpu: &Arc<Gpu>,
    sym: Symbolic,
    k: usize,
    d_cptr: CudaSlice<i32>,
    nnz: usize,
    max_row_nnz: usize,
    value_bytes: usize,
    vt: crate::types::ValueType,
    a_entries: Range<usize>,
    sorted: bool,
) -> Result<(GpuPlan, u64)> {
    let s = &gpu.main;
    let m = d_cptr.len() - 1;
    let md = gpu.module(Source::Spgemm, vt)?;
    let mut d_key = drv(s.alloc_zeros::<i64>(m.max(1)), "alloc")?;
    // Split rows (more products than the symbolic phase's threshold, or the few rows too
    // wide for shared memory) get a key above every n_nz and a bin after the global rows.
    const SPLIT_KEY: i64 = i64::MAX / 4;
    let mut nbins = bins::numeric(gpu.smem_per_block, value_bytes);
    let shared_limit = nbins.last().map(|b| b.limit).unwrap_or(0);
    for limit in [SPLIT_KEY - 1, i64::MAX] {
        nbins.push(Bin {
            limit,
            tsize: 0,
            block: 1024,
            tpr: 1024,
        });
    }
    let split_at = sym.split_at.map_or(i64::MAX, |a| a as i64);
    numeric_keys(gpu, &md, (m, &sym), split_at, i64::MAX, &mut d_key)?;
    let (mut d_rows, mut sizes, mut offsets) = bin_rows(gpu, &md, &d_key, m, &nbins)?;
    let wide = sizes[sizes.len() - 2];
    let never = SPLIT_AT.load(std::sync::atomic::Ordering::Relaxed) == u64::MAX;
    if !never && wide > 0 && wide <= FEW_WIDE_ROWS_PER_SM * gpu.sm_count as usize {
        numeric_keys(gpu, &md, (m, &sym), split_at, shared_limit, &mut d_key)?;
        (d_rows, sizes, offsets) = bin_rows(gpu, &md, &d_key, m, &nbins)?;
    }
    nbins.pop();
    let nsplit = sizes.pop().unwrap_or(0);
    let split_offset = offsets.pop().unwrap_or(0);
    let split = if nsplit > 0 {
        let tsize = bins::split_tsize(max_row_nnz as u64);
        Some(NumericSplit {
            rows: nsplit,
            offset: split_offset,
            tsize,
            parts: bins::split_parts(sym.largest),
            d_nprod: sym.d_nprod,
            dense_cols: if split_dense(k, 4 + value_bytes, tsize) {
                k
            } else {
                0
            },
        })
    } else {
        None
    };
    let global_rows = *sizes.last().unwrap_or(&0);
    let widest = if split.is_some() && global_rows > 0 {
        // The longest row may be a split one: the global rows' own longest sizes their tables.
        let rows = d_rows.slice(offsets[sizes.len() - 1]..offsets[sizes.len() - 1] + global_rows);
        let mut out = drv(s.alloc_zeros::<u64>(1), "alloc")?;
        let n = global_rows as i32;
        // SAFETY: arguments match rows_max_key; `rows` holds n row numbers below m.
        drv(
            unsafe {
                s.launch_builder(md.f("rows_max_key")?)
                    .arg(&rows)
                    .arg(&n)
                    .arg(&d_key)
                    .arg(&mut out)
                    .launch(cfg(global_rows.div_ceil(256), 256, 0))
            },
            "rows_max_key",
        )?;
        drv(s.clone_dtoh(&out), "copy")?[0] as usize
    } else if split.is_none() && max_row_nnz as i64 > shared_limit {
        max_row_nnz
    } else {
        0
    };
    let global_tsize = (2 * widest).next_power_of_two();
    if global_tsize > i32::MAX as usize {
        return too_big("a global hash table", global_tsize);
    }
    // Dense rows for the global rows when B is narrow enough that emitting a row by a scan
    // over all k columns costs at most a few times its hash table (k <= 4 x 2 n_nz of the
    // widest row), and a dense row per block stays within the pool budget.
    let fits = k * (4 + value_bytes) <= POOL_BUDGET / 8;
    let dense = match GLOBAL_ROWS.load(std::sync::atomic::Ordering::Relaxed) {
        GLOBAL_HASH => false,
        GLOBAL_DENSE => fits,
        _ => fits && k <= 4 * global_tsize,
    };
    let global_dense_cols = if widest > 0 && dense { k } else { 0 };
    nbins.pop();
    let global_rows = sizes.pop().unwrap_or(0);
    let global_offset = offsets.pop().unwrap_or(0);
    // Keep the global rows' offset reachable as an extra entry after the shared bins.
    offsets.push(global_offset);
    drv(s.synchronize(), "synchronize")?;
    Ok((
        GpuPlan {
            gpu: gpu.clone(),
            a_ptr: sym.dev.a_ptr,
            a_col: sym.dev.a_col,
            b_ptr: sym.dev.b_ptr,
            b_col: sym.dev.b_col,
            c_ptr: d_cptr,
            num_rows: d_rows,
            num_bins: nbins,
            num_sizes: sizes,
            num_offsets: offsets,
            global_rows,
            global_tsize,
            global_dense_cols,
            value_bytes,
            symbolic_global_rows: sym.global_rows,
            split,
            rows: m,
            a_entries,
            nnz,
            sorted,
        },
        sym.flops,
    ))
}

/// A caller's device array used in place. cudarc frees a `CudaSlice` on drop; this
/// wrapper hands the slice back with `leak` instead, so the caller keeps ownership. The
/// only way a caller's device pointer reaches a kernel.
struct Borrowed<T> {
    slice: Option<CudaSlice<T>>,
}

impl<T> Borrowed<T> {
    /// # Safety
    /// `p` addresses `len` elements of `T` in device memory of the handle's context,
    /// valid while the wrapper lives.
    unsafe fn new(stream: &Arc<CudaStream>, p: DevicePtr, len: usize) -> Borrowed<T> {
        Borrowed {
            // SAFETY: per this function's contract; dropped through `leak` (never freed).
            slice: Some(unsafe { stream.upgrade_device_ptr(p.addr(), len) }),
        }
    }
    fn get(&self) -> &CudaSlice<T> {
        self.slice.as_ref().expect("present until dropped")
    }
    fn get_mut(&mut self) -> &mut CudaSlice<T> {
        self.slice.as_mut().expect("present until dropped")
    }
}

impl<T> Drop for Borrowed<T> {
    fn drop(&mut self) {
        if let Some(s) = self.slice.take() {
            let _caller_owned = s.leak();
        }
    }
}

/// A device buffer of ours or the caller's.
enum DevBuf<T> {
    Own(CudaSlice<T>),
    Caller(Borrowed<T>),
}

impl<T> DevBuf<T> {
    fn get(&self) -> &CudaSlice<T> {
        match self {
            DevBuf::Own(s) => s,
            DevBuf::Caller(b) => b.get(),
        }
    }
    fn get_mut(&mut self) -> &mut CudaSlice<T> {
        match self {
            DevBuf::Own(s) => s,
            DevBuf::Caller(b) => b.get_mut(),
        }
    }
}

/// Blocks for a grid-stride loop over `n` items.
fn stride_grid(gpu: &Gpu, n: usize) -> usize {
    n.div_ceil(256).clamp(1, 32 * gpu.sm_count as usize)
}

/// Launches the conversion of a caller's device index array (int32 or int64 / size_t) to
/// 0-based int32, each entry checked to lie in [sub, sub + hi); the first bad position
/// goes to `bad` (which the caller initialised to n). Nothing is synchronised here: the
/// caller reads all its checks back at once.
#[allow(clippy::too_many_arguments)]
fn index_from_caller(
    gpu: &Gpu,
    md: &super::device::Module,
    src: DevicePtr,
    ty: IndexType,
    n: usize,
    sub: usize,
    hi: usize,
    bad: &mut cudarc::driver::CudaViewMut<'_, u64>,
) -> Result<CudaSlice<i32>> {
    let s = &gpu.main;
    let mut out = drv(s.alloc_zeros::<i32>(n.max(1)), "alloc")?;
    if n == 0 {
        return Ok(out);
    }
    if src.is_null() {
        return err(
            Status::NullPointer,
            format!("a device array is NULL but {n} entries are needed"),
        );
    }
    let (nl, subl, hil) = (n as i64, sub as i64, hi as i64);
    let grid = stride_grid(gpu, n);
    match ty {
        IndexType::Int32 => {
            // SAFETY: the caller's descriptor promises n int32 entries at src.
            let inp = unsafe { Borrowed::<i32>::new(s, src, n) };
            // SAFETY: arguments match idx_from_i32; out and inp hold n entries.
            drv(
                unsafe {
                    s.launch_builder(md.f("idx_from_i32")?)
                        .arg(inp.get())
                        .arg(&nl)
                        .arg(&subl)
                        .arg(&hil)
                        .arg(&mut out)
                        .arg(bad)
                        .launch(cfg(grid, 256, 0))
                },
                "idx_from_i32",
            )?;
        }
        IndexType::Int64 | IndexType::SizeT => {
            // SAFETY: as above, 64-bit entries.
            let inp = unsafe { Borrowed::<i64>::new(s, src, n) };
            // SAFETY: arguments match idx_from_i64.
            drv(
                unsafe {
                    s.launch_builder(md.f("idx_from_i64")?)
                        .arg(inp.get())
                        .arg(&nl)
                        .arg(&subl)
                        .arg(&hil)
                        .arg(&mut out)
                        .arg(bad)
                        .launch(cfg(grid, 256, 0))
                },
                "idx_from_i64",
            )?;
        }
    }
    Ok(out)
}

/// A device descriptor's structure as 0-based int32 on the device, checked as
/// validation checks host arrays: offsets from base to base + nnz, never decreasing;
/// column indices in [base, base + ncols). All checks run before one read-back, and are
/// reported in that order.
fn structure_from_caller(
    gpu: &Gpu,
    md: &super::device::Module,
    name: &str,
    x: &DeviceCsr,
) -> Result<(CudaSlice<i32>, CudaSlice<i32>)> {
    let s = &gpu.main;
    let m = x.nrows;
    // First bad position of: the offsets' range, a decreasing offset, the columns' range.
    let mut bad = drv(
        s.clone_htod(&[(m + 1) as u64, m as u64, x.nnz as u64]),
        "copy",
    )?;
    let (ptr, col) = {
        let (mut bad_ptr, mut rest) = bad.split_at_mut(1);
        let (mut bad_order, mut bad_col) = rest.split_at_mut(1);
        let ptr = index_from_caller(
            gpu,
            md,
            x.row_offsets,
            x.offset_type,
            m + 1,
            x.base,
            x.nnz + 1,
            &mut bad_ptr,
        )?;
        if m > 0 {
            let mi = m as i32;
            // SAFETY: arguments match offsets_check; ptr holds m + 1 entries.
            drv(
                unsafe {
                    s.launch_builder(md.f("offsets_check")?)
                        .arg(&ptr)
                        .arg(&mi)
                        .arg(&mut bad_order)
                        .launch(cfg(stride_grid(gpu, m), 256, 0))
                },
                "offsets_check",
            )?;
        }
        let col = index_from_caller(
            gpu,
            md,
            x.col_indices,
            x.index_type,
            x.nnz,
            x.base,
            x.ncols,
            &mut bad_col,
        )?;
        (ptr, col)
    };
    let bad = drv(s.clone_dtoh(&bad), "copy")?;
    let mut ends = [0i32; 2];
    drv(s.memcpy_dtoh(&ptr.slice(0..1), &mut ends[..1]), "copy")?;
    drv(s.memcpy_dtoh(&ptr.slice(m..m + 1), &mut ends[1..]), "copy")?;
    drv(s.synchronize(), "synchronize")?;
    if (bad[0] as usize) < m + 1 {
        return err(
            Status::InvalidStructure,
            format!(
                "{name}: row_offsets[{}] is outside [{}, {}] (base .. base + nnz)",
                bad[0],
                x.base,
                x.base + x.nnz
            ),
        );
    }
    if ends[0] != 0 {
        return err(
            Status::InvalidStructure,
            format!(
                "{name}: row_offsets[0] = {}, expected the index base {}",
                ends[0] as usize + x.base,
                x.base
            ),
        );
    }
    if ends[1] as usize != x.nnz {
        return err(
            Status::InvalidStructure,
            format!(
                "{name}: row_offsets[{m}] = {} implies {} entries, but the descriptor says nnz = {}",
                ends[1] as usize + x.base,
                ends[1],
                x.nnz
            ),
        );
    }
    if (bad[1] as usize) < m {
        return err(
            Status::InvalidStructure,
            format!("{name}: row offsets decrease at row {}", bad[1]),
        );
    }
    if (bad[2] as usize) < x.nnz {
        return err(
            Status::IndexOutOfRange,
            format!(
                "{name}: the column index at position {} is outside [{}, {})",
                bad[2],
                x.base,
                x.base + x.ncols
            ),
        );
    }
    Ok((ptr, col))
}

/// Symbolic phase for A and B in device memory (checked by the caller: types, shapes,
/// sizes within 32-bit device indices). The structure is checked on the device.
pub fn symbolic_device(
    gpu: &Arc<Gpu>,
    a: &DeviceCsr,
    b: &DeviceCsr,
    sorted: bool,
) -> Result<GpuPart> {
    let md = gpu.module(Source::Spgemm, a.value_type)?;
    let timing = Timing::new(&gpu.main);
    let (a_ptr, a_col) = structure_from_caller(gpu, &md, "A", a)?;
    let (b_ptr, b_col) = structure_from_caller(gpu, &md, "B", b)?;
    timing.mark("symbolic: caller's device structure checked, as int32")?;
    let dev = DevStructure {
        a_ptr,
        a_col,
        b_ptr,
        b_col,
    };
    symbolic_part(
        gpu,
        dev,
        a.nrows,
        b.ncols,
        0..a.nnz,
        sorted,
        a.value_type,
        false,
        &timing,
    )
}

/// Symbolic phase of rows `rows` of A times B on the GPU (host inputs, validated when
/// `validated`), timed when `SPGEMM_CUDA_TIMING=1`. `host_offsets`: bring C's row offsets
/// back (a hybrid plan stitches them on the host).
pub fn symbolic_host<O: Idx, I: Idx, V: Scalar>(
    gpu: &Arc<Gpu>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: Range<usize>,
    vt: ValueType,
    (validated, sorted, host_offsets): (bool, bool, bool),
) -> Result<GpuPart> {
    let timing = Timing::new(&gpu.main);
    symbolic_rows(
        gpu,
        a,
        b,
        rows,
        vt,
        validated,
        sorted,
        host_offsets,
        &timing,
    )
}

/// Numeric phase of a GPU plan (or of the GPU's rows of a hybrid plan): takes the
/// values (uploading host ones), runs the bins (largest first, over several streams),
/// writes C to the host or the caller's device arrays. `format` gives C's index types
/// and base. Host outputs hold exactly this part's entries. Returns the seconds spent
/// writing C out after the kernels finished (the copy rate of hybrid splits).
pub fn numeric_part<V: Scalar>(
    g: &GpuPlan,
    format: OutputFormat,
    vin: ValuesIn<'_, V>,
    out: COut<'_, V>,
    reproducible: bool,
) -> Result<f64> {
    let gpu = &g.gpu;
    let s = &gpu.main;
    let timing = Timing::new(s);
    if std::mem::size_of::<V>() != g.value_bytes {
        return err(Status::TypeMismatch, "values differ from the plan's type");
    }
    let md = gpu.module(Source::Spgemm, V::KIND)?;
    let nnz = g.nnz;
    let vb = g.value_bytes;
    let want_vals = match &out {
        COut::Host { vals, .. } => vals.is_some(),
        COut::Device(d) => d.values.is_some(),
    };
    // Reproducible: one thread sums each row in order, and rows come out sorted (the
    // unsorted write-out's order depends on thread timing).
    let sorted = (g.sorted || reproducible) as i32;
    let det = reproducible as i32;
    let ent = g.a_entries.clone();
    let (d_aval, d_bval, has_vals): (DevBuf<u8>, DevBuf<u8>, i32) = match (want_vals, vin) {
        (true, ValuesIn::Host(Some(av), Some(bv))) if !ent.is_empty() && !bv.is_empty() => (
            DevBuf::Own(drv(
                s.clone_htod(as_bytes(&av[ent.clone()])),
                "copy A values",
            )?),
            DevBuf::Own(drv(s.clone_htod(as_bytes(bv)), "copy B values")?),
            1,
        ),
        (true, ValuesIn::Device(Some(av), Some(bv))) if !ent.is_empty() => {
            let b_len = g.b_col.len();
            // SAFETY: the descriptors promise nnz values of V at each address; the plan's
            // entries of A lie within A's (checked against the plan's shape).
            unsafe {
                (
                    DevBuf::Caller(Borrowed::new(s, av.offset(ent.start * vb), ent.len() * vb)),
                    DevBuf::Caller(Borrowed::new(s, bv, b_len * vb)),
                    1,
                )
            }
        }
        (true, ValuesIn::Host(a, b)) if a.is_none() || b.is_none() => {
            return err(
                Status::InvalidValue,
                "A or B has no values (pattern-only descriptor)",
            );
        }
        (true, ValuesIn::Device(a, b)) if a.is_none() || b.is_none() => {
            return err(
                Status::InvalidValue,
                "A or B has no values (pattern-only device descriptor)",
            );
        }
        // No values wanted, or A or B without entries (then C has none): the kernels get
        // one-element stand-ins and must not read them (A's entries run past the stand-in).
        _ => (
            DevBuf::Own(drv(s.alloc_zeros::<u8>(vb), "alloc")?),
            DevBuf::Own(drv(s.alloc_zeros::<u8>(vb), "alloc")?),
            0,
        ),
    };
    // C's columns go straight into a caller's int32 0-based device array; otherwise into
    // ours, converted afterwards. Values go straight into a caller's device array.
    let direct_cols = matches!(out, COut::Device(_))
        && format.indices == IndexType::Int32
        && format.base == 0
        && nnz > 0;
    let mut d_ccol: DevBuf<i32> = match (&out, direct_cols) {
        // SAFETY: the caller promises nnz(C) int32 entries at col_indices.
        (COut::Device(d), true) => DevBuf::Caller(unsafe {
            Borrowed::new(s, non_null(d.col_indices, "c_col_indices")?, nnz)
        }),
        _ => DevBuf::Own(drv(s.alloc_zeros::<i32>(nnz.max(1)), "alloc C")?),
    };
    let mut d_cval: DevBuf<u8> = match &out {
        COut::Device(DeviceOut {
            values: Some(v), ..
        }) if nnz > 0 => {
            // SAFETY: the caller promises nnz(C) values of V at `v`.
            DevBuf::Caller(unsafe { Borrowed::new(s, non_null(*v, "c_values")?, nnz * vb) })
        }
        _ => DevBuf::Own(drv(
            s.alloc_zeros::<u8>(if has_vals == 1 { nnz * vb } else { 0 }.max(vb)),
            "alloc C",
        )?),
    };
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
                    .arg(d_aval.get())
                    .arg(&g.b_ptr)
                    .arg(&g.b_col)
                    .arg(d_bval.get())
                    .arg(&g.c_ptr)
                    .arg(d_ccol.get_mut())
                    .arg(d_cval.get_mut())
                    .arg(&sorted)
                    .arg(&has_vals)
                    .arg(&det)
                    .launch(cfg(grid, bin.block, bins::numeric_smem(bin, vb)))
            },
            "num_shared",
        )?;
        timing.bin(st, "num_shared", sizes[bi], bin.tsize)?;
    }
    let mut pools = None;
    if g.global_rows > 0 {
        // Rows above the last shared bin: one pool chunk per resident block, rows pulled
        // from a counter; a dense row of B's k columns or a hash table per chunk.
        let st = &gpu.side[0];
        let dense = g.global_dense_cols > 0;
        let slots = if dense {
            g.global_dense_cols
        } else {
            g.global_tsize
        };
        let blocks = pool_blocks(gpu, g.global_rows, slots * (4 + vb));
        // SAFETY (dense): uninitialised pools; num_dense clears its chunk before use. The
        // hash kernel expects empty tables, so its pools are zeroed.
        let (kp, vp) = if dense {
            let kp = drv(unsafe { st.alloc::<i32>(blocks * slots) }, "alloc pool")?;
            let vp = drv(unsafe { st.alloc::<u8>(blocks * slots * vb) }, "alloc pool")?;
            (kp, vp)
        } else {
            let kp = drv(st.alloc_zeros::<i32>(blocks * slots), "alloc pool")?;
            let vp = drv(st.alloc_zeros::<u8>(blocks * slots * vb), "alloc pool")?;
            (kp, vp)
        };
        let next = drv(st.alloc_zeros::<i32>(1), "alloc")?;
        let off = *g.num_offsets.last().unwrap_or(&0);
        let rows = g.num_rows.slice(off..off + g.global_rows);
        let (n, si) = (g.global_rows as i32, slots as i32);
        let kernel = if dense { "num_dense" } else { "num_global" };
        let mut launch = st.launch_builder(md.f(kernel)?);
        launch
            .arg(&rows)
            .arg(&n)
            .arg(&si)
            .arg(&g.a_ptr)
            .arg(&g.a_col)
            .arg(d_aval.get())
            .arg(&g.b_ptr)
            .arg(&g.b_col)
            .arg(d_bval.get())
            .arg(&g.c_ptr)
            .arg(d_ccol.get_mut())
            .arg(d_cval.get_mut());
        if !dense {
            launch.arg(&sorted); // num_dense's rows come out in column order either way
        }
        launch.arg(&has_vals).arg(&kp).arg(&vp).arg(&next).arg(&det);
        // SAFETY: arguments match num_dense / num_global (the only difference is
        // num_global's `sorted`); the pools hold `blocks` chunks of `slots`.
        drv(unsafe { launch.launch(cfg(blocks, 1024, 0)) }, kernel)?;
        timing.bin(st, kernel, g.global_rows, slots as u32)?;
        pools = Some((kp, vp, next));
    }
    if let Some(sp) = &g.split {
        // On the main stream, beside the bins on the side streams.
        numeric_split(
            gpu,
            &md,
            g,
            sp,
            (d_aval.get(), d_bval.get(), has_vals),
            (d_ccol.get_mut(), d_cval.get_mut()),
            det,
        )?;
        timing.bin(s, "num_split", sp.rows, sp.tsize as u32)?;
    }
    join_side(gpu)?;
    drv(s.synchronize(), "synchronize")?;
    timing.mark("numeric kernels")?;
    let copy_start = std::time::Instant::now();
    let base = format.base;
    match out {
        COut::Host { cols, vals } => {
            // Straight into the caller's arrays: a staging copy costs a second pass over C
            // and page faults on a fresh buffer.
            if cols.len() != nnz {
                return err(
                    Status::Internal,
                    format!("C part: {} column slots for {nnz} entries", cols.len()),
                );
            }
            if nnz > 0 {
                match cols {
                    IndexSliceMut::I32(c) => {
                        drv(s.memcpy_dtoh(&d_ccol.get().slice(0..nnz), c), "copy C")?;
                        drv(s.synchronize(), "synchronize")?;
                        if base != 0 {
                            c.par_iter_mut().for_each(|x| *x += base as i32);
                        }
                    }
                    IndexSliceMut::I64(c) => {
                        let ccol = drv(s.clone_dtoh(&d_ccol.get().slice(0..nnz)), "copy C")?;
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
                // SAFETY: V is plain data (the GPU is only given f32 and f64); the caller's
                // buffer holds nnz values.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), nnz * vb)
                };
                drv(
                    s.memcpy_dtoh(&d_cval.get().slice(0..nnz * vb), dst),
                    "copy C",
                )?;
            }
        }
        COut::Device(d) => {
            if nnz > 0 && !direct_cols {
                let dst = non_null(d.col_indices, "c_col_indices")?;
                to_caller(gpu, &md, d_ccol.get(), nnz, base, format.indices, dst)?;
            }
            if let Some(p) = d.row_offsets {
                let dst = non_null(p, "c_row_offsets")?;
                to_caller(gpu, &md, &g.c_ptr, g.rows + 1, base, format.offsets, dst)?;
            }
        }
    }
    drv(s.synchronize(), "synchronize")?;
    let copy_seconds = copy_start.elapsed().as_secs_f64();
    timing.mark("C written")?;
    drop(pools);
    Ok(copy_seconds)
}

/// The split rows of a numeric call, in batches whose tables fit SPLIT_BUDGET: tables
/// cleared, products added by `parts` blocks per row, then each row condensed, sorted and
/// written by one block.
fn numeric_split(
    gpu: &Gpu,
    md: &super::device::Module,
    g: &GpuPlan,
    sp: &NumericSplit,
    (a_val, b_val, has_vals): (&CudaSlice<u8>, &CudaSlice<u8>, i32),
    (c_col, c_val): (&mut CudaSlice<i32>, &mut CudaSlice<u8>),
    det: i32,
) -> Result<()> {
    if sp.dense_cols > 0 {
        return numeric_split_dense(
            gpu,
            md,
            g,
            sp,
            (a_val, b_val, has_vals),
            (c_col, c_val),
            det,
        );
    }
    let s = &gpu.main;
    let vb = g.value_bytes;
    let ts = sp.tsize;
    if ts > i32::MAX as usize {
        return too_big("a split row's hash table", ts);
    }
    let batch = bins::split_batch(ts, 4 + vb).min(sp.rows);
    // SAFETY: split_clear fills both pools before any kernel reads them.
    let mut keys = drv(unsafe { s.alloc::<i32>(batch * ts) }, "alloc split tables")?;
    let mut vals = drv(
        unsafe { s.alloc::<u8>(batch * ts * vb) },
        "alloc split tables",
    )?;
    let (ti, pi) = (ts as i32, sp.parts as i32);
    let parts = if det != 0 { 1 } else { sp.parts as usize };
    let pi = if det != 0 { 1 } else { pi };
    for start in (0..sp.rows).step_by(batch) {
        let nb = batch.min(sp.rows - start);
        let rows = g.num_rows.slice(sp.offset + start..sp.offset + start + nb);
        let (nbi, slots) = (nb as i32, (nb * ts) as i64);
        // SAFETY: arguments match split_clear, num_split_acc and num_split_out; the pools
        // hold `batch` tables of ts slots, `rows` nb rows of C, the value arrays the plan's
        // entries of A and B (or stand-ins with has_vals = 0), C nnz entries.
        unsafe {
            drv(
                s.launch_builder(md.f("split_clear")?)
                    .arg(&slots)
                    .arg(&mut keys)
                    .arg(&mut vals)
                    .arg(&has_vals)
                    .launch(cfg(fill_grid(gpu, nb * ts), 256, 0)),
                "split_clear",
            )?;
            drv(
                s.launch_builder(md.f("num_split_acc")?)
                    .arg(&rows)
                    .arg(&nbi)
                    .arg(&pi)
                    .arg(&ti)
                    .arg(&g.a_ptr)
                    .arg(&g.a_col)
                    .arg(a_val)
                    .arg(&g.b_ptr)
                    .arg(&g.b_col)
                    .arg(b_val)
                    .arg(&sp.d_nprod)
                    .arg(&g.c_ptr)
                    .arg(&has_vals)
                    .arg(&mut keys)
                    .arg(&mut vals)
                    .arg(&det)
                    .launch(cfg(nb * parts, bins::SPLIT_BLOCK, 0)),
                "num_split_acc",
            )?;
            drv(
                s.launch_builder(md.f("num_split_out")?)
                    .arg(&rows)
                    .arg(&nbi)
                    .arg(&ti)
                    .arg(&g.c_ptr)
                    .arg(&mut *c_col)
                    .arg(&mut *c_val)
                    .arg(&has_vals)
                    .arg(&mut keys)
                    .arg(&mut vals)
                    .launch(cfg(nb, 1024, 0)),
                "num_split_out",
            )?;
        }
    }
    Ok(())
}

/// The split rows of a numeric call on dense rows of B's k columns: cleared, products
/// added by `parts` blocks per row, then written in column order by blocks of
/// DENSE_RUN * 1024 columns (a count pass, then the write placing each block after the
/// row's earlier ones).
fn numeric_split_dense(
    gpu: &Gpu,
    md: &super::device::Module,
    g: &GpuPlan,
    sp: &NumericSplit,
    (a_val, b_val, has_vals): (&CudaSlice<u8>, &CudaSlice<u8>, i32),
    (c_col, c_val): (&mut CudaSlice<i32>, &mut CudaSlice<u8>),
    det: i32,
) -> Result<()> {
    const COLS_PER_BLOCK: usize = 8 * 1024; // DENSE_RUN x 1024 threads
    let s = &gpu.main;
    let vb = g.value_bytes;
    let k = sp.dense_cols;
    let batch = bins::split_batch(k, 4 + vb).min(sp.rows);
    let chunks = k.div_ceil(COLS_PER_BLOCK);
    // SAFETY: split_dense_clear fills both pools before any kernel reads them; the chunk
    // counts are written by split_dense_count before split_dense_emit reads them.
    let mut flags = drv(unsafe { s.alloc::<i32>(batch * k) }, "alloc split rows")?;
    let mut vals = drv(unsafe { s.alloc::<u8>(batch * k * vb) }, "alloc split rows")?;
    let mut counts = drv(unsafe { s.alloc::<i32>(batch * chunks) }, "alloc")?;
    let parts = if det != 0 { 1 } else { sp.parts as usize };
    let (pi, ki, ci) = (parts as i32, k as i32, chunks as i32);
    for start in (0..sp.rows).step_by(batch) {
        let nb = batch.min(sp.rows - start);
        let rows = g.num_rows.slice(sp.offset + start..sp.offset + start + nb);
        let (nbi, slots) = (nb as i32, (nb * k) as i64);
        // SAFETY: arguments match split_dense_clear/acc/count/emit; the pools hold `batch`
        // rows of k flags and k values, `counts` batch x chunks entries, `rows` nb rows of
        // C, the value arrays the plan's entries of A and B (or stand-ins with
        // has_vals = 0), C nnz entries.
        unsafe {
            drv(
                s.launch_builder(md.f("split_dense_clear")?)
                    .arg(&slots)
                    .arg(&mut flags)
                    .arg(&mut vals)
                    .arg(&has_vals)
                    .launch(cfg(fill_grid(gpu, nb * k), 256, 0)),
                "split_dense_clear",
            )?;
            drv(
                s.launch_builder(md.f("split_dense_acc")?)
                    .arg(&rows)
                    .arg(&nbi)
                    .arg(&pi)
                    .arg(&ki)
                    .arg(&g.a_ptr)
                    .arg(&g.a_col)
                    .arg(a_val)
                    .arg(&g.b_ptr)
                    .arg(&g.b_col)
                    .arg(b_val)
                    .arg(&sp.d_nprod)
                    .arg(&has_vals)
                    .arg(&mut flags)
                    .arg(&mut vals)
                    .arg(&det)
                    .launch(cfg(nb * parts, bins::SPLIT_BLOCK, 0)),
                "split_dense_acc",
            )?;
            drv(
                s.launch_builder(md.f("split_dense_count")?)
                    .arg(&nbi)
                    .arg(&ci)
                    .arg(&ki)
                    .arg(&flags)
                    .arg(&mut counts)
                    .launch(cfg(nb * chunks, 1024, 0)),
                "split_dense_count",
            )?;
            drv(
                s.launch_builder(md.f("split_dense_emit")?)
                    .arg(&rows)
                    .arg(&nbi)
                    .arg(&ci)
                    .arg(&ki)
                    .arg(&flags)
                    .arg(&vals)
                    .arg(&counts)
                    .arg(&g.c_ptr)
                    .arg(&mut *c_col)
                    .arg(&mut *c_val)
                    .arg(&has_vals)
                    .launch(cfg(nb * chunks, 1024, 0)),
                "split_dense_emit",
            )?;
        }
    }
    Ok(())
}

fn non_null(p: DevicePtr, what: &str) -> Result<DevicePtr> {
    if p.is_null() {
        return err(Status::NullPointer, format!("{what} is NULL"));
    }
    Ok(p)
}

/// 0-based int32 indices of ours into a caller's device array of type `ty`, plus `base`.
fn to_caller(
    gpu: &Gpu,
    md: &super::device::Module,
    src: &CudaSlice<i32>,
    n: usize,
    base: usize,
    ty: IndexType,
    dst: DevicePtr,
) -> Result<()> {
    let s = &gpu.main;
    let wide = (ty != IndexType::Int32) as i32;
    let esize = if wide == 1 { 8 } else { 4 };
    // SAFETY: the caller promises n entries of `ty` at dst.
    let mut out = unsafe { Borrowed::<u8>::new(s, dst, n * esize) };
    let (nl, bi) = (n as i64, base as i32);
    // SAFETY: arguments match idx_to_caller; `out` holds n entries of its width.
    drv(
        unsafe {
            s.launch_builder(md.f("idx_to_caller")?)
                .arg(src)
                .arg(&nl)
                .arg(&bi)
                .arg(out.get_mut())
                .arg(&wide)
                .launch(cfg(stride_grid(gpu, n), 256, 0))
        },
        "idx_to_caller",
    )?;
    Ok(())
}

/// Phase times of a numeric call, printed to stderr when SPGEMM_CUDA_TIMING=1 (for
/// docs/GPU.md; each mark synchronises the stream).
pub struct Timing<'s> {
    stream: Option<&'s CudaStream>,
    last: std::cell::Cell<std::time::Instant>,
}

impl<'s> Timing<'s> {
    pub fn new(stream: &'s CudaStream) -> Self {
        let on = std::env::var("SPGEMM_CUDA_TIMING").is_ok_and(|v| v == "1");
        Timing {
            stream: on.then_some(stream),
            last: std::cell::Cell::new(std::time::Instant::now()),
        }
    }
    /// With timing on, waits for `st` and reports one bin's kernel (rows, table size).
    pub fn bin(&self, st: &CudaStream, what: &str, rows: usize, tsize: u32) -> Result<()> {
        if self.stream.is_some() {
            let t0 = self.last.get();
            drv(st.synchronize(), "synchronize")?;
            eprintln!(
                "spgemm cuda bin: {what}: {rows} rows, table {tsize}: {:.3} ms since the last mark",
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(())
    }
    pub fn mark(&self, what: &str) -> Result<()> {
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
