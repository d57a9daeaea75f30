//! Row accumulators for Gustavson's algorithm. Both keep the columns of the current row in
//! first-touch order, so the unsorted output order and every value (products summed in the
//! order A's row and B's rows are traversed) are the same for every accumulator and every
//! thread count.

use crate::alloc::try_grow;
use crate::cpu::sort::{sort_keys, sort_pairs};
use crate::error::Result;
use crate::types::{Idx, Scalar};

/// What the symbolic and numeric kernels need from an accumulator.
pub trait Accumulator<V: Scalar> {
    /// Starts a new row whose number of distinct columns is at most `bound`.
    fn begin_row(&mut self, bound: usize);
    /// Records column `c` (structure only).
    fn insert_pattern(&mut self, c: usize);
    /// Adds `v` to column `c`.
    fn insert(&mut self, c: usize, v: V);
    /// Distinct columns in the current row.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes the row's columns (plus `base`) and, if asked, values; sorted by column if
    /// `sorted`. `cols` (and `vals`) have exactly `len()` entries.
    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>);
}

/// Dense accumulator (KKDENSE): a value and a marker per column of C.
/// O(k) memory per thread; no hashing, no collisions.
pub struct DenseAcc<V> {
    marker: Vec<u32>,
    stamp: u32,
    vals: Vec<V>,
    touched: Vec<u32>,
}

impl<V: Scalar> Default for DenseAcc<V> {
    fn default() -> Self {
        DenseAcc {
            marker: Vec::new(),
            stamp: 0,
            vals: Vec::new(),
            touched: Vec::new(),
        }
    }
}

impl<V: Scalar> DenseAcc<V> {
    /// Sizes the buffers for `k` columns and rows of up to `max_row` distinct columns.
    /// Requires `k <= u32::MAX` (checked by the selector).
    pub fn prepare(&mut self, k: usize, max_row: usize, with_values: bool) -> Result<()> {
        try_grow(&mut self.marker, k, 0, "dense accumulator markers")?;
        if with_values {
            try_grow(&mut self.vals, k, V::ZERO, "dense accumulator values")?;
        }
        let want = max_row.min(k);
        if self.touched.capacity() < want {
            self.touched.clear();
            crate::alloc::try_reserve(&mut self.touched, want, "dense accumulator row list")?;
        }
        Ok(())
    }
}

impl<V: Scalar> Accumulator<V> for DenseAcc<V> {
    #[inline]
    fn begin_row(&mut self, _bound: usize) {
        self.touched.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // After 2^32 rows the stamps wrap: forget every old mark once.
            self.marker.fill(0);
            self.stamp = 1;
        }
    }

    #[inline(always)]
    fn insert_pattern(&mut self, c: usize) {
        let m = &mut self.marker[c];
        if *m != self.stamp {
            *m = self.stamp;
            self.touched.push(c as u32);
        }
    }

    #[inline(always)]
    fn insert(&mut self, c: usize, v: V) {
        let m = &mut self.marker[c];
        if *m != self.stamp {
            *m = self.stamp;
            self.vals[c] = v;
            self.touched.push(c as u32);
        } else {
            self.vals[c] += v;
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.touched.len()
    }

    #[inline]
    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>) {
        if sorted {
            sort_keys(&mut self.touched);
        }
        for (dst, &c) in cols.iter_mut().zip(&self.touched) {
            *dst = J::try_from_usize(c as usize + base).expect("column checked at symbolic time");
        }
        if let Some(vals) = vals {
            for (dst, &c) in vals.iter_mut().zip(&self.touched) {
                *dst = self.vals[c as usize];
            }
        }
    }
}

const EMPTY: usize = usize::MAX;

/// Open-addressing hash accumulator with linear probing (KKLP), sized per row so the
/// table is at most half full. Memory O(max row size) per thread, independent of k.
pub struct HashAcc<V> {
    keys: Vec<usize>,
    vals: Vec<V>,
    /// Slots in first-touch order.
    order: Vec<u32>,
    mask: usize,
    shift: u32,
    pairs: Vec<(usize, V)>,
}

