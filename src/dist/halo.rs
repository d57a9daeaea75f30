//! The import of rows another rank owns, shared by the distributed SpGEMM (the rows of B
//! that op(A)'s columns name) and the 1D halo SpMM (the rows of X that A's columns name):
//! the distinct columns of the local rows, the requests to their owners, and the
//! variable-sized exchanges that move the rows (collective or to the neighbours only).

use std::ops::Range;

use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::comm::agree;
use super::tiles::displs;
use crate::error::{Error, Result, Status, err};
use crate::types::Idx;

/// An MPI exchange of variable-sized pieces: counts and displacements per rank.
#[derive(Default)]
pub(super) struct Counts {
    pub send: (Vec<i32>, Vec<i32>),
    pub recv: (Vec<i32>, Vec<i32>),
    pub send_len: usize,
    pub recv_len: usize,
    pub me: usize,
}

impl Counts {
    pub(super) fn new(send: &[usize], recv: &[usize], me: usize, what: &str) -> Result<Counts> {
        Ok(Counts {
            send: displs(send, what)?,
            recv: displs(recv, what)?,
            send_len: send.iter().sum(),
            recv_len: recv.iter().sum(),
            me,
        })
    }

    /// The receive counts learned from the send counts (one all-to-all). Collective.
    pub(super) fn exchange(w: &SimpleCommunicator, send: &[usize], what: &str) -> Result<Counts> {
        let s: Vec<u64> = send.iter().map(|&n| n as u64).collect();
        let mut r = vec![0u64; s.len()];
        w.all_to_all_into(&s[..], &mut r[..]);
        let recv: Vec<usize> = r.iter().map(|&n| n as usize).collect();
        Counts::new(send, &recv, w.rank() as usize, what)
    }

    /// The same pieces `k` times larger (e.g. two words per entry).
    pub(super) fn times(&self, k: usize, what: &str) -> Result<Counts> {
        let scale = |c: &[i32]| -> Vec<usize> { c.iter().map(|&n| n as usize * k).collect() };
        Counts::new(&scale(&self.send.0), &scale(&self.recv.0), self.me, what)
    }

    /// Moves `sbuf`'s pieces into `rbuf`. Collective.
    pub(super) fn run<T: Equivalence>(&self, w: &SimpleCommunicator, sbuf: &[T], rbuf: &mut [T]) {
        w.all_to_all_varcount_into(
            &Partition::new(&sbuf[..self.send_len], &self.send.0[..], &self.send.1[..]),
            &mut PartitionMut::new(
                &mut rbuf[..self.recv_len],
                &self.recv.0[..],
                &self.recv.1[..],
            ),
        );
    }

    /// This rank's own piece: where it lies in the send buffer and in the receive buffer.
    pub(super) fn own(&self) -> (Range<usize>, Range<usize>) {
        let piece = |(c, d): &(Vec<i32>, Vec<i32>)| {
            d[self.me] as usize..d[self.me] as usize + c[self.me] as usize
        };
        (piece(&self.send), piece(&self.recv))
    }

    /// Moves `sbuf`'s pieces into `rbuf` with messages to and from the ranks whose pieces
    /// are not empty (the neighbours of a sparse product: a handful whatever p, where an
    /// alltoallv costs p - 1 latencies on every rank), running `during` while they travel.
    /// The caller writes its own piece of `rbuf` itself (no copy through `sbuf`).
    /// Collective over the neighbours (every rank calls it with the counts of one plan).
    pub(super) fn run_sparse<T: Equivalence + Copy, R>(
        &self,
        w: &SimpleCommunicator,
        sbuf: &[T],
        rbuf: &mut [T],
        during: impl FnOnce() -> R,
    ) -> R {
        self.exchange_sparse(w, sbuf, (rbuf, &mut []), self.recv_len, during)
    }

    /// The received pieces that come before the first piece of a rank after this one
    /// (the rows below this rank's block, when pieces are rows in rank order).
    pub(super) fn recv_below(&self) -> usize {
        let d = &self.recv.1;
        d.get(self.me + 1).map_or(self.recv_len, |&x| x as usize)
    }

    /// [`Counts::run_sparse`] into two buffers: the pieces of the ranks up to this one
    /// into `lo` (`recv_below` entries), the others into `hi`, so that a caller can keep
    /// rows of its own between them.
    pub(super) fn run_sparse_split<T: Equivalence + Copy, R>(
        &self,
        w: &SimpleCommunicator,
        sbuf: &[T],
        bufs: (&mut [T], &mut [T]),
        during: impl FnOnce() -> R,
    ) -> R {
        self.exchange_sparse(w, sbuf, bufs, self.recv_below(), during)
    }

    /// The received pieces before `below` (a piece boundary) into `lo`, the rest into
    /// `hi` (from its start).
    fn exchange_sparse<T: Equivalence + Copy, R>(
        &self,
        w: &SimpleCommunicator,
        sbuf: &[T],
        (lo, hi): (&mut [T], &mut [T]),
        below: usize,
        during: impl FnOnce() -> R,
    ) -> R {
        let (sc, sd) = (&self.send.0, &self.send.1);
        let (rc, rd) = (&self.recv.0, &self.recv.1);
        let piece = |c: &[i32], d: &[i32], q: usize| d[q] as usize..d[q] as usize + c[q] as usize;
        let mut chunks: Vec<(usize, &mut [T])> = Vec::new();
        // Pieces are laid out in rank order: those at or past `below` go to `hi`.
        let (mut rest, mut at) = (&mut lo[..below], 0);
        let mut upper = Some(&mut hi[..self.recv_len - below]);
        for q in 0..rc.len() {
            let r = piece(rc, rd, q);
            if r.start >= below
                && let Some(h) = upper.take()
            {
                rest = h;
                at = below;
            }
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(r.start - at);
            let (mine, tail) = tail.split_at_mut(r.len());
            rest = tail;
            at = r.end;
            if !mine.is_empty() && q != self.me {
                chunks.push((q, mine));
            }
        }
        mpi::request::scope(|scope| {
            let recvs: Vec<_> = chunks
                .into_iter()
                .map(|(q, chunk)| {
                    w.process_at_rank(q as i32)
                        .immediate_receive_into(scope, chunk)
                })
                .collect();
            let sends: Vec<_> = (0..sc.len())
                .filter(|&q| q != self.me && sc[q] > 0)
                .map(|q| {
                    w.process_at_rank(q as i32)
                        .immediate_send(scope, &sbuf[piece(sc, sd, q)])
                })
                .collect();
            let out = during();
            for r in recvs {
                r.wait();
            }
            for s in sends {
                s.wait();
            }
            out
        })
    }

