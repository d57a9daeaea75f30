//! Compression of B for the symbolic phase (section 3.2 of the KokkosKernels paper): the
//! columns of a row of B that fall in one 64-column word become one (word, bits) pair,
//! so the symbolic phase inserts fewer keys and unions rows with a bitwise OR.
//!
//! Two-step decision: the compressed flop count f_m' is computed first (one pass over B
//! for the compressed row lengths, fused with the flop count over A); B is compressed
//! only if f_m' is more than 15% below f_m.

use rayon::prelude::*;

use crate::alloc::{try_filled, try_with_capacity};
use crate::cpu::gustavson::split_at_bounds;
use crate::cpu::symbolic::WORD_BITS;
use crate::csr::CsrRef;
use crate::error::Result;
use crate::types::{Idx, Scalar};

/// Compress only if it removes more than this fraction of the symbolic insertions.
pub const MIN_GAIN: f64 = 0.15;

/// B's rows as (word, bits) pairs.
pub struct CompressedRows {
    pub ptr: Vec<usize>,
    pub words: Vec<u32>,
    pub bits: Vec<u64>,
}

impl CompressedRows {
    #[inline(always)]
    pub fn row(&self, j: usize) -> std::ops::Range<usize> {
        self.ptr[j]..self.ptr[j + 1]
    }

    /// Bytes held (reported by the plan statistics).
    pub fn bytes(&self) -> usize {
        self.ptr.len() * 8 + self.words.len() * 4 + self.bits.len() * 8
    }
}

/// Pairs row `j` of B compresses to: runs of consecutive entries in one word (rows with
/// unsorted columns compress less, never wrongly).
#[inline]
fn row_pairs<O: Idx, I: Idx, V: Scalar>(b: &CsrRef<'_, O, I, V>, j: usize) -> u32 {
    let mut n = 0u32;
    let mut last = usize::MAX;
    for q in b.row_range(j) {
        let w = b.col(q) / WORD_BITS;
        if w != last {
            n += 1;
            last = w;
        }
    }
    n
}

/// Compressed length of every row of B; `None` when the word index would not fit u32.
pub fn compressed_lengths<O: Idx, I: Idx, V: Scalar>(
    b: &CsrRef<'_, O, I, V>,
) -> Result<Option<Vec<u32>>> {
    if b.ncols() / WORD_BITS >= u32::MAX as usize {
        return Ok(None);
    }
    let mut len = try_filled(b.nrows(), 0u32, "compressed row lengths of B")?;
    len.par_iter_mut()
        .enumerate()
        .with_min_len(2048)
        .for_each(|(j, l)| *l = row_pairs(b, j));
    Ok(Some(len))
}

/// Builds the compressed B from its row lengths.
pub fn compress<O: Idx, I: Idx, V: Scalar>(
    b: &CsrRef<'_, O, I, V>,
    lens: &[u32],
) -> Result<CompressedRows> {
    let n = b.nrows();
    let mut ptr = try_filled(n + 1, 0usize, "compressed B row offsets")?;
    for j in 0..n {
        ptr[j + 1] = ptr[j] + lens[j] as usize;
    }
    let total = ptr[n];
    let mut words: Vec<u32> = try_with_capacity(total, "compressed B words")?;
    words.resize(total, 0);
    let mut bits: Vec<u64> = try_with_capacity(total, "compressed B bits")?;
    bits.resize(total, 0);
    // Rows in blocks so each task writes a contiguous range.
    let block = 4096usize;
    let bounds: Vec<usize> = (0..n.div_ceil(block))
        .map(|c| c * block)
        .chain(std::iter::once(n))
        .collect();
    let starts: Vec<usize> = bounds.iter().map(|&r| ptr[r]).collect();
    let wp = split_at_bounds(&mut words, &starts);
    let bp = split_at_bounds(&mut bits, &starts);
    wp.into_par_iter()
        .zip(bp)
        .zip(bounds.par_windows(2))
        .for_each(|((wo, bo), r)| {
            let mut t = 0usize;
            for j in r[0]..r[1] {
                let mut last = usize::MAX;
                for q in b.row_range(j) {
                    let c = b.col(q);
                    let w = c / WORD_BITS;
                    if w != last {
                        wo[t] = w as u32;
                        bo[t] = 0;
                        t += 1;
                        last = w;
                    }
                    bo[t - 1] |= 1u64 << (c % WORD_BITS);
                }
            }
        });
    Ok(CompressedRows { ptr, words, bits })
}
