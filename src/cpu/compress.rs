//! Compression of B for the symbolic phase (section 3.2 of the KokkosKernels paper): the
//! columns of a row of B that fall in one 64-column word become one (word, bits) pair,
//! so the symbolic phase inserts fewer keys and unions rows with a bitwise OR.
//!
//! Two-step decision: the compressed flop count f_m' is computed first (one pass over B
//! for the compressed row lengths, fused with the flop count over A); B is compressed
//! only if f_m' is more than 15% below f_m.

use rayon::prelude::*;

use crate::alloc::Zeroed;
use crate::cpu::gustavson::split_at_bounds;
use crate::cpu::symbolic::WORD_BITS;
use crate::csr::CsrRef;
use crate::error::Result;
use crate::types::{Idx, Scalar};

/// Compress only if it removes more than this fraction of the symbolic insertions.
pub const MIN_GAIN: f64 = 0.15;

/// B's rows as (word, bits) pairs.
/// Its arrays are mappings of their own ([`Zeroed`]): they are freed before C is filled and
/// must not stay in the process's heap. Row offsets are u32 (half the memory and traffic
/// of usize): a B with 2^32 pairs or more is simply not compressed.
pub struct CompressedRows {
    pub ptr: Zeroed<u32>,
    pub words: Zeroed<u32>,
    pub bits: Zeroed<u64>,
    /// Fewer than [`RUN_PAIRS_PER_ROW`] pairs per row of B on average: consecutive rows
    /// of B then mostly share their word (banded, stencil-like patterns), and the dense
    /// symbolic kernel merges such runs in a register (see `dense::count_rows`).
    pub short_rows: bool,
}

/// Below this many (word, bits) pairs per row of B, the dense symbolic kernel merges runs
/// of pairs on one word before touching its bit map. Measured (2 threads, count kernel
/// alone): 10% faster on `banded_500k_7^2` (1.1 pairs per row), 7% slower on
/// `elast2d_q1_196^2` (several pairs per row, on different words: the merge branch
/// mispredicts and there is no store-to-load chain to save).
pub const RUN_PAIRS_PER_ROW: usize = 2;

impl CompressedRows {
    #[inline(always)]
    pub fn row(&self, j: usize) -> std::ops::Range<usize> {
        self.ptr[j] as usize..self.ptr[j + 1] as usize
    }

    /// Bytes held (reported by the plan statistics).
    pub fn bytes(&self) -> usize {
        self.ptr.len() * 4 + self.words.len() * 4 + self.bits.len() * 8
    }
}

/// Pairs row `j` of B compresses to: runs of consecutive entries in one word (rows with
/// unsorted columns compress less, never wrongly).
#[inline]
fn row_pairs<O: Idx, I: Idx, V: Scalar>(b: &CsrRef<'_, O, I, V>, j: usize) -> u32 {
    // Branch-free: whether a word starts a new pair is data-dependent.
    let mut n = 0u32;
    let mut last = usize::MAX;
    for q in b.row_range(j) {
        let w = b.col(q) / WORD_BITS;
        n += (w != last) as u32;
        last = w;
    }
    n
}

/// Compressed length of every row of B; `None` when the word index would not fit u32.
pub fn compressed_lengths<O: Idx, I: Idx, V: Scalar>(
    b: &CsrRef<'_, O, I, V>,
) -> Result<Option<Zeroed<u32>>> {
    if b.ncols() / WORD_BITS >= u32::MAX as usize {
        return Ok(None);
    }
    let mut len = Zeroed::<u32>::new(b.nrows(), "compressed row lengths of B")?;
    len.par_iter_mut()
        .enumerate()
        .with_min_len(2048)
        .for_each(|(j, l)| *l = row_pairs(b, j));
    Ok(Some(len))
}

/// Rows of B per task of [`compress_rows`].
const BLOCK_ROWS: usize = 4096;

