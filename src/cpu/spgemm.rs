//! The CPU backend's SpGEMM: the symbolic phase (selector, compression of B, counts of
//! C's rows, the flop-balanced partition) into a [`CpuPlan`], and the numeric phase over
//! it, replaying what earlier calls learned when the plan is reused.

use parking_lot::Mutex;
use rayon::prelude::*;

use super::Ctx;
use super::accum::{LinkedAcc, ProbeAcc};
use super::args::{AccKind, NumericPlan, Product, REPLAY_MAX_DENSE_BYTES};
use super::compress;
use super::dense;
use super::gustavson;
use super::partition::{balanced_chunks, flop_profile};
use super::prefetch;
use super::record::{self, ColumnRecord};
use super::row_groups::{LANES, RowGroups};
use super::select::{self, Features};
use super::slot_map::{self, SlotMaps};
use super::small;
use super::symbolic::{LinkedBits, ProbeBits, WORD_BITS};
use super::workspace::GROWN_PER_CALL;
use crate::common::csr::CsrRef;
use crate::common::memory::{Footprint, bytes_of};
use crate::common::options::{Algorithm, OutputFormat};
use crate::common::slices::IndexSliceMut;
use crate::error::{Result, Status, err};
use crate::platform::alloc::try_filled;
use crate::platform::caches::caches;
use crate::platform::topo::chunk::ChunkLedger;
use crate::platform::workers::call_overhead_bytes;
use crate::types::{Idx, Scalar};

/// What the CPU's symbolic phase leaves for the numeric calls.
#[derive(Debug)]
pub struct CpuPlan {
    /// 0-based row offsets of C (length m + 1).
    pub(crate) row_ptr: Vec<usize>,
    /// Row chunk boundaries for the numeric phase (flop-balanced).
    chunks: Vec<usize>,
    /// Scalar multiplications of the product (the paper's f_m).
    pub(crate) flops: u64,
    pub(crate) max_row_nnz: usize,
    /// Accumulator family each phase runs with.
    pub(crate) symbolic_alg: Algorithm,
    pub(crate) numeric_alg: Algorithm,
    /// Whether C's rows come out sorted (fixed when the plan is made).
    pub(crate) sorted: bool,
    /// Whether the symbolic phase ran on a compressed B (section 3.2).
    pub(crate) compressed: bool,
    /// What numeric calls learned, for later numeric calls.
    reuse: Mutex<ReuseCache>,
    /// Row groups of A (runs of rows with the same column list) the kernels process
    /// together; `chunks` does not split them (None: too few; see [`super::row_groups`]).
    row_groups: Option<RowGroups>,
    /// Whether the kernels prefetch the rows of B ahead (A's columns are scattered and B
    /// exceeds the L2 cache; see [`super::prefetch`]).
    prefetch: bool,
    /// A small product: both phases run serially on the calling thread ([`super::small`]).
    pub(crate) small: bool,
    /// C's columns from the symbolic phase: the first numeric call replays them
    /// ([`super::record`]).
    record: Mutex<Option<ColumnRecord>>,
}

/// Interior cache of a plan. The first numeric call runs the accumulator; a second call
/// on the same plan (or a first one without values, which asks for the structure) also
/// records a 64-bit digest of each chunk's column indices of C as written to the caller's
/// array (8 bytes per chunk of rows, a few dozen per plan). From then on a numeric call
/// given one of the arrays the plan's last calls filled trusts the columns already in it
/// wherever their digest still matches (the caller reuses its C, as a reused plan is meant
/// for) and only sums values into a dense per-thread array (the replay kernel): no
/// hashing, no sorting, no marks, no column writes. A chunk whose
/// columns differ (changed by the caller) is computed afresh; any other array is never
/// read (it is filled in full). Kept only while the structure of A and B is checked on
/// every call (validation on), because the replay trusts it.
#[derive(Debug, Default)]
pub struct ReuseCache {
    pub numeric_calls: usize,
    /// Digest of each chunk's columns of C (see `cpu::gustavson::chunk_digests`).
    pub col_digests: Option<Vec<u64>>,
    /// Address and length of the column arrays the last calls filled (most recent first):
    /// the only arrays the replay reads.
    pub written: [(usize, usize); WRITTEN_ARRAYS],
    /// Chunks the replay kernel ran, and chunks it found changed and computed afresh
    /// (counters for tests and reports).
    pub replayed_chunks: usize,
    pub refilled_chunks: usize,
    /// Slot maps of the replay (see `cpu::slot_map`), built by the first replay where
    /// the plan may keep them; forgotten with the digests.
    pub slot_maps: Option<SlotMaps>,
}

