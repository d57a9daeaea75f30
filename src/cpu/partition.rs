//! Work estimates and flop-balanced row partitions (Thread-Sequential: each chunk is a
//! contiguous range of rows; chunks are handed to workers dynamically).

use rayon::prelude::*;

use crate::common::csr::CsrRef;
use crate::error::{Result, Status, err};
use crate::platform::alloc::try_filled;
use crate::types::{Idx, Scalar};

/// Per-product work figures from one pass over A's structure.
pub struct FlopProfile {
    /// `prefix[i]` = multiplications in rows `0..i` (length m + 1).
    pub prefix: Vec<u64>,
    /// Multiplications of the heaviest row: bounds the distinct columns of any row of C.
    pub max_row: u64,
    /// Symbolic insertions with B compressed (the paper's compressed f_m), when the
    /// compressed row lengths of B were given.
    pub compressed: Option<u64>,
}

impl FlopProfile {
    pub fn total(&self) -> u64 {
        *self.prefix.last().unwrap_or(&0)
    }
}

/// Multiplications per row of A*B: sum over a_ij of nnz(B row j); with `clens` (the
/// compressed row lengths of B) also the compressed total, in the same pass.
pub fn flop_profile<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    clens: Option<&[u32]>,
) -> Result<FlopProfile> {
    let m = a.nrows();
    let b_nnz = b.nnz() as u64;
    let mut prefix = try_filled(m + 1, 0u64, "flop counts")?;
    // A row of B longer than B (offsets that decrease or run past the entries: validation
    // off) would size every accumulator from garbage; `bad` keeps the first such row.
    let (max_row, ctotal, bad) = prefix[1..]
        .par_iter_mut()
        .enumerate()
        .with_min_len(1024)
        .map(|(i, f)| {
            let mut flops = 0u64;
            let mut cflops = 0u64;
            let mut bad = usize::MAX;
            for p in a.row_range(i) {
                let j = a.col(p);
                let len = b.row_len(j) as u64;
                if len > b_nnz {
                    bad = bad.min(j);
                    continue;
                }
                flops += len;
                if let Some(cl) = clens {
                    cflops += cl[j] as u64;
                }
            }
            *f = flops;
            (flops, cflops, bad)
        })
        .reduce(
            || (0, 0, usize::MAX),
            |x, y| (x.0.max(y.0), x.1 + y.1, x.2.min(y.2)),
        );
    if bad != usize::MAX {
        return err(
            Status::Internal,
            format!(
                "row {bad} of B spans {} entries but B holds {b_nnz}",
                b.row_len(bad) as i64
            ),
        );
    }
    for i in 0..m {
        prefix[i + 1] += prefix[i];
    }
    Ok(FlopProfile {
        prefix,
        max_row,
        compressed: clens.map(|_| ctotal),
    })
}

/// Splits rows into contiguous chunks of about equal flops (plus a per-row cost, so long
/// runs of empty rows are split too). Returns chunk boundaries `[0, r1, ..., m]`.
pub fn balanced_chunks(prefix: &[u64], threads: usize) -> Vec<usize> {
    balanced_chunks_by(prefix.len() - 1, threads, |i| prefix[i] + i as u64)
}

/// Work before the start of part `p` of `parts` when the parts share `total` evenly
/// (computed without overflowing u64).
fn part_target(total: u64, parts: usize, p: usize) -> u64 {
    let (parts, p) = (parts as u64, p as u64);
    total / parts * p + (total % parts) * p / parts
}

