//! KKDENSE kernels written for this CPU: the dense accumulator of the KokkosKernels paper
//! (a slot per column of C, O(k) memory per thread), with the row loop specialised instead
//! of going through the generic [`crate::cpu::accum::Accumulator`] interface.
//!
//! Symbolic ([`count_rows`]): one pass over the rows of A that both counts the
//! multiplications of each row and unions its columns in a dense bit map (k/8 bytes per
//! thread), so no separate flop-count pass over A is needed before the count.
//!
//! Numeric ([`fill_rows`]): `pos[c]` holds the slot of column c in the current row (or
//! `EMPTY`); values are summed in a small row buffer that stays in the L1 cache and is
//! copied out once per row. First-touch order and the order of the additions are those
//! of the other accumulators, so the output is bitwise identical to theirs and
//! independent of the thread count. Memory per thread: 4 bytes per column of C (the
//! paper's KKDENSE keeps a value and a marker per column: 12 bytes with f64, three times
//! the cache footprint). The insert branches on "new or old": a branch-free select
//! measured slower on every benchmark input (docs/DESIGN-NOTES.md, cpu::dense).
//!
//! Both numeric kernels take A's row groups (see [`crate::cpu::row_groups`]): the rows of
//! a group share their columns of C and first-touch order, so [`fill_group`] and
//! [`fill_group_by_value`] find the columns once, sum each row in its own lane of an
//! interleaved accumulator (one load of each entry of B for the group, each lane in the
//! order of the single-row kernel: bitwise its output), emit (for sorted output: sort)
//! the columns once and copy them to the group's other rows.
//!
//! Numeric by value ([`fill_rows_by_value`], chosen by `select::numeric_kind` for
//! products with many multiplications per entry of C): the paper's layout after all, a
//! value per column (-0.0 between rows, as in the replay kernel, so the sums are bitwise
//! the same) and a stamp mark per column, but the mark is read only when the loaded value
//! is zero (see [`accumulate_row`]). Per product it makes the replay kernel's loads, the
//! slot kernel one more dependent load (the slot); where few products share an entry the
//! larger footprint costs more than the load saves (see `select::BY_VALUE_MIN_PRODUCTS`).
//! Testing the mark on every product, and kernels with no per-product "new column"
//! branch, were slower (docs/DESIGN-NOTES.md, cpu::dense).

use crate::common::csr::CsrRef;
use crate::common::memory::bytes_of;
use crate::cpu::args::{Product, REPLAY_MAX_DENSE_BYTES};
use crate::cpu::compress::CompressedRows;
use crate::cpu::prefetch;
use crate::cpu::record::Recorder;
use crate::cpu::row_groups::{GroupEntries, LANES, RowGroups, same_columns};
use crate::cpu::sort::{INSERTION_MAX, RANK_MAX, ShortOrder, rank_short, sort_compared, sort_keys};
use crate::cpu::symbolic::WORD_BITS;
use crate::cpu::util::{row_len_mismatch, value_pair};
use crate::error::{Error, Result};
use crate::platform::alloc::{release_pages, try_grow, try_reserve};
use crate::types::{Idx, Scalar};

/// `pos` value of a column that is not in the current row.
const EMPTY: u32 = u32::MAX;

/// The stamp after `stamp` for `mark` (a row is marked by its stamp). After 2^32 - 1 rows
/// the stamps wrap: every old mark is forgotten once and counting restarts at 1.
#[inline(always)]
fn next_stamp(stamp: u32, mark: &mut [u32]) -> u32 {
    match stamp.wrapping_add(1) {
        0 => {
            mark.fill(0);
            1
        }
        s => s,
    }
}

/// Per-thread state of the dense kernels (one per worker in the ONE2ONE pool).
pub struct DenseRows<V> {
    /// Numeric: slot of each column in the current row; `EMPTY` between rows.
    pos: Vec<u32>,
    /// Numeric: columns of the current row in first-touch order (`cap` slots).
    row_cols: Vec<u32>,
    /// Numeric: the sums of the current row, by slot.
    row_vals: Vec<V>,
    /// Numeric by value ([`fill_rows_by_value`]): the value of each column of C (indexed
    /// by B's raw column) in the current row; -0.0 between rows. Shared with the replay
    /// kernel, which keeps the same invariant.
    dense: Vec<V>,
    /// Numeric, sorted output: one bit per column of C for emitting rows in column order
    /// (see [`emit_row`]); all zero between rows.
    order_bits: Vec<u64>,
    /// Numeric, sorted output: one bit per word of `order_bits` (a summary level); all
    /// zero between rows.
    order_l1: Vec<u64>,
    /// Numeric, sorted output: one bit per word of `order_l1`; all zero between rows.
    order_l2: Vec<u64>,
    /// Numeric over row groups ([`fill_rows`]): the sums of the current group, by slot,
    /// lane l for row l of the group (`cap` slots, like `row_vals`).
    row_lanes: Vec<[V; LANES]>,
    /// Numeric by value over row groups: the values of each column of C (indexed by B's
    /// raw column), a lane per row of the group; all -0.0 between groups.
    lanes: Vec<[V; LANES]>,
    /// Symbolic and numeric by value: `mark[c] == stamp` when column c (raw index) is in
    /// the current row.
    mark: Vec<u32>,
    stamp: u32,
    /// Symbolic with compressed B: one bit per column of C; all zero between rows.
    bits: Vec<u64>,
    /// The kernels prefetch the rows of B ahead (see [`crate::cpu::prefetch`]); set by
    /// `prepare_symbolic` and `prepare_numeric` for the product at hand.
    prefetch: bool,
    /// The plain count walks runs of consecutive columns of A (`RUNS` of [`count_plain`];
    /// not the count that keeps a record, nor one that prefetches); set by
    /// `prepare_symbolic`.
    runs: bool,
    /// Symbolic: the words of `bits` the current row touched.
    touched: Vec<u32>,
}

impl<V: Scalar> Default for DenseRows<V> {
    fn default() -> Self {
        DenseRows {
            pos: Vec::new(),
            row_cols: Vec::new(),
            row_vals: Vec::new(),
            dense: Vec::new(),
            row_lanes: Vec::new(),
            lanes: Vec::new(),
            order_bits: Vec::new(),
            order_l1: Vec::new(),
            order_l2: Vec::new(),
            mark: Vec::new(),
            stamp: 0,
            bits: Vec::new(),
            touched: Vec::new(),
            prefetch: false,
            runs: false,
        }
    }
}

impl<V: Scalar> DenseRows<V> {
    /// Bytes [`DenseRows::prepare_symbolic`] allocates for `k` columns (kept in step).
    pub fn symbolic_bytes(k: usize, compressed: bool) -> u64 {
        if !compressed {
            return bytes_of::<u32>(k.saturating_add(1));
        }
        let nw = k.div_ceil(WORD_BITS);
        bytes_of::<u64>(nw).saturating_add(bytes_of::<u32>(nw.min(1 << 16)))
    }

    /// Bytes [`DenseRows::prepare_numeric`] allocates, plus the group lanes of
    /// [`fill_rows`] when `lanes` (kept in step with both).
    pub fn numeric_bytes(k: usize, max_row: usize, sorted: bool, lanes: bool) -> u64 {
        let cap = max_row.min(k).saturating_add(1);
        let mut b = bytes_of::<u32>(k)
            .saturating_add(bytes_of::<u32>(cap))
            .saturating_add(bytes_of::<V>(cap));
        if sorted {
            b = b.saturating_add(Self::order_bytes(k));
        }
        if lanes {
            b = b.saturating_add(bytes_of::<[V; LANES]>(cap));
        }
        b
    }

    /// Bytes [`DenseRows::prepare_by_value`] allocates, plus the group lanes of
    /// [`fill_rows_by_value`] when `lanes` (kept in step with both).
    pub fn by_value_bytes(
        k: usize,
        max_row: usize,
        sorted: bool,
        values: bool,
        lanes: bool,
    ) -> u64 {
        let slots = k.saturating_add(1);
        let mut b = bytes_of::<u32>(slots).saturating_add(bytes_of::<u32>(max_row.min(k).max(1)));
        if values {
            b = b.saturating_add(bytes_of::<V>(slots));
        }
        if sorted {
            b = b.saturating_add(Self::order_bytes(k));
        }
        if lanes {
            b = b.saturating_add(bytes_of::<[V; LANES]>(slots));
        }
        b
    }

    fn order_bytes(k: usize) -> u64 {
        bytes_of::<u64>(k.div_ceil(64))
            .saturating_add(bytes_of::<u64>(k.div_ceil(64 * 64)))
            .saturating_add(bytes_of::<u64>(k.div_ceil(64 * 64 * 64)))
    }

    /// Sizes the symbolic arrays for `k` columns: the bit map (k/8 bytes) for a
    /// compressed B, the marks (4k bytes) otherwise.
    pub fn prepare_symbolic(
        &mut self,
        k: usize,
        compressed: bool,
        (prefetch, runs): (bool, bool),
    ) -> Result<()> {
        self.prefetch = prefetch;
        self.runs = runs;
        if !compressed {
            // One more slot than columns: `count_rows` indexes by 0- or 1-based column.
            return try_grow(&mut self.mark, k + 1, 0, "dense symbolic marks");
        }
        let nw = k.div_ceil(WORD_BITS);
        try_grow(&mut self.bits, nw, 0, "dense symbolic bit map")?;
        if self.touched.capacity() < nw.min(1 << 16) {
            try_reserve(
                &mut self.touched,
                nw.min(1 << 16),
                "dense symbolic word list",
            )?;
        }
        Ok(())
    }

    /// Sizes the numeric arrays for `k` columns (k <= u32::MAX, checked by the selector)
    /// and rows of up to `max_row` entries; with `sorted` also the order bit maps (k/8
    /// bytes and a 64th and 4096th of that: a 32nd of the slots).
    pub fn prepare_numeric(
        &mut self,
        k: usize,
        max_row: usize,
        sorted: bool,
        prefetch: bool,
    ) -> Result<()> {
        self.prefetch = prefetch;
        try_grow(&mut self.pos, k, EMPTY, "dense accumulator slots")?;
        if sorted {
            self.prepare_order(k)?;
        }
        // One spare slot: the branch-free insert writes the next free slot
        // unconditionally.
        let cap = max_row.min(k) + 1;
        try_grow(&mut self.row_cols, cap, 0, "dense accumulator row columns")?;
        try_grow(
            &mut self.row_vals,
            cap,
            V::ZERO,
            "dense accumulator row values",
        )?;
        Ok(())
    }

    /// Sizes the arrays of [`fill_rows_by_value`] for `k` columns and rows of up to
    /// `max_row` entries: the marks (4k bytes), with `values` the value array (k values),
    /// with `sorted` the order bit maps.
    pub fn prepare_by_value(
        &mut self,
        k: usize,
        max_row: usize,
        sorted: bool,
        values: bool,
    ) -> Result<()> {
        // One more slot than columns: indexed by 0- or 1-based column (see `count_rows`).
        try_grow(&mut self.mark, k + 1, 0, "dense accumulator marks")?;
        if values {
            try_grow(
                &mut self.dense,
                k + 1,
                V::NEG_ZERO,
                "dense accumulator values",
            )?;
        }
        if sorted {
            self.prepare_order(k)?;
        }
        let cap = max_row.min(k).max(1);
        try_grow(&mut self.row_cols, cap, 0, "dense accumulator row columns")
    }

    fn prepare_order(&mut self, k: usize) -> Result<()> {
        try_grow(
            &mut self.order_bits,
            k.div_ceil(64),
            0,
            "dense accumulator order bits",
        )?;
        try_grow(
            &mut self.order_l1,
            k.div_ceil(64 * 64),
            0,
            "dense accumulator order bits",
        )?;
        try_grow(
            &mut self.order_l2,
            k.div_ceil(64 * 64 * 64),
            0,
            "dense accumulator order bits",
        )
    }

    /// Releases the column-sized arrays the replay kernel does not use (marks, slots, bit
    /// maps; see [`release_pages`]), called when the replay first grows the value array,
    /// so that a replayed plan does not keep the first numeric call's arrays resident
    /// beside it. The next kernel that needs them grows them again.
    pub fn release_for_replay(&mut self) {
        release_pages(&mut self.mark);
        release_pages(&mut self.pos);
        release_pages(&mut self.bits);
        release_pages(&mut self.order_bits);
        release_pages(&mut self.order_l1);
        release_pages(&mut self.order_l2);
    }

