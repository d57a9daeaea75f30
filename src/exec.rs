//! Execution layer: checks a product against its plan, picks the algorithm and runs the
//! CPU kernels on the handle's pool. Entry points take type-erased matrices and reach the
//! generic kernels through `dispatch_pair`.

use rayon::prelude::*;

use crate::alloc::try_filled;
use crate::cpu::compress;
use crate::cpu::dense;
use crate::cpu::gustavson::{self, AccKind};
use crate::cpu::partition::{balanced_chunks, flop_profile};
use crate::cpu::row_groups::RowGroups;
use crate::csr::{AnyCsr, CsrRef, FromAny, PairOp, dispatch_pair};
use crate::error::{Error, Result, Status, err};
use crate::handle::{Algorithm, Handle};
use crate::output::{
    IndexSliceMut, IndexVec, OffsetSliceMut, OffsetVec, OwnedCsr, ValueSliceMut, ValueVec,
};
use crate::plan::{InputShape, OutputFormat, Plan};
use crate::types::{Idx, IndexType, Scalar};

/// The paper's cut-off between KKDENSE and KKMEM (kept for reference; the selector
/// below decides from this machine's caches instead).
pub const DENSE_MAX_COLS: usize = 250_000;

/// Cache sizes of this machine (bytes), read once from sysfs; typical values otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Caches {
    pub l1d: usize,
    pub l2: usize,
    pub l3: usize,
}

fn read_caches() -> Caches {
    let mut c = Caches {
        l1d: 32 << 10,
        l2: 1 << 20,
        l3: 16 << 20,
    };
    for idx in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{idx}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let size = size.trim();
        let bytes = match size.strip_suffix('K') {
            Some(n) => n.parse::<usize>().ok().map(|n| n << 10),
            None => match size.strip_suffix('M') {
                Some(n) => n.parse::<usize>().ok().map(|n| n << 20),
                None => size.parse().ok(),
            },
        };
        let Some(bytes) = bytes else { continue };
        match (level.trim(), kind.trim()) {
            ("1", "Data") => c.l1d = bytes,
            ("2", _) => c.l2 = bytes,
            ("3", _) => c.l3 = bytes,
            _ => {}
        }
    }
    c
}

pub fn caches() -> Caches {
    static C: std::sync::OnceLock<Caches> = std::sync::OnceLock::new();
    *C.get_or_init(read_caches)
}

/// What the selector looks at.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Columns of C.
    pub k: usize,
    /// Rows of C.
    pub m: usize,
    pub flops: u64,
    pub max_row_flops: u64,
    /// Symbolic insertions after compression (equal to `flops` when not compressed).
    pub sym_inserts: u64,
    /// Bytes per value.
    pub value_bytes: usize,
    /// Worker threads.
    pub threads: usize,
    /// High-bandwidth memory holding every worker's accumulators (None: ordinary memory).
    pub hbm: Option<crate::topo::HbmBudget>,
}

/// Symbolic phase (bit sets, section 3.2): the dense bit map costs k/8 bytes per thread
/// and a popcount per touched word; it wins while it stays in the private L2 cache.
/// Beyond, KKLP (measured faster than KKMEM for bit-set keys on every test input). An
/// explicit choice is honoured (the dense bit map has no column limit: words are u32
/// only in the compressed B, which is skipped when they would not fit).
pub fn select_symbolic(requested: Algorithm, k: usize) -> Algorithm {
    match requested {
        Algorithm::Auto => {
            if k.div_ceil(8) <= caches().l2 {
                Algorithm::Dense
            } else {
                Algorithm::LinearProbe
            }
        }
        alg => alg,
    }
}

