//! 1D-halo execute (PETSc MPIAIJ's scatter of X): the rows of X other ranks' columns
//! name go to them point to point, then one local product of whole rows over this rank's
//! X followed by the halo, straight into the caller's Y.

use super::super::dense::{Place, copy_block, packed_ld};
use super::super::layout::Ranges;
use super::super::node::{DistScalar, Layout, NodeSpmm};
use super::super::tiles::{self, ATiles};
use super::algos::product;
use super::state::{Halo1d, State};
use super::{Call, ExecStats, Plan};
use crate::error::{Error, Result, Status};

/// Renumbers the tile's columns (global rows of X) to rows of the operand the product
/// reads: this rank's block at `c - x0`, the halo `halo` (sorted global ids) after it.
/// Entries keep their order in each row, so every row sums in the caller's order.
pub(super) fn renumber_tile<V: DistScalar>(
    t: &mut ATiles,
    r: &Ranges,
    me: usize,
    halo: &[usize],
) -> Result<()> {
    let (x0, xr) = (r.xrows[me], r.xr(me));
    let m = t.meta[0];
    let (_, cols, _) = tiles::parts_mut::<V>(&mut t.words, &m);
    for c in cols.iter_mut() {
        let g = *c as usize;
        let id = if g >= x0 && g - x0 < xr {
            g - x0
        } else {
            xr + halo.partition_point(|&h| h < g)
        };
        *c = i32::try_from(id).map_err(|_| {
            Error::new(
                Status::IndexOverflow,
                format!(
                    "X with its halo has {} rows, over int32 ids",
                    xr + halo.len()
                ),
            )
        })?;
    }
    t.meta[0].ncols = xr + halo.len();
    Ok(())
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
        let tile = tiles::view::<V>(self.tile_store.get(), &self.tiles.meta[0]);
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
            x_ext,
            x_send,
            x_stage,
        } = &mut **st;
        let h = *halo;
        // Rows travel as k contiguous values whatever the layout.
        for (i, &row) in send_rows.iter().enumerate() {
            let dst = &mut x_send[i * k..(i + 1) * k];
            match layout {
                Layout::RowMajor => dst.copy_from_slice(&c.x[row * c.ldx..row * c.ldx + k]),
                Layout::ColMajor => {
                    for (j, d) in dst.iter_mut().enumerate() {
                        *d = c.x[j * c.ldx + row];
                    }
                }
            }
        }
        let ld = packed_ld(layout, xr + h, k);
        if h > 0 {
            let at = |ld| Place { ld, r0: 0, c0: 0 };
            copy_block(layout, c.x, at(c.ldx), x_ext, at(ld), xr, k);
        }
        {
            // Row-major rows land in place after this rank's block.
            let rbuf: &mut [V] = if layout == Layout::RowMajor && h > 0 {
                &mut x_ext[xr * k..]
            } else {
                x_stage
            };
            vals.run_sparse(self.world.comm(), x_send, rbuf, || ());
        }
        if layout == Layout::ColMajor {
            for i in 0..h {
                for j in 0..k {
                    x_ext[j * ld + xr + i] = x_stage[i * k + j];
                }
            }
        }
        let w = std::mem::size_of::<V>() as u64;
        let (sent, recv) = vals.others();
        stats.bytes_sent += sent * w;
        stats.bytes_received += recv * w;
        let (xb, ldxb): (&[V], usize) = if h > 0 { (x_ext, ld) } else { (c.x, c.ldx) };
        product(
            node, tile, layout, k, xb, ldxb, c.alpha, c.beta, y, c.ldy, stats,
        )
    }
}
