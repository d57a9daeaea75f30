//! Row-by-row (Gustavson) SpGEMM kernels: the symbolic phase counts the distinct columns
//! of each row of C; the numeric phase accumulates values and writes each row. Rows are
//! processed Thread-Sequentially in flop-balanced chunks; each worker uses its own
//! accumulator from the handle's workspace.

use rayon::prelude::*;

use crate::cpu::accum::Accumulator;
use crate::cpu::workspace::WorkspacePool;
use crate::csr::CsrRef;
use crate::error::{Result, Status, err};
use crate::types::{Idx, Scalar};

/// Which accumulator family a kernel runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccKind {
    Dense,
    Hash,
}

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

/// Symbolic kernel for one chunk: `out[i - rows.start]` = distinct columns of row i.
pub fn count_rows<V: Scalar, O: Idx, I: Idx, A: Accumulator<V>>(
    acc: &mut A,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    flop_prefix: &[u64],
    out: &mut [usize],
) {
    let r0 = rows.start;
    for i in rows {
        acc.begin_row((flop_prefix[i + 1] - flop_prefix[i]) as usize);
        for p in a.row_range(i) {
            for q in b.row_range(a.col(p)) {
                acc.insert_pattern(b.col(q));
            }
        }
        out[i - r0] = acc.len();
    }
}

/// Symbolic phase: fills `row_nnz[i]` with the number of distinct columns of row i of C.
#[allow(clippy::too_many_arguments)]
pub fn symbolic<O: Idx, I: Idx, V: Scalar>(
    pool: &WorkspacePool,
    kind: AccKind,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    chunks: &[usize],
    flop_prefix: &[u64],
    max_row: usize,
    row_nnz: &mut [usize],
) -> Result<()> {
    let k = b.ncols();
    let pieces = split_at_bounds(row_nnz, chunks);
    pieces
        .into_par_iter()
        .zip(chunks.par_windows(2))
        .try_for_each(|(out, w)| {
            pool.with(|ws| match kind {
                AccKind::Dense => {
                    let acc = ws.dense::<V>();
                    acc.prepare(k, max_row, false)?;
                    count_rows(acc, a, b, w[0]..w[1], flop_prefix, out);
                    Ok(())
                }
                AccKind::Hash => {
                    let acc = ws.hash::<V>();
                    acc.prepare(max_row, false)?;
                    count_rows(acc, a, b, w[0]..w[1], flop_prefix, out);
                    Ok(())
                }
            })
        })
}

/// Numeric kernel for one chunk of rows; `cols`/`vals` hold exactly those rows' entries.
#[allow(clippy::too_many_arguments)]
fn fill_rows<V: Scalar, O: Idx, I: Idx, J: Idx, A: Accumulator<V>>(
    acc: &mut A,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    rows: std::ops::Range<usize>,
    row_ptr: &[usize],
    sorted: bool,
    c_base: usize,
    cols: &mut [J],
    mut vals: Option<&mut [V]>,
) -> Result<()> {
    let off0 = row_ptr[rows.start];
    let values = match (a.values(), b.values(), vals.is_some()) {
        (Some(av), Some(bv), true) => Some((av, bv)),
        _ => None,
    };
    for i in rows {
        let (s, e) = (row_ptr[i] - off0, row_ptr[i + 1] - off0);
        acc.begin_row(e - s);
        match values {
            Some((av, bv)) => {
                for p in a.row_range(i) {
                    let aij = av[p];
                    for q in b.row_range(a.col(p)) {
                        acc.insert(b.col(q), aij * bv[q]);
                    }
                }
            }
            None => {
                for p in a.row_range(i) {
                    for q in b.row_range(a.col(p)) {
                        acc.insert_pattern(b.col(q));
                    }
                }
            }
        }
        if acc.len() != e - s {
            return err(
                Status::PlanMismatch,
                format!(
                    "row {i} of C has {} entries but the plan has {}: the structure of A or B changed since the symbolic phase",
                    acc.len(),
                    e - s
                ),
            );
        }
        acc.emit(
            sorted,
            c_base,
            &mut cols[s..e],
            vals.as_deref_mut().map(|v| &mut v[s..e]),
        );
    }
    Ok(())
}

/// Numeric phase: writes C's column indices (plus `c_base`) and, when `vals` is given and
/// A and B carry values, C's values.
#[allow(clippy::too_many_arguments)]
pub fn numeric<O: Idx, I: Idx, V: Scalar, J: Idx>(
    pool: &WorkspacePool,
    kind: AccKind,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
    chunks: &[usize],
    row_ptr: &[usize],
    max_row_nnz: usize,
    sorted: bool,
    c_base: usize,
    cols: &mut [J],
    vals: Option<&mut [V]>,
) -> Result<()> {
    let k = b.ncols();
    let with_values = vals.is_some();
    let starts: Vec<usize> = chunks.iter().map(|&r| row_ptr[r]).collect();
    let col_pieces = split_at_bounds(cols, &starts);
    let val_pieces: Vec<Option<&mut [V]>> = match vals {
        Some(v) => split_at_bounds(v, &starts).into_iter().map(Some).collect(),
        None => (0..col_pieces.len()).map(|_| None).collect(),
    };
    col_pieces
        .into_par_iter()
        .zip(val_pieces)
        .zip(chunks.par_windows(2))
        .try_for_each(|((cp, vp), w)| {
            pool.with(|ws| match kind {
                AccKind::Dense => {
                    let acc = ws.dense::<V>();
                    acc.prepare(k, max_row_nnz, with_values)?;
                    fill_rows(acc, a, b, w[0]..w[1], row_ptr, sorted, c_base, cp, vp)
                }
                AccKind::Hash => {
                    let acc = ws.hash::<V>();
                    acc.prepare(max_row_nnz, with_values)?;
                    fill_rows(acc, a, b, w[0]..w[1], row_ptr, sorted, c_base, cp, vp)
                }
            })
        })
}