    /// The value array (all -0.0 between rows), for the replay kernel, which sums into
    /// it the same way.
    pub fn values_mut(&mut self) -> &mut Vec<V> {
        &mut self.dense
    }
}

/// Rows per block of the flop sums the dense symbolic phase keeps (instead of a flop
/// count per row: an m-sized array that was allocated, faulted in and prefix-summed on
/// every call only to place the numeric chunk boundaries).
pub const FLOP_BLOCK: usize = 256;

/// Symbolic kernel for the rows `rows`: `nnz[i - rows.start]` = distinct columns of row i
/// of C, and `block_flops[k]` = multiplications of rows `rows.start + k * FLOP_BLOCK ..`
/// (the next [`FLOP_BLOCK`] rows, or fewer at the end).
///
/// Uncompressed B: a mark per column, set to the row's stamp; counting "mark differs" is
/// branch-free and consecutive insertions are independent. (A bit map has a
/// read-modify-write chain through one word for neighbouring columns, which stencil
/// rows are made of: measured slower; docs/DESIGN-NOTES.md, cpu::dense.)
/// Compressed B (`cb`: (word, bits) pairs): union by OR into a bit map, counted by
/// popcount; the flops still count B's entries.
///
/// With `rec`, each row's columns are also appended to the record (see
/// [`crate::cpu::record`]).
#[allow(clippy::too_many_arguments)]
pub fn count_rows<V: Scalar, O: Idx, I: Idx>(
    ws: &mut DenseRows<V>,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    cb: Option<&CompressedRows>,
    groups: Option<&RowGroups>,
    rows: std::ops::Range<usize>,
    nnz: &mut [usize],
    block_flops: &mut [u64],
    mut rec: Option<&mut Recorder<'_>>,
) -> ChunkTotals {
    // Block by block through a row-flops buffer on the stack; the totals and maxima while
    // the block's counts are still in cache (the symbolic driver needs them for its
    // parallel prefix sum; a separate pass would read them from memory again).
    let mut t = ChunkTotals::default();
    let mut flops = [0u64; FLOP_BLOCK];
    let mut r0 = rows.start;
    for bf in block_flops.iter_mut() {
        let r1 = (r0 + FLOP_BLOCK).min(rows.end);
        let len = r1 - r0;
        let nb = &mut nnz[r0 - rows.start..r1 - rows.start];
        let fb = &mut flops[..len];
        match groups {
            None => count_rows_inner(ws, a, b, cb, r0..r1, nb, fb, rec.as_deref_mut()),
            Some(g) => count_grouped(ws, (a, b), cb, g, r0..r1, (nb, fb), rec.as_deref_mut()),
        }
        let mut sum = 0u64;
        for (&n, &f) in nb.iter().zip(&flops[..len]) {
            t.nnz += n;
            let (s, o) = sum.overflowing_add(f);
            sum = s;
            t.overflow |= o;
            t.max_nnz = t.max_nnz.max(n);
        }
        *bf = sum;
        let (s, o) = t.flops.overflowing_add(sum);
        t.flops = s;
        t.overflow |= o;
        r0 = r1;
    }
    debug_assert_eq!(r0, rows.end.max(rows.start));
    t
}

/// [`count_rows_inner`] over row groups (see [`crate::cpu::row_groups`]): the first row of
/// each group is counted, the others copy its count and flops (same column list of A:
/// same columns of C, same products). Runs of single rows go through one call.
fn count_grouped<V: Scalar, O: Idx, I: Idx>(
    ws: &mut DenseRows<V>,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    cb: Option<&CompressedRows>,
    groups: &RowGroups,
    rows: std::ops::Range<usize>,
    (nnz, flops): (&mut [usize], &mut [u64]),
    mut rec: Option<&mut Recorder<'_>>,
) {
    let r0 = rows.start;
    // Rows r0 + done.. are not counted yet.
    let mut done = 0usize;
    for g in groups.within(rows.clone()) {
        if g.len() < 2 {
            continue;
        }
        let (s, e) = (g.start - r0, g.end - r0);
        // The groups were found in this A by the same symbolic call.
        let head = s + 1;
        count_rows_inner(
            ws,
            a,
            b,
            cb,
            r0 + done..r0 + head,
            &mut nnz[done..head],
            &mut flops[done..head],
            rec.as_deref_mut(),
        );
        let (n, f) = (nnz[s], flops[s]);
        nnz[head..e].fill(n);
        flops[head..e].fill(f);
        if let Some(r) = rec.as_deref_mut() {
            for _ in head..e {
                r.repeat_last(n);
            }
        }
        done = e;
    }
    let end = rows.end - r0;
    count_rows_inner(
        ws,
        a,
        b,
        cb,
        r0 + done..rows.end,
        &mut nnz[done..end],
        &mut flops[done..end],
        rec,
    );
}

/// The count over a plain B. `ZB`: A and B are 0-based, so no base is subtracted on the
/// chain of dependent loads (A's column, B's row offset, B's column, the mark) that each
/// entry of A starts after the mispredicted exit of the previous row of B. `RUNS` (not
/// with `PF`, whose prefetches go by entry): runs of consecutive columns in A's rows
/// (stencils: three runs of three in a 9-point row) are one loop each, over rows j..j+r of
/// B, which lie back to back in B's arrays: one exit instead of r (docs/DESIGN-NOTES.md,
/// cpu::dense).
#[inline(never)]
fn count_plain<const PF: bool, const ZB: bool, const RUNS: bool, V: Scalar, O: Idx, I: Idx>(
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    rows: std::ops::Range<usize>,
    (nnz, flops): (&mut [usize], &mut [u64]),
    mark: &mut [u32],
    mut stamp: u32,
) -> u32 {
    let r0 = rows.start;
    let b_cols = b.col_indices();
    for i in rows {
        stamp = next_stamp(stamp, mark);
        let mut f = 0usize;
        let mut n = 0usize;
        if RUNS {
            for_each_run::<ZB, _, _, _>(a, i, |j, r| {
                let (s, e) = (b.row_start_zb::<ZB>(j), b.row_start_zb::<ZB>(j + r));
                f += e.wrapping_sub(s);
                n += mark_new(&b_cols[s..e], mark, stamp);
            });
        } else {
            let p0 = a.row_start_zb::<ZB>(i);
            for (t, &j) in a.row_cols_zb::<ZB>(i).iter().enumerate() {
                if PF {
                    prefetch::ahead(a, b, None, p0 + t);
                }
                let j = a.col_of_zb::<ZB>(j);
                let (s, e) = (b.row_start_zb::<ZB>(j), b.row_start_zb::<ZB>(j + 1));
                f += e.wrapping_sub(s);
                n += mark_new(&b_cols[s..e], mark, stamp);
            }
        }
        nnz[i - r0] = n;
        flops[i - r0] = f as u64;
    }
    stamp
}

/// The plain count walks runs of A's columns (`RUNS` of [`count_plain`]) where the sampled
/// share of entries followed by the next column reaches this (about 1.33 entries per run).
pub const RUNS_MIN_SHARE: f64 = 0.25;

/// Calls `body(j, r)` for each run of A's row `i`: r consecutive columns j..j+r (0-based)
/// in that order, whose rows of B are B's entries from `row_start(j)` to `row_start(j + r)`.
/// A column that does not follow the one before (a duplicate, a descent, a gap) starts
/// the next run, so the runs cover the row's entries exactly once.
#[inline(always)]
fn for_each_run<const ZB: bool, V: Scalar, O: Idx, I: Idx>(
    a: &CsrRef<'_, O, I, V>,
    i: usize,
    mut body: impl FnMut(usize, usize),
) {
    let cols = a.row_cols_zb::<ZB>(i);
    let mut t = 0;
    while t < cols.len() {
        let j = a.col_of_zb::<ZB>(cols[t]);
        let mut u = t + 1;
        while u < cols.len() && a.col_of_zb::<ZB>(cols[u]) == j.wrapping_add(u - t) {
            u += 1;
        }
        body(j, u - t);
        t = u;
    }
}

/// Sums and maxima of one chunk's row counts (see [`count_rows`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChunkTotals {
    pub nnz: usize,
    pub flops: u64,
    pub max_nnz: usize,
    /// The flops of the chunk exceed 2^64.
    pub overflow: bool,
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn count_rows_inner<V: Scalar, O: Idx, I: Idx>(
    ws: &mut DenseRows<V>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    cb: Option<&CompressedRows>,
    rows: std::ops::Range<usize>,
    nnz: &mut [usize],
    flops: &mut [u64],
    mut rec: Option<&mut Recorder<'_>>,
) {
    let r0 = rows.start;
    if let (None, Some(r)) = (cb, rec.as_deref_mut())
        && !r.failed
    {
        return count_recording(ws, (a, b), rows, (nnz, flops), r);
    }
    let Some(cb) = cb else {
        let (m, st) = (&mut ws.mark[..], ws.stamp);
        let out = (nnz, flops);
        let zb = a.base() == 0 && b.base() == 0;
        ws.stamp = match (ws.prefetch, zb) {
            (false, true) if ws.runs => {
                count_plain::<false, true, true, _, _, _>((a, b), rows, out, m, st)
            }
            (false, false) if ws.runs => {
                count_plain::<false, false, true, _, _, _>((a, b), rows, out, m, st)
            }
            (true, true) => count_plain::<true, true, false, _, _, _>((a, b), rows, out, m, st),
            (true, false) => count_plain::<true, false, false, _, _, _>((a, b), rows, out, m, st),
            (false, true) => count_plain::<false, true, false, _, _, _>((a, b), rows, out, m, st),
            (false, false) => count_plain::<false, false, false, _, _, _>((a, b), rows, out, m, st),
        };
        return;
    };
    let cb = cb.view();
    let bits = &mut ws.bits[..];
    let touched = &mut ws.touched;
    for i in rows {
        let mut f = 0u64;
        touched.clear();
        if cb.short_rows {
            // Pairs on the word of the previous pair are merged in a register: in banded
            // and stencil-like B most rows hit the same one or two words, and an OR into
            // the bit map per pair would chain them all through a store and a reload.
            // (The bits of a pair are never zero, so `acc == 0` means "no pair yet".)
            let mut lw = 0u32;
            let mut acc = 0u64;
            for &j in a.row_cols(i) {
                let j = a.col_of(j);
                f += b.row_len(j) as u64;
                let r = cb.row(j);
                for (&w, &m) in cb.words[r.clone()].iter().zip(&cb.bits[r]) {
                    if w == lw {
                        acc |= m;
                    } else {
                        if acc != 0 {
                            or_word(bits, touched, lw, acc);
                        }
                        lw = w;
                        acc = m;
                    }
                }
            }
            if acc != 0 {
                or_word(bits, touched, lw, acc);
            }
        } else {
            for &j in a.row_cols(i) {
                let j = a.col_of(j);
                f += b.row_len(j) as u64;
                let r = cb.row(j);
                for (&w, &m) in cb.words[r.clone()].iter().zip(&cb.bits[r]) {
                    or_word(bits, touched, w, m);
                }
            }
        }
        let mut n = 0usize;
        match rec.as_deref_mut() {
            Some(r) if !r.failed => n = record_words(bits, &mut touched[..], r),
            _ => {
                for &w in touched.iter() {
                    let slot = &mut bits[w as usize];
                    n += slot.count_ones() as usize;
                    *slot = 0;
                }
            }
        }
        nnz[i - r0] = n;
        flops[i - r0] = f;
    }
}

/// The count of a row from its words of the bit map (`touched`) with its columns
/// appended to the record, word by word (words sorted first for a sorted record); clears
/// the words. Returns the row's count.
#[inline]
fn record_words(bits: &mut [u64], touched: &mut [u32], r: &mut Recorder<'_>) -> usize {
    let n: usize = touched
        .iter()
        .map(|&w| bits[w as usize].count_ones() as usize)
        .sum();
    // Room for 16 more: the vector expansion stores 16 columns at a time.
    if !r.room(n + 16) {
        touched.iter().for_each(|&w| bits[w as usize] = 0);
        return n;
    }
    if r.sorted {
        sort_keys(touched);
    }
    #[cfg(target_arch = "x86_64")]
    if crate::platform::isa::Isa::detect() == crate::platform::isa::Isa::Avx512 {
        // SAFETY: the CPU has AVX-512 (detected), and `out` has room for n + 16 more.
        unsafe { expand_avx512(bits, touched, r.out) };
        return n;
    }
    expand_words(bits, touched, r.out);
    n
}

