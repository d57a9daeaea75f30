//! Distributed matrices, the plan (redistribution maps, tiles, buffers, windows) and the
//! six algorithms' execute.

mod algos;
mod halo1d;
mod state;

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

use super::comm::{DistComm, agree, agree_max};
use super::dense::{extent, packed_ld, scale_block};
use super::halo::{Counts, ask, renumber_by};
use super::layout::{ColMap, Grid, Ranges};
use super::model::{
    self, Algorithm, HaloFacts, Shape, TileNnz, best_within, col_block, widths_fit,
};
use super::node::{DistScalar, Layout, NodePrep, NodeSpmm};
pub use super::options::{Estimate, ExecStats, PlanOptions};
use super::raw::{self, OwnedComm, Window};
use super::tiles::{self, ATiles};
use crate::common::csr::CsrRef;
use crate::error::{Error, Result, Status, err};
use crate::types::Idx;
use state::State;

/// One rank's part of a distributed sparse matrix A (`global_rows x global_cols`): a
/// contiguous block of global rows in CSR with GLOBAL column indices, 0- or 1-based, any
/// offset/index type `CsrRef` accepts. Ranks own consecutive blocks in rank order (rank
/// q's block starts where rank q - 1's ends, as PETSc ownership ranges and contiguous
/// Tpetra maps do); a rank may own no rows.
///
/// X is distributed by A's columns: rank q owns rows `x_range` of X (start, count). For a
/// square A `None` means the same rows as A's; a rectangular A needs it on every rank.
/// Y is distributed as A's rows.
#[derive(Clone, Copy, Debug)]
pub struct DistMatrix<'a, O: Idx, I: Idx, V> {
    pub global_rows: usize,
    pub global_cols: usize,
    pub row_start: usize,
    pub local_rows: usize,
    pub x_range: Option<(usize, usize)>,
    pub base: usize,
    pub row_offsets: &'a [O],
    pub col_indices: &'a [I],
    pub values: &'a [V],
}

impl<'a, O: Idx, I: Idx, V: DistScalar> DistMatrix<'a, O, I, V> {
    /// The local rows as a typed view (O(1) checks).
    pub fn local(&self) -> Result<CsrRef<'a, O, I, V>> {
        CsrRef::new(
            self.local_rows,
            self.global_cols,
            self.base,
            self.row_offsets,
            self.col_indices,
            Some(self.values),
        )
    }
    fn x_range_or_rows(&self) -> (usize, usize) {
        self.x_range.unwrap_or((self.row_start, self.local_rows))
    }
}

/// Buffer storage: plain, or exposed in an RMA window.
pub(crate) enum Store<T: mpi::datatype::Equivalence + Copy> {
    Plain(Vec<T>),
    Exposed(Window<T>),
}

impl<T: mpi::datatype::Equivalence + Copy> Store<T> {
    pub(crate) fn get(&self) -> &[T] {
        match self {
            Store::Plain(v) => v,
            Store::Exposed(w) => w.local(),
        }
    }
    pub(crate) fn get_mut(&mut self) -> &mut [T] {
        match self {
            Store::Plain(v) => v,
            Store::Exposed(w) => w.local_mut(),
        }
    }
    pub(crate) fn window(&self) -> &Window<T> {
        match self {
            Store::Exposed(w) => w,
            Store::Plain(_) => unreachable!("one-sided algorithms expose their buffers"),
        }
    }
    pub(crate) fn expose(self, comm: &SimpleCommunicator) -> Result<Store<T>> {
        match self {
            Store::Plain(v) => Ok(Store::Exposed(Window::new(comm, v)?)),
            e => Ok(e),
        }
    }
}

/// A plan for repeated products with one A: created collectively, executed collectively
/// with new X (and Y) as often as needed; A's values may be refreshed through it.
/// Dropping it is collective too (it frees communicators and, for the one-sided
/// algorithms, RMA windows).
pub struct Plan<V: DistScalar> {
    // Fields drop in order: the windows (in `st` and `tile_store`) are freed before the
    // communicators they were created on.
    st: State<V>,
    tile_store: Store<u64>,
    world: OwnedComm,
    row: OwnedComm,
    col: OwnedComm,
    algorithm: Algorithm,
    grid: Grid,
    me: usize,
    gi: usize,
    gj: usize,
    r: Ranges,
    k: usize,
    layout: Layout,
    estimate: Estimate,
    footprint: usize,
    tiles: ATiles,
    digest: u64,
    sig: (
        crate::types::IndexType,
        crate::types::IndexType,
        usize,
        usize,
    ),
    last: ExecStats,
    /// The node's analysis of the rank's tile (`tiles.meta[0]`) where the algorithm
    /// multiplies it whole or by ranges of its rows (sA-1.5D, 1D-halo).
    prep: Option<NodePrep>,
    /// Bytes `prep` holds (in `footprint`).
    prep_bytes: usize,
}