impl<V: Scalar> Default for HashAcc<V> {
    fn default() -> Self {
        HashAcc {
            keys: Vec::new(),
            vals: Vec::new(),
            order: Vec::new(),
            mask: 0,
            shift: 0,
            pairs: Vec::new(),
        }
    }
}

/// Table size for a row of at most `bound` distinct columns: a power of two >= 2*bound.
#[inline]
fn table_size(bound: usize) -> usize {
    (2 * bound.max(8)).next_power_of_two()
}

impl<V: Scalar> HashAcc<V> {
    /// Sizes the table for rows of up to `max_row` distinct columns.
    pub fn prepare(&mut self, max_row: usize, with_values: bool) -> Result<()> {
        let size = table_size(max_row);
        try_grow(&mut self.keys, size, EMPTY, "hash accumulator keys")?;
        if with_values {
            try_grow(&mut self.vals, size, V::ZERO, "hash accumulator values")?;
            if self.pairs.capacity() < max_row {
                crate::alloc::try_reserve(
                    &mut self.pairs,
                    max_row,
                    "hash accumulator sort buffer",
                )?;
            }
        }
        if self.order.capacity() < max_row {
            crate::alloc::try_reserve(&mut self.order, max_row, "hash accumulator row list")?;
        }
        Ok(())
    }

    #[inline(always)]
    fn slot_of(&self, c: usize) -> usize {
        // Fibonacci hashing: spreads strided column patterns that `c & mask` would pile up.
        ((c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize & self.mask
    }

    /// Finds `c`'s slot, inserting it if new; returns (slot, inserted).
    #[inline(always)]
    fn probe(&mut self, c: usize) -> (usize, bool) {
        let mut s = self.slot_of(c);
        loop {
            let k = self.keys[s];
            if k == c {
                return (s, false);
            }
            if k == EMPTY {
                // Keep one slot empty so probing always ends; only a changed structure
                // with validation off can get here.
                assert!(
                    self.order.len() < self.mask,
                    "hash accumulator row exceeds the bound it was sized for"
                );
                self.keys[s] = c;
                self.order.push(s as u32);
                return (s, true);
            }
            s = (s + 1) & self.mask;
        }
    }
}

impl<V: Scalar> Accumulator<V> for HashAcc<V> {
    #[inline]
    fn begin_row(&mut self, bound: usize) {
        for &s in &self.order {
            self.keys[s as usize] = EMPTY;
        }
        self.order.clear();
        let size = table_size(bound).min(self.keys.len());
        self.mask = size - 1;
        self.shift = 64 - size.trailing_zeros();
    }

    #[inline(always)]
    fn insert_pattern(&mut self, c: usize) {
        self.probe(c);
    }

    #[inline(always)]
    fn insert(&mut self, c: usize, v: V) {
        let (s, new) = self.probe(c);
        if new {
            self.vals[s] = v;
        } else {
            self.vals[s] += v;
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.order.len()
    }

    fn emit<J: Idx>(&mut self, sorted: bool, base: usize, cols: &mut [J], vals: Option<&mut [V]>) {
        let to_j = |c: usize| J::try_from_usize(c + base).expect("column checked at symbolic time");
        match vals {
            None => {
                if sorted {
                    for (dst, &s) in cols.iter_mut().zip(&self.order) {
                        *dst = to_j(self.keys[s as usize]);
                    }
                    cols.sort_unstable_by(|x, y| x.partial_cmp(y).expect("integers"));
                } else {
                    for (dst, &s) in cols.iter_mut().zip(&self.order) {
                        *dst = to_j(self.keys[s as usize]);
                    }
                }
            }
            Some(vals) => {
                if sorted {
                    self.pairs.clear();
                    for &s in &self.order {
                        self.pairs
                            .push((self.keys[s as usize], self.vals[s as usize]));
                    }
                    sort_pairs(&mut self.pairs);
                    for ((dc, dv), &(c, v)) in cols.iter_mut().zip(vals.iter_mut()).zip(&self.pairs)
                    {
                        *dc = to_j(c);
                        *dv = v;
                    }
                } else {
                    for ((dc, dv), &s) in cols.iter_mut().zip(vals.iter_mut()).zip(&self.order) {
                        *dc = to_j(self.keys[s as usize]);
                        *dv = self.vals[s as usize];
                    }
                }
            }
        }
    }
}
