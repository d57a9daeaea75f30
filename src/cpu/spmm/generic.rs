//! SpMM for value types without vector kernels (complex): Y = alpha * op(A) * X + beta * Y
//! with op(A) = A, A^T or A^H (A^T's structure from the analysis or built here; A^H
//! conjugates A's values as they are read). Rows of Y are cut into chunks of about equal
//! entries run by [`for_each_part`]; each entry of Y is computed by one thread as
//! `alpha * s + beta * y` (Y not read when beta = 0), `s` summing its row of op(A) in
//! storage order from zero, so results are the same bits for any thread count, layout and
//! analysis. Blocks of A are checked (`SparseRows::check_rows`) before they are read unless
//! A was validated in full in the call.

use super::entry::{Analysis, Operands};
use super::rows::{CsrRows, SparseRows, TransposedRows};
use super::{BLOCK_NNZ, YPtr, block_end, chunk_bounds, chunk_count, dense_len, for_each_part};
use crate::common::csr::CsrRef;
use crate::common::options::{Layout, Op};
use crate::common::transpose::Transpose;
use crate::cpu::Ctx;
use crate::error::{Error, Result, Status};
use crate::types::{Idx, Scalar};

/// Columns of Y one pass over a row of op(A) computes (a register block of sums).
const COLS: usize = 8;

/// A product's dense side, as the row kernel reads it.
struct Out<'x, V> {
    layout: Layout,
    k: usize,
    alpha: V,
    beta: V,
    x: &'x [V],
    ldx: usize,
    x_rows: usize,
    y: YPtr<V>,
    ldy: usize,
    a_checked: bool,
}

impl<V: Scalar> Out<'_, V> {
    #[inline(always)]
    fn x_at(&self, r: usize, j: usize) -> usize {
        match self.layout {
            Layout::RowMajor => r * self.ldx + j,
            Layout::ColMajor => j * self.ldx + r,
        }
    }
    #[inline(always)]
    fn y_at(&self, r: usize, j: usize) -> usize {
        match self.layout {
            Layout::RowMajor => r * self.ldy + j,
            Layout::ColMajor => j * self.ldy + r,
        }
    }

    /// `alpha * s + beta * y` into Y(i, j), not reading Y when beta = 0.
    ///
    /// # Safety
    /// (i, j) lies in Y's checked shape and row i belongs to the calling part.
    #[inline(always)]
    unsafe fn store(&self, i: usize, j: usize, s: V) {
        // SAFETY: per the contract, the offset is inside Y and no other part writes it.
        unsafe {
            let y = self.y.at(self.y_at(i, j));
            *y = if self.beta == V::ZERO {
                self.alpha * s
            } else {
                self.alpha * s + self.beta * *y
            };
        }
    }
}

/// A^H: the rows of A^T with their values conjugated as they are read.
struct Conj<R>(R);

impl<V: Scalar, R: SparseRows<V>> SparseRows<V> for Conj<R> {
    #[inline(always)]
    fn nrows(&self) -> usize {
        self.0.nrows()
    }
    #[inline(always)]
    fn start(&self, i: usize) -> usize {
        self.0.start(i)
    }
    fn check_rows(&self, lo: usize, hi: usize, x_rows: usize) {
        self.0.check_rows(lo, hi, x_rows)
    }
    #[inline(always)]
    unsafe fn col(&self, p: usize) -> usize {
        // SAFETY: the caller's contract is the inner rows' own.
        unsafe { self.0.col(p) }
    }
    #[inline(always)]
    unsafe fn val(&self, p: usize) -> V {
        // SAFETY: as above.
        unsafe { self.0.val(p) }.conj()
    }
}

/// Y = alpha * op(A) * X + beta * Y on the CPU for any value type. `a_checked`: A was
/// validated in full in this call. `analysis`, if given, was made for A's structure and
/// an op with the same structure (A, or a transpose).
pub fn spmm<O: Idx, I: Idx, V: Scalar>(
    ctx: &Ctx<'_>,
    op: Op,
    (alpha, beta): (V, V),
    a: &CsrRef<'_, O, I, V>,
    analysis: Option<&Analysis>,
    a_checked: bool,
    d: Operands<'_, V>,
) -> Result<()> {
    let Operands {
        layout,
        k,
        x,
        ldx,
        x_rows,
        y,
        ldy,
    } = d;
    let y_rows = op.shape(a.nrows(), a.ncols()).0;
    if k == 0 || y_rows == 0 {
        return Ok(());
    }
    assert!(
        dense_len(layout, y_rows, k, ldy) == Some(y.len()),
        "Y storage does not match its shape"
    );
    let out = Out {
        layout,
        k,
        alpha,
        beta,
        x,
        ldx,
        x_rows,
        y: YPtr {
            ptr: y.as_mut_ptr(),
            len: y.len(),
        },
        ldy,
        a_checked,
    };
    if alpha == V::ZERO {
        scale(ctx, y_rows, &out);
        return Ok(());
    }
    assert!(
        dense_len(layout, x_rows, k, ldx) == Some(x.len()),
        "X storage does not match its shape"
    );
    let vals = a.values().ok_or_else(|| {
        Error::new(
            Status::InvalidValue,
            "A has no values (pattern-only descriptor); SpMM needs values",
        )
    })?;
    let bounds = analysis
        .filter(|an| an.threads == ctx.threads)
        .map(|an| an.bounds.as_slice());
    if op == Op::NonTranspose {
        run(ctx, &CsrRows { csr: *a, vals }, &out, bounds);
        return Ok(());
    }
    let owned;
    let t = match analysis.and_then(|an| an.transpose.as_ref()) {
        Some(t) => t,
        None => {
            owned = Transpose::build(a)?;
            &owned
        }
    };
    let rows = TransposedRows { t, vals };
    if op == Op::ConjugateTranspose {
        run(ctx, &Conj(rows), &out, bounds);
    } else {
        run(ctx, &rows, &out, bounds);
    }
    Ok(())
}

