//! The five algorithms' execute. A failure inside (a node kernel error) never skips a
//! collective: it is noted, the schedule runs to its end on every rank, and the caller
//! agrees on it afterwards.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::datatype::{Equivalence, PartitionMut};
use mpi::traits::*;

use super::super::dense::{Place, axpby_block, copy_block, packed_ld};
use super::super::exchange::{Exchange, Loc, Piece};
use super::super::model::tile_words;
use super::super::model::{col_block, kc, row_block, stage_rows};
use super::super::node::{DistScalar, Layout, NodePrep, NodeSpmm};
use super::super::raw::{self, Pending, Window};
use super::super::tiles::{self, TileMeta};
use super::state::{Sa2d, Sa15d, Sc2d, State};
use super::{Call, ExecStats, Plan};
use crate::dist::dense::Blocks;
use crate::error::{Error, Result, Status};

fn at(ld: usize) -> Place {
    Place { ld, r0: 0, c0: 0 }
}

fn place(ld: usize, p: &Piece) -> Place {
    Place {
        ld,
        r0: p.r0,
        c0: p.c0,
    }
}

/// The first error of a schedule.
#[derive(Default)]
struct Errs(Option<Error>);

impl Errs {
    fn note(&mut self, r: Result<()>) {
        if let (Err(e), None) = (r, &self.0) {
            self.0 = Some(e);
        }
    }
    fn into_result(self) -> Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Timed local product.
#[allow(clippy::too_many_arguments)]
pub(super) fn product<N: NodeSpmm, V: DistScalar>(
    node: &N,
    prep: Option<(&NodePrep, usize)>,
    a: Result<super::super::node::Tile<'_, V>>,
    layout: Layout,
    k: usize,
    x: &[V],
    ldx: usize,
    alpha: V,
    beta: V,
    y: &mut [V],
    ldy: usize,
    stats: &mut ExecStats,
) -> Result<()> {
    let t = Instant::now();
    let r = a.and_then(|a| node.spmm_prepared(prep, a, layout, k, x, ldx, alpha, beta, y, ldy));
    stats.compute_s += t.elapsed().as_secs_f64();
    r
}

/// Unpacks a received piece into a packed block.
fn into_block<V: DistScalar>(
    layout: Layout,
    blocks: &Blocks,
    data: &mut [V],
    p: &Piece,
    src: &[V],
    ld: usize,
) {
    let Loc::Block(b) = p.loc else { return };
    let m = blocks.meta[b];
    copy_block(
        layout,
        src,
        at(ld),
        &mut data[blocks.range(b)],
        Place {
            ld: packed_ld(layout, m.rows, m.cols),
            r0: p.r0,
            c0: p.c0,
        },
        p.rows,
        p.cols,
    );
}

/// Packs a piece of a packed block.
fn from_block<V: DistScalar>(
    layout: Layout,
    blocks: &Blocks,
    data: &[V],
    p: &Piece,
    dst: &mut [V],
    ld: usize,
) {
    let Loc::Block(b) = p.loc else { return };
    let m = blocks.meta[b];
    copy_block(
        layout,
        &data[blocks.range(b)],
        Place {
            ld: packed_ld(layout, m.rows, m.cols),
            r0: p.r0,
            c0: p.c0,
        },
        dst,
        at(ld),
        p.rows,
        p.cols,
    );
}

/// The caller's X into the plan's X blocks.
#[allow(clippy::too_many_arguments)]
fn x_in<V: DistScalar>(
    ex: &Exchange,
    comm: &mpi::topology::SimpleCommunicator,
    layout: Layout,
    c: &Call<'_, V>,
    blocks: &Blocks,
    own: &mut [V],
    sbuf: &mut [V],
    rbuf: &mut [V],
    stats: &mut ExecStats,
) {
    let (s, r) = ex.run(
        comm,
        layout,
        sbuf,
        rbuf,
        |p, dst, ld| copy_block(layout, c.x, place(c.ldx, p), dst, at(ld), p.rows, p.cols),
        |p, src, ld| into_block(layout, blocks, own, p, src, ld),
    );
    stats.bytes_sent += s;
    stats.bytes_received += r;
}

/// The plan's Y blocks into the caller's Y (`y = alpha * s + beta * y`).
#[allow(clippy::too_many_arguments)]
fn y_out<V: DistScalar>(
    ex: &Exchange,
    comm: &mpi::topology::SimpleCommunicator,
    layout: Layout,
    c: &Call<'_, V>,
    blocks: &Blocks,
    own: &[V],
    sbuf: &mut [V],
    rbuf: &mut [V],
    y: &mut [V],
    stats: &mut ExecStats,
) {
    let (s, r) = ex.run(
        comm,
        layout,
        sbuf,
        rbuf,
        |p, dst, ld| from_block(layout, blocks, own, p, dst, ld),
        |p, src, ld| {
            axpby_block(
                layout,
                c.alpha,
                src,
                at(ld),
                c.beta,
                y,
                place(c.ldy, p),
                p.rows,
                p.cols,
            )
        },
    );
    stats.bytes_sent += s;
    stats.bytes_received += r;
}

/// A get of `len` elements at `disp` of member `target`'s window.
#[derive(Clone, Copy)]
struct Fetch {
    target: usize,
    disp: usize,
    len: usize,
}

/// Two buffers alternating between the block in use and the one being fetched.
struct Ring<'b, T: Equivalence + Copy> {
    free: [Option<&'b mut [T]>; 2],
}

impl<'b, T: Equivalence + Copy> Ring<'b, T> {
    fn new(buf: &'b mut [T]) -> Ring<'b, T> {
        let h = buf.len() / 2;
        let (a, b) = buf.split_at_mut(h);
        Ring {
            free: [Some(a), Some(b)],
        }
    }
    /// Starts fetch `f` into buffer `slot` (`None`: nothing to fetch).
    fn start<'w>(
        &mut self,
        win: &'w Window<T>,
        f: Option<Fetch>,
        slot: usize,
        recv: &mut u64,
    ) -> Result<Option<(usize, Pending<'w, 'b, T>)>> {
        let Some(f) = f else { return Ok(None) };
        let buf = self.free[slot]
            .take()
            .ok_or_else(|| Error::new(Status::Internal, "prefetch buffer in use"))?;
        *recv += (f.len * std::mem::size_of::<T>()) as u64;
        Ok(Some((slot, win.get(f.target, f.disp, buf, f.len)?)))
    }
    fn give_back(&mut self, slot: usize, buf: &'b mut [T]) {
        self.free[slot] = Some(buf);
    }
}

/// Waits for a fetch, hands its data to `body`, then frees its buffer.
fn with_fetched<'b, T: Equivalence + Copy, R>(
    ring: &mut Ring<'b, T>,
    p: Option<(usize, Pending<'_, 'b, T>)>,
    body: impl FnOnce(Option<&[T]>) -> R,
) -> R {
    match p {
        Some((slot, pend)) => {
            let (data, len) = pend.wait();
            let out = body(Some(&data[..len]));
            ring.give_back(slot, data);
            out
        }
        None => body(None),
    }
}

