//! Row groups of A ("inodes" in PETSc's words): runs of consecutive rows with the same
//! column index list, as FEM and AMG matrices have (one row per degree of freedom of a
//! node: `elast3d_p1_22` and the `sa_elast` operators have 57-67% of their rows equal to
//! the row before, in groups of 3; the stencil, random and banded inputs none).
//!
//! Rows with the same column list give rows of C with the same column set, and for
//! unsorted output the same first-touch order (it depends on the pattern only). So the
//! symbolic phase counts only the first row of a group, and the grouped numeric kernels
//! load each entry of B once for the whole group and sum the group's rows in an
//! interleaved accumulator (a value per column and lane, [`LANES`] lanes), each lane in
//! the order the ungrouped kernels sum: the output is bitwise theirs.
//!
//! Used by the dense symbolic count ([`crate::cpu::dense::count_rows`]), the dense numeric
//! kernels of the first and second numeric calls ([`crate::cpu::dense::fill_rows`],
//! [`crate::cpu::dense::fill_rows_by_value`]: columns found, sorted and emitted once per
//! group, copied to its other rows) and the replay kernel (`gustavson::replay`, numeric
//! calls from the third on): each phase measured faster on the grouped inputs and
//! unchanged on the others (docs/DESIGN-NOTES.md, cpu::row_groups).
//! The hash symbolic phase is not grouped yet.
//!
//! Groups are kept as their start rows (O(groups) u32), only when worthwhile (see
//! [`MIN_SAME_SHARE`]), and the numeric chunks never split a group (see [`RowGroups::align`]).
//! The symbolic count and the replay trust the groups without comparing rows again: the
//! count uses them in the call that found them, and the replay runs only while every
//! numeric call checks A's structure against the plan's (with validation off, numeric
//! calls never replay). The first numeric call may run with validation off on an A whose
//! structure changed since the symbolic call, so its kernels compare each later row of a
//! group with the first ([`same_columns`]: a few entries per row against the row's
//! products) and take the rows of a group that no longer matches one by one.

use rayon::prelude::*;

use crate::common::csr::CsrRef;
use crate::error::Result;
use crate::platform::alloc::try_reserve;
use crate::types::{Idx, Scalar};

/// Lanes of the interleaved accumulators, and the largest group: four f64 lanes are one
/// 256-bit vector; the benchmark inputs have groups of 3 (a lane idles).
pub(crate) const LANES: usize = 4;

/// Groups are kept when at least this share of A's rows equals the row before: then most
/// rows are in groups and the grouped kernels save most of their loads of B. (The inputs
/// measured have 0.57-0.67 or 0.00, so the threshold is not critical.)
const MIN_SAME_SHARE: f64 = 0.25;

/// Rows per block of the parallel detection (a block's first row starts a group).
const DETECT_BLOCK: usize = 4096;

/// Rows of A per row the pre-check of [`RowGroups::detect`] compares with the row before
/// (one at a pseudo-random place in each stretch of this many rows): the full pass reads
/// every row's columns, about 0.2-0.6 ms of the short-row AMG products' symbolic phase on
/// A without groups (docs/DESIGN-NOTES.md, cpu::row_groups).
const SAMPLE_STRIDE: usize = 16;

/// Rows the pre-check looks at, at least: below this, the full pass runs alone.
const MIN_SAMPLES: usize = 1024;

/// Rows the pre-check looks at, at most (farther apart than [`SAMPLE_STRIDE`] on larger A):
/// the share is then known to about 0.01 at the threshold, and each sample, a cache miss
/// on A's offsets and columns, cost ~40 ns: 30,000 samples were ~1 ms of the 490,000-row
/// aniso_r22 A0*P0's 19 ms symbolic phase at one thread (docs/DESIGN-NOTES.md,
/// cpu::row_groups).
const MAX_SAMPLES: usize = 4096;

/// The entries of a group's rows of A (at most [`LANES`] rows with the same column list),
/// walked together by the grouped kernels: entry q of every row has the column `col(a, q)`,
/// and `values(av, q)` holds row `rows.start + l`'s value of it in lane l (unused lanes
/// zero, so they sum zero products).
pub(crate) struct GroupEntries {
    first: usize,
    len: usize,
    starts: [usize; LANES],
    rows: usize,
}

