//! The structure of A^T (for op(A) = A^T), built once by a stable counting sort so that
//! each row of A^T lists its entries in increasing row of A: the summation order of every
//! output entry is then fixed, whatever the thread count.

use crate::common::csr::CsrRef;
use crate::error::{Result, Status, err};
use crate::platform::alloc::{try_filled, try_with_capacity};
use crate::types::{Idx, Scalar};

/// A^T as 0-based CSR structure plus, for each entry, its position in A (`perm`).
pub struct Transpose {
    /// `ncols(A) + 1` row offsets of A^T.
    pub offsets: Vec<usize>,
    /// Column of each entry of A^T (a row of A).
    pub rows: Vec<usize>,
    /// Position in A's arrays of each entry of A^T.
    pub perm: Vec<usize>,
    /// Rows of A (every entry of `rows` is below it).
    pub src_rows: usize,
}

impl Transpose {
    /// Builds the transpose structure. Column indices must be in range (checked: an index
    /// outside [0, ncols) gives `IndexOutOfRange`, even with validation off).
    pub fn build<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> Result<Transpose> {
        let n = a.ncols();
        let nnz = a.nnz();
        let mut offsets = try_filled(n + 1, 0usize, "transpose row offsets")?;
        for p in 0..nnz {
            let c = a.col(p);
            if c >= n {
                return err(
                    Status::IndexOutOfRange,
                    format!("A: column index at position {p} is outside [base, base + {n})"),
                );
            }
            offsets[c + 1] += 1;
        }
        for j in 0..n {
            offsets[j + 1] += offsets[j];
        }
        let mut next = try_with_capacity::<usize>(n, "transpose cursor")?;
        next.extend_from_slice(&offsets[..n]);
        let mut rows = try_filled(nnz, 0usize, "transpose column indices")?;
        let mut perm = try_filled(nnz, 0usize, "transpose permutation")?;
        for i in 0..a.nrows() {
            let r = a.row_range(i);
            if r.start > r.end || r.end > nnz {
                return err(
                    Status::InvalidStructure,
                    format!("A: row offsets decrease or overrun at row {i}"),
                );
            }
            for p in r {
                let c = a.col(p);
                let q = next[c];
                next[c] += 1;
                rows[q] = i;
                perm[q] = p;
            }
        }
        Ok(Transpose {
            offsets,
            rows,
            perm,
            src_rows: a.nrows(),
        })
    }

    pub fn nnz(&self) -> usize {
        self.rows.len()
    }
}