/// Numeric phase: the dense accumulator ([`crate::cpu::dense`]) touches a 4-byte slot
/// per column of C; the hash maps touch a table sized by the row. Measured on the
/// benchmark inputs (k up to 500,000, 1 and 2 threads), dense won on every one while all
/// threads' slot arrays fit in the shared L3; beyond, KKMEM (the better hash map for
/// numeric rows on most inputs). An explicit choice is honoured.
pub fn select_numeric(requested: Algorithm, f: &Features) -> Result<Algorithm> {
    let dense_ok = f.k <= u32::MAX as usize;
    match requested {
        Algorithm::Auto => {
            let dense_bytes = f.k.saturating_mul(4).saturating_mul(f.threads);
            Ok(
                if dense_ok && dense_bytes <= dense_numeric_budget(&caches(), f) {
                    Algorithm::Dense
                } else {
                    Algorithm::LinkedList
                },
            )
        }
        Algorithm::Dense if !dense_ok => err(
            Status::NotSupported,
            format!(
                "the dense accumulator needs at most 2^32-1 columns in C, B has {}",
                f.k
            ),
        ),
        alg => Ok(alg),
    }
}

/// Both phases' choices (see [`select_symbolic`] and [`select_numeric`]).
pub fn select(requested: Algorithm, f: &Features) -> Result<(Algorithm, Algorithm)> {
    Ok((
        select_symbolic(requested, f.k),
        select_numeric(requested, f)?,
    ))
}

/// Symbolic phase with a hash accumulator: compressed row lengths of B and the flop
/// profile in one pass over A, the paper's two-step compression decision on the exact
/// compressed f_m, then the count. Returns the counts, whether B was compressed and the
/// symbolic insertions.
fn hash_symbolic<O: Idx, I: Idx, V: Scalar>(
    h: &Handle,
    alg: Algorithm,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<(dense::Counted, bool, u64)> {
    let k = b.ncols();
    let m = a.nrows();
    let clens = compress::compressed_lengths(b)?;
    let profile = flop_profile(a, b, clens.as_deref())?;
    let flops = profile.total();
    let compressed = match (&clens, profile.compressed) {
        (Some(_), Some(cf)) if (cf as f64) < (1.0 - compress::MIN_GAIN) * flops as f64 => {
            compress::compress_rows(b)?
        }
        _ => None,
    };
    drop(clens);
    let sym_inserts = profile
        .compressed
        .filter(|_| compressed.is_some())
        .unwrap_or(flops);
    let chunks = balanced_chunks(&profile.prefix, h.threads());
    let mut row_ptr = try_filled(m + 1, 0usize, "row offsets of C")?;
    gustavson::symbolic(
        &h.workspace,
        acc_kind(alg),
        a,
        b,
        compressed.as_ref(),
        &chunks,
        &profile.prefix,
        profile.max_row.min(k as u64) as usize,
        &mut row_ptr[1..],
    )?;
    let max_row_nnz = row_ptr[1..].par_iter().copied().max().unwrap_or(0);
    // The sum cannot overflow usize: each row count is at most its flops, and the flops
    // were summed in u64 without overflow.
    for i in 0..m {
        row_ptr[i + 1] += row_ptr[i];
    }
    Ok((
        dense::Counted {
            row_ptr,
            flops,
            chunks,
            max_row_flops: profile.max_row,
            max_row_nnz,
        },
        compressed.is_some(),
        sym_inserts,
    ))
}

/// Bytes the numeric dense accumulators of all workers may take for `select` to pick
/// KKDENSE: normally the shared L3 cache.
///
/// When every worker's chunk sits in high-bandwidth memory (`f.hbm`: KNL's MCDRAM in flat
/// mode, HBM parts), dense arrays need not stay in cache to win: the KokkosKernels paper
/// (section 4.2) finds KKDENSE best below k = 250,000 on KNL's DDR and also beyond that on
/// MCDRAM, since its scattered accesses are bandwidth-bound. So the paper's DDR cut-off
/// ([`DENSE_MAX_COLS`]) scaled by the HBM/DDR bandwidth ratio bounds k, and all workers'
/// arrays may take at most an eighth of the HBM (the rest is for C and temporaries).
/// Derived from the paper and the topology, not measured: no such machine was available.
pub fn dense_numeric_budget(c: &Caches, f: &Features) -> usize {
    let Some(h) = f.hbm else {
        return c.l3;
    };
    let cols = (DENSE_MAX_COLS as f64 * h.bandwidth_ratio.max(1.0)) as usize;
    // The dense numeric kernel keeps a 4-byte slot per column (src/cpu/dense.rs).
    let by_bandwidth = cols.saturating_mul(4).saturating_mul(f.threads.max(1));
    let by_capacity = match usize::try_from(h.capacity / 8) {
        Ok(0) => usize::MAX,
        Ok(b) => b,
        Err(_) => usize::MAX,
    };
    c.l3.max(by_bandwidth.min(by_capacity))
}

/// The dense numeric kernel keeps a value per column of C instead of a slot
/// ([`crate::cpu::dense::fill_rows_by_value`]) from this many multiplications per entry
/// of C on. Measured at 2 threads (first numeric call, against the slot kernel): 15-20%
/// faster on `sa_elast` A*P (33 per entry) and R*AP (118); 10-25% slower on
/// `sa_poisson` A*P (5.7), `banded_500k_7` (7.5) and `er_uniform_200k` (2), where the
/// 8-byte values take three times the cache of the slots and few products share an
/// entry; even on `sa_poisson` R*AP (17).
const BY_VALUE_MIN_PRODUCTS: u64 = 24;

/// The numeric kernel for `plan`'s algorithm and shape (`k` columns of C, values of
/// `value_bytes`, `threads` workers): the value kernel needs a 4-byte mark and a value per
/// column and thread, so it is taken only while those fit in the L3 budget as the
/// slots do for [`select_numeric`].
fn numeric_kind(plan: &Plan, k: usize, value_bytes: usize, threads: usize) -> AccKind {
    let many_products = plan.flops >= BY_VALUE_MIN_PRODUCTS.saturating_mul(plan.nnz() as u64);
    let bytes = k
        .saturating_mul(4 + value_bytes)
        .saturating_mul(threads.max(1));
    match acc_kind(plan.numeric_alg) {
        AccKind::Dense if many_products && bytes <= caches().l3 => AccKind::DenseByValue,
        kind => kind,
    }
}

fn acc_kind(alg: Algorithm) -> AccKind {
    match alg {
        Algorithm::Dense => AccKind::Dense,
        Algorithm::LinkedList | Algorithm::Auto => AccKind::Linked,
        Algorithm::LinearProbe => AccKind::Probe,
    }
}

/// A*B is defined (A's columns equal B's rows) and C's format can hold its columns.
pub(crate) fn check_product<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    format: &OutputFormat,
) -> Result<()> {
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
    check_format(format, b.ncols())
}