impl GroupEntries {
    #[inline(always)]
    pub(crate) fn new<O: Idx, I: Idx, V: Scalar>(
        a: &CsrRef<'_, O, I, V>,
        rows: std::ops::Range<usize>,
    ) -> Self {
        let first = a.row_start(rows.start);
        let mut starts = [first; LANES];
        for (st, i) in starts.iter_mut().zip(rows.clone()) {
            *st = a.row_start(i);
        }
        GroupEntries {
            first,
            len: a.row_len(rows.start),
            starts,
            rows: rows.len(),
        }
    }

    /// Entries per row.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// 0-based column of entry q (the same in every row of the group).
    #[inline(always)]
    pub(crate) fn col<O: Idx, I: Idx, V: Scalar>(
        &self,
        a: &CsrRef<'_, O, I, V>,
        q: usize,
    ) -> usize {
        a.col(self.first + q)
    }

    /// Each row's value of entry q, lane by lane.
    #[inline(always)]
    pub(crate) fn values<V: Scalar>(&self, av: &[V], q: usize) -> [V; LANES] {
        let mut al = [V::ZERO; LANES];
        for l in 0..self.rows {
            al[l] = av[self.starts[l] + q];
        }
        al
    }
}

/// Start rows of A's row groups, in order, then A's row count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowGroups {
    starts: Vec<u32>,
}

/// Row i of A has the column list of row i - 1 (i >= 1).
#[inline]
fn same_as_previous<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>, i: usize) -> bool {
    same_columns(a, i - 1, i)
}

