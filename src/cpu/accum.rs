//! Row accumulators for Gustavson's algorithm (numeric phase: column indices and values).
//!
//! Every accumulator keeps the columns of the current row in first-touch order and sums
//! each entry's products in the order A's row and B's rows are traversed, so the unsorted
//! output order and every value are the same for every accumulator and every thread
//! count. The two-level hash maps only spill into their second level once the first is
//! full, so "all of level 1, then all of level 2" is still first-touch order.
//!
//! KKDENSE lives in [`crate::cpu::dense`] (its row loop is specialised).
//! - [`LinkedAcc`] (KKMEM): two-level linked-list hash map (Begins/Nexts/Ids/Values).
//! - [`ProbeAcc`] (KKLP): two-level linear probing, each level at most half full.

use crate::common::memory::bytes_of;
use crate::cpu::sort::sort_pairs;
use crate::error::Result;
use crate::platform::alloc::{try_grow, try_reserve};
use crate::types::{Idx, Scalar};

/// What the numeric kernels need from an accumulator.
pub trait Accumulator<V: Scalar> {
    /// Starts a new row whose number of distinct columns is at most `bound` (the bound
    /// the accumulator was prepared for is never exceeded).
    fn begin_row(&mut self, bound: usize);
    /// Records column `c` (structure only).
    fn insert_pattern(&mut self, c: usize);
    /// Adds `v` to column `c`.
    fn insert(&mut self, c: usize, v: V);
    /// Distinct columns in the current row.
    fn len(&self) -> usize;
    /// The row has more distinct columns than the accumulator takes for its bound (the
    /// structure changed since the plan was made): `len` is then not the row's size.
    fn overflowed(&self) -> bool;
    /// Writes the row's columns (plus `base`) and, if asked, values; sorted by column if
    /// `sorted`. `cols` (and `vals`) have exactly `len()` entries.
    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>);
}

#[inline(always)]
fn to_j<J: Idx>(c: usize, base: usize) -> J {
    J::try_from_usize(c + base).expect("column checked at symbolic time")
}

