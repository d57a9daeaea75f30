//! Checks every backend shares: that a product is defined and C's format can hold it, that
//! a numeric call's inputs are those of the plan (types, shape and, when validating, the
//! structure), and that C's arrays fit.

use super::csr::{CsrRef, FromAny, TypeSig};
use super::options::{InputShape, Layout, Op, OutputFormat};
use super::slices::{IndexSliceMut, ValueSliceMut};
use crate::error::{Error, Result, Status, err};
use crate::types::{Idx, IndexType, Scalar};

/// The type signature of matrices with these element types.
pub fn sig_of<O: Idx, I: Idx, V: Scalar>() -> TypeSig {
    TypeSig {
        offsets: O::KIND,
        indices: I::KIND,
        values: V::KIND,
    }
}

/// What a plan records of its inputs.
pub fn shape_of<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> InputShape {
    InputShape {
        sig: sig_of::<O, I, V>(),
        a_nrows: a.nrows(),
        a_ncols: a.ncols(),
        b_nrows: b.nrows(),
        b_ncols: b.ncols(),
        a_nnz: a.nnz(),
        b_nnz: b.nnz(),
        a_base: a.base(),
        b_base: b.base(),
    }
}

/// A*B is defined (A's columns equal B's rows) and C's format can hold its columns.
pub fn check_product<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    format: &OutputFormat,
) -> Result<()> {
    if a.ncols() != b.nrows() {
        return err(
            Status::DimensionMismatch,
            format!(
                "A is {} x {} but B is {} x {}: A's columns must equal B's rows",
                a.nrows(),
                a.ncols(),
                b.nrows(),
                b.ncols()
            ),
        );
    }
    check_format(format, b.ncols())
}

