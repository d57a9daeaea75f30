//! Row patterns for the replay kernel of reused plans.
//!
//! In a product of matrices from a mesh or a stencil most rows of C are formed the same way:
//! the same number of entries in A's row, the same lengths of the rows of B they select,
//! and every product landing at the same position of C's row. Such a row needs no column
//! arithmetic on reuse: entry q of C's row is a dot product over a fixed list of (entry t
//! of A's row, entry u of that row of B) pairs. A pattern stores that list once per
//! distinct row shape; the replay then forms each value of C in a register and stores it
//! once ("pull"), instead of scattering every product into a dense array and gathering the
//! row afterwards ("push": a load, an add and a store per product, then a pass over the
//! row). Rows whose shape no other row of their chunk shares keep the push kernel.
//!
//! The list of an entry holds its products in A-row, then B-row order, the order in which
//! the push kernel adds them into its -0.0-initialised slot: values are bitwise identical.
//!
//! Memory: the patterns of a chunk are capped at an eighth of the chunk's value bytes of C
//! (plus 64 KiB), and a row id of 4 bytes per row; a chunk where fewer than a quarter of
//! the rows share a pattern keeps none.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::csr::CsrRef;
use crate::types::{Idx, Scalar};

/// Row id of a row without a pattern (push kernel).
pub const NO_PATTERN: u32 = u32::MAX;

/// Rows with more products than this are not given patterns (their lists would be long and
/// rarely shared).
const MAX_ROW_TERMS: usize = 1 << 16;

/// One shape: `q_off[first..=first + nq]` bound each entry's terms in `terms`.
#[derive(Clone, Copy, Debug)]
struct Head {
    first: u32,
    nq: u32,
    na: u32,
}

/// The patterns of one chunk of rows (see the module comment).
#[derive(Debug, Default)]
pub struct ChunkPatterns {
    /// Pattern of each row of the chunk, or [`NO_PATTERN`].
    ids: Vec<u32>,
    heads: Vec<Head>,
    q_off: Vec<u32>,
    /// (entry of A's row, entry of B's row) per product.
    terms: Vec<[u16; 2]>,
}

/// A pattern as the kernel sees it.
pub struct RowPattern<'p> {
    q_off: &'p [u32],
    terms: &'p [[u16; 2]],
    /// Entries of A's row the pattern was made for.
    pub na: usize,
}

impl RowPattern<'_> {
    /// Entries of C's row.
    pub fn len(&self) -> usize {
        self.q_off.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes C's row: `out[q]` = sum over the terms (t, u) of entry q of
    /// `a_vals[t] * b_vals[b_start[t] + u]`, summed in term order from -0.0. Indices are
    /// checked: a row of another shape (impossible while the digests of A and B match)
    /// gives wrong values or a panic, never an access out of bounds.
    #[inline]
    pub fn apply<V: Scalar>(&self, a_vals: &[V], b_start: &[usize], b_vals: &[V], out: &mut [V]) {
        for (q, slot) in out.iter_mut().enumerate() {
            let ts = &self.terms[self.q_off[q] as usize..self.q_off[q + 1] as usize];
            let mut acc = V::NEG_ZERO;
            for &[t, u] in ts {
                let t = t as usize;
                acc += a_vals[t] * b_vals[b_start[t] + u as usize];
            }
            *slot = acc;
        }
    }
}

impl ChunkPatterns {
    /// The pattern of row `r` of the chunk (0-based within the chunk), if it has one.
    #[inline]
    pub fn get(&self, r: usize) -> Option<RowPattern<'_>> {
        let id = *self.ids.get(r)?;
        if id == NO_PATTERN {
            return None;
        }
        let h = self.heads[id as usize];
        let (f, n) = (h.first as usize, h.nq as usize);
        Some(RowPattern {
            q_off: &self.q_off[f..=f + n],
            terms: &self.terms,
            na: h.na as usize,
        })
    }

    /// Rows of the chunk that have a pattern.
    pub fn rows_with_pattern(&self) -> usize {
        self.ids.iter().filter(|&&i| i != NO_PATTERN).count()
    }

    fn bytes(&self) -> usize {
        self.ids.len() * 4
            + self.heads.len() * std::mem::size_of::<Head>()
            + (self.q_off.len() + self.terms.len()) * 4
    }
}

/// Patterns of every chunk of a plan (None for a chunk that has none).
#[derive(Debug, Default)]
pub struct RowPatterns {
    pub chunks: Vec<Option<ChunkPatterns>>,
}

impl RowPatterns {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.chunks.iter().flatten().map(ChunkPatterns::bytes).sum()
    }

    /// Rows that have a pattern (for tests and reports).
    pub fn rows_with_pattern(&self) -> usize {
        self.chunks
            .iter()
            .flatten()
            .map(ChunkPatterns::rows_with_pattern)
            .sum()
    }
}

/// Finds the patterns of every chunk (`chunks`, `row_ptr` as in the plan) from C's columns
/// as an earlier numeric call wrote them (`cols`, base `c_base`). Returns None when nothing
/// is worth keeping or memory for the search is not available (the push kernel then runs
/// everywhere: patterns are an optimisation, never needed).
pub fn build<O: Idx, I: Idx, V: Scalar, J: Idx>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    chunks: &[usize],
    row_ptr: &[usize],
    c_base: usize,
    cols: &[J],
) -> Option<RowPatterns> {
    let off0 = row_ptr[chunks[0]];
    let out: Vec<Option<ChunkPatterns>> = chunks
        .par_windows(2)
        .map(|w| {
            let (s, e) = (row_ptr[w[0]] - off0, row_ptr[w[1]] - off0);
            let budget = (e - s) * std::mem::size_of::<V>() / 8 + (64 << 10);
            build_chunk(a, b, w[0]..w[1], row_ptr, c_base, &cols[s..e], budget)
        })
        .collect();
    if out.iter().all(Option::is_none) {
        return None;
    }
    Some(RowPatterns { chunks: out })
}

