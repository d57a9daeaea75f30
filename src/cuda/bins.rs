//! Bin ranges and hash-table sizes of the GPU kernels (OpSparse section 5.6/5.7),
//! re-derived from the device's shared memory per block instead of V100's fixed 96 KB:
//! the largest power-of-two table that fits becomes the last shared-memory bin (Hopper:
//! 227 KB per block, so 32768 keys symbolic and 16384 f64 pairs numeric).

/// Rows whose key (n_prod or n_nz) is at most `limit` go to this bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bin {
    pub limit: i64,
    /// Hash-table slots per row (a power of two: the kernels mask instead of dividing).
    pub tsize: u32,
    /// Threads per block.
    pub block: u32,
    /// Threads per row (block / tpr rows share a block).
    pub tpr: u32,
}

impl Bin {
    pub fn rows_per_block(&self) -> u32 {
        self.block / self.tpr
    }
}

/// Static shared memory the kernels declare beside the dynamic tables (MAX_GROUPS ints and
/// a few counters), with room to spare.
pub const STATIC_SMEM: usize = 256 * 4 + 64;
/// Largest number of rows one block may hold (MAX_GROUPS in kernels/spgemm.cu).
#[cfg(test)]
pub const MAX_GROUPS: u32 = 256;
/// Largest number of bins (MAX_BINS in kernels/spgemm.cu).
pub const MAX_BINS: usize = 16;

/// Symbolic bins by n_prod: tables at least 1.2x the largest n_prod of the bin. The last
/// shared bin is open-ended; a row there whose count passes `fail_at` goes to the global
/// kernel.
///
/// OpSparse's table 1 jumps from 32-slot tables (n_prod <= 26) straight to one 512-slot
/// table per block, where rows of a few dozen products (the 7-point Laplacian squared)
/// spent most of the symbolic kernel clearing and scanning 512-slot tables
/// (docs/DESIGN-NOTES.md, cuda::bins). Tables of 64, 128 and 256 slots, several rows to a
/// 256-thread block (8, 16 and 32 threads per row), fill the gap.
pub fn symbolic(smem_per_block: usize) -> Vec<Bin> {
    let mut bins = vec![Bin {
        limit: 26,
        tsize: 32,
        block: 256,
        tpr: 4,
    }];
    for (tsize, tpr) in [(64u32, 8u32), (128, 16), (256, 32)] {
        bins.push(Bin {
            limit: (tsize as f64 / 1.2) as i64,
            tsize,
            block: 256,
            tpr,
        });
    }
    let mut tsize = 512u32;
    let mut block = 64u32;
    while tsize as usize * 4 + STATIC_SMEM <= smem_per_block {
        bins.push(Bin {
            limit: (tsize as f64 / 1.2) as i64,
            tsize,
            block,
            tpr: block,
        });
        tsize *= 2;
        block = (block * 2).min(1024);
    }
    if let Some(last) = bins.last_mut() {
        last.limit = i64::MAX;
    }
    bins
}

/// Count at which a row of the last symbolic bin is sent to the global kernel (0.8 of the
/// table, as OpSparse).
pub fn symbolic_fail_at(bin: &Bin) -> u32 {
    bin.tsize / 5 * 4
}

/// Numeric bins by n_nz: tables at least 2x the largest n_nz, doubling from 32 slots.
/// Small tables share a block (8 to 32 rows of 8 to 32 threads): a row of a few dozen
/// entries gets a group of threads sized to it, not a whole block, and its sort runs over
/// a small table. Rows above the last bin's limit go to the global kernel.
pub fn numeric(smem_per_block: usize, value_bytes: usize) -> Vec<Bin> {
    let mut bins = Vec::new();
    let mut tsize = 32u32;
    loop {
        let tpr = (tsize / 8).clamp(8, 1024);
        let block = tpr.max(256);
        let bin = Bin {
            limit: tsize as i64 / 2,
            tsize,
            block,
            tpr,
        };
        if numeric_smem(&bin, value_bytes) + STATIC_SMEM > smem_per_block
            || bins.len() + 1 >= MAX_BINS
        {
            break;
        }
        bins.push(bin);
        tsize *= 2;
    }
    bins
}

/// Dynamic shared memory of one block of `bin` (bytes).
pub fn numeric_smem(bin: &Bin, value_bytes: usize) -> usize {
    bin.rows_per_block() as usize * bin.tsize as usize * (4 + value_bytes)
}
pub fn symbolic_smem(bin: &Bin) -> usize {
    bin.rows_per_block() as usize * bin.tsize as usize * 4
}