const REC: usize = 16;

/// The planning facts every rank contributes (allgathered, then checked by every rank
/// alike so that all reach the same verdict).
#[allow(clippy::too_many_arguments)]
fn record<O: Idx, I: Idx, V: DistScalar>(
    a: &DistMatrix<'_, O, I, V>,
    o: &PlanOptions,
) -> [u64; REC] {
    let (xs, xl) = a.x_range_or_rows();
    let g = o.grid.map_or((0, 0), |g| (g.pr as u64, g.pc as u64));
    [
        a.global_rows as u64,
        a.global_cols as u64,
        a.row_start as u64,
        a.local_rows as u64,
        xs as u64,
        xl as u64,
        o.k as u64,
        o.layout as u64,
        o.algorithm.code() as u64,
        g.0,
        g.1,
        o.replication.unwrap_or(0) as u64,
        o.memory_limit.map_or(u64::MAX, |m| m as u64),
        std::mem::size_of::<V>() as u64,
        a.col_indices.len() as u64,
        0,
    ]
}

/// Checks the allgathered records (same result on every rank) and returns the ranges.
fn check_records(all: &[u64], p: usize) -> Result<Ranges> {
    let rec = |q: usize| &all[q * REC..(q + 1) * REC];
    let r0 = rec(0);
    let names = [
        "global_rows",
        "global_cols",
        "",
        "",
        "",
        "",
        "k",
        "layout",
        "algorithm",
        "grid rows",
        "grid columns",
        "replication",
        "memory_limit",
        "value type",
    ];
    for q in 1..p {
        for f in [0usize, 1, 6, 7, 8, 9, 10, 11, 12, 13] {
            if rec(q)[f] != r0[f] {
                let st = if f <= 1 {
                    Status::DimensionMismatch
                } else {
                    Status::InvalidValue
                };
                return err(
                    st,
                    format!(
                        "ranks disagree on {}: rank 0 passed {}, rank {q} passed {}",
                        names[f],
                        r0[f],
                        rec(q)[f]
                    ),
                );
            }
        }
    }
    let (m, n) = (r0[0] as usize, r0[1] as usize);
    let mut rows = vec![0usize; p + 1];
    let mut xrows = vec![0usize; p + 1];
    for q in 0..p {
        let x = rec(q);
        if x[2] as usize != rows[q] {
            return err(
                Status::InvalidValue,
                format!(
                    "row ranges do not tile the rows in rank order: rank {q} starts at row {}, \
                     expected {} (where rank {} ends); ranges overlap or leave a gap",
                    x[2],
                    rows[q],
                    q.saturating_sub(1)
                ),
            );
        }
        rows[q + 1] = rows[q] + x[3] as usize;
        if x[4] as usize != xrows[q] {
            return err(
                Status::InvalidValue,
                format!(
                    "X row ranges do not tile X's rows in rank order: rank {q} starts at row {}, \
                     expected {}",
                    x[4], xrows[q]
                ),
            );
        }
        xrows[q + 1] = xrows[q] + x[5] as usize;
    }
    if rows[p] != m {
        return err(
            Status::InvalidValue,
            format!("row ranges cover {} rows, global_rows is {m}", rows[p]),
        );
    }
    if xrows[p] != n {
        return err(
            Status::InvalidValue,
            format!(
                "X row ranges cover {} rows, global_cols (rows of X) is {n}",
                xrows[p]
            ),
        );
    }
    Ok(Ranges { rows, xrows })
}

/// The candidate (algorithm, grid) pairs the options allow.
fn candidate_list(o: &PlanOptions, p: usize) -> Result<Vec<(Algorithm, Grid)>> {
    if let Some(g) = o.grid
        && g.pr * g.pc != p
    {
        return err(
            Status::InvalidValue,
            format!("a {} x {} grid does not have {p} ranks", g.pr, g.pc),
        );
    }
    if let Some(c) = o.replication
        && (c == 0 || !p.is_multiple_of(c))
    {
        return err(
            Status::InvalidValue,
            format!("replication factor {c} does not divide the {p} ranks"),
        );
    }
    if o.algorithm == Algorithm::Halo1D
        && let Some(g) = o.grid
        && g.pc != 1
    {
        return err(
            Status::InvalidValue,
            format!("1D-halo runs on a {p} x 1 grid, not {} x {}", g.pr, g.pc),
        );
    }
    let algs: Vec<Algorithm> = match o.algorithm {
        Algorithm::Auto => Algorithm::ALL.to_vec(),
        a => vec![a],
    };
    let mut out = Vec::new();
    for a in algs {
        let forced = o.grid.or_else(|| {
            if a == Algorithm::SA15D {
                o.replication.map(|c| Grid { pr: p / c, pc: c })
            } else {
                None
            }
        });
        for g in model::grids(a, p, forced, None) {
            out.push((a, g));
        }
    }
    Ok(out)
}

