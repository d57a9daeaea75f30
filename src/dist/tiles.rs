//! A's tiles: packed in `u64` words (offsets, local column ids, values: one buffer per
//! tile, so a tile is one message or one RMA get), and the plan-time redistribution from
//! the callers' rows to the tiles, kept as maps so new values of A move without the
//! structure.

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::comm::agree;
use super::layout::{ColMap, Grid, Ranges};
use super::model::tile_words;
use super::node::{DistScalar, Tile, TileIndex, TileOffset};
use super::raw::{words_as, words_as_mut};
use crate::common::csr::CsrRef;
use crate::error::{Error, Result, Status};
use crate::platform::alloc::{try_filled, try_with_capacity};
use crate::types::Idx;

/// A tile inside a word buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileMeta {
    pub off: usize,
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
}

impl TileMeta {
    pub fn words(&self, value_bytes: usize) -> usize {
        tile_words(self.nrows, self.nnz, value_bytes)
    }
}

/// The tile at `m` in `words` (relative offset 0 when `words` is the tile alone).
pub fn view<'a, V: DistScalar>(words: &'a [u64], m: &TileMeta) -> Result<Tile<'a, V>> {
    let w = std::mem::size_of::<V>();
    let t = &words[m.off..m.off + m.words(w)];
    let o = m.nrows + 1;
    let c = m.nnz.div_ceil(2);
    let offs = words_as::<TileOffset>(&t[..o], o);
    let cols = words_as::<TileIndex>(&t[o..o + c], m.nnz);
    let vals = words_as::<V>(&t[o + c..], m.nnz);
    CsrRef::new(m.nrows, m.ncols, 0, offs, cols, Some(vals))
}

/// The parts of the tile at `m`, writable.
pub fn parts_mut<'a, V: DistScalar>(
    words: &'a mut [u64],
    m: &TileMeta,
) -> (&'a mut [TileOffset], &'a mut [TileIndex], &'a mut [V]) {
    let w = std::mem::size_of::<V>();
    let t = &mut words[m.off..m.off + m.words(w)];
    let o = m.nrows + 1;
    let c = m.nnz.div_ceil(2);
    let (offs, rest) = t.split_at_mut(o);
    let (cols, vals) = rest.split_at_mut(c);
    (
        words_as_mut::<TileOffset>(offs, o),
        words_as_mut::<TileIndex>(cols, m.nnz),
        words_as_mut::<V>(vals, m.nnz),
    )
}

/// This rank's tiles of A and how values travel to them.
pub struct ATiles {
    pub meta: Vec<TileMeta>,
    pub words: Vec<u64>,
    refresh: Refresh,
}

/// The value moves of a refresh: the caller's entries in send order, the counts of the
/// alltoallv in the grid row, and where each received run goes.
struct Refresh {
    send_perm: Vec<usize>,
    scounts: Vec<i32>,
    sdispls: Vec<i32>,
    rcounts: Vec<i32>,
    rdispls: Vec<i32>,
    /// (offset in the receive buffer, local tile index, entry offset in the tile, length).
    segs: Vec<(usize, usize, usize, usize)>,
    recv_len: usize,
}

impl ATiles {
    /// Bytes held (tiles and refresh maps).
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
            + self.refresh.send_perm.len() * std::mem::size_of::<usize>()
            + self.refresh.segs.len() * 4 * std::mem::size_of::<usize>()
    }
}

/// Displacements from counts, or `IndexOverflow` if a sum exceeds an MPI int.
pub fn displs(counts: &[usize], what: &str) -> Result<(Vec<i32>, Vec<i32>)> {
    let mut c = Vec::with_capacity(counts.len());
    let mut d = Vec::with_capacity(counts.len());
    let mut acc = 0usize;
    for &n in counts {
        let fit = |v: usize| {
            i32::try_from(v).map_err(|_| {
                Error::new(
                    Status::IndexOverflow,
                    format!("{what}: {v} elements exceed an MPI count (int)"),
                )
            })
        };
        c.push(fit(n)?);
        d.push(fit(acc)?);
        acc += n;
    }
    Ok((c, d))
}