/// How many of the last filled column arrays a plan remembers (a caller alternating a few
/// buffers of C still gets the replay).
const WRITTEN_ARRAYS: usize = 4;

impl ReuseCache {
    /// Records that the array at `at` now holds this plan's columns.
    fn wrote(&mut self, at: (usize, usize)) {
        let w = &mut self.written;
        let k = w.iter().position(|&x| x == at).unwrap_or(w.len() - 1);
        w[..=k].rotate_right(1);
        w[0] = at;
    }
}

/// A CPU plan's internals, for tests and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuDetails {
    /// Row chunk boundaries of the numeric phase.
    pub chunks: Vec<usize>,
    /// Row groups of A the kernels process together (None: too few).
    pub row_groups: Option<Vec<std::ops::Range<usize>>>,
    pub prefetch: bool,
    pub compressed: bool,
    /// Numeric calls so far, chunks the replay ran and chunks it computed afresh.
    pub numeric_calls: usize,
    pub replayed_chunks: usize,
    pub refilled_chunks: usize,
    /// Whether the plan has learned C's columns for the replay.
    pub replay_ready: bool,
    /// A small product, computed serially on the calling thread (see `cpu::small`).
    pub small: bool,
    /// Bytes of C's columns kept from the symbolic phase (0: none).
    pub record_bytes: usize,
    /// Bytes of the replay's slot maps, and chunks that have one (see `cpu::slot_map`).
    pub slot_map_bytes: usize,
    pub mapped_chunks: usize,
}

impl CpuPlan {
    /// The plan's internals, for tests and reports.
    pub fn details(&self) -> CpuDetails {
        let c = self.reuse.lock();
        CpuDetails {
            chunks: self.chunks.clone(),
            row_groups: self.row_groups.as_ref().map(|g| g.iter().collect()),
            prefetch: self.prefetch,
            compressed: self.compressed,
            numeric_calls: c.numeric_calls,
            replayed_chunks: c.replayed_chunks,
            refilled_chunks: c.refilled_chunks,
            replay_ready: c.col_digests.is_some(),
            small: self.small,
            record_bytes: self.record.lock().as_ref().map_or(0, |r| r.bytes()),
            slot_map_bytes: c.slot_maps.as_ref().map_or(0, |m| m.bytes()),
            mapped_chunks: c.slot_maps.as_ref().map_or(0, |m| m.mapped()),
        }
    }

    pub fn nnz(&self) -> usize {
        self.row_ptr.last().copied().unwrap_or(0)
    }

    /// Lines for the plan's text description.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if let Some(g) = &self.row_groups {
            s.push_str(&g.describe());
            s.push('\n');
        }
        if self.prefetch {
            s.push_str("prefetch: rows of B (scattered columns of A)\n");
        }
        if self.small {
            s.push_str("small product: serial on the calling thread\n");
        }
        if self.compressed {
            s.push_str("symbolic phase over a compressed B\n");
        }
        if let Some(r) = &*self.record.lock() {
            s.push_str(&format!(
                "C's columns kept from the symbolic phase: {} bytes\n",
                r.bytes()
            ));
        }
        if let Some(m) = &self.reuse.lock().slot_maps {
            s.push_str(&format!(
                "replay slot maps: {} of {} chunks, {} bytes\n",
                m.mapped(),
                self.chunks.len().saturating_sub(1),
                m.bytes()
            ));
        }
        s
    }

    /// Forgets what earlier numeric calls learned (after a failed call, whose arrays may
    /// be half written).
    pub fn forget(&self) {
        *self.reuse.lock() = ReuseCache::default();
    }
}

/// Sizes of a product that the memory estimates need, read without allocating: op(A) is
/// m x n, op(B) is n x k with `b_nnz` entries; `a_max_row` and `b_max_row` bound their
/// row lengths.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub b_nnz: usize,
    pub a_max_row: usize,
    pub b_max_row: usize,
}

/// Chunk boundaries, per-chunk totals, slices and digests: a few words per chunk, and
/// there are at most 8 chunks per thread (see `partition::balanced_chunks_by`).
fn bookkeeping_bytes(threads: usize) -> u64 {
    (8 * threads as u64 + 2) * 128
}