/// Column counts: this rank's entries per owner of their column.
fn per_owner<O: Idx, I: Idx, V: DistScalar>(a: &CsrRef<'_, O, I, V>, r: &Ranges) -> Vec<u64> {
    let mut c = vec![0u64; r.p()];
    for p in 0..a.nnz() {
        c[r.x_owner(a.col(p))] += 1;
    }
    c
}

/// Tile nonzeros of every grid in `grids` (one allreduce for all).
fn tile_tables(
    world: &SimpleCommunicator,
    me: usize,
    owners: &[u64],
    r: &Ranges,
    grids: &[Grid],
) -> Vec<TileNnz> {
    let p = r.p();
    let mut send: Vec<u64> = Vec::new();
    let mut shapes = Vec::new();
    for &g in grids {
        let st = model::stages_of(g);
        let i = me / g.pc;
        let mut sa = vec![0u64; p];
        for j in 0..g.pc {
            sa[g.rank(i, j)] = (j..p).step_by(g.pc).map(|q| owners[q]).sum();
        }
        let mut sc = vec![0u64; g.pr * st.len()];
        for (t, s) in st.iter().enumerate() {
            sc[i * st.len() + t] = (s.g0..s.g1).map(|q| owners[q]).sum();
        }
        shapes.push((g, st, send.len(), sa.len(), sc.len()));
        send.extend(sa);
        send.extend(sc);
    }
    let mut recv = vec![0u64; send.len()];
    world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum());
    shapes
        .into_iter()
        .map(|(g, st, off, la, lc)| TileNnz {
            grid: g,
            rb: (0..g.pr).map(|i| model::row_block(r, g, i)).collect(),
            cb: (0..g.pc).map(|j| col_block(r, g, j)).collect(),
            sa: recv[off..off + la].iter().map(|&x| x as usize).collect(),
            sc: recv[off + la..off + la + lc]
                .iter()
                .map(|&x| x as usize)
                .collect(),
            n_stages: st,
        })
        .collect()
}

impl<V: DistScalar> Plan<V> {
    /// Plans `Y = alpha * A * X + beta * Y`. Collective over `comm`. Every check (local
    /// CSR, ranges, sizes, options, the memory limit) gives the same status on every rank.
    pub fn new<N: NodeSpmm, O: Idx, I: Idx>(
        comm: &DistComm,
        node: &N,
        a: &DistMatrix<'_, O, I, V>,
        opts: &PlanOptions,
    ) -> Result<Plan<V>> {
        let (est, pre) = estimate_inner(comm, node, a, opts)?;
        Self::build(comm, node, a, opts, est, pre)
    }

    fn build<N: NodeSpmm, O: Idx, I: Idx>(
        comm: &DistComm,
        node: &N,
        a: &DistMatrix<'_, O, I, V>,
        opts: &PlanOptions,
        est: Estimate,
        pre: Pre,
    ) -> Result<Plan<V>> {
        let w = comm.raw();
        let me = comm.rank();
        let cand = est.choice().clone();
        let g = cand.grid;
        let (gi, gj) = g.coords(me);
        let r = pre.r;
        let tnnz = pre
            .tables
            .into_iter()
            .find(|t| t.grid == g)
            .ok_or_else(|| Error::new(Status::Internal, "no tile table for the chosen grid"))?;
        let world = raw::dup_of(w)?;
        let row = OwnedComm::new(
            w.split_by_color_with_key(Color::with_value(gi as i32), gj as i32)
                .ok_or_else(|| Error::new(Status::Internal, "row split failed"))?,
        );
        let col = OwnedComm::new(
            w.split_by_color_with_key(Color::with_value(gj as i32), gi as i32)
                .ok_or_else(|| Error::new(Status::Internal, "column split failed"))?,
        );
        let local = a.local()?;
        let stages_n = tnnz.n_stages.clone();
        let cm = if cand.algorithm.is_stationary_c() {
            ColMap::staged(&r, &stages_n)
        } else {
            ColMap::strided(&r, g)
        };
        let mut tiles = tiles::distribute(w, row.comm(), local, a.values, &r, g, me, &cm)?;
        let wbytes = std::mem::size_of::<V>();
        let sh = Shape {
            r: &r,
            k: opts.k,
            w: wbytes,
            layout: opts.layout,
            nnz_local: &pre.nnz_local,
            halo: &pre.facts,
        };
        let bufs = model::buffers(cand.algorithm, &sh, &tnnz, me);
        // The tiles must be what the model counted (a mismatch is a bug, not bad input).
        let expect_words = bufs.tile_words;
        let check = if tiles.words.len() != expect_words {
            err(
                Status::Internal,
                format!(
                    "tiles hold {} words, the model counted {expect_words}",
                    tiles.words.len()
                ),
            )
        } else {
            Ok(())
        };
        agree(w, check)?;
        let st = match (cand.algorithm, pre.halo) {
            (Algorithm::Halo1D, Some(h)) => {
                let made = halo1d::renumber_tile::<V>(&mut tiles, &r, me, &h.rows, &h.split)
                    .and_then(|offs| {
                        State::halo1d(me, opts, &bufs, h.req, h.send_rows, h.split, offs)
                    });
                agree(w, made)?
            }
            (alg, _) => agree(w, State::alloc(alg, &r, g, me, opts, &tnnz, &bufs))?,
        };
        let digest = node.local(|| local.structure_digest());
        let sig = (O::KIND, I::KIND, a.base, a.local_rows);
        let budget = opts
            .memory_limit
            .map_or(usize::MAX, |l| l.saturating_sub(cand.memory_mine));
        let (prep, prep_bytes) = prepare::<N, V>(
            node,
            cand.algorithm,
            &tiles.meta,
            &tiles.words,
            opts.k,
            budget,
        );
        let tile_store = Store::Plain(std::mem::take(&mut tiles.words));
        let mut plan = Plan {
            world,
            row,
            col,
            algorithm: cand.algorithm,
            grid: g,
            me,
            gi,
            gj,
            r,
            k: opts.k,
            layout: opts.layout,
            footprint: cand.memory_mine + prep_bytes,
            prep_bytes,
            estimate: est,
            tiles,
            tile_store,
            digest,
            sig,
            st,
            last: ExecStats::default(),
            prep,
        };
        let exposed = plan.expose();
        agree(plan.world.comm(), exposed)?;
        Ok(plan)
    }