/// Rows of Y in parts over the handle's workers (the stored partition of an analysis when
/// it has several parts, else `chunk_count` parts cut on the fly), or on the calling thread
/// alone when the product is too small to split.
fn run<V: Scalar, R: SparseRows<V>>(
    ctx: &Ctx<'_>,
    a: &R,
    d: &Out<'_, V>,
    bounds: Option<&[usize]>,
) {
    let threads = ctx.threads;
    let stored = bounds.filter(|b| threads > 1 && b.len() > 2);
    let parts = match stored {
        Some(b) => b.len() - 1,
        None => chunk_count(a, d.k, threads),
    };
    let part = |c: usize| {
        let (lo, hi) = match stored {
            Some(b) => (b[c], b[c + 1]),
            None => chunk_bounds(a, c, parts),
        };
        rows(a, lo, hi, d);
    };
    // The pool is asked for only when the call splits: a small one starts no worker.
    match (parts > 1).then(|| ctx.pool_or_caller()).flatten() {
        Some(pool) => for_each_part(Some(pool), threads, parts, &part),
        None => (0..parts).for_each(part),
    }
}

/// Rows `[lo, hi)` of Y.
fn rows<V: Scalar, R: SparseRows<V>>(a: &R, lo: usize, hi: usize, d: &Out<'_, V>) {
    let mut b0 = lo;
    while b0 < hi {
        let b1 = block_end(a, b0, hi, BLOCK_NNZ);
        if !d.a_checked {
            a.check_rows(b0, b1, d.x_rows);
        }
        for i in b0..b1 {
            let (s, e) = (a.start(i), a.start(i + 1));
            let mut j0 = 0;
            while j0 < d.k {
                let w = COLS.min(d.k - j0);
                let mut acc = [V::ZERO; COLS];
                for p in s..e {
                    // SAFETY: p lies in row i, which passed `check_rows` against X's rows
                    // (or A was validated in full in this call).
                    let (c, v) = unsafe { (a.col(p), a.val(p)) };
                    for (jj, sum) in acc[..w].iter_mut().enumerate() {
                        *sum += v * d.x[d.x_at(c, j0 + jj)];
                    }
                }
                for (jj, &sum) in acc[..w].iter().enumerate() {
                    // SAFETY: i < nrows(op(A)) and j0 + jj < k: inside Y's shape (asserted
                    // in `spmm`); row i belongs to this part.
                    unsafe { d.store(i, j0 + jj, sum) };
                }
                j0 += w;
            }
        }
        b0 = b1;
    }
}

/// alpha = 0: Y = beta * Y (zero when beta = 0, Y not read); A and X are not read.
fn scale<V: Scalar>(ctx: &Ctx<'_>, y_rows: usize, d: &Out<'_, V>) {
    let work = y_rows.saturating_mul(d.k);
    let parts = if ctx.threads > 1 && work >= 1 << 15 {
        (ctx.threads * 8).min(y_rows)
    } else {
        1
    };
    let part = |c: usize| {
        let (lo, hi) = (y_rows * c / parts, y_rows * (c + 1) / parts);
        for i in lo..hi {
            for j in 0..d.k {
                // SAFETY: (i, j) inside Y's shape; row i belongs to this part.
                unsafe {
                    let y = d.y.at(d.y_at(i, j));
                    *y = if d.beta == V::ZERO {
                        V::ZERO
                    } else {
                        d.beta * *y
                    };
                }
            }
        }
    };
    match (parts > 1).then(|| ctx.pool_or_caller()).flatten() {
        Some(pool) => for_each_part(Some(pool), ctx.threads, parts, &part),
        None => (0..parts).for_each(part),
    }
}