/// The columns of the set bits of the words `touched` of `bits` appended to `out`, word by
/// word; clears the words.
fn expand_words(bits: &mut [u64], touched: &[u32], out: &mut Vec<u32>) {
    for &w in touched {
        let slot = &mut bits[w as usize];
        let mut x = *slot;
        *slot = 0;
        let c0 = w.wrapping_mul(WORD_BITS as u32);
        while x != 0 {
            out.push(c0 + x.trailing_zeros());
            x &= x - 1;
        }
    }
}

/// The columns of the set bits of the words `touched` of `bits` appended to `out`, 16 bits
/// at a time by a compress in a register and a full 16-lane store (a loop over the bits
/// mispredicts at the end of every word; the store form of the compress is slow on AMD
/// parts); clears the words.
///
/// # Safety
/// The CPU has AVX-512F, and `out` has room for 16 more columns than the words' bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
// Stable since Rust 1.89, above the crate's rust-version (as in `cpu::spmm::avx512`).
#[allow(clippy::incompatible_msrv)]
unsafe fn expand_avx512(bits: &mut [u64], touched: &[u32], out: &mut Vec<u32>) {
    use std::arch::x86_64::*;
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut len = out.len();
    let dst = out.as_mut_ptr();
    for &w in touched {
        let slot = &mut bits[w as usize];
        let x = *slot;
        *slot = 0;
        // Columns fit u32 (k <= u32::MAX for the dense kernels); lanes wrap as u32.
        let c0 = w.wrapping_mul(WORD_BITS as u32);
        for q in 0..4u32 {
            let m = (x >> (16 * q)) as u16;
            let v = _mm512_add_epi32(iota, _mm512_set1_epi32(c0.wrapping_add(16 * q) as i32));
            let c = _mm512_maskz_compress_epi32(m, v);
            // SAFETY: len is at most the columns written so far, and the room reserved
            // covers them plus the 16 lanes of this store.
            unsafe { _mm512_storeu_si512(dst.add(len).cast(), c) };
            len += m.count_ones() as usize;
        }
    }
    // SAFETY: the first `len` places were written (the bits' columns, in order).
    unsafe { out.set_len(len) };
}

/// The uncompressed branch of [`count_rows_inner`] with each row's columns appended to
/// the record in first-touch order (sorted afterwards for a sorted record). The column of
/// every product is stored at the row's next free place and the place advances only
/// when the column is new, which keeps the loop free of data-dependent branches.
fn count_recording<V: Scalar, O: Idx, I: Idx>(
    ws: &mut DenseRows<V>,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    rows: std::ops::Range<usize>,
    (nnz, flops): (&mut [usize], &mut [u64]),
    r: &mut Recorder<'_>,
) {
    let r0 = rows.start;
    let b_cols = b.col_indices();
    let bb = b.base();
    let mark = &mut ws.mark[..];
    let mut stamp = ws.stamp;
    let prefetch = ws.prefetch;
    for i in rows {
        stamp = next_stamp(stamp, mark);
        let f: usize = a.row_cols(i).iter().map(|&j| b.row_len(a.col_of(j))).sum();
        let mut n = 0usize;
        // Room for f columns: the row's products bound its distinct columns.
        if r.room(f) {
            let at = r.out.len();
            let free = &mut r.out.spare_capacity_mut()[..f];
            let p0 = a.row_start(i);
            for (t, &j) in a.row_cols(i).iter().enumerate() {
                if prefetch {
                    prefetch::ahead(a, b, None, p0 + t);
                }
                let j = a.col_of(j);
                for &c in &b_cols[b.row_start(j)..b.row_start(j + 1)] {
                    let c = c.to_usize();
                    let m = &mut mark[c];
                    // n <= the products before this one < f.
                    free[n].write(c.wrapping_sub(bb) as u32);
                    n += (*m != stamp) as usize;
                    *m = stamp;
                }
            }
            // SAFETY: the first n places after `at` were written above, and the room for
            // f >= n of them was reserved.
            unsafe { r.out.set_len(at + n) };
            if r.sorted {
                sort_keys(&mut r.out[at..]);
            }
        } else {
            // No room for the record: count only (the plan goes without one).
            for &j in a.row_cols(i) {
                let j = a.col_of(j);
                n += mark_new(&b_cols[b.row_start(j)..b.row_start(j + 1)], mark, stamp);
            }
        }
        nnz[i - r0] = n;
        flops[i - r0] = f as u64;
    }
    ws.stamp = stamp;
}

/// Marks the columns `cols` (raw indices of B: `mark` has k + base slots, which saves the
/// base subtraction here) with `stamp`; returns how many were not marked yet.
#[inline(always)]
fn mark_new<I: Idx>(cols: &[I], mark: &mut [u32], stamp: u32) -> usize {
    let mut n = 0usize;
    for &c in cols {
        let m = &mut mark[c.to_usize()];
        n += (*m != stamp) as usize;
        *m = stamp;
    }
    n
}

/// ORs `m` into word `w` of the symbolic bit map, noting the word when it was empty.
#[inline(always)]
fn or_word(bits: &mut [u64], touched: &mut Vec<u32>, w: u32, m: u64) {
    let slot = &mut bits[w as usize];
    if *slot == 0 {
        touched.push(w);
    }
    *slot |= m;
}

/// Numeric kernel for the rows `rows`; `cols`/`vals` hold exactly those rows' entries
/// (`row_ptr[rows.start]` is their first). Values are computed when `vals` is given and A
/// and B carry values. A row whose entry count differs from the plan's is reported as a
/// plan mismatch (structure changed since the symbolic phase), never written past.
///
/// With the plan's row groups (A's runs of rows with one column list, see
/// [`crate::cpu::row_groups`]) the rows of each group whose column lists are still equal
/// (checked here: the structure may have changed since the groups were found when
/// validation is off) and whose rows of C have the same length in the plan go through
/// [`fill_group`]; the other rows one by one.
pub fn fill_rows<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    let Some(groups) = p.plan.groups.filter(|g| g.nrows() == p.a.nrows()) else {
        return fill_rows_plain(ws, p, rows, cols, vals);
    };
    if value_pair(p.a, p.b, vals.is_some()).is_some() && ws.row_lanes.len() < ws.row_cols.len() {
        let cap = ws.row_cols.len();
        try_grow(
            &mut ws.row_lanes,
            cap,
            [V::ZERO; LANES],
            "dense accumulator group values",
        )?;
    }
    walk_groups::<V, O, I, J, false>(ws, p, groups, rows, cols, vals)
}

/// [`fill_rows`] for rows with many products per entry: no slot per column, the sums are
/// kept in a value per column of C (see [`accumulate_row`]). Same contract and output
/// (bitwise) as [`fill_rows`], groups included (through [`fill_group`] by value while its
/// lanes fit the replay's budget per thread); needs [`DenseRows::prepare_by_value`].
pub fn fill_rows_by_value<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    let values = value_pair(p.a, p.b, vals.is_some());
    let slots = p.b.ncols() + p.b.base();
    let lane_bytes = slots
        .saturating_mul(LANES)
        .saturating_mul(std::mem::size_of::<V>());
    let groups = p.plan.groups.filter(|g| {
        g.nrows() == p.a.nrows() && (values.is_none() || lane_bytes <= REPLAY_MAX_DENSE_BYTES)
    });
    let Some(groups) = groups else {
        return fill_rows_by_value_plain(ws, p, rows, cols, vals);
    };
    if values.is_some() && ws.lanes.len() < slots {
        let neg0 = [V::NEG_ZERO; LANES];
        try_grow(&mut ws.lanes, slots, neg0, "dense accumulator group values")?;
    }
    walk_groups::<V, O, I, J, true>(ws, p, groups, rows, cols, vals)
}

/// Walks `rows` for the grouped numeric kernels: runs of single rows, and groups that
/// fail [`group_ok`], go to the row kernel; each usable group goes to [`fill_group`] when
/// values are computed, else its first row goes to the row kernel and its columns are
/// copied to the group's other rows. `BY_VALUE` picks the value kernels
/// ([`fill_rows_by_value`]) over the slot kernels.
fn walk_groups<V: Scalar, O: Idx, I: Idx, J: Idx, const BY_VALUE: bool>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    groups: &RowGroups,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let plain = |ws: &mut DenseRows<V>, r, c: &mut [J], v: Option<&mut [V]>| {
        if BY_VALUE {
            fill_rows_by_value_plain(ws, p, r, c, v)
        } else {
            fill_rows_plain(ws, p, r, c, v)
        }
    };
    let values = value_pair(p.a, p.b, vals.is_some());
    let row_ptr = p.plan.row_ptr;
    let off0 = row_ptr[rows.start];
    let mut done = rows.start;
    for g in groups.within(rows.clone()) {
        if !group_ok(p.a, row_ptr, &g) {
            continue;
        }
        let (cs, ce, ge) = (
            row_ptr[done] - off0,
            row_ptr[g.start] - off0,
            row_ptr[g.end] - off0,
        );
        let v = vals.as_deref_mut().map(|v| &mut v[cs..ce]);
        plain(ws, done..g.start, &mut cols[cs..ce], v)?;
        match (values, vals.as_deref_mut()) {
            (Some(pair), Some(v)) => fill_group::<V, O, I, J, BY_VALUE>(
                ws,
                p,
                pair,
                g.clone(),
                &mut cols[ce..ge],
                &mut v[ce..ge],
            )?,
            _ => {
                let n = row_ptr[g.start + 1] - row_ptr[g.start];
                let c = &mut cols[ce..ge];
                plain(ws, g.start..g.start + 1, &mut c[..n], None)?;
                copy_first_row(c, n);
            }
        }
        done = g.end;
    }
    let (cs, ce) = (row_ptr[done] - off0, row_ptr[rows.end] - off0);
    plain(
        ws,
        done..rows.end,
        &mut cols[cs..ce],
        vals.map(|v| &mut v[cs..ce]),
    )
}

/// The rows `g` of A (a group found by [`RowGroups::detect`]) can go through the grouped
/// kernels: at least two rows, all with the first row's column list in this A, and the
/// same length of their rows of C in the plan.
fn group_ok<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    row_ptr: &[usize],
    g: &std::ops::Range<usize>,
) -> bool {
    let i0 = g.start;
    if g.len() < 2 || g.len() > LANES || g.end > a.nrows() {
        return false;
    }
    let n = row_ptr[i0 + 1] - row_ptr[i0];
    (i0 + 1..g.end).all(|i| row_ptr[i + 1] - row_ptr[i] == n && same_columns(a, i0, i))
}

/// Copies the first `n` entries of `cols` (a group's first row of C) over the other rows
/// of the group (`cols` holds the group's rows, `n` entries each).
fn copy_first_row<J: Idx>(cols: &mut [J], n: usize) {
    if n == 0 {
        return;
    }
    for l in 1..cols.len() / n {
        cols.copy_within(0..n, l * n);
    }
}

/// The rows `g` of A (2..=[`LANES`] rows with the same column list, and rows of C of the
/// same length in the plan: see [`group_ok`]) at once: the columns are found once, each
/// lane summed as the row kernel sums its row (bitwise its values), the columns emitted
/// (and sorted) once and copied to the other rows. `BY_VALUE`: the sums are kept in a
/// value per column of C and lane ([`accumulate_group_by_value`], -0.0 between groups),
/// else by slot ([`accumulate_group_slots`]). `cols`/`vals` hold exactly the group's
/// entries.
fn fill_group<V: Scalar, O: Idx, I: Idx, J: Idx, const BY_VALUE: bool>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    (av, bv): (&[V], &[V]),
    g: std::ops::Range<usize>,
    cols: &mut [J],
    vals: &mut [V],
) -> Result<()> {
    let (a, b, row_ptr) = (p.a, p.b, p.plan.row_ptr);
    let r = g.len();
    let n = row_ptr[g.start + 1] - row_ptr[g.start];
    let b_base = b.base();
    let slots = b.ncols() + b_base;
    let neg0 = [V::NEG_ZERO; LANES];
    let t = if BY_VALUE {
        let stamp = next_stamp(ws.stamp, &mut ws.mark);
        ws.stamp = stamp;
        accumulate_group_by_value(
            &mut ws.lanes[..slots],
            &mut ws.mark[..slots],
            stamp,
            &mut ws.row_cols,
            (a, b),
            (av, bv),
            g.clone(),
        )
    } else {
        let cap = ws.row_cols.len();
        accumulate_group_slots(
            &mut ws.pos,
            &mut ws.row_cols,
            &mut ws.row_lanes[..cap],
            (a, b),
            (av, bv),
            g.clone(),
        )
    };
    if t != n {
        // Forget the group's sums (by slot: every slot this call may have set).
        if BY_VALUE {
            ws.lanes[..slots].fill(neg0);
        } else {
            ws.pos.fill(EMPTY);
        }
        return Err(row_len_mismatch(g.start, t, n));
    }
    let order = OrderBits {
        l0: &mut ws.order_bits,
        l1: &mut ws.order_l1,
        l2: &mut ws.order_l2,
    };
    let (sorted, c_base) = (p.plan.sorted, p.plan.c_base);
    let row_cols = &mut ws.row_cols[..n];
    if BY_VALUE {
        let lanes = &mut ws.lanes[b_base..slots];
        emit_group(order, row_cols, (sorted, c_base), r, cols, vals, |c| {
            std::mem::replace(&mut lanes[c as usize], neg0)
        });
    } else {
        let pos = &mut ws.pos[..];
        let lanes = &ws.row_lanes[..];
        emit_group(order, row_cols, (sorted, c_base), r, cols, vals, |c| {
            let s = &mut pos[c as usize];
            let d = lanes[*s as usize];
            *s = EMPTY;
            d
        });
    }
    Ok(())
}