    /// Creates the RMA windows of the one-sided algorithms (collective). Every window
    /// spans the plan's whole communicator (targets are addressed by global rank): Open
    /// MPI's shared-memory RDMA component names a window's segment after its
    /// communicator's context id, which disjoint grid rows (or columns) on one node share,
    /// and windows on two of them then clobber each other's segment.
    fn expose(&mut self) -> Result<()> {
        let world = self.world.comm();
        match &mut self.st {
            State::Sa2d(st) if st.one_sided => {
                take_store(&mut st.x_own, |s| s.expose(world))?;
                take_store(&mut st.y_part, |s| s.expose(world))?;
            }
            State::Sc2d(st) if st.one_sided => {
                take_store(&mut st.x_own, |s| s.expose(world))?;
                take_store(&mut self.tile_store, |s| s.expose(world))?;
                if let Store::Exposed(wa) = &mut self.tile_store {
                    wa.sync_and_barrier(world);
                }
            }
            _ => {}
        }
        Ok(())
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    pub fn grid(&self) -> Grid {
        self.grid
    }
    /// The model's predictions for every candidate and the choice.
    pub fn estimate(&self) -> &Estimate {
        &self.estimate
    }
    /// Bytes this rank holds for the plan (tiles, buffers, maps), as predicted before
    /// anything was allocated.
    pub fn footprint(&self) -> usize {
        self.footprint
    }
    /// Bytes this rank actually holds (to check the prediction).
    pub fn held_bytes(&self) -> usize {
        let w = std::mem::size_of::<V>();
        let tiles = self.tiles.bytes() + self.tile_store.get().len() * 8;
        tiles
            + self.prep_bytes
            + match &self.st {
                State::Sa15d(st) => {
                    w * (st.x_own.len()
                        + st.x_send.len()
                        + st.x_stage.len()
                        + st.y_part.len()
                        + st.y_send.len()
                        + st.y_recv.len())
                }
                State::Sa2d(st) => {
                    w * (st.x_own.get().len()
                        + st.x_send.len()
                        + st.x_recv.len()
                        + st.x_stage.len()
                        + st.y_part.get().len()
                        + st.y_stage.len()
                        + st.y_own.len()
                        + st.y_send.len()
                        + st.y_recv.len())
                }
                State::Halo1d(st) => {
                    w * (st.x_ext.len() + st.x_send.len() + st.x_stage.len())
                        + (st.send_rows.len() + st.near.len()) * std::mem::size_of::<usize>()
                        + st.run_offs.len() * 8
                }
                State::Sc2d(st) => {
                    st.abuf.len() * 8
                        + w * (st.x_own.get().len()
                            + st.x_send.len()
                            + st.x_recv.len()
                            + st.x_stage.len()
                            + st.y_own.len()
                            + st.y_send.len()
                            + st.y_recv.len())
                }
            }
    }
    /// The model's payload bytes of one execute, all ranks together.
    pub fn predicted_bytes_total(&self) -> f64 {
        self.estimate.choice().bytes_total
    }
    /// Traffic of the last execute on this rank.
    pub fn last_stats(&self) -> ExecStats {
        self.last
    }
    pub fn rank(&self) -> usize {
        self.me
    }
    /// The same outcome on every rank of the plan's communicator (a caller's checks made
    /// before a collective call on the plan). Collective.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        raw::mpi_usable()?;
        agree(self.world.comm(), r)
    }
    /// Ranks of the plan's communicator.
    pub fn ranks(&self) -> usize {
        self.r.p()
    }
    /// Columns of X and Y.
    pub fn k(&self) -> usize {
        self.k
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// Rows of X this rank passes (its column range of A).
    pub fn local_x_rows(&self) -> usize {
        self.r.xr(self.me)
    }
    /// Rows of Y this rank passes (its row range of A).
    pub fn local_y_rows(&self) -> usize {
        self.r.yr(self.me)
    }

    /// New values of A (same structure, same types as at planning: checked by a digest of
    /// the structure, `Status::PlanMismatch` otherwise). Moves only the values, through
    /// the maps kept from planning. Collective.
    pub fn update_values<N: NodeSpmm, O: Idx, I: Idx>(
        &mut self,
        node: &N,
        a: &DistMatrix<'_, O, I, V>,
    ) -> Result<()> {
        raw::mpi_usable()?;
        let w = self.world.comm();
        let check = || -> Result<()> {
            let sig = (O::KIND, I::KIND, a.base, a.local_rows);
            if sig != self.sig {
                return err(
                    Status::PlanMismatch,
                    "A's types, base or row count differ from the plan's",
                );
            }
            let local = a.local()?;
            if node.local(|| local.structure_digest()) != self.digest {
                return err(
                    Status::PlanMismatch,
                    "A's structure (row offsets or column indices) changed since planning",
                );
            }
            Ok(())
        };
        agree(w, check())?;
        let words = self.tile_store.get_mut();
        self.tiles.refresh(w, self.row.comm(), a.values, words)?;
        if let Store::Exposed(wa) = &mut self.tile_store {
            wa.sync_and_barrier(self.world.comm());
        }
        if self.prep.is_some() {
            // The analysis may hold values (diagonal runs): made again from the new tile,
            // within the bytes it held (the structure, hence its size, is the same).
            let (prep, bytes) = prepare::<N, V>(
                node,
                self.algorithm,
                &self.tiles.meta,
                self.tile_store.get(),
                self.k,
                self.prep_bytes,
            );
            self.prep = prep;
            self.footprint = self.footprint - self.prep_bytes + bytes;
            self.prep_bytes = bytes;
        }
        Ok(())
    }

    /// `Y = alpha * A * X + beta * Y`: X this rank's rows of X (`x_range` rows, k columns,
    /// the plan's layout, leading dimension `ldx`), Y its rows of Y. BLAS conventions:
    /// beta = 0 does not read Y, alpha = 0 reads neither A nor X. Every rank must pass the
    /// same alpha and beta. Collective.
    /// `pre` is the caller's verdict on its own arguments: an error there on any rank is
    /// reported on every rank (in the agreement the execute makes anyway).
    #[allow(clippy::too_many_arguments)]
    pub fn execute<N: NodeSpmm>(
        &mut self,
        pre: Result<()>,
        node: &N,
        alpha: V,
        x: &[V],
        ldx: usize,
        beta: V,
        y: &mut [V],
        ldy: usize,
    ) -> Result<ExecStats> {
        raw::mpi_usable()?;
        let t0 = Instant::now();
        let (xr, yr) = (self.r.xr(self.me), self.r.yr(self.me));
        let (k, layout) = (self.k, self.layout);
        let check = || -> Result<()> {
            let need = |name: &str, rows: usize, ld: usize, len: usize| -> Result<()> {
                let min = packed_ld(layout, rows, k);
                if ld < min {
                    return err(
                        Status::InvalidValue,
                        format!(
                            "ld{name} = {ld} is smaller than {min} for {} {} ({rows} x {k})",
                            layout.name(),
                            name.to_uppercase()
                        ),
                    );
                }
                let e = extent(layout, rows, k, ld).ok_or_else(|| {
                    Error::new(Status::IndexOverflow, format!("{name}: size overflows"))
                })?;
                if len < e {
                    return err(
                        Status::InvalidValue,
                        format!("{} has {len} entries, {e} needed", name.to_uppercase()),
                    );
                }
                Ok(())
            };
            if alpha != V::ZERO {
                need("x", xr, ldx, x.len())?;
            }
            need("y", yr, ldy, y.len())
        };
        let ab = |v: V| v.to_f64().to_bits() as i64;
        let mut extra = [
            ab(alpha),
            ab(alpha).wrapping_neg(),
            ab(beta),
            ab(beta).wrapping_neg(),
        ];
        let ctl = 8 * (1 + extra.len()) as u64;
        agree_max(self.world.comm(), pre.and_then(|_| check()), &mut extra)?;
        if extra[0] != extra[1].wrapping_neg() || extra[2] != extra[3].wrapping_neg() {
            return err(Status::InvalidValue, "ranks passed different alpha or beta");
        }
        let mut stats = ExecStats {
            control_bytes: ctl,
            ..ExecStats::default()
        };
        if alpha == V::ZERO || k == 0 {
            scale_block(layout, beta, y, ldy, yr, k);
            stats.total_s = t0.elapsed().as_secs_f64();
            self.last = stats;
            return Ok(stats);
        }
        let x = &x[..extent(layout, xr, k, ldx).unwrap_or(0)];
        let ylen = extent(layout, yr, k, ldy).unwrap_or(0);
        let y = &mut y[..ylen];
        let call = Call {
            alpha,
            beta,
            x,
            ldx,
            ldy,
        };
        let r = match self.algorithm {
            Algorithm::SA15D => self.run_sa15d(node, call, y, &mut stats),
            Algorithm::SA2D | Algorithm::SA2DAsync => self.run_sa2d(node, call, y, &mut stats),
            Algorithm::SC2D | Algorithm::SC2DAsync => self.run_sc2d(node, call, y, &mut stats),
            Algorithm::Halo1D => self.run_halo1d(node, call, y, &mut stats),
            Algorithm::Auto => err(Status::Internal, "no algorithm chosen"),
        };
        // A node failure (rare: the tiles were validated) is agreed after the fact; the
        // collectives ran to the end on every rank, so nothing hangs.
        agree(self.world.comm(), r)?;
        stats.total_s = t0.elapsed().as_secs_f64();
        self.last = stats;
        Ok(stats)
    }
}

/// The scalars and caller arrays of one execute.
pub(crate) struct Call<'a, V> {
    pub alpha: V,
    pub beta: V,
    pub x: &'a [V],
    pub ldx: usize,
    pub ldy: usize,
}