pub(crate) fn check_format(format: &OutputFormat, k: usize) -> Result<()> {
    if format.base > 1 {
        return err(
            Status::InvalidValue,
            format!("C: index base {} is not 0 or 1", format.base),
        );
    }
    if format.indices == IndexType::SizeT {
        return err(
            Status::InvalidValue,
            "C: size_t column indices are not supported (use int32 or int64)",
        );
    }
    if k > 0 && k - 1 + format.base > format.indices.max_usize() {
        return err(
            Status::IndexOverflow,
            format!(
                "C: {k} columns cannot be addressed by {} column indices",
                format.indices.name()
            ),
        );
    }
    Ok(())
}

struct SymbolicOp<'h> {
    handle: &'h Handle,
    format: OutputFormat,
}

impl PairOp for SymbolicOp<'_> {
    type Out = Plan;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Plan>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let h = self.handle;
        check_product(&a, &b, &self.format)?;
        let k = b.ncols();
        if h.options.algorithm == Algorithm::Dense && k > u32::MAX as usize {
            return err(
                Status::NotSupported,
                format!("the dense accumulator needs at most 2^32-1 columns in C, B has {k}"),
            );
        }
        h.install(|| {
            let m = a.nrows();
            let digests = if h.options.validate {
                let da = a.validate_and_digest("A")?;
                let db = if same_structure(&a, &b) {
                    da
                } else {
                    b.validate_and_digest("B")?
                };
                Some((da, db))
            } else {
                None
            };
            let threads = h.threads();
            let symbolic_alg = select_symbolic(h.options.algorithm, k);
            let value_bytes = std::mem::size_of::<V>();
            let groups = RowGroups::detect(&a)?;
            let prefetch = crate::cpu::prefetch::worth_it(&a, &b, caches().l2);
            let (mut counted, compressed, sym_inserts) = if symbolic_alg == Algorithm::Dense {
                // Flops and row sizes in one pass; compression decided from a sample.
                let est = compress::estimate(&a, &b);
                let cb = match est {
                    Some(e) if e.pays(b.nnz()) => compress::compress_rows(&b)?,
                    _ => None,
                };
                let counted = dense::symbolic(
                    &h.workspace,
                    &a,
                    &b,
                    cb.as_ref(),
                    groups.as_ref(),
                    threads,
                    prefetch,
                )?;

                let inserts = match (&cb, est) {
                    (Some(_), Some(e)) => e.compressed as u64,
                    _ => counted.flops,
                };
                (counted, cb.is_some(), inserts)
            } else {
                hash_symbolic(h, symbolic_alg, &a, &b)?
            };
            if let Some(g) = &groups {
                g.align(&mut counted.chunks);
            }
            let flops = counted.flops;
            let features = Features {
                k,
                m,
                flops,
                max_row_flops: counted.max_row_flops,
                sym_inserts,
                value_bytes,
                threads,
                hbm: h.hbm_budget(),
            };
            let numeric_alg = select_numeric(h.options.algorithm, &features)?;
            let dense::Counted {
                row_ptr,
                chunks,
                max_row_flops,
                max_row_nnz,
                ..
            } = counted;
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
            Ok(Plan {
                shape: InputShape {
                    sig: a_sig::<O, I, V>(),
                    a_nrows: a.nrows(),
                    a_ncols: a.ncols(),
                    b_ncols: b.ncols(),
                    a_nnz: a.nnz(),
                    b_nnz: b.nnz(),
                    a_base: a.base(),
                    b_base: b.base(),
                },
                digests,
                format: self.format,
                row_ptr,
                chunks,
                flops,
                max_row_flops,
                max_row_nnz,
                symbolic_alg,
                numeric_alg,
                sorted: h.options.sorted_output,
                gpu: None,
                compressed,
                reuse: Default::default(),
                split: None,
                hybrid: None,
                row_groups: groups,
                prefetch,
            })
        })
    }
}

