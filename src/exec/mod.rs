//! The dispatcher: the one place that decides which backend runs a product (CPU, CUDA,
//! hybrid) and hands it the checked, typed inputs. It owns what the backends keep
//! between calls ([`Engine`]) and the plan type with its closed set of backend variants.
//! Checks every backend shares run here once, before any backend work: the product's
//! shape and C's format, validation and structure digests, the inputs against a plan,
//! and C's arrays.

pub mod dist;
pub mod dist_spgemm;
mod engine;
mod hybrid;
mod ops;
mod plan;
mod spmm;
pub mod tuning;

use std::sync::Arc;

pub use engine::{AUTO_MIN_INPUT_NNZ, Engine};
pub use plan::{CpuDetails, Plan, PlanKind};
pub use spmm::{DenseArgs, SpmmAnalysis, analyse, spmm};

use crate::common::check::{
    check_cols, check_nnz, check_product_op, check_shape, check_structure, shape_of,
    validate_and_digest, value_slice,
};
use crate::common::csr::{
    AnyCsr, CsrRef, FromAny, PairOp, Pattern, PatternPairOp, TypeSig, dispatch_pair,
    dispatch_pattern_pair,
};
use crate::common::device::{DeviceCsr, DeviceOut};
use crate::common::memory::Footprint;
use crate::common::options::{Algorithm, Backend, InputShape, Op, Options, OutputFormat};
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::common::split::{self, How, Split};
use crate::cpu;
use crate::cuda::{self, COut, Gpu, ValuesIn};
use crate::error::{Error, Result, Status, err};
use crate::types::{Idx, IndexType, Scalar, ValueType};
use ops::Ops;
use plan::BackendPlan;

/// Where a product's symbolic phase goes.
enum Route {
    Cpu,
    Gpu(Arc<Gpu>),
    Hybrid(Arc<Gpu>),
}

/// Why the GPU cannot compute a product with these values and ops (None: it can): its
/// kernels are real-valued and multiply A and B as stored.
fn gpu_gap(values: ValueType, (op_a, op_b): (Op, Op)) -> Option<String> {
    if values.is_complex() {
        return Some(format!(
            "{} values: the GPU backend computes float and double products only (use \
             SPGEMM_BACKEND_AUTO or SPGEMM_BACKEND_CPU, which compute them on the CPU)",
            values.name()
        ));
    }
    if op_a.transposes() || op_b.transposes() {
        return Some(format!(
            "op(A) = {}, op(B) = {}: the GPU backend multiplies A and B as stored (use \
             SPGEMM_BACKEND_AUTO or SPGEMM_BACKEND_CPU, which compute transposed operands on \
             the CPU)",
            op_a.of("A"),
            op_b.of("B")
        ));
    }
    None
}

/// The backend for a product with `input_nnz` entries in A and B: the CPU for a product
/// the GPU cannot compute (`gap`; an error when the GPU was asked for, whether or not one
/// is present); else hybrid when asked for and a GPU is usable; the GPU when asked for (an
/// error without one) or, under `Auto`, for large inputs when one is usable; else the CPU.
fn route(e: &Engine, o: &Options, input_nnz: usize, gap: Option<&str>) -> Result<Route> {
    if let Some(why) = gap {
        if o.backend == Backend::Cuda {
            return err(Status::NotSupported, why);
        }
        return Ok(Route::Cpu);
    }
    if o.hybrid
        && o.backend != Backend::Cpu
        && let Ok(g) = e.gpu()
    {
        // Rates that leave one side under MIN_SIDE_SHARE: that side alone, without the
        // hybrid's fixed costs (flop profile, second set-up, GPU side's thread).
        return Ok(match one_side(e) {
            Some(How::OneSide { cpu: true, .. }) => Route::Cpu,
            Some(_) => Route::Gpu(g),
            None => Route::Hybrid(g),
        });
    }
    Ok(match o.backend {
        Backend::Cpu => Route::Cpu,
        Backend::Cuda => Route::Gpu(e.gpu()?),
        // Small inputs never open the GPU (a context costs more than their product).
        Backend::Auto if input_nnz < AUTO_MIN_INPUT_NNZ => Route::Cpu,
        Backend::Auto => match e.gpu() {
            Ok(g) => Route::Gpu(g),
            Err(_) => Route::Cpu,
        },
    })
}