/// The node's analysis of this rank's tile for the 1D plans (sA-1.5D and 1D-halo, whose
/// products are that tile or ranges of its rows), within `budget` bytes, and its bytes. An
/// analysis that fails only costs its speed-up: the products run without.
fn prepare<N: NodeSpmm, V: DistScalar>(
    node: &N,
    alg: Algorithm,
    meta: &[tiles::TileMeta],
    words: &[u64],
    k: usize,
    budget: usize,
) -> (Option<NodePrep>, usize) {
    match alg {
        Algorithm::SA15D | Algorithm::Halo1D if !meta.is_empty() => {
            let t = tiles::view::<V>(words, &meta[0]);
            match t.and_then(|t| node.spmm_prepare(t, k, budget)) {
                Ok(Some((p, bytes))) => (Some(p), bytes),
                _ => (None, 0),
            }
        }
        _ => (None, 0),
    }
}

/// Replaces a store by `f` of it (moving its buffer into a window).
fn take_store<T: mpi::datatype::Equivalence + Copy>(
    s: &mut Store<T>,
    f: impl FnOnce(Store<T>) -> Result<Store<T>>,
) -> Result<()> {
    let old = std::mem::replace(s, Store::Plain(Vec::new()));
    *s = f(old)?;
    Ok(())
}

