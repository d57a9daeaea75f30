//! Per-algorithm buffers and redistribution maps, allocated at plan time to the sizes
//! the model counted (so an execute allocates nothing).

use super::super::dense::{Blocks, zeros};
use super::super::exchange::{Exchange, Loc, Piece};
use super::super::halo::Counts;
use super::super::layout::{Grid, KStage, NStage, Ranges, k_stages, split};
use super::super::model::tile_words;
use super::super::model::{
    Algorithm, Buffers, InnerSplit, TileNnz, col_block, kc, row_block, stage_rows,
};
use super::super::node::DistScalar;
use super::super::tiles::displs;
use super::{PlanOptions, Store};
use crate::error::{Result, Status, err};

pub(super) enum State<V: DistScalar> {
    Sa15d(Box<Sa15d<V>>),
    Sa2d(Box<Sa2d<V>>),
    Sc2d(Box<Sc2d<V>>),
    Halo1d(Box<Halo1d<V>>),
}

pub(super) struct Halo1d<V: DistScalar> {
    /// Rows of X received from other ranks.
    pub halo: usize,
    /// This rank's rows of X that others need, peer after peer (local ids).
    pub send_rows: Vec<usize>,
    /// The value exchange: k values per row.
    pub vals: Counts,
    /// The rows multiplied on the caller's X while the halo travels (all of them without
    /// a halo).
    pub inner: std::ops::Range<usize>,
    /// The own rows of X the other rows read (local ids, increasing).
    pub near: Vec<usize>,
    /// Row offsets of the runs before, in and after `inner`, each rebased to 0 (row i of
    /// run j at `i + j`); empty without a halo (the tile is one run).
    pub run_offs: Vec<i64>,
    /// X as the rows outside the inner run read it, in global order: the halo rows below
    /// this rank's block, the near rows, the halo rows above it (none without a halo).
    pub x_ext: Vec<V>,
    pub x_send: Vec<V>,
    /// The received rows before they are spread into column-major `x_ext`.
    pub x_stage: Vec<V>,
}

pub(super) struct Sa15d<V: DistScalar> {
    /// X's block of this grid column (replicated over the column).
    pub x_own: Vec<V>,
    pub x_send: Vec<V>,
    /// The gathered pieces before interleaving (column-major only).
    pub x_stage: Vec<V>,
    pub x_counts: Vec<i32>,
    pub x_displs: Vec<i32>,
    /// Partial Y of the grid row (c > 1).
    pub y_part: Vec<V>,
    /// The partial Y as members' segments (column-major, c > 1).
    pub y_send: Vec<V>,
    pub y_recv: Vec<V>,
    pub y_counts: Vec<i32>,
}

pub(super) struct Sa2d<V: DistScalar> {
    pub stages: Vec<KStage>,
    pub x_blocks: Blocks,
    pub x_own: Store<V>,
    pub x_block_of: Vec<Option<usize>>,
    pub x_in: Exchange,
    pub x_send: Vec<V>,
    pub x_recv: Vec<V>,
    /// One stage's X block (bulk-synchronous), or two (one-sided: current and prefetched).
    pub x_stage: Vec<V>,
    /// One stage's partial Y (bulk-synchronous), or all stages' (one-sided, exposed).
    pub y_part: Store<V>,
    /// Two fetched partial blocks (one-sided).
    pub y_stage: Vec<V>,
    pub y_blocks: Blocks,
    pub y_own: Vec<V>,
    pub y_block_of: Vec<Option<usize>>,
    pub y_out: Exchange,
    pub y_send: Vec<V>,
    pub y_recv: Vec<V>,
    pub one_sided: bool,
}