/// The rule of the handle's measured rates when it sends a hybrid product to one side.
fn one_side(e: &Engine) -> Option<How> {
    match split::cpu_fraction(&e.rates()).1 {
        h @ How::OneSide { .. } => Some(h),
        _ => None,
    }
}

/// The split of a plan made on one side while the handle asked for hybrid products
/// because the rates said so (None otherwise).
fn one_side_split(e: &Engine, o: &Options, m: usize) -> Option<Split> {
    let how = one_side(e).filter(|_| o.hybrid)?;
    let cpu = matches!(how, How::OneSide { cpu: true, .. });
    Some(Split {
        nrows: m,
        split_row: if cpu { m } else { 0 },
        cpu_fraction: if cpu { 1.0 } else { 0.0 },
        how,
    })
}

/// A CPU plan made while the handle asked for hybrid products: record that every row
/// ran on the CPU, and why (`gap`: the GPU cannot compute the product).
fn cpu_only_split(e: &Engine, o: &Options, m: usize, gap: Option<String>) -> Option<Split> {
    if !o.hybrid {
        return None;
    }
    if gap.is_none()
        && o.backend != Backend::Cpu
        && e.gpu().is_ok()
        && let Some(s) = one_side_split(e, o, m)
    {
        return Some(s);
    }
    let why = if let Some(g) = gap {
        g
    } else if o.backend == Backend::Cpu {
        "the handle's backend is SPGEMM_BACKEND_CPU".to_string()
    } else {
        match e.gpu() {
            Err(err) => err.message,
            Ok(_) => "the product was not split".to_string(),
        }
    };
    Some(Split::all_cpu(m, why))
}

struct SymbolicOp<'e> {
    e: &'e Engine,
    o: &'e Options,
    ops: (Op, Op),
    format: OutputFormat,
    /// The inputs never change structure (see [`numeric_fixed_inputs`]).
    fixed: bool,
    /// The caller reads C's structure right after this phase (see `cpu::Ctx`).
    structure: bool,
    /// The plan serves one numeric call (a one-call product: see `cpu::small::max_work`).
    one_shot: bool,
}

impl PatternPairOp for SymbolicOp<'_> {
    type Out = Plan;
    // Without the `cuda` feature a GPU part cannot exist: the code after it is dead.
    #[cfg_attr(not(feature = "cuda"), allow(unreachable_code))]
    fn call<'a, O, I>(
        self,
        a: CsrRef<'a, O, I, Pattern>,
        b: CsrRef<'a, O, I, Pattern>,
        sig: TypeSig,
    ) -> Result<Plan>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
    {
        let (e, o, format) = (self.e, self.o, self.format);
        let (op_a, op_b) = self.ops;
        check_product_op((op_a, &a), (op_b, &b), &format)?;
        let gap = gpu_gap(sig.values, self.ops);
        let route = route(e, o, a.nnz() + b.nnz(), gap.as_deref())?;
        let mut ctx = e.cpu_ctx_for(o, self.fixed);
        ctx.small = matches!(route, Route::Cpu)
            && small((op_a, &a), (op_b, &b), o, (ctx.threads, self.one_shot));
        ctx.structure_wanted = self.structure;
        if o.memory_limit > 0 && matches!(route, Route::Cpu) {
            symbolic_footprint(&ctx, (op_a, &a), (op_b, &b))
                .check(o.memory_limit, "the symbolic phase")?;
        }
        let serial = ctx.small || (a.checks_are_small() && b.checks_are_small());
        let digests = if o.validate {
            Some(on_workers(e, !serial, || validate_and_digest(&a, &b))??)
        } else {
            None
        };
        let shape = InputShape {
            sig,
            ..shape_of(&a, &b)
        };
        let gpu = match route {
            Route::Hybrid(g) => {
                cuda::limits::check_product(a.nrows(), a.ncols(), b.ncols(), a.nnz(), b.nnz())?;
                let (hp, split) = hybrid::symbolic(
                    e,
                    &ctx,
                    &g,
                    (&a, &b),
                    digests.is_some(),
                    (format, sig.values),
                )?;
                return Ok(Plan {
                    shape,
                    digests,
                    format,
                    flops: hp.cpu_flops + hp.gpu_flops,
                    sorted: hp.cpu.sorted,
                    split: Some(split),
                    ops: Ops::default(),
                    backend: BackendPlan::Hybrid(Box::new(hp)),
                });
            }
            Route::Gpu(g) => {
                let part =
                    cuda::limits::check_product(a.nrows(), a.ncols(), b.ncols(), a.nnz(), b.nnz())
                        .and_then(|_| {
                            let flags = (digests.is_some(), o.sorted_output, false);
                            e.install(|| {
                                cuda::symbolic_host(&g, &a, &b, 0..a.nrows(), sig.values, flags)
                            })?
                        });
                match part {
                    // Auto falls back to the CPU for what the GPU path does not take.
                    Err(err)
                        if o.backend == Backend::Auto
                            && matches!(err.status, Status::NotSupported | Status::NoDevice) =>
                    {
                        None
                    }
                    r => Some(r?),
                }
            }
            Route::Cpu => None,
        };
        if let Some(part) = gpu {
            let (g, info) = cuda::into_plan(part);
            check_nnz(&format, info.nnz)?;
            return Ok(Plan {
                shape,
                digests,
                format,
                flops: info.flops,
                sorted: o.sorted_output,
                split: one_side_split(e, o, a.nrows()),
                ops: Ops::default(),
                backend: BackendPlan::Gpu(Box::new(g)),
            });
        }
        let ops = Ops::new((op_a, &a), (op_b, &b))?;
        let cp = ops.with_operands(e, (&a, &b), false, |a, b| {
            cpu::spgemm::symbolic(&ctx, a, b, &format, sig.values.size())
        })?;
        let m = op_a.shape(a.nrows(), a.ncols()).0;
        Ok(Plan {
            shape,
            digests,
            format,
            flops: cp.flops,
            sorted: cp.sorted,
            split: cpu_only_split(e, o, m, gap),
            ops,
            backend: BackendPlan::Cpu(Box::new(cp)),
        })
    }
}