/// op(A)*op(B) is defined (op(A)'s columns equal op(B)'s rows) and C's format can hold
/// its columns; the message names the shapes op gives A and B.
pub fn check_product_op<O: Idx, I: Idx, V: Scalar>(
    (op_a, a): (Op, &CsrRef<'_, O, I, V>),
    (op_b, b): (Op, &CsrRef<'_, O, I, V>),
    format: &OutputFormat,
) -> Result<()> {
    if op_a == Op::NonTranspose && op_b == Op::NonTranspose {
        return check_product(a, b, format);
    }
    let (am, an) = op_a.shape(a.nrows(), a.ncols());
    let (bm, bn) = op_b.shape(b.nrows(), b.ncols());
    if an != bm {
        return err(
            Status::DimensionMismatch,
            format!(
                "op(A) = {} is {am} x {an} but op(B) = {} is {bm} x {bn} (A is {} x {}, B is \
                 {} x {}): op(A)'s columns must equal op(B)'s rows",
                op_a.of("A"),
                op_b.of("B"),
                a.nrows(),
                a.ncols(),
                b.nrows(),
                b.ncols()
            ),
        );
    }
    check_format(format, bn)
}

/// C's format is valid and its column indices can address `k` columns.
pub fn check_format(format: &OutputFormat, k: usize) -> Result<()> {
    if format.base > 1 {
        return err(
            Status::InvalidValue,
            format!("C: index base {} is not 0 or 1", format.base),
        );
    }
    if format.indices == IndexType::SizeT {
        return err(
            Status::InvalidValue,
            "C: size_t column indices are not supported (use int32 or int64)",
        );
    }
    if k > 0 && k - 1 + format.base > format.indices.max_usize() {
        return err(
            Status::IndexOverflow,
            format!(
                "C: {k} columns cannot be addressed by {} column indices",
                format.indices.name()
            ),
        );
    }
    Ok(())
}

/// nnz(C) fits C's row offsets (with the base added).
pub fn check_nnz(format: &OutputFormat, nnz: usize) -> Result<()> {
    let limit = format.offsets.max_usize() - format.base;
    if nnz > limit {
        return err(
            Status::IndexOverflow,
            format!(
                "C has {nnz} entries, more than {} row offsets can address ({limit})",
                format.offsets.name()
            ),
        );
    }
    Ok(())
}

/// A numeric call's inputs have the types and shape the plan was made for.
pub fn check_shape(plan: &InputShape, now: &InputShape) -> Result<()> {
    if now.sig != plan.sig {
        return err(
            Status::TypeMismatch,
            format!(
                "A and B have {} but the plan was made for {}",
                now.sig, plan.sig
            ),
        );
    }
    if now != plan {
        let d = |s: &InputShape| {
            format!(
                "A {}x{} nnz {} base {}, B {}x{} nnz {} base {}",
                s.a_nrows, s.a_ncols, s.a_nnz, s.a_base, s.b_nrows, s.b_ncols, s.b_nnz, s.b_base
            )
        };
        return err(
            Status::PlanMismatch,
            format!("inputs are {}; the plan was made for {}", d(now), d(plan)),
        );
    }
    Ok(())
}

/// Whether two views denote the same arrays (A*A): one validation and digest suffice.
pub fn same_structure<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> bool {
    a.nrows() == b.nrows()
        && a.ncols() == b.ncols()
        && a.base() == b.base()
        && std::ptr::eq(a.row_offsets(), b.row_offsets())
        && std::ptr::eq(a.col_indices(), b.col_indices())
}

/// Full validation of A and B with their structure digests, in one pass over each (B's
/// is A's when they are the same arrays). Runs on the current rayon pool (serially off the
/// workers).
pub fn validate_and_digest<O: Idx, I: Idx, V: Scalar>(
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<(u64, u64)> {
    let da = a.validate_and_digest("A")?;
    let db = if same_structure(a, b) {
        da
    } else {
        b.validate_and_digest("B")?
    };
    Ok((da, db))
}

/// With validation on, a numeric call's A and B still have the structure the plan was
/// made for: their digests match the plan's, or (a plan made without digests) they are
/// valid. Runs on the current rayon pool (serially off the workers).
pub fn check_structure<O: Idx, I: Idx, V: Scalar>(
    digests: Option<(u64, u64)>,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<()> {
    match digests {
        Some((da, db)) => {
            if a.structure_digest() != da {
                return err(
                    Status::PlanMismatch,
                    "A: structure differs from the one the plan was made for",
                );
            }
            let db_now = if same_structure(a, b) {
                da
            } else {
                b.structure_digest()
            };
            if db_now != db {
                return err(
                    Status::PlanMismatch,
                    "B: structure differs from the one the plan was made for",
                );
            }
            Ok(())
        }
        None => {
            a.validate("A")?;
            if !same_structure(a, b) {
                b.validate("B")?;
            }
            Ok(())
        }
    }
}

/// C's column index array has the plan's type and nnz(C) slots.
pub fn check_cols(cols: &IndexSliceMut<'_>, format: &OutputFormat, nnz: usize) -> Result<()> {
    if cols.kind() != format.indices {
        return err(
            Status::TypeMismatch,
            "C: column index type differs from the plan's",
        );
    }
    if cols.len() != nnz {
        return err(
            Status::InvalidValue,
            format!("C: {} column slots for {nnz} entries", cols.len()),
        );
    }
    Ok(())
}

/// Downcasts the caller's value array to `V` (checking type and length).
pub fn value_slice<'o, 'a, V: Scalar + FromAny<'a>>(
    v: ValueSliceMut<'o>,
    nnz: usize,
) -> Result<&'o mut [V]> {
    let kind = v.kind();
    let out = V::from_values_mut(v).ok_or_else(|| {
        Error::new(
            Status::TypeMismatch,
            format!(
                "C: values are {} but A and B hold {}",
                kind.name(),
                V::KIND.name()
            ),
        )
    })?;
    if out.len() != nnz {
        return err(
            Status::InvalidValue,
            format!("C: {} value slots for {nnz} entries", out.len()),
        );
    }
    Ok(out)
}

/// Rows of X and of Y for op(A) with A of shape `nrows` x `ncols`.
pub fn operand_rows(op: Op, nrows: usize, ncols: usize) -> (usize, usize) {
    let (m, n) = op.shape(nrows, ncols);
    (n, m)
}

/// Checks the leading dimension of a dense operand (`name`: "X" or "Y") of `rows` x `k`
/// and returns the number of entries it spans.
pub fn dense_extent(name: &str, layout: Layout, rows: usize, k: usize, ld: usize) -> Result<usize> {
    if k == 0 {
        // No column: nothing of the operand is read or written, whatever its stride.
        return Ok(0);
    }
    let (min_ld, what) = match layout {
        Layout::RowMajor => (k.max(1), "k (its row length)"),
        Layout::ColMajor => (rows.max(1), "its number of rows"),
    };
    if ld < min_ld {
        let ldname = if name == "X" { "ldx" } else { "ldy" };
        return err(
            Status::InvalidValue,
            format!(
                "{ldname} = {ld} is smaller than {what} = {min_ld} for {} {name} ({rows} x {k})",
                layout.name()
            ),
        );
    }
    dense_len(layout, rows, k, ld).ok_or_else(|| {
        Error::new(
            Status::IndexOverflow,
            format!("{name}: {rows} x {k} with leading dimension {ld} exceeds the address space"),
        )
    })
}

/// Entries needed by a dense operand of `rows` x `k` with leading dimension `ld`, or `None`
/// on overflow.
pub fn dense_len(layout: Layout, rows: usize, k: usize, ld: usize) -> Option<usize> {
    if rows == 0 || k == 0 {
        return Some(0);
    }
    match layout {
        Layout::RowMajor => (rows - 1).checked_mul(ld)?.checked_add(k),
        Layout::ColMajor => (k - 1).checked_mul(ld)?.checked_add(rows),
    }
}
