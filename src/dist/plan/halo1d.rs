//! 1D-halo execute (PETSc MPIAIJ's scatter of X): the rows of X other ranks' columns
//! name go to them point to point; while they travel, the inner run (rows that read only
//! this rank's X) is multiplied on the caller's X; then the rows before and after it, on
//! the halo rows below this rank's block, the near rows of X and the halo rows above it,
//! in that (global) order, so that the outer runs read a narrow sliding window of rows as
//! the inner run does. Every row is one product of whole rows, straight into the caller's Y.

use std::ops::Range;

use super::super::dense::{extent, packed_ld};
use super::super::halo::Counts;
use super::super::layout::Ranges;
use super::super::model::InnerSplit;
use super::super::node::{DistScalar, Layout, NodeSpmm, Tile, TileOffset};
use super::super::tiles::{self, ATiles};
use super::algos::product;
use super::state::{Halo1d, State};
use super::{Call, ExecStats, Plan};
use crate::common::csr::CsrRef;
use crate::error::{Error, Result, Status};

/// Renumbers the tile's columns (global rows of X) to rows of the operand each row reads:
/// inner rows the caller's block (`c - x0`), the others the extended block in global
/// order: the halo rows below `x0`, the near rows, the halo rows above the block
/// (`halo`: sorted global ids). Returns the row offsets of the three runs, each rebased to
/// 0 (empty without a halo: the tile is then one run on the caller's X). Entries keep
/// their order in each row, so every row sums in the caller's order.
pub(super) fn renumber_tile<V: DistScalar>(
    t: &mut ATiles,
    r: &Ranges,
    me: usize,
    halo: &[usize],
    s: &InnerSplit,
) -> Result<Vec<TileOffset>> {
    let (x0, xr) = (r.xrows[me], r.xr(me));
    let m = t.meta[0];
    let (offs, cols, _) = tiles::parts_mut::<V>(&mut t.words, &m);
    let internal = |what: String| Error::new(Status::Internal, what);
    let outer_cols = s.near.len() + halo.len();
    let below = halo.partition_point(|&h| h < x0);
    let fit = |id: usize| {
        i32::try_from(id).map_err(|_| {
            Error::new(
                Status::IndexOverflow,
                format!("X's rows read by one run ({outer_cols} or {xr}) exceed int32 ids"),
            )
        })
    };
    for i in 0..m.nrows {
        let inner = halo.is_empty() || s.inner.contains(&i);
        for c in &mut cols[offs[i] as usize..offs[i + 1] as usize] {
            let g = *c as usize;
            let own = g.wrapping_sub(x0) < xr;
            let id = match (inner, own) {
                (true, true) => g - x0,
                (false, true) => {
                    below
                        + s.near.binary_search(&(g - x0)).map_err(|_| {
                            internal(format!("row {g} of X is read but not among the near rows"))
                        })?
                }
                (false, false) if g < x0 => halo.partition_point(|&h| h < g),
                (false, false) => s.near.len() + halo.partition_point(|&h| h < g),
                (true, false) => {
                    return Err(internal(format!("inner row {i} reads row {g} of X")));
                }
            };
            *c = fit(id)?;
        }
    }
    if halo.is_empty() {
        t.meta[0].ncols = xr;
        return Ok(Vec::new());
    }
    t.meta[0].ncols = outer_cols;
    let n = m.nrows;
    let mut run_offs = Vec::with_capacity(n + 3);
    for run in [0..s.inner.start, s.inner.clone(), s.inner.end..n] {
        let base = offs[run.start];
        run_offs.extend((run.start..=run.end).map(|i| offs[i] - base));
    }
    Ok(run_offs)
}

/// Run `j` of the tile (rows `rows`) as a tile of its own over `ncols` columns.
fn run_view<'a, V: DistScalar>(
    whole: &Tile<'a, V>,
    run_offs: &'a [TileOffset],
    j: usize,
    rows: Range<usize>,
    ncols: usize,
) -> Result<Tile<'a, V>> {
    let offs = &run_offs[rows.start + j..=rows.end + j];
    let e = whole.row_start(rows.start)..whole.row_start(rows.end);
    let vals = whole.values().map(|v| &v[e.clone()]);
    CsrRef::new(rows.len(), ncols, 0, offs, &whole.col_indices()[e], vals)
}