/// Upper bound of the memory [`symbolic`] allocates (the plan it returns included), from
/// the sizes each of its steps allocates (each step's estimate sits beside its code).
pub fn symbolic_footprint(ctx: &Ctx<'_>, d: &Dims) -> Footprint {
    if ctx.small {
        return small::symbolic_footprint(d.m, d.k);
    }
    let mut f = Footprint::default();
    let m1 = d.m.saturating_add(1);
    f.add("row groups of A", RowGroups::bytes_bound(d.m));
    f.add("row offsets of C", bytes_of::<usize>(m1));
    f.add("compressed B", compress::bytes_bound(d.n, d.b_nnz));
    let alg = select::select_symbolic(ctx.algorithm, d.k);
    let ws = if alg == Algorithm::Dense {
        f.add(
            "flop counts",
            bytes_of::<u64>(d.m.div_ceil(dense::FLOP_BLOCK) + 1),
        );
        // Whether B gets compressed is decided later: the larger of the two layouts.
        dense::DenseRows::<f64>::symbolic_bytes(d.k, false)
            .max(dense::DenseRows::<f64>::symbolic_bytes(d.k, true))
    } else {
        f.add("flop counts", bytes_of::<u64>(m1));
        // A row's distinct words: at most its products, and at most the words of k columns.
        let keys = d
            .a_max_row
            .saturating_mul(d.b_max_row)
            .min(d.k)
            .min(d.k.div_ceil(WORD_BITS));
        match select::acc_kind(alg) {
            AccKind::Probe => ProbeBits::bytes(keys),
            _ => LinkedBits::bytes(keys),
        }
    };
    f.add_each("per-thread symbolic accumulators", ws, ctx.threads);
    scheduling(ctx, ws, &mut f);
    f
}

/// What any parallel call adds: chunk bookkeeping, the worker pool's queues and the
/// placement records of the workspace buffers it grows (`ws` bytes per worker).
fn scheduling(ctx: &Ctx<'_>, ws: u64, f: &mut Footprint) {
    f.add("chunk bookkeeping", bookkeeping_bytes(ctx.threads));
    f.add("worker queues", call_overhead_bytes(ctx.threads));
    let records = ChunkLedger::growth_bytes(GROWN_PER_CALL, ws);
    f.add_each("per-thread placement records", records, ctx.threads);
}

/// Upper bound of the memory [`numeric`] allocates for a plan with values of `V` (when
/// `values`) and B with `k` columns; `trusted` as for [`numeric`] (the replay may run).
pub fn numeric_footprint<V: Scalar>(
    ctx: &Ctx<'_>,
    plan: &CpuPlan,
    k: usize,
    values: bool,
    trusted: bool,
) -> Footprint {
    // A small product's plan runs on the calling thread alone, with the handle's
    // accumulator for small products.
    let threads = if plan.small { 1 } else { ctx.threads };
    let vsize = std::mem::size_of::<V>();
    let kind = select::numeric_kind(plan.numeric_alg, plan.flops, plan.nnz(), k, vsize, threads);
    let groups = plan.row_groups.is_some() && values;
    let lanes_fit =
        |cols: usize| cols.saturating_mul(LANES).saturating_mul(vsize) <= REPLAY_MAX_DENSE_BYTES;
    let (max_row, sorted) = (plan.max_row_nnz, plan.sorted);
    let ws = match kind {
        AccKind::Dense => dense::DenseRows::<V>::numeric_bytes(k, max_row, sorted, groups),
        AccKind::DenseByValue => {
            // The kernel tests k + base columns (base <= 1) against the budget and sizes
            // them so: test k, count k + 1.
            let lanes = groups && lanes_fit(k);
            dense::DenseRows::<V>::by_value_bytes(k, max_row, sorted, values, lanes)
        }
        AccKind::Linked => LinkedAcc::<V>::bytes(max_row),
        AccKind::Probe => ProbeAcc::<V>::bytes(max_row),
    };
    let mut f = Footprint::default();
    f.add_each("per-thread numeric accumulators", ws, threads);
    let mut replay = 0;
    if trusted && values && k.saturating_mul(vsize) <= REPLAY_MAX_DENSE_BYTES {
        replay = bytes_of::<V>(k);
        if plan.row_groups.is_some() && lanes_fit(k) {
            replay = replay.saturating_add(bytes_of::<[V; LANES]>(k));
        }
        f.add_each("per-thread replay values", replay, threads);
    }
    f.add("chunk digests", bytes_of::<u64>(plan.chunks.len()));
    if !plan.small {
        scheduling(ctx, ws.saturating_add(replay), &mut f);
    }
    f
}