/// Sorts the (column, value) pairs of a hash accumulator's row and writes them out.
fn emit_pairs_sorted<J: Idx, V: Scalar>(
    pairs: &mut Vec<(usize, V)>,
    items: impl Iterator<Item = (usize, V)>,
    base: usize,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) {
    pairs.clear();
    pairs.extend(items);
    sort_pairs(pairs);
    match vals {
        Some(vals) => {
            for ((dc, dv), &(c, v)) in cols.iter_mut().zip(vals.iter_mut()).zip(pairs.iter()) {
                *dc = to_j(c, base);
                *dv = v;
            }
        }
        None => {
            for (dc, &(c, _)) in cols.iter_mut().zip(pairs.iter()) {
                *dc = to_j(c, base);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// KKMEM

const NIL: u32 = u32::MAX;

/// Entries of the first (small, always resident) level of the two-level hash maps. The
/// paper keeps level 1 in GPU shared memory; on a CPU it is a per-thread scratch area
/// sized to stay in the L1 data cache (about 14 KiB for KKMEM, 16 KiB for KKLP with f64).
pub const L1_ENTRIES: usize = 512;

/// One level of the linked-list hash map: `begins[h]` heads the chain of hash `h`;
/// `nexts`, `ids`, `vals` are indexed by entry number (entries in insertion order).
struct Chains<T> {
    begins: Vec<u32>,
    nexts: Vec<u32>,
    ids: Vec<usize>,
    vals: Vec<T>,
    mask: usize,
    used: usize,
}

impl<T: Copy + Default> Default for Chains<T> {
    fn default() -> Self {
        Chains {
            begins: Vec::new(),
            nexts: Vec::new(),
            ids: Vec::new(),
            vals: Vec::new(),
            mask: 0,
            used: 0,
        }
    }
}

impl<T: Copy + Default> Chains<T> {
    /// Room for `cap` entries and a power-of-two Begins array of at least `cap` heads.
    /// Bytes [`Chains::prepare`] allocates for `cap` entries (kept in step with it).
    fn bytes(cap: usize) -> u64 {
        let heads = cap.max(1).checked_next_power_of_two().unwrap_or(usize::MAX);
        bytes_of::<u32>(heads)
            .saturating_add(bytes_of::<u32>(cap))
            .saturating_add(bytes_of::<usize>(cap))
            .saturating_add(bytes_of::<T>(cap))
    }

    fn prepare(&mut self, cap: usize, what: &str) -> Result<()> {
        let heads = cap.max(1).next_power_of_two();
        try_grow(&mut self.begins, heads, NIL, what)?;
        try_grow(&mut self.nexts, cap, NIL, what)?;
        try_grow(&mut self.ids, cap, 0, what)?;
        try_grow(&mut self.vals, cap, T::default(), what)?;
        Ok(())
    }

    /// Clears the previous row (only the heads it used) and sizes the hash for `bound`.
    #[inline]
    fn reset(&mut self, bound: usize) {
        for e in 0..self.used {
            self.begins[self.ids[e] & self.mask] = NIL;
        }
        self.used = 0;
        // Begins is a power of two (or empty when this level was never needed).
        let heads = bound.max(16).next_power_of_two();
        self.mask = heads.min(self.begins.len()).max(1) - 1;
    }

    /// Finds `c`; returns its entry number.
    #[inline(always)]
    fn find(&self, c: usize) -> Option<usize> {
        let mut e = self.begins[c & self.mask];
        while e != NIL {
            let eu = e as usize;
            if self.ids[eu] == c {
                return Some(eu);
            }
            e = self.nexts[eu];
        }
        None
    }

    /// Appends `c` (known absent) if there is room.
    #[inline(always)]
    fn push(&mut self, c: usize, v: T) -> bool {
        let n = self.used;
        if n >= self.ids.len() {
            return false;
        }
        let h = c & self.mask;
        self.ids[n] = c;
        self.vals[n] = v;
        self.nexts[n] = self.begins[h];
        self.begins[h] = n as u32;
        self.used = n + 1;
        true
    }

    /// Adds `v` into `c` with `merge`, inserting it when absent. False if `c` is absent
    /// and this level is full.
    #[inline(always)]
    fn upsert(&mut self, c: usize, v: T, merge: impl FnOnce(&mut T, T)) -> bool {
        match self.find(c) {
            Some(e) => {
                merge(&mut self.vals[e], v);
                true
            }
            None => self.push(c, v),
        }
    }
}

/// Two-level linked-list hash map (KKMEM). Level 1 holds the first [`L1_ENTRIES`]
/// distinct columns of a row; level 2, from the thread's pool chunk and sized by the
/// largest row, is used only when level 1 is full. `T` is the per-column payload: a
/// value in the numeric phase, a bit set in the symbolic phase.
pub struct TwoLevelChains<T> {
    l1: Chains<T>,
    l2: Chains<T>,
    /// A key of this row found no room (see [`TwoLevelChains::upsert`]).
    overflow: bool,
}

impl<T: Copy + Default> Default for TwoLevelChains<T> {
    fn default() -> Self {
        TwoLevelChains {
            l1: Chains::default(),
            l2: Chains::default(),
            overflow: false,
        }
    }
}

impl<T: Copy + Default> TwoLevelChains<T> {
    /// Sizes level 2 for rows of up to `max_row` distinct keys (nothing when level 1
    /// suffices).
    /// Bytes [`TwoLevelChains::prepare`] allocates for `max_row` (kept in step with it).
    pub fn bytes(max_row: usize) -> u64 {
        let l2 = if max_row > L1_ENTRIES {
            Chains::<T>::bytes(max_row - L1_ENTRIES)
        } else {
            0
        };
        Chains::<T>::bytes(L1_ENTRIES).saturating_add(l2)
    }

    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.l1.prepare(L1_ENTRIES, "KKMEM level-1 scratch")?;
        if max_row > L1_ENTRIES {
            self.l2
                .prepare(max_row - L1_ENTRIES, "KKMEM level-2 hash map")?;
        }
        Ok(())
    }

    #[inline]
    pub fn begin_row(&mut self, bound: usize) {
        self.l1.reset(bound.min(L1_ENTRIES));
        if self.l2.used > 0 || bound > L1_ENTRIES {
            self.l2.reset(bound.saturating_sub(L1_ENTRIES));
        }
        self.overflow = false;
    }

    /// Adds `v` into key `c` with `merge`, inserting it when absent. A key that finds both
    /// levels full (or level 2 never prepared) is dropped and the row marked overflowed:
    /// the row is longer than its bound, which only a changed structure makes happen.
    #[inline(always)]
    pub fn upsert(&mut self, c: usize, v: T, merge: impl Fn(&mut T, T)) {
        if self.l1.upsert(c, v, &merge) {
            return;
        }
        // Level 1 is full: the key lives in (or goes to) level 2.
        if self.l2.begins.is_empty() || !self.l2.upsert(c, v, &merge) {
            self.overflow = true;
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.l1.used + self.l2.used
    }

    #[inline]
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Keys and payloads in first-touch order.
    #[inline]
    pub fn items(&self) -> impl Iterator<Item = (usize, T)> + '_ {
        let l1 = (0..self.l1.used).map(|e| (self.l1.ids[e], self.l1.vals[e]));
        let l2 = (0..self.l2.used).map(|e| (self.l2.ids[e], self.l2.vals[e]));
        l1.chain(l2)
    }
}

/// KKMEM numeric accumulator.
pub struct LinkedAcc<V> {
    map: TwoLevelChains<V>,
    pairs: Vec<(usize, V)>,
}

impl<V: Scalar> Default for LinkedAcc<V> {
    fn default() -> Self {
        LinkedAcc {
            map: TwoLevelChains::default(),
            pairs: Vec::new(),
        }
    }
}

impl<V: Scalar> LinkedAcc<V> {
    /// Bytes [`LinkedAcc::prepare`] allocates for rows of `max_row` entries.
    pub fn bytes(max_row: usize) -> u64 {
        TwoLevelChains::<V>::bytes(max_row).saturating_add(bytes_of::<(usize, V)>(max_row))
    }

    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.map.prepare(max_row)?;
        if self.pairs.capacity() < max_row {
            try_reserve(&mut self.pairs, max_row, "KKMEM sort buffer")?;
        }
        Ok(())
    }
}

impl<V: Scalar> Accumulator<V> for LinkedAcc<V> {
    #[inline]
    fn begin_row(&mut self, bound: usize) {
        self.map.begin_row(bound);
    }
    #[inline(always)]
    fn insert_pattern(&mut self, c: usize) {
        self.map.upsert(c, V::ZERO, |_, _| {});
    }
    #[inline(always)]
    fn insert(&mut self, c: usize, v: V) {
        self.map.upsert(c, v, |x, v| *x += v);
    }
    #[inline]
    fn len(&self) -> usize {
        self.map.len()
    }
    #[inline]
    fn overflowed(&self) -> bool {
        self.map.overflowed()
    }
    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>) {
        if sorted {
            emit_pairs_sorted(&mut self.pairs, self.map.items(), base, cols, vals);
            return;
        }
        match vals {
            Some(vals) => {
                for ((dc, dv), (c, v)) in cols.iter_mut().zip(vals.iter_mut()).zip(self.map.items())
                {
                    *dc = to_j(c, base);
                    *dv = v;
                }
            }
            None => {
                for (dc, (c, _)) in cols.iter_mut().zip(self.map.items()) {
                    *dc = to_j(c, base);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// KKLP

const EMPTY: usize = usize::MAX;

/// One open-addressing level with linear probing; `order` lists used slots in
/// first-touch order.
struct Probing<T> {
    keys: Vec<usize>,
    vals: Vec<T>,
    order: Vec<u32>,
    mask: usize,
    shift: u32,
}

impl<T: Copy + Default> Default for Probing<T> {
    fn default() -> Self {
        Probing {
            keys: Vec::new(),
            vals: Vec::new(),
            order: Vec::new(),
            mask: 0,
            shift: 64,
        }
    }
}

/// Table size for at most `bound` keys at 50% maximum occupancy.
#[inline]
fn table_size(bound: usize) -> usize {
    (2 * bound.max(8)).next_power_of_two()
}

impl<T: Copy + Default> Probing<T> {
    /// Bytes [`Probing::prepare`] allocates for `max_keys` keys (kept in step with it).
    fn bytes(max_keys: usize) -> u64 {
        let size = (2 * max_keys.clamp(8, usize::MAX / 4))
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX);
        bytes_of::<usize>(size)
            .saturating_add(bytes_of::<T>(size))
            .saturating_add(bytes_of::<u32>(size / 2))
    }

    fn prepare(&mut self, max_keys: usize, what: &str) -> Result<()> {
        let size = table_size(max_keys);
        try_grow(&mut self.keys, size, EMPTY, what)?;
        try_grow(&mut self.vals, size, T::default(), what)?;
        if self.order.capacity() < size / 2 {
            try_reserve(&mut self.order, size / 2, what)?;
        }
        Ok(())
    }

    #[inline]
    fn reset(&mut self, bound: usize) {
        for &s in &self.order {
            self.keys[s as usize] = EMPTY;
        }
        self.order.clear();
        let size = table_size(bound).min(self.keys.len()).max(1);
        self.mask = size - 1;
        self.shift = 64 - size.trailing_zeros();
    }

    /// The 50% cut-off: no insertion once half the slots are used.
    #[inline(always)]
    fn full(&self) -> bool {
        2 * self.order.len() > self.mask
    }

    #[inline(always)]
    fn upsert(&mut self, c: usize, v: T, merge: impl FnOnce(&mut T, T)) -> bool {
        // Fibonacci hashing: spreads strided column patterns that `c & mask` would pile up.
        let mut s =
            ((c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize & self.mask;
        loop {
            let k = self.keys[s];
            if k == c {
                merge(&mut self.vals[s], v);
                return true;
            }
            if k == EMPTY {
                if self.full() {
                    return false;
                }
                self.keys[s] = c;
                self.vals[s] = v;
                self.order.push(s as u32);
                return true;
            }
            s = (s + 1) & self.mask;
        }
    }

    #[inline]
    fn items(&self) -> impl Iterator<Item = (usize, T)> + '_ {
        self.order
            .iter()
            .map(|&s| (self.keys[s as usize], self.vals[s as usize]))
    }
}

/// Two-level linear probing (KKLP): level 1 of `2 * L1_ENTRIES` slots in per-thread
/// scratch, level 2 from the pool chunk; each level stops taking keys at 50% occupancy
/// so probing stays short and always ends at an empty slot.
pub struct TwoLevelProbing<T> {
    l1: Probing<T>,
    l2: Probing<T>,
    /// A key of this row found no room (see [`TwoLevelProbing::upsert`]).
    overflow: bool,
}

impl<T: Copy + Default> Default for TwoLevelProbing<T> {
    fn default() -> Self {
        TwoLevelProbing {
            l1: Probing::default(),
            l2: Probing::default(),
            overflow: false,
        }
    }
}

impl<T: Copy + Default> TwoLevelProbing<T> {
    /// Bytes [`TwoLevelProbing::prepare`] allocates for `max_row` (kept in step with it).
    pub fn bytes(max_row: usize) -> u64 {
        let l2 = if max_row > L1_ENTRIES {
            Probing::<T>::bytes(max_row)
        } else {
            0
        };
        Probing::<T>::bytes(L1_ENTRIES).saturating_add(l2)
    }

    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.l1.prepare(L1_ENTRIES, "KKLP level-1 scratch")?;
        if max_row > L1_ENTRIES {
            self.l2.prepare(max_row, "KKLP level-2 table")?;
        }
        Ok(())
    }

    #[inline]
    pub fn begin_row(&mut self, bound: usize) {
        self.l1.reset(bound.min(L1_ENTRIES));
        if !self.l2.order.is_empty() || bound > L1_ENTRIES {
            self.l2.reset(bound);
        }
        self.overflow = false;
    }

    /// Adds `v` into key `c` with `merge`, inserting it when absent. A key that finds both
    /// levels at their 50% cut-off, or level 2 not sized (never prepared, or not reset
    /// since: mask 0, where probing would never end), is dropped and the row marked
    /// overflowed: the row is longer than its bound, which only a changed structure makes
    /// happen.
    #[inline(always)]
    pub fn upsert(&mut self, c: usize, v: T, merge: impl Fn(&mut T, T)) {
        if self.l1.upsert(c, v, &merge) {
            return;
        }
        if self.l2.mask == 0 || !self.l2.upsert(c, v, &merge) {
            self.overflow = true;
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.l1.order.len() + self.l2.order.len()
    }

    #[inline]
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    #[inline]
    pub fn items(&self) -> impl Iterator<Item = (usize, T)> + '_ {
        self.l1.items().chain(self.l2.items())
    }
}

/// KKLP numeric accumulator.
pub struct ProbeAcc<V> {
    map: TwoLevelProbing<V>,
    pairs: Vec<(usize, V)>,
}

impl<V: Scalar> Default for ProbeAcc<V> {
    fn default() -> Self {
        ProbeAcc {
            map: TwoLevelProbing::default(),
            pairs: Vec::new(),
        }
    }
}

impl<V: Scalar> ProbeAcc<V> {
    /// Bytes [`ProbeAcc::prepare`] allocates for rows of `max_row` entries.
    pub fn bytes(max_row: usize) -> u64 {
        TwoLevelProbing::<V>::bytes(max_row).saturating_add(bytes_of::<(usize, V)>(max_row))
    }

    pub fn prepare(&mut self, max_row: usize) -> Result<()> {
        self.map.prepare(max_row)?;
        if self.pairs.capacity() < max_row {
            try_reserve(&mut self.pairs, max_row, "KKLP sort buffer")?;
        }
        Ok(())
    }
}

impl<V: Scalar> Accumulator<V> for ProbeAcc<V> {
    #[inline]
    fn begin_row(&mut self, bound: usize) {
        self.map.begin_row(bound);
    }
    #[inline(always)]
    fn insert_pattern(&mut self, c: usize) {
        self.map.upsert(c, V::ZERO, |_, _| {});
    }
    #[inline(always)]
    fn insert(&mut self, c: usize, v: V) {
        self.map.upsert(c, v, |x, v| *x += v);
    }
    #[inline]
    fn len(&self) -> usize {
        self.map.len()
    }
    #[inline]
    fn overflowed(&self) -> bool {
        self.map.overflowed()
    }
    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>) {
        if sorted {
            emit_pairs_sorted(&mut self.pairs, self.map.items(), base, cols, vals);
            return;
        }
        match vals {
            Some(vals) => {
                for ((dc, dv), (c, v)) in cols.iter_mut().zip(vals.iter_mut()).zip(self.map.items())
                {
                    *dc = to_j(c, base);
                    *dv = v;
                }
            }
            None => {
                for (dc, (c, _)) in cols.iter_mut().zip(self.map.items()) {
                    *dc = to_j(c, base);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap<T>(v: &Vec<T>) -> u64 {
        bytes_of::<T>(v.capacity())
    }
    fn chains<T>(c: &Chains<T>) -> u64 {
        cap(&c.begins) + cap(&c.nexts) + cap(&c.ids) + cap(&c.vals)
    }
    fn probing<T>(p: &Probing<T>) -> u64 {
        cap(&p.keys) + cap(&p.vals) + cap(&p.order)
    }

    /// The memory-limit estimates equal what `prepare` allocates from empty (the limit
    /// relies on them: an estimate below the real size would let a call pass the limit).
    #[test]
    fn byte_estimates_match_prepare() {
        for max_row in [0usize, 1, 9, L1_ENTRIES, L1_ENTRIES + 1, 5000] {
            let mut l = LinkedAcc::<f64>::default();
            l.prepare(max_row).unwrap();
            let held = chains(&l.map.l1) + chains(&l.map.l2) + cap(&l.pairs);
            assert_eq!(held, LinkedAcc::<f64>::bytes(max_row), "KKMEM {max_row}");
            let mut p = ProbeAcc::<f32>::default();
            p.prepare(max_row).unwrap();
            let held = probing(&p.map.l1) + probing(&p.map.l2) + cap(&p.pairs);
            assert_eq!(held, ProbeAcc::<f32>::bytes(max_row), "KKLP {max_row}");
        }
    }

    /// Feeds the same column stream to every accumulator, with rows both below and above
    /// the level-1 capacity, and checks order, values and sorted output agree.
    #[test]
    fn accumulators_agree_across_levels() {
        let k = 5000;
        for &distinct in &[
            0usize,
            1,
            7,
            L1_ENTRIES - 1,
            L1_ENTRIES,
            L1_ENTRIES + 1,
            3000,
        ] {
            let stream: Vec<(usize, f64)> = (0..3 * distinct)
                .map(|t| (((t * 7919) % distinct.max(1)) * 13 % k, t as f64 * 0.5))
                .collect();
            let mut l = LinkedAcc::<f64>::default();
            l.prepare(3000).unwrap();
            let mut p = ProbeAcc::<f64>::default();
            p.prepare(3000).unwrap();
            for sorted in [false, true] {
                // Twice, so the second row runs on reused (reset) state.
                for _ in 0..2 {
                    let r1 = row(&mut l, &stream, sorted);
                    let r3 = row(&mut p, &stream, sorted);
                    assert_eq!(r1, r3);
                    let mut want: Vec<i64> = stream.iter().map(|&(c, _)| c as i64).collect();
                    want.sort_unstable();
                    want.dedup();
                    assert_eq!(r1.0.len(), want.len());
                    if sorted {
                        assert_eq!(r1.0, want);
                    }
                }
            }
        }
    }

    /// A row with more distinct columns than its bound (a structure changed since the
    /// plan) is marked overflowed, never written past, whether level 2 was prepared or
    /// not; the next row starts clean and is exact.
    #[test]
    fn rows_longer_than_their_bound_overflow() {
        fn check<A: Accumulator<f64>>(acc: &mut A, max_row: usize, what: &str) {
            for (bound, distinct) in [(0, 9), (1, 600), (3, 20), (L1_ENTRIES + 10, 2000)] {
                if bound > max_row.max(L1_ENTRIES) {
                    continue;
                }
                acc.begin_row(bound);
                for c in 0..distinct {
                    acc.insert(c * 3, 1.0);
                    acc.insert(c * 3, 1.0);
                }
                // KKMEM's level 1 takes L1_ENTRIES keys whatever the bound: short rows
                // that grow stay exact there.
                let exact = !acc.overflowed() && acc.len() == distinct;
                assert!(
                    exact || acc.overflowed(),
                    "{what}: bound {bound}, {distinct}"
                );
                if distinct > L1_ENTRIES + max_row {
                    assert!(acc.overflowed(), "{what}: bound {bound}, {distinct}");
                }
                let stream: Vec<(usize, f64)> = (0..bound).map(|c| (c, 0.5)).collect();
                let (cols, vals) = row(acc, &stream, true);
                assert!(!acc.overflowed(), "{what}: bound {bound}");
                assert_eq!(cols, (0..bound as i64).collect::<Vec<_>>(), "{what}");
                assert!(vals.iter().all(|&v| v == 0.5), "{what}");
            }
        }
        for max_row in [0, 8, L1_ENTRIES + 10] {
            let mut l = LinkedAcc::<f64>::default();
            l.prepare(max_row).unwrap();
            check(&mut l, max_row, &format!("KKMEM prepared for {max_row}"));
            let mut p = ProbeAcc::<f64>::default();
            p.prepare(max_row).unwrap();
            check(&mut p, max_row, &format!("KKLP prepared for {max_row}"));
        }
    }

    fn row<A: Accumulator<f64>>(
        acc: &mut A,
        stream: &[(usize, f64)],
        sorted: bool,
    ) -> (Vec<i64>, Vec<f64>) {
        acc.begin_row(stream.len());
        for &(c, v) in stream {
            acc.insert(c, v);
        }
        let n = acc.len();
        let mut cols = vec![0i64; n];
        let mut vals = vec![0f64; n];
        acc.emit(sorted, 0, &mut cols, Some(&mut vals));
        (cols, vals)
    }
}