/// Starts the A and X fetches of one stage into buffer `slot` of their rings.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn start_pair<'w, 'ba, 'bx, V: DistScalar>(
    wa: &'w Window<u64>,
    wx: &'w Window<V>,
    ra: &mut Ring<'ba, u64>,
    rx: &mut Ring<'bx, V>,
    fa: Option<Fetch>,
    fx: Option<Fetch>,
    slot: usize,
    recv: &mut u64,
    errs: &mut Errs,
) -> Option<(
    Option<(usize, Pending<'w, 'ba, u64>)>,
    Option<(usize, Pending<'w, 'bx, V>)>,
)> {
    let pa = ra.start(wa, fa, slot, recv);
    let px = rx.start(wx, fx, slot, recv);
    match (pa, px) {
        (Ok(a), Ok(x)) => Some((a, x)),
        (Err(e), _) | (_, Err(e)) => {
            errs.note(Err(e));
            None
        }
    }
}

impl<V: DistScalar> Plan<V> {
    pub(super) fn run_sa15d<N: NodeSpmm>(
        &mut self,
        node: &N,
        c: Call<'_, V>,
        y: &mut [V],
        stats: &mut ExecStats,
    ) -> Result<()> {
        let (g, me, gi, gj, k, layout) =
            (self.grid, self.me, self.gi, self.gj, self.k, self.layout);
        let r = &self.r;
        let w = std::mem::size_of::<V>() as u64;
        let (xr, yr) = (r.xr(me), r.yr(me));
        let tile = tiles::view::<V>(self.tile_store.get(), &self.tiles.meta[0]);
        let State::Sa15d(st) = &mut self.st else {
            return Err(Error::new(
                Status::Internal,
                "state does not match the algorithm",
            ));
        };
        let Sa15d {
            x_own,
            x_send,
            x_stage,
            x_counts,
            x_displs,
            y_part,
            y_send,
            y_recv,
            y_counts,
        } = &mut **st;
        let mut errs = Errs::default();
        let acj = col_block(r, g, gj);
        let ri = row_block(r, g, gi);
        let (xb, ldxb): (&[V], usize) = if g.pr == 1 {
            // A grid column of one rank: the caller's X is the whole block, used in place.
            (c.x, c.ldx)
        } else {
            // X: this rank's rows to every member of its grid column (row-major pieces
            // concatenate into the block; column-major ones are interleaved after).
            let packed = packed_ld(layout, xr, k);
            let send: &[V] = if c.ldx == packed {
                // Already packed: sent from the caller's array, no staging copy.
                &c.x[..xr * k]
            } else {
                copy_block(layout, c.x, at(c.ldx), x_send, at(packed), xr, k);
                &x_send[..xr * k]
            };
            {
                let dst: &mut [V] = if layout == Layout::RowMajor {
                    x_own
                } else {
                    x_stage
                };
                self.col.comm().all_gather_varcount_into(
                    send,
                    &mut PartitionMut::new(&mut dst[..acj * k], &x_counts[..], &x_displs[..]),
                );
            }
            stats.bytes_received += (acj - xr) as u64 * k as u64 * w;
            stats.bytes_sent += xr as u64 * k as u64 * w * (g.pr - 1) as u64;
            let ldx_own = packed_ld(layout, acj, k);
            if layout == Layout::ColMajor {
                let mut ro = 0;
                for (i2, &off) in x_displs.iter().enumerate() {
                    let rows = r.xr(g.rank(i2, gj));
                    let off = off as usize;
                    let dst = Place {
                        ld: ldx_own,
                        r0: ro,
                        c0: 0,
                    };
                    let src = &x_stage[off..off + rows * k];
                    copy_block(
                        layout,
                        src,
                        at(packed_ld(layout, rows, k)),
                        x_own,
                        dst,
                        rows,
                        k,
                    );
                    ro += rows;
                }
            }
            (x_own, ldx_own)
        };
        if g.pc == 1 {
            // Whole rows in one local product, straight into the caller's Y.
            errs.note(product(
                node,
                self.prep.as_ref().map(|p| (p, 0)),
                tile,
                layout,
                k,
                xb,
                ldxb,
                c.alpha,
                c.beta,
                y,
                c.ldy,
                stats,
            ));
            return errs.into_result();
        }
        let ldp = packed_ld(layout, ri, k);
        errs.note(product(
            node,
            self.prep.as_ref().map(|p| (p, 0)),
            tile,
            layout,
            k,
            xb,
            ldxb,
            V::ONE,
            V::ZERO,
            y_part,
            ldp,
            stats,
        ));
        // Partial Y summed over the grid row, each member receiving its rows.
        let src: &[V] = if layout == Layout::RowMajor {
            y_part
        } else {
            let (mut off, mut ro) = (0, 0);
            for j2 in 0..g.pc {
                let rows = r.yr(g.rank(gi, j2));
                let s = Place {
                    ld: ldp,
                    r0: ro,
                    c0: 0,
                };
                let dst = &mut y_send[off..off + rows * k];
                copy_block(
                    layout,
                    y_part,
                    s,
                    dst,
                    at(packed_ld(layout, rows, k)),
                    rows,
                    k,
                );
                off += rows * k;
                ro += rows;
            }
            y_send
        };
        errs.note(raw::reduce_scatter_sum(
            self.row.comm(),
            &src[..ri * k],
            y_recv,
            y_counts,
        ));
        stats.bytes_sent += (ri - yr) as u64 * k as u64 * w;
        stats.bytes_received += yr as u64 * k as u64 * w * (g.pc - 1) as u64;
        let s = at(packed_ld(layout, yr, k));
        axpby_block(layout, c.alpha, y_recv, s, c.beta, y, at(c.ldy), yr, k);
        errs.into_result()
    }

