//! Sorting of one output row. Rows of C are short (tens to hundreds of entries), where an
//! insertion sort beats the general-purpose sort; long rows use `sort_unstable`. The
//! first-touch rows of stencil products are nearly in order, which is why an AVX-512 rank
//! sort and a cache of sorting permutations did not beat it (docs/DESIGN-NOTES.md,
//! cpu::sort).

/// Below this length insertion sort is used.
pub(crate) const INSERTION_MAX: usize = 32;

/// Sorts `keys` ascending (keys are distinct).
#[inline]
pub fn sort_keys(keys: &mut [u32]) {
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