/// Whether two views denote the same arrays (A*A): one validation and digest suffice.
fn same_structure<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> bool {
    a.nrows() == b.nrows()
        && a.ncols() == b.ncols()
        && a.base() == b.base()
        && std::ptr::eq(a.row_offsets(), b.row_offsets())
        && std::ptr::eq(a.col_indices(), b.col_indices())
}

pub(crate) fn a_sig<O: Idx, I: Idx, V: Scalar>() -> crate::csr::TypeSig {
    crate::csr::TypeSig {
        offsets: O::KIND,
        indices: I::KIND,
        values: V::KIND,
    }
}

/// Symbolic phase: the structure of C = A*B, as a reusable plan.
pub fn symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    guarded(handle, &[("A", a), ("B", b)], || {
        symbolic_unguarded(handle, a, b, format)
    })
}

fn symbolic_unguarded(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    if let Some(r) = crate::cuda::try_symbolic(handle, a, b, format) {
        return r;
    }
    let mut plan = symbolic_cpu(handle, a, b, format)?;
    // Hybrid asked for but run on the CPU alone: the plan says why.
    crate::cuda::note_cpu_only(handle, &mut plan);
    Ok(plan)
}

/// Symbolic phase on the CPU, whatever the backend (the CPU part of a hybrid plan).
pub(crate) fn symbolic_cpu(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    dispatch_pair(a, b, SymbolicOp { handle, format })
}

