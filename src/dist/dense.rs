//! Dense blocks: copies between differently strided views, the final
//! `Y = alpha * S + beta * Y` update, and packed blocks (one contiguous rows x cols block
//! each, in the product's layout, so a block is one MPI message and one kernel operand).

use super::node::{DistScalar, Layout};
use crate::error::Result;

/// Leading dimension of a packed `rows x cols` block.
pub fn packed_ld(layout: Layout, rows: usize, cols: usize) -> usize {
    match layout {
        Layout::RowMajor => cols.max(1),
        Layout::ColMajor => rows.max(1),
    }
}

#[inline(always)]
fn at(layout: Layout, ld: usize, r: usize, c: usize) -> usize {
    match layout {
        Layout::RowMajor => r * ld + c,
        Layout::ColMajor => c * ld + r,
    }
}

/// A strided view's placement: the matrix at `ld`, the block's top-left corner.
#[derive(Clone, Copy, Debug)]
pub struct Place {
    pub ld: usize,
    pub r0: usize,
    pub c0: usize,
}

/// Copies a `rows x cols` block.
pub fn copy_block<V: Copy>(
    layout: Layout,
    src: &[V],
    s: Place,
    dst: &mut [V],
    d: Place,
    rows: usize,
    cols: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    match layout {
        Layout::RowMajor => {
            for r in 0..rows {
                let a = at(layout, s.ld, s.r0 + r, s.c0);
                let b = at(layout, d.ld, d.r0 + r, d.c0);
                dst[b..b + cols].copy_from_slice(&src[a..a + cols]);
            }
        }
        Layout::ColMajor => {
            for c in 0..cols {
                let a = at(layout, s.ld, s.r0, s.c0 + c);
                let b = at(layout, d.ld, d.r0, d.c0 + c);
                dst[b..b + rows].copy_from_slice(&src[a..a + rows]);
            }
        }
    }
}

/// `dst = alpha * src + beta * dst` on a block; with beta = 0 `dst` is not read (so NaN
/// there does not leak), as in the node kernels' store.
#[allow(clippy::too_many_arguments)]
pub fn axpby_block<V: DistScalar>(
    layout: Layout,
    alpha: V,
    src: &[V],
    s: Place,
    beta: V,
    dst: &mut [V],
    d: Place,
    rows: usize,
    cols: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let run = |a: usize, b: usize, n: usize, dst: &mut [V]| {
        let (sv, dv) = (&src[a..a + n], &mut dst[b..b + n]);
        if beta == V::ZERO {
            for (y, &x) in dv.iter_mut().zip(sv) {
                *y = alpha * x;
            }
        } else {
            for (y, &x) in dv.iter_mut().zip(sv) {
                *y = alpha * x + beta * *y;
            }
        }
    };
    match layout {
        Layout::RowMajor => {
            for r in 0..rows {
                run(
                    at(layout, s.ld, s.r0 + r, s.c0),
                    at(layout, d.ld, d.r0 + r, d.c0),
                    cols,
                    dst,
                );
            }
        }
        Layout::ColMajor => {
            for c in 0..cols {
                run(
                    at(layout, s.ld, s.r0, s.c0 + c),
                    at(layout, d.ld, d.r0, d.c0 + c),
                    rows,
                    dst,
                );
            }
        }
    }
}

/// `y = beta * y` on the caller's block (alpha = 0: A and X are not read); beta = 0 writes
/// zeros without reading.
pub fn scale_block<V: DistScalar>(
    layout: Layout,
    beta: V,
    y: &mut [V],
    ld: usize,
    rows: usize,
    cols: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let (outer, inner) = match layout {
        Layout::RowMajor => (rows, cols),
        Layout::ColMajor => (cols, rows),
    };
    for o in 0..outer {
        for v in &mut y[o * ld..o * ld + inner] {
            *v = if beta == V::ZERO { V::ZERO } else { beta * *v };
        }
    }
}

/// Entries a `rows x cols` view with leading dimension `ld` spans (0 if empty).
pub fn extent(layout: Layout, rows: usize, cols: usize, ld: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    match layout {
        Layout::RowMajor => (rows - 1).checked_mul(ld)?.checked_add(cols),
        Layout::ColMajor => (cols - 1).checked_mul(ld)?.checked_add(rows),
    }
}

/// Packed blocks in one buffer: block b is `rows x cols` at `off`.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    pub meta: Vec<BlockMeta>,
    pub len: usize,
}

#[derive(Clone, Copy, Debug)]
pub struct BlockMeta {
    pub off: usize,
    pub rows: usize,
    pub cols: usize,
}

impl Blocks {
    /// Appends a block; returns its index.
    pub fn push(&mut self, rows: usize, cols: usize) -> usize {
        self.meta.push(BlockMeta {
            off: self.len,
            rows,
            cols,
        });
        self.len += rows * cols;
        self.meta.len() - 1
    }
    pub fn range(&self, b: usize) -> std::ops::Range<usize> {
        let m = self.meta[b];
        m.off..m.off + m.rows * m.cols
    }
}

/// A `Vec` of `len` zeros, or `Status::AllocFailed`.
pub fn zeros<V: Clone + Default>(len: usize, what: &str) -> Result<Vec<V>> {
    crate::platform::alloc::try_filled(len, V::default(), what)
}