/// Split rows (kernels/spgemm.cu, "Split rows"): a row of more products than
/// `split_threshold` is shared by several blocks over one global-memory table. One block
/// per row left a hub or power-law row alone on one multiprocessor while the rest of the
/// product had finished (docs/GPU.md, 2026-11-27).
pub const SPLIT_MIN_PRODUCTS: u64 = 16384;
/// Products per block of a split row (16 per thread of a 512-thread block).
pub const SPLIT_PART_PRODUCTS: u64 = 8192;
/// Threads per block of the split kernels that insert products.
pub const SPLIT_BLOCK: u32 = 512;
const SPLIT_MAX_PARTS: u64 = 4096;
/// Device memory for the tables of one batch of split rows.
pub const SPLIT_BUDGET: usize = 256 << 20;

/// The n_prod above which a row is split: a quarter of an even share of the products per
/// multiprocessor (a lone block works several times slower than a full multiprocessor),
/// and never below SPLIT_MIN_PRODUCTS (short rows gain nothing from more blocks).
pub fn split_threshold(flops: u64, sm_count: u32) -> u64 {
    SPLIT_MIN_PRODUCTS.max(flops / (4 * u64::from(sm_count.max(1))))
}

/// Blocks per split row, from the largest row's products.
pub fn split_parts(largest: u64) -> u32 {
    largest
        .div_ceil(SPLIT_PART_PRODUCTS)
        .clamp(1, SPLIT_MAX_PARTS) as u32
}

/// Slots of a split row's table for a row of at most `bound` entries (a power of two, at
/// least twice the bound and 64).
pub fn split_tsize(bound: u64) -> usize {
    (2 * bound.max(1)).next_power_of_two().max(64) as usize
}

/// Split rows per batch: as many tables of `tsize` slots of `slot_bytes` as fit the budget.
pub fn split_batch(tsize: usize, slot_bytes: usize) -> usize {
    (SPLIT_BUDGET / (tsize * slot_bytes).max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bins: &[Bin], smem: usize, per_slot: usize) {
        assert!(bins.len() <= MAX_BINS);
        for (i, b) in bins.iter().enumerate() {
            assert!(b.tsize.is_power_of_two() && b.block.is_power_of_two());
            assert!(b.block <= 1024 && b.block % b.tpr == 0);
            assert!(b.rows_per_block() <= MAX_GROUPS);
            assert!(
                b.rows_per_block() as usize * b.tsize as usize * per_slot + STATIC_SMEM <= smem
            );
            if i > 0 {
                assert!(b.limit > bins[i - 1].limit);
            }
        }
    }

    #[test]
    fn hopper_bins_use_the_large_shared_memory() {
        let smem = 227 * 1024;
        let s = symbolic(smem);
        check(&s, smem, 4);
        assert_eq!(s.last().unwrap().tsize, 32768);
        assert_eq!(s.last().unwrap().limit, i64::MAX);
        // OpSparse table 1's 512-slot bin, after the three finer bins of this library.
        assert_eq!((s[1].limit, s[2].limit, s[3].limit), (53, 106, 213));
        assert_eq!((s[4].tsize, s[4].limit), (512, 426));
        let n = numeric(smem, 8);
        check(&n, smem, 12);
        assert_eq!(n.last().unwrap().tsize, 16384);
        assert_eq!(n.last().unwrap().limit, 8192);
        let n32 = numeric(smem, 4);
        assert_eq!(n32.last().unwrap().tsize, 16384);
    }

    #[test]
    fn split_rows_policy() {
        // 132 multiprocessors: 10M products split rows above 18,939; 1M stay at the floor.
        assert_eq!(split_threshold(10_000_000, 132), 18_939);
        assert_eq!(split_threshold(1_000_000, 132), SPLIT_MIN_PRODUCTS);
        assert_eq!(split_threshold(5, 0), SPLIT_MIN_PRODUCTS);
        assert_eq!(split_parts(1), 1);
        assert_eq!(split_parts(8193), 2);
        assert_eq!(split_parts(u64::MAX), 4096);
        assert_eq!(split_tsize(0), 64);
        assert_eq!(split_tsize(33), 128);
        assert_eq!(split_tsize(30_000), 65_536);
        assert_eq!(split_batch(65_536, 12), 341);
        assert_eq!(split_batch(1 << 30, 12), 1);
    }

    #[test]
    fn small_shared_memory_gives_fewer_bins() {
        let smem = 48 * 1024;
        let s = symbolic(smem);
        check(&s, smem, 4);
        assert_eq!(s.last().unwrap().tsize, 8192);
        let n = numeric(smem, 8);
        check(&n, smem, 12);
        assert_eq!(n.last().unwrap().tsize, 2048);
        // A100: 163 KB per block.
        assert_eq!(numeric(163 * 1024, 8).last().unwrap().tsize, 8192);
    }
}