    pub(super) fn run_sa2d<N: NodeSpmm>(
        &mut self,
        node: &N,
        c: Call<'_, V>,
        y: &mut [V],
        stats: &mut ExecStats,
    ) -> Result<()> {
        let (g, gi, gj, layout) = (self.grid, self.gi, self.gj, self.layout);
        let r = &self.r;
        let w = std::mem::size_of::<V>() as u64;
        let tile_words_buf = self.tile_store.get();
        let tile_meta = self.tiles.meta[0];
        let tile = || tiles::view::<V>(tile_words_buf, &tile_meta);
        let (row, col, world) = (self.row.comm(), self.col.comm(), self.world.comm());
        let State::Sa2d(st) = &mut self.st else {
            return Err(Error::new(
                Status::Internal,
                "state does not match the algorithm",
            ));
        };
        let Sa2d {
            stages,
            x_blocks,
            x_own,
            x_block_of,
            x_in: xin,
            x_send,
            x_recv,
            x_stage,
            y_part,
            y_stage,
            y_blocks,
            y_own,
            y_block_of,
            y_out: yout,
            y_send,
            y_recv,
            one_sided,
        } = &mut **st;
        let mut errs = Errs::default();
        let acj = col_block(r, g, gj);
        let ri = row_block(r, g, gi);
        // X to the 2D layout: my rows' k-slices to their owners in my grid column.
        x_in(
            xin,
            col,
            layout,
            &c,
            x_blocks,
            x_own.get_mut(),
            x_send,
            x_recv,
            stats,
        );
        if !*one_sided {
            for (t, s) in stages.iter().enumerate() {
                let kt = s.width();
                let n = acj * kt;
                // X(j, t) from its owner to the grid column.
                let xb: &mut [V] = match x_block_of[t] {
                    Some(b) => &mut x_own.get_mut()[x_blocks.range(b)],
                    None => &mut x_stage[..n],
                };
                if g.pr > 1 && n > 0 {
                    col.process_at_rank(s.xo as i32).broadcast_into(xb);
                    if s.xo == gi {
                        stats.bytes_sent += n as u64 * w * (g.pr - 1) as u64;
                    } else {
                        stats.bytes_received += n as u64 * w;
                    }
                }
                let yp = &mut y_part.get_mut()[..ri * kt];
                let (ldx, ldy) = (packed_ld(layout, acj, kt), packed_ld(layout, ri, kt));
                errs.note(product(
                    node,
                    None,
                    tile(),
                    layout,
                    kt,
                    xb,
                    ldx,
                    V::ONE,
                    V::ZERO,
                    yp,
                    ldy,
                    stats,
                ));
                // Partial Y(i, t) summed at its owner in the grid row.
                if ri > 0 {
                    let root = row.process_at_rank(s.yo as i32);
                    let m = (ri * kt) as u64 * w;
                    if let Some(b) = y_block_of[t] {
                        let dst = &mut y_own[y_blocks.range(b)];
                        root.reduce_into_root(&yp[..], dst, SystemOperation::sum());
                        stats.bytes_received += m * (g.pc - 1) as u64;
                    } else {
                        root.reduce_into(&yp[..], SystemOperation::sum());
                        stats.bytes_sent += m;
                    }
                }
            }
        } else {
            // Phase 1: X(j, t) fetched from its owner on demand, starting at stage
            // (i + j) mod S (so the members of a grid row or column ask different owners),
            // the next stage's block prefetched while this one multiplies; the partial
            // products go to this rank's exposed partial-Y buffer.
            if let super::Store::Exposed(wx) = x_own {
                wx.sync_and_barrier(world);
            }
            let nst = stages.len();
            let o = (gi + gj) % nst.max(1);
            let order: Vec<usize> = (0..nst).map(|s| (s + o) % nst).collect();
            let xdisp = |t: usize| -> usize {
                (0..t)
                    .filter(|&u| stages[u].xo == stages[t].xo)
                    .map(|u| acj * stages[u].width())
                    .sum()
            };
            let pdisp = |t: usize| -> usize { (0..t).map(|u| ri * stages[u].width()).sum() };
            let fetch_x = |t: usize| -> Option<Fetch> {
                let n = acj * stages[t].width();
                (stages[t].xo != gi && n > 0).then(|| Fetch {
                    target: g.rank(stages[t].xo, gj),
                    disp: xdisp(t),
                    len: n,
                })
            };
            {
                let wx = x_own.window();
                let local_x = wx.local();
                let yp = y_part.get_mut();
                let mut ring = Ring::new(x_stage);
                let mut pend = None;
                if let Some(&t0) = order.first() {
                    match ring.start(wx, fetch_x(t0), 0, &mut stats.bytes_received) {
                        Ok(p) => pend = p,
                        Err(e) => errs.note(Err(e)),
                    }
                }
                for (s, &t) in order.iter().enumerate() {
                    let cur = pend.take();
                    if let Some(&tn) = order.get(s + 1) {
                        match ring.start(wx, fetch_x(tn), (s + 1) % 2, &mut stats.bytes_received) {
                            Ok(p) => pend = p,
                            Err(e) => errs.note(Err(e)),
                        }
                    }
                    let kt = stages[t].width();
                    let (p0, n) = (pdisp(t), ri * kt);
                    let out = &mut yp[p0..p0 + n];
                    let (ldx, ldy) = (packed_ld(layout, acj, kt), packed_ld(layout, ri, kt));
                    let r = with_fetched(&mut ring, cur, |data| {
                        let xb = match (data, x_block_of[t]) {
                            (Some(d), _) => d,
                            (None, Some(b)) => &local_x[x_blocks.range(b)],
                            (None, None) => &[][..],
                        };
                        if xb.len() < acj * kt {
                            return Err(Error::new(Status::Internal, "X stage block missing"));
                        }
                        product(
                            node,
                            None,
                            tile(),
                            layout,
                            kt,
                            xb,
                            ldx,
                            V::ONE,
                            V::ZERO,
                            out,
                            ldy,
                            stats,
                        )
                    });
                    errs.note(r);
                }
            }
            // Phase 2: each owner of Y(i, t) fetches the grid row's partial blocks
            // (starting with its own, then the next members in turn, one prefetched ahead)
            // and sums them in that fixed order.
            if let super::Store::Exposed(wp) = y_part {
                wp.sync_and_barrier(world);
            }
            {
                let wp = y_part.window();
                let local_p = wp.local();
                for (t, s) in stages.iter().enumerate() {
                    let Some(b) = y_block_of[t] else { continue };
                    let n = ri * s.width();
                    let p0 = pdisp(t);
                    let acc = &mut y_own[y_blocks.range(b)];
                    acc.copy_from_slice(&local_p[p0..p0 + n]);
                    let others: Vec<usize> = (1..g.pc).map(|d| (gj + d) % g.pc).collect();
                    let fetch_p = |m: usize| -> Option<Fetch> {
                        (n > 0).then_some(Fetch {
                            target: g.rank(gi, m),
                            disp: p0,
                            len: n,
                        })
                    };
                    let mut ring = Ring::new(&mut y_stage[..]);
                    let mut pend = None;
                    if let Some(&m0) = others.first() {
                        match ring.start(wp, fetch_p(m0), 0, &mut stats.bytes_received) {
                            Ok(p) => pend = p,
                            Err(e) => errs.note(Err(e)),
                        }
                    }
                    for (d, _) in others.iter().enumerate() {
                        let cur = pend.take();
                        if let Some(&mn) = others.get(d + 1) {
                            match ring.start(
                                wp,
                                fetch_p(mn),
                                (d + 1) % 2,
                                &mut stats.bytes_received,
                            ) {
                                Ok(p) => pend = p,
                                Err(e) => errs.note(Err(e)),
                            }
                        }
                        with_fetched(&mut ring, cur, |data| {
                            if let Some(d) = data {
                                for (a, &v) in acc.iter_mut().zip(d) {
                                    *a += v;
                                }
                            }
                        });
                    }
                }
            }
            // Nobody rewrites X or partial blocks before every get of this execute is done.
            world.barrier();
        }
        // Y back to the callers' rows.
        y_out(
            yout, row, layout, &c, y_blocks, y_own, y_send, y_recv, y, stats,
        );
        errs.into_result()
    }