avx2_copy! {
    /// Sums the products of the rows `rows` of A*B (rows with the same column list, at most
    /// [`LANES`]) by slot: columns of C get slots in first-touch order (as in
    /// [`fill_rows_plain`], whose bound handling `row_cols`' spare last slot repeats), lane l of
    /// `row_lanes[slot]` gets row `rows.start + l`'s products in its order (the first product
    /// stored, the others added), unused lanes zero products. Returns the distinct columns.
    /// Its own function, like [`accumulate_row`]; compiled for AVX2 where the CPU has it (one
    /// 256-bit multiply and add for the lanes of f64, never fused: the same bits).
    fn accumulate_group_slots<V: Scalar, O: Idx, I: Idx>(
        pos: &mut [u32],
        row_cols: &mut [u32],
        row_lanes: &mut [[V; LANES]],
        ab: (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
        values: (&[V], &[V]),
        rows: std::ops::Range<usize>,
    ) -> usize {
        let ((a, b), (av, bv)) = (ab, values);
        let last = row_cols.len() - 1;
        let entries = GroupEntries::new(a, rows);
        let b_cols = b.col_indices();
        let b_base = b.base();
        let mut t = 0usize;
        let mut tw = 0usize;
        for q in 0..entries.len() {
            let al = entries.values(av, q);
            let j = entries.col(a, q);
            let (s, e) = (b.row_start(j), b.row_start(j + 1));
            for (&c, &bq) in b_cols[s..e].iter().zip(&bv[s..e]) {
                let c = c.to_usize().wrapping_sub(b_base);
                let old = pos[c];
                if old == EMPTY {
                    row_cols[tw] = c as u32;
                    let d = &mut row_lanes[tw];
                    for l in 0..LANES {
                        d[l] = al[l] * bq;
                    }
                    pos[c] = tw as u32;
                    t += 1;
                    tw = t.min(last);
                } else {
                    let d = &mut row_lanes[old as usize];
                    for l in 0..LANES {
                        d[l] += al[l] * bq;
                    }
                }
            }
        }
        t
    }
}

/// Emits a group of `r` rows of C whose columns are `row_cols` (0-based, first-touch
/// order; n of them): the first row's columns (plus `c_base`) go to `cols[..n]`, in column
/// order when `sorted` (through the order bit maps or a sort, as [`emit_row`] does: once
/// for the whole group), and are copied to the other rows; `take(c)` gives column c's sums
/// lane by lane (and resets them), lane l written to row l of `vals` (`cols`/`vals` hold
/// exactly the group's entries, n per row).
#[inline(always)]
fn emit_group<V: Scalar, J: Idx>(
    order: OrderBits<'_>,
    row_cols: &mut [u32],
    (sorted, c_base): (bool, usize),
    r: usize,
    cols: &mut [J],
    vals: &mut [V],
    mut take: impl FnMut(u32) -> [V; LANES],
) {
    let n = row_cols.len();
    walk_row(order, row_cols, sorted, |_, t, c| {
        let d = take(c);
        cols[t] = J::try_from_usize(c as usize + c_base).expect("column checked at symbolic time");
        for l in 0..r {
            vals[l * n + t] = d[l];
        }
    });
    copy_first_row(cols, n);
}

/// [`fill_rows`] for single rows.
fn fill_rows_plain<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    if p.plan.direct && !p.plan.sorted {
        fill_rows_direct(ws, p, rows, cols, vals)
    } else {
        fill_rows_buffered(ws, p, rows, cols, vals)
    }
}

/// A's and B's values and the value places of a row of C (see [`slot_row`]).
type RowValues<'r, V> = ((&'r [V], &'r [V]), &'r mut [V]);

/// The slot kernel's row `i` of A*B: each product starts an entry (its column, through
/// `col`, and its value at the next free place, which `pos` notes) or adds to its column's
/// entry. The next free place stops at `last`, so a row longer than planned overwrites its
/// last place. Values when `vals` holds A's and B's and the row's value places. Returns
/// the row's distinct columns (left in `pos`).
#[inline(always)]
fn slot_row<V: Scalar, O: Idx, I: Idx, C>(
    pos: &mut [u32],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (i, prefetch): (usize, bool),
    (row_cols, last): (&mut [C], usize),
    vals: Option<RowValues<'_, V>>,
    col: impl Fn(usize) -> C,
) -> usize {
    let b_base = b.base();
    let mut t = 0usize;
    let mut tw = 0usize;
    match vals {
        Some(((av, bv), row_vals)) => {
            let (a_cols, a_vals) = a.row_entries(i, av);
            let p0 = a.row_start(i);
            for (q, (&j, &aij)) in a_cols.iter().zip(a_vals).enumerate() {
                if prefetch {
                    prefetch::ahead(a, b, Some(bv), p0 + q);
                }
                let (b_row, b_vals) = b.row_entries(a.col_of(j), bv);
                for (&c, &bq) in b_row.iter().zip(b_vals) {
                    let c = c.to_usize().wrapping_sub(b_base);
                    let v = aij * bq;
                    let old = pos[c];
                    if old == EMPTY {
                        row_cols[tw] = col(c);
                        row_vals[tw] = v;
                        pos[c] = tw as u32;
                        t += 1;
                        tw = t.min(last);
                    } else {
                        row_vals[old as usize] += v;
                    }
                }
            }
        }
        None => {
            for &j in a.row_cols(i) {
                for &c in b.row_cols(a.col_of(j)) {
                    let c = c.to_usize().wrapping_sub(b_base);
                    if pos[c] == EMPTY {
                        row_cols[tw] = col(c);
                        pos[c] = tw as u32;
                        t += 1;
                        tw = t.min(last);
                    }
                }
            }
        }
    }
    t
}

/// A slot-kernel row of `t` entries where the plan has `n`: `pos` forgotten (every slot this
/// call may have set), the row reported.
fn forget_row(pos: &mut [u32], i: usize, (t, n): (usize, usize)) -> Error {
    pos.fill(EMPTY);
    row_len_mismatch(i, t, n)
}

/// [`fill_rows_plain`] through a row buffer: each row's columns and sums are found in
/// `row_cols` / `row_vals` and put in C's arrays by [`emit_row`] (in order when sorted).
fn fill_rows_buffered<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let (a, b) = (p.a, p.b);
    let (row_ptr, sorted, c_base) = (p.plan.row_ptr, p.plan.sorted, p.plan.c_base);
    let off0 = row_ptr[rows.start];
    let values = value_pair(a, b, vals.is_some());
    let cap = ws.row_cols.len();
    debug_assert!(cap >= 1 && ws.row_vals.len() == cap);
    let last = cap - 1;
    let prefetch = ws.prefetch;
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let pos = &mut ws.pos[..];
        let row_cols = &mut ws.row_cols[..];
        let row_vals = &mut ws.row_vals[..];
        // A row longer than the plan's bound (changed structure, validation off) overwrites
        // the spare slot instead of running off the buffer.
        let t = slot_row(
            pos,
            (a, b),
            (i, prefetch),
            (row_cols, last),
            values.map(|ab| (ab, &mut row_vals[..])),
            |c| c as u32,
        );
        let n = e - s;
        if t != n {
            return Err(forget_row(&mut ws.pos, i, (t, n)));
        }
        emit_row(
            pos,
            OrderBits {
                l0: &mut ws.order_bits,
                l1: &mut ws.order_l1,
                l2: &mut ws.order_l2,
            },
            (row_cols, n),
            row_vals,
            (sorted, c_base),
            &mut cols[s..e],
            values.and(vals.as_deref_mut().map(|v| &mut v[s..e])),
        );
    }
    Ok(())
}

/// Multiplications per entry of C for which [`fill_rows_direct`] pays: from 1.5 (the short
/// rows of the AMG and stencil products, 2-4.3 per entry: first numeric call 0.92-0.97x at
/// one and two threads) to 5, and above 5 where C's rows are short on average (at most
/// [`DIRECT_MAX_ROW`]: the anisotropic R*(AP), (RA)*P and level-1 products, 6-17.5 per
/// entry; with long rows, lap3d_27pt_42^2 and the R1*(AP1) of the first measurement, the
/// sums into C's rows cost more than the buffer's copy). Below 1.5 (graph squares, nearly
/// every product a new entry) one and two threads disagreed (er_uniform 0.83x at one,
/// 1.06-1.07x at two; hub 0.99x and 1.13x): those keep the row buffer (DESIGN-NOTES
/// cpu::dense).
const DIRECT_SHARE: (f64, f64) = (1.5, 5.0);

/// Rows of C longer than this take the row buffer in [`fill_rows_direct`] (circuit_400k^2,
/// one thread: 1.14x slower with every row in place, 1.00x with this bound).
const DIRECT_MAX_ROW: usize = 64;

/// Whether a numeric call writes C's rows in place ([`fill_rows_direct`]): unsorted
/// output with the plan's `multiplications` per entry of C within [`DIRECT_SHARE`], or
/// above it where C's `rows` hold at most [`DIRECT_MAX_ROW`] entries on average.
pub fn direct_pays(sorted: bool, multiplications: u64, nnz_c: usize, rows: usize) -> bool {
    let share = multiplications as f64 / nnz_c.max(1) as f64;
    let short_rows = nnz_c <= DIRECT_MAX_ROW.saturating_mul(rows);
    !sorted && share >= DIRECT_SHARE.0 && (share <= DIRECT_SHARE.1 || short_rows)
}

/// [`fill_rows_plain`] for unsorted output: each row's columns (first-touch order, as
/// [`emit_row`] copies them) and sums go straight into C's arrays, with no row buffer and
/// no copy (rows longer than [`DIRECT_MAX_ROW`] still through [`fill_rows_buffered`]).
/// Same sums in the same order, so bitwise the buffered path's output.
fn fill_rows_direct<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let (a, b) = (p.a, p.b);
    let (row_ptr, c_base) = (p.plan.row_ptr, p.plan.c_base);
    let off0 = row_ptr[rows.start];
    let values = value_pair(a, b, vals.is_some());
    let prefetch = ws.prefetch;
    let to_j = |c: usize| J::try_from_usize(c + c_base).expect("column checked at symbolic time");
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let n = e - s;
        if n > DIRECT_MAX_ROW {
            let v = vals.as_deref_mut().map(|v| &mut v[s..e]);
            fill_rows_buffered(ws, p, i..i + 1, &mut cols[s..e], v)?;
            continue;
        }
        if n == 0 {
            if a.row_cols(i)
                .iter()
                .any(|&j| !b.row_cols(a.col_of(j)).is_empty())
            {
                // Nowhere to write: the buffered path counts the row and reports it.
                let v = vals.as_deref_mut().map(|v| &mut v[s..e]);
                return fill_rows_buffered(ws, p, i..i + 1, &mut cols[s..e], v);
            }
            continue;
        }
        // A row longer than the plan's (changed structure, validation off) overwrites its
        // own last entry instead of the next row's.
        let pos = &mut ws.pos[..];
        let row_cols = &mut cols[s..e];
        let row_vals = match (values, vals.as_deref_mut()) {
            (Some(ab), Some(v)) => Some((ab, &mut v[s..e])),
            _ => None,
        };
        let t = slot_row(
            pos,
            (a, b),
            (i, prefetch),
            (row_cols, n - 1),
            row_vals,
            to_j,
        );
        if t != n {
            return Err(forget_row(&mut ws.pos, i, (t, n)));
        }
        for &c in row_cols.iter() {
            pos[c.to_usize() - c_base] = EMPTY;
        }
    }
    Ok(())
}

