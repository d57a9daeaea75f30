//! The structure of A^T, built once by a stable counting sort so that each row of A^T lists
//! its entries in increasing row of A (and, within a row of A, in storage order): the
//! summation order of every entry of a product with A^T is then fixed, whatever the thread
//! count. SpMM's op(A) = A^T keeps it in `usize`; SpGEMM's op(A) and op(B) keep it in the
//! matrix's own offset and index types, so that the kernels see an ordinary CSR matrix.

use crate::common::csr::CsrRef;
use crate::common::memory::bytes_of;
use crate::error::{Result, Status, err};
use crate::platform::alloc::{try_filled, try_with_capacity};
use crate::types::{Idx, Scalar};

/// Integer types a transpose's offsets and column indices can be stored in.
pub trait Entry: Copy + Send + Sync + std::fmt::Debug + 'static {
    fn name() -> &'static str;
    /// Largest value storable, as usize.
    fn max_usize() -> usize;
    /// `v`, which the caller checked is at most [`Entry::max_usize`].
    fn put(v: usize) -> Self;
    /// The value as usize.
    fn get(self) -> usize;
}

impl Entry for usize {
    fn name() -> &'static str {
        "usize"
    }
    fn max_usize() -> usize {
        usize::MAX
    }
    #[inline(always)]
    fn put(v: usize) -> Self {
        v
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

impl<T: Idx> Entry for T {
    fn name() -> &'static str {
        T::KIND.name()
    }
    fn max_usize() -> usize {
        <T as Idx>::max_usize()
    }
    #[inline(always)]
    fn put(v: usize) -> Self {
        T::try_from_usize(v).expect("checked against max_usize")
    }
    #[inline(always)]
    fn get(self) -> usize {
        self.to_usize()
    }
}

/// A^T as 0-based CSR structure plus, for each entry, its position in A (`perm`).
pub struct Transpose<O = usize, I = usize> {
    /// `ncols(A) + 1` row offsets of A^T.
    pub offsets: Vec<O>,
    /// Column of each entry of A^T (a row of A).
    pub rows: Vec<I>,
    /// Position in A's arrays of each entry of A^T.
    pub perm: Vec<usize>,
    /// Rows of A (every entry of `rows` is below it).
    pub src_rows: usize,
}

impl Transpose {
    /// [`Transpose::of`] in `usize` (SpMM).
    pub fn build<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> Result<Transpose> {
        Transpose::of(a, "A")
    }
}

impl<TO: Entry, TI: Entry> Transpose<TO, TI> {
    /// Bytes [`Transpose::of`] holds at its peak for A with `ncols` columns and `nnz`
    /// entries: counts, cursor, rows, permutation and offsets (kept in step with it).
    pub fn peak_bytes(ncols: usize, nnz: usize) -> u64 {
        let n1 = ncols.saturating_add(1);
        bytes_of::<usize>(n1)
            .saturating_add(bytes_of::<usize>(ncols))
            .saturating_add(bytes_of::<TI>(nnz))
            .saturating_add(bytes_of::<usize>(nnz))
            .saturating_add(bytes_of::<TO>(n1))
    }

