//! Slot maps for the replay: a byte per product of a chunk, the place of the product's
//! column in its row of C (rows of at most [`MAX_ROW`] entries). A replay sums each row
//! through the map straight into C's row: it reads neither B's columns nor C's (but for
//! their digest), and has no dense array to gather from and reset.
//!
//! Built once, by the first replay of a plan from its third numeric call on (the dense
//! replay then also writes each product's slot), within the memory a plan may keep
//! ([`crate::cpu::record::budget_bytes`]); used by every later replay whose chunk still
//! has its columns' digest. The sums are formed in the dense replay's order from -0.0, so
//! C's values are bitwise the same (measurements: docs/DESIGN-NOTES.md, cpu::slot_map).

use crate::common::csr::CsrRef;
use crate::cpu::replay_parts::{ColDigest, sum_row, take};
use crate::types::{Idx, Scalar};

/// Longest row of C a slot (one byte) can address.
pub(crate) const MAX_ROW: usize = 256;

/// Rows of B shorter than this on average over A's entries (multiplications / nnz(A)) take
/// the short-row form of the mapped replay ([`Form::Short`]), and get no maps where this
/// machine lacks it: there the product-by-product loop was slower than the dense replay
/// (corpus A/B: docs/DESIGN-NOTES.md, cpu::slot_map).
pub(crate) const MIN_B_ROW: u64 = 8;

/// Over rows of B shorter than [`MIN_B_ROW`], maps only for products with fewer than this
/// many multiplications per entry of C: where more products share an entry the short form
/// was slower than the dense replay (corpus A/B: docs/DESIGN-NOTES.md, cpu::slot_map).
pub(crate) const SHORT_MAX_SHARE: u64 = 4;

/// The slot maps of a plan's chunks (None: the chunk replays through the dense array: a
/// row longer than [`MAX_ROW`], no memory for it, or its columns changed while it was
/// built).
#[derive(Debug, Default)]
pub struct SlotMaps {
    pub(crate) chunks: Vec<Option<Vec<u8>>>,
}

impl SlotMaps {
    /// Bytes the maps hold.
    pub fn bytes(&self) -> usize {
        self.chunks.iter().flatten().map(Vec::capacity).sum()
    }

    /// Chunks with a map.
    pub fn mapped(&self) -> usize {
        self.chunks.iter().flatten().count()
    }

    /// The map of chunk `c`, if it has one.
    pub fn chunk(&self, c: usize) -> Option<&[u8]> {
        self.chunks.get(c)?.as_deref()
    }
}

/// Whether every row of `rows` of C (offsets `row_ptr`) fits a slot map.
pub fn rows_fit(row_ptr: &[usize], rows: std::ops::Range<usize>) -> bool {
    rows.into_iter()
        .all(|i| row_ptr[i + 1] - row_ptr[i] <= MAX_ROW)
}

/// Products of rows `rows` of A*B (the map's length), None on overflow.
pub fn products<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: std::ops::Range<usize>,
) -> Option<usize> {
    let mut f = 0usize;
    for i in rows {
        for &j in a.row_cols(i) {
            f = f.checked_add(b.row_len(a.col_of(j)))?;
        }
    }
    Some(f)
}

/// The dense replay of rows `rows` (as `gustavson::replay_rows`, plain stores, no
/// prefetch) that also appends each product's slot to `map` (reserved for all of them);
/// `pos` (k bytes) is scratch. Returns whether `cols` had the digest `want` and only
/// columns of C; if not, `dense` must be reset and `map` is garbage.
#[allow(clippy::too_many_arguments)]
pub fn replay_building<V: Scalar, O: Idx, I: Idx, J: Idx>(
    (dense, pos): (&mut [V], &mut [u8]),
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    rows: std::ops::Range<usize>,
    (row_ptr, c_base): (&[usize], usize),
    cols: &[J],
    vals: &mut [V],
    (map, want): (&mut Vec<u8>, u64),
) -> bool {
    let neg0 = V::NEG_ZERO;
    let off0 = row_ptr[rows.start];
    let bb = b.base();
    let mut digest = ColDigest::at(off0);
    let mut ok = true;
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        let row = &cols[s..e];
        ok &= row.len() <= MAX_ROW;
        sum_row::<V, O, I, false>(dense, (a, b), (av, bv), i);
        for (t, (out, &c)) in vals[s..e].iter_mut().zip(row).enumerate() {
            let c = c.to_usize().wrapping_sub(c_base);
            match (dense.get_mut(c), pos.get_mut(c)) {
                (Some(slot), Some(p)) => {
                    take::<V, false>(out, slot, neg0);
                    *p = t as u8;
                }
                _ => ok = false,
            }
        }
        // Every product's column is one of the row's (when the digest holds), whose
        // places were just written; a place beyond the row would leave a stale sum in the
        // mapped replay's buffer, so it rejects the map.
        for &j in a.row_cols(i) {
            for &c in b.row_cols(a.col_of(j)) {
                let t = pos
                    .get(c.to_usize().wrapping_sub(bb))
                    .copied()
                    .unwrap_or(u8::MAX);
                ok &= (t as usize) < row.len();
                map.push(t);
            }
        }
        digest.extend(row);
    }
    ok && digest.sum == want
}