/// Symbolic phase with a hash accumulator: compressed row lengths of B and the flop
/// profile in one pass over A, the paper's two-step compression decision on the exact
/// compressed f_m, then the count. Returns the counts and whether B was compressed.
fn hash_symbolic<O: Idx, I: Idx, V: Scalar>(
    ctx: &Ctx<'_>,
    alg: Algorithm,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<(dense::Counted, bool)> {
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
    let chunks = balanced_chunks(&profile.prefix, ctx.threads);
    let mut row_ptr = try_filled(m + 1, 0usize, "row offsets of C")?;
    gustavson::symbolic(
        &ctx.state.workspace,
        select::acc_kind(alg),
        (a, b),
        compressed.as_ref(),
        (&chunks, &profile.prefix),
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
            max_row_nnz,
            record: None,
        },
        compressed.is_some(),
    ))
}

/// Symbolic phase of C = A*B on the CPU. The product is defined and C's format can hold
/// it (checked by the caller, which validated A and B when asked to). Values are not
/// read: callers pass structure-only views (one instantiation for every value type) and
/// the size of the values the numeric calls will have, `value_bytes`.
pub fn symbolic<O: Idx, I: Idx, V: Scalar>(
    ctx: &Ctx<'_>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    format: &OutputFormat,
    value_bytes: usize,
) -> Result<CpuPlan> {
    let k = b.ncols();
    if ctx.algorithm == Algorithm::Dense && k > u32::MAX as usize {
        return err(
            Status::NotSupported,
            format!("the dense accumulator needs at most 2^32-1 columns in C, B has {k}"),
        );
    }
    if ctx.small {
        let counted = small::symbolic(ctx.state, a, b)?;
        crate::common::check::check_nnz(format, counted.row_ptr[a.nrows()])?;
        return Ok(CpuPlan {
            row_ptr: counted.row_ptr,
            chunks: counted.chunks,
            flops: counted.flops,
            max_row_nnz: counted.max_row_nnz,
            symbolic_alg: Algorithm::Dense,
            numeric_alg: Algorithm::Dense,
            sorted: ctx.sorted,
            compressed: false,
            reuse: Default::default(),
            row_groups: None,
            prefetch: false,
            small: true,
            record: Mutex::new(None),
        });
    }
    ctx.workers.pool()?.install(|| {
        let m = a.nrows();
        let threads = ctx.threads;
        let symbolic_alg = select::select_symbolic(ctx.algorithm, k);
        let groups = RowGroups::detect(a)?;
        let prefetch = prefetch::worth_it(a, b, value_bytes, caches().l2);
        let (mut counted, compressed) = if symbolic_alg == Algorithm::Dense {
            // Flops and row sizes in one pass; compression decided from a sample.
            let est = compress::estimate(a, b);
            // With a record of C's columns where the handle allows it and rows have
            // enough products for the record to pay (see `record`).
            let budget = {
                let entry = std::mem::size_of::<I>() + value_bytes;
                let (ab, bb) = (a.nnz() * entry, b.nnz() * entry);
                if ctx.sorted || ctx.structure_wanted {
                    record::budget_bytes(ab, bb)
                } else {
                    record::unsorted_budget_bytes(ab, bb, entry)
                }
            };
            let keep = ctx.keep_columns
                && est.is_some_and(|e| {
                    // Sampled only for sorted output, where the record also saves the
                    // first numeric call's ordering (docs/DESIGN-NOTES.md, cpu::record).
                    let entries = || {
                        ctx.sorted
                            .then(|| record::sampled_entries(a, b, e.flops))
                            .flatten()
                    };
                    record::pays(
                        e.flops,
                        m,
                        budget,
                        (ctx.structure_wanted, ctx.sorted),
                        entries,
                    )
                });
            let cb = match est {
                Some(e) if e.pays(b.nnz(), keep && ctx.sorted) => compress::compress_rows(b)?,
                _ => None,
            };
            // Unsorted over a plain B the record costs a store per product, more than the
            // first numeric call saves (docs/DESIGN-NOTES.md, cpu::record); less than the
            // pass that would otherwise form the structure the caller asked for.
            let keep = keep && (ctx.sorted || cb.is_some() || ctx.structure_wanted);
            // The plain count over runs of A's columns where A has them (stencil and AMG
            // operators; docs/DESIGN-NOTES.md, cpu::dense).
            let runs = est.is_some_and(|e| e.runs >= dense::RUNS_MIN_SHARE);
            let counted = gustavson::symbolic_dense(
                &ctx.state.workspace,
                a,
                b,
                cb.as_ref(),
                groups.as_ref(),
                threads,
                (prefetch, runs),
                keep.then_some((ctx.sorted, budget)),
            )?;
            (counted, cb.is_some())
        } else {
            hash_symbolic(ctx, symbolic_alg, a, b)?
        };
        if let Some(g) = &groups {
            g.align(&mut counted.chunks);
        }
        let features = Features {
            k,
            threads,
            hbm: ctx.hbm,
            flops: counted.flops,
        };
        let numeric_alg = select::select_numeric(ctx.algorithm, &features)?;
        let dense::Counted {
            row_ptr,
            chunks,
            flops,
            max_row_nnz,
            record,
        } = counted;
        crate::common::check::check_nnz(format, row_ptr[m])?;
        Ok(CpuPlan {
            row_ptr,
            chunks,
            flops,
            max_row_nnz,
            symbolic_alg,
            numeric_alg,
            sorted: ctx.sorted,
            compressed,
            reuse: Default::default(),
            row_groups: groups,
            prefetch,
            small: false,
            record: Mutex::new(record),
        })
    })
}

