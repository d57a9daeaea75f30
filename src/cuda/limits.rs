//! Sizes the GPU path can address. Its kernels index rows, columns and entries with
//! 32-bit signed integers (`int` on the device), so every such size must stay below
//! 2^31 - 1; a larger product is refused with `Status::NotSupported` before anything runs
//! on the device (`Backend::Auto` then uses the CPU, which has 64-bit paths). Pure code:
//! tested on every machine.

use crate::error::{Result, Status, err};

/// The largest size (exclusive) a device index can hold.
pub const DEVICE_INDEX_LIMIT: usize = i32::MAX as usize;

/// `Ok` when every `(what, n)` fits 32-bit device indices, else `NotSupported` naming the
/// first that does not (row offsets reach nnz, so nnz must stay below the limit too).
pub fn check(sizes: &[(&str, usize)]) -> Result<()> {
    for &(what, n) in sizes {
        if n >= DEVICE_INDEX_LIMIT {
            return err(
                Status::NotSupported,
                format!(
                    "the GPU backend uses 32-bit device indices: {what} = {n} exceeds 2^31 - 2 \
                     (use SPGEMM_BACKEND_CPU for this product)"
                ),
            );
        }
    }
    Ok(())
}

/// Sizes of a product C = A * B that the GPU path indexes with 32-bit integers.
pub fn check_product(
    a_nrows: usize,
    a_ncols: usize,
    b_ncols: usize,
    a_nnz: usize,
    b_nnz: usize,
) -> Result<()> {
    check(&[
        ("rows of A", a_nrows),
        ("columns of A", a_ncols),
        ("columns of B", b_ncols),
        ("nnz(A)", a_nnz),
        ("nnz(B)", b_nnz),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_below_the_limit_pass_and_the_first_too_big_is_named() {
        let lim = DEVICE_INDEX_LIMIT;
        assert!(check_product(lim - 1, lim - 1, lim - 1, lim - 1, lim - 1).is_ok());
        assert!(check_product(0, 0, 0, 0, 0).is_ok());
        let e = check_product(10, lim, 10, 10, 10).unwrap_err();
        assert_eq!(e.status, Status::NotSupported);
        assert!(e.message.contains("columns of A"), "{}", e.message);
        assert!(e.message.contains(&lim.to_string()), "{}", e.message);
        // 2^31 entries in B (a 64-bit row offset would be needed on the device).
        let e = check_product(10, 10, 10, 10, 1 << 31).unwrap_err();
        assert!(e.message.contains("nnz(B)"), "{}", e.message);
        let e = check(&[("nnz(C)", usize::MAX)]).unwrap_err();
        assert!(e.message.contains("nnz(C)"), "{}", e.message);
    }
}