/// The replay of rows `rows` through their slot map `map` (built by [`replay_building`]
/// for these rows, with A's and B's structure the plan's: checked by the caller): C's
/// values into `vals`. Returns whether `cols` still has the digest `want` and the map
/// matched the products; if not, the values written are garbage. A chunk whose rows of B
/// average under [`MIN_B_ROW`] entries per entry of A, with under [`SHORT_MAX_SHARE`]
/// products per entry of C, goes through the short-row form where this machine has it
/// ([`short_form`]); the same sums, the same bits.
#[allow(clippy::too_many_arguments)]
pub fn replay_mapped<V: Scalar, O: Idx, I: Idx, J: Idx>(
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    rows: std::ops::Range<usize>,
    row_ptr: &[usize],
    cols: &[J],
    vals: &mut [V],
    (map, want): (&[u8], u64),
) -> bool {
    // The plan's rule (`cpu::spgemm::numeric`) on the chunk: short rows of B, few products
    // per entry of C.
    let entries = a.row_start(rows.end).wrapping_sub(a.row_start(rows.start)) as u64;
    let c_entries = (row_ptr[rows.end] - row_ptr[rows.start]) as u64;
    let f = map.len() as u64;
    let short =
        f < MIN_B_ROW.saturating_mul(entries) && f < SHORT_MAX_SHARE.saturating_mul(c_entries);
    let form = if short && short_form::<V>() {
        Form::Short
    } else {
        Form::Long
    };
    replay_mapped_as(
        form,
        (a, b),
        (av, bv),
        rows,
        row_ptr,
        cols,
        vals,
        (map, want),
    )
}

/// The two loops of the mapped replay (same sums in the same order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Form {
    /// Each product added through its slot as it is formed, row of B by row of B.
    Long,
    /// Per entry of A, the products of its row of B formed in one masked vector multiply
    /// (rows of up to 8 entries take no loop branch) into a buffer, then one loop over the
    /// row's products adds them through their slots: one loop exit per row of C instead of
    /// one per entry of A, the misprediction that short rows of B pay (C model:
    /// docs/DESIGN-NOTES.md, cpu::slot_map).
    Short,
}

/// Whether the short-row form runs for values `V` on this machine (AVX-512, real values).
pub fn short_form<V: Scalar>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::platform::isa::Isa;
        lanes_of::<V>().is_some() && Isa::detect() == Isa::Avx512
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The vector type of `V` for the short form: f64 (8 lanes) or f32 (8 lanes).
#[derive(Clone, Copy, PartialEq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
enum Lanes {
    F64,
    F32,
}

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn lanes_of<V: Scalar>() -> Option<Lanes> {
    use std::any::TypeId;
    let id = TypeId::of::<V>();
    if id == TypeId::of::<f64>() {
        Some(Lanes::F64)
    } else if id == TypeId::of::<f32>() {
        Some(Lanes::F32)
    } else {
        None
    }
}

