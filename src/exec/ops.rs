//! op(A) and op(B) of a product (A, A^T or A^H), composed by the dispatcher as the hybrid
//! is: at symbolic time the plan keeps, for each transposed operand, its transposed
//! structure in the operand's own offset and index types (0-based; a stable counting sort,
//! [`crate::common::transpose`]) with the permutation from the transpose's entries to the
//! operand's; each numeric call gathers the operand's current values through the
//! permutation (conjugated for A^H) into a buffer the plan owns, O(nnz) per call, and the
//! backend multiplies the transposed views as ordinary CSR matrices, so the plan's reuse
//! machinery holds as for any product (same structure, new values). Only the CPU runs
//! such products. Validation and the structure digests apply to the caller's A and B.

use std::any::Any;

use parking_lot::Mutex;
use rayon::prelude::*;

use super::engine::Engine;
use crate::common::csr::{CsrRef, Pattern};
use crate::common::memory::{Footprint, bytes_of};
use crate::common::options::Op;
use crate::common::transpose::Transpose;
use crate::error::{Error, Result, Status};
use crate::platform::alloc::try_with_capacity;
use crate::types::{Idx, Scalar};

/// Values per piece of the parallel gather of a transposed operand's values.
const GATHER_MIN_PAR: usize = 1 << 14;

/// A transposed operand of a plan.
pub(crate) struct Transposed {
    op: Op,
    /// The `Transpose<O, I>` of the operand (its offset and index types).
    structure: Box<dyn Any + Send + Sync>,
    nrows: usize,
    ncols: usize,
    /// The last numeric call's gathered values (a `Vec<V>`), reused by the next.
    values: Mutex<Option<Box<dyn Any + Send>>>,
    /// Bytes of the structure (for the plan's report).
    bytes: usize,
}

/// op(A) and op(B) of a plan, with the transposed operands' structures.
#[derive(Default)]
pub(crate) struct Ops {
    pub a: Option<Transposed>,
    pub b: Option<Transposed>,
}

impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ops({:?}, {:?})", self.op_a(), self.op_b())
    }
}

