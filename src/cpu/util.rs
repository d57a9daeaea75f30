//! Small helpers the CPU kernels share.

use crate::common::csr::CsrRef;
use crate::error::{Error, Status};
use crate::types::{Idx, Scalar};

/// Splits `data` into consecutive pieces that start at `starts[c] - starts[0]`.
pub fn split_at_bounds<'s, T>(mut data: &'s mut [T], starts: &[usize]) -> Vec<&'s mut [T]> {
    let mut out = Vec::with_capacity(starts.len().saturating_sub(1));
    for w in starts.windows(2) {
        let (head, tail) = data.split_at_mut(w[1] - w[0]);
        out.push(head);
        data = tail;
    }
    out
}

/// The error of a row of C whose entries (`got`) differ from the plan's count (`planned`):
/// A's or B's structure changed after the symbolic phase (every kernel checks this).
pub fn row_len_mismatch(row: usize, got: usize, planned: usize) -> Error {
    Error::new(
        Status::PlanMismatch,
        format!(
            "row {row} of C has {got} entries but the plan has {planned}: the structure of A or B changed since the symbolic phase"
        ),
    )
}

/// The error of a row of C with more entries than the plan's count (`planned`), found
/// when the row's accumulator, sized for that count, overflowed (see [`row_len_mismatch`]).
pub fn row_len_exceeds(row: usize, planned: usize) -> Error {
    Error::new(
        Status::PlanMismatch,
        format!(
            "row {row} of C has more entries than the plan's {planned}: the structure of A or B changed since the symbolic phase"
        ),
    )
}

/// A's and B's values when the numeric kernels are to compute C's values (`want`: the
/// caller passed a value array) and both inputs carry them; `None` runs a structure-only
/// product.
pub fn value_pair<'m, O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'m, O, I, V>,
    b: &CsrRef<'m, O, I, V>,
    want: bool,
) -> Option<(&'m [V], &'m [V])> {
    match (a.values(), b.values(), want) {
        (Some(av), Some(bv), true) => Some((av, bv)),
        _ => None,
    }
}
