//! Execution layer: checks a product against its plan, picks the algorithm and runs the
//! CPU kernels on the handle's pool. Entry points take type-erased matrices and reach the
//! generic kernels through `dispatch_pair`.

use rayon::prelude::*;

use crate::alloc::try_filled;
use crate::cpu::gustavson::{self, AccKind};
use crate::cpu::partition::{balanced_chunks, flop_profile};
use crate::csr::{AnyCsr, CsrRef, FromAny, PairOp, dispatch_pair};
use crate::error::{Error, Result, Status, err};
use crate::handle::{Algorithm, Handle};
use crate::output::{
    IndexSliceMut, IndexVec, OffsetSliceMut, OffsetVec, OwnedCsr, ValueSliceMut, ValueVec,
};
use crate::plan::{InputShape, OutputFormat, Plan};
use crate::types::{Idx, IndexType, Scalar};

/// The paper's cut-off: dense accumulators up to this many columns of C.
pub const DENSE_MAX_COLS: usize = 250_000;

/// Chooses the accumulator for each phase. An explicit choice is honoured when possible.
pub fn select(requested: Algorithm, k: usize) -> Result<(Algorithm, Algorithm)> {
    let dense_ok = k <= u32::MAX as usize;
    match requested {
        Algorithm::Auto => {
            let alg = if k <= DENSE_MAX_COLS {
                Algorithm::Dense
            } else {
                Algorithm::LinearProbe
            };
            Ok((alg, alg))
        }
        Algorithm::Dense if !dense_ok => err(
            Status::NotSupported,
            format!("the dense accumulator needs at most 2^32-1 columns in C, B has {k}"),
        ),
        alg => Ok((alg, alg)),
    }
}

fn acc_kind(alg: Algorithm) -> AccKind {
    match alg {
        Algorithm::Dense => AccKind::Dense,
        _ => AccKind::Hash,
    }
}

pub(crate) fn check_format(format: &OutputFormat, k: usize) -> Result<()> {
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

struct SymbolicOp<'h> {
    handle: &'h Handle,
    format: OutputFormat,
}

impl PairOp for SymbolicOp<'_> {
    type Out = Plan;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Plan>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let h = self.handle;
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
        let k = b.ncols();
        check_format(&self.format, k)?;
        let (symbolic_alg, numeric_alg) = select(h.options.algorithm, k)?;
        h.install(|| {
            let digests = if h.options.validate {
                a.validate("A")?;
                b.validate("B")?;
                Some((a.structure_digest(), b.structure_digest()))
            } else {
                None
            };
            let profile = flop_profile(&a, &b)?;
            let chunks = balanced_chunks(&profile.prefix, h.threads());
            let m = a.nrows();
            let mut row_ptr = try_filled(m + 1, 0usize, "row offsets of C")?;
            gustavson::symbolic(
                &h.workspace,
                acc_kind(symbolic_alg),
                &a,
                &b,
                &chunks,
                &profile.prefix,
                profile.max_row.min(k as u64) as usize,
                &mut row_ptr[1..],
            )?;
            let max_row_nnz = row_ptr[1..].par_iter().copied().max().unwrap_or(0);
            // The sum cannot overflow usize: each row count is at most its flops, and the
            // flops were summed in u64 without overflow.
            for i in 0..m {
                row_ptr[i + 1] += row_ptr[i];
            }
            let nnz = row_ptr[m];
            let limit = self.format.offsets.max_usize() - self.format.base;
            if nnz > limit {
                return err(
                    Status::IndexOverflow,
                    format!(
                        "C has {nnz} entries, more than {} row offsets can address ({limit})",
                        self.format.offsets.name()
                    ),
                );
            }
            let chunks = balanced_chunks(&profile.prefix, h.threads());
            Ok(Plan {
                shape: InputShape {
                    sig: a_sig::<O, I, V>(),
                    a_nrows: a.nrows(),
                    a_ncols: a.ncols(),
                    b_ncols: b.ncols(),
                    a_nnz: a.nnz(),
                    b_nnz: b.nnz(),
                    a_base: a.base(),
                    b_base: b.base(),
                },
                digests,
                format: self.format,
                row_ptr,
                chunks,
                flops: profile.total(),
                max_row_flops: profile.max_row,
                max_row_nnz,
                symbolic_alg,
                numeric_alg,
                sorted: h.options.sorted_output,
                gpu: None,
            })
        })
    }
}

