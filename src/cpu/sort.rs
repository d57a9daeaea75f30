//! Sorting of one output row. Rows of C are short (tens to hundreds of entries). Up to 64
//! keys where the CPU has AVX-512 (from 16 where it has AVX2), each key goes straight to
//! its place, counted by compares against the row held in registers (no branch on the
//! keys); rows already in order are only checked. Otherwise an insertion sort up to 32
//! keys (the first-touch rows of stencil products are nearly in order), then
//! `sort_unstable` (docs/DESIGN-NOTES.md, cpu::sort).

/// Below this length insertion sort is used.
pub(crate) const INSERTION_MAX: usize = 32;

/// Rows of this many keys and up to [`RANK_MAX`] are sorted by rank on AVX-512.
pub(crate) const RANK_MIN: usize = 2;

/// The longest row sorted by rank: four 16-lane registers hold it.
pub(crate) const RANK_MAX: usize = 64;

/// The shortest row sorted by rank on AVX2 (up to [`RANK_MAX`], eight 8-lane registers):
/// each key costs a compare per register there, twice AVX-512's, and shorter rows (nearly
/// in order in stencil and aggregation products) sort faster by insertion
/// (docs/DESIGN-NOTES.md, cpu::sort).
pub(crate) const RANK_MIN_AVX2: usize = 16;

/// What [`rank_short`] found out about a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortOrder {
    /// The keys are in ascending order already (nothing written).
    InOrder,
    /// `ranks[q]` is the place of `keys[q]` in sorted order.
    Ranked,
    /// Not ranked (longer than [`RANK_MAX`], shorter than [`RANK_MIN_AVX2`] on AVX2, or
    /// no AVX2): the caller sorts.
    Unranked,
}

/// The lengths of the rows [`rank_short`] ranks on this machine (none on the base ISA).
#[cfg(test)]
pub fn rank_lengths() -> Option<std::ops::RangeInclusive<usize>> {
    use crate::platform::isa::Isa;
    match Isa::detect() {
        Isa::Avx512 => Some(RANK_MIN..=RANK_MAX),
        Isa::Avx2 => Some(RANK_MIN_AVX2..=RANK_MAX),
        Isa::Base => None,
    }
}

/// The places of the keys of a short row in sorted order (keys are distinct), by
/// [`ShortOrder`]: rows already in order (a band, a third of a 1-D aggregation's rows)
/// are only checked.
#[inline]
pub fn rank_short(keys: &[u32], ranks: &mut [u8; RANK_MAX]) -> ShortOrder {
    #[cfg(target_arch = "x86_64")]
    if keys.len() >= RANK_MIN {
        use crate::platform::isa::Isa;
        match Isa::detect() {
            // SAFETY: the CPU has AVX-512 (detected); the row has at most RANK_MAX keys.
            Isa::Avx512 if keys.len() <= RANK_MAX => return unsafe { rank_avx512(keys, ranks) },
            // SAFETY: the CPU has AVX2 (detected); the row has at most RANK_MAX keys.
            Isa::Avx2 if (RANK_MIN_AVX2..=RANK_MAX).contains(&keys.len()) => {
                return unsafe { rank_avx2(keys, ranks) };
            }
            _ => {}
        }
    }
    let _ = (keys, ranks);
    ShortOrder::Unranked
}

/// Sorts `keys` ascending (keys are distinct): by rank where [`rank_short`] ranks the
/// row, else by insertion up to [`INSERTION_MAX`], else by `sort_unstable`.
#[inline]
pub fn sort_keys(keys: &mut [u32]) {
    let mut ranks = [0u8; RANK_MAX];
    match rank_short(keys, &mut ranks) {
        ShortOrder::InOrder => {}
        ShortOrder::Ranked => {
            let n = keys.len();
            let mut held = [0u32; RANK_MAX];
            held[..n].copy_from_slice(keys);
            for (&c, &t) in held[..n].iter().zip(&ranks) {
                keys[t as usize] = c;
            }
        }
        ShortOrder::Unranked => sort_compared(keys),
    }
}

/// Sorts `keys` ascending (keys are distinct) by compares: insertion up to
/// [`INSERTION_MAX`], else `sort_unstable`. For rows [`rank_short`] declined.
#[inline]
pub fn sort_compared(keys: &mut [u32]) {
    if keys.len() <= INSERTION_MAX {
        for i in 1..keys.len() {
            let x = keys[i];
            let mut j = i;
            while j > 0 && keys[j - 1] > x {
                keys[j] = keys[j - 1];
                j -= 1;
            }
            keys[j] = x;
        }
    } else {
        keys.sort_unstable();
    }
}

