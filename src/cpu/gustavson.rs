//! Row-by-row (Gustavson) SpGEMM kernels: the symbolic phase counts the distinct columns
//! of each row of C; the numeric phase accumulates values and writes each row; the
//! replay kernel recomputes values for a structure known from an earlier numeric call.
//! Rows are processed Thread-Sequentially in flop-balanced chunks; each worker uses its
//! own accumulators from the handle's ONE2ONE pool.

use rayon::prelude::*;

use crate::common::csr::CsrRef;
use crate::cpu::accum::Accumulator;
use crate::cpu::args::{AccKind, Product};
use crate::cpu::compress::CompressedRows;
use crate::cpu::dense::{self, FLOP_BLOCK};
use crate::cpu::partition::{balanced_chunks_blocked, balanced_chunks_by};
use crate::cpu::record::{ColumnRecord, Recorder};
pub(crate) use crate::cpu::replay_parts::rows_digest;
use crate::cpu::replay_parts::{ColDigest, sum_row, take};
use crate::cpu::row_groups::{GroupEntries, LANES, RowGroups};
use crate::cpu::slot_map::{self, SlotMaps};
use crate::cpu::stream;
use crate::cpu::symbolic::{SymbolicAcc, WORD_BITS};
use crate::cpu::util::{row_len_exceeds, row_len_mismatch, split_at_bounds, value_pair};
use crate::cpu::workspace::{Workspace, WorkspacePool};
use crate::error::{Result, Status, err};
use crate::platform::alloc::try_zeroed_vec;
use crate::types::{Idx, Scalar};

/// Symbolic kernel for one chunk: `out[i - rows.start]` = distinct columns of row i.
fn count_rows<V: Scalar, O: Idx, I: Idx, S: SymbolicAcc>(
    acc: &mut S,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    cb: Option<&CompressedRows>,
    rows: std::ops::Range<usize>,
    flop_prefix: &[u64],
    out: &mut [usize],
) {
    let r0 = rows.start;
    let cb = cb.map(CompressedRows::view);
    for i in rows {
        acc.begin_row((flop_prefix[i + 1] - flop_prefix[i]) as usize);
        match cb {
            Some(cb) => {
                for p in a.row_range(i) {
                    for q in cb.row(a.col(p)) {
                        acc.insert(cb.words[q] as usize, cb.bits[q]);
                    }
                }
            }
            None => {
                for p in a.row_range(i) {
                    for q in b.row_range(a.col(p)) {
                        let c = b.col(q);
                        acc.insert(c / WORD_BITS, 1u64 << (c % WORD_BITS));
                    }
                }
            }
        }
        out[i - r0] = acc.count();
    }
}

/// Symbolic phase: fills `row_nnz[i]` with the number of distinct columns of row i of C.
/// `cb` is B compressed (or `None`); `max_keys` bounds the distinct words of any row.
pub fn symbolic<O: Idx, I: Idx, V: Scalar>(
    pool: &WorkspacePool,
    kind: AccKind,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    cb: Option<&CompressedRows>,
    (chunks, flop_prefix): (&[usize], &[u64]),
    max_keys: usize,
    row_nnz: &mut [usize],
) -> Result<()> {
    let k = b.ncols();
    let max_keys = max_keys.min(k.div_ceil(WORD_BITS));
    let pieces = split_at_bounds(row_nnz, chunks);
    pieces
        .into_par_iter()
        .zip(chunks.par_windows(2))
        .try_for_each(|(out, w)| {
            pool.with(|ws| {
                let rows = w[0]..w[1];
                match kind {
                    AccKind::Dense | AccKind::DenseByValue => {
                        return err(
                            Status::Internal,
                            "the dense symbolic phase runs through dense::count_rows",
                        );
                    }
                    AccKind::Linked => {
                        ws.sym_linked.prepare(max_keys)?;
                        count_rows(&mut ws.sym_linked, a, b, cb, rows, flop_prefix, out);
                    }
                    AccKind::Probe => {
                        ws.sym_probe.prepare(max_keys)?;
                        count_rows(&mut ws.sym_probe, a, b, cb, rows, flop_prefix, out);
                    }
                }
                Ok(())
            })
        })
}

/// Numeric kernel for one chunk of rows; `cols`/`vals` hold exactly those rows' entries.
fn fill_rows<V: Scalar, O: Idx, I: Idx, J: Idx, A: Accumulator<V>>(
    acc: &mut A,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let (a, b) = (p.a, p.b);
    let (row_ptr, sorted, c_base) = (p.plan.row_ptr, p.plan.sorted, p.plan.c_base);
    let off0 = row_ptr[rows.start];
    let values = value_pair(a, b, vals.is_some());
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        acc.begin_row(e - s);
        match values {
            Some((av, bv)) => {
                for p in a.row_range(i) {
                    let aij = av[p];
                    for q in b.row_range(a.col(p)) {
                        acc.insert(b.col(q), aij * bv[q]);
                    }
                }
            }
            None => {
                for p in a.row_range(i) {
                    for q in b.row_range(a.col(p)) {
                        acc.insert_pattern(b.col(q));
                    }
                }
            }
        }
        if acc.overflowed() {
            return Err(row_len_exceeds(i, e - s));
        }
        if acc.len() != e - s {
            return Err(row_len_mismatch(i, acc.len(), e - s));
        }
        acc.emit(
            sorted,
            c_base,
            &mut cols[s..e],
            vals.as_deref_mut().map(|v| &mut v[s..e]),
        );
    }
    Ok(())
}