/// The rows `rows` of Y (`layout`, leading dimension `ld`, k columns) as their own block.
fn y_rows<'a, V>(
    y: &'a mut [V],
    layout: Layout,
    rows: &Range<usize>,
    k: usize,
    ld: usize,
) -> &'a mut [V] {
    let at = match layout {
        Layout::RowMajor => rows.start * ld,
        Layout::ColMajor => rows.start,
    };
    let len = extent(layout, rows.len(), k, ld).unwrap_or(0);
    &mut y[at..at + len]
}

/// The non-empty pieces of one side of an exchange of rows of k values: (first entry,
/// rows).
fn pieces((c, d): &(Vec<i32>, Vec<i32>), k: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    c.iter()
        .zip(d)
        .filter(|&(&n, _)| n > 0)
        .map(move |(&n, &at)| (at as usize, n as usize / k.max(1)))
}

/// Column-major rows `rows` of X (leading dimension `ldx`, k columns) into rows `at..` of
/// `dst` (leading dimension `ld`), column after column: a copy per run of consecutive rows
/// (stencil matrices: runs of whole planes), or, where runs are short (a power-law
/// matrix's rows come one by one), a gather per column. Finding the runs there cost a
/// mispredicted branch per run, 12% of an SpMV execute on rmat_16 at two ranks.
fn copy_cols<V: Copy>(
    dst: &mut [V],
    ld: usize,
    at: usize,
    rows: &[usize],
    x: &[V],
    ldx: usize,
    k: usize,
) {
    // No rows: X may be empty (a rank that owns none of its rows).
    if rows.is_empty() {
        return;
    }
    // Counted without a branch per row.
    let breaks = rows.windows(2).filter(|w| w[1] != w[0] + 1).count();
    if rows.len() < 4 * (breaks + 1) {
        for j in 0..k {
            let d = &mut dst[j * ld + at..j * ld + at + rows.len()];
            let src = &x[j * ldx..];
            for (o, &r) in d.iter_mut().zip(rows) {
                *o = src[r];
            }
        }
        return;
    }
    let mut i = 0;
    while i < rows.len() {
        let r0 = rows[i];
        let mut n = 1;
        while i + n < rows.len() && rows[i + n] == r0 + n {
            n += 1;
        }
        for j in 0..k {
            let d = j * ld + at + i;
            dst[d..d + n].copy_from_slice(&x[j * ldx + r0..j * ldx + r0 + n]);
        }
        i += n;
    }
}

/// The exchange's payload into the execute's statistics.
fn count_bytes<V>(vals: &Counts, stats: &mut ExecStats) {
    let w = std::mem::size_of::<V>() as u64;
    let (sent, recv) = vals.others();
    stats.bytes_sent += sent * w;
    stats.bytes_received += recv * w;
}

