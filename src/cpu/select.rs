//! The KKSPGEMM selector of the CPU backend: which accumulator each phase runs with, from
//! the product's shape and this machine's caches (the rule and its measurements are in
//! docs/PERFORMANCE.md and docs/DESIGN-NOTES.md).

use crate::common::options::Algorithm;
use crate::cpu::args::AccKind;
use crate::error::{Result, Status, err};
use crate::platform::caches::{Caches, caches};
use crate::platform::topo::HbmBudget;

/// The paper's cut-off between KKDENSE and KKMEM (kept for reference; the selector
/// below decides from this machine's caches instead).
pub const DENSE_MAX_COLS: usize = 250_000;

/// What the selector looks at.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Columns of C.
    pub k: usize,
    /// Worker threads.
    pub threads: usize,
    /// High-bandwidth memory holding every worker's accumulators (None: ordinary memory).
    pub hbm: Option<HbmBudget>,
    /// Scalar multiplications of the product (from the symbolic phase).
    pub flops: u64,
}

/// Bytes of dense accumulators (all workers) AUTO allows per multiplication beyond the L2
/// size: setting up a slot array costs a first touch per column, about what a hash
/// insert saves per product over dense; a product of a few rows times a very wide B
/// (2 multiplications, 2 x 10^7 columns, 3 threads: 153 ms dense against 1 ms KKMEM) must
/// not pay a column-sized array per thread (docs/ROBUSTNESS.md, F10).
pub const DENSE_BYTES_PER_FLOP: u64 = 32;

/// Symbolic phase (bit sets, section 3.2): the dense bit map costs k/8 bytes per thread
/// and a popcount per touched word; it wins while it stays in the private L2 cache.
/// Beyond, KKLP (measured faster than KKMEM for bit-set keys on every test input). An
/// explicit choice is honoured (the dense bit map has no column limit: words are u32
/// only in the compressed B, which is skipped when they would not fit).
pub fn select_symbolic(requested: Algorithm, k: usize) -> Algorithm {
    match requested {
        Algorithm::Auto => {
            if k.div_ceil(8) <= caches().l2 {
                Algorithm::Dense
            } else {
                Algorithm::LinearProbe
            }
        }
        alg => alg,
    }
}

/// Numeric phase: the dense accumulator ([`crate::cpu::dense`]) touches a 4-byte slot
/// per column of C; the hash maps touch a table sized by the row. Measured on the
/// benchmark inputs (k up to 500,000, 1 and 2 threads), dense won on every one while all
/// threads' slot arrays fit in the shared L3; beyond, KKMEM (the better hash map for
/// numeric rows on most inputs). Dense also needs work enough to pay for its arrays
/// ([`DENSE_BYTES_PER_FLOP`]). An explicit choice is honoured.
pub fn select_numeric(requested: Algorithm, f: &Features) -> Result<Algorithm> {
    let dense_ok = f.k <= u32::MAX as usize;
    match requested {
        Algorithm::Auto => {
            let dense_bytes = f.k.saturating_mul(4).saturating_mul(f.threads);
            let c = caches();
            let by_work = usize::try_from(f.flops.saturating_mul(DENSE_BYTES_PER_FLOP))
                .unwrap_or(usize::MAX)
                .max(c.l2);
            Ok(
                if dense_ok && dense_bytes <= dense_numeric_budget(&c, f).min(by_work) {
                    Algorithm::Dense
                } else {
                    Algorithm::LinkedList
                },
            )
        }
        Algorithm::Dense if !dense_ok => err(
            Status::NotSupported,
            format!(
                "the dense accumulator needs at most 2^32-1 columns in C, B has {}",
                f.k
            ),
        ),
        alg => Ok(alg),
    }
}

/// Bytes the numeric dense accumulators of all workers may take for `select` to pick
/// KKDENSE: normally the shared L3 cache.
///
/// When every worker's chunk sits in high-bandwidth memory (`f.hbm`: KNL's MCDRAM in flat
/// mode, HBM parts), dense arrays need not stay in cache to win: the KokkosKernels paper
/// (section 4.2) finds KKDENSE best below k = 250,000 on KNL's DDR and also beyond that on
/// MCDRAM, since its scattered accesses are bandwidth-bound. So the paper's DDR cut-off
/// ([`DENSE_MAX_COLS`]) scaled by the HBM/DDR bandwidth ratio bounds k, and all workers'
/// arrays may take at most an eighth of the HBM (the rest is for C and temporaries).
/// Derived from the paper and the topology, not measured: no such machine was available.
pub fn dense_numeric_budget(c: &Caches, f: &Features) -> usize {
    let Some(h) = f.hbm else {
        return c.l3;
    };
    let cols = (DENSE_MAX_COLS as f64 * h.bandwidth_ratio.max(1.0)) as usize;
    // The dense numeric kernel keeps a 4-byte slot per column (src/cpu/dense.rs).
    let by_bandwidth = cols.saturating_mul(4).saturating_mul(f.threads.max(1));
    let by_capacity = match usize::try_from(h.capacity / 8) {
        Ok(0) => usize::MAX,
        Ok(b) => b,
        Err(_) => usize::MAX,
    };
    c.l3.max(by_bandwidth.min(by_capacity))
}

/// The dense numeric kernel keeps a value per column of C instead of a slot
/// ([`crate::cpu::dense::fill_rows_by_value`]) from this many multiplications per entry
/// of C on: below, the 8-byte values take three times the cache of the slots for few
/// products per entry (docs/DESIGN-NOTES.md, cpu::select).
const BY_VALUE_MIN_PRODUCTS: u64 = 24;

/// The numeric kernel for the plan's algorithm and shape (`k` columns of C, values of
/// `value_bytes`, `threads` workers): the value kernel needs a 4-byte mark and a value per
/// column and thread, so it is taken only while those fit in the L3 budget as the
/// slots do for [`select_numeric`].
pub fn numeric_kind(
    numeric_alg: Algorithm,
    flops: u64,
    nnz: usize,
    k: usize,
    value_bytes: usize,
    threads: usize,
) -> AccKind {
    let many_products = flops >= BY_VALUE_MIN_PRODUCTS.saturating_mul(nnz as u64);
    let bytes = k
        .saturating_mul(4 + value_bytes)
        .saturating_mul(threads.max(1));
    match acc_kind(numeric_alg) {
        AccKind::Dense if many_products && bytes <= caches().l3 => AccKind::DenseByValue,
        kind => kind,
    }
}

pub fn acc_kind(alg: Algorithm) -> AccKind {
    match alg {
        Algorithm::Dense => AccKind::Dense,
        Algorithm::LinkedList | Algorithm::Auto => AccKind::Linked,
        Algorithm::LinearProbe => AccKind::Probe,
    }
}