/// Writes C's row offsets (in the plan's format) into `out` (length m + 1).
pub fn write_row_offsets(plan: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
    fn fill<T: Idx>(row_ptr: &[usize], base: usize, out: &mut [T]) -> Result<()> {
        if out.len() != row_ptr.len() {
            return err(
                Status::InvalidValue,
                format!(
                    "C: row offsets array has {} entries, expected {}",
                    out.len(),
                    row_ptr.len()
                ),
            );
        }
        // Range checked at symbolic time (nnz + base fits T).
        out.par_iter_mut()
            .zip(row_ptr.par_iter())
            .with_min_len(4096)
            .for_each(|(o, &r)| {
                *o = T::try_from_usize(r + base).expect("checked at symbolic time")
            });
        Ok(())
    }
    let base = plan.format.base;
    // A GPU plan keeps C's row offsets on the device only.
    let from_device;
    let row_ptr = match &plan.gpu {
        Some(g) if plan.row_ptr.is_empty() => {
            from_device = crate::cuda::gpu_plan_row_offsets(g)?;
            &from_device
        }
        _ => &plan.row_ptr,
    };
    match out {
        OffsetSliceMut::I32(o) if plan.format.offsets == IndexType::Int32 => fill(row_ptr, base, o),
        OffsetSliceMut::I64(o) if plan.format.offsets == IndexType::Int64 => fill(row_ptr, base, o),
        OffsetSliceMut::U64(o) if plan.format.offsets == IndexType::SizeT => fill(row_ptr, base, o),
        _ => err(
            Status::TypeMismatch,
            "C: row offsets type differs from the plan's",
        ),
    }
}