avx2_copy! {
    /// [`accumulate_row`] for the rows `rows` (same column list, at most [`LANES`]): lane l
    /// of `lanes[c]` sums row `rows.start + l`'s products in its order (-0.0 before the first,
    /// as in [`accumulate_row`]; unused lanes zero products). A column is new only while lane
    /// 0 is zero, so only then is its mark looked at. Compiled for AVX2 where the CPU has it,
    /// as [`accumulate_group_slots`].
    fn accumulate_group_by_value<V: Scalar, O: Idx, I: Idx>(
        lanes: &mut [[V; LANES]],
        mark: &mut [u32],
        stamp: u32,
        row_cols: &mut [u32],
        ab: (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
        values: (&[V], &[V]),
        rows: std::ops::Range<usize>,
    ) -> usize {
        let ((a, b), (av, bv)) = (ab, values);
        let entries = GroupEntries::new(a, rows);
        let b_cols = b.col_indices();
        let b_base = b.base();
        let mut t = 0usize;
        for q in 0..entries.len() {
            let al = entries.values(av, q);
            let j = entries.col(a, q);
            let (s, e) = (b.row_start(j), b.row_start(j + 1));
            for (&c, &bq) in b_cols[s..e].iter().zip(&bv[s..e]) {
                let c = c.to_usize();
                let d = &mut lanes[c];
                let old = d[0];
                for l in 0..LANES {
                    d[l] += al[l] * bq;
                }
                if old == V::ZERO {
                    new_column(mark, stamp, row_cols, &mut t, c, b_base);
                }
            }
        }
        t
    }
}

/// [`fill_rows_by_value`] for single rows.
fn fill_rows_by_value_plain<V: Scalar, O: Idx, I: Idx, J: Idx>(
    ws: &mut DenseRows<V>,
    p: &Product<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let (a, b) = (p.a, p.b);
    let (row_ptr, sorted, c_base) = (p.plan.row_ptr, p.plan.sorted, p.plan.c_base);
    let off0 = row_ptr[rows.start];
    let values = value_pair(a, b, vals.is_some());
    let b_base = b.base();
    // `mark` and `dense` are indexed by B's raw column index (k + base slots).
    let slots = b.ncols() + b_base;
    debug_assert!(ws.mark.len() >= slots && !ws.row_cols.is_empty());
    debug_assert!(values.is_none() || ws.dense.len() >= slots);
    let mut stamp = ws.stamp;
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        stamp = next_stamp(stamp, &mut ws.mark);
        let mark = &mut ws.mark[..slots];
        let t = match values {
            Some(pair) => accumulate_row(
                &mut ws.dense[..slots],
                mark,
                stamp,
                &mut ws.row_cols,
                (a, b),
                pair,
                i,
            ),
            None => pattern_row(mark, stamp, &mut ws.row_cols, a, b, i),
        };
        let n = e - s;
        if t != n {
            // Forget the row (the marks by the stamp, the values in full) and report.
            ws.stamp = stamp;
            if values.is_some() {
                ws.dense[..slots].fill(V::NEG_ZERO);
            }
            return Err(row_len_mismatch(i, t, n));
        }
        // Without values `dense` is not used (and may be unsized).
        let dense = match values {
            Some(_) => &mut ws.dense[b_base..slots],
            None => &mut [],
        };
        emit_by_value(
            dense,
            OrderBits {
                l0: &mut ws.order_bits,
                l1: &mut ws.order_l1,
                l2: &mut ws.order_l2,
            },
            &mut ws.row_cols[..n],
            sorted,
            c_base,
            &mut cols[s..e],
            values.and(vals.as_deref_mut().map(|v| &mut v[s..e])),
        );
    }
    ws.stamp = stamp;
    Ok(())
}

/// Sums the products of row i of A*B into `dense` (indexed by B's raw column; -0.0
/// between rows, so the first addition gives the product bitwise and each sum is the
/// one the other accumulators form) and lists the row's columns (0-based) in
/// `row_cols` in first-touch order; returns how many distinct columns the row has
/// (more than `row_cols` holds when the structure changed: the rest are not written).
///
/// A column can be new only while its value is still zero, so the mark (`mark[c] ==
/// stamp`: in the row) is looked at only then: per product the loop does what the
/// replay kernel does plus a compare on the value it loaded anyway, a branch that
/// rows with many products per entry predict well. Its own function (not inlined into
/// the row loop): inlined, the loop ran short of registers and reloaded two pointers from
/// the stack per product.
#[inline(never)]
fn accumulate_row<V: Scalar, O: Idx, I: Idx>(
    dense: &mut [V],
    mark: &mut [u32],
    stamp: u32,
    row_cols: &mut [u32],
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    i: usize,
) -> usize {
    let b_base = b.base();
    let mut t = 0usize;
    let (a_cols, a_vals) = a.row_entries(i, av);
    for (&j, &aij) in a_cols.iter().zip(a_vals) {
        let (b_cols, b_vals) = b.row_entries(a.col_of(j), bv);
        for (&c, &bq) in b_cols.iter().zip(b_vals) {
            let c = c.to_usize();
            let slot = &mut dense[c];
            let old = *slot;
            *slot = old + aij * bq;
            if old == V::ZERO {
                new_column(mark, stamp, row_cols, &mut t, c, b_base);
            }
        }
    }
    t
}

/// Lists column `c` (raw) of the current row in `row_cols[t]` (0-based) unless its
/// mark says the row has it already.
#[inline(always)]
fn new_column(
    mark: &mut [u32],
    stamp: u32,
    row_cols: &mut [u32],
    t: &mut usize,
    c: usize,
    b_base: usize,
) {
    let m = &mut mark[c];
    if *m != stamp {
        *m = stamp;
        if let Some(x) = row_cols.get_mut(*t) {
            *x = c.wrapping_sub(b_base) as u32;
        }
        *t += 1;
    }
}

/// [`accumulate_row`] without values: only the columns, a mark test per product.
fn pattern_row<V: Scalar, O: Idx, I: Idx>(
    mark: &mut [u32],
    stamp: u32,
    row_cols: &mut [u32],
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    i: usize,
) -> usize {
    let b_cols = b.col_indices();
    let b_base = b.base();
    let mut t = 0usize;
    for p in a.row_range(i) {
        let j = a.col(p);
        for &c in &b_cols[b.row_start(j)..b.row_start(j + 1)] {
            new_column(mark, stamp, row_cols, &mut t, c.to_usize(), b_base);
        }
    }
    t
}

/// Narrow rows shorter than this are sorted (insertion sort: few entries, often nearly
/// in order already); longer ones are emitted from the flat order bit map.
const ORDER_BITS_MIN: usize = 16;

/// Wide rows up to this length are sorted (insertion sort, see [`sort_keys`]); longer ones
/// are emitted through the summary levels of the order bit maps, which lose to the
/// insertion sort on short rows and beat `sort_unstable` on long ones
/// (docs/DESIGN-NOTES.md, cpu::dense).
const ORDER_SUMMARY_MIN: usize = INSERTION_MAX + 1;

/// A row goes through the flat order bit map when its columns span fewer than this many
/// 64-bit words per entry (then the scan of the window costs less than keeping the
/// summary levels). Rows of the stencil and elasticity products span 0.5-0.7 words per
/// entry; a larger bound measured no better (docs/DESIGN-NOTES.md, cpu::dense).
const ORDER_WORDS_PER_ENTRY: usize = 2;

/// The order bit maps of one thread: `l0` has a bit per column of C, `l1` a bit per word
/// of `l0`, `l2` a bit per word of `l1`. All zero between rows.
struct OrderBits<'a> {
    l0: &'a mut [u64],
    l1: &'a mut [u64],
    l2: &'a mut [u64],
}

/// Calls `f` on the set bits of `words` in order (bit b of `words[w]` is the value
/// `(first + w) * 64 + b`), lowest first, and clears the words. (A branch on the bits
/// left in the word: decoding each word branch-free into a buffer first measured slower;
/// docs/DESIGN-NOTES.md, cpu::dense.)
#[inline(always)]
fn drain_words(words: &mut [u64], first: usize, f: &mut impl FnMut(usize)) {
    for (w, word) in words.iter_mut().enumerate() {
        let mut x = std::mem::take(word);
        let c0 = (first + w) * 64;
        while x != 0 {
            let c = c0 + x.trailing_zeros() as usize;
            x &= x - 1;
            f(c);
        }
    }
}

/// Calls `f` on the set bits of `l0` in order by walking the summary words `l1[w1s]`
/// (each set bit names a word of `l0`), clearing both levels.
#[inline(always)]
fn drain_two(
    l0: &mut [u64],
    l1: &mut [u64],
    w1s: std::ops::RangeInclusive<usize>,
    f: &mut impl FnMut(usize),
) {
    let first = *w1s.start();
    drain_words(&mut l1[w1s], first, &mut |w0| {
        drain_words(&mut l0[w0..=w0], w0, f)
    });
}

/// How [`OrderBits::visit_in_order`] went through a row.
#[derive(Clone, Copy, Debug, PartialEq)]
enum OrderPath {
    /// Not at all: the row is to be sorted.
    Sort,
    /// The window of `l0`.
    Flat,
    /// `l1`, then `l0`.
    Two,
    /// `l2`, `l1`, then `l0`.
    Three,
    /// Placed by rank ([`rank_short`]).
    Ranked,
    /// As it was (unsorted output, or a row found in order).
    InOrder,
}

impl OrderBits<'_> {
    /// Calls `f` on `cols` (distinct columns, below 64 * `l0.len()`) in ascending order,
    /// or returns [`OrderPath::Sort`] without calling it when that would cost more than
    /// sorting them:
    /// one OR per column and level used, then a walk of the set bits. Narrow rows (span
    /// under [`ORDER_WORDS_PER_ENTRY`] words per column, from [`ORDER_BITS_MIN`] columns)
    /// scan the window of `l0`; rows of more than [`ORDER_SUMMARY_MIN`] columns go
    /// through `l1` when its window is under a word per column, else also through `l2`
    /// when that window is (always when C has at most 2^18 * [`ORDER_SUMMARY_MIN`]
    /// columns).
    #[inline(always)]
    fn visit_in_order(&mut self, cols: &[u32], f: &mut impl FnMut(usize)) -> OrderPath {
        let n = cols.len();
        if n < ORDER_BITS_MIN.min(ORDER_SUMMARY_MIN) {
            return OrderPath::Sort;
        }
        let (lo, hi) = cols
            .iter()
            .fold((u32::MAX, 0u32), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        let (lo, hi) = (lo as usize, hi as usize);
        if n >= ORDER_BITS_MIN && (hi >> 6) - (lo >> 6) < n * ORDER_WORDS_PER_ENTRY {
            for &c in cols {
                self.l0[(c >> 6) as usize] |= 1u64 << (c & 63);
            }
            drain_words(&mut self.l0[lo >> 6..=hi >> 6], lo >> 6, f);
            return OrderPath::Flat;
        }
        if n < ORDER_SUMMARY_MIN {
            return OrderPath::Sort;
        }
        if (hi >> 12) - (lo >> 12) < n {
            for &c in cols {
                self.l0[(c >> 6) as usize] |= 1u64 << (c & 63);
                self.l1[(c >> 12) as usize] |= 1u64 << ((c >> 6) & 63);
            }
            drain_two(self.l0, self.l1, lo >> 12..=hi >> 12, f);
            return OrderPath::Two;
        }
        if (hi >> 18) - (lo >> 18) < n {
            for &c in cols {
                self.l0[(c >> 6) as usize] |= 1u64 << (c & 63);
                self.l1[(c >> 12) as usize] |= 1u64 << ((c >> 6) & 63);
                self.l2[(c >> 18) as usize] |= 1u64 << ((c >> 12) & 63);
            }
            let (l0, l1) = (&mut *self.l0, &mut *self.l1);
            drain_words(&mut self.l2[lo >> 18..=hi >> 18], lo >> 18, &mut |w1| {
                drain_two(l0, l1, w1..=w1, f)
            });
            return OrderPath::Three;
        }
        OrderPath::Sort
    }
}