/// What planning learned before choosing (kept for building).
struct Pre {
    r: Ranges,
    tables: Vec<TileNnz>,
    nnz_local: Vec<usize>,
    /// Every rank's halo, and this rank's requests (where 1D-halo is a candidate).
    facts: Vec<HaloFacts>,
    halo: Option<HaloPre>,
}

/// This rank's halo: the rows of X it needs from others (sorted global ids), the requests
/// (rows per owner), the local rows others asked of it.
struct HaloPre {
    rows: Vec<usize>,
    req: Counts,
    send_rows: Vec<usize>,
    split: model::InnerSplit,
}

/// The rows of X this rank's columns name outside its own block, asked of their owners,
/// and every rank's halo facts (one allgather). Collective.
fn halo_facts<O: Idx, I: Idx, V: DistScalar>(
    w: &SimpleCommunicator,
    local: &CsrRef<'_, O, I, V>,
    r: &Ranges,
    me: usize,
) -> Result<(Vec<HaloFacts>, HaloPre)> {
    let p = r.p();
    let (x0, x1) = (r.xrows[me], r.xrows[me + 1]);
    let needed = renumber_by(local.nnz(), r.n(), |e| local.col(e), |_| Ok(()))?;
    let rows: Vec<usize> = needed.into_iter().filter(|&c| c < x0 || c >= x1).collect();
    let (req, send_rows) = ask(w, &rows, &r.xrows)?;
    let peers = |c: &[i32]| c.iter().filter(|&&n| n > 0).count();
    let split = model::inner_split(
        local.nrows(),
        |i| local.row_range(i),
        |e| local.col(e),
        x0..x1,
    );
    let mine = HaloFacts {
        recv_rows: rows.len(),
        recv_peers: peers(&req.send.0),
        send_rows: send_rows.len(),
        send_peers: peers(&req.recv.0),
        inner_nnz: split.inner_nnz,
        near_rows: split.near.len(),
    };
    let mut all = vec![0u64; model::HALO_FACT_WORDS * p];
    w.all_gather_into(&mine.words()[..], &mut all[..]);
    let facts = all
        .chunks(model::HALO_FACT_WORDS)
        .map(HaloFacts::of_words)
        .collect();
    Ok((
        facts,
        HaloPre {
            rows,
            req,
            send_rows,
            split,
        },
    ))
}

