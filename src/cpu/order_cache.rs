//! Sorted output without a sort for rows whose order repeats: the permutation that
//! sorted the previous row (of the same length) is tried on the next one first.
//!
//! Rows of C from structured matrices (stencils, banded, elasticity, aggregation) mostly
//! repeat the previous row's first-touch list shifted by a constant (or with the same
//! relative order anyway): the same rows of B are visited in the same order, only moved
//! along the diagonal. Then the permutation that took the previous row's first-touch
//! list to sorted order sorts this row too. Whether it does is checked, not assumed:
//! the columns gathered through the permutation must be strictly increasing. Columns
//! of a row are distinct, so a strictly increasing arrangement of them is the sorted
//! row (exact, for any input: a stale or unrelated permutation only costs a miss). The
//! values are the same sums, only written in another order, so the output stays
//! bitwise equal to the other kernels'.
//!
//! Per row that hits this replaces the sort (and the `pos` lookup of each sorted
//! column: the permutation names the slot) by one gather pass with a compare per entry.
//! A row that misses (a different length, or the gathered columns out of order) is
//! sorted as before and leaves its permutation for the next row.

/// Permutations kept per thread: rows of C often repeat with a period, e.g. 2 (the x and
/// y rows of a node in `elast2d_q1_196` squared have different first-touch orders) or 3
/// (`sa_poisson` A*P, aggregates of 3 nodes along x).
const SLOTS: usize = 4;

/// Rows shorter than this are neither tried nor recorded: the insertion sort of a few
/// entries costs about what a failed try does (on `sa_poisson` A*P, rows of about 9
/// entries, 29% of the rows hit and the first numeric call took 20-35% longer).
const MIN_LEN: usize = 12;

/// The sorting permutations of the last rows sorted by one thread.
#[derive(Default)]
pub struct OrderCache {
    /// `SLOTS` permutations of up to `cap` entries: entry r of slot s is the first-touch
    /// slot of the r-th smallest column of the row recorded there; its first `lens[s]`
    /// entries are a permutation of `0..lens[s]`.
    perm: Vec<u32>,
    cap: usize,
    /// Length of the row recorded in each slot; 0 when none is.
    lens: [usize; SLOTS],
    /// `used[d]`: the slot that sorted the row d + 1 rows back (`SLOTS` when none).
    used: [usize; SLOTS],
    /// The `d` of the last row that hit: tried first (the period of the rows).
    dist: usize,
    /// The slot the next miss records into (round robin).
    next: usize,
}

impl OrderCache {
    /// Makes room for rows of up to `cap` entries; forgets the recorded rows.
    pub fn prepare(&mut self, cap: usize) -> crate::error::Result<()> {
        self.cap = cap;
        self.lens = [0; SLOTS];
        self.used = [SLOTS; SLOTS];
        self.dist = 0;
        self.next = 0;
        // One more slot: scratch for rows too short to record.
        crate::alloc::try_grow(
            &mut self.perm,
            cap * (SLOTS + 1),
            0,
            "sorted row permutations",
        )
    }

    #[inline(always)]
    fn push_used(&mut self, s: usize) {
        self.used.copy_within(0..SLOTS - 1, 1);
        self.used[0] = s;
    }

    /// Writes the row (`row_cols`, sums `row_vals` by slot) sorted into `cols` (plus
    /// `base`) and `vals` when a recorded permutation sorts it (see [`emit_permuted`]);
    /// returns whether one did. When not, `cols` and `vals` hold garbage. Rows of fewer
    /// than [`MIN_LEN`] entries are never tried.
    #[inline(always)]
    pub fn emit<V: Copy, J: crate::types::Idx>(
        &mut self,
        row_cols: &[u32],
        row_vals: &[V],
        base: usize,
        cols: &mut [J],
        mut vals: Option<&mut [V]>,
    ) -> bool {
        let n = row_cols.len();
        if n < MIN_LEN {
            return false;
        }
        let mut tried = 0u32;
        let first = self.dist;
        for d in std::iter::once(first).chain((0..SLOTS).filter(|&d| d != first)) {
            let s = self.used[d];
            if s >= SLOTS || self.lens[s] != n || tried & (1 << s) != 0 {
                continue;
            }
            tried |= 1 << s;
            let perm = &self.perm[s * self.cap..][..n];
            if emit_permuted(perm, row_cols, row_vals, base, cols, vals.as_deref_mut()) {
                self.dist = d;
                self.push_used(s);
                return true;
            }
        }
        false
    }

    /// The buffer to record a sorted row of `n` entries in (every entry must be written:
    /// entry r the slot of the r-th smallest column), taken from the oldest slot.
    #[inline(always)]
    pub fn record(&mut self, n: usize) -> &mut [u32] {
        if n < MIN_LEN {
            return &mut self.perm[SLOTS * self.cap..][..n];
        }
        let s = self.next;
        self.next = (s + 1) % SLOTS;
        self.lens[s] = n;
        self.push_used(s);
        &mut self.perm[s * self.cap..][..n]
    }
}

/// Writes `row_cols` (distinct columns, first-touch order) through `perm` into `cols`
/// (column plus `base`) and, with `vals`, `row_vals` by slot into `vals`; returns
/// whether the columns came out strictly increasing (then they are the row sorted:
/// n increasing columns out of the n distinct ones). Stops at the first column out of
/// order (rows that miss mostly do so within a few entries), leaving garbage in `cols`
/// and `vals`.
#[inline(always)]
pub fn emit_permuted<V: Copy, J: crate::types::Idx>(
    perm: &[u32],
    row_cols: &[u32],
    row_vals: &[V],
    base: usize,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> bool {
    let n = perm.len();
    debug_assert!(row_cols.len() == n && cols.len() == n && n >= 1);
    let to_j =
        |c: u32| J::try_from_usize(c as usize + base).expect("column checked at symbolic time");
    // One below the first column, so the first entry passes the compare.
    let mut prev = i64::from(row_cols[perm[0] as usize]) - 1;
    match vals {
        Some(vals) => {
            let row_vals = &row_vals[..n];
            for ((dc, dv), &s) in cols.iter_mut().zip(vals.iter_mut()).zip(perm) {
                let c = row_cols[s as usize];
                if i64::from(c) <= prev {
                    return false;
                }
                prev = i64::from(c);
                *dc = to_j(c);
                *dv = row_vals[s as usize];
            }
        }
        None => {
            for (dc, &s) in cols.iter_mut().zip(perm) {
                let c = row_cols[s as usize];
                if i64::from(c) <= prev {
                    return false;
                }
                prev = i64::from(c);
                *dc = to_j(c);
            }
        }
    }
    true
}