    pub(super) fn run_sc2d<N: NodeSpmm>(
        &mut self,
        node: &N,
        c: Call<'_, V>,
        y: &mut [V],
        stats: &mut ExecStats,
    ) -> Result<()> {
        let (g, gi, gj, layout) = (self.grid, self.gi, self.gj, self.layout);
        let k = self.k;
        let r = &self.r;
        let w = std::mem::size_of::<V>() as u64;
        let vb = std::mem::size_of::<V>();
        let (row, col, world) = (self.row.comm(), self.col.comm(), self.world.comm());
        let own_meta = &self.tiles.meta;
        let tile_store = &mut self.tile_store;
        let State::Sc2d(st) = &mut self.st else {
            return Err(Error::new(
                Status::Internal,
                "state does not match the algorithm",
            ));
        };
        let Sc2d {
            stages,
            stage_nnz,
            tile_of_stage,
            x_blocks,
            x_own,
            x_block_of,
            x_in: xin,
            x_send,
            x_recv,
            x_stage,
            abuf,
            y_blocks,
            y_own,
            y_out: yout,
            y_send,
            y_recv,
            one_sided,
        } = &mut **st;
        let mut errs = Errs::default();
        let ri = row_block(r, g, gi);
        let kcj = kc(k, g, gj);
        let ldy = packed_ld(layout, ri, kcj);
        // This grid row's piece of A in stage t (rows ri, the stage's X rows as columns).
        let meta = |t: usize| TileMeta {
            off: 0,
            nrows: ri,
            ncols: stage_rows(r, &stages[t]),
            nnz: stage_nnz[t],
        };
        x_in(
            xin,
            row,
            layout,
            &c,
            x_blocks,
            x_own.get_mut(),
            x_send,
            x_recv,
            stats,
        );
        let mut first = true;
        if !*one_sided {
            for (t, s) in stages.iter().enumerate() {
                let nt = stage_rows(r, s);
                let m = meta(t);
                let words = m.words(vb);
                // A(i, t) from its owner to the grid row.
                let a_words: &mut [u64] = match tile_of_stage[t] {
                    Some(l) => {
                        let om = own_meta[l];
                        &mut tile_store.get_mut()[om.off..om.off + words]
                    }
                    None => &mut abuf[..words],
                };
                if g.pc > 1 && m.nnz > 0 {
                    row.process_at_rank(s.ao as i32)
                        .broadcast_into(&mut a_words[..]);
                    let b = words as u64 * 8;
                    if s.ao == gj {
                        stats.bytes_sent += b * (g.pc - 1) as u64;
                    } else {
                        stats.bytes_received += b;
                    }
                }
                // X(t, j) from its owner to the grid column.
                let n = nt * kcj;
                let xb: &mut [V] = match x_block_of[t] {
                    Some(b) => &mut x_own.get_mut()[x_blocks.range(b)],
                    None => &mut x_stage[..n],
                };
                if g.pr > 1 && n > 0 {
                    col.process_at_rank(s.xo as i32).broadcast_into(xb);
                    if s.xo == gi {
                        stats.bytes_sent += n as u64 * w * (g.pr - 1) as u64;
                    } else {
                        stats.bytes_received += n as u64 * w;
                    }
                }
                if m.nnz > 0 && kcj > 0 {
                    let beta = if first { V::ZERO } else { V::ONE };
                    let a = tiles::view::<V>(a_words, &m);
                    let ldx = packed_ld(layout, nt, kcj);
                    errs.note(product(
                        node,
                        None,
                        a,
                        layout,
                        kcj,
                        xb,
                        ldx,
                        V::ONE,
                        beta,
                        y_own,
                        ldy,
                        stats,
                    ));
                    first = false;
                }
            }
        } else {
            // Figure 4: for the owned Y(i, j), loop over the stages from (i + j) mod S,
            // fetching A(i, t) and X(t, j) from their owners, the next stage's prefetched.
            if let super::Store::Exposed(wx) = x_own {
                wx.sync_and_barrier(world);
            }
            let nst = stages.len();
            let o = (gi + gj) % nst.max(1);
            let order: Vec<usize> = (0..nst).map(|s| (s + o) % nst).collect();
            let adisp = |t: usize| -> usize {
                (0..t)
                    .filter(|&u| stages[u].ao == stages[t].ao)
                    .map(|u| tile_words(ri, stage_nnz[u], vb))
                    .sum()
            };
            let xdisp = |t: usize| -> usize {
                (0..t)
                    .filter(|&u| stages[u].xo == stages[t].xo)
                    .map(|u| stage_rows(r, &stages[u]) * kcj)
                    .sum()
            };
            // A stage contributes only with entries and columns of Y to update.
            let active = |t: usize| stage_nnz[t] > 0 && kcj > 0;
            let fetch_a = |t: usize| -> Option<Fetch> {
                (active(t) && stages[t].ao != gj).then(|| Fetch {
                    target: g.rank(gi, stages[t].ao),
                    disp: adisp(t),
                    len: meta(t).words(vb),
                })
            };
            let fetch_x = |t: usize| -> Option<Fetch> {
                let n = stage_rows(r, &stages[t]) * kcj;
                (active(t) && stages[t].xo != gi && n > 0).then(|| Fetch {
                    target: g.rank(stages[t].xo, gj),
                    disp: xdisp(t),
                    len: n,
                })
            };
            let wa = tile_store.window();
            let wx = x_own.window();
            let (local_a, local_x) = (wa.local(), wx.local());
            let mut ring_a = Ring::new(&mut abuf[..]);
            let mut ring_x = Ring::new(&mut x_stage[..]);
            let recv = &mut stats.bytes_received;
            let mut pend = order.first().and_then(|&t0| {
                let (fa, fx) = (fetch_a(t0), fetch_x(t0));
                start_pair(wa, wx, &mut ring_a, &mut ring_x, fa, fx, 0, recv, &mut errs)
            });
            let mut compute_s = 0.0;
            for (s, &t) in order.iter().enumerate() {
                let cur = pend.take();
                if let Some(&tn) = order.get(s + 1) {
                    let (fa, fx) = (fetch_a(tn), fetch_x(tn));
                    let slot = (s + 1) % 2;
                    pend = start_pair(
                        wa,
                        wx,
                        &mut ring_a,
                        &mut ring_x,
                        fa,
                        fx,
                        slot,
                        recv,
                        &mut errs,
                    );
                }
                let (pa, px) = cur.unwrap_or((None, None));
                if !active(t) {
                    continue;
                }
                let m = meta(t);
                let nt = m.ncols;
                let r_ = with_fetched(&mut ring_a, pa, |ad| {
                    let aw: &[u64] = match (ad, tile_of_stage[t]) {
                        (Some(d), _) => d,
                        (None, Some(l)) => {
                            let om = own_meta[l];
                            &local_a[om.off..om.off + m.words(vb)]
                        }
                        (None, None) => &[][..],
                    };
                    with_fetched(&mut ring_x, px, |xd| {
                        let xb: &[V] = match (xd, x_block_of[t]) {
                            (Some(d), _) => d,
                            (None, Some(b)) => &local_x[x_blocks.range(b)],
                            (None, None) => &[][..],
                        };
                        if aw.len() < m.words(vb) || xb.len() < nt * kcj {
                            return Err(Error::new(Status::Internal, "stage block missing"));
                        }
                        let beta = if first { V::ZERO } else { V::ONE };
                        let ts = Instant::now();
                        let a = tiles::view::<V>(aw, &m);
                        let ldx = packed_ld(layout, nt, kcj);
                        let res = a.and_then(|a| {
                            node.spmm(a, layout, kcj, xb, ldx, V::ONE, beta, y_own, ldy)
                        });
                        compute_s += ts.elapsed().as_secs_f64();
                        first = false;
                        res
                    })
                });
                errs.note(r_);
            }
            stats.compute_s += compute_s;
            drop(pend);
            // Nobody rewrites X blocks before every get of this execute is done.
            world.barrier();
        }
        if first {
            // No stage had entries: this rank's block of A X is zero.
            y_own.iter_mut().for_each(|v| *v = V::ZERO);
        }
        y_out(
            yout, row, layout, &c, y_blocks, y_own, y_send, y_recv, y, stats,
        );
        errs.into_result()
    }
}
