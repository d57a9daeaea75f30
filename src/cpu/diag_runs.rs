//! Diagonal runs of A for an SpMV (the DIA format's idea inside a CSR matrix): blocks of
//! consecutive rows whose entries all sit at the same offsets from the diagonal
//! (column - row), as stencil and banded matrices have away from their boundaries (the
//! 7-point Laplacian of `sa_poisson_A`, 60^3 points: 87% of its entries in blocks of 8
//! rows). The values of those blocks are copied diagonal-major within a block (one stream),
//! so the SpMV reads no column index or row offset for them and sums a block's rows in one
//! vector per chain (`spmv::diag_rows`), each lane in the scalar kernel's four chains in
//! its order: bitwise the CSR kernel's result, at 8 instead of 12 bytes of A per entry and
//! a fraction of the loads (docs/DESIGN-NOTES.md, cpu::spmm::spmv).
//!
//! The copy is a second copy of those values, so only owners of A's values keep it: a
//! distributed SpMV plan (its tile, whose new values reach it only through the plan, which
//! then finds the runs again), within the plan's memory limit.

use rayon::prelude::*;

use crate::common::csr::CsrRef;
use crate::error::Result;
use crate::platform::alloc::try_reserve;
use crate::types::{Idx, Scalar};

/// Most entries per row a pattern may have (a 27-point stencil has 27).
const MAX_DIAGS: usize = 64;

/// Rows sampled for the candidate pattern.
const SAMPLES: usize = 64;

/// Share of A's entries the blocks must hold for the runs to be kept: below it the copy
/// costs memory for little of the product.
const MIN_SHARE: f64 = 0.5;

/// Rows per block of the parallel scan (blocks of rows never cross one).
const SCAN_ROWS: usize = 1 << 14;

/// A's diagonal blocks: `width` rows each, every row with the entries at
/// `i + offsets[j]` (j in order, as stored), values copied block by block.
pub struct DiagRuns<V> {
    nrows: usize,
    width: usize,
    offsets: Vec<isize>,
    /// First row of each block, increasing; blocks do not overlap.
    blocks: Vec<usize>,
    /// Block b's value of entry j in row `blocks[b] + l` at `(b * nd + j) * width + l`.
    vals: Vec<V>,
}

impl<V: Scalar> DiagRuns<V> {
    /// The blocks of `width` rows of A (0-based, with values) that share one pattern of
    /// diagonals, found from a sample of rows, if they hold at least half of A's entries
    /// and their copy fits in `budget` bytes ([`DiagRuns::bytes`]); else `None`.
    pub fn detect<O: Idx, I: Idx>(
        a: &CsrRef<'_, O, I, V>,
        width: usize,
        budget: usize,
    ) -> Result<Option<Self>> {
        let m = a.nrows();
        let Some(av) = a.values() else {
            return Ok(None);
        };
        if width == 0 || m < 2 * width || a.nnz() == 0 {
            return Ok(None);
        }
        let Some(offsets) = candidate(a) else {
            return Ok(None);
        };
        let nd = offsets.len();
        let pieces: Vec<Vec<usize>> = (0..m.div_ceil(SCAN_ROWS))
            .into_par_iter()
            .map(|q| {
                let (lo, hi) = (q * SCAN_ROWS, ((q + 1) * SCAN_ROWS).min(m));
                let mut starts = Vec::new();
                let mut run = lo;
                for i in lo..hi {
                    if !matches(a, i, &offsets) {
                        run = i + 1;
                    } else if i + 1 - run == width {
                        starts.push(run);
                        run = i + 1;
                    }
                }
                starts
            })
            .collect();
        let nblocks: usize = pieces.iter().map(Vec::len).sum();
        let held = nblocks * width * nd;
        if (held as f64) < MIN_SHARE * a.nnz() as f64 {
            return Ok(None);
        }
        let bytes = Self::bytes_for(nblocks, width, nd);
        if bytes > budget {
            return Ok(None);
        }
        let mut blocks = Vec::new();
        try_reserve(&mut blocks, nblocks, "diagonal blocks")?;
        blocks.extend(pieces.into_iter().flatten());
        let mut vals = Vec::new();
        try_reserve(&mut vals, held, "diagonal values")?;
        vals.resize(held, V::ZERO);
        vals.par_chunks_mut(nd * width)
            .zip(blocks.par_iter())
            .for_each(|(out, &r)| {
                for l in 0..width {
                    let s = a.row_start(r + l);
                    for j in 0..nd {
                        out[j * width + l] = av[s + j];
                    }
                }
            });
        Ok(Some(DiagRuns {
            nrows: m,
            width,
            offsets,
            blocks,
            vals,
        }))
    }

    /// Bytes of runs with `nblocks` blocks of `width` rows and `nd` diagonals.
    fn bytes_for(nblocks: usize, width: usize, nd: usize) -> usize {
        nblocks * (width * nd * std::mem::size_of::<V>() + std::mem::size_of::<usize>())
            + nd * std::mem::size_of::<isize>()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        Self::bytes_for(self.blocks.len(), self.width, self.offsets.len())
    }

    /// Rows of the analysed matrix.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Rows per block.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Column - row of each entry of a block's rows, in stored order.
    pub fn offsets(&self) -> &[isize] {
        &self.offsets
    }

    /// First rows of the blocks, increasing.
    pub fn blocks(&self) -> &[usize] {
        &self.blocks
    }

    /// The copied values (see the field).
    pub fn values(&self) -> &[V] {
        &self.vals
    }
}

/// Row i's entries lie at `i + offsets[j]`, in that order.
#[inline]
fn matches<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    i: usize,
    offsets: &[isize],
) -> bool {
    if a.row_len(i) != offsets.len() {
        return false;
    }
    let s = a.row_start(i);
    offsets
        .iter()
        .enumerate()
        .all(|(j, &d)| a.col(s + j) as isize == i as isize + d)
}

/// The most frequent pattern of column - row among [`SAMPLES`] rows spread over A, if at
/// least an eighth of them have it (else A has no dominant stencil).
fn candidate<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> Option<Vec<isize>> {
    let m = a.nrows();
    let n = SAMPLES.min(m);
    let pattern = |i: usize| -> Option<Vec<isize>> {
        let len = a.row_len(i);
        if len == 0 || len > MAX_DIAGS {
            return None;
        }
        let s = a.row_start(i);
        Some(
            (0..len)
                .map(|j| a.col(s + j) as isize - i as isize)
                .collect(),
        )
    };
    // Golden-ratio steps: evenly spread, but unlike a fixed stride never in phase with a
    // grid's planes (a stride of m / 64 on a 64^3 grid samples one face only).
    let rows: Vec<Vec<isize>> = (0..n as u64)
        .filter_map(|q| {
            let f = (q.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
            pattern(((f * m as f64) as usize).min(m - 1))
        })
        .collect();
    let (best, count) = rows
        .iter()
        .map(|p| (p, rows.iter().filter(|r| *r == p).count()))
        .max_by_key(|&(_, c)| c)?;
    (count * 8 >= n).then(|| best.clone())
}