/// A shape seen during the search: its signature in `sigs` and how many rows have it.
struct Candidate {
    sig: std::ops::Range<usize>,
    uses: u32,
}

fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

/// Patterns of rows `rows` (`cols`: exactly their columns of C). A row's signature is
/// [entries of C's row, entries of A's row, the length of each selected row of B, then the
/// position in C's row of every product in order]; equal signatures mean equal patterns.
fn build_chunk<O: Idx, I: Idx, V: Scalar, J: Idx>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    row_ptr: &[usize],
    c_base: usize,
    cols: &[J],
    budget: usize,
) -> Option<ChunkPatterns> {
    let k = b.ncols();
    let nrows = rows.len();
    // Position of each column in the current row of C (stale entries are never read: every
    // column a product reaches is a column of the row).
    let mut pos: Vec<u32> = crate::alloc::try_filled(k, 0u32, "pattern search").ok()?;
    let mut ids: Vec<u32> = crate::alloc::try_filled(nrows, NO_PATTERN, "pattern ids").ok()?;
    let mut sigs: Vec<u32> = Vec::new();
    let mut cands: Vec<Candidate> = Vec::new();
    let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::new();
    let mut sig: Vec<u32> = Vec::new();
    let off0 = row_ptr[rows.start];
    let r0 = rows.start;
    'rows: for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let na = a.row_len(i);
        if e - s > u32::MAX as usize || na > u16::MAX as usize + 1 {
            continue;
        }
        for (q, &c) in cols[s..e].iter().enumerate() {
            let ci = c.to_usize().wrapping_sub(c_base);
            *pos.get_mut(ci)? = q as u32;
        }
        sig.clear();
        sig.push((e - s) as u32);
        sig.push(na as u32);
        let mut terms = 0usize;
        for p in a.row_range(i) {
            let len = b.row_len(a.col(p));
            if len > u16::MAX as usize + 1 {
                continue 'rows;
            }
            terms += len;
            sig.push(len as u32);
        }
        if terms > MAX_ROW_TERMS {
            continue;
        }
        for p in a.row_range(i) {
            for &cq in &b.col_indices()[b.row_range(a.col(p))] {
                sig.push(*pos.get(cq.to_usize().wrapping_sub(b.base()))?);
            }
        }
        let h = sig.iter().fold(sig.len() as u64, |h, &x| mix(h, x as u64));
        let list = by_hash.entry(h).or_default();
        if let Some(&id) = list
            .iter()
            .find(|&&id| sigs[cands[id as usize].sig.clone()] == sig[..])
        {
            cands[id as usize].uses += 1;
            ids[i - r0] = id;
        } else if (sigs.len() + sig.len()) * 4 <= budget
            && sigs.len() + sig.len() < u32::MAX as usize
            && cands.len() < NO_PATTERN as usize
        {
            let id = cands.len() as u32;
            cands.push(Candidate {
                sig: sigs.len()..sigs.len() + sig.len(),
                uses: 1,
            });
            sigs.try_reserve(sig.len()).ok()?;
            sigs.extend_from_slice(&sig);
            list.push(id);
            ids[i - r0] = id;
        }
    }
    drop(by_hash);
    drop(pos);
    // Keep the shapes of two rows or more.
    let shared: usize = cands
        .iter()
        .filter(|c| c.uses >= 2)
        .map(|c| c.uses as usize)
        .sum();
    if shared * 4 < nrows || shared == 0 {
        return None;
    }
    let mut out = ChunkPatterns::default();
    let mut new_id = vec![NO_PATTERN; cands.len()];
    let mut fill: Vec<u32> = Vec::new();
    for (old, c) in cands.iter().enumerate() {
        if c.uses < 2 {
            continue;
        }
        let sg = &sigs[c.sig.clone()];
        let (nq, na) = (sg[0] as usize, sg[1] as usize);
        let lens = &sg[2..2 + na];
        let qs = &sg[2 + na..];
        // Counting sort of the products by their entry of C, stable (product order kept).
        let first = out.q_off.len();
        let base = out.terms.len();
        out.q_off.try_reserve(nq + 1).ok()?;
        out.q_off.resize(first + nq + 1, 0);
        for &q in qs {
            out.q_off[first + q as usize + 1] += 1;
        }
        let mut run = base as u32;
        for x in &mut out.q_off[first..=first + nq] {
            run += *x;
            *x = run;
        }
        // out.q_off[first + q] is where entry q's terms start.
        fill.clear();
        fill.extend_from_slice(&out.q_off[first..first + nq]);
        out.terms.try_reserve(qs.len()).ok()?;
        out.terms.resize(base + qs.len(), [0, 0]);
        let mut f = 0;
        for (t, &len) in lens.iter().enumerate() {
            for u in 0..len as usize {
                let q = qs[f] as usize;
                out.terms[fill[q] as usize] = [t as u16, u as u16];
                fill[q] += 1;
                f += 1;
            }
        }
        new_id[old] = out.heads.len() as u32;
        out.heads.push(Head {
            first: first as u32,
            nq: nq as u32,
            na: na as u32,
        });
    }
    for id in &mut ids {
        if *id != NO_PATTERN {
            *id = new_id[*id as usize];
        }
    }
    out.ids = ids;
    Some(out)
}