/// Share of A's rows equal to the row before, estimated from one row per
/// [`SAMPLE_STRIDE`], at most [`MAX_SAMPLES`] rows evenly spread (1.0 when A has too few
/// rows for the estimate: the full pass decides).
/// The row of each stretch is placed by a hash of the stretch, so a periodic pattern of
/// groups cannot hide from evenly spaced samples.
fn sampled_share<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> f64 {
    let n = (a.nrows() - 1) / SAMPLE_STRIDE;
    if n < MIN_SAMPLES {
        return 1.0;
    }
    let n = n.min(MAX_SAMPLES);
    let stride = (a.nrows() - 1) / n;
    let hits = (0..n)
        .into_par_iter()
        .with_min_len(256)
        .filter(|&t| {
            let h = ((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % stride;
            same_as_previous(a, 1 + t * stride + h)
        })
        .count();
    hits as f64 / n as f64
}

/// Whether A likely has row groups worth the grouped kernels, from [`SERIAL_SAMPLES`]
/// rows (serially, a few microseconds): the serial path of small products, which has no
/// groups, leaves products of such an A above its base threshold to the parallel path.
pub(crate) fn likely<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> bool {
    let m = a.nrows();
    if m < 2 {
        return false;
    }
    let n = (m - 1).min(SERIAL_SAMPLES);
    let stride = (m - 1) / n;
    let hits = (0..n)
        .filter(|&t| {
            let h = ((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % stride;
            same_as_previous(a, 1 + t * stride + h)
        })
        .count();
    hits as f64 >= 0.5 * MIN_SAME_SHARE * n as f64
}

/// Rows [`likely`] compares with the row before.
const SERIAL_SAMPLES: usize = 64;

/// Rows `r` and `s` of A have the same column list.
#[inline]
pub(crate) fn same_columns<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    r: usize,
    s: usize,
) -> bool {
    let (rr, sr) = (a.row_range(r), a.row_range(s));
    if rr.len() != sr.len() {
        return false;
    }
    let c = a.col_indices();
    match (c.get(rr), c.get(sr)) {
        (Some(x), Some(y)) => x.iter().zip(y).all(|(p, q)| p.to_usize() == q.to_usize()),
        _ => false,
    }
}

impl RowGroups {
    /// Bytes [`RowGroups::detect`] may allocate for A with `m` rows: each block's starts
    /// (at most its rows and two more once grown), their headers, and the joined starts.
    pub fn bytes_bound(m: usize) -> u64 {
        let nblocks = m.div_ceil(DETECT_BLOCK) as u64;
        let m = m as u64;
        (2 * m + 2 * nblocks + 1) * 4 + nblocks * std::mem::size_of::<Vec<u32>>() as u64
    }

    /// The groups of A's rows (at most [`LANES`] rows each), or `None` when too few rows
    /// are in groups for the grouped kernels to pay. Runs on the current rayon pool; one
    /// pass over A's column indices where rows have equal lengths.
    pub fn detect<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> Result<Option<Self>> {
        let m = a.nrows();
        if m < 2 || m > u32::MAX as usize {
            return Ok(None);
        }
        if sampled_share(a) < 0.5 * MIN_SAME_SHARE {
            return Ok(None);
        }
        let nblocks = m.div_ceil(DETECT_BLOCK);
        let same: usize = (0..nblocks)
            .into_par_iter()
            .map(|q| {
                let r = q * DETECT_BLOCK..((q + 1) * DETECT_BLOCK).min(m);
                r.filter(|&i| i > 0 && same_as_previous(a, i)).count()
            })
            .sum();
        if (same as f64) < MIN_SAME_SHARE * m as f64 {
            return Ok(None);
        }
        let pieces: Vec<Vec<u32>> = (0..nblocks)
            .into_par_iter()
            .map(|q| {
                let r = q * DETECT_BLOCK..((q + 1) * DETECT_BLOCK).min(m);
                let mut v = Vec::new();
                try_reserve(&mut v, r.len() / 2 + 1, "row group starts")?;
                let mut size = 0usize;
                for i in r.clone() {
                    if i > r.start && size < LANES && same_as_previous(a, i) {
                        size += 1;
                    } else {
                        if v.len() == v.capacity() {
                            let more = v.len();
                            try_reserve(&mut v, more, "row group starts")?;
                        }
                        v.push(i as u32);
                        size = 1;
                    }
                }
                Ok(v)
            })
            .collect::<Result<_>>()?;
        let n: usize = pieces.iter().map(|p| p.len()).sum();
        let mut starts = Vec::new();
        try_reserve(&mut starts, n + 1, "row group starts")?;
        for p in &pieces {
            starts.extend_from_slice(p);
        }
        starts.push(m as u32);
        Ok(Some(RowGroups { starts }))
    }

    /// Bytes held (a distributed plan's footprint).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub fn bytes(&self) -> usize {
        self.starts.len() * std::mem::size_of::<u32>()
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Rows of A the groups cover.
    pub fn nrows(&self) -> usize {
        *self.starts.last().expect("starts end with m") as usize
    }

    /// The groups as row ranges.
    pub fn iter(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.starts.windows(2).map(|w| w[0] as usize..w[1] as usize)
    }

    /// The groups within `rows` (one clipped at each end if a bound of `rows` falls
    /// inside a group: still rows with the same column list).
    pub fn within(
        &self,
        rows: std::ops::Range<usize>,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let first = self
            .starts
            .partition_point(|&s| (s as usize) <= rows.start)
            .saturating_sub(1);
        let end = rows.end;
        let start = rows.start;
        self.starts[first..]
            .windows(2)
            .map(move |w| (w[0] as usize).max(start)..(w[1] as usize).min(end))
            .take_while(move |r| r.start < end)
    }

    /// Moves each inner chunk boundary down to the start of the group holding it (so no
    /// chunk splits a group) and drops chunks that became empty.
    pub fn align(&self, chunks: &mut Vec<usize>) {
        let n = chunks.len();
        if n < 3 {
            return;
        }
        for c in &mut chunks[1..n - 1] {
            let g = self.starts.partition_point(|&s| (s as usize) <= *c);
            *c = self.starts[g.saturating_sub(1)] as usize;
        }
        chunks.dedup();
    }

    /// One line for plan info.
    pub fn describe(&self) -> String {
        let rows = self.nrows();
        format!(
            "row groups of A: {} for {rows} rows (mean {:.2} rows, at most {LANES})",
            self.len(),
            rows as f64 / self.len().max(1) as f64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A with groups of the given sizes (row lists shared inside a group).
    fn grouped(sizes: &[usize], base: usize) -> (Vec<i32>, Vec<i32>, usize) {
        let mut offs = vec![base as i32];
        let mut cols = Vec::new();
        let mut m = 0;
        for (g, &s) in sizes.iter().enumerate() {
            for _ in 0..s {
                for d in 0..(g % 3) {
                    cols.push((base + (g + 2 * d) % 50) as i32);
                }
                offs.push((cols.len() + base) as i32);
                m += 1;
            }
        }
        (offs, cols, m)
    }

    #[test]
    fn detection_finds_runs_capped_at_lanes() {
        for base in [0, 1] {
            // Group 0 and 3 are empty rows (g % 3 == 0): runs of empty rows group too.
            let sizes = [3, 2, 6, 1, 3, 4, 2, 9, 1];
            let (offs, cols, m) = grouped(&sizes, base);
            let a = CsrRef::<i32, i32, f64>::new(m, 60, base, &offs, &cols, None).unwrap();
            let g = RowGroups::detect(&a).unwrap().unwrap();
            let mut want = Vec::new();
            let mut r = 0;
            for &s in &sizes {
                let mut left = s;
                while left > 0 {
                    let t = left.min(LANES);
                    want.push(r..r + t);
                    r += t;
                    left -= t;
                }
            }
            assert_eq!(g.iter().collect::<Vec<_>>(), want);
            assert_eq!(g.nrows(), m);
            // Chunks: inner bounds moved to group starts.
            let mut chunks = vec![0, 1, 4, 5, 7, m];
            g.align(&mut chunks);
            assert_eq!(chunks, vec![0, 3, 5, m]);
            let inside: Vec<_> = g.within(4..11).collect();
            assert_eq!(inside, vec![4..5, 5..9, 9..11]);
        }
        // Enough rows for the sampled pre-check: groups of two and three, and a pattern of
        // period 16 (every row but the first of each 16 equal to the one before), are kept;
        // rows of one are not.
        for (sizes, kept) in [(vec![2, 3], true), (vec![16], true), (vec![1], false)] {
            let sizes: Vec<usize> = sizes.iter().copied().cycle().take(20_000).collect();
            let (offs, cols, m) = grouped(&sizes, 0);
            let a = CsrRef::<i32, i32, f64>::new(m, 60, 0, &offs, &cols, None).unwrap();
            assert!(m > SAMPLE_STRIDE * MIN_SAMPLES);
            let g = RowGroups::detect(&a).unwrap();
            assert_eq!(g.is_some(), kept, "{:?}", &sizes[..3]);
        }
        // No repeated rows: no groups.
        let offs: Vec<i32> = (0..=10).collect();
        let cols: Vec<i32> = (0..10).collect();
        let a = CsrRef::<i32, i32, f64>::new(10, 10, 0, &offs, &cols, None).unwrap();
        assert_eq!(RowGroups::detect(&a).unwrap(), None);
    }

    /// The small path's sampled test: grouped and ungrouped A, too few rows, and offsets
    /// no validation has looked at (decreasing, negative, past the columns) without a panic.
    #[test]
    fn likely_groups_from_samples_on_any_offsets() {
        for (sizes, want) in [(vec![3], true), (vec![2, 3], true), (vec![1], false)] {
            for n in [2usize, 3, 65, 1000] {
                let sizes: Vec<usize> = sizes.iter().copied().cycle().take(n).collect();
                let (offs, cols, m) = grouped(&sizes, 0);
                let a = CsrRef::<i32, i32, f64>::new(m, 60, 0, &offs, &cols, None).unwrap();
                // Two rows of one group each: no pair to compare, as with one row.
                let expect = want && m >= 2 && sizes[0] > 1;
                assert_eq!(likely(&a), expect, "{:?} x {n}", &sizes[..1]);
            }
        }
        let cols = [0i32, 1, 2];
        for offs in [
            vec![0i32, 3, 1, 2, 0, 3],
            vec![0, -5, 2, -1, 3, 3],
            vec![0, 7, 9, 1_000_000, 3, 3],
            vec![0, i32::MAX, i32::MIN, 1, 2, 3],
        ] {
            let a = CsrRef::<i32, i32, f64>::new(5, 3, 0, &offs, &cols, None).unwrap();
            let _ = likely(&a);
        }
        let one = CsrRef::<i32, i32, f64>::new(1, 3, 0, &[0, 3], &cols, None).unwrap();
        assert!(!likely(&one));
    }
}