pub(super) struct Sc2d<V: DistScalar> {
    pub stages: Vec<NStage>,
    /// Nonzeros of this grid row's piece of A in each stage.
    pub stage_nnz: Vec<usize>,
    /// Local tile index of each stage this rank owns.
    pub tile_of_stage: Vec<Option<usize>>,
    pub x_blocks: Blocks,
    pub x_own: Store<V>,
    pub x_block_of: Vec<Option<usize>>,
    pub x_in: Exchange,
    pub x_send: Vec<V>,
    pub x_recv: Vec<V>,
    pub x_stage: Vec<V>,
    pub abuf: Vec<u64>,
    pub y_blocks: Blocks,
    pub y_own: Vec<V>,
    pub y_out: Exchange,
    pub y_send: Vec<V>,
    pub y_recv: Vec<V>,
    pub one_sided: bool,
}

fn fits_mpi(n: usize, what: &str) -> Result<()> {
    if n > i32::MAX as usize {
        return err(
            Status::IndexOverflow,
            format!("{what}: {n} elements exceed an MPI count (int)"),
        );
    }
    Ok(())
}

/// Pieces of a block-to-caller move: for each member, the rows it owns of every block.
impl<V: DistScalar> State<V> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn alloc(
        alg: Algorithm,
        r: &Ranges,
        g: Grid,
        me: usize,
        o: &PlanOptions,
        t: &TileNnz,
        b: &Buffers,
    ) -> Result<State<V>> {
        let (gi, gj) = g.coords(me);
        let k = o.k;
        let (xr, yr) = (r.xr(me), r.yr(me));
        let ri = row_block(r, g, gi);
        // Rows of grid-row members before member j2 (Y), of grid-column members before i2 (X).
        let yoff = |j2: usize| (0..j2).map(|j3| r.yr(g.rank(gi, j3))).sum::<usize>();
        let xoff = |i2: usize| (0..i2).map(|i3| r.xr(g.rank(i3, gj))).sum::<usize>();
        match alg {
            Algorithm::SA15D => {
                let xc: Vec<usize> = (0..g.pr).map(|i2| r.xr(g.rank(i2, gj)) * k).collect();
                let (x_counts, x_displs) = displs(&xc, "allgather of X")?;
                let yc: Vec<usize> = (0..g.pc).map(|j2| r.yr(g.rank(gi, j2)) * k).collect();
                let (y_counts, _) = displs(&yc, "reduce-scatter of Y")?;
                fits_mpi(ri * k, "reduce-scatter of Y")?;
                Ok(State::Sa15d(Box::new(Sa15d {
                    x_own: zeros(b.x_own, "replicated X block")?,
                    x_send: zeros(b.x_send, "X rows to send")?,
                    x_stage: zeros(b.x_stage, "received X pieces")?,
                    x_counts,
                    x_displs,
                    y_part: zeros(b.y_part, "partial Y")?,
                    y_send: zeros(b.y_send, "partial Y segments")?,
                    y_recv: zeros(b.y_recv, "summed Y rows")?,
                    y_counts,
                })))
            }
            Algorithm::SA2D | Algorithm::SA2DAsync => {
                let one_sided = alg == Algorithm::SA2DAsync;
                let stages = k_stages(k, g);
                let acj = col_block(r, g, gj);
                let mut x_blocks = Blocks::default();
                let mut x_block_of = vec![None; stages.len()];
                let mut y_blocks = Blocks::default();
                let mut y_block_of = vec![None; stages.len()];
                for (s, st) in stages.iter().enumerate() {
                    if st.xo == gi {
                        x_block_of[s] = Some(x_blocks.push(acj, st.width()));
                    }
                    if st.yo == gj {
                        y_block_of[s] = Some(y_blocks.push(ri, st.width()));
                    }
                    fits_mpi(acj * st.width(), "X stage block")?;
                    fits_mpi(ri * st.width(), "Y stage block")?;
                }
                let mut xs = Vec::new();
                let mut xrcv = Vec::new();
                for i2 in 0..g.pr {
                    for (s, st) in stages.iter().enumerate() {
                        if st.xo == i2 {
                            xs.push(Piece {
                                member: i2,
                                loc: Loc::Caller,
                                r0: 0,
                                c0: st.k0,
                                rows: xr,
                                cols: st.width(),
                            });
                        }
                        if let (Some(bx), true) = (x_block_of[s], st.xo == gi) {
                            xrcv.push(Piece {
                                member: i2,
                                loc: Loc::Block(bx),
                                r0: xoff(i2),
                                c0: 0,
                                rows: r.xr(g.rank(i2, gj)),
                                cols: st.width(),
                            });
                        }
                    }
                }
                let mut ys = Vec::new();
                let mut yrcv = Vec::new();
                for j2 in 0..g.pc {
                    for (s, st) in stages.iter().enumerate() {
                        if let Some(by) = y_block_of[s] {
                            ys.push(Piece {
                                member: j2,
                                loc: Loc::Block(by),
                                r0: yoff(j2),
                                c0: 0,
                                rows: r.yr(g.rank(gi, j2)),
                                cols: st.width(),
                            });
                        }
                        if st.yo == j2 {
                            yrcv.push(Piece {
                                member: j2,
                                loc: Loc::Caller,
                                r0: 0,
                                c0: st.k0,
                                rows: yr,
                                cols: st.width(),
                            });
                        }
                    }
                }
                let x_in = Exchange::new(g.pr, gi, xs, xrcv)?;
                let y_out = Exchange::new(g.pc, gj, ys, yrcv)?;
                check_len(x_in.send_len, b.x_send)?;
                check_len(x_in.recv_len, b.x_recv)?;
                check_len(y_out.send_len, b.y_send)?;
                check_len(y_out.recv_len, b.y_recv)?;
                check_len(x_blocks.len, b.x_own)?;
                check_len(y_blocks.len, b.y_own)?;
                Ok(State::Sa2d(Box::new(Sa2d {
                    stages,
                    x_blocks,
                    x_own: Store::Plain(zeros(b.x_own, "X blocks")?),
                    x_block_of,
                    x_in,
                    x_send: zeros(b.x_send, "X rows to send")?,
                    x_recv: zeros(b.x_recv, "received X pieces")?,
                    x_stage: zeros(b.x_stage, "X stage buffer")?,
                    y_part: Store::Plain(zeros(b.y_part, "partial Y")?),
                    y_stage: zeros(b.y_stage, "fetched partial Y")?,
                    y_blocks,
                    y_own: zeros(b.y_own, "Y blocks")?,
                    y_block_of,
                    y_out,
                    y_send: zeros(b.y_send, "Y pieces to send")?,
                    y_recv: zeros(b.y_recv, "received Y pieces")?,
                    one_sided,
                })))
            }
            Algorithm::SC2D | Algorithm::SC2DAsync => {
                let one_sided = alg == Algorithm::SC2DAsync;
                let stages = t.n_stages.clone();
                let ns = stages.len();
                let kcj = kc(k, g, gj);
                let stage_nnz: Vec<usize> = (0..ns).map(|s| t.sc[gi * ns + s]).collect();
                let mut tile_of_stage = vec![None; ns];
                let mut x_blocks = Blocks::default();
                let mut x_block_of = vec![None; ns];
                let mut owned = 0;
                for (s, st) in stages.iter().enumerate() {
                    if st.ao == gj {
                        tile_of_stage[s] = Some(owned);
                        owned += 1;
                    }
                    if st.xo == gi {
                        x_block_of[s] = Some(x_blocks.push(stage_rows(r, st), kcj));
                    }
                    fits_mpi(stage_rows(r, st) * kcj, "X stage block")?;
                    fits_mpi(
                        tile_words(ri, stage_nnz[s], std::mem::size_of::<V>()),
                        "A stage tile",
                    )?;
                }
                let mut xs = Vec::new();
                let mut xrcv = Vec::new();
                for j2 in 0..g.pc {
                    let (c0, c1) = split(k, g.pc, j2);
                    xs.push(Piece {
                        member: j2,
                        loc: Loc::Caller,
                        r0: 0,
                        c0,
                        rows: xr,
                        cols: c1 - c0,
                    });
                    let q2 = g.rank(gi, j2);
                    let s = stages
                        .iter()
                        .position(|st| st.g0 <= q2 && q2 < st.g1)
                        .expect("every rank's X rows lie in a stage");
                    let bx = x_block_of[s].expect("a grid row's stages hold its X rows");
                    xrcv.push(Piece {
                        member: j2,
                        loc: Loc::Block(bx),
                        r0: r.xrows[q2] - r.xrows[stages[s].g0],
                        c0: 0,
                        rows: r.xr(q2),
                        cols: kcj,
                    });
                }
                let mut y_blocks = Blocks::default();
                let by = y_blocks.push(ri, kcj);
                let mut ys = Vec::new();
                let mut yrcv = Vec::new();
                for j2 in 0..g.pc {
                    ys.push(Piece {
                        member: j2,
                        loc: Loc::Block(by),
                        r0: yoff(j2),
                        c0: 0,
                        rows: r.yr(g.rank(gi, j2)),
                        cols: kcj,
                    });
                    let (c0, c1) = split(k, g.pc, j2);
                    yrcv.push(Piece {
                        member: j2,
                        loc: Loc::Caller,
                        r0: 0,
                        c0,
                        rows: yr,
                        cols: c1 - c0,
                    });
                }
                let x_in = Exchange::new(g.pc, gj, xs, xrcv)?;
                let y_out = Exchange::new(g.pc, gj, ys, yrcv)?;
                check_len(x_in.send_len, b.x_send)?;
                check_len(x_in.recv_len, b.x_recv)?;
                check_len(y_out.send_len, b.y_send)?;
                check_len(y_out.recv_len, b.y_recv)?;
                check_len(x_blocks.len, b.x_own)?;
                check_len(y_blocks.len, b.y_own)?;
                Ok(State::Sc2d(Box::new(Sc2d {
                    stages,
                    stage_nnz,
                    tile_of_stage,
                    x_blocks,
                    x_own: Store::Plain(zeros(b.x_own, "X blocks")?),
                    x_block_of,
                    x_in,
                    x_send: zeros(b.x_send, "X rows to send")?,
                    x_recv: zeros(b.x_recv, "received X pieces")?,
                    x_stage: zeros(b.x_stage, "X stage buffer")?,
                    abuf: zeros(b.abuf_words, "A stage buffer")?,
                    y_blocks,
                    y_own: zeros(b.y_own, "Y block")?,
                    y_out,
                    y_send: zeros(b.y_send, "Y pieces to send")?,
                    y_recv: zeros(b.y_recv, "received Y pieces")?,
                    one_sided,
                })))
            }
            Algorithm::Halo1D => err(Status::Internal, "1D-halo is built from its halo"),
            Algorithm::Auto => err(Status::Internal, "no algorithm chosen"),
        }
    }

    /// The 1D-halo state from the requests of planning (rows each owner sends).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn halo1d(
        me: usize,
        o: &PlanOptions,
        b: &Buffers,
        req: Counts,
        send_rows: Vec<usize>,
        split: InnerSplit,
        run_offs: Vec<i64>,
    ) -> Result<State<V>> {
        let k = o.k;
        let halo = req.send_len;
        // Values travel against the requests: the asked rows out, the wanted rows in.
        let scaled = |c: &[i32]| -> Vec<usize> { c.iter().map(|&n| n as usize * k).collect() };
        let vals = Counts::new(&scaled(&req.recv.0), &scaled(&req.send.0), me, "rows of X")?;
        check_len(send_rows.len() * k, b.x_send)?;
        let ext = if halo > 0 {
            (split.near.len() + halo) * k
        } else {
            0
        };
        check_len(ext, b.x_own)?;
        Ok(State::Halo1d(Box::new(Halo1d {
            halo,
            send_rows,
            vals,
            inner: split.inner,
            near: split.near,
            run_offs,
            x_ext: zeros(b.x_own, "near rows of X and the halo")?,
            x_send: zeros(b.x_send, "X rows to send")?,
            x_stage: zeros(b.x_stage, "received X rows")?,
        })))
    }
}

fn check_len(got: usize, model: usize) -> Result<()> {
    if got != model {
        return err(
            Status::Internal,
            format!("a buffer needs {got} entries, the model counted {model}"),
        );
    }
    Ok(())
}
