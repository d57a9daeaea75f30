//! The typed API: what Rust callers and the C ABI use. A [`Handle`] (options, the engine
//! with its workers and per-backend state, the output cache), borrowed CSR views, the
//! [`Plan`] of a product, SpMM and its analysis, library-owned results. Every product call
//! is guarded here once: a failure discards the backends' scratch and, with validation
//! off, is explained by validating the inputs afterwards.

mod dist;
mod handle;
pub mod output_cache;
pub mod owned;

pub use dist::*;
pub use handle::Handle;
pub use owned::{IndexVec, OffsetVec, OwnedCsr, ValueVec};

pub use crate::common::check::{dense_extent, operand_rows};
pub use crate::common::csr::{
    AnyCsr, CsrRef, FromAny, IndexSlice, OffsetSlice, OneOp, PairOp, TypeSig, ValueSlice,
    dispatch_one, dispatch_pair, prefix,
};
pub use crate::common::device::{DeviceCsr, DeviceOut, DevicePtr};
pub use crate::common::options::{
    Algorithm, Backend, InputShape, Layout, Op, Options, OutputFormat,
};
pub use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
pub use crate::common::split::{How, Rates, Split};
pub use crate::exec::tuning;
pub use crate::exec::{
    AUTO_MIN_INPUT_NNZ, CpuDetails, DenseArgs, NumericInputs, NumericOutputs, Plan, PlanKind,
    SpmmAnalysis,
};
pub use crate::exec::{kernel_cache_dir, set_kernel_cache_dir};
pub use crate::platform::caches::{Caches, caches as cache_sizes};
pub use crate::platform::topo::chunk::{ChunkLedger, ChunkSummary};
pub use crate::platform::topo::info::BindOutcome;
pub use crate::platform::topo::{BindPolicy, HbmBudget, HbmMode, MachineDesc, Placement, Topo};
pub use crate::platform::workers::{MAX_THREADS, PROC_BIND_ENV, default_threads};

use crate::common::memory::{Footprint, bytes};
use crate::error::Result;
use crate::exec;
use crate::types::AnyScalar;

/// Symbolic phase: the structure of C = A*B, as a reusable plan.
pub fn symbolic(h: &Handle, a: &AnyCsr<'_>, b: &AnyCsr<'_>, format: OutputFormat) -> Result<Plan> {
    symbolic_op(h, Op::NonTranspose, a, Op::NonTranspose, b, format)
}

/// Symbolic phase of C = op_a(A) * op_b(B) (each op A, A^T or A^H), as a reusable plan:
/// the plan keeps the transposed structure of each transposed operand (with the
/// permutation of its entries), so [`numeric`] with new values of A or B costs one
/// gather of their values on top of the product. Validation and the plan's structure
/// checks concern A and B as given. Transposed operands and complex values run on the
/// CPU (`NotSupported` under [`Backend::Cuda`]).
pub fn symbolic_op(
    h: &Handle,
    op_a: Op,
    a: &AnyCsr<'_>,
    op_b: Op,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    h.guarded(&[("A", a), ("B", b)], || {
        exec::symbolic(h.engine(), &h.options, (op_a, a), (op_b, b), format)
    })
}

/// Numeric phase: fills C's column indices and (if `vals` is given) values. Calling it
/// again after A's or B's values changed reuses the plan, whatever its ops.
pub fn numeric(
    h: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    h.guarded(&[("A", a), ("B", b)], || {
        exec::numeric(h.engine(), &h.options, plan, a, b, cols, vals)
    })
}

/// Writes C's row offsets (in the plan's format) into `out` (length m + 1), on the
/// calling thread.
pub fn write_row_offsets(plan: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
    crate::panics::catch(|| exec::write_row_offsets(plan, out))
}

/// [`write_row_offsets`] on the handle's workers (on the calling thread when they are
/// fewer than one parallel piece: not worth waking the workers).
pub fn write_row_offsets_on(h: &Handle, plan: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
    if plan.small() || plan.nrows() < exec::ROW_OFFSETS_MIN_PAR {
        return write_row_offsets(plan, out);
    }
    crate::panics::catch(|| h.install(|| exec::write_row_offsets(plan, out))?)
}