impl<V: DistScalar> Plan<V> {
    pub(super) fn run_halo1d<N: NodeSpmm>(
        &mut self,
        node: &N,
        c: Call<'_, V>,
        y: &mut [V],
        stats: &mut ExecStats,
    ) -> Result<()> {
        let (k, layout) = (self.k, self.layout);
        let xr = self.r.xr(self.me);
        // The node's analysis of the whole tile; each run is a range of its rows.
        let prep = |first: usize| self.prep.as_ref().map(|p| (p, first));
        let whole = tiles::view::<V>(self.tile_store.get(), &self.tiles.meta[0]);
        let State::Halo1d(st) = &mut self.st else {
            return Err(Error::new(
                Status::Internal,
                "state does not match the algorithm",
            ));
        };
        let Halo1d {
            halo,
            send_rows,
            vals,
            inner,
            near,
            run_offs,
            x_ext,
            x_send,
            x_stage,
        } = &mut **st;
        let h = *halo;
        // Each peer's piece travels in the plan's layout (column-major: its rows column
        // after column), so that every copy is of runs of consecutive rows.
        match layout {
            Layout::RowMajor => {
                for (i, &row) in send_rows.iter().enumerate() {
                    x_send[i * k..(i + 1) * k].copy_from_slice(&c.x[row * c.ldx..row * c.ldx + k]);
                }
            }
            Layout::ColMajor => {
                for (at, n) in pieces(&vals.send, k) {
                    let rows = &send_rows[at / k..at / k + n];
                    copy_cols(&mut x_send[at..at + n * k], n, 0, rows, c.x, c.ldx, k);
                }
            }
        }
        if h == 0 {
            // No halo to wait for (rows may still go out): the whole tile on the caller's
            // X, as one product, while the sends travel.
            let r = vals.run_sparse(self.world.comm(), x_send, x_stage, || {
                product(
                    node,
                    prep(0),
                    whole,
                    layout,
                    k,
                    c.x,
                    c.ldx,
                    c.alpha,
                    c.beta,
                    y,
                    c.ldy,
                    stats,
                )
            });
            count_bytes::<V>(vals, stats);
            return r;
        }
        let nr = near.len();
        let ld = packed_ld(layout, nr + h, k);
        // Halo rows below this rank's block (they come from the ranks before it).
        let lo = vals.recv_below() / k.max(1);
        let inner = inner.clone();
        let inner_r = {
            let y_in = y_rows(y, layout, &inner, k, c.ldy);
            let copy_near = |near_x: &mut [V], at: usize| match layout {
                Layout::RowMajor => {
                    for (i, &row) in near.iter().enumerate() {
                        near_x[(at + i) * k..(at + i + 1) * k]
                            .copy_from_slice(&c.x[row * c.ldx..row * c.ldx + k]);
                    }
                }
                Layout::ColMajor => copy_cols(near_x, ld, at, near, c.x, c.ldx, k),
            };
            let mut inner_product = || {
                // A bad tile (a bug: it was validated) is reported after the exchange.
                let Ok(whole) = &whole else { return Ok(()) };
                if inner.is_empty() {
                    return Ok(());
                }
                let t = run_view(whole, run_offs, 1, inner.clone(), xr);
                product(
                    node,
                    prep(inner.start),
                    t,
                    layout,
                    k,
                    c.x,
                    c.ldx,
                    c.alpha,
                    c.beta,
                    y_in,
                    c.ldy,
                    stats,
                )
            };
            let comm = self.world.comm();
            match layout {
                // Row-major halo rows land in place, below and above the near rows.
                Layout::RowMajor => {
                    let (below, rest) = x_ext.split_at_mut(lo * k);
                    let (near_x, above) = rest.split_at_mut(nr * k);
                    vals.run_sparse_split(comm, x_send, (below, above), || {
                        copy_near(near_x, 0);
                        inner_product()
                    })
                }
                Layout::ColMajor => vals.run_sparse(comm, x_send, x_stage, || {
                    copy_near(x_ext, lo);
                    inner_product()
                }),
            }
        };
        if layout == Layout::ColMajor {
            // Each piece holds consecutive halo rows, all below or all above the near rows.
            for (at, n) in pieces(&vals.recv, k) {
                let first = at / k;
                let to = if first < lo { first } else { first + nr };
                for j in 0..k {
                    x_ext[j * ld + to..j * ld + to + n]
                        .copy_from_slice(&x_stage[at + j * n..at + (j + 1) * n]);
                }
            }
        }
        count_bytes::<V>(vals, stats);
        inner_r?;
        let whole = whole?;
        let nrows = whole.nrows();
        for (j, rows) in [(0, 0..inner.start), (2, inner.end..nrows)] {
            if rows.is_empty() {
                continue;
            }
            let t = run_view(&whole, run_offs, j, rows.clone(), nr + h);
            let y_out = y_rows(y, layout, &rows, k, c.ldy);
            product(
                node,
                prep(rows.start),
                t,
                layout,
                k,
                x_ext,
                ld,
                c.alpha,
                c.beta,
                y_out,
                c.ldy,
                stats,
            )?;
        }
        Ok(())
    }
}