/// Writes one finished row (`row_cols[..n]` in first-touch order, sums in `row_vals` by
/// slot) and returns `pos` to all-`EMPTY` for the row's columns.
///
/// Sorted output needs no sort of the row: rows of up to [`RANK_MAX`] columns (from 16
/// on AVX2) are put in place by rank ([`rank_short`]: no branch on the columns; rows
/// already in order are only checked); longer ones are set as bits in the order bit maps
/// (one OR per distinct column and level, not per product) and the set bits are walked in
/// order (see [`OrderBits::visit_in_order`]). Rows too sparse even for the summary
/// levels, and short rows the ranks leave, are sorted.
#[inline]
fn emit_row<V: Scalar, J: Idx>(
    pos: &mut [u32],
    order: OrderBits<'_>,
    (row_cols, n): (&mut [u32], usize),
    row_vals: &[V],
    (sorted, c_base): (bool, usize),
    cols: &mut [J],
    vals: Option<&mut [V]>,
) {
    let to_j =
        |c: u32| J::try_from_usize(c as usize + c_base).expect("column checked at symbolic time");
    let row_cols = &mut row_cols[..n];
    if !sorted {
        // First-touch order: slot t holds column row_cols[t] (the values in one copy).
        for (dc, &c) in cols.iter_mut().zip(row_cols.iter()) {
            pos[c as usize] = EMPTY;
            *dc = to_j(c);
        }
        if let Some(vals) = vals {
            vals.copy_from_slice(&row_vals[..n]);
        }
        return;
    }
    match vals {
        // Slot t holds column row_cols[t]'s sum.
        Some(vals) => walk_row(order, row_cols, sorted, |q, t, c| {
            let q = q.unwrap_or_else(|| pos[c as usize] as usize);
            pos[c as usize] = EMPTY;
            cols[t] = to_j(c);
            vals[t] = row_vals[q];
        }),
        None => walk_row(order, row_cols, sorted, |_, t, c| {
            pos[c as usize] = EMPTY;
            cols[t] = to_j(c);
        }),
    };
}

/// Calls `put(q, t, c)` for each column `c` of the row `row_cols` (distinct columns, in
/// first-touch order) with `t` its place in the output row: in ascending order of columns
/// when `sorted` (see [`emit_row`]), else as they are. `q` is `c`'s index in `row_cols`
/// when the walk knows it, `None` after a sort of `row_cols` or a walk of the order bits.
/// Returns the path taken.
#[inline(always)]
fn walk_row(
    mut order: OrderBits<'_>,
    row_cols: &mut [u32],
    sorted: bool,
    mut put: impl FnMut(Option<usize>, usize, u32),
) -> OrderPath {
    if sorted {
        let mut ranks = [0u8; RANK_MAX];
        match rank_short(row_cols, &mut ranks) {
            ShortOrder::Ranked => {
                for (q, (&c, &t)) in row_cols.iter().zip(&ranks).enumerate() {
                    put(Some(q), t as usize, c);
                }
                return OrderPath::Ranked;
            }
            ShortOrder::InOrder => {}
            ShortOrder::Unranked => {
                let mut t = 0usize;
                let path = order.visit_in_order(row_cols, &mut |c| {
                    put(None, t, c as u32);
                    t += 1;
                });
                if path != OrderPath::Sort {
                    debug_assert_eq!(t, row_cols.len());
                    return path;
                }
                // Not ranked and too sparse for the bit maps.
                sort_compared(row_cols);
                for (t, &c) in row_cols.iter().enumerate() {
                    put(None, t, c);
                }
                return OrderPath::Sort;
            }
        }
    }
    for (q, &c) in row_cols.iter().enumerate() {
        put(Some(q), q, c);
    }
    OrderPath::InOrder
}

/// [`emit_row`] for [`fill_rows_by_value`]: `row_cols` holds the row's columns (0-based)
/// in first-touch order; with `vals` the sums are taken from `dense` (0-based here),
/// which is returned to -0.0 for the row's columns.
#[inline]
fn emit_by_value<V: Scalar, J: Idx>(
    dense: &mut [V],
    order: OrderBits<'_>,
    row_cols: &mut [u32],
    sorted: bool,
    c_base: usize,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) {
    let neg0 = V::NEG_ZERO;
    let to_j =
        |c: u32| J::try_from_usize(c as usize + c_base).expect("column checked at symbolic time");
    match vals {
        Some(vals) => walk_row(order, row_cols, sorted, |_, t, c| {
            vals[t] = std::mem::replace(&mut dense[c as usize], neg0);
            cols[t] = to_j(c);
        }),
        None => walk_row(order, row_cols, sorted, |_, t, c| cols[t] = to_j(c)),
    };
}

/// What the dense symbolic phase produces.
pub struct Counted {
    /// C's row offsets (0-based, length m + 1).
    pub row_ptr: Vec<usize>,
    /// Multiplications of A*B.
    pub flops: u64,
    /// Flop-balanced row chunks for the numeric phase (see
    /// [`crate::cpu::partition::balanced_chunks`]).
    pub chunks: Vec<usize>,
    pub max_row_nnz: usize,
    /// C's columns, when the symbolic phase was asked to keep them and could.
    pub record: Option<crate::cpu::record::ColumnRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::args::{AccKind, NumericPlan};
    use crate::error::Status;

    fn held<V>(w: &DenseRows<V>) -> u64 {
        fn c<T>(v: &Vec<T>) -> u64 {
            bytes_of::<T>(v.capacity())
        }
        c(&w.pos)
            + c(&w.row_cols)
            + c(&w.row_vals)
            + c(&w.dense)
            + c(&w.order_bits)
            + c(&w.order_l1)
            + c(&w.order_l2)
            + c(&w.row_lanes)
            + c(&w.lanes)
            + c(&w.mark)
            + c(&w.bits)
            + c(&w.touched)
    }

    /// The memory-limit estimates equal what the prepare functions allocate from empty.
    #[test]
    fn byte_estimates_match_prepare() {
        for (k, max_row) in [
            (0usize, 0usize),
            (1, 1),
            (100, 7),
            (70000, 300),
            (5000, 9000),
        ] {
            for sorted in [false, true] {
                let mut w = DenseRows::<f64>::default();
                w.prepare_numeric(k, max_row, sorted, false).unwrap();
                let want = DenseRows::<f64>::numeric_bytes(k, max_row, sorted, false);
                assert_eq!(
                    held(&w),
                    want,
                    "numeric k {k} row {max_row} sorted {sorted}"
                );
                let mut w = DenseRows::<f32>::default();
                w.prepare_by_value(k, max_row, sorted, true).unwrap();
                let want = DenseRows::<f32>::by_value_bytes(k, max_row, sorted, true, false);
                assert_eq!(
                    held(&w),
                    want,
                    "by value k {k} row {max_row} sorted {sorted}"
                );
            }
            for compressed in [false, true] {
                let mut w = DenseRows::<f64>::default();
                w.prepare_symbolic(k, compressed, (false, false)).unwrap();
                let want = DenseRows::<f64>::symbolic_bytes(k, compressed);
                assert_eq!(held(&w), want, "symbolic k {k} compressed {compressed}");
            }
        }
    }