pub(crate) fn a_sig<O: Idx, I: Idx, V: Scalar>() -> crate::csr::TypeSig {
    crate::csr::TypeSig {
        offsets: O::KIND,
        indices: I::KIND,
        values: V::KIND,
    }
}

/// Symbolic phase: the structure of C = A*B, as a reusable plan.
pub fn symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    if let Some(r) = crate::cuda::try_symbolic(handle, a, b, format) {
        return r;
    }
    dispatch_pair(a, b, SymbolicOp { handle, format })
}

/// Writes C's row offsets (in the plan's format) into `out` (length m + 1).
pub fn write_row_offsets(plan: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
    fn fill<T: Idx>(row_ptr: &[usize], base: usize, out: &mut [T]) -> Result<()> {
        if out.len() != row_ptr.len() {
            return err(
                Status::InvalidValue,
                format!(
                    "C: row offsets array has {} entries, expected {}",
                    out.len(),
                    row_ptr.len()
                ),
            );
        }
        // Range checked at symbolic time (nnz + base fits T).
        out.par_iter_mut()
            .zip(row_ptr.par_iter())
            .with_min_len(4096)
            .for_each(|(o, &r)| {
                *o = T::try_from_usize(r + base).expect("checked at symbolic time")
            });
        Ok(())
    }
    let base = plan.format.base;
    match out {
        OffsetSliceMut::I32(o) if plan.format.offsets == IndexType::Int32 => {
            fill(&plan.row_ptr, base, o)
        }
        OffsetSliceMut::I64(o) if plan.format.offsets == IndexType::Int64 => {
            fill(&plan.row_ptr, base, o)
        }
        OffsetSliceMut::U64(o) if plan.format.offsets == IndexType::SizeT => {
            fill(&plan.row_ptr, base, o)
        }
        _ => err(
            Status::TypeMismatch,
            "C: row offsets type differs from the plan's",
        ),
    }
}