/// Entries of the rows of a grid row's members and the tiles of a column map: the
/// plan-time redistribution of A. Collective over `world` (errors are agreed on it) and
/// the grid row `row`.
#[allow(clippy::too_many_arguments)]
pub fn distribute<O: Idx, I: Idx, V: DistScalar>(
    world: &SimpleCommunicator,
    row: &SimpleCommunicator,
    a: CsrRef<'_, O, I, V>,
    vals: &[V],
    r: &Ranges,
    g: Grid,
    me: usize,
    cm: &ColMap,
) -> Result<ATiles> {
    let (gi, gj) = g.coords(me);
    let nt = cm.tiles();
    let lr = a.nrows();
    // Pass 1 (local): tile of each entry, counts per (tile, row), send order.
    let prep = || -> Result<(Vec<usize>, Vec<i64>, Vec<TileIndex>)> {
        let mut tile_of: Vec<u32> = try_filled(a.nnz(), 0u32, "tile of each entry of A")?;
        let mut lid: Vec<TileIndex> = try_filled(a.nnz(), 0, "local column ids of A")?;
        let mut counts: Vec<i64> = try_filled(nt * lr, 0i64, "row counts per tile")?;
        for i in 0..lr {
            for p in a.row_range(i) {
                let c = a.col(p);
                let q = r.x_owner(c);
                let t = cm.tile_of_rank[q];
                tile_of[p] = t as u32;
                lid[p] = (cm.base[q] + c - r.xrows[q]) as TileIndex;
                counts[t * lr + i] += 1;
            }
        }
        // Stable counting sort by tile: entries of a tile stay in row order, and tiles go
        // out in increasing id, which is also increasing owner column.
        let mut start = vec![0usize; nt + 1];
        for &t in &tile_of {
            start[t as usize + 1] += 1;
        }
        for t in 0..nt {
            start[t + 1] += start[t];
        }
        let mut perm: Vec<usize> = try_filled(a.nnz(), 0usize, "send order of A")?;
        let mut sorted: Vec<TileIndex> = try_filled(a.nnz(), 0, "A entries to send")?;
        for (p, &t) in tile_of.iter().enumerate() {
            let s = &mut start[t as usize];
            perm[*s] = p;
            sorted[*s] = lid[p];
            *s += 1;
        }
        Ok((perm, counts, sorted))
    };
    let (perm, counts, sorted_cols) = agree(world, prep())?;
    // Per member of the grid row: the tiles it owns.
    let pc = g.pc;
    let tiles_of = |j: usize| (0..nt).filter(move |&t| cm.owner_col[t] == j);
    let member_rows = |j: usize| r.yr(g.rank(gi, j));
    let mut tile_nnz = vec![0usize; nt];
    for t in 0..nt {
        tile_nnz[t] = counts[t * lr..(t + 1) * lr].iter().sum::<i64>() as usize;
    }
    // Counts exchange: to member j, for each of its tiles, this rank's row counts.
    // Every count goes to some member once: nt * lr entries, as `counts` (already had).
    let mut send_counts: Vec<i64> = Vec::new();
    let room = send_counts.try_reserve_exact(nt * lr).map_err(|_| {
        Error::new(
            Status::AllocFailed,
            format!("cannot allocate {} row counts of A to send", nt * lr),
        )
    });
    agree(world, room)?;
    let mut sc = vec![0usize; pc];
    let mut se = vec![0usize; pc];
    for (j, (scj, sej)) in sc.iter_mut().zip(se.iter_mut()).enumerate() {
        for t in tiles_of(j) {
            send_counts.extend_from_slice(&counts[t * lr..(t + 1) * lr]);
            *scj += lr;
            *sej += tile_nnz[t];
        }
    }
    let mine: Vec<usize> = tiles_of(gj).collect();
    let rc: Vec<usize> = (0..pc).map(|j| mine.len() * member_rows(j)).collect();
    let sizes = || -> Result<_> {
        let s = displs(&sc, "row counts of A")?;
        let rr = displs(&rc, "row counts of A")?;
        let buf: Vec<i64> = try_filled(rc.iter().sum(), 0i64, "received row counts of A")?;
        Ok((s, rr, buf))
    };
    let ((scn, sdp), (rcn, rdp), mut rcounts) = agree(world, sizes())?;
    row.all_to_all_varcount_into(
        &Partition::new(&send_counts[..], &scn[..], &sdp[..]),
        &mut PartitionMut::new(&mut rcounts[..], &rcn[..], &rdp[..]),
    );
    drop(send_counts);
    // My tiles' shapes: rows of the whole grid row, entries from every member.
    let ri: usize = (0..pc).map(member_rows).sum();
    let mut meta = Vec::with_capacity(mine.len());
    // Entries of tile (local index) l from member j.
    let mut from = vec![vec![0usize; pc]; mine.len()];
    let mut pos = 0usize;
    for j in 0..pc {
        let rows_j = member_rows(j);
        for f in from.iter_mut() {
            f[j] = rcounts[pos..pos + rows_j].iter().sum::<i64>() as usize;
            pos += rows_j;
        }
    }
    let w = std::mem::size_of::<V>();
    let mut off = 0usize;
    for (l, &t) in mine.iter().enumerate() {
        let nnz: usize = from[l].iter().sum();
        let m = TileMeta {
            off,
            nrows: ri,
            ncols: cm.width[t],
            nnz,
        };
        off += m.words(w);
        meta.push(m);
    }
    let recv_entries: Vec<usize> = (0..pc).map(|j| from.iter().map(|f| f[j]).sum()).collect();
    let alloc = || -> Result<_> {
        let words: Vec<u64> = try_filled(off, 0u64, "tiles of A")?;
        let s = displs(&se, "entries of A")?;
        let rr = displs(&recv_entries, "entries of A")?;
        let n: usize = recv_entries.iter().sum();
        let cols: Vec<TileIndex> = try_filled(n, 0, "received column ids of A")?;
        let vbuf: Vec<V> = try_filled(n, V::ZERO, "received values of A")?;
        let sv: Vec<V> = try_with_capacity(perm.len(), "values of A to send")?;
        Ok((words, s, rr, cols, vbuf, sv))
    };
    let (mut words, (scn, sdp), (rcn, rdp), mut rcols, mut rvals, mut svals) =
        agree(world, alloc())?;
    svals.extend(perm.iter().map(|&p| vals[p]));
    row.all_to_all_varcount_into(
        &Partition::new(&sorted_cols[..], &scn[..], &sdp[..]),
        &mut PartitionMut::new(&mut rcols[..], &rcn[..], &rdp[..]),
    );
    row.all_to_all_varcount_into(
        &Partition::new(&svals[..], &scn[..], &sdp[..]),
        &mut PartitionMut::new(&mut rvals[..], &rcn[..], &rdp[..]),
    );
    // Assemble: offsets in member order, then the runs of entries.
    let mut segs = Vec::with_capacity(pc * mine.len());
    let mut roff = 0usize;
    let mut filled = vec![0usize; mine.len()];
    let mut cpos = 0usize;
    let mut next_row = vec![0usize; mine.len()];
    for (j, rows_j) in (0..pc).map(|j| (j, member_rows(j))) {
        for (l, m) in meta.iter().enumerate() {
            let (offs, cols, tv) = parts_mut::<V>(&mut words, m);
            if next_row[l] == 0 {
                offs[0] = 0;
            }
            for x in 0..rows_j {
                let rix = next_row[l] + x;
                offs[rix + 1] = offs[rix] + rcounts[cpos + x];
            }
            cpos += rows_j;
            next_row[l] += rows_j;
            let n = from[l][j];
            let at = filled[l];
            cols[at..at + n].copy_from_slice(&rcols[roff..roff + n]);
            tv[at..at + n].copy_from_slice(&rvals[roff..roff + n]);
            segs.push((roff, l, at, n));
            filled[l] += n;
            roff += n;
        }
    }
    let (scounts, sdispls) = (scn, sdp);
    Ok(ATiles {
        meta,
        words,
        refresh: Refresh {
            send_perm: perm,
            scounts,
            sdispls,
            rcounts: rcn,
            rdispls: rdp,
            segs,
            recv_len: roff,
        },
    })
}