    /// The plan parts the row kernels read.
    fn np<'p>(
        groups: Option<&'p RowGroups>,
        row_ptr: &'p [usize],
        sorted: bool,
        c_base: usize,
    ) -> NumericPlan<'p> {
        NumericPlan {
            kind: AccKind::Dense,
            chunks: &[],
            groups,
            row_ptr,
            max_row_nnz: 0,
            sorted,
            c_base,
            prefetch: false,
            direct: !sorted,
        }
    }
    use crate::cpu::compress;

    /// A banded n x n pattern with `w` entries per row starting at column i (wrapped),
    /// values 1 + (i + c) % 7; columns shifted by `base`.
    fn banded(n: usize, w: usize, base: usize) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
        let mut offs = vec![base as i32];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for i in 0..n {
            for d in 0..w {
                let c = (i + 3 * d) % n;
                cols.push((c + base) as i32);
                vals.push(1.0 + ((i + c) % 7) as f64);
            }
            offs.push((cols.len() + base) as i32);
        }
        (offs, cols, vals)
    }

    /// [`banded`] with -0.0, +0.0, negated values and a few NaN among the values.
    fn banded_specials(n: usize, w: usize, base: usize) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
        let (offs, cols, mut vals) = banded(n, w, base);
        for (p, v) in vals.iter_mut().enumerate() {
            *v = match p % 11 {
                0 => -0.0,
                1 => 0.0,
                2 => -*v,
                3 if p % 97 == 3 => f64::NAN,
                _ => *v,
            };
        }
        (offs, cols, vals)
    }

    /// Row offsets from row counts.
    fn offsets(nnz: &[usize]) -> Vec<usize> {
        let mut row_ptr = vec![0usize; nnz.len() + 1];
        for (i, &c) in nnz.iter().enumerate() {
            row_ptr[i + 1] = row_ptr[i] + c;
        }
        row_ptr
    }

    fn counts(
        a: &CsrRef<'_, i32, i32, f64>,
        cb: Option<&CompressedRows>,
    ) -> (Vec<usize>, Vec<u64>) {
        let mut ws = DenseRows::<f64>::default();
        ws.prepare_symbolic(a.ncols(), cb.is_some(), (false, false))
            .unwrap();
        let m = a.nrows();
        let (mut nnz, mut flops) = (vec![0; m], vec![0; m]);
        // Three times over the same workspace: the later passes run on reset state (with
        // the prefetches of B's rows, then over runs of A's columns, neither of which
        // changes a count). Then row by row, for the flops of each row (one-row blocks).
        let mut first = None;
        for pass in 0..3 {
            ws.prefetch = pass == 1;
            ws.runs = pass == 2;
            let nb = m.div_ceil(FLOP_BLOCK);
            let mut blocks = vec![0u64; nb];
            let t = count_rows(&mut ws, (a, a), cb, None, 0..m, &mut nnz, &mut blocks, None);
            let per_row: u64 = (0..m)
                .map(|i| {
                    let mut one = [0u64];
                    count_rows(
                        &mut ws,
                        (a, a),
                        cb,
                        None,
                        i..i + 1,
                        &mut nnz[i..i + 1],
                        &mut one,
                        None,
                    );
                    flops[i] = one[0];
                    one[0]
                })
                .sum();
            assert_eq!(t.flops, per_row);
            for (q, &bf) in blocks.iter().enumerate() {
                let rows = q * FLOP_BLOCK..((q + 1) * FLOP_BLOCK).min(m);
                assert_eq!(bf, flops[rows].iter().sum::<u64>());
            }
            let got = (nnz.clone(), flops.clone());
            assert_eq!(
                first.get_or_insert_with(|| got.clone()),
                &got,
                "pass {pass}"
            );
        }
        (nnz, flops)
    }

    /// The columns `count_rows` records for every row of A*A (sorted or in its order),
    /// with the counts it returns beside them; None when the record ran out of `limit`.
    fn recorded(
        a: &CsrRef<'_, i32, i32, f64>,
        cb: Option<&CompressedRows>,
        sorted: bool,
        limit: usize,
    ) -> (Vec<usize>, Option<Vec<Vec<u32>>>) {
        recorded_runs(a, cb, sorted, limit, false)
    }

    /// [`recorded`], the plain count over runs of A's columns when `runs`.
    fn recorded_runs(
        a: &CsrRef<'_, i32, i32, f64>,
        cb: Option<&CompressedRows>,
        sorted: bool,
        limit: usize,
        runs: bool,
    ) -> (Vec<usize>, Option<Vec<Vec<u32>>>) {
        let mut ws = DenseRows::<f64>::default();
        ws.prepare_symbolic(a.ncols(), cb.is_some(), (false, runs))
            .unwrap();
        let m = a.nrows();
        let mut nnz = vec![0; m];
        let mut blocks = vec![0u64; m.div_ceil(FLOP_BLOCK)];
        let mut out = Vec::new();
        let budget = std::sync::atomic::AtomicUsize::new(limit);
        let mut r = Recorder::new(&mut out, sorted, &budget);
        count_rows(
            &mut ws,
            (a, a),
            cb,
            None,
            0..m,
            &mut nnz,
            &mut blocks,
            Some(&mut r),
        );
        if r.failed {
            return (nnz, None);
        }
        let mut at = 0;
        let rows = nnz
            .iter()
            .map(|&n| {
                at += n;
                out[at - n..at].to_vec()
            })
            .collect();
        assert_eq!(at, out.len());
        (nnz, Some(rows))
    }

    /// The vector expansion of bit-map words into columns writes what the scalar one does.
    #[test]
    fn word_expansions_agree() {
        #[cfg(target_arch = "x86_64")]
        if crate::platform::isa::Isa::Avx512.available() {
            let mut s = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = move || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s
            };
            let nw = 300;
            let mut bits: Vec<u64> = (0..nw)
                .map(|w| match w % 5 {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1 << 63,
                    _ => next() & next(),
                })
                .collect();
            let touched: Vec<u32> = (0..nw as u32).rev().step_by(3).collect();
            let (mut b1, mut b2) = (bits.clone(), bits.clone());
            let (mut o1, mut o2) = (vec![7u32], vec![7u32]);
            expand_words(&mut b1, &touched, &mut o1);
            let n: usize = touched
                .iter()
                .map(|&w| bits[w as usize].count_ones() as usize)
                .sum();
            o2.reserve(n + 16);
            // SAFETY: AVX-512 is available and o2 has room for n + 16 more.
            unsafe { expand_avx512(&mut b2, &touched, &mut o2) };
            assert_eq!(o1, o2);
            assert_eq!(o1.len(), n + 1);
            assert_eq!(b1, b2);
            touched.iter().for_each(|&w| bits[w as usize] = 0);
            assert_eq!(b1, bits);
        }
    }

    /// The count over runs of A's columns (`RUNS` of [`count_plain`]) against the set union
    /// of B's rows: stencil runs, runs through the last column, duplicates inside a run,
    /// columns out of order, empty rows of A and of B inside runs; 0- and 1-based. The
    /// record (sorted and in order of first touch) against the same union.
    #[test]
    fn runs_count_matches_the_set_union() {
        let n = 240;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        let rows: Vec<Vec<usize>> = (0..n)
            .map(|i| match i % 9 {
                0 => vec![],
                1 => vec![n - 3, n - 2, n - 1],
                2 => vec![i, i, i + 1, i + 2, i + 2],
                3 => vec![i + 2, i + 1, i],
                _ => {
                    let mut r = Vec::new();
                    for _ in 0..1 + next(4) {
                        let (c, len) = (next(n), 1 + next(5));
                        r.extend((c..c + len).filter(|&c| c < n));
                    }
                    if i % 2 == 0 {
                        r.sort();
                    }
                    r
                }
            })
            .collect();
        for base in [0usize, 1] {
            let mut offs = vec![base as i32];
            let (mut cols, mut vals) = (Vec::new(), Vec::new());
            for r in &rows {
                cols.extend(r.iter().map(|&c| (c + base) as i32));
                vals.extend(r.iter().map(|&c| c as f64));
                offs.push((cols.len() + base) as i32);
            }
            let a = CsrRef::new(n, n, base, &offs, &cols, Some(&vals)).unwrap();
            let (nnz, flops) = counts(&a, None);
            // With the runs flag set the count that keeps a record (which goes entry by
            // entry) records the same columns in the same order.
            let (rn, by_runs) = recorded_runs(&a, None, false, usize::MAX, true);
            let (_, by_entry) = recorded_runs(&a, None, false, usize::MAX, false);
            let (sn, sorted) = recorded_runs(&a, None, true, usize::MAX, true);
            assert_eq!((&rn, &sn), (&nnz, &nnz));
            assert_eq!(by_runs, by_entry);
            let (by_runs, sorted) = (by_runs.unwrap(), sorted.unwrap());
            for (i, r) in rows.iter().enumerate() {
                let union: std::collections::BTreeSet<usize> =
                    r.iter().flat_map(|&j| rows[j].iter().copied()).collect();
                let f: usize = r.iter().map(|&j| rows[j].len()).sum();
                assert_eq!(
                    (nnz[i], flops[i]),
                    (union.len(), f as u64),
                    "row {i} base {base}"
                );
                let want: Vec<u32> = union.iter().map(|&c| c as u32).collect();
                assert_eq!(sorted[i], want, "row {i} base {base}");
                let mut got = by_runs[i].clone();
                got.sort();
                assert_eq!(got, want, "row {i} base {base}");
            }
        }
    }

    /// Both compressed loops: wide bands (several pairs per row of B) and narrow ones
    /// (about one pair per row: runs of pairs on one word are merged in a register).
    #[test]
    fn compressed_and_plain_counts_agree() {
        for (base, w) in [(0, 40), (1, 40), (0, 3), (1, 3), (1, 2)] {
            let n = 300;
            let (offs, cols, vals) = banded(n, w, base);
            let a = CsrRef::new(n, n, base, &offs, &cols, Some(&vals)).unwrap();
            let cb = compress::compress_rows(&a).unwrap().unwrap();
            assert_eq!(cb.view().short_rows, w < 40, "w = {w}");
            let plain = counts(&a, None);
            assert_eq!(counts(&a, Some(&cb)), plain);
            let records: Vec<_> = [
                (None, false),
                (None, true),
                (Some(&cb), false),
                (Some(&cb), true),
            ]
            .into_iter()
            .map(|(c, sorted)| {
                let (nnz, rows) = recorded(&a, c, sorted, usize::MAX);
                assert_eq!(nnz, plain.0);
                // Out of room part-way: the counts stay right, the record is dropped.
                let (nnz, none) = recorded(&a, c, sorted, plain.0.iter().sum::<usize>() / 2);
                assert_eq!((nnz, none), (plain.0.clone(), None));
                (sorted, rows.unwrap())
            })
            .collect();
            // Reference: distinct columns per row by sorting.
            for i in 0..n {
                let mut cs: Vec<usize> = a
                    .row_range(i)
                    .flat_map(|p| a.row_range(a.col(p)).map(|q| a.col(q)))
                    .collect();
                assert_eq!(plain.1[i], cs.len() as u64);
                cs.sort_unstable();
                cs.dedup();
                assert_eq!(plain.0[i], cs.len());
                for (sorted, rows) in &records {
                    let mut got: Vec<usize> = rows[i].iter().map(|&c| c as usize).collect();
                    if !sorted {
                        got.sort_unstable();
                    }
                    assert_eq!(got, cs, "row {i} sorted {sorted} base {base} w {w}");
                }
            }
            if w < 40 {
                continue;
            }
            // Stride-3 bands of 40 entries: 64-column words hold ~21 of them.
            let est = compress::estimate(&a, &a).unwrap();
            assert!(est.compressed < 0.2 * est.flops, "{est:?}");
            assert!(est.pays(a.nnz(), false) && est.pays(a.nnz(), true));
        }
    }

    /// One row through `emit_row` (sorted, with and without values, 0-based i32 and
    /// 1-based i64 output) on the workspace `ws` sized for `k` columns; checks the output
    /// against a sort and the state left behind, and returns the path the order bit maps
    /// take for the row (`emit_row` puts rows of `rank_lengths()` columns in place by rank
    /// instead).
    fn emit_checked(ws: &mut DenseRows<f64>, k: usize, first_touch: &[u32]) -> OrderPath {
        let n = first_touch.len();
        ws.prepare_numeric(k, n, true, false).unwrap();
        let mut want = first_touch.to_vec();
        want.sort_unstable();
        let mut order = OrderBits {
            l0: &mut ws.order_bits,
            l1: &mut ws.order_l1,
            l2: &mut ws.order_l2,
        };
        let mut seen = Vec::new();
        let path = order.visit_in_order(first_touch, &mut |c| seen.push(c as u32));
        if path != OrderPath::Sort {
            assert_eq!(seen, want, "k {k} n {n}");
        }
        for (with_vals, one_based) in [(true, false), (false, true), (true, true)] {
            for (t, &c) in first_touch.iter().enumerate() {
                ws.pos[c as usize] = t as u32;
                ws.row_cols[t] = c;
                ws.row_vals[t] = 0.5 + t as f64;
            }
            let order = OrderBits {
                l0: &mut ws.order_bits,
                l1: &mut ws.order_l1,
                l2: &mut ws.order_l2,
            };
            let mut vals = vec![-1.0f64; n];
            let base = one_based as usize;
            let got: Vec<u64> = if one_based {
                let mut cols = vec![0i64; n];
                let v = with_vals.then_some(&mut vals[..]);
                let (pos, rc, rv) = (&mut ws.pos, &mut ws.row_cols, &ws.row_vals);
                emit_row(pos, order, (rc, n), rv, (true, 1), &mut cols, v);
                cols.iter().map(|&c| c as u64).collect()
            } else {
                let mut cols = vec![0i32; n];
                let v = with_vals.then_some(&mut vals[..]);
                let (pos, rc, rv) = (&mut ws.pos, &mut ws.row_cols, &ws.row_vals);
                emit_row(pos, order, (rc, n), rv, (true, 0), &mut cols, v);
                cols.iter().map(|&c| c as u64).collect()
            };
            let want_cols: Vec<u64> = want.iter().map(|&c| (c as usize + base) as u64).collect();
            assert_eq!(got, want_cols, "k {k} n {n}");
            if with_vals {
                for (&c, &v) in want.iter().zip(&vals) {
                    let slot = first_touch.iter().position(|&x| x == c).unwrap();
                    assert_eq!(v, 0.5 + slot as f64);
                }
            }
            assert!(first_touch.iter().all(|&c| ws.pos[c as usize] == EMPTY));
            let clear = |v: &[u64]| v.iter().all(|&w| w == 0);
            assert!(clear(&ws.order_bits) && clear(&ws.order_l1) && clear(&ws.order_l2));
        }
        path
    }

    /// Distinct columns: `lo`, `hi` and `n - 2` more drawn from `lo..hi`, shuffled.
    fn spread(n: usize, lo: u32, hi: u32, seed: u64) -> Vec<u32> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut cols = vec![lo, hi];
        while cols.len() < n {
            let c = lo + (next() % (hi - lo) as u64) as u32;
            if !cols.contains(&c) {
                cols.push(c);
            }
        }
        for i in (1..cols.len()).rev() {
            cols.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        cols.truncate(n);
        cols
    }

    #[test]
    fn short_rows_in_order_shuffled_and_reversed() {
        let mut ws = DenseRows::<f64>::default();
        let k = 3 * 4096 + 5;
        for n in 0..=RANK_MAX + 2 {
            let asc: Vec<u32> = (0..n as u32).map(|i| i * 97 % k as u32).collect();
            let mut asc = asc;
            asc.sort_unstable();
            asc.dedup();
            let desc: Vec<u32> = asc.iter().rev().copied().collect();
            // In order but for the last two: the descent in the last lane checked.
            let mut late = asc.clone();
            let l = late.len();
            if l >= 2 {
                late.swap(l - 2, l - 1);
            }
            for row in [
                asc,
                desc,
                late,
                spread(n.max(2), 0, k as u32 - 1, n as u64 + 1),
            ] {
                emit_checked(&mut ws, k, &row);
            }
        }
    }

    #[test]
    fn sorted_rows_through_every_level_of_the_order_bits() {
        use OrderPath::*;
        let mut ws = DenseRows::<f64>::default();
        // Columns not a multiple of 64, 4096 or 2^18: the last column sits in a partial word.
        let k = 5 * 4096 + 13;
        let last = k as u32 - 1;
        assert_eq!(emit_checked(&mut ws, k, &[]), Sort);
        assert_eq!(emit_checked(&mut ws, k, &[last]), Sort);
        // Narrow rows: a span of 2n - 1 words is flat, 2n is not (sorted below the summary
        // threshold, through l1 above it).
        for (n, seed) in [(16usize, 1u64), (20, 2), (40, 3)] {
            let w = 2 * n as u32;
            let hi = last;
            assert_eq!(
                emit_checked(&mut ws, k, &spread(n, hi - (w - 1) * 64, hi, seed)),
                Flat
            );
            let lo = (hi / 64 - w) * 64;
            let path = emit_checked(&mut ws, k, &spread(n, lo, hi, seed));
            assert_eq!(path, if n > INSERTION_MAX { Two } else { Sort }, "n {n}");
        }
        assert_eq!(emit_checked(&mut ws, k, &spread(15, 0, 100, 4)), Sort);
        // Wide rows: up to INSERTION_MAX entries sorted, then through l1.
        assert_eq!(emit_checked(&mut ws, k, &spread(32, 0, last, 5)), Sort);
        assert_eq!(emit_checked(&mut ws, k, &spread(33, 0, last, 6)), Two);
        assert_eq!(emit_checked(&mut ws, k, &spread(100, 7, last, 7)), Two);
        // l1 window of n - 1 words: two levels; of n words: three.
        let k = (1 << 18) + 37;
        let n = 40usize;
        let span = (n as u32 - 1) * 4096;
        assert_eq!(
            emit_checked(&mut ws, k, &spread(n, 100, 100 + span, 8)),
            Two
        );
        assert_eq!(
            emit_checked(&mut ws, k, &spread(n, 100, 4096 + span, 9)),
            Three
        );
        // Across the l2 word boundary, up to the last column: an l1 window of 64 words is
        // walked through l2 by rows of up to 64 entries, directly by longer ones.
        let last = k as u32 - 1;
        assert_eq!(emit_checked(&mut ws, k, &spread(n, 0, last, 10)), Three);
        assert_eq!(emit_checked(&mut ws, k, &spread(64, 0, last, 11)), Three);
        assert_eq!(emit_checked(&mut ws, k, &spread(65, 0, last, 17)), Two);
        // Over 2^24 columns (68 words of l2): an l2 window of n - 1 words is walked, one of
        // n words is sorted (sort_unstable above INSERTION_MAX entries).
        let k = (1 << 24) + (3 << 18) + 4096 + 7;
        let last = k as u32 - 1;
        let n = 33usize;
        let span = (n as u32 - 1) << 18;
        assert_eq!(
            emit_checked(&mut ws, k, &spread(n, last - span, last, 12)),
            Three
        );
        assert_eq!(emit_checked(&mut ws, k, &spread(n, 0, span, 13)), Three);
        assert_eq!(
            emit_checked(&mut ws, k, &spread(n, 0, span + (1 << 18), 14)),
            Sort
        );
        assert_eq!(emit_checked(&mut ws, k, &spread(2000, 0, last, 15)), Three);
        assert_eq!(emit_checked(&mut ws, k, &spread(60, 5, last, 16)), Sort);
    }

    #[test]
    fn changed_structure_is_reported_and_state_stays_clean() {
        let n = 50;
        let (offs, cols, vals) = banded(n, 5, 0);
        let a = CsrRef::new(n, n, 0, &offs, &cols, Some(&vals)).unwrap();
        let (nnz, _) = counts(&a, None);
        let row_ptr = offsets(&nnz);
        let total = row_ptr[n];
        let mut ws = DenseRows::<f64>::default();
        let max_row = *nnz.iter().max().unwrap();
        let run = |ws: &mut DenseRows<f64>, rp: &[usize], sorted: bool| {
            let mut c = vec![0i32; rp[n]];
            let mut v = vec![0f64; rp[n]];
            fill_rows(
                ws,
                &Product {
                    a: &a,
                    b: &a,
                    plan: &np(None, rp, sorted, 0),
                },
                0..n,
                &mut c,
                Some(&mut v),
            )
            .map(|()| (c, v))
        };
        // A plan that claims one entry fewer in row 7 (and a too small bound), then one more.
        ws.prepare_numeric(n, max_row - 1, true, false).unwrap();
        let mut short = row_ptr.clone();
        short[8..].iter_mut().for_each(|r| *r -= 1);
        let e = run(&mut ws, &short, false).unwrap_err();
        assert_eq!(e.status, Status::PlanMismatch);
        ws.prepare_numeric(n, max_row + 1, true, true).unwrap();
        let mut long = row_ptr.clone();
        long[8..].iter_mut().for_each(|r| *r += 1);
        assert_eq!(
            run(&mut ws, &long, true).unwrap_err().status,
            Status::PlanMismatch
        );
        // The same workspace then gives the right product, sorted and unsorted.
        let (c1, v1) = run(&mut ws, &row_ptr, false).unwrap();
        let (c2, v2) = run(&mut ws, &row_ptr, true).unwrap();
        assert_eq!(c1.len(), total);
        for i in 0..n {
            let r = row_ptr[i]..row_ptr[i + 1];
            let mut pairs: Vec<(i32, f64)> = c1[r.clone()]
                .iter()
                .copied()
                .zip(v1[r.clone()].iter().copied())
                .collect();
            pairs.sort_by_key(|p| p.0);
            let sorted: Vec<(i32, f64)> = c2[r.clone()]
                .iter()
                .copied()
                .zip(v2[r].iter().copied())
                .collect();
            assert_eq!(pairs, sorted);
            // Each entry is the sum of its products (values are small integers: exact).
            for &(c, v) in &sorted {
                let want: f64 = a
                    .row_range(i)
                    .flat_map(|p| a.row_range(a.col(p)).map(move |q| (p, q)))
                    .filter(|&(_, q)| a.col(q) == c as usize)
                    .map(|(p, q)| vals[p] * vals[q])
                    .sum();
                assert_eq!(v, want);
            }
        }
    }

    /// The in-place rule: unsorted output, 1.5 to 5 multiplications per entry of C, or
    /// more with rows of C of at most 64 entries on average.
    #[test]
    fn direct_rule_bounds() {
        assert!(direct_pays(false, 15, 10, 1));
        assert!(!direct_pays(false, 14, 10, 1));
        assert!(direct_pays(false, 50, 10, 1));
        assert!(direct_pays(false, 5000, 10, 1));
        assert!(!direct_pays(false, 51, 10, 0));
        assert!(!direct_pays(true, 30, 10, 1));
        assert!(!direct_pays(false, 0, 0, 0));
        // Above 5 per entry the mean row of C decides, not the longest.
        assert!(direct_pays(false, 6400, 640, 10));
        assert!(!direct_pays(false, 6410, 641, 10));
        assert!(direct_pays(false, 3205, 641, 10));
    }

    /// The in-place kernel ([`fill_rows_direct`]) gives bitwise the row buffer's output
    /// (unsorted; rows of C under and over [`DIRECT_MAX_ROW`]; 0- and 1-based; -0.0, +0.0
    /// and NaN among the values; with and without values; two chunks), and a plan whose
    /// counts are off (row 7 one short, one long, or empty while it has products) is
    /// reported with nothing left in `pos`.
    #[test]
    fn direct_rows_match_the_row_buffer_bitwise() {
        for base in [0usize, 1] {
            for w in [5usize, 40] {
                let n = 300;
                let (offs, cols, vals) = banded_specials(n, w, base);
                let a = CsrRef::new(n, n, base, &offs, &cols, Some(&vals)).unwrap();
                let (nnz, _) = counts(&a, None);
                assert_eq!(nnz[7], 2 * w - 1);
                assert_eq!(nnz[7] > DIRECT_MAX_ROW, w == 40);
                let row_ptr = offsets(&nnz);
                let max_row = *nnz.iter().max().unwrap();
                let mut ws = DenseRows::<f64>::default();
                ws.prepare_numeric(n, max_row + 1, false, false).unwrap();
                let c_base = 1 - base;
                let run = |ws: &mut DenseRows<f64>, rp: &[usize], direct: bool, with_vals: bool| {
                    let total = rp[n];
                    let (mut c, mut v) = (vec![0i64; total], vec![7.0f64; total]);
                    let mut plan = np(None, rp, false, c_base);
                    plan.direct = direct;
                    for r in [0..131, 131..n] {
                        let (s, e) = (rp[r.start], rp[r.end]);
                        let p = Product {
                            a: &a,
                            b: &a,
                            plan: &plan,
                        };
                        let v = with_vals.then_some(&mut v[s..e]);
                        fill_rows(ws, &p, r, &mut c[s..e], v)?;
                    }
                    Ok::<_, crate::error::Error>((c, v))
                };
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                for with_vals in [true, false] {
                    let (c1, v1) = run(&mut ws, &row_ptr, false, with_vals).unwrap();
                    let (c2, v2) = run(&mut ws, &row_ptr, true, with_vals).unwrap();
                    assert_eq!(c1, c2, "base {base} w {w}");
                    assert_eq!(bits(&v1), bits(&v2), "base {base} w {w}");
                    if with_vals {
                        assert!(v2.iter().any(|x| x.is_nan()));
                        assert!(v2.iter().any(|x| x.to_bits() == (-0.0f64).to_bits()));
                    }
                }
                let want = run(&mut ws, &row_ptr, false, true).unwrap();
                for change in [-1isize, 1, -(nnz[7] as isize)] {
                    let mut off = row_ptr.clone();
                    off[8..]
                        .iter_mut()
                        .for_each(|r| *r = r.checked_add_signed(change).unwrap());
                    let e = run(&mut ws, &off, true, true).unwrap_err();
                    assert_eq!(e.status, Status::PlanMismatch, "change {change}");
                    assert!(ws.pos.iter().all(|&p| p == EMPTY), "change {change}");
                    let again = run(&mut ws, &row_ptr, true, true).unwrap();
                    assert_eq!(again.0, want.0);
                    assert_eq!(bits(&again.1), bits(&want.1));
                }
            }
        }
    }

    /// The value kernel gives bitwise the slot kernel's output (columns and values, also
    /// with -0.0, +0.0, NaN and cancelling values), sorted and unsorted, 0- and 1-based,
    /// with and without values, on one workspace reused across calls; a changed structure
    /// is reported and leaves the workspace clean.
    #[test]
    fn by_value_kernel_matches_slot_kernel_bitwise() {
        for base in [0usize, 1] {
            let n = 200;
            let (offs, cols, vals) = banded_specials(n, 9, base);
            let a = CsrRef::new(n, n, base, &offs, &cols, Some(&vals)).unwrap();
            let (nnz, _) = counts(&a, None);
            let row_ptr = offsets(&nnz);
            let max_row = *nnz.iter().max().unwrap();
            let total = row_ptr[n];
            let mut slot_ws = DenseRows::<f64>::default();
            let mut value_ws = DenseRows::<f64>::default();
            for (sorted, with_vals) in [(false, true), (true, true), (true, false), (false, false)]
            {
                // The prefetches of B's rows change no sum: on for half the cases.
                slot_ws.prepare_numeric(n, max_row, sorted, sorted).unwrap();
                value_ws
                    .prepare_by_value(n, max_row, sorted, with_vals)
                    .unwrap();
                let (mut c1, mut v1) = (vec![0i64; total], vec![7.0f64; total]);
                let (mut c2, mut v2) = (vec![0i64; total], vec![7.0f64; total]);
                let c_base = 1 - base;
                // Two chunks, as two workers' pieces would be.
                for r in [0..77, 77..n] {
                    let (s, e) = (row_ptr[r.start], row_ptr[r.end]);
                    let v = with_vals.then_some(&mut v1[s..e]);
                    fill_rows(
                        &mut slot_ws,
                        &Product {
                            a: &a,
                            b: &a,
                            plan: &np(None, &row_ptr, sorted, c_base),
                        },
                        r.clone(),
                        &mut c1[s..e],
                        v,
                    )
                    .unwrap();
                    let v = with_vals.then_some(&mut v2[s..e]);
                    fill_rows_by_value(
                        &mut value_ws,
                        &Product {
                            a: &a,
                            b: &a,
                            plan: &np(None, &row_ptr, sorted, c_base),
                        },
                        r,
                        &mut c2[s..e],
                        v,
                    )
                    .unwrap();
                }
                assert_eq!(c1, c2, "base {base} sorted {sorted}");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&v1), bits(&v2), "base {base} sorted {sorted}");
                if with_vals {
                    assert!(v1.iter().any(|x| x.is_nan()));
                    assert!(v1.iter().any(|x| x.to_bits() == (-0.0f64).to_bits()));
                }
            }
            // A plan that claims one entry fewer in row 7, then the right one again.
            let mut short = row_ptr.clone();
            short[8..].iter_mut().for_each(|r| *r -= 1);
            let (mut c, mut v) = (vec![0i32; total], vec![0f64; total]);
            let e = fill_rows_by_value(
                &mut value_ws,
                &Product {
                    a: &a,
                    b: &a,
                    plan: &np(None, &short, false, 0),
                },
                0..n,
                &mut c,
                Some(&mut v),
            )
            .unwrap_err();
            assert_eq!(e.status, Status::PlanMismatch);
            let neg0 = (-0.0f64).to_bits();
            assert!(value_ws.dense.iter().all(|x| x.to_bits() == neg0));
            fill_rows_by_value(
                &mut value_ws,
                &Product {
                    a: &a,
                    b: &a,
                    plan: &np(None, &row_ptr, false, 0),
                },
                0..n,
                &mut c,
                Some(&mut v),
            )
            .unwrap();
            let (mut c1, mut v1) = (vec![0i32; total], vec![0f64; total]);
            fill_rows(
                &mut slot_ws,
                &Product {
                    a: &a,
                    b: &a,
                    plan: &np(None, &row_ptr, false, 0),
                },
                0..n,
                &mut c1,
                Some(&mut v1),
            )
            .unwrap();
            assert_eq!(c, c1);
            assert_eq!(
                v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                v1.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}