/// Compresses B: the pair counts go straight into the row offsets (no separate array of
/// row lengths), block by block in parallel, each block returning its total; the second
/// parallel pass turns them into offsets and writes the pairs. `None` when word numbers
/// or the number of pairs would not fit u32.
pub fn compress_rows<O: Idx, I: Idx, V: Scalar>(
    b: &CsrRef<'_, O, I, V>,
) -> Result<Option<CompressedRows>> {
    if b.ncols() / WORD_BITS >= u32::MAX as usize {
        return Ok(None);
    }
    let n = b.nrows();
    let mut ptr = Zeroed::<u32>::new(n + 1, "compressed B row offsets")?;
    // ptr[j + 1] = pairs of row j, for now.
    let sums: Vec<usize> = ptr[1..]
        .par_chunks_mut(BLOCK_ROWS)
        .enumerate()
        .map(|(blk, out)| {
            let j0 = blk * BLOCK_ROWS;
            let mut total = 0usize;
            for (d, o) in out.iter_mut().enumerate() {
                let l = row_pairs(b, j0 + d);
                *o = l;
                total += l as usize;
            }
            total
        })
        .collect();
    let mut starts = Vec::with_capacity(sums.len() + 1);
    let mut t = 0usize;
    for s in &sums {
        starts.push(t);
        t += s;
    }
    starts.push(t);
    if t > u32::MAX as usize {
        return Ok(None);
    }
    let mut words = Zeroed::<u32>::new(t, "compressed B words")?;
    let mut bits = Zeroed::<u64>::new(t, "compressed B bits")?;
    let wp = split_at_bounds(&mut words, &starts);
    let bp = split_at_bounds(&mut bits, &starts);
    ptr[1..]
        .par_chunks_mut(BLOCK_ROWS)
        .zip(wp)
        .zip(bp)
        .enumerate()
        .for_each(|(blk, ((out, wo), bo))| {
            let j0 = blk * BLOCK_ROWS;
            let base = starts[blk];
            let mut t = 0usize;
            for (d, o) in out.iter_mut().enumerate() {
                // A pair's bits gather in a register and are stored once, when the next
                // pair starts (an OR into memory per entry would chain every entry of a
                // pair through a store and a reload).
                let mut last = usize::MAX;
                let mut acc = 0u64;
                for q in b.row_range(j0 + d) {
                    let c = b.col(q);
                    let w = c / WORD_BITS;
                    if w != last {
                        if last != usize::MAX {
                            bo[t - 1] = acc;
                        }
                        wo[t] = w as u32;
                        t += 1;
                        last = w;
                        acc = 0;
                    }
                    acc |= 1u64 << (c % WORD_BITS);
                }
                if last != usize::MAX {
                    bo[t - 1] = acc;
                }
                // At most the total, checked to fit u32.
                *o = (base + t) as u32;
            }
        });
    let short_rows = t < RUN_PAIRS_PER_ROW.saturating_mul(n);
    Ok(Some(CompressedRows {
        ptr,
        words,
        bits,
        short_rows,
    }))
}

/// f_m and compressed f_m of A*B estimated from evenly spaced rows of A. The dense
/// symbolic kernel counts the flops in the same pass as the union, so there is no
/// separate flop pass to fuse the exact compressed count into; a sample of a few thousand
/// rows decides as well at a fraction of a pass over A.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub flops: f64,
    pub compressed: f64,
}

/// Rows of A looked at by [`estimate`].
pub const SAMPLE_ROWS: usize = 1024;

/// Work of compressing B (the length pass plus the build pass), in symbolic insertions
/// per entry of B: measured on the benchmark inputs, a (word, bits) pair costs about as
/// much to insert as a column, and one pass over B about as much as one insertion per
/// entry.
pub const COMPRESS_COST_PER_ENTRY: f64 = 2.0;

impl Estimate {
    /// The paper's rule (more than 15% fewer insertions) and, because the dense kernel's
    /// insertion of a pair costs no less than that of a column, only when the insertions
    /// saved outweigh building the compressed B.
    pub fn pays(&self, b_nnz: usize) -> bool {
        self.compressed < (1.0 - MIN_GAIN) * self.flops
            && self.flops - self.compressed > COMPRESS_COST_PER_ENTRY * b_nnz as f64
    }
}

/// Estimates f_m and the compressed f_m from up to [`SAMPLE_ROWS`] rows of A; `None` when
/// B cannot be compressed (word numbers beyond u32).
pub fn estimate<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Option<Estimate> {
    if b.ncols() / WORD_BITS >= u32::MAX as usize {
        return None;
    }
    let m = a.nrows();
    let samples = m.min(SAMPLE_ROWS);
    if samples == 0 {
        return Some(Estimate {
            flops: 0.0,
            compressed: 0.0,
        });
    }
    // On the handle's pool: a serial pass measured ~10% of the dense symbolic phase on
    // short-row products (elast2d_q1_196). Integer sums: the same in any order.
    let (f, fc) = (0..samples)
        .into_par_iter()
        .with_min_len(128)
        .map(|s| {
            let i = s * m / samples;
            let (mut f, mut fc) = (0u64, 0u64);
            for p in a.row_range(i) {
                let j = a.col(p);
                f += b.row_len(j) as u64;
                fc += row_pairs(b, j) as u64;
            }
            (f, fc)
        })
        .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    let scale = m as f64 / samples as f64;
    Some(Estimate {
        flops: f as f64 * scale,
        compressed: fc as f64 * scale,
    })
}