/// [`replay_mapped`] in the form `form` (the short form falls back to the long one where
/// [`short_form`] is false).
#[allow(clippy::too_many_arguments)]
pub(crate) fn replay_mapped_as<V: Scalar, O: Idx, I: Idx, J: Idx>(
    form: Form,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    rows: std::ops::Range<usize>,
    row_ptr: &[usize],
    cols: &[J],
    vals: &mut [V],
    (map, want): (&[u8], u64),
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if form == Form::Short && short_form::<V>() {
        // SAFETY: AVX-512F/VL present and V is f32 or f64 (`short_form`).
        return unsafe { replay_short((a, b), (av, bv), rows, row_ptr, cols, vals, (map, want)) };
    }
    let neg0 = V::NEG_ZERO;
    let off0 = row_ptr[rows.start];
    let mut digest = ColDigest::at(off0);
    let mut at = 0usize;
    let mut ok = true;
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        clear_row(vals, s, e, neg0);
        let out = &mut vals[s..e];
        let (a_cols, a_vals) = a.row_entries(i, av);
        for (&j, &aij) in a_cols.iter().zip(a_vals) {
            let (_, b_vals) = b.row_entries(a.col_of(j), bv);
            let Some(slots) = map.get(at..at + b_vals.len()) else {
                return false;
            };
            at += b_vals.len();
            for (&t, &bq) in slots.iter().zip(b_vals) {
                // The map's places are below their row's length (checked when it was
                // built): the branch is never taken.
                match out.get_mut(t as usize) {
                    Some(x) => *x += aij * bq,
                    None => ok = false,
                }
            }
        }
        digest.extend(&cols[s..e]);
    }
    ok && at == map.len() && digest.sum == want
}

/// C's row `vals[s..e]` set to -0.0 before its sums: in whole blocks of 8 (fixed-size
/// stores instead of a memset call per row of a few entries); a block past the row's end
/// clears the next rows' first places, which their own clear overwrites again.
#[inline(always)]
fn clear_row<V: Scalar>(vals: &mut [V], s: usize, e: usize, neg0: V) {
    let end = (s + (e - s).next_multiple_of(8)).min(vals.len());
    let mut blocks = vals[s..end].chunks_exact_mut(8);
    for blk in &mut blocks {
        blk.copy_from_slice(&[neg0; 8]);
    }
    for x in blocks.into_remainder() {
        *x = neg0;
    }
}

/// Products buffered per flush of the short form (a row of C with more flushes in between).
const SHORT_BUF: usize = 512;

/// The short-row form of [`replay_mapped_as`].
///
/// # Safety
/// The CPU has AVX-512F and AVX-512VL, and `V` is f32 or f64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
// Stable since Rust 1.89, above the crate's rust-version (as in `cpu::spmm::avx512`).
#[allow(clippy::incompatible_msrv)]
#[allow(clippy::too_many_arguments)]
unsafe fn replay_short<V: Scalar, O: Idx, I: Idx, J: Idx>(
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    (av, bv): (&[V], &[V]),
    rows: std::ops::Range<usize>,
    row_ptr: &[usize],
    cols: &[J],
    vals: &mut [V],
    (map, want): (&[u8], u64),
) -> bool {
    let Some(lanes) = lanes_of::<V>() else {
        return false;
    };
    let neg0 = V::NEG_ZERO;
    let off0 = row_ptr[rows.start];
    let mut digest = ColDigest::at(off0);
    let mut at = 0usize;
    let mut ok = true;
    // 8 lanes past the last product: a block's full-width store.
    let mut buf = [neg0; SHORT_BUF + 8];
    // The buffered products through their slots, in order; false on a short map.
    let flush = |out: &mut [V], buf: &[V], at: &mut usize, ok: &mut bool| -> bool {
        let Some(slots) = map.get(*at..*at + buf.len()) else {
            return false;
        };
        *at += buf.len();
        for (&t, &p) in slots.iter().zip(buf) {
            // Places are below their row's length (checked when the map was built).
            match out.get_mut(t as usize) {
                Some(x) => *x += p,
                None => *ok = false,
            }
        }
        true
    };
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        clear_row(vals, s, e, neg0);
        let out = &mut vals[s..e];
        let (a_cols, a_vals) = a.row_entries(i, av);
        let mut f = 0usize;
        for (&j, &aij) in a_cols.iter().zip(a_vals) {
            let (_, b_vals) = b.row_entries(a.col_of(j), bv);
            let mut q = 0usize;
            loop {
                if f > SHORT_BUF {
                    if !flush(out, &buf[..f], &mut at, &mut ok) {
                        return false;
                    }
                    f = 0;
                }
                let n = (b_vals.len() - q).min(8);
                // SAFETY: lanes past `n` are masked (not read); q + n <= the row's
                // length; buf has 8 places from f (f <= SHORT_BUF).
                unsafe {
                    mul8(
                        lanes,
                        n,
                        aij,
                        b_vals.as_ptr().add(q),
                        buf.as_mut_ptr().add(f),
                    )
                };
                f += n;
                q += n;
                if q >= b_vals.len() {
                    break;
                }
            }
        }
        if !flush(out, &buf[..f], &mut at, &mut ok) {
            return false;
        }
        digest.extend(&cols[s..e]);
    }
    ok && at == map.len() && digest.sum == want
}