/// Whether op(A)*op(B) runs as a small product (serially on the calling thread, see
/// [`cpu::small`]): under `Algorithm::Auto` with the small path on, on the CPU alone, and
/// small by the CPU backend's measure for a handle of `threads` workers and a plan made
/// for one numeric call or more (`one_shot`). Such products have too few entries for
/// `Auto` to send them to the GPU (checked below).
fn small<O: Idx, I: Idx, V: Scalar>(
    a: (Op, &CsrRef<'_, O, I, V>),
    b: (Op, &CsrRef<'_, O, I, V>),
    o: &Options,
    (threads, one_shot): (usize, bool),
) -> bool {
    o.small_path
        && o.algorithm == Algorithm::Auto
        && o.backend != Backend::Cuda
        && !o.hybrid
        && cpu::small::fits(a, b, cpu::small::max_work(threads, one_shot))
}

// A small product's inputs are fewer than `Auto` sends to the GPU.
const _: () = assert!(cpu::small::SMALL_MAX_WORK < AUTO_MIN_INPUT_NNZ as u64);
const _: () = assert!(cpu::small::SMALL_MAX_WORK_ONE_THREAD < AUTO_MIN_INPUT_NNZ as u64);
// The one-shot bound of 2 threads, the largest of more than one.
const _: () = assert!(2 * cpu::small::SMALL_MAX_WORK < AUTO_MIN_INPUT_NNZ as u64);

/// Runs `f` on the handle's workers when `parallel`, else on the calling thread, waking no
/// worker (the structure checks run serially off the workers, see `CsrRef::validate`).
fn on_workers<R: Send>(e: &Engine, parallel: bool, f: impl FnOnce() -> R + Send) -> Result<R> {
    if parallel { e.install(f) } else { Ok(f()) }
}

/// Rows, columns, entries and a bound on the longest row of op(M), read without
/// allocating (a transpose's rows are at most M's rows and entries).
fn operand_dims<O: Idx, I: Idx>(
    op: Op,
    m: &CsrRef<'_, O, I, Pattern>,
) -> (usize, usize, usize, usize) {
    let nnz = m.nnz();
    if op.transposes() {
        return (m.ncols(), m.nrows(), nnz, m.nrows().min(nnz));
    }
    let longest = (0..m.nrows())
        .map(|i| m.row_start(i + 1).saturating_sub(m.row_start(i)).min(nnz))
        .max()
        .unwrap_or(0);
    (m.nrows(), m.ncols(), nnz, longest)
}

/// The memory a CPU symbolic phase of op(A)*op(B) may allocate: the transposes the plan
/// keeps and the CPU backend's own estimate.
fn symbolic_footprint<O: Idx, I: Idx>(
    ctx: &cpu::Ctx<'_>,
    (op_a, a): (Op, &CsrRef<'_, O, I, Pattern>),
    (op_b, b): (Op, &CsrRef<'_, O, I, Pattern>),
) -> Footprint {
    let (m, n, _, a_max_row) = operand_dims(op_a, a);
    let (_, k, b_nnz, b_max_row) = operand_dims(op_b, b);
    let dims = cpu::spgemm::Dims {
        m,
        n,
        k,
        b_nnz,
        a_max_row,
        b_max_row,
    };
    let mut f = Ops::footprint((op_a, a), (op_b, b));
    f.merge(cpu::spgemm::symbolic_footprint(ctx, &dims));
    f
}

/// The memory a numeric call on `plan` may allocate on the host (a GPU plan's device
/// memory is not counted): the gathered values of transposed operands and the CPU
/// backend's estimate. `values`: C's values are computed.
fn numeric_footprint_typed<V: Scalar>(
    ctx: &cpu::Ctx<'_>,
    plan: &Plan,
    (a_nnz, b_nnz): (usize, usize),
    values: bool,
    trusted: bool,
) -> Footprint {
    let mut f = Footprint::default();
    if values {
        f.merge(plan.ops.values_footprint::<V>((a_nnz, b_nnz)));
    }
    let cp = match &plan.backend {
        BackendPlan::Cpu(cp) => Some(&**cp),
        BackendPlan::Hybrid(hp) => Some(&hp.cpu),
        BackendPlan::Gpu(_) => None,
    };
    if let Some(cp) = cp {
        f.merge(cpu::spgemm::numeric_footprint::<V>(
            ctx,
            cp,
            plan.ncols(),
            values,
            trusted,
        ));
    }
    f
}

struct SymbolicEstimate<'e> {
    e: &'e Engine,
    o: &'e Options,
    ops: (Op, Op),
}

impl PatternPairOp for SymbolicEstimate<'_> {
    type Out = Footprint;
    fn call<'a, O, I>(
        self,
        a: CsrRef<'a, O, I, Pattern>,
        b: CsrRef<'a, O, I, Pattern>,
        _: TypeSig,
    ) -> Result<Footprint>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
    {
        let (op_a, op_b) = self.ops;
        let mut ctx = self.e.cpu_ctx(self.o);
        // Only a one-call product asks for this estimate (`api::multiply_op`).
        ctx.small = small((op_a, &a), (op_b, &b), self.o, (ctx.threads, true));
        Ok(symbolic_footprint(&ctx, (op_a, &a), (op_b, &b)))
    }
}

/// The estimate a CPU symbolic phase of op(A)*op(B) checks against the memory limit (a
/// one-call product adds it to its numeric phase's: the plan and the symbolic workspace
/// stay allocated while C is filled).
pub fn symbolic_estimate(
    e: &Engine,
    o: &Options,
    (op_a, a): (Op, &AnyCsr<'_>),
    (op_b, b): (Op, &AnyCsr<'_>),
) -> Result<Footprint> {
    let ops = (op_a, op_b);
    dispatch_pattern_pair(a, b, SymbolicEstimate { e, o, ops })
}

struct NumericEstimate<'h> {
    e: &'h Engine,
    o: &'h Options,
    plan: &'h Plan,
    values: bool,
}

impl PairOp for NumericEstimate<'_> {
    type Out = Footprint;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Footprint>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let trusted = self.o.validate && self.plan.digests.is_some();
        let values = self.values && a.values().is_some() && b.values().is_some();
        let ctx = self.e.cpu_ctx(self.o);
        let nnz = (a.nnz(), b.nnz());
        Ok(numeric_footprint_typed::<V>(
            &ctx, self.plan, nnz, values, trusted,
        ))
    }
}