/// Per-chunk output slices of C.
fn pieces<'o, J, V>(
    chunks: &[usize],
    row_ptr: &[usize],
    cols: &'o mut [J],
    vals: Option<&'o mut [V]>,
) -> (Vec<&'o mut [J]>, Vec<Option<&'o mut [V]>>) {
    let starts: Vec<usize> = chunks.iter().map(|&r| row_ptr[r]).collect();
    let col_pieces = split_at_bounds(cols, &starts);
    let val_pieces: Vec<Option<&mut [V]>> = match vals {
        Some(v) => split_at_bounds(v, &starts).into_iter().map(Some).collect(),
        None => (0..col_pieces.len()).map(|_| None).collect(),
    };
    (col_pieces, val_pieces)
}

/// Numeric kernel for one chunk with the plan's accumulator from worker workspace `ws`.
pub(crate) fn fill_chunk<O: Idx, I: Idx, V: Scalar, J: Idx>(
    ws: &mut crate::cpu::workspace::Workspace,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cp: &mut [J],
    vp: Option<&mut [V]>,
) -> Result<()> {
    let np = p.plan;
    let k = p.b.ncols();
    match np.kind {
        AccKind::Dense => {
            let acc = ws.dense_rows::<V>();
            acc.prepare_numeric(k, np.max_row_nnz, np.sorted, np.prefetch)?;
            dense::fill_rows(acc, p, rows, cp, vp)
        }
        AccKind::DenseByValue => {
            let acc = ws.dense_rows::<V>();
            acc.prepare_by_value(k, np.max_row_nnz, np.sorted, vp.is_some())?;
            dense::fill_rows_by_value(acc, p, rows, cp, vp)
        }
        AccKind::Linked => {
            let acc = ws.linked::<V>();
            acc.prepare(np.max_row_nnz)?;
            fill_rows(acc, p, rows, cp, vp)
        }
        AccKind::Probe => {
            let acc = ws.probe::<V>();
            acc.prepare(np.max_row_nnz)?;
            fill_rows(acc, p, rows, cp, vp)
        }
    }
}

/// Numeric phase: writes C's column indices (plus the plan's `c_base`) and, when `vals` is
/// given and A and B carry values, C's values.
pub fn numeric<O: Idx, I: Idx, V: Scalar, J: Idx>(
    pool: &WorkspacePool,
    p: &Product<'_, O, I, V>,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    let chunks = p.plan.chunks;
    let (col_pieces, val_pieces) = pieces(chunks, p.plan.row_ptr, cols, vals);
    col_pieces
        .into_par_iter()
        .zip(val_pieces)
        .zip(chunks.par_windows(2))
        .try_for_each(|((cp, vp), w)| pool.with(|ws| fill_chunk(ws, p, w[0]..w[1], cp, vp)))
}

/// Digest of each chunk's columns of C (`chunks` as in the plan), for [`replay`].
pub fn chunk_digests<J: Idx>(chunks: &[usize], row_ptr: &[usize], cols: &[J]) -> Vec<u64> {
    let off0 = row_ptr[chunks[0]];
    chunks
        .par_windows(2)
        .map(|w| {
            let (s, e) = (row_ptr[w[0]], row_ptr[w[1]]);
            rows_digest(&cols[s - off0..e - off0], row_ptr, w[0]..w[1])
        })
        .collect()
}

/// Replay kernel for one chunk: C's columns are the caller's (`cols`, written by an earlier
/// numeric call on this plan), so values are summed into a dense per-thread array and
/// gathered in that order; no hashing, no sorting, no marks. `dense` holds -0.0 everywhere
/// between rows: -0.0 is the exact identity of IEEE addition, so each entry is bitwise the
/// sum the accumulators form. Returns whether `cols` still has the digest `want` (and only
/// columns of C); if not, the values written are garbage and `dense` must be reset.
///
/// With `STREAM` C's values are written with non-temporal stores (see
/// [`REPLAY_STREAM_MIN_BYTES`]) and the chunk ends with a store fence.
fn replay_rows<V: Scalar, O: Idx, I: Idx, J: Idx, const STREAM: bool, const PF: bool>(
    dense: &mut [V],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    rows: std::ops::Range<usize>,
    (row_ptr, c_base): (&[usize], usize),
    cols: &[J],
    vals: Option<&mut [V]>,
    want: u64,
) -> bool {
    let off0 = row_ptr[rows.start];
    let (Some(vals), Some(av), Some(bv)) = (vals, a.values(), b.values()) else {
        return rows_digest(cols, row_ptr, rows) == want;
    };
    let mut digest = ColDigest::at(off0);
    let mut in_range = true;
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let row = &cols[s..e];
        in_range &= replay_row::<V, O, I, J, STREAM, PF>(
            dense,
            (a, b),
            (av, bv),
            (i, c_base),
            row,
            &mut vals[s..e],
        );
        // Row by row (the row is in L1 after the gather). Rows are not aligned to pairs,
        // so the chunk's digest is the same only because positions, not pairs, key it:
        // the pairing restarts at each row.
        digest.extend(row);
    }
    if STREAM {
        // Before the chunk is reported done (or refilled with plain stores).
        stream::fence();
    }
    in_range && digest.sum == want
}

