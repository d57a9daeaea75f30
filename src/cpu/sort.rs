//! Sorting of one output row. Rows of C are short (tens to hundreds of entries), where an
//! insertion sort beats the general-purpose sort; long rows use `sort_unstable`.

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