/// The rank of each of up to [`RANK_MAX`] distinct keys: how many keys are below it,
/// counted by one compare per 16 keys against the row held in registers (no branch on the
/// keys, where the insertion sort mispredicts; docs/DESIGN-NOTES.md, cpu::sort).
///
/// # Safety
/// The CPU has AVX-512F (and so POPCNT), and `keys.len() <= RANK_MAX`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn rank_avx512(keys: &[u32], ranks: &mut [u8; RANK_MAX]) -> ShortOrder {
    match keys.len().div_ceil(16) {
        1 => unsafe { rank_in::<1>(keys, ranks) },
        2 => unsafe { rank_in::<2>(keys, ranks) },
        3 => unsafe { rank_in::<3>(keys, ranks) },
        _ => unsafe { rank_in::<4>(keys, ranks) },
    }
}

/// [`rank_avx512`] for rows of `16 * (NV - 1) + 1` to `16 * NV` keys.
///
/// # Safety
/// The CPU has AVX-512F, and `keys.len() <= 16 * NV <= RANK_MAX`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
// Stable since Rust 1.89, above the crate's rust-version (as in `cpu::spmm::avx512`).
#[allow(clippy::incompatible_msrv)]
#[inline]
unsafe fn rank_in<const NV: usize>(keys: &[u32], ranks: &mut [u8; RANK_MAX]) -> ShortOrder {
    use std::arch::x86_64::*;
    let n = keys.len();
    debug_assert!(n <= 16 * NV && NV <= 4);
    let mut k = [_mm512_set1_epi32(-1); NV];
    let mut descents: __mmask16 = 0;
    for (w, kw) in k.iter_mut().enumerate() {
        let at = 16 * w;
        let rem = n.saturating_sub(at).min(16);
        let m: __mmask16 = ((1u32 << rem) - 1) as u16;
        // Lanes with a key after them (at < n: NV registers cover n keys).
        let has_next: __mmask16 = ((1u32 << (n - at - 1).min(16)) - 1) as u16;
        // Lanes past the row hold u32::MAX, below no key. SAFETY: the masked loads read
        // only the row's keys (the second those after the lanes' own).
        *kw = unsafe { _mm512_mask_loadu_epi32(*kw, m, keys.as_ptr().add(at).cast()) };
        let next = unsafe { _mm512_maskz_loadu_epi32(has_next, keys.as_ptr().add(at + 1).cast()) };
        descents |= _mm512_mask_cmpgt_epu32_mask(has_next, *kw, next);
    }
    if descents == 0 {
        return ShortOrder::InOrder;
    }
    for (r, &c) in ranks.iter_mut().zip(keys) {
        let v = _mm512_set1_epi32(c as i32);
        *r = k
            .iter()
            .map(|&kw| _mm512_cmplt_epu32_mask(kw, v).count_ones())
            .sum::<u32>() as u8;
    }
    ShortOrder::Ranked
}

/// [`rank_avx512`] on AVX2: the rank of each of up to [`RANK_MAX`] distinct keys.
/// Eight keys' ranks are counted at once: each key of the row, broadcast, is compared
/// with the row's registers and the "above it" lanes add one (no mask to count, no sum
/// across lanes).
///
/// # Safety
/// The CPU has AVX2, and `RANK_MIN <= keys.len() <= RANK_MAX`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rank_avx2(keys: &[u32], ranks: &mut [u8; RANK_MAX]) -> ShortOrder {
    match keys.len().div_ceil(8) {
        1 => unsafe { rank_in_avx2::<1>(keys, ranks) },
        2 => unsafe { rank_in_avx2::<2>(keys, ranks) },
        3 => unsafe { rank_in_avx2::<3>(keys, ranks) },
        4 => unsafe { rank_in_avx2::<4>(keys, ranks) },
        5 => unsafe { rank_in_avx2::<5>(keys, ranks) },
        6 => unsafe { rank_in_avx2::<6>(keys, ranks) },
        7 => unsafe { rank_in_avx2::<7>(keys, ranks) },
        _ => unsafe { rank_in_avx2::<8>(keys, ranks) },
    }
}