/// One-call product into library-owned arrays.
pub fn multiply(
    h: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<OwnedCsr> {
    multiply_op(h, Op::NonTranspose, a, Op::NonTranspose, b, format)
}

/// One-call product C = op_a(A) * op_b(B) into library-owned arrays.
pub fn multiply_op(
    h: &Handle,
    op_a: Op,
    a: &AnyCsr<'_>,
    op_b: Op,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<OwnedCsr> {
    let plan = h.guarded(&[("A", a), ("B", b)], || {
        exec::symbolic_one_shot(h.engine(), &h.options, (op_a, a), (op_b, b), format)
    })?;
    // What the symbolic phase left (the plan, the workspace it grew) is held while C is
    // filled: part of this call's peak, counted at the symbolic phase's own estimate.
    let mut held = Footprint::default();
    if h.options.memory_limit > 0 {
        held = h.guarded(&[("A", a), ("B", b)], || {
            exec::symbolic_estimate(h.engine(), &h.options, (op_a, a), (op_b, b))
        })?;
    }
    numeric_owned_holding(h, &plan, a, b, (held, true))
}

/// Numeric phase into arrays the library owns, taken from the handle's cache of arrays
/// of destroyed results when one fits (see [`output_cache`]); the result gives them back
/// when dropped. Pattern-only when A or B has no values.
pub fn numeric_owned(h: &Handle, plan: &Plan, a: &AnyCsr<'_>, b: &AnyCsr<'_>) -> Result<OwnedCsr> {
    numeric_owned_holding(h, plan, a, b, (Footprint::default(), false))
}

/// [`numeric_owned`] whose memory estimate also counts `held` (what the call made before);
/// `checked`: the call's own symbolic phase has just validated A and B (with validation
/// on), so their structure is not checked against the plan again.
fn numeric_owned_holding(
    h: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    (mut held, checked): (Footprint, bool),
) -> Result<OwnedCsr> {
    let cache = &h.outputs;
    let format = plan.format();
    let with_values = a.values.is_some() && b.values.is_some();
    if h.options.memory_limit > 0 {
        // C's arrays (counted even when the cache has arrays to give) and the numeric
        // phase's own estimate, before anything is taken or allocated.
        let (m1, nnz) = (plan.nrows().saturating_add(1), plan.nnz());
        held.add("row offsets of C", bytes(m1, format.offsets.size()));
        held.add("column indices of C", bytes(nnz, format.indices.size()));
        if with_values {
            held.add("values of C", bytes(nnz, a.value_type.size()));
        }
        let numeric = h.guarded(&[("A", a), ("B", b)], || {
            exec::numeric_footprint(h.engine(), &h.options, plan, (a, b), with_values)
        })?;
        held.merge(numeric);
        held.check(
            h.options.memory_limit,
            "the numeric phase into library-owned arrays",
        )?;
    }
    // Built before the product so that an error gives the arrays back.
    let mut c = OwnedCsr {
        nrows: plan.nrows(),
        ncols: plan.ncols(),
        base: format.base,
        offsets: OffsetVec::take(cache, format.offsets, plan.nrows() + 1)?,
        indices: IndexVec::take(cache, format.indices, plan.nnz())?,
        values: None,
        value_type: a.value_type,
        recycle: Some(cache.clone()),
    };
    if with_values {
        c.values = Some(ValueVec::take(cache, a.value_type, plan.nnz())?);
    }
    write_row_offsets_on(h, plan, c.offsets.as_mut())?;
    let o = Options {
        validate: h.options.validate && !checked,
        ..h.options
    };
    let (cols, vals) = (c.indices.as_mut(), c.values.as_mut().map(|v| v.as_mut()));
    h.guarded(&[("A", a), ("B", b)], || {
        exec::numeric(h.engine(), &o, plan, a, b, cols, vals)
    })?;
    Ok(c)
}

/// Symbolic phase of A and B in device memory (see [`exec::symbolic_device`]).
pub fn symbolic_device(
    h: &Handle,
    a: &DeviceCsr,
    b: &DeviceCsr,
    format: OutputFormat,
) -> Result<Plan> {
    h.guarded(&[], || {
        exec::symbolic_device(h.engine(), &h.options, a, b, format)
    })
}

/// Numeric phase with inputs or outputs (or both) in device memory.
pub fn numeric_device(
    h: &Handle,
    plan: &Plan,
    inputs: NumericInputs<'_, '_>,
    outputs: NumericOutputs<'_>,
) -> Result<()> {
    let hosts: Vec<(&str, &AnyCsr<'_>)> = match &inputs {
        NumericInputs::Host(a, b) => vec![("A", *a), ("B", *b)],
        NumericInputs::Device(..) => Vec::new(),
    };
    h.guarded(&hosts, || {
        exec::numeric_device(h.engine(), &h.options, plan, inputs, outputs)
    })
}

/// Y = alpha * op(A) * X + beta * Y (see [`exec::spmm`]), alpha and beta converted to A's
/// value type (a complex type takes them as real parts).
pub fn spmm(
    h: &Handle,
    op: Op,
    alpha: f64,
    a: &AnyCsr<'_>,
    analysis: Option<&SpmmAnalysis>,
    beta: f64,
    d: DenseArgs<'_>,
) -> Result<()> {
    let alpha = AnyScalar::from_f64(a.value_type, alpha);
    let beta = AnyScalar::from_f64(a.value_type, beta);
    spmm_scaled(h, op, alpha, a, analysis, beta, d)
}

/// Y = alpha * op(A) * X + beta * Y with alpha and beta of A's value type (complex ones
/// for complex A; else `TypeMismatch`).
pub fn spmm_scaled(
    h: &Handle,
    op: Op,
    alpha: AnyScalar,
    a: &AnyCsr<'_>,
    analysis: Option<&SpmmAnalysis>,
    beta: AnyScalar,
    d: DenseArgs<'_>,
) -> Result<()> {
    h.guarded(&[("A", a)], || {
        exec::spmm(h.engine(), &h.options, (op, alpha, beta), a, analysis, d)
    })
}

/// The analysis of A for repeated SpMMs with `op` (see [`SpmmAnalysis`]).
pub fn analyse(
    h: &Handle,
    op: Op,
    a: &AnyCsr<'_>,
    layout: Layout,
    k_hint: usize,
) -> Result<SpmmAnalysis> {
    h.guarded(&[("A", a)], || {
        exec::analyse(h.engine(), &h.options, op, a, layout, k_hint)
    })
}