/// [`replay_rows`] over row groups of A (see [`crate::cpu::row_groups`]): the rows of a
/// group are summed together into `lanes` (lane l of column c: row l of the group; all
/// -0.0 between groups), each entry of B loaded once for the group and each lane summed
/// in the order [`replay_rows`] sums its row, so the values are bitwise the same. Single
/// rows go through `dense` as in [`replay_rows`]. Returns as [`replay_rows`]; on `false` both
/// arrays must be reset.
fn replay_rows_grouped<V: Scalar, O: Idx, I: Idx, J: Idx>(
    (dense, lanes): (&mut [V], &mut [[V; LANES]]),
    groups: &RowGroups,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &[J],
    vals: &mut [V],
    want: u64,
) -> bool {
    let (a, b) = (p.a, p.b);
    let (row_ptr, c_base) = (p.plan.row_ptr, p.plan.c_base);
    let (Some(av), Some(bv)) = (a.values(), b.values()) else {
        return rows_digest(cols, row_ptr, rows) == want;
    };
    let off0 = row_ptr[rows.start];
    let neg0 = V::NEG_ZERO;
    let mut digest = ColDigest::at(off0);
    let mut in_range = true;
    for g in groups.within(rows) {
        let (i0, r) = (g.start, g.len());
        let n = row_ptr[i0 + 1] - row_ptr[i0];
        // The replay runs only while every call checks A's structure against the plan's
        // (`exec`), and the groups were found in that structure: its rows share their
        // column list, so their rows of C have the same length.
        debug_assert!((i0 + 1..g.end).all(|i| row_ptr[i + 1] - row_ptr[i] == n));
        if r < 2 {
            for i in g {
                let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
                let (row, out) = (&cols[s..e], &mut vals[s..e]);
                in_range &= replay_row::<V, O, I, J, false, false>(
                    dense,
                    (a, b),
                    (av, bv),
                    (i, c_base),
                    row,
                    out,
                );
                digest.extend(&cols[s..e]);
            }
            continue;
        }
        accumulate_group(lanes, a, b, av, bv, g.clone());
        let s0 = row_ptr[i0] - off0;
        let vals = &mut vals[s0..s0 + r * n];
        for (t, &c) in cols[s0..s0 + n].iter().enumerate() {
            match lanes.get_mut(c.to_usize().wrapping_sub(c_base)) {
                Some(d) => {
                    for (l, &x) in d[..r].iter().enumerate() {
                        vals[l * n + t] = x;
                    }
                    *d = [neg0; LANES];
                }
                None => in_range = false,
            }
        }
        // The other rows' columns are not read: the digest covers them (row by row, as
        // `rows_digest` does), and they equal the first row's when it matches.
        for l in 0..r {
            digest.extend(&cols[s0 + l * n..s0 + (l + 1) * n]);
        }
    }
    in_range && digest.sum == want
}

avx2_copy! {
    /// Sums the products of the rows `rows` of A*B (at most [`LANES`] rows with the same
    /// column list) into `lanes`: lane l of column c (B's 0-based column) gets row
    /// `rows.start + l`'s products, in the order of A's row and B's rows; unused lanes get
    /// zero products (garbage, reset with the rest). Its own function: the lane loop is one
    /// vector multiply-add per entry of B (one 256-bit multiply and add of f64 where the CPU
    /// has AVX2, two 128-bit ones in the base ISA; the same bits: never fused).
    fn accumulate_group<V: Scalar, O: Idx, I: Idx>(
        lanes: &mut [[V; LANES]],
        a: &CsrRef<'_, O, I, V>,
        b: &CsrRef<'_, O, I, V>,
        av: &[V],
        bv: &[V],
        rows: std::ops::Range<usize>,
    ) {
        let entries = GroupEntries::new(a, rows);
        let b_cols = b.col_indices();
        let b_base = b.base();
        for t in 0..entries.len() {
            let al = entries.values(av, t);
            let j = entries.col(a, t);
            let (s, e) = (b.row_start(j), b.row_start(j + 1));
            for (&c, &bq) in b_cols[s..e].iter().zip(&bv[s..e]) {
                let d = &mut lanes[c.to_usize().wrapping_sub(b_base)];
                for l in 0..LANES {
                    d[l] += al[l] * bq;
                }
            }
        }
    }
}

/// One row of [`replay_rows`]: sums row i into `dense`, gathers the values of its columns
/// `row` (C's, plus `c_base`) into `vals` (with `STREAM`, non-temporal stores: the caller
/// fences) and resets them; false if a column is out of range.
#[inline(always)]
fn replay_row<V: Scalar, O: Idx, I: Idx, J: Idx, const STREAM: bool, const PF: bool>(
    dense: &mut [V],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    (i, c_base): (usize, usize),
    row: &[J],
    vals: &mut [V],
) -> bool {
    let neg0 = V::NEG_ZERO;
    sum_row::<V, O, I, PF>(dense, (a, b), (av, bv), i);
    let mut in_range = true;
    for (dv, &c) in vals.iter_mut().zip(row) {
        match dense.get_mut(c.to_usize().wrapping_sub(c_base)) {
            Some(slot) => take::<V, STREAM>(dv, slot, neg0),
            None => in_range = false,
        }
    }
    in_range
}

/// [`replay_rows`] from the recorded columns `rec` instead of the caller's: each row's
/// columns are written to `cols` (plus `c_base`) while its values are gathered. Returns
/// the chunk's digest. `dense` as for [`replay_rows`].
fn replay_rows_recorded<V: Scalar, O: Idx, I: Idx, J: Idx, const STREAM: bool, const PF: bool>(
    dense: &mut [V],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    rows: std::ops::Range<usize>,
    (row_ptr, c_base, rec): (&[usize], usize, &ColumnRecord),
    (cols, vals): (&mut [J], &mut [V]),
) -> u64 {
    let neg0 = V::NEG_ZERO;
    let off0 = row_ptr[rows.start];
    let mut digest = ColDigest::at(off0);
    rec.for_rows(rows, row_ptr, |i, r| {
        sum_row::<V, O, I, PF>(dense, (a, b), (av, bv), i);
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let (out_c, out_v) = (&mut cols[s..e], &mut vals[s..e]);
        for ((oc, ov), &c) in out_c.iter_mut().zip(out_v).zip(r) {
            *oc = J::try_from_usize(c as usize + c_base).expect("column checked at symbolic time");
            take::<V, STREAM>(ov, &mut dense[c as usize], neg0);
        }
        digest.extend(out_c);
    });
    if STREAM {
        stream::fence();
    }
    digest.sum
}