/// `dst[0..8]` = `aij` times `src[0..n]` (n <= 8; lanes from n on: zero, src not read there).
///
/// # Safety
/// AVX-512F/VL present; `V` is the type of `lanes`; src has n readable values, dst 8
/// writable places.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
#[allow(clippy::incompatible_msrv)]
#[inline]
unsafe fn mul8<V: Scalar>(lanes: Lanes, n: usize, aij: V, src: *const V, dst: *mut V) {
    use std::arch::x86_64::*;
    let k = ((1u32 << n) - 1) as u8;
    // SAFETY: forwarded contract (masked lanes are not accessed).
    unsafe {
        match lanes {
            Lanes::F64 => {
                let v = _mm512_maskz_loadu_pd(k, src.cast());
                let p = _mm512_mul_pd(_mm512_set1_pd(aij.to_f64()), v);
                _mm512_storeu_pd(dst.cast(), p);
            }
            Lanes::F32 => {
                // f32 -> f64 -> f32 is exact.
                let v = _mm256_maskz_loadu_ps(k, src.cast());
                let p = _mm256_mul_ps(_mm256_set1_ps(aij.to_f64() as f32), v);
                _mm256_storeu_ps(dst.cast(), p);
            }
        }
    }
}

/// C's columns of rows `rows` written into a fresh array `cols` through their slot map
/// (built for these rows, with A's and B's structure the plan's: checked by the caller):
/// each product's column of B goes to its place, so every entry of C gets the column it had
/// when the map was built, in the same order (what lets a plan drop its record of C's
/// columns once every chunk has a map). Returns whether the columns written have the
/// digest `want`; if not, they are garbage.
pub fn columns_mapped<O: Idx, I: Idx, V: Scalar, J: Idx>(
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    rows: std::ops::Range<usize>,
    (row_ptr, c_base): (&[usize], usize),
    cols: &mut [J],
    (map, want): (&[u8], u64),
) -> bool {
    let off0 = row_ptr[rows.start];
    let bb = b.base();
    let mut digest = ColDigest::at(off0);
    let mut at = 0usize;
    for i in rows {
        let out = &mut cols[row_ptr[i] - off0..row_ptr[i + 1] - off0];
        for &j in a.row_cols(i) {
            let b_cols = b.row_cols(a.col_of(j));
            let Some(slots) = map.get(at..at + b_cols.len()) else {
                return false;
            };
            at += b_cols.len();
            for (&t, &c) in slots.iter().zip(b_cols) {
                let c = J::try_from_usize(c.to_usize().wrapping_sub(bb).wrapping_add(c_base));
                match (out.get_mut(t as usize), c) {
                    (Some(x), Some(c)) => *x = c,
                    _ => return false,
                }
            }
        }
        digest.extend(out);
    }
    at == map.len() && digest.sum == want
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::replay_parts::rows_digest;

    /// Random products whose rows of B have 0 to 19 entries (one, two or three vector
    /// blocks, empty rows), rows of A long enough for several buffer flushes per row of C,
    /// duplicates, -0.0 and NaN, 0- and 1-based: both forms give the values of the map's
    /// build bitwise, f64 and f32; a short or long map and changed columns are reported.
    #[test]
    fn short_and_long_forms_match_bitwise() {
        fn run<V: Scalar>(seed: u64, base: usize, conv: fn(f64) -> V, bits: fn(V) -> u64) {
            let mut x = seed;
            let mut next = |n: usize| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) as usize) % n.max(1)
            };
            let (m, k, n) = (40usize, 60usize, 200usize);
            let lens: Vec<usize> = (0..k).map(|_| next(20)).collect();
            let mut csr = |rows: usize, cols: usize, len: &dyn Fn(usize) -> usize| {
                let (mut p, mut c, mut v) = (vec![base as i32], Vec::new(), Vec::new());
                for i in 0..rows {
                    for _ in 0..len(i) {
                        c.push((next(cols) + base) as i32);
                        v.push(match next(50) {
                            0 => -0.0,
                            1 => f64::NAN,
                            r => (r as f64 - 24.5) * 0.375,
                        });
                    }
                    p.push((c.len() + base) as i32);
                }
                (p, c, v)
            };
            let (bp, bc, bv) = csr(k, n, &|i| lens[i]);
            let (ap, ac, av) = csr(m, k, &|i| if i % 7 == 3 { 90 } else { i % 9 });
            let av: Vec<V> = av.into_iter().map(conv).collect();
            let bv: Vec<V> = bv.into_iter().map(conv).collect();
            let a = CsrRef::new(m, k, base, &ap, &ac, Some(&av)).unwrap();
            let b = CsrRef::new(k, n, base, &bp, &bc, Some(&bv)).unwrap();
            // C's rows in first-touch order (0-based columns).
            let (mut row_ptr, mut cols) = (vec![0usize], Vec::<i64>::new());
            for i in 0..m {
                let start = cols.len();
                for &j in a.row_cols(i) {
                    for &c in b.row_cols(a.col_of(j)) {
                        let c = (c as usize - base) as i64;
                        if !cols[start..].contains(&c) {
                            cols.push(c);
                        }
                    }
                }
                row_ptr.push(cols.len());
            }
            assert!(rows_fit(&row_ptr, 0..m));
            let want = rows_digest(&cols, &row_ptr, 0..m);
            let (mut dense, mut pos) = (vec![V::NEG_ZERO; n], vec![0u8; n]);
            let (mut built, mut map) = (vec![V::ONE; cols.len()], Vec::new());
            assert!(replay_building(
                (&mut dense, &mut pos),
                (&a, &b),
                (&av, &bv),
                0..m,
                (&row_ptr, 0),
                &cols,
                &mut built,
                (&mut map, want),
            ));
            let all = |v: &[V]| v.iter().map(|&x| bits(x)).collect::<Vec<_>>();
            for form in [Form::Long, Form::Short] {
                let replay = |map: &[u8], cols: &[i64], out: &mut [V]| {
                    replay_mapped_as(
                        form,
                        (&a, &b),
                        (&av, &bv),
                        0..m,
                        &row_ptr,
                        cols,
                        out,
                        (map, want),
                    )
                };
                let mut out = vec![V::ONE; cols.len()];
                assert!(replay(&map, &cols, &mut out), "{form:?}");
                assert_eq!(all(&out), all(&built), "{form:?} seed {seed}");
                assert!(!replay(&map[..map.len() - 1], &cols, &mut out));
                let mut longer = map.clone();
                longer.push(0);
                assert!(!replay(&longer, &cols, &mut out));
                let mut changed = cols.clone();
                changed[3] += 1;
                assert!(!replay(&map, &changed, &mut out));
            }
            // The dispatching entry takes the same values (short rows of B: the short form
            // where this machine has it).
            let mut out = vec![V::ONE; cols.len()];
            let r = replay_mapped(
                (&a, &b),
                (&av, &bv),
                0..m,
                &row_ptr,
                &cols,
                &mut out,
                (&map, want),
            );
            assert!(r);
            assert_eq!(all(&out), all(&built));
        }
        for seed in 1..6u64 {
            for base in [0, 1] {
                run::<f64>(seed, base, |v| v, f64::to_bits);
                run::<f32>(seed, base, |v| v as f32, |v| v.to_bits() as u64);
            }
        }
    }

    /// A 3 x 4 times 4 x 5 product with a duplicate column in a row of B: the map built by
    /// the dense replay gives the same values bitwise; a map one byte short or long, or
    /// changed columns, are reported and never read past.
    #[test]
    fn built_map_replays_bitwise_and_rejects_mismatches() {
        let (ap, ac) = (vec![0i32, 2, 2, 5], vec![0i32, 3, 1, 2, 3]);
        let av = vec![1.5, -2.0, 0.25, -0.0, 3.0];
        let (bp, bc) = (vec![0i32, 3, 4, 6, 8], vec![4i32, 0, 4, 2, 1, 3, 0, 2]);
        let bv = vec![1.0, 2.0, -1.0, 0.5, 4.0, -3.0, 8.0, 0.125];
        let a = CsrRef::new(3, 4, 0, &ap, &ac, Some(&av)).unwrap();
        let b = CsrRef::new(4, 5, 0, &bp, &bc, Some(&bv)).unwrap();
        // C's rows in first-touch order: row 0 = {4, 0, 2}, row 1 empty, row 2 = {2, 1, 3, 0}.
        let (row_ptr, cols) = (vec![0usize, 3, 3, 7], vec![4i32, 0, 2, 2, 1, 3, 0]);
        let want = rows_digest(&cols, &row_ptr, 0..3);
        let (mut dense, mut pos) = (vec![-0.0f64; 5], vec![0u8; 5]);
        let (mut vals, mut map) = (vec![7.0; 7], Vec::new());
        let n = products(&a, &b, 0..3).unwrap();
        assert!(rows_fit(&row_ptr, 0..3));
        assert!(replay_building(
            (&mut dense, &mut pos),
            (&a, &b),
            (&av, &bv),
            0..3,
            (&row_ptr, 0),
            &cols,
            &mut vals,
            (&mut map, want),
        ));
        assert_eq!(map.len(), n);
        assert!(dense.iter().all(|x| x.to_bits() == (-0.0f64).to_bits()));
        // Row 0: 1.5 * (1, 2, -1) on {4, 0, 4} and -2.0 * (8, 0.125) on {0, 2}.
        let row0 = [(-0.0 + 1.5) + -1.5, (-0.0 + 3.0) + -16.0, -0.0 + -0.25];
        assert_eq!(&vals[..3], &row0);
        let mut again = vec![9.0; 7];
        let replay = |map: &[u8], cols: &[i32], out: &mut [f64]| {
            replay_mapped((&a, &b), (&av, &bv), 0..3, &row_ptr, cols, out, (map, want))
        };
        assert!(replay(&map, &cols, &mut again));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&again), bits(&vals));
        assert!(!replay(&map[..n - 1], &cols, &mut again));
        let mut longer = map.clone();
        longer.push(0);
        assert!(!replay(&longer, &cols, &mut again));
        let mut changed = cols.clone();
        changed[4] = 4;
        assert!(!replay(&map, &changed, &mut again));
        // A place beyond its row's length is never followed.
        let mut bad = map.clone();
        bad[0] = 200;
        assert!(!replay(&bad, &cols, &mut again));
        // A row longer than a slot addresses does not fit.
        assert!(!rows_fit(&[0, MAX_ROW + 1], 0..1));
        // A fresh array gets the columns through the map, in the order it was built for
        // (1-based output: B's 0-based columns shifted); a short map or a place beyond
        // its row is reported.
        let columns = |map: &[u8], base: usize, fresh: &mut [i64], want: u64| {
            columns_mapped((&a, &b), 0..3, (&row_ptr, base), fresh, (map, want))
        };
        let mut fresh = vec![-5i64; 7];
        let one: Vec<i64> = cols.iter().map(|&c| c as i64 + 1).collect();
        assert!(columns(
            &map,
            1,
            &mut fresh,
            rows_digest(&one, &row_ptr, 0..3)
        ));
        assert_eq!(fresh, one);
        let zero: Vec<i64> = cols.iter().map(|&c| c as i64).collect();
        let want0 = rows_digest(&zero, &row_ptr, 0..3);
        let mut fresh = vec![-5i64; 7];
        assert!(columns(&map, 0, &mut fresh, want0));
        assert_eq!(fresh, zero);
        assert!(!columns(&map[..n - 1], 0, &mut fresh, want0));
        assert!(!columns(&bad, 0, &mut fresh, want0));
        assert!(!columns(&map, 0, &mut fresh, want0 ^ 1));
    }
}