/// Numeric phase of a CPU plan: C's columns (and values when `vals` is given) into the
/// caller's arrays, which hold nnz(C) entries each (checked by the caller). `trusted`:
/// A's and B's structure was checked against the plan in this call (validation on), so
/// the replay may take C's columns from the caller's array of an earlier call.
pub fn numeric<O: Idx, I: Idx, V: Scalar>(
    ctx: &Ctx<'_>,
    plan: &CpuPlan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    (c_base, trusted): (usize, bool),
    mut cols: IndexSliceMut<'_>,
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    // C is usually freshly allocated by the caller: huge pages make its first touch
    // cheap (see `advise_huge`).
    match &mut cols {
        IndexSliceMut::I32(c) => crate::platform::alloc::advise_huge_slice(c),
        IndexSliceMut::I64(c) => crate::platform::alloc::advise_huge_slice(c),
    }
    if let Some(v) = vals.as_deref_mut() {
        crate::platform::alloc::advise_huge_slice(v);
    }
    // A small product's plan has one chunk, run on the calling thread (see `small`).
    let serial = plan.small;
    let body = || {
        // Reuse (see `ReuseCache`): only while every call checks the structure.
        let mut guard = plan.reuse.lock();
        let cache: &mut ReuseCache = &mut guard;
        cache.numeric_calls += 1;
        let replay_ok =
            trusted && b.ncols().saturating_mul(std::mem::size_of::<V>()) <= REPLAY_MAX_DENSE_BYTES;
        let at = match &cols {
            IndexSliceMut::I32(c) => (c.as_ptr() as usize, c.len()),
            IndexSliceMut::I64(c) => (c.as_ptr() as usize, c.len()),
        };
        if !replay_ok {
            cache.col_digests = None;
            cache.slot_maps = None;
        }
        // A call without values asks for the structure, which the value calls after it reuse.
        let learn = replay_ok
            && (cache.numeric_calls >= 2 || vals.is_none())
            && cache.col_digests.is_none();
        // Only an array this plan filled may be read (double buffers of C included).
        let ours = cache.written.contains(&at);
        let kind: AccKind = select::numeric_kind(
            plan.numeric_alg,
            plan.flops,
            plan.nnz(),
            b.ncols(),
            std::mem::size_of::<V>(),
            if serial { 1 } else { ctx.threads },
        );
        let np = NumericPlan {
            kind,
            chunks: &plan.chunks,
            groups: plan.row_groups.as_ref(),
            row_ptr: &plan.row_ptr,
            max_row_nnz: plan.max_row_nnz,
            sorted: plan.sorted,
            c_base,
            prefetch: plan.prefetch,
            direct: dense::direct_pays(
                plan.sorted,
                plan.flops,
                plan.nnz(),
                plan.row_ptr.len().saturating_sub(1),
            ),
        };
        let p = Product { a, b, plan: &np };
        // Slot maps where the plan may keep memory beyond itself, the rows of B are long
        // enough (or short, with few products per entry of C, where this machine has the
        // short-row form) and the map of every product fits the budget of a kept record
        // (see `cpu::slot_map`); plans that prefetch B's rows too (the map replaces the
        // dense array's scattered updates, which their prefetch does not cover).
        let maps_ok = ctx.keep_columns
            && (plan.flops >= slot_map::MIN_B_ROW.saturating_mul(a.nnz() as u64)
                || (slot_map::short_form::<V>()
                    && plan.flops < slot_map::SHORT_MAX_SHARE.saturating_mul(plan.nnz() as u64)))
            && !serial
            && plan.row_groups.is_none()
            && vals.is_some()
            && a.values().is_some()
            && b.values().is_some()
            && usize::try_from(plan.flops).is_ok_and(|f| {
                let entry = std::mem::size_of::<I>() + std::mem::size_of::<V>();
                f <= record::budget_bytes(a.nnz() * entry, b.nnz() * entry)
            });
        macro_rules! run {
            ($c:expr) => {{
                let c = $c;
                let mut relearn = false;
                if let Some(digests) = cache.col_digests.as_deref().filter(|_| ours) {
                    let r = if serial {
                        small::replay(ctx.state, &p, digests[0], c, vals)?
                    } else {
                        let maps = match &mut cache.slot_maps {
                            Some(m) if maps_ok => gustavson::Maps::Use(m),
                            Some(m) => gustavson::Maps::Restore(m),
                            // Built from the third call on: a plan whose structure was
                            // asked for first (R*A*P's A*P) replays its first value call,
                            // which would otherwise pay for maps a product made once never
                            // reads.
                            m @ None if maps_ok && cache.numeric_calls >= 3 => {
                                gustavson::Maps::Build(m)
                            }
                            None => gustavson::Maps::Off,
                        };
                        let mut record = plan.record.lock();
                        // Maps about to be built for every chunk replace the record: dropped
                        // first, so that the plan never holds both (a chunk that still gets
                        // none is computed afresh when an array changes).
                        let all_fit = || slot_map::rows_fit(&plan.row_ptr, 0..a.nrows());
                        if matches!(maps, gustavson::Maps::Build(_))
                            && plan.nnz().saturating_mul(std::mem::size_of::<V>())
                                < gustavson::REPLAY_STREAM_MIN_BYTES
                            && all_fit()
                        {
                            *record = None;
                        }
                        let r = gustavson::replay(
                            &ctx.state.workspace,
                            &p,
                            (digests, record.as_ref()),
                            (c, vals),
                            maps,
                        )?;
                        // With a map for every chunk a fresh array is filled through the
                        // maps (below): the record is no longer read.
                        if cache
                            .slot_maps
                            .as_ref()
                            .is_some_and(|m| m.mapped() == digests.len())
                        {
                            *record = None;
                        }
                        r
                    };
                    cache.replayed_chunks += r.replayed;
                    cache.refilled_chunks += r.refilled;
                    cache.wrote(at);
                    return Ok(());
                }
                // A fresh array of a plan whose every chunk has a slot map (its record
                // dropped): C's columns and values through the maps, in the maps' order.
                if let (Some(digests), Some(maps)) =
                    (cache.col_digests.as_deref(), cache.slot_maps.as_ref())
                    && replay_ok
                    && !serial
                    && maps.mapped() == digests.len()
                {
                    if gustavson::fill_mapped(&p, digests, maps, (&mut *c, vals.as_deref_mut())) {
                        cache.wrote(at);
                        return Ok(());
                    }
                    // Not the maps' columns (cannot happen with the structure checked):
                    // computed afresh below, and learned again.
                    cache.col_digests = None;
                    cache.slot_maps = None;
                    relearn = true;
                }
                if let Some(rec) = plan.record.lock().as_ref().filter(|_| replay_ok && !serial) {
                    // The first call on a fresh array: the symbolic phase's columns.
                    let digests =
                        gustavson::replay_recorded(&ctx.state.workspace, &p, rec, c, vals)?;
                    cache.col_digests = Some(digests);
                    cache.wrote(at);
                    return Ok(());
                }
                if serial {
                    small::numeric(ctx.state, &p, c, vals)?;
                } else {
                    gustavson::numeric(&ctx.state.workspace, &p, c, vals)?;
                }
                if learn || relearn {
                    cache.col_digests = Some(if serial {
                        vec![gustavson::rows_digest(c, &plan.row_ptr, 0..a.nrows())]
                    } else {
                        gustavson::chunk_digests(&plan.chunks, &plan.row_ptr, c)
                    });
                }
                cache.wrote(at);
                Ok(())
            }};
        }
        match cols {
            IndexSliceMut::I32(c) => run!(c),
            IndexSliceMut::I64(c) => run!(c),
        }
    };
    if serial {
        body()
    } else {
        ctx.workers.pool()?.install(body)
    }
}