/// [`rank_avx2`] for rows of `8 * (NV - 1) + 1` to `8 * NV` keys.
///
/// # Safety
/// The CPU has AVX2, and `2 <= keys.len() <= 8 * NV <= RANK_MAX`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn rank_in_avx2<const NV: usize>(keys: &[u32], ranks: &mut [u8; RANK_MAX]) -> ShortOrder {
    use std::arch::x86_64::*;
    let n = keys.len();
    debug_assert!(n >= RANK_MIN && n <= 8 * NV && 8 * NV <= RANK_MAX);
    // Unsigned order through the signed compare: both sides with the top bit flipped.
    let bias = _mm256_set1_epi32(i32::MIN);
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut k = [_mm256_setzero_si256(); NV];
    let mut descents = 0i32;
    for (w, kw) in k.iter_mut().enumerate() {
        let at = 8 * w;
        // Lanes holding a key, and lanes with a key after them (at < n: NV covers n).
        let m = _mm256_cmpgt_epi32(_mm256_set1_epi32((n - at).min(8) as i32), lane);
        let has_next = _mm256_cmpgt_epi32(_mm256_set1_epi32((n - at - 1).min(8) as i32), lane);
        // SAFETY: the masked loads read only the row's keys (the second those after the
        // lanes' own); masked-off lanes read as 0 and are never counted nor stored.
        let cur = unsafe { _mm256_maskload_epi32(keys.as_ptr().add(at).cast(), m) };
        let next = unsafe { _mm256_maskload_epi32(keys.as_ptr().add(at + 1).cast(), has_next) };
        *kw = _mm256_xor_si256(cur, bias);
        let down = _mm256_cmpgt_epi32(*kw, _mm256_xor_si256(next, bias));
        descents |= _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(down, has_next)));
    }
    if descents == 0 {
        return ShortOrder::InOrder;
    }
    let mut acc = [_mm256_setzero_si256(); NV];
    for &c in keys {
        let v = _mm256_set1_epi32((c ^ 0x8000_0000) as i32);
        for (a, &kw) in acc.iter_mut().zip(&k) {
            // -1 where the lane's key is above c.
            *a = _mm256_sub_epi32(*a, _mm256_cmpgt_epi32(kw, v));
        }
    }
    for (w, a) in acc.iter().enumerate() {
        // Ranks are below 64: both packs keep them as they are.
        let r16 = _mm_packus_epi32(
            _mm256_castsi256_si128(*a),
            _mm256_extracti128_si256::<1>(*a),
        );
        let r8 = _mm_packus_epi16(r16, r16);
        // SAFETY: 8 * (w + 1) <= RANK_MAX bytes of `ranks`.
        unsafe { _mm_storel_epi64(ranks.as_mut_ptr().add(8 * w).cast(), r8) };
    }
    ShortOrder::Ranked
}