/// The estimate a numeric call on `plan` with A and B checks against the memory limit
/// (for callers that allocate C first and add its arrays to it).
pub fn numeric_footprint(
    e: &Engine,
    o: &Options,
    plan: &Plan,
    (a, b): (&AnyCsr<'_>, &AnyCsr<'_>),
    values: bool,
) -> Result<Footprint> {
    dispatch_pair(a, b, NumericEstimate { e, o, plan, values })
}

/// Symbolic phase: the structure of C = op(A)*op(B), as a reusable plan (it keeps the
/// transposes op asks for; see [`ops`]).
pub fn symbolic(
    e: &Engine,
    o: &Options,
    (op_a, a): (Op, &AnyCsr<'_>),
    (op_b, b): (Op, &AnyCsr<'_>),
    format: OutputFormat,
) -> Result<Plan> {
    symbolic_op(e, o, (op_a, a), (op_b, b), format, (false, false, false))
}

/// [`symbolic`] for a one-call product: the plan serves one numeric call, which moves the
/// work up to which the product runs serially (see `cpu::small::max_work`).
pub fn symbolic_one_shot(
    e: &Engine,
    o: &Options,
    (op_a, a): (Op, &AnyCsr<'_>),
    (op_b, b): (Op, &AnyCsr<'_>),
    format: OutputFormat,
) -> Result<Plan> {
    symbolic_op(e, o, (op_a, a), (op_b, b), format, (false, false, true))
}

/// [`symbolic`] for inputs whose structure cannot change before or between the numeric
/// calls, which go through [`numeric_fixed_inputs`] (the distributed backend's own
/// matrices): the plan may keep C's columns (`cpu::record`) with validation off.
/// `structure`: a numeric call without values (C's structure) comes next, which the
/// kept columns then answer.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn symbolic_fixed_inputs(
    e: &Engine,
    o: &Options,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
    structure: bool,
) -> Result<Plan> {
    let nn = Op::NonTranspose;
    symbolic_op(e, o, (nn, a), (nn, b), format, (true, structure, false))
}

fn symbolic_op(
    e: &Engine,
    o: &Options,
    (op_a, a): (Op, &AnyCsr<'_>),
    (op_b, b): (Op, &AnyCsr<'_>),
    format: OutputFormat,
    (fixed, structure, one_shot): (bool, bool, bool),
) -> Result<Plan> {
    let ops = (op_a, op_b);
    let op = SymbolicOp {
        e,
        o,
        ops,
        format,
        fixed,
        structure,
        one_shot,
    };
    dispatch_pattern_pair(a, b, op)
}

/// With validation on, a numeric call's A and B have the structure `plan` was made for:
/// their digests match the plan's, or, for a plan made without digests (validation off at
/// symbolic time), they are valid and equal what the plan keeps of them (the transposes of
/// op T and C, a GPU plan's copy on the device), O(nnz). What it keeps of neither, the
/// length of each row of C, every CPU kernel compares with the plan as it forms the row,
/// so a changed structure gives `PlanMismatch` or the new product, never a wrong C.
fn check_inputs<O: Idx, I: Idx, V: Scalar>(
    e: &Engine,
    parallel: bool,
    plan: &Plan,
    a: &CsrRef<'_, O, I, V>,
    b: &CsrRef<'_, O, I, V>,
) -> Result<()> {
    on_workers(e, parallel, || {
        check_structure(plan.digests, a, b)?;
        if plan.digests.is_some() {
            return Ok(());
        }
        plan.ops.check_structure(a, b)?;
        let gpu = match &plan.backend {
            BackendPlan::Cpu(_) => None,
            BackendPlan::Gpu(g) => Some(&**g),
            BackendPlan::Hybrid(hp) => hp.gpu.as_ref(),
        };
        if let Some(g) = gpu
            && let Some(name) = cuda::plan_structure_differs(g, a, b)?
        {
            return err(
                Status::PlanMismatch,
                format!(
                    "{name}: structure differs from the one the plan copied to the GPU (the \
                     plan was made with validation off, so without digests)"
                ),
            );
        }
        Ok(())
    })?
}

struct NumericOp<'h, 'o> {
    e: &'h Engine,
    o: &'h Options,
    plan: &'h Plan,
    cols: IndexSliceMut<'o>,
    vals: Option<ValueSliceMut<'o>>,
    /// A and B are the caller's own immutable matrices of the symbolic call (the
    /// distributed backend's): no structure check, and the replay may run.
    fixed: bool,
}

impl PairOp for NumericOp<'_, '_> {
    type Out = ();
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<()>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let (e, o, plan) = (self.e, self.o, self.plan);
        check_shape(&plan.shape, &shape_of(&a, &b))?;
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
        check_cols(&self.cols, &plan.format, nnz)?;
        let vals: Option<&mut [V]> = match self.vals {
            None => None,
            Some(v) => Some(value_slice::<V>(v, nnz)?),
        };
        if o.validate && !self.fixed {
            let serial = plan.small() || (a.checks_are_small() && b.checks_are_small());
            check_inputs(e, !serial, plan, &a, &b)?;
        }
        // The replay trusts C's columns from an earlier call only while every call checks
        // the structure against the plan's digests (or the structure cannot change).
        let trusted = self.fixed || (o.validate && plan.digests.is_some());
        let ctx = e.cpu_ctx_for(o, self.fixed);
        if o.memory_limit > 0 {
            let nnz = (a.nnz(), b.nnz());
            numeric_footprint_typed::<V>(&ctx, plan, nnz, vals.is_some(), trusted)
                .check(o.memory_limit, "the numeric phase")?;
        }
        let cols = self.cols;
        match &plan.backend {
            BackendPlan::Cpu(cp) => plan.ops.with_operands(e, (&a, &b), vals.is_some(), |a, b| {
                cpu::spgemm::numeric(&ctx, cp, a, b, (plan.format.base, trusted), cols, vals)
            }),
            BackendPlan::Gpu(g) => cuda::numeric(
                g,
                plan.format,
                ValuesIn::Host(a.values(), b.values()),
                COut::Host { cols, vals },
                o.reproducible,
            )
            .map(|_| ()),
            BackendPlan::Hybrid(hp) => hybrid::numeric(
                e,
                &ctx,
                (hp, plan.format, o.reproducible),
                (&a, &b),
                trusted,
                cols,
                vals,
            ),
        }
    }
}

/// Numeric phase: fills C's column indices and (if `vals` is given) values.
pub fn numeric(
    e: &Engine,
    o: &Options,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    numeric_op(e, o, plan, (a, b), (cols, vals), false)
}

/// Numeric phase of a plan made with validation off for inputs whose structure cannot
/// change between calls (matrices the distributed backend built and keeps): no
/// structure check; C's columns of an earlier call may be replayed.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn numeric_fixed_inputs(
    e: &Engine,
    o: &Options,
    plan: &Plan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    numeric_op(e, o, plan, (a, b), (cols, vals), true)
}

fn numeric_op(
    e: &Engine,
    o: &Options,
    plan: &Plan,
    (a, b): (&AnyCsr<'_>, &AnyCsr<'_>),
    (cols, vals): (IndexSliceMut<'_>, Option<ValueSliceMut<'_>>),
    fixed: bool,
) -> Result<()> {
    dispatch_pair(
        a,
        b,
        NumericOp {
            e,
            o,
            plan,
            cols,
            vals,
            fixed,
        },
    )
    .inspect_err(|_| {
        // What the plan learned from earlier calls may describe arrays this call left
        // half written: learn again from the next successful call.
        plan.forget();
    })
}

/// Row offsets per piece when C's row offsets are written in parallel.
pub(crate) const ROW_OFFSETS_MIN_PAR: usize = 4096;

/// Where compiled GPU kernels are kept across processes (`None`: nowhere); process-wide,
/// overrides `SPGEMM_KERNEL_CACHE`.
pub fn set_kernel_cache_dir(dir: Option<std::path::PathBuf>) {
    cuda::kcache::set_dir(dir);
}

/// The kernel cache directory in use, if any.
pub fn kernel_cache_dir() -> Option<std::path::PathBuf> {
    cuda::kcache::dir()
}

/// Writes C's row offsets (in the plan's format) into `out` (length m + 1): in parallel
/// when called on a handle's workers (`Engine::install`), else on the calling thread
/// alone (never on rayon's global pool, which would start threads the caller did not ask
/// for).
pub fn write_row_offsets(plan: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
    fn fill<T: Idx + Send>(row_ptr: &[usize], base: usize, out: &mut [T]) -> Result<()> {
        use rayon::prelude::*;
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
        let put = |(o, &r): (&mut T, &usize)| {
            *o = T::try_from_usize(r + base).expect("checked at symbolic time")
        };
        if rayon::current_thread_index().is_some() {
            out.par_iter_mut()
                .zip(row_ptr.par_iter())
                .with_min_len(ROW_OFFSETS_MIN_PAR)
                .for_each(put);
        } else {
            out.iter_mut().zip(row_ptr).for_each(put);
        }
        Ok(())
    }
    let base = plan.format.base;
    let row_ptr = plan.row_offsets()?;
    match out {
        OffsetSliceMut::I32(o) if plan.format.offsets == IndexType::Int32 => {
            fill(&row_ptr, base, o)
        }
        OffsetSliceMut::I64(o) if plan.format.offsets == IndexType::Int64 => {
            fill(&row_ptr, base, o)
        }
        OffsetSliceMut::U64(o) if plan.format.offsets == IndexType::SizeT => {
            fill(&row_ptr, base, o)
        }
        _ => err(
            Status::TypeMismatch,
            "C: row offsets type differs from the plan's",
        ),
    }
}

/// Why device arrays cannot be used with these options, or the GPU that can take them.
/// The CPU backend cannot read GPU memory; `Auto` and `Cuda` need a usable device.
fn gpu_for_device_arrays(e: &Engine, o: &Options, what: &str) -> Result<Arc<Gpu>> {
    if o.backend == Backend::Cpu {
        return err(
            Status::NotSupported,
            format!(
                "{what} in GPU memory, but the handle's backend is SPGEMM_BACKEND_CPU, which \
                 cannot read device memory (use SPGEMM_BACKEND_AUTO or SPGEMM_BACKEND_CUDA)"
            ),
        );
    }
    e.gpu().map_err(|err| {
        Error::new(
            err.status,
            format!(
                "{what} in GPU memory, but no GPU can be used: {}",
                err.message
            ),
        )
    })
}

/// Symbolic phase of A and B in device memory. Checks types, shapes and the device's
/// 32-bit limits first, then that a GPU can be used; only then is anything done on it.
#[cfg_attr(not(feature = "cuda"), allow(unreachable_code))]
pub fn symbolic_device(
    e: &Engine,
    o: &Options,
    a: &DeviceCsr,
    b: &DeviceCsr,
    format: OutputFormat,
) -> Result<Plan> {
    crate::common::device::check_pair(a, b, &format)?;
    if let Some(why) = gpu_gap(a.value_type, (Op::NonTranspose, Op::NonTranspose)) {
        return err(
            Status::NotSupported,
            format!("A and B are device matrices with {why}"),
        );
    }
    cuda::limits::check_product(a.nrows, a.ncols, b.ncols, a.nnz, b.nnz)?;
    let gpu = gpu_for_device_arrays(e, o, "A and B are")?;
    let (g, info) = cuda::into_plan(cuda::symbolic_device(&gpu, a, b, o.sorted_output)?);
    check_nnz(&format, info.nnz)?;
    Ok(Plan {
        shape: crate::common::device::shape_of(a, b),
        // The structure was checked on the device; no host digest exists.
        digests: None,
        format,
        flops: info.flops,
        sorted: o.sorted_output,
        split: None,
        ops: Ops::default(),
        backend: BackendPlan::Gpu(Box::new(g)),
    })
}

/// Inputs of a numeric call: host descriptors or device descriptors.
pub enum NumericInputs<'x, 'a> {
    Host(&'x AnyCsr<'a>, &'x AnyCsr<'a>),
    Device(&'x DeviceCsr, &'x DeviceCsr),
}

/// Outputs of a numeric call: caller host arrays or caller device arrays.
pub enum NumericOutputs<'o> {
    Host {
        cols: IndexSliceMut<'o>,
        vals: Option<ValueSliceMut<'o>>,
    },
    Device(DeviceOut),
}

/// Host inputs with C in device memory: the checks of host products, then the GPU.
struct HostInDeviceOut<'h> {
    e: &'h Engine,
    o: &'h Options,
    plan: &'h Plan,
    g: &'h cuda::GpuPlan,
    out: DeviceOut,
}

impl PairOp for HostInDeviceOut<'_> {
    type Out = ();
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<()>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let (e, o, plan) = (self.e, self.o, self.plan);
        check_shape(&plan.shape, &shape_of(&a, &b))?;
        if o.validate {
            check_inputs(e, true, plan, &a, &b)?;
        }
        cuda::numeric::<V>(
            self.g,
            plan.format,
            ValuesIn::Host(a.values(), b.values()),
            COut::Device(self.out),
            o.reproducible,
        )
        .map(|_| ())
    }
}

