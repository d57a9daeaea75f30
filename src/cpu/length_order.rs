//! A's rows by length for an SpMV: within each window of [`WINDOW`] rows, the rows
//! sorted by their number of entries (ties in row order), and A's column indices and values
//! copied in that order. Rows of power-law and random matrices change length at nearly
//! every row, and the CSR kernel's loop exit and tail tests then mispredict at every row
//! (about half of the one-rank SpMV time of `rmat_16`); in this order consecutive rows
//! mostly have one length and the tests predict. Each row is still summed alone in the CSR
//! kernel's four chains, so the bits are the same (`spmv::ordered_rows`); only Y's rows
//! are written out of order, within a window that stays in L1.
//!
//! The copy doubles A, so only owners of A's values keep it: a distributed SpMV plan (its
//! tile; new values reach it only through the plan, which then makes the copy again),
//! within the plan's memory limit (docs/DESIGN-NOTES.md, cpu::spmm::spmv).

use rayon::prelude::*;

use crate::common::csr::CsrRef;
use crate::error::Result;
use crate::platform::alloc::try_reserve;
use crate::types::{Idx, Scalar};

/// Rows per window: Y's rows of a window (8 KiB of f64) stay in L1 while they are written
/// out of order.
pub(crate) const WINDOW: usize = 1024;

/// Share of rows whose length differs from the row before's from which the order is kept
/// (`rmat_16`: 0.9; stencils, bands and FEM matrices well below).
const MIN_CHANGES: f64 = 0.25;

/// A's rows in length order per window, with their entries copied in that order.
pub struct LengthOrder<V> {
    nrows: usize,
    /// Row of A at each position (windows in order, rows sorted within each).
    order: Vec<u32>,
    /// Position p's entries are `cols`/`vals[offs[p]..offs[p + 1]]`.
    offs: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<V>,
    /// Largest column index + 1 of each window (0 for a window without entries).
    col_end: Vec<u32>,
}

impl<V: Scalar> LengthOrder<V> {
    /// The order of A (0-based, with values, columns below 2^32), if A has at least one
    /// window and its row lengths change often enough, and its copy fits in `budget`
    /// bytes ([`LengthOrder::bytes`]); else `None`.
    pub fn detect<O: Idx, I: Idx>(a: &CsrRef<'_, O, I, V>, budget: usize) -> Result<Option<Self>> {
        let m = a.nrows();
        let Some(av) = a.values() else {
            return Ok(None);
        };
        if m < WINDOW || m > u32::MAX as usize || a.ncols() > u32::MAX as usize {
            return Ok(None);
        }
        let changes = (1..m)
            .into_par_iter()
            .filter(|&i| a.row_len(i) != a.row_len(i - 1))
            .count();
        if (changes as f64) < MIN_CHANGES * m as f64 {
            return Ok(None);
        }
        let nnz = a.nnz();
        let bytes = Self::bytes_for(m, nnz);
        if bytes > budget {
            return Ok(None);
        }
        let mut order = Vec::new();
        try_reserve(&mut order, m, "rows by length")?;
        order.extend(0..m as u32);
        order
            .par_chunks_mut(WINDOW)
            .for_each(|w| w.sort_by_key(|&r| a.row_len(r as usize)));
        let mut offs = Vec::new();
        try_reserve(&mut offs, m + 1, "rows by length")?;
        offs.push(0);
        for &r in &order {
            offs.push(offs.last().copied().unwrap_or(0) + a.row_len(r as usize));
        }
        let mut cols = Vec::new();
        try_reserve(&mut cols, nnz, "rows by length")?;
        cols.resize(nnz, 0u32);
        let mut vals = Vec::new();
        try_reserve(&mut vals, nnz, "rows by length")?;
        vals.resize(nnz, V::ZERO);
        let mut col_end = Vec::new();
        try_reserve(&mut col_end, m.div_ceil(WINDOW), "rows by length")?;
        // Each window's entries are one contiguous range of the copies.
        let mut cw: Vec<&mut [u32]> = Vec::with_capacity(m.div_ceil(WINDOW));
        let mut vw: Vec<&mut [V]> = Vec::with_capacity(m.div_ceil(WINDOW));
        let (mut cr, mut vr) = (&mut cols[..], &mut vals[..]);
        for w in 0..m.div_ceil(WINDOW) {
            let n = offs[((w + 1) * WINDOW).min(m)] - offs[w * WINDOW];
            let (c, c_rest) = cr.split_at_mut(n);
            let (v, v_rest) = vr.split_at_mut(n);
            cw.push(c);
            vw.push(v);
            (cr, vr) = (c_rest, v_rest);
        }
        cw.into_par_iter()
            .zip(vw)
            .enumerate()
            .map(|(w, (c, v))| {
                let mut at = 0;
                let mut end = 0u32;
                for &r in &order[w * WINDOW..((w + 1) * WINDOW).min(m)] {
                    let (s, n) = (a.row_start(r as usize), a.row_len(r as usize));
                    for j in 0..n {
                        let col = a.col(s + j) as u32;
                        c[at + j] = col;
                        end = end.max(col + 1);
                    }
                    v[at..at + n].copy_from_slice(&av[s..s + n]);
                    at += n;
                }
                end
            })
            .collect_into_vec(&mut col_end);
        Ok(Some(LengthOrder {
            nrows: m,
            order,
            offs,
            cols,
            vals,
            col_end,
        }))
    }

    fn bytes_for(m: usize, nnz: usize) -> usize {
        nnz * (4 + std::mem::size_of::<V>())
            + m * (4 + std::mem::size_of::<usize>())
            + std::mem::size_of::<usize>()
            + m.div_ceil(WINDOW) * 4
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        Self::bytes_for(self.nrows, self.cols.len())
    }

    /// Rows of the analysed matrix.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Row of A at each position.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Entry ranges of the positions (`nrows + 1`).
    pub fn offsets(&self) -> &[usize] {
        &self.offs
    }

    /// The copied column indices, by position.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// The copied values, by position.
    pub fn values(&self) -> &[V] {
        &self.vals
    }

    /// Largest column + 1 of window w's rows.
    pub fn col_end(&self, w: usize) -> usize {
        self.col_end[w] as usize
    }
}