    /// Elements sent and received to and from other ranks.
    pub(super) fn others(&self) -> (u64, u64) {
        let sum = |c: &[i32]| -> u64 {
            c.iter()
                .enumerate()
                .filter(|&(q, _)| q != self.me)
                .map(|(_, &n)| n as u64)
                .sum()
        };
        (sum(&self.send.0), sum(&self.recv.0))
    }
}

/// The distinct 0-based columns of the `pieces` (raw, `base` added) in increasing order,
/// and each entry's position among them, piece by piece.
pub(super) fn renumber<I: Idx>(
    pieces: &[&[I]],
    base: usize,
    n: usize,
) -> Result<(Vec<usize>, Vec<Vec<I>>)> {
    let cols: Vec<&I> = pieces.iter().flat_map(|p| p.iter()).collect();
    let mut out: Vec<Vec<I>> = pieces.iter().map(|p| Vec::with_capacity(p.len())).collect();
    let (mut piece, mut e) = (0usize, 0usize);
    let needed = renumber_by(
        cols.len(),
        n,
        |e| cols[e].to_usize().wrapping_sub(base),
        |pos| {
            // Entries arrive in order: fill the pieces one after the other.
            while e == pieces[piece].len() {
                piece += 1;
                e = 0;
            }
            out[piece].push(fit::<I>(pos)?);
            e += 1;
            Ok(())
        },
    )?;
    Ok((needed, out))
}

/// The distinct values of `col(e)` for the `len` entries (0-based columns below `n`) in
/// increasing order; `emit` gets each entry's position among them, in entry order. A bit
/// map over the `n` columns when it is small against the entries (a scan of n / 64
/// words), else a sort.
pub(super) fn renumber_by(
    len: usize,
    n: usize,
    col: impl Fn(usize) -> usize,
    mut emit: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<usize>> {
    let words = n.div_ceil(64);
    if words <= 4 * len + 1024 {
        let mut bits = vec![0u64; words];
        for e in 0..len {
            let j = col(e);
            bits[j / 64] |= 1u64 << (j % 64);
        }
        let mut rank = Vec::with_capacity(words);
        let mut needed = Vec::new();
        for (w, &b) in bits.iter().enumerate() {
            rank.push(needed.len());
            let mut x = b;
            while x != 0 {
                needed.push(w * 64 + x.trailing_zeros() as usize);
                x &= x - 1;
            }
        }
        for e in 0..len {
            let j = col(e);
            let below = bits[j / 64] & ((1u64 << (j % 64)) - 1);
            emit(rank[j / 64] + below.count_ones() as usize)?;
        }
        Ok(needed)
    } else {
        let mut needed: Vec<usize> = (0..len).map(&col).collect();
        needed.sort_unstable();
        needed.dedup();
        for e in 0..len {
            emit(needed.binary_search(&col(e)).unwrap_or(0))?;
        }
        Ok(needed)
    }
}

pub(super) fn fit<I: Idx>(v: usize) -> Result<I> {
    I::try_from_usize(v).ok_or_else(|| {
        Error::new(
            Status::IndexOverflow,
            format!("{v} does not fit {} indices", I::KIND.name()),
        )
    })
}

/// Asks the owners of the rows `needed` (sorted global ids; `starts`: the p + 1 starts of
/// the ranks' row blocks, in rank order) for them: counts by one alltoall, ids by one
/// alltoallv. Returns the requests (what this rank asks of each owner as `send`, what each
/// rank asks of it as `recv`) and the asked rows, local to this rank's block, peer after
/// peer. A request outside this rank's block is an agreed `Internal` error. Collective.
pub(super) fn ask(
    w: &SimpleCommunicator,
    needed: &[usize],
    starts: &[usize],
) -> Result<(Counts, Vec<usize>)> {
    let me = w.rank() as usize;
    let want: Vec<usize> = starts
        .windows(2)
        .map(|r| needed.partition_point(|&g| g < r[1]) - needed.partition_point(|&g| g < r[0]))
        .collect();
    let req = agree(w, Counts::exchange(w, &want, "requested rows"))?;
    let ids: Vec<u64> = needed.iter().map(|&g| g as u64).collect();
    let mut asked = vec![0u64; req.recv_len];
    req.run(w, &ids, &mut asked);
    let (start, local) = (starts[me], starts[me + 1] - starts[me]);
    let mut rows = Vec::with_capacity(asked.len());
    let mut bad = None;
    for &g in &asked {
        let r = (g as usize).wrapping_sub(start);
        if r >= local {
            bad = Some(g);
            break;
        }
        rows.push(r);
    }
    let served = match bad {
        Some(g) => err(
            Status::Internal,
            format!("a request for row {g}, which this rank does not own"),
        ),
        None => Ok(()),
    };
    agree(w, served)?;
    Ok((req, rows))
}