/// C's host arrays for a numeric call with device inputs, typed as `V`.
fn host_out<'o, V: Scalar + for<'x> FromAny<'x>>(
    plan: &Plan,
    cols: IndexSliceMut<'o>,
    vals: Option<ValueSliceMut<'o>>,
) -> Result<COut<'o, V>> {
    let nnz = plan.nnz();
    check_cols(&cols, &plan.format, nnz)?;
    let vals = match vals {
        None => None,
        Some(v) => Some(value_slice::<V>(v, nnz)?),
    };
    Ok(COut::Host { cols, vals })
}

fn device_numeric<V: Scalar + for<'x> FromAny<'x>>(
    o: &Options,
    plan: &Plan,
    g: &cuda::GpuPlan,
    (a, b): (&DeviceCsr, &DeviceCsr),
    outputs: NumericOutputs<'_>,
) -> Result<()> {
    let vin = ValuesIn::<V>::Device(a.values, b.values);
    let out = match outputs {
        NumericOutputs::Host { cols, vals } => host_out::<V>(plan, cols, vals)?,
        NumericOutputs::Device(d) => COut::Device(d),
    };
    cuda::numeric(g, plan.format, vin, out, o.reproducible).map(|_| ())
}

/// Numeric phase where inputs or outputs (or both) are in device memory. Needs a usable
/// GPU (else `NoDevice`, or `NotSupported` for the CPU backend) and a plan made on it
/// (else `NotSupported`): device memory is never read or written on the host.
pub fn numeric_device(
    e: &Engine,
    o: &Options,
    plan: &Plan,
    inputs: NumericInputs<'_, '_>,
    outputs: NumericOutputs<'_>,
) -> Result<()> {
    let what = match (&inputs, &outputs) {
        (NumericInputs::Device(..), NumericOutputs::Device(_)) => "A, B and C are",
        (NumericInputs::Device(..), _) => "A and B are",
        _ => "C's arrays are",
    };
    if let NumericInputs::Device(a, b) = &inputs {
        check_shape(&plan.shape, &crate::common::device::shape_of(a, b))?;
    }
    gpu_for_device_arrays(e, o, what)?;
    let g = match &plan.backend {
        BackendPlan::Gpu(g) => g,
        BackendPlan::Hybrid(_) => {
            return err(
                Status::NotSupported,
                format!(
                    "{what} in GPU memory, but the plan is a hybrid CPU+GPU plan, which takes \
                     host arrays only (turn hybrid off with spgemm_set_hybrid before \
                     spgemm_symbolic)"
                ),
            );
        }
        BackendPlan::Cpu(_) => {
            return err(
                Status::NotSupported,
                format!(
                    "{what} in GPU memory, but the plan was made on the CPU; make the plan \
                     with spgemm_symbolic on a handle whose backend is SPGEMM_BACKEND_CUDA \
                     (or AUTO with device inputs)"
                ),
            );
        }
    };
    match inputs {
        NumericInputs::Host(a, b) => {
            let NumericOutputs::Device(out) = outputs else {
                return err(
                    Status::Internal,
                    "host inputs and outputs reached the device path",
                );
            };
            dispatch_pair(a, b, HostInDeviceOut { e, o, plan, g, out })
        }
        NumericInputs::Device(a, b) => match plan.shape.sig.values {
            ValueType::Float32 => device_numeric::<f32>(o, plan, g, (a, b), outputs),
            ValueType::Float64 => device_numeric::<f64>(o, plan, g, (a, b), outputs),
            // A GPU plan is never made for complex values (see `gpu_gap`).
            v @ (ValueType::Complex32 | ValueType::Complex64) => err(
                Status::NotSupported,
                format!("{} values on the GPU", v.name()),
            ),
        },
    }
}