    /// Builds the transpose structure. Column indices must be in range (checked: an index
    /// outside [0, ncols) gives `IndexOutOfRange`, even with validation off); A's row count
    /// must fit the column index type `TI` and its entry count the offset type `TO` (else
    /// `IndexOverflow`). Messages call the matrix `name`.
    pub fn of<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>, name: &str) -> Result<Self> {
        let n = a.ncols();
        let nnz = a.nnz();
        Self::check_fits(a.nrows(), nnz, name)?;
        let mut counts = try_filled(n + 1, 0usize, "transpose row offsets")?;
        for p in 0..nnz {
            let c = a.col(p);
            if c >= n {
                return err(
                    Status::IndexOutOfRange,
                    format!("{name}: column index at position {p} is outside [base, base + {n})"),
                );
            }
            counts[c + 1] += 1;
        }
        for j in 0..n {
            counts[j + 1] += counts[j];
        }
        let mut next = try_with_capacity::<usize>(n, "transpose cursor")?;
        next.extend_from_slice(&counts[..n]);
        let mut rows = try_filled(nnz, TI::put(0), "transpose column indices")?;
        let mut perm = try_filled(nnz, 0usize, "transpose permutation")?;
        for i in 0..a.nrows() {
            let r = a.row_range(i);
            if r.start > r.end || r.end > nnz {
                return err(
                    Status::InvalidStructure,
                    format!("{name}: row offsets decrease or overrun at row {i}"),
                );
            }
            let row = TI::put(i);
            for p in r {
                let c = a.col(p);
                let q = next[c];
                next[c] += 1;
                rows[q] = row;
                perm[q] = p;
            }
        }
        drop(next);
        let mut offsets = try_with_capacity::<TO>(n + 1, "transpose row offsets")?;
        offsets.extend(counts.iter().map(|&x| TO::put(x)));
        Ok(Transpose {
            offsets,
            rows,
            perm,
            src_rows: a.nrows(),
        })
    }

    /// The first entry of `a` that is not where this transpose has it, as (position in
    /// `a`, the row and column the transpose has for it); None when `a` has the structure
    /// the transpose was built from. `a` must be valid (validated by the caller). Each
    /// entry of the transpose names its position in `a` (a bijection) with its row and
    /// column: when all of them hold, every position of `a` has the row and column it had,
    /// so the structures are equal. O(nnz), in parallel on the current pool.
    pub fn first_difference<O: Idx, I: Idx, V: Scalar>(
        &self,
        a: &CsrRef<'_, O, I, V>,
    ) -> Option<(usize, usize, usize)> {
        use rayon::prelude::*;
        let n = a.ncols();
        if a.nrows() != self.src_rows || self.offsets.len() != n + 1 || a.nnz() != self.perm.len() {
            return Some((0, 0, 0));
        }
        (0..n)
            .into_par_iter()
            .with_min_len(256)
            .find_map_first(|j| {
                let (s, e) = (self.offsets[j].get(), self.offsets[j + 1].get());
                (s..e).find_map(|q| {
                    let (p, i) = (self.perm[q], self.rows[q].get());
                    let here = a.col(p) == j && a.row_range(i).contains(&p);
                    (!here).then_some((p, i, j))
                })
            })
    }

    /// The transpose of a matrix with `nrows` rows and `nnz` entries can be stored in
    /// `TO` offsets and `TI` column indices (its columns are the matrix's rows).
    pub fn check_fits(nrows: usize, nnz: usize, name: &str) -> Result<()> {
        if nrows > 0 && nrows - 1 > TI::max_usize() {
            return err(
                Status::IndexOverflow,
                format!(
                    "{name}^T: {name}'s {nrows} rows cannot be the column indices of its \
                     transpose in {} (the transpose keeps {name}'s index type; use int64 \
                     column indices)",
                    TI::name()
                ),
            );
        }
        if nnz > TO::max_usize() {
            return err(
                Status::IndexOverflow,
                format!(
                    "{name}^T: {nnz} entries cannot be addressed by {} row offsets",
                    TO::name()
                ),
            );
        }
        Ok(())
    }

    pub fn nnz(&self) -> usize {
        self.perm.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row counts beyond the column index type are refused with a message.
    #[test]
    fn rows_beyond_the_index_type_are_an_overflow() {
        let m = i32::MAX as usize + 2;
        let e = Transpose::<i64, i32>::check_fits(m, 5, "A").unwrap_err();
        assert_eq!(e.status, Status::IndexOverflow);
        assert!(e.message.contains("int32"), "{e}");
        assert!(Transpose::<i32, i32>::check_fits(m - 1, 5, "A").is_ok());
        assert!(Transpose::<i64, i64>::check_fits(m, 5, "A").is_ok());
        let e = Transpose::<i32, i64>::check_fits(3, i32::MAX as usize + 1, "B").unwrap_err();
        assert_eq!(e.status, Status::IndexOverflow);
    }

    /// Each row of A^T lists its entries in increasing row of A, repeats in storage order.
    #[test]
    fn rows_of_the_transpose_keep_the_order_of_a() {
        let offs = [1i32, 4, 4, 6];
        let cols = [2i32, 1, 2, 2, 1];
        let a = CsrRef::<i32, i32, f64>::new(3, 2, 1, &offs, &cols, None).unwrap();
        let t = Transpose::<i32, i32>::of(&a, "A").unwrap();
        assert_eq!(t.offsets, [0, 2, 5]);
        assert_eq!(t.rows, [0, 2, 0, 0, 2]);
        assert_eq!(t.perm, [1, 4, 0, 2, 3]);
    }

    /// A matrix with the transpose's structure matches it, values aside; any legal change
    /// of structure with the same entry count (a column moved, an entry to another row,
    /// two entries swapped) is found, with the entry it moved.
    #[test]
    fn first_difference_finds_every_moved_entry() {
        let offs = [1i32, 4, 4, 6];
        let cols = [2i32, 1, 2, 2, 1];
        let a = CsrRef::<i32, i32, f64>::new(3, 2, 1, &offs, &cols, None).unwrap();
        let t = Transpose::<i32, i32>::of(&a, "A").unwrap();
        assert_eq!(t.first_difference(&a), None);
        let vals = [9.0; 5];
        let with_values = CsrRef::new(3, 2, 1, &offs, &cols, Some(&vals[..])).unwrap();
        assert_eq!(t.first_difference(&with_values), None);
        let moved_col = [2i32, 2, 2, 2, 1];
        let b = CsrRef::<i32, i32, f64>::new(3, 2, 1, &offs, &moved_col, None).unwrap();
        assert_eq!(t.first_difference(&b).map(|d| d.0), Some(1));
        let other_row = [1i32, 3, 3, 6];
        let b = CsrRef::<i32, i32, f64>::new(3, 2, 1, &other_row, &cols, None).unwrap();
        assert_eq!(t.first_difference(&b).map(|d| d.0), Some(2));
        let swapped = [1i32, 2, 2, 2, 1];
        let b = CsrRef::<i32, i32, f64>::new(3, 2, 1, &offs, &swapped, None).unwrap();
        assert!(t.first_difference(&b).is_some());
        let fewer = [1i32, 4, 4, 5];
        let b = CsrRef::<i32, i32, f64>::new(3, 2, 1, &fewer, &cols[..4], None).unwrap();
        assert!(t.first_difference(&b).is_some());
    }
}