/// Splits rows `0..m` into contiguous chunks of about equal work, where `cost(i)` is the
/// (non-decreasing) work of rows `0..i`. Returns chunk boundaries `[0, r1, ..., m]`.
pub fn balanced_chunks_by(m: usize, threads: usize, cost: impl Fn(usize) -> u64) -> Vec<usize> {
    if m == 0 {
        return vec![0, 0];
    }
    // Several chunks per thread so a slow chunk does not leave the others idle.
    let parts = (threads * 8).clamp(1, m);
    let total = cost(m);
    let mut bounds = Vec::with_capacity(parts + 1);
    bounds.push(0);
    for p in 1..parts {
        let target = part_target(total, parts, p);
        // First row index r with cost(r) >= target.
        let (mut lo, mut hi) = (*bounds.last().unwrap(), m);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cost(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo > *bounds.last().unwrap() && lo < m {
            bounds.push(lo);
        }
    }
    bounds.push(m);
    bounds
}

/// [`balanced_chunks`] from flop sums over blocks of `block` rows instead of a per-row
/// prefix: `block_prefix[q]` = flops of rows `0..min(q * block, m)` (m.div_ceil(block) + 1
/// entries) and `row_flops(i)` = flops of row i, evaluated only for rows of the blocks the
/// boundaries fall in. Returns exactly the boundaries of [`balanced_chunks`].
pub fn balanced_chunks_blocked(
    m: usize,
    block: usize,
    block_prefix: &[u64],
    threads: usize,
    row_flops: impl Fn(usize) -> u64,
) -> Vec<usize> {
    if m == 0 {
        return vec![0, 0];
    }
    let nblocks = m.div_ceil(block);
    debug_assert_eq!(block_prefix.len(), nblocks + 1);
    // The cost of rows 0..r is their flops plus r (see `balanced_chunks`).
    let cost_at_block = |q: usize| block_prefix[q] + (q * block).min(m) as u64;
    let parts = (threads * 8).clamp(1, m);
    let total = cost_at_block(nblocks);
    let mut bounds = Vec::with_capacity(parts + 1);
    bounds.push(0);
    for p in 1..parts {
        let target = part_target(total, parts, p);
        // First row r with cost(r) >= target (m if none): the last block start below the
        // target, then row by row from there.
        let r = if target == 0 {
            0
        } else {
            let (mut lo, mut hi) = (0usize, nblocks);
            // Invariant: cost_at_block(lo) < target.
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if cost_at_block(mid) < target {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let mut r = (lo * block).min(m);
            let mut c = cost_at_block(lo);
            while r < m && c < target {
                c += row_flops(r) + 1;
                r += 1;
            }
            r
        };
        let last = *bounds.last().unwrap();
        let r = r.max(last);
        if r > last && r < m {
            bounds.push(r);
        }
    }
    bounds.push(m);
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_rows_in_order() {
        let prefix: Vec<u64> = (0..=1000u64).map(|i| i * i).collect();
        for t in [1, 2, 3, 8] {
            let b = balanced_chunks(&prefix, t);
            assert_eq!(b[0], 0);
            assert_eq!(*b.last().unwrap(), 1000);
            assert!(b.windows(2).all(|w| w[0] < w[1]));
        }
        assert_eq!(balanced_chunks(&[0], 4), vec![0, 0]);
        assert_eq!(balanced_chunks(&[0, 0], 4), vec![0, 1]);
    }

    /// Chunks are balanced by work (flops plus one per row), not by row count: every
    /// chunk's work is within one row's work of the even share, on skewed profiles (a
    /// heavy head, power-law rows, a run of empty rows).
    #[test]
    fn chunks_share_flops_evenly() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let m = 20_000usize;
        for shape in 0..3 {
            let flops: Vec<u64> = (0..m)
                .map(|i| match shape {
                    0 => {
                        if i < m / 10 {
                            500
                        } else {
                            5
                        }
                    }
                    1 => 1_000_000 / (1 + next() % 1000),
                    _ => {
                        if (m / 4..m / 2).contains(&i) {
                            0
                        } else {
                            1 + next() % 40
                        }
                    }
                })
                .collect();
            let mut prefix = vec![0u64; m + 1];
            for i in 0..m {
                prefix[i + 1] = prefix[i] + flops[i];
            }
            let work = |i: usize| prefix[i] + i as u64;
            let max_row = flops.iter().max().unwrap() + 1;
            for t in [1, 2, 3, 8] {
                let b = balanced_chunks(&prefix, t);
                let parts = b.len() - 1;
                assert_eq!(parts, t * 8, "shape {shape} threads {t}");
                let share = work(m) / parts as u64;
                for w in b.windows(2) {
                    let chunk = work(w[1]) - work(w[0]);
                    assert!(
                        chunk.abs_diff(share) <= max_row,
                        "shape {shape} threads {t}: chunk {w:?} has {chunk}, share {share}"
                    );
                }
            }
        }
    }

    /// The blocked search gives exactly the boundaries of the per-row one, whatever the
    /// block size (runs of empty rows, one heavy row, rows fewer than parts or a block).
    #[test]
    fn blocked_chunks_equal_per_row_chunks() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for m in [0usize, 1, 5, 16, 17, 255, 256, 257, 1000, 5000] {
            for shape in 0..4 {
                let flops: Vec<u64> = (0..m)
                    .map(|i| match shape {
                        0 => next() % 50,
                        1 => (next() % 4 == 0) as u64 * (next() % 1000),
                        2 => (i == m / 3) as u64 * 1_000_000,
                        _ => 0,
                    })
                    .collect();
                let mut prefix = vec![0u64; m + 1];
                for i in 0..m {
                    prefix[i + 1] = prefix[i] + flops[i];
                }
                for block in [1usize, 3, 64, 256] {
                    let nb = m.div_ceil(block);
                    let bp: Vec<u64> = (0..=nb).map(|q| prefix[(q * block).min(m)]).collect();
                    for t in [1, 2, 3, 8] {
                        assert_eq!(
                            balanced_chunks_blocked(m, block, &bp, t, |i| flops[i]),
                            balanced_chunks(&prefix, t),
                            "m {m} shape {shape} block {block} threads {t}"
                        );
                    }
                }
            }
        }
    }
}
