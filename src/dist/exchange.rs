//! Redistribution of dense blocks inside a group: each member packs pieces of its blocks
//! (or of the caller's X) for every other member, one `MPI_Alltoallv` moves them, and the
//! receiver unpacks each piece into its block (or, with `alpha` and `beta`, into the
//! caller's Y). The piece lists are computed at plan time from global facts, the sender's
//! and the receiver's in the same order.

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::dense::packed_ld;
use super::node::{DistScalar, Layout};
use super::tiles::displs;
use crate::error::Result;

/// Where a piece lives: the caller's matrix or block `b` of the plan's blocks, at
/// `(r0, c0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    Caller,
    Block(usize),
}

#[derive(Clone, Copy, Debug)]
pub struct Piece {
    pub member: usize,
    pub loc: Loc,
    pub r0: usize,
    pub c0: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Piece {
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }
    /// Leading dimension of the piece packed in a message.
    pub fn ld(&self, layout: Layout) -> usize {
        packed_ld(layout, self.rows, self.cols)
    }
}

/// One alltoallv's plan.
pub struct Exchange {
    pub send: Vec<Piece>,
    pub recv: Vec<Piece>,
    scounts: Vec<i32>,
    sdispls: Vec<i32>,
    rcounts: Vec<i32>,
    rdispls: Vec<i32>,
    me: usize,
    pub send_len: usize,
    pub recv_len: usize,
}

impl Exchange {
    /// Pieces must be sorted by member (stable within a member).
    pub fn new(members: usize, me: usize, send: Vec<Piece>, recv: Vec<Piece>) -> Result<Exchange> {
        let mut sc = vec![0usize; members];
        let mut rc = vec![0usize; members];
        for p in &send {
            sc[p.member] += p.len();
        }
        for p in &recv {
            rc[p.member] += p.len();
        }
        debug_assert!(send.windows(2).all(|w| w[0].member <= w[1].member));
        debug_assert!(recv.windows(2).all(|w| w[0].member <= w[1].member));
        let (scounts, sdispls) = displs(&sc, "dense redistribution")?;
        let (rcounts, rdispls) = displs(&rc, "dense redistribution")?;
        Ok(Exchange {
            send_len: sc.iter().sum(),
            recv_len: rc.iter().sum(),
            send,
            recv,
            scounts,
            sdispls,
            rcounts,
            rdispls,
            me,
        })
    }

    /// Packs, moves and unpacks. `pack(piece, dst, ld)` writes a piece into its packed
    /// place; `unpack(piece, src, ld)` reads one. Returns (bytes sent, bytes received),
    /// self-messages excluded.
    pub fn run<V: DistScalar>(
        &self,
        comm: &SimpleCommunicator,
        layout: Layout,
        sbuf: &mut [V],
        rbuf: &mut [V],
        mut pack: impl FnMut(&Piece, &mut [V], usize),
        mut unpack: impl FnMut(&Piece, &[V], usize),
    ) -> (u64, u64) {
        let mut pos = 0;
        for p in &self.send {
            let n = p.len();
            pack(p, &mut sbuf[pos..pos + n], p.ld(layout));
            pos += n;
        }
        comm.all_to_all_varcount_into(
            &Partition::new(&sbuf[..self.send_len], &self.scounts[..], &self.sdispls[..]),
            &mut PartitionMut::new(
                &mut rbuf[..self.recv_len],
                &self.rcounts[..],
                &self.rdispls[..],
            ),
        );
        let mut pos = 0;
        for p in &self.recv {
            let n = p.len();
            unpack(p, &rbuf[pos..pos + n], p.ld(layout));
            pos += n;
        }
        let w = std::mem::size_of::<V>() as u64;
        let others = |c: &[i32]| -> u64 {
            c.iter()
                .enumerate()
                .filter(|&(m, _)| m != self.me)
                .map(|(_, &n)| n as u64)
                .sum()
        };
        (others(&self.scounts) * w, others(&self.rcounts) * w)
    }
}