/// This rank's part alone: its ranges inside the global sizes and its CSR valid (column
/// indices global).
fn check_local<'a, N: NodeSpmm, O: Idx, I: Idx, V: DistScalar>(
    node: &N,
    a: &DistMatrix<'a, O, I, V>,
) -> Result<CsrRef<'a, O, I, V>> {
    check_ranges(a)?;
    check_local_with(node, a, |l| l.validate("A")).map(|(l, ())| l)
}

/// This rank's ranges inside the global sizes.
fn check_ranges<O: Idx, I: Idx, V: DistScalar>(a: &DistMatrix<'_, O, I, V>) -> Result<()> {
    let end = a.row_start.checked_add(a.local_rows);
    if end.is_none_or(|e| e > a.global_rows) {
        return err(
            Status::InvalidValue,
            format!(
                "rows {} + {} exceed the {} global rows",
                a.row_start, a.local_rows, a.global_rows
            ),
        );
    }
    match a.x_range {
        None if a.global_rows != a.global_cols => err(
            Status::InvalidValue,
            format!(
                "A is {} x {}: a rectangular A needs x_range (this rank's rows of X)",
                a.global_rows, a.global_cols
            ),
        ),
        Some((s, n)) if s.checked_add(n).is_none_or(|e| e > a.global_cols) => err(
            Status::InvalidValue,
            format!("x_range {s} + {n} exceeds the {} rows of X", a.global_cols),
        ),
        _ => Ok(()),
    }
}

/// The checks of [`check_local`] with `full`, the check of the local rows' structure, run
/// on the node's threads.
fn check_local_with<'a, N: NodeSpmm, O: Idx, I: Idx, V: DistScalar, T: Send>(
    node: &N,
    a: &DistMatrix<'a, O, I, V>,
    full: impl FnOnce(&CsrRef<'a, O, I, V>) -> Result<T> + Send,
) -> Result<(CsrRef<'a, O, I, V>, T)> {
    let l = a.local()?;
    let t = node.local(|| full(&l))?;
    Ok((l, t))
}

/// Checks a distributed matrix: each rank's part alone, then that the parts fit together
/// (the same global sizes everywhere, rows and X rows tiling them in rank order).
/// Collective; every rank returns the same verdict. Planning repeats these checks (the
/// caller's arrays may change in between).
pub fn check_matrix<N: NodeSpmm, O: Idx, I: Idx, V: DistScalar>(
    comm: &DistComm,
    node: &N,
    a: &DistMatrix<'_, O, I, V>,
) -> Result<()> {
    raw::mpi_usable()?;
    let w = comm.raw();
    agree(w, check_local(node, a))?;
    check_fit(w, a).map(|_| ())
}

/// [`check_matrix`] on `w` for a matrix called `name` in messages, returning the row and
/// column ranges of every rank and the structure digest of this rank's rows (one pass).
pub(crate) fn check_named<N: NodeSpmm, O: Idx, I: Idx, V: DistScalar>(
    w: &SimpleCommunicator,
    node: &N,
    a: &DistMatrix<'_, O, I, V>,
    name: &str,
) -> Result<(Ranges, u64)> {
    raw::mpi_usable()?;
    let local = check_ranges(a)
        .map_err(|e| crate::common::csr::prefix(name, e))
        .and_then(|()| check_local_with(node, a, |l| l.validate_and_digest(name)));
    let digest = agree(w, local)?.1;
    Ok((check_fit(w, a)?, digest))
}