/// From this size of C's values on (twice the benchmark machine's 32 MiB LLC; below it part
/// of C is still cached from the previous call) the replay writes them with non-temporal
/// stores ([`crate::cpu::stream`]), so no line is read from memory only to be overwritten
/// (docs/DESIGN-NOTES.md, cpu::gustavson (replay)). The grouped replay
/// ([`replay_rows_grouped`]) writes r rows at once and is not streamed.
pub(crate) const REPLAY_STREAM_MIN_BYTES: usize = 64 << 20;

/// What a replay did: chunks replayed, and chunks whose columns in the caller's array
/// differed from the plan's record and were computed afresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    pub replayed: usize,
    pub refilled: usize,
}

/// What a replay does with slot maps ([`crate::cpu::slot_map`]).
pub enum Maps<'m> {
    /// None: the dense replay.
    Off,
    /// The plan's maps: chunks with one replay through it.
    Use(&'m SlotMaps),
    /// The plan's maps, not for this call's values (no values, or the maps' conditions
    /// do not hold): only to restore a chunk's changed columns in the maps' order.
    Restore(&'m SlotMaps),
    /// The plan has none yet: chunks that can get one build it while they replay (the
    /// slot `None` gets the maps unless C is streamed, when maps are not built).
    Build(&'m mut Option<SlotMaps>),
}

/// Numeric phase for a plan that recorded the digests of C's columns (`digests`, one per
/// chunk, see [`chunk_digests`]): each chunk trusts the columns already in the caller's
/// `cols` when they still have the recorded digest and only recomputes values; a chunk
/// whose columns differ (a fresh or changed array) is computed afresh with `kind`, then,
/// when the plan keeps the symbolic phase's columns (`rec`), filled from them, so that its
/// columns are in the order of every other call (a compressed count records them in
/// another order than the kernels find them). Only valid when the structure of A and B is
/// the plan's (checked by the caller). With `maps`, chunks replay through their slot map
/// or build it (see [`Maps`]).
pub fn replay<O: Idx, I: Idx, V: Scalar, J: Idx>(
    pool: &WorkspacePool,
    p: &Product<'_, O, I, V>,
    (digests, rec): (&[u64], Option<&ColumnRecord>),
    (cols, vals): (&mut [J], Option<&mut [V]>),
    maps: Maps<'_>,
) -> Result<ReplayReport> {
    let np = p.plan;
    let (chunks, row_ptr) = (np.chunks, np.row_ptr);
    let streamed = cols.len().saturating_mul(std::mem::size_of::<V>()) >= REPLAY_STREAM_MIN_BYTES;
    let (col_pieces, val_pieces) = pieces(chunks, row_ptr, cols, vals);
    let (use_maps, restore, build) = match &maps {
        Maps::Off => (None, None, false),
        Maps::Use(m) => (Some(*m), Some(*m), false),
        Maps::Restore(m) => (None, Some(*m), false),
        Maps::Build(_) => (None, None, !streamed),
    };
    let refilled = std::sync::atomic::AtomicUsize::new(0);
    let built = col_pieces
        .into_par_iter()
        .zip(val_pieces)
        .zip(digests)
        .zip(chunks.par_windows(2).enumerate())
        .map(|(((cp, mut vp), &want), (ci, w))| {
            pool.with(|ws| {
                let rows = w[0]..w[1];
                if let (Some(map), Some(vals), Some(av), Some(bv)) = (
                    use_maps.and_then(|m| m.chunk(ci)),
                    vp.as_deref_mut(),
                    p.a.values(),
                    p.b.values(),
                ) && slot_map::replay_mapped(
                    (p.a, p.b),
                    (av, bv),
                    rows.clone(),
                    row_ptr,
                    cp,
                    vals,
                    (map, want),
                ) {
                    return Ok(None);
                }
                if build
                    && let Some(map) = build_map(ws, p, rows.clone(), cp, vp.as_deref_mut(), want)?
                {
                    return Ok(Some(map));
                }
                if !replay_chunk(ws, p, streamed, rows.clone(), cp, vp.as_deref_mut(), want)? {
                    refilled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if let Some(rec) = rec {
                        // Rare (an array at the address of one this plan filled): a
                        // second pass, from the record's columns.
                        let want = copy_recorded(rec, rows.clone(), (row_ptr, np.c_base), cp);
                        replay_chunk(ws, p, streamed, rows, cp, vp, want)?;
                    } else if let Some(map) = restore.and_then(|m| m.chunk(ci)) {
                        // The same from the map (the record was dropped for the maps): the
                        // columns restored replay, garbage ones are computed afresh again.
                        let cols = (row_ptr, np.c_base);
                        slot_map::columns_mapped((p.a, p.b), rows.clone(), cols, cp, (map, want));
                        replay_chunk(ws, p, streamed, rows, cp, vp, want)?;
                    }
                }
                Ok(None)
            })
        })
        .collect::<Result<Vec<Option<Vec<u8>>>>>()?;
    if let (Maps::Build(slot), true) = (maps, build) {
        *slot = Some(SlotMaps { chunks: built });
    }
    let refilled = refilled.into_inner();
    Ok(ReplayReport {
        replayed: digests.len() - refilled,
        refilled,
    })
}

/// A fresh array filled through the slot maps of a plan whose every chunk has one (see
/// `slot_map::columns_mapped`): C's columns in the order the maps were built for, and its
/// values when `vals` is given, bitwise the replay's. False when a chunk's columns came out
/// with another digest than `digests` (the array is then garbage).
pub fn fill_mapped<O: Idx, I: Idx, V: Scalar, J: Idx>(
    p: &Product<'_, O, I, V>,
    digests: &[u64],
    maps: &SlotMaps,
    (cols, vals): (&mut [J], Option<&mut [V]>),
) -> bool {
    let np = p.plan;
    let (chunks, row_ptr) = (np.chunks, np.row_ptr);
    let (col_pieces, val_pieces) = pieces(chunks, row_ptr, cols, vals);
    col_pieces
        .into_par_iter()
        .zip(val_pieces)
        .zip(digests)
        .zip(chunks.par_windows(2).enumerate())
        .all(|(((cp, vp), &want), (ci, w))| {
            let rows = w[0]..w[1];
            let Some(map) = maps.chunk(ci) else {
                return false;
            };
            if !slot_map::columns_mapped(
                (p.a, p.b),
                rows.clone(),
                (row_ptr, np.c_base),
                cp,
                (map, want),
            ) {
                return false;
            }
            match (vp, p.a.values(), p.b.values()) {
                (None, _, _) => true,
                (Some(vals), Some(av), Some(bv)) => slot_map::replay_mapped(
                    (p.a, p.b),
                    (av, bv),
                    rows,
                    row_ptr,
                    cp,
                    vals,
                    (map, want),
                ),
                _ => false,
            }
        })
}

/// One chunk of a replay that builds its slot map: the map, with the chunk's values
/// written; None when the chunk gets none (no values, a row too long for a slot, no memory
/// for the map or its scratch, or its columns changed: the caller then replays it as
/// usual, which also computes a changed chunk afresh).
fn build_map<O: Idx, I: Idx, V: Scalar, J: Idx>(
    ws: &mut Workspace,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cp: &mut [J],
    vp: Option<&mut [V]>,
    want: u64,
) -> Result<Option<Vec<u8>>> {
    let (a, b, np) = (p.a, p.b, p.plan);
    let (Some(vals), Some(av), Some(bv)) = (vp, a.values(), b.values()) else {
        return Ok(None);
    };
    if !slot_map::rows_fit(np.row_ptr, rows.clone()) {
        return Ok(None);
    }
    let Some(n) = slot_map::products(a, b, rows.clone()) else {
        return Ok(None);
    };
    let mut map = Vec::new();
    let mut pos = Vec::new();
    if map.try_reserve_exact(n).is_err() || pos.try_reserve_exact(b.ncols()).is_err() {
        return Ok(None);
    }
    pos.resize(b.ncols(), 0u8);
    let k = b.ncols();
    let dense = replay_values::<V>(ws, k)?;
    let ok = slot_map::replay_building(
        (dense, &mut pos),
        (a, b),
        (av, bv),
        rows.clone(),
        (np.row_ptr, np.c_base),
        cp,
        vals,
        (&mut map, want),
    );
    if ok && map.len() == n {
        return Ok(Some(map));
    }
    dense.fill(V::NEG_ZERO);
    Ok(None)
}

/// Numeric phase from the columns the symbolic phase kept (`rec`): each chunk copies its
/// rows' columns into the caller's `cols` (plus the plan's `c_base`) and runs the replay
/// kernel on them. Returns the chunks' digests (see [`chunk_digests`]) for later calls.
/// Only valid when the structure of A and B is the plan's (checked by the caller).
pub fn replay_recorded<O: Idx, I: Idx, V: Scalar, J: Idx>(
    pool: &WorkspacePool,
    p: &Product<'_, O, I, V>,
    rec: &ColumnRecord,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<Vec<u64>> {
    let np = p.plan;
    let (chunks, row_ptr) = (np.chunks, np.row_ptr);
    let streamed = cols.len().saturating_mul(std::mem::size_of::<V>()) >= REPLAY_STREAM_MIN_BYTES;
    let (col_pieces, val_pieces) = pieces(chunks, row_ptr, cols, vals);
    col_pieces
        .into_par_iter()
        .zip(val_pieces)
        .zip(chunks.par_windows(2))
        .map(|((cp, mut vp), w)| {
            pool.with(|ws| {
                let rows = w[0]..w[1];
                let k = p.b.ncols();
                if let (None, Some(vals), Some(av), Some(bv)) =
                    (np.groups, vp.as_deref_mut(), p.a.values(), p.b.values())
                {
                    // Without row groups: one pass, the columns copied as the values are
                    // gathered.
                    let d = replay_values::<V>(ws, k)?;
                    let ab = (p.a, p.b);
                    let at = (row_ptr, np.c_base, rec);
                    let r = rows.clone();
                    macro_rules! run {
                        ($stream:literal, $pf:literal) => {
                            replay_rows_recorded::<V, O, I, J, $stream, $pf>(
                                d,
                                ab,
                                (av, bv),
                                r,
                                at,
                                (cp, vals),
                            )
                        };
                    }
                    return Ok(match (streamed, np.prefetch) {
                        (true, false) => run!(true, false),
                        (false, false) => run!(false, false),
                        (true, true) => run!(true, true),
                        (false, true) => run!(false, true),
                    });
                }
                // Row groups or no values: the copied columns go through the digest replay
                // (which reads them once more; these plans are the rarer ones).
                let want = copy_recorded(rec, rows.clone(), (row_ptr, np.c_base), cp);
                Ok(
                    if replay_chunk(ws, p, streamed, rows.clone(), cp, vp, want)? {
                        want
                    } else {
                        // Computed afresh (cannot happen while the record is the plan's).
                        rows_digest(cp, row_ptr, rows)
                    },
                )
            })
        })
        .collect()
}

/// The worker's replay value array for `k` columns (all -0.0), grown when needed.
fn replay_values<V: Scalar>(ws: &mut Workspace, k: usize) -> Result<&mut [V]> {
    if ws.replay::<V>().len() < k {
        ws.dense_rows::<V>().release_for_replay();
        let dense = ws.replay::<V>();
        crate::platform::alloc::try_grow(dense, k, V::NEG_ZERO, "replay value array")?;
    }
    Ok(&mut ws.replay::<V>()[..k])
}

/// Copies the recorded columns of rows `rows` into `cp` (which holds exactly those rows),
/// plus `c_base`; returns their digest.
fn copy_recorded<J: Idx>(
    rec: &ColumnRecord,
    rows: std::ops::Range<usize>,
    (row_ptr, c_base): (&[usize], usize),
    cp: &mut [J],
) -> u64 {
    let off0 = row_ptr[rows.start];
    let mut d = ColDigest::at(off0);
    rec.for_rows(rows, row_ptr, |i, r| {
        let out = &mut cp[row_ptr[i] - off0..row_ptr[i + 1] - off0];
        for (o, &c) in out.iter_mut().zip(r) {
            *o = J::try_from_usize(c as usize + c_base).expect("column checked at symbolic time");
        }
        d.extend(out);
    });
    d.sum
}

/// One chunk of [`replay`] (rows `rows`, whose columns and values `cp` and `vp` hold) with
/// worker workspace `ws`: true when the chunk's columns still had the digest `want` and
/// only its values were recomputed, false when it was computed afresh. With `streamed`
/// the values are written with non-temporal stores (see [`REPLAY_STREAM_MIN_BYTES`]).
pub(crate) fn replay_chunk<O: Idx, I: Idx, V: Scalar, J: Idx>(
    ws: &mut Workspace,
    p: &Product<'_, O, I, V>,
    streamed: bool,
    rows: std::ops::Range<usize>,
    cp: &mut [J],
    mut vp: Option<&mut [V]>,
    want: u64,
) -> Result<bool> {
    let (a, b, np) = (p.a, p.b, p.plan);
    let (row_ptr, c_base, prefetch) = (np.row_ptr, np.c_base, np.prefetch);
    let k = b.ncols();
    // The lanes take LANES values per column: only while they fit the replay's budget.
    let lane_bytes = k
        .saturating_mul(LANES)
        .saturating_mul(std::mem::size_of::<V>());
    let lane_groups = np
        .groups
        .filter(|_| lane_bytes <= crate::cpu::args::REPLAY_MAX_DENSE_BYTES);
    if let (Some(g), Some(vals)) = (lane_groups, vp.as_deref_mut()) {
        if ws.replay::<V>().len() < k {
            ws.dense_rows::<V>().release_for_replay();
        }
        let (dense, lanes) = ws.replay_grouped::<V>();
        if dense.len() < k {
            crate::platform::alloc::try_grow(dense, k, V::NEG_ZERO, "replay value array")?;
        }
        if lanes.len() < k {
            let neg0 = [V::NEG_ZERO; LANES];
            crate::platform::alloc::try_grow(lanes, k, neg0, "grouped replay values")?;
        }
        let (dense, lanes) = (&mut dense[..k], &mut lanes[..k]);
        if replay_rows_grouped((dense, lanes), g, p, rows.clone(), cp, vals, want) {
            return Ok(true);
        }
        dense.fill(V::NEG_ZERO);
        lanes.fill([V::NEG_ZERO; LANES]);
    } else if vp.is_some() {
        let dense = replay_values::<V>(ws, k)?;
        let (r, vals) = (rows.clone(), vp.as_deref_mut());
        let ok = match (streamed, prefetch) {
            (true, false) => replay_rows::<V, O, I, J, true, false>(
                dense,
                (a, b),
                r,
                (row_ptr, c_base),
                cp,
                vals,
                want,
            ),
            (false, false) => replay_rows::<V, O, I, J, false, false>(
                dense,
                (a, b),
                r,
                (row_ptr, c_base),
                cp,
                vals,
                want,
            ),
            (true, true) => replay_rows::<V, O, I, J, true, true>(
                dense,
                (a, b),
                r,
                (row_ptr, c_base),
                cp,
                vals,
                want,
            ),
            (false, true) => replay_rows::<V, O, I, J, false, true>(
                dense,
                (a, b),
                r,
                (row_ptr, c_base),
                cp,
                vals,
                want,
            ),
        };
        if ok {
            return Ok(true);
        }
        dense.fill(V::NEG_ZERO);
    } else if rows_digest(cp, row_ptr, rows.clone()) == want {
        return Ok(true);
    }
    fill_chunk(ws, p, rows, cp, vp)?;
    Ok(false)
}

/// Dense symbolic phase over all rows of A on the current rayon pool: row sizes of C and
/// flops in one pass. Rows are split by A's nonzeros (the flops are not known yet);
/// several chunks per worker even out the rest. Each chunk also returns its sums and
/// maxima, so the prefix sums over the rows are one parallel pass (each chunk adds the
/// totals of the chunks before it) instead of a serial one plus a pass for the maxima.
///
/// With `record` (Some((sorted, budget in bytes))) each chunk also writes its rows'
/// columns, which the result carries as a [`ColumnRecord`] (None if it outgrew the budget
/// or memory for it ran out).
#[allow(clippy::too_many_arguments)]
pub fn symbolic_dense<O: Idx, I: Idx, V: Scalar>(
    pool: &WorkspacePool,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    cb: Option<&CompressedRows>,
    groups: Option<&RowGroups>,
    threads: usize,
    (prefetch, runs): (bool, bool),
    record: Option<(bool, usize)>,
) -> Result<dense::Counted> {
    let m = a.nrows();
    let k = b.ncols();
    let mut row_ptr = try_zeroed_vec::<usize>(m + 1, "row offsets of C")?;
    let nblocks = m.div_ceil(FLOP_BLOCK);
    // block_prefix[q] = flops of rows 0..q * FLOP_BLOCK (after the prefix pass below).
    let mut block_prefix = try_zeroed_vec::<u64>(nblocks + 1, "flop counts")?;
    let a0 = a.row_start(0);
    // Chunk boundaries on whole flop blocks, so each block's sum is written by one chunk.
    let mut chunks = vec![0usize];
    for r in balanced_chunks_by(m, threads, |i| (a.row_start(i).wrapping_sub(a0) + i) as u64) {
        let r = if r == m {
            m
        } else {
            r / FLOP_BLOCK * FLOP_BLOCK
        };
        if r > *chunks.last().unwrap() {
            chunks.push(r);
        }
    }
    if m == 0 {
        chunks.push(0);
    }
    let block_bounds: Vec<usize> = chunks.iter().map(|&r| r.div_ceil(FLOP_BLOCK)).collect();
    let mut pieces: Vec<Vec<u32>> = match record {
        Some(_) => (1..chunks.len()).map(|_| Vec::new()).collect(),
        None => Vec::new(),
    };
    // The record's budget in columns, which the chunks draw from.
    let budget = std::sync::atomic::AtomicUsize::new(record.map_or(0, |r| r.1) / 4);
    let mut piece_slots: Vec<Option<&mut Vec<u32>>> = pieces.iter_mut().map(Some).collect();
    piece_slots.resize_with(chunks.len() - 1, || None);
    let (totals, recorded): (Vec<dense::ChunkTotals>, Vec<bool>) = {
        let nnz_pieces = split_at_bounds(&mut row_ptr[1..], &chunks);
        let flop_pieces = split_at_bounds(&mut block_prefix[1..], &block_bounds);
        nnz_pieces
            .into_par_iter()
            .zip(flop_pieces)
            .zip(piece_slots)
            .zip(chunks.par_windows(2))
            .map(|(((np, fp), out), w)| {
                pool.with(|ws| {
                    let acc = ws.dense_rows::<V>();
                    acc.prepare_symbolic(k, cb.is_some(), (prefetch, runs))?;
                    let sorted = record.is_some_and(|r| r.0);
                    let mut rec = out.map(|out| Recorder::new(out, sorted, &budget));
                    let t = dense::count_rows(
                        acc,
                        (a, b),
                        cb,
                        groups,
                        w[0]..w[1],
                        np,
                        fp,
                        rec.as_mut(),
                    );
                    Ok((t, rec.is_some_and(|r| !r.failed)))
                })
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip()
    };
    // Offsets of each chunk: the totals of the chunks before it. A row's count is at
    // most its flops, so row_ptr cannot overflow before the flops do; the flops are
    // summed with a check (2^64 multiplications is far beyond any input that fits in
    // memory, but a wrap would be silently wrong).
    let overflow = || {
        crate::error::Error::new(
            Status::IndexOverflow,
            "the number of multiplications of A*B exceeds 2^64",
        )
    };
    let mut starts = Vec::with_capacity(totals.len());
    let (mut n0, mut f0) = (0usize, 0u64);
    let mut max_row_nnz = 0usize;
    for t in &totals {
        if t.overflow {
            return Err(overflow());
        }
        starts.push((n0, f0));
        n0 += t.nnz;
        f0 = f0.checked_add(t.flops).ok_or_else(overflow)?;
        max_row_nnz = max_row_nnz.max(t.max_nnz);
    }
    {
        let nnz_pieces = split_at_bounds(&mut row_ptr[1..], &chunks);
        nnz_pieces
            .into_par_iter()
            .zip(&starts)
            .for_each(|(np, &(mut n, _))| {
                for x in np.iter_mut() {
                    n += *x;
                    *x = n;
                }
            });
    }
    // A few thousand block sums at most per million rows: serial.
    for (q, &(_, f)) in block_bounds.windows(2).zip(&starts) {
        let mut f = f;
        for x in &mut block_prefix[q[0] + 1..=q[1]] {
            // No overflow: the chunk totals were summed with a check.
            f += *x;
            *x = f;
        }
    }
    let numeric_chunks = balanced_chunks_blocked(m, FLOP_BLOCK, &block_prefix, threads, |i| {
        a.row_range(i).map(|p| b.row_len(a.col(p)) as u64).sum()
    });
    let record = if record.is_some() && recorded.iter().all(|&r| r) {
        ColumnRecord::new(chunks, pieces, &row_ptr)
    } else {
        None
    };
    Ok(dense::Counted {
        row_ptr,
        flops: f0,
        chunks: numeric_chunks,
        max_row_nnz,
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*, so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 16) as usize % n.max(1)
        }
    }

    fn ix<J: Idx>(v: usize) -> J {
        J::try_from_usize(v).unwrap()
    }

    fn bits<V: Scalar>(v: V) -> u64 {
        // SAFETY: V is f32 or f64, read as an integer of its size.
        unsafe {
            match std::mem::size_of::<V>() {
                4 => std::mem::transmute_copy::<V, u32>(&v) as u64,
                _ => std::mem::transmute_copy::<V, u64>(&v),
            }
        }
    }

    /// A random m x kk times kk x n product with duplicate columns in A's and B's rows,
    /// empty rows, -0.0, +0.0, NaN and infinities among the values; C's columns in
    /// first-touch order or reversed (`sorted`: any order of a row's columns is a
    /// replay's input). Checks the streamed and the plain replay kernels on two chunks
    /// against sums formed independently, bitwise, and that both reject a changed column
    /// (digest) and a column out of range without touching memory outside `dense`.
    fn check<V: Scalar, J: Idx>(seed: u64, base: usize, sorted: bool, offset: usize) {
        let mut rng = Rng(seed | 1);
        let (m, kk, n) = (37, 23, 300);
        let specials = [-0.0, 0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let mut csr = |rows: usize, cols: usize, max: usize| {
            let (mut ptr, mut col, mut val) = (vec![ix::<J>(base)], vec![], vec![]);
            for _ in 0..rows {
                let len = if rng.below(8) == 0 {
                    0
                } else {
                    rng.below(max + 1)
                };
                for _ in 0..len {
                    col.push(ix::<J>(rng.below(cols) + base));
                    let v = match rng.below(12) {
                        t @ 0..5 => specials[t],
                        t => (t as f64 - 8.0) * 0.375,
                    };
                    val.push(V::from_f64(v));
                }
                ptr.push(ix::<J>(col.len() + base));
            }
            (ptr, col, val)
        };
        let (ap, ac, avals) = csr(m, kk, 6);
        let (bp, bc, bvals) = csr(kk, n, 40);
        let a = CsrRef::new(m, kk, base, &ap, &ac, Some(&avals)).unwrap();
        let b = CsrRef::new(kk, n, base, &bp, &bc, Some(&bvals)).unwrap();
        // C's structure and values: a column's sum starts at its first product.
        let (mut row_ptr, mut cols, mut want) = (vec![0usize], Vec::<J>::new(), Vec::new());
        for i in 0..m {
            let mut row: Vec<(usize, V)> = Vec::new();
            for p in a.row_range(i) {
                for q in b.row_range(a.col(p)) {
                    let x = avals[p] * bvals[q];
                    match row.iter_mut().find(|e| e.0 == b.col(q)) {
                        Some(e) => e.1 += x,
                        None => row.push((b.col(q), x)),
                    }
                }
            }
            if sorted {
                row.reverse();
            }
            cols.extend(row.iter().map(|e| ix::<J>(e.0 + base)));
            want.extend(row.iter().map(|e| bits(e.1)));
            row_ptr.push(cols.len());
        }
        let chunks = [0, m / 2, m];
        let digests = chunk_digests(&chunks, &row_ptr, &cols);
        // With and without the prefetches of B's rows (the same sums either way).
        let run = |stream: bool, pf: bool, cols: &[J]| {
            let mut store = vec![V::from_f64(7.0); cols.len() + offset];
            let vals = &mut store[offset..];
            let mut dense = vec![V::NEG_ZERO; n];
            let mut ok = true;
            for (t, w) in chunks.windows(2).enumerate() {
                let (s, e) = (row_ptr[w[0]], row_ptr[w[1]]);
                let (c, v) = (&cols[s..e], Some(&mut vals[s..e]));
                let (r, d) = (w[0]..w[1], digests[t]);
                let dn = &mut dense;
                ok &= match (stream, pf) {
                    (true, false) => replay_rows::<V, J, J, J, true, false>(
                        dn,
                        (&a, &b),
                        r,
                        (&row_ptr, base),
                        c,
                        v,
                        d,
                    ),
                    (false, false) => replay_rows::<V, J, J, J, false, false>(
                        dn,
                        (&a, &b),
                        r,
                        (&row_ptr, base),
                        c,
                        v,
                        d,
                    ),
                    (true, true) => replay_rows::<V, J, J, J, true, true>(
                        dn,
                        (&a, &b),
                        r,
                        (&row_ptr, base),
                        c,
                        v,
                        d,
                    ),
                    (false, true) => replay_rows::<V, J, J, J, false, true>(
                        dn,
                        (&a, &b),
                        r,
                        (&row_ptr, base),
                        c,
                        v,
                        d,
                    ),
                };
            }
            let reset = dense.iter().all(|&x| bits(x) == bits(V::NEG_ZERO));
            (ok, reset, vals.iter().map(|&x| bits(x)).collect::<Vec<_>>())
        };
        let what = format!("seed {seed} base {base} sorted {sorted} offset {offset}");
        assert!(cols.len() > 1000, "{what}: C too small ({})", cols.len());
        for (stream, pf) in [(true, false), (false, false), (true, true), (false, true)] {
            assert_eq!(
                run(stream, pf, &cols),
                (true, true, want.clone()),
                "{what} {stream} {pf}"
            );
            // A changed column (still in range) fails the digest of its chunk.
            let mut changed = cols.clone();
            let t = cols.len() * 3 / 4;
            changed[t] = ix::<J>((changed[t].to_usize() - base + 1) % n + base);
            assert!(
                !run(stream, pf, &changed).0,
                "{what} {stream}: changed column"
            );
            // A column out of range is reported, not followed.
            let mut far = cols.clone();
            far[t / 3] = ix::<J>(n + base + 5);
            assert!(
                !run(stream, pf, &far).0,
                "{what} {stream}: column out of range"
            );
        }
    }

    #[test]
    fn streamed_and_plain_replay_match_reference() {
        for seed in 1..4 {
            for base in [0, 1] {
                for sorted in [false, true] {
                    for offset in [0, 1, 3] {
                        check::<f64, i32>(seed, base, sorted, offset);
                        check::<f64, i64>(seed, base, sorted, offset);
                        check::<f32, i32>(seed, base, sorted, offset);
                        check::<f32, i64>(seed, base, sorted, offset);
                    }
                }
            }
        }
    }
}