impl ATiles {
    /// Moves new values of the caller's entries (same structure) into the tiles.
    /// Collective over the grid row; `words` is the tile buffer (possibly exposed in a
    /// window). Buffers are allocated here; failures are agreed on `world` first.
    pub fn refresh<V: DistScalar>(
        &self,
        world: &SimpleCommunicator,
        row: &SimpleCommunicator,
        vals: &[V],
        words: &mut [u64],
    ) -> Result<()> {
        let rf = &self.refresh;
        let alloc = || -> Result<_> {
            let mut s: Vec<V> = try_with_capacity(rf.send_perm.len(), "values of A to send")?;
            s.extend(rf.send_perm.iter().map(|&p| vals[p]));
            let r: Vec<V> = try_filled(rf.recv_len, V::ZERO, "received values of A")?;
            Ok((s, r))
        };
        let (s, mut rv) = agree(world, alloc())?;
        row.all_to_all_varcount_into(
            &Partition::new(&s[..], &rf.scounts[..], &rf.sdispls[..]),
            &mut PartitionMut::new(&mut rv[..], &rf.rcounts[..], &rf.rdispls[..]),
        );
        for &(roff, l, at, n) in &rf.segs {
            let (_, _, tv) = parts_mut::<V>(words, &self.meta[l]);
            tv[at..at + n].copy_from_slice(&rv[roff..roff + n]);
        }
        Ok(())
    }
}