/// Checks that A and B have the shape, types and (when validating) structure of the plan.
fn check_against_plan<O: Idx, I: Idx, V: Scalar>(
    h: &Handle,
    plan: &Plan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<()> {
    let s = &plan.shape;
    if a_sig::<O, I, V>() != s.sig {
        return err(
            Status::TypeMismatch,
            format!(
                "inputs have {} but the plan was made for {}",
                a_sig::<O, I, V>(),
                s.sig
            ),
        );
    }
    let now = (
        a.nrows(),
        a.ncols(),
        b.ncols(),
        a.nnz(),
        b.nnz(),
        a.base(),
        b.base(),
    );
    let then = (
        s.a_nrows, s.a_ncols, s.b_ncols, s.a_nnz, s.b_nnz, s.a_base, s.b_base,
    );
    if now != then {
        return err(
            Status::PlanMismatch,
            format!(
                "inputs are A {}x{} nnz {} base {}, B {}x{} nnz {} base {}; the plan was made for A {}x{} nnz {} base {}, B {}x{} nnz {} base {}",
                now.0,
                now.1,
                now.3,
                now.5,
                now.1,
                now.2,
                now.4,
                now.6,
                then.0,
                then.1,
                then.3,
                then.5,
                then.1,
                then.2,
                then.4,
                then.6
            ),
        );
    }
    if h.options.validate {
        match plan.digests {
            Some((da, db)) => {
                if a.structure_digest() != da {
                    return err(
                        Status::PlanMismatch,
                        "A: structure differs from the one the plan was made for",
                    );
                }
                let db_now = if same_structure(a, b) {
                    da
                } else {
                    b.structure_digest()
                };
                if db_now != db {
                    return err(
                        Status::PlanMismatch,
                        "B: structure differs from the one the plan was made for",
                    );
                }
            }
            None => {
                a.validate("A")?;
                if !same_structure(a, b) {
                    b.validate("B")?;
                }
            }
        }
    }
    Ok(())
}

/// The replay kernel's dense value array may take at most this much per thread.
pub const REPLAY_MAX_DENSE_BYTES: usize = 64 << 20;

struct NumericOp<'h, 'o> {
    handle: &'h Handle,
    plan: &'h Plan,
    cols: IndexSliceMut<'o>,
    vals: Option<ValueSliceMut<'o>>,
}

impl PairOp for NumericOp<'_, '_> {
    type Out = ();
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<()>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let (h, plan) = (self.handle, self.plan);
        if self.vals.is_some() {
            if a.values().is_none() {
                return err(
                    Status::InvalidValue,
                    "A has no values (pattern-only descriptor)",
                );
            }
            if b.values().is_none() {
                return err(
                    Status::InvalidValue,
                    "B has no values (pattern-only descriptor)",
                );
            }
        }
        let nnz = plan.nnz();
        if self.cols.kind() != plan.format.indices {
            return err(
                Status::TypeMismatch,
                "C: column index type differs from the plan's",
            );
        }
        if self.cols.len() != nnz {
            return err(
                Status::InvalidValue,
                format!("C: {} column slots for {nnz} entries", self.cols.len()),
            );
        }
        let mut vals: Option<&mut [V]> = match self.vals {
            None => None,
            Some(v) => Some(value_slice::<V>(v, nnz)?),
        };
        let mut cols = self.cols;
        // C is usually freshly allocated by the caller: huge pages make its first touch
        // cheap (see `advise_huge`).
        match &mut cols {
            IndexSliceMut::I32(c) => crate::alloc::advise_huge_slice(c),
            IndexSliceMut::I64(c) => crate::alloc::advise_huge_slice(c),
        }
        if let Some(v) = vals.as_deref_mut() {
            crate::alloc::advise_huge_slice(v);
        }
        h.install(|| {
            check_against_plan(h, plan, &a, &b)?;
            if let Some(g) = plan.gpu.as_deref() {
                return crate::cuda::gpu_numeric(h, plan, g, &a, &b, cols, vals);
            }
            // Reuse (see `ReuseCache`): only while every call checks the structure.
            let mut cache = plan.reuse.lock();
            cache.numeric_calls += 1;
            let replay_ok = h.options.validate
                && plan.digests.is_some()
                && b.ncols().saturating_mul(std::mem::size_of::<V>()) <= REPLAY_MAX_DENSE_BYTES;
            if !replay_ok {
                cache.col_digests = None;
            }
            let learn = replay_ok && cache.numeric_calls >= 2 && cache.col_digests.is_none();
            let kind = numeric_kind(plan, b.ncols(), std::mem::size_of::<V>(), h.threads());
            let base = plan.format.base;
            macro_rules! run {
                ($c:expr) => {{
                    let c = $c;
                    if let Some(digests) = cache.col_digests.as_deref() {
                        let r = gustavson::replay(
                            &h.workspace,
                            kind,
                            &a,
                            &b,
                            &plan.chunks,
                            &plan.row_ptr,
                            plan.max_row_nnz,
                            plan.sorted,
                            digests,
                            plan.row_groups.as_ref(),
                            base,
                            plan.prefetch,
                            c,
                            vals,
                        )?;
                        cache.replayed_chunks += r.replayed;
                        cache.refilled_chunks += r.refilled;
                        return Ok(());
                    }
                    gustavson::numeric(
                        &h.workspace,
                        kind,
                        &a,
                        &b,
                        &plan.chunks,
                        plan.row_groups.as_ref(),
                        &plan.row_ptr,
                        plan.max_row_nnz,
                        plan.sorted,
                        base,
                        plan.prefetch,
                        c,
                        vals,
                    )?;
                    if learn {
                        cache.col_digests =
                            Some(gustavson::chunk_digests(&plan.chunks, &plan.row_ptr, c));
                    }
                    Ok(())
                }};
            }
            match cols {
                IndexSliceMut::I32(c) => run!(c),
                IndexSliceMut::I64(c) => run!(c),
            }
        })
    }
}

/// Downcasts the caller's value array to `V` (checking type and length).
pub(crate) fn value_slice<'o, 'a, V: Scalar + FromAny<'a>>(
    v: ValueSliceMut<'o>,
    nnz: usize,
) -> Result<&'o mut [V]> {
    let kind = v.kind();
    let out = V::from_values_mut(v).ok_or_else(|| {
        Error::new(
            Status::TypeMismatch,
            format!(
                "C: values are {} but A and B hold {}",
                kind.name(),
                V::KIND.name()
            ),
        )
    })?;
    if out.len() != nnz {
        return err(
            Status::InvalidValue,
            format!("C: {} value slots for {nnz} entries", out.len()),
        );
    }
    Ok(out)
}