impl Ops {
    /// Builds the transposes op(A) and op(B) ask for (A and B checked: their columns in
    /// range when validation is on; the transpose rechecks them anyway).
    pub fn new<O: Idx, I: Idx>(
        (op_a, a): (Op, &CsrRef<'_, O, I, Pattern>),
        (op_b, b): (Op, &CsrRef<'_, O, I, Pattern>),
    ) -> Result<Ops> {
        let part = |op: Op, m: &CsrRef<'_, O, I, Pattern>, name: &str| -> Result<_> {
            if !op.transposes() {
                return Ok(None);
            }
            let t = Transpose::<O, I>::of(m, name)?;
            let bytes = t.offsets.len() * std::mem::size_of::<O>()
                + t.rows.len() * std::mem::size_of::<I>()
                + t.perm.len() * std::mem::size_of::<usize>();
            Ok(Some(Transposed {
                op,
                structure: Box::new(t),
                nrows: m.ncols(),
                ncols: m.nrows(),
                values: Mutex::new(None),
                bytes,
            }))
        };
        Ok(Ops {
            a: part(op_a, a, "A")?,
            b: part(op_b, b, "B")?,
        })
    }

    /// Bytes [`Ops::new`] may allocate for these ops: each transpose at its peak.
    pub fn footprint<O: Idx, I: Idx>(
        (op_a, a): (Op, &CsrRef<'_, O, I, Pattern>),
        (op_b, b): (Op, &CsrRef<'_, O, I, Pattern>),
    ) -> Footprint {
        let mut f = Footprint::default();
        for (op, m, what) in [(op_a, a, "transpose of A"), (op_b, b, "transpose of B")] {
            if op.transposes() {
                f.add(what, Transpose::<O, I>::peak_bytes(m.ncols(), m.nnz()));
            }
        }
        f
    }

    /// Bytes [`Ops::with_operands`] may allocate: the gathered values of each transposed
    /// operand (`nnz` = A's and B's entries).
    pub fn values_footprint<V: Scalar>(&self, (a_nnz, b_nnz): (usize, usize)) -> Footprint {
        let mut f = Footprint::default();
        if self.a.is_some() {
            f.add("gathered values of A", bytes_of::<V>(a_nnz));
        }
        if self.b.is_some() {
            f.add("gathered values of B", bytes_of::<V>(b_nnz));
        }
        f
    }

    pub fn op_a(&self) -> Op {
        self.a.as_ref().map_or(Op::NonTranspose, |t| t.op)
    }
    pub fn op_b(&self) -> Op {
        self.b.as_ref().map_or(Op::NonTranspose, |t| t.op)
    }

    /// Bytes the plan keeps for the transposes' structures (the gathered values add nnz
    /// values per transposed operand once a numeric call ran).
    pub fn bytes(&self) -> usize {
        [&self.a, &self.b]
            .into_iter()
            .flatten()
            .map(|t| t.bytes)
            .sum()
    }

    /// The transposes are those of A's and B's structure as given now: the check of a
    /// plan made without structure digests when validation is on (A and B validated
    /// first). O(nnz) per transposed operand, on the current pool; `PlanMismatch` naming
    /// the first entry that moved.
    pub fn check_structure<O: Idx, I: Idx, V: Scalar>(
        &self,
        a: &CsrRef<'_, O, I, V>,
        b: &CsrRef<'_, O, I, V>,
    ) -> Result<()> {
        for (t, m, name) in [(&self.a, a, "A"), (&self.b, b, "B")] {
            let Some(t) = t else { continue };
            if let Some((p, i, j)) = t.structure::<O, I>()?.first_difference(m) {
                return Err(Error::new(
                    Status::PlanMismatch,
                    format!(
                        "{name}: structure differs from the one the plan was made for: its \
                         entry at position {p} is no longer in row {i}, column {j} (0-based) \
                         as in the {} the plan keeps (made with validation off, the plan \
                         has no digests)",
                        t.op.of(name)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Calls `f` with op(A) and op(B): A and B themselves, or their transposes with this
    /// call's values of A and B gathered (when `values`; else structure-only views).
    pub fn with_operands<O, I, V, R>(
        &self,
        e: &Engine,
        (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
        values: bool,
        f: impl FnOnce(&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>) -> Result<R>,
    ) -> Result<R>
    where
        O: Idx,
        I: Idx,
        V: Scalar,
    {
        // Locked in the order A, B by every call: concurrent calls on a plan cannot
        // deadlock, and each call's gathered values stay its own until `f` returns.
        let mut ga = self.a.as_ref().map(|t| t.values.lock());
        let mut gb = self.b.as_ref().map(|t| t.values.lock());
        if values {
            if let (Some(t), Some(g), Some(src)) = (&self.a, ga.as_deref_mut(), a.values()) {
                t.gather::<O, I, V>(e, src, g)?;
            }
            if let (Some(t), Some(g), Some(src)) = (&self.b, gb.as_deref_mut(), b.values()) {
                t.gather::<O, I, V>(e, src, g)?;
            }
        }
        let va = match (&self.a, ga.as_deref()) {
            (Some(t), Some(g)) => {
                Some(t.view::<O, I, V>(gathered(g, values && a.values().is_some()))?)
            }
            _ => None,
        };
        let vb = match (&self.b, gb.as_deref()) {
            (Some(t), Some(g)) => {
                Some(t.view::<O, I, V>(gathered(g, values && b.values().is_some()))?)
            }
            _ => None,
        };
        f(va.as_ref().unwrap_or(a), vb.as_ref().unwrap_or(b))
    }
}

/// The values the last gather left in a transposed operand's buffer (when `want`).
fn gathered<V: Scalar>(g: &Option<Box<dyn Any + Send>>, want: bool) -> Option<&[V]> {
    if !want {
        return None;
    }
    g.as_ref()?.downcast_ref::<Vec<V>>().map(|v| &v[..])
}

impl Transposed {
    fn structure<O: Idx, I: Idx>(&self) -> Result<&Transpose<O, I>> {
        self.structure
            .downcast_ref::<Transpose<O, I>>()
            .ok_or_else(|| {
                Error::new(
                    Status::Internal,
                    "a transposed operand's index types differ from the plan's",
                )
            })
    }

    /// The transposed view over the plan's structure and `vals` (in transposed order).
    fn view<'v, O: Idx, I: Idx, V: Scalar>(
        &'v self,
        vals: Option<&'v [V]>,
    ) -> Result<CsrRef<'v, O, I, V>> {
        let t = self.structure::<O, I>()?;
        CsrRef::new(self.nrows, self.ncols, 0, &t.offsets, &t.rows, vals)
    }

    /// Gathers `src` (the operand's values, in its storage order) into `buf` in transposed
    /// order, conjugated for A^H; `buf` holds a `Vec<V>` of nnz values afterwards.
    fn gather<O: Idx, I: Idx, V: Scalar>(
        &self,
        e: &Engine,
        src: &[V],
        buf: &mut Option<Box<dyn Any + Send>>,
    ) -> Result<()> {
        let perm = &self.structure::<O, I>()?.perm;
        let n = perm.len();
        if src.len() < n {
            return Err(Error::new(
                Status::InvalidStructure,
                format!("{} values for {n} entries", src.len()),
            ));
        }
        if !buf.as_ref().is_some_and(|b| b.is::<Vec<V>>()) {
            let mut v: Vec<V> = try_with_capacity(n, "values of a transposed operand")?;
            v.resize(n, V::ZERO);
            *buf = Some(Box::new(v));
        }
        let out = buf
            .as_mut()
            .and_then(|b| b.downcast_mut::<Vec<V>>())
            .expect("made above");
        let conj = self.op == Op::ConjugateTranspose;
        let put = |(o, &p): (&mut V, &usize)| *o = if conj { src[p].conj() } else { src[p] };
        if n < GATHER_MIN_PAR {
            // One piece either way: no worker to wake.
            out.iter_mut().zip(perm).for_each(put);
        } else {
            e.install(|| {
                out.par_iter_mut()
                    .zip(perm.par_iter())
                    .with_min_len(GATHER_MIN_PAR)
                    .for_each(put);
            })?;
        }
        Ok(())
    }
}