/// That the ranks' parts fit together (allgathered records, the same verdict everywhere).
fn check_fit<O: Idx, I: Idx, V: DistScalar>(
    w: &SimpleCommunicator,
    a: &DistMatrix<'_, O, I, V>,
) -> Result<Ranges> {
    let p = w.size() as usize;
    let rec = record(a, &PlanOptions::new(0, Layout::RowMajor));
    let mut all = vec![0u64; REC * p];
    w.all_gather_into(&rec[..], &mut all[..]);
    check_records(&all, p)
}

/// The model's view of the options on this communicator, without building anything:
/// every allowed candidate's predicted time, traffic and per-rank footprint, and the
/// choice. Collective (the checks of planning included).
pub fn estimate<N: NodeSpmm, O: Idx, I: Idx, V: DistScalar>(
    comm: &DistComm,
    node: &N,
    a: &DistMatrix<'_, O, I, V>,
    opts: &PlanOptions,
) -> Result<Estimate> {
    let unlimited = PlanOptions {
        memory_limit: None,
        ..*opts
    };
    let (mut e, _) = estimate_inner(comm, node, a, &unlimited)?;
    if let Some(lim) = opts.memory_limit {
        // Report the choice under the limit where one fits.
        if let Some(best) = best_within(&e.candidates, lim) {
            e.chosen = best;
        }
    }
    Ok(e)
}

fn estimate_inner<N: NodeSpmm, O: Idx, I: Idx, V: DistScalar>(
    comm: &DistComm,
    node: &N,
    a: &DistMatrix<'_, O, I, V>,
    opts: &PlanOptions,
) -> Result<(Estimate, Pre)> {
    raw::mpi_usable()?;
    let w = comm.raw();
    let p = comm.size();
    let me = comm.rank();
    let local = agree(w, check_local(node, a))?;
    // Everyone's facts, checked alike everywhere.
    let rec = record(a, opts);
    let mut all = vec![0u64; REC * p];
    w.all_gather_into(&rec[..], &mut all[..]);
    let r = check_records(&all, p)?;
    let mut cands = candidate_list(opts, p)?;
    if cands
        .iter()
        .any(|c| matches!(c.0, Algorithm::SA2DAsync | Algorithm::SC2DAsync))
        && !comm.rma_available()?
    {
        if opts.algorithm != Algorithm::Auto {
            return err(
                Status::NotSupported,
                format!(
                    "{} needs one-sided MPI, which does not work here (MPI_Win_create fails)",
                    opts.algorithm.name()
                ),
            );
        }
        cands.retain(|c| !matches!(c.0, Algorithm::SA2DAsync | Algorithm::SC2DAsync));
    }
    let nnz_local: Vec<usize> = (0..p).map(|q| all[q * REC + 14] as usize).collect();
    let owners = per_owner(&local, &r);
    let mut grids: Vec<Grid> = cands.iter().map(|c| c.1).collect();
    grids.sort_by_key(|g| (g.pr, g.pc));
    grids.dedup();
    let tables = tile_tables(w, me, &owners, &r, &grids);
    let (facts, halo) = if cands.iter().any(|c| c.0 == Algorithm::Halo1D) {
        let (f, h) = halo_facts(w, &local, &r, me)?;
        (f, Some(h))
    } else {
        (Vec::new(), None)
    };
    let net = comm.net_params()?;
    let rate = comm.local_rate::<N, V>(node)?;
    let sh = Shape {
        r: &r,
        k: opts.k,
        w: std::mem::size_of::<V>(),
        layout: opts.layout,
        nnz_local: &nnz_local,
        halo: &facts,
    };
    let mut out = Vec::new();
    for &(alg, g) in &cands {
        let t = tables
            .iter()
            .find(|t| t.grid == g)
            .expect("a table per grid");
        if !widths_fit(alg, &r, g, &t.n_stages) {
            continue;
        }
        out.push(model::candidate(alg, &sh, t, net, &rate, me));
    }
    if out.is_empty() {
        return err(
            Status::IndexOverflow,
            "every allowed algorithm needs a tile wider than int32 local column ids allow",
        );
    }
    let chosen = match opts.memory_limit {
        None => best_within(&out, usize::MAX).unwrap_or(0),
        Some(lim) => match best_within(&out, lim) {
            Some(c) => c,
            None => {
                let least = out.iter().min_by_key(|c| c.memory_max).expect("non-empty");
                return err(
                    Status::AllocFailed,
                    format!(
                        "the plan needs {} bytes on rank {} ({} on a {} x {} grid, the \
                         smallest footprint allowed), over the limit of {lim} bytes per rank",
                        least.memory_max,
                        least.memory_max_rank,
                        least.algorithm.name(),
                        least.grid.pr,
                        least.grid.pc
                    ),
                );
            }
        },
    };
    Ok((
        Estimate {
            candidates: out,
            chosen,
            net,
            rate,
        },
        Pre {
            r,
            tables,
            nnz_local,
            facts,
            halo,
        },
    ))
}