/// Numeric phase: fills C's column indices and (if `vals` is given) values.
pub fn numeric(
    handle: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    guarded(handle, &[("A", a), ("B", b)], || {
        numeric_unguarded(handle, plan, a, b, cols, vals)
    })
    .inspect_err(|_| {
        // What the plan learned from earlier calls may describe arrays this call left
        // half written: learn again from the next successful call.
        *plan.reuse.lock() = Default::default();
    })
}

fn numeric_unguarded(
    handle: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    if let Some(hp) = plan.hybrid.as_deref() {
        return crate::cuda::hybrid_numeric(handle, plan, hp, a, b, cols, vals);
    }
    dispatch_pair(
        a,
        b,
        NumericOp {
            handle,
            plan,
            cols,
            vals,
        },
    )
}

/// Runs a product call on `h` so that a failure leaves nothing behind: a panic becomes an
/// error, the workers' scratch is discarded (a row cut short leaves marks and sums that
/// the next call would trust), and with validation off an internal failure is explained
/// by validating the inputs after the fact.
pub(crate) fn guarded<T>(
    h: &Handle,
    inputs: &[(&str, &AnyCsr<'_>)],
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    crate::panics::catch(f).map_err(|e| {
        h.discard_scratch();
        explain(h, inputs, e)
    })
}

/// With validation off, bad input shows up as some other failure (an index past an
/// array, a row whose length differs from the plan's): validate the inputs now and report
/// what is wrong with them instead.
fn explain(h: &Handle, inputs: &[(&str, &AnyCsr<'_>)], e: Error) -> Error {
    if h.options.validate || !matches!(e.status, Status::Internal | Status::PlanMismatch) {
        return e;
    }
    struct Check<'n>(&'n str);
    impl crate::csr::OneOp for Check<'_> {
        type Out = ();
        fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>) -> Result<()>
        where
            O: Idx + FromAny<'a>,
            I: Idx + FromAny<'a>,
            V: Scalar + FromAny<'a>,
        {
            a.validate(self.0)
        }
    }
    for (name, m) in inputs {
        let found = crate::panics::catch(|| h.install(|| crate::csr::dispatch_one(m, Check(name))));
        if let Err(bad) = found {
            return Error::new(
                bad.status,
                format!(
                    "validation is off (spgemm_set_validation) and the inputs are invalid: {} \
                     (checked after the call failed with: {})",
                    bad.message, e.message
                ),
            );
        }
    }
    e
}

/// One-call product into library-owned arrays.
pub fn multiply(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<OwnedCsr> {
    let plan = symbolic(handle, a, b, format)?;
    numeric_owned(handle, &plan, a, b)
}

/// Numeric phase into arrays the library owns, taken from the handle's cache of arrays
/// of destroyed results when one fits (see [`crate::output_cache`]); the result gives
/// them back when dropped. Pattern-only when A or B has no values.
pub fn numeric_owned(
    handle: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
) -> Result<OwnedCsr> {
    let cache = &handle.outputs;
    let format = plan.format;
    let with_values = a.values.is_some() && b.values.is_some();
    // Built before the product so that an error gives the arrays back.
    let mut c = OwnedCsr {
        nrows: plan.nrows(),
        ncols: plan.ncols(),
        base: format.base,
        offsets: OffsetVec::take(cache, format.offsets, plan.nrows() + 1)?,
        indices: IndexVec::take(cache, format.indices, plan.nnz())?,
        values: None,
        value_type: a.value_type,
        recycle: Some(cache.clone()),
    };
    if with_values {
        c.values = Some(ValueVec::take(cache, a.value_type, plan.nnz())?);
    }
    write_row_offsets(plan, c.offsets.as_mut())?;
    numeric(
        handle,
        plan,
        a,
        b,
        c.indices.as_mut(),
        c.values.as_mut().map(|v| v.as_mut()),
    )?;
    Ok(c)
}