/// Sorts `(key, value)` pairs by key (keys are distinct).
#[inline]
pub fn sort_pairs<V: Copy>(pairs: &mut [(usize, V)]) {
    if pairs.len() <= INSERTION_MAX {
        for i in 1..pairs.len() {
            let x = pairs[i];
            let mut j = i;
            while j > 0 && pairs[j - 1].0 > x.0 {
                pairs[j] = pairs[j - 1];
                j -= 1;
            }
            pairs[j] = x;
        }
    } else {
        pairs.sort_unstable_by_key(|p| p.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct keys of length `n`: random, few values, with the extremes (0 and
    /// u32::MAX - 1, the largest column index; high bit set and clear), ascending,
    /// descending.
    fn shapes(n: usize, seed: u64) -> Vec<Vec<u32>> {
        let mut s = seed | 1;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let distinct = |f: &mut dyn FnMut() -> u32, first: &[u32]| {
            let mut v: Vec<u32> = first.iter().copied().take(n).collect();
            while v.len() < n {
                let x = f();
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v
        };
        let random = distinct(&mut || rnd() as u32 % (u32::MAX - 1), &[]);
        let small = distinct(&mut || (rnd() % (3 * n as u64 + 1)) as u32, &[]);
        let mut extreme = distinct(
            &mut || match rnd() % 4 {
                0 => (rnd() % 64) as u32,
                1 => u32::MAX - 1 - (rnd() % 64) as u32,
                2 => (1u32 << 31) + (rnd() % 64) as u32 - 32,
                _ => rnd() as u32 % (u32::MAX - 1),
            },
            &[u32::MAX - 1, 0],
        );
        // The largest key first, the smallest last.
        if n >= 2 {
            extreme.swap(1, n - 1);
        }
        let asc: Vec<u32> = (0..n as u32).map(|i| i * 3).collect();
        let desc: Vec<u32> = asc.iter().rev().copied().collect();
        let top: Vec<u32> = (0..n as u32).map(|i| u32::MAX - 1 - i).collect();
        vec![random, small, extreme, asc, desc, top]
    }

    #[test]
    fn sort_keys_matches_sort_unstable_at_every_length() {
        for n in 0..=INSERTION_MAX + 40 {
            for seed in 1..4u64 {
                for keys in shapes(n, seed * 7919 + n as u64) {
                    let mut want = keys.clone();
                    want.sort_unstable();
                    let mut got = keys.clone();
                    sort_keys(&mut got);
                    assert_eq!(got, want, "n {n} keys {keys:?}");
                }
            }
        }
    }

    #[test]
    fn rank_short_places_every_key_or_declines() {
        let lengths = rank_lengths();
        for n in 0..=RANK_MAX + 3 {
            for seed in 1..4u64 {
                for keys in shapes(n, seed * 104729 + n as u64) {
                    let mut ranks = [0u8; RANK_MAX];
                    let got = rank_short(&keys, &mut ranks);
                    let in_order = keys.windows(2).all(|w| w[0] < w[1]);
                    let ranked = lengths.as_ref().is_some_and(|l| l.contains(&n));
                    match got {
                        ShortOrder::Unranked => assert!(!ranked, "n {n} keys {keys:?}"),
                        ShortOrder::InOrder => assert!(ranked && in_order, "n {n} {keys:?}"),
                        ShortOrder::Ranked => {
                            assert!(ranked && !in_order, "n {n} keys {keys:?}");
                            let mut placed = vec![None; n];
                            for (&c, &r) in keys.iter().zip(&ranks) {
                                assert!(placed[r as usize].replace(c).is_none(), "n {n}");
                            }
                            let mut want = keys.clone();
                            want.sort_unstable();
                            let placed: Vec<u32> = placed.into_iter().map(Option::unwrap).collect();
                            assert_eq!(placed, want, "n {n} keys {keys:?}");
                        }
                    }
                }
            }
        }
    }

    /// The AVX2 ranks wherever the CPU has AVX2, also on AVX-512 machines (which rank by
    /// the AVX-512 path in the library).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_ranks_place_every_key() {
        if !crate::platform::isa::Isa::Avx2.available() {
            return;
        }
        for n in RANK_MIN..=RANK_MAX {
            for seed in 1..6u64 {
                for keys in shapes(n, seed * 15485863 + n as u64) {
                    let mut ranks = [0u8; RANK_MAX];
                    // SAFETY: AVX2 is available; n is within the AVX2 ranks' bounds.
                    let got = unsafe { rank_avx2(&keys, &mut ranks) };
                    let mut want = keys.clone();
                    want.sort_unstable();
                    if keys.windows(2).all(|w| w[0] < w[1]) {
                        assert_eq!(got, ShortOrder::InOrder, "n {n} keys {keys:?}");
                        continue;
                    }
                    assert_eq!(got, ShortOrder::Ranked, "n {n} keys {keys:?}");
                    let mut placed = vec![u32::MAX; n];
                    for (&c, &r) in keys.iter().zip(&ranks) {
                        placed[r as usize] = c;
                    }
                    assert_eq!(placed, want, "n {n} keys {keys:?}");
                }
            }
        }
    }

    #[test]
    fn sorts_short_and_long() {
        for n in [0usize, 1, 2, 31, 32, 33, 200] {
            let mut k: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % 1009).collect();
            k.sort_unstable();
            k.dedup();
            let mut shuffled: Vec<u32> = k.iter().rev().copied().collect();
            sort_keys(&mut shuffled);
            assert_eq!(shuffled, k);
            let mut p: Vec<(usize, f64)> =
                k.iter().rev().map(|&x| (x as usize, x as f64)).collect();
            sort_pairs(&mut p);
            assert!(p.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(p.iter().all(|&(a, b)| a as f64 == b));
        }
    }
}