/// Checks that A and B have the shape, types and (when validating) structure of the plan.
fn check_against_plan<O: Idx, I: Idx, V: Scalar>(
    h: &Handle,
    plan: &Plan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<()> {
    let s = &plan.shape;
    if a_sig::<O, I, V>() != s.sig {
        return err(
            Status::TypeMismatch,
            format!(
                "inputs have {} but the plan was made for {}",
                a_sig::<O, I, V>(),
                s.sig
            ),
        );
    }
    let now = (
        a.nrows(),
        a.ncols(),
        b.ncols(),
        a.nnz(),
        b.nnz(),
        a.base(),
        b.base(),
    );
    let then = (
        s.a_nrows, s.a_ncols, s.b_ncols, s.a_nnz, s.b_nnz, s.a_base, s.b_base,
    );
    if now != then {
        return err(
            Status::PlanMismatch,
            format!(
                "inputs are A {}x{} nnz {} base {}, B {}x{} nnz {} base {}; the plan was made for A {}x{} nnz {} base {}, B {}x{} nnz {} base {}",
                now.0,
                now.1,
                now.3,
                now.5,
                now.1,
                now.2,
                now.4,
                now.6,
                then.0,
                then.1,
                then.3,
                then.5,
                then.1,
                then.2,
                then.4,
                then.6
            ),
        );
    }
    if h.options.validate {
        match plan.digests {
            Some((da, db)) => {
                if a.structure_digest() != da {
                    return err(
                        Status::PlanMismatch,
                        "A: structure differs from the one the plan was made for",
                    );
                }
                if b.structure_digest() != db {
                    return err(
                        Status::PlanMismatch,
                        "B: structure differs from the one the plan was made for",
                    );
                }
            }
            None => {
                a.validate("A")?;
                b.validate("B")?;
            }
        }
    }
    Ok(())
}

struct NumericOp<'h, 'o> {
    handle: &'h Handle,
    plan: &'h Plan,
    cols: IndexSliceMut<'o>,
    vals: Option<ValueSliceMut<'o>>,
}

impl PairOp for NumericOp<'_, '_> {
    type Out = ();
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<()>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let (h, plan) = (self.handle, self.plan);
        if self.vals.is_some() {
            if a.values().is_none() {
                return err(
                    Status::InvalidValue,
                    "A has no values (pattern-only descriptor)",
                );
            }
            if b.values().is_none() {
                return err(
                    Status::InvalidValue,
                    "B has no values (pattern-only descriptor)",
                );
            }
        }
        let nnz = plan.nnz();
        if self.cols.kind() != plan.format.indices {
            return err(
                Status::TypeMismatch,
                "C: column index type differs from the plan's",
            );
        }
        if self.cols.len() != nnz {
            return err(
                Status::InvalidValue,
                format!("C: {} column slots for {nnz} entries", self.cols.len()),
            );
        }
        let vals: Option<&mut [V]> = match self.vals {
            None => None,
            Some(v) => Some(value_slice::<V>(v, nnz)?),
        };
        h.install(|| {
            check_against_plan(h, plan, &a, &b)?;
            if let Some(g) = plan.gpu.as_deref() {
                return crate::cuda::gpu_numeric(h, plan, g, &a, &b, self.cols, vals);
            }
            let kind = acc_kind(plan.numeric_alg);
            let run = |cols: IndexSliceMut<'_>, vals: Option<&mut [V]>| match cols {
                IndexSliceMut::I32(c) => gustavson::numeric(
                    &h.workspace,
                    kind,
                    &a,
                    &b,
                    &plan.chunks,
                    &plan.row_ptr,
                    plan.max_row_nnz,
                    plan.sorted,
                    plan.format.base,
                    c,
                    vals,
                ),
                IndexSliceMut::I64(c) => gustavson::numeric(
                    &h.workspace,
                    kind,
                    &a,
                    &b,
                    &plan.chunks,
                    &plan.row_ptr,
                    plan.max_row_nnz,
                    plan.sorted,
                    plan.format.base,
                    c,
                    vals,
                ),
            };
            run(self.cols, vals)
        })
    }
}

/// Downcasts the caller's value array to `V` (checking type and length).
fn value_slice<'o, 'a, V: Scalar + FromAny<'a>>(
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

/// Numeric phase: fills C's column indices and (if `vals` is given) values.
pub fn numeric(
    handle: &Handle,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    dispatch_pair(
        a,
        b,
        NumericOp {
            handle,
            plan,
            cols,
            vals,
        },
    )
}

/// One-call product into library-owned arrays.
pub fn multiply(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<OwnedCsr> {
    let plan = symbolic(handle, a, b, format)?;
    let mut offsets = OffsetVec::zeroed(format.offsets, plan.nrows() + 1)?;
    write_row_offsets(&plan, offsets.as_mut())?;
    let mut indices = IndexVec::zeroed(format.indices, plan.nnz())?;
    let with_values = a.values.is_some() && b.values.is_some();
    let mut values = if with_values {
        Some(ValueVec::zeroed(a.value_type, plan.nnz())?)
    } else {
        None
    };
    numeric(
        handle,
        &plan,
        a,
        b,
        indices.as_mut(),
        values.as_mut().map(|v| v.as_mut()),
    )?;
    Ok(OwnedCsr {
        nrows: plan.nrows(),
        ncols: plan.ncols(),
        base: format.base,
        offsets,
        indices,
        values,
        value_type: a.value_type,
    })
}
