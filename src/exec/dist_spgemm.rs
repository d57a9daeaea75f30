//! Distributed SpGEMM: the `dist` backend moves rows between ranks; its node products are
//! this dispatcher's own two-phase products ([`super::symbolic`], [`super::numeric`]) on
//! the handle's engine and options, so they run where a serial product would (CPU, GPU or
//! hybrid). Also where the API's type-erased matrices and plan become the backend's typed
//! ones. Without the `mpi` feature no communicator exists, so every function ends at
//! `Status::NotSupported` before any work.

use super::dist::DistMatrix;
use super::engine::Engine;
use crate::common::options::{Op, Options, OutputFormat};
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::error::Result;
use crate::types::{IndexType, ValueType};

pub use crate::dist::SpgemmStats as DistSpgemmStats;

/// A distributed SpGEMM plan (C = op(A) * B or op(R) * A * P), any index and value type.
pub struct DistSpgemmPlan {
    #[cfg(feature = "mpi")]
    inner: Box<dyn std::any::Any>,
    info: Info,
}

/// What a plan tells without its types.
#[derive(Clone, Copy, Debug)]
struct Info {
    nnz: usize,
    global_nnz: u64,
    rows: (usize, usize),
    ncols: usize,
    operands: usize,
    format: OutputFormat,
    indices: IndexType,
    values: ValueType,
    stats: DistSpgemmStats,
}

impl DistSpgemmPlan {
    /// Entries of C on this rank.
    pub fn nnz(&self) -> usize {
        self.info.nnz
    }
    /// Entries of C on all ranks.
    pub fn global_nnz(&self) -> u64 {
        self.info.global_nnz
    }
    /// This rank's rows of C: (first global row, count).
    pub fn rows(&self) -> (usize, usize) {
        self.info.rows
    }
    /// Global columns of C.
    pub fn ncols(&self) -> usize {
        self.info.ncols
    }
    /// 2 for op(A) * B, 3 for op(R) * A * P.
    pub fn operands(&self) -> usize {
        self.info.operands
    }
    /// C's storage.
    pub fn format(&self) -> OutputFormat {
        self.info.format
    }
    /// The column index and value types of the inputs.
    pub fn types(&self) -> (IndexType, ValueType) {
        (self.info.indices, self.info.values)
    }
    /// Time and traffic of the symbolic phase and of the last numeric call on this rank.
    pub fn stats(&self) -> DistSpgemmStats {
        self.info.stats
    }
}

/// Symbolic phase of C = op(A) * B (`mats` = [A, B]) or op(R) * A * P (`mats` = [R, A, P]):
/// this rank's row offsets of C into `c_offsets`. Collective over the first matrix's
/// communicator; the same status on every rank.
pub fn symbolic(
    e: &Engine,
    o: &Options,
    op: Op,
    mats: &[&DistMatrix<'_>],
    format: OutputFormat,
    c_offsets: OffsetSliceMut<'_>,
) -> Result<DistSpgemmPlan> {
    #[cfg(feature = "mpi")]
    return on::with_typed(
        mats,
        on::Symbolic {
            e,
            o,
            op,
            format,
            c_offsets,
        },
    );
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, op, format, c_offsets);
        mats[0].comm.agree(Err(crate::dist::unavailable()))
    }
}

/// Numeric phase with the current values of `mats` (those of the symbolic phase, same
/// structure): this rank's column indices (global) and values of C. `pre` is the caller's
/// verdict on its own arguments, agreed with the rest. Collective.
pub fn numeric(
    e: &Engine,
    o: &Options,
    plan: &mut DistSpgemmPlan,
    pre: Result<()>,
    mats: &[&DistMatrix<'_>],
    cols: IndexSliceMut<'_>,
    vals: ValueSliceMut<'_>,
) -> Result<()> {
    #[cfg(feature = "mpi")]
    return on::with_typed(
        mats,
        on::Numeric {
            e,
            o,
            plan,
            pre,
            cols,
            vals,
        },
    );
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (e, o, plan, pre, cols, vals);
        mats[0].comm.agree(Err(crate::dist::unavailable()))
    }
}

#[cfg(feature = "mpi")]
mod on {
    use mpi::topology::CommunicatorRelation;
    use mpi::traits::Communicator;

    use super::*;
    use crate::common::csr::{AnyCsr, FromAny, IndexSlice, OffsetSlice, ValueSlice};
    use crate::dist::{self, DistIdx, DistScalar, NodeSpgemm, SpgemmPlan};
    use crate::error::{Status, err};
    use crate::exec::Plan;
    use crate::exec::dist::on::Node;
    use crate::types::Idx;

    impl NodeSpgemm for Node<'_> {
        type Plan = Plan;
        fn spgemm_symbolic(
            &self,
            a: &AnyCsr<'_>,
            b: &AnyCsr<'_>,
            format: OutputFormat,
            structure: bool,
        ) -> Result<Plan> {
            // A and B are valid and keep their structure (the backend's own arrays, or
            // the caller's whose digests it checks at every numeric call): no validation
            // here.
            let o = Options {
                validate: false,
                ..*self.o
            };
            crate::exec::symbolic_fixed_inputs(self.e, &o, a, b, format, structure)
        }
        fn spgemm_nnz(&self, p: &Plan) -> usize {
            p.nnz()
        }
        fn spgemm_flops(&self, p: &Plan) -> u64 {
            p.flops()
        }
        fn spgemm_row_offsets(&self, p: &Plan, out: OffsetSliceMut<'_>) -> Result<()> {
            self.e.install(|| crate::exec::write_row_offsets(p, out))?
        }
        fn spgemm_numeric(
            &self,
            p: &Plan,
            a: &AnyCsr<'_>,
            b: &AnyCsr<'_>,
            cols: IndexSliceMut<'_>,
            vals: Option<ValueSliceMut<'_>>,
        ) -> Result<()> {
            let o = Options {
                validate: false,
                ..*self.o
            };
            crate::exec::numeric_fixed_inputs(self.e, &o, p, a, b, cols, vals)
        }
    }

    /// Something done with the typed matrices of one call.
    pub trait ManyOp {
        type Out;
        fn call<O: Idx, I: DistIdx, V: DistScalar>(
            self,
            comm: &dist::DistComm,
            mats: &[dist::DistMatrix<'_, O, I, V>],
        ) -> Result<Self::Out>;
    }

    fn typed<'a, O, I, V>(m: &DistMatrix<'a>) -> Option<dist::DistMatrix<'a, O, I, V>>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: FromAny<'a>,
    {
        Some(dist::DistMatrix {
            global_rows: m.global_rows,
            global_cols: m.global_cols,
            row_start: m.row_start,
            local_rows: m.local.nrows,
            x_range: m.x_range,
            base: m.local.base,
            row_offsets: O::from_offsets(m.local.offsets)?,
            col_indices: I::from_indices(m.local.indices)?,
            values: V::from_values(m.local.values?)?,
        })
    }

    /// This rank's view of whether the matrices can be multiplied together at all: one
    /// communicator, the same types, real values present, global column ids.
    fn local_checks(mats: &[&DistMatrix<'_>]) -> Result<()> {
        let names: &[&str] = if mats.len() == 3 {
            &["R", "A", "P"]
        } else {
            &["A", "B"]
        };
        let first = mats[0];
        for (m, name) in mats.iter().zip(names) {
            let rel = first.comm.raw().compare(m.comm.raw());
            if !matches!(
                rel,
                CommunicatorRelation::Identical | CommunicatorRelation::Congruent
            ) {
                return err(
                    Status::InvalidValue,
                    format!("{name} lives on another communicator than {}", names[0]),
                );
            }
            if m.local.ncols != m.global_cols {
                return err(
                    Status::DimensionMismatch,
                    format!(
                        "{name}: the local rows have {} columns, the matrix {} (column indices are global)",
                        m.local.ncols, m.global_cols
                    ),
                );
            }
            let Some(v) = m.local.values else {
                return err(
                    Status::InvalidValue,
                    format!("{name} has no values (a pattern-only matrix)"),
                );
            };
            if v.kind().is_complex() {
                return err(
                    Status::NotSupported,
                    format!(
                        "{name} holds complex values; distributed products take float or double"
                    ),
                );
            }
            if m.local.sig() != first.local.sig() {
                return err(
                    Status::TypeMismatch,
                    format!(
                        "{name} has {}, {} has {} (one type set for all operands)",
                        m.local.sig(),
                        names[0],
                        first.local.sig()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Calls `op` with the typed matrices (after the checks above, agreed).
    pub fn with_typed<T: ManyOp>(mats: &[&DistMatrix<'_>], op: T) -> Result<T::Out> {
        let comm = mats[0].comm;
        comm.agree(local_checks(mats))?;
        macro_rules! go {
            ($o:ty, $i:ty, $v:ty) => {{
                let t: Option<Vec<_>> = mats.iter().map(|m| typed::<$o, $i, $v>(m)).collect();
                match t {
                    Some(t) => op.call(comm, &t),
                    None => err(Status::Internal, "operand types checked above"),
                }
            }};
        }
        macro_rules! by_value {
            ($o:ty, $i:ty) => {
                match mats[0].local.values {
                    Some(ValueSlice::F32(_)) => go!($o, $i, f32),
                    _ => go!($o, $i, f64),
                }
            };
        }
        match (mats[0].local.offsets, mats[0].local.indices) {
            (OffsetSlice::I32(_), IndexSlice::I32(_)) => by_value!(i32, i32),
            (OffsetSlice::I32(_), IndexSlice::I64(_)) => by_value!(i32, i64),
            (OffsetSlice::I64(_), IndexSlice::I32(_)) => by_value!(i64, i32),
            (OffsetSlice::I64(_), IndexSlice::I64(_)) => by_value!(i64, i64),
            (OffsetSlice::U64(_), IndexSlice::I32(_)) => by_value!(u64, i32),
            (OffsetSlice::U64(_), IndexSlice::I64(_)) => by_value!(u64, i64),
        }
    }

    fn info<I: DistIdx, V: DistScalar>(p: &SpgemmPlan<I, V, Plan>) -> Info {
        Info {
            nnz: p.nnz(),
            global_nnz: p.global_nnz(),
            rows: p.rows(),
            ncols: p.ncols(),
            operands: p.operands(),
            format: p.format(),
            indices: I::KIND,
            values: V::erase(&[]).kind(),
            stats: p.stats(),
        }
    }

    pub struct Symbolic<'e, 'o> {
        pub e: &'e Engine,
        pub o: &'e Options,
        pub op: Op,
        pub format: OutputFormat,
        pub c_offsets: OffsetSliceMut<'o>,
    }

    impl ManyOp for Symbolic<'_, '_> {
        type Out = DistSpgemmPlan;
        fn call<O: Idx, I: DistIdx, V: DistScalar>(
            self,
            comm: &dist::DistComm,
            m: &[dist::DistMatrix<'_, O, I, V>],
        ) -> Result<DistSpgemmPlan> {
            let node = Node {
                e: self.e,
                o: self.o,
            };
            let v = self.o.validate;
            let p = match m {
                [a, b] => SpgemmPlan::<I, V, Plan>::product(
                    comm,
                    &node,
                    self.op,
                    a,
                    b,
                    self.format,
                    v,
                    self.c_offsets,
                )?,
                [r, a, p] => SpgemmPlan::<I, V, Plan>::rap(
                    comm,
                    &node,
                    self.op,
                    r,
                    a,
                    p,
                    self.format,
                    v,
                    self.c_offsets,
                )?,
                _ => return comm.agree(err(Status::InvalidValue, "2 or 3 operands expected")),
            };
            Ok(DistSpgemmPlan {
                info: info(&p),
                inner: Box::new(p),
            })
        }
    }

    pub struct Numeric<'e, 'p, 'o> {
        pub e: &'e Engine,
        pub o: &'e Options,
        pub plan: &'p mut DistSpgemmPlan,
        pub pre: Result<()>,
        pub cols: IndexSliceMut<'o>,
        pub vals: ValueSliceMut<'o>,
    }

    impl ManyOp for Numeric<'_, '_, '_> {
        type Out = ();
        fn call<O: Idx, I: DistIdx, V: DistScalar>(
            self,
            comm: &dist::DistComm,
            m: &[dist::DistMatrix<'_, O, I, V>],
        ) -> Result<()> {
            let node = Node {
                e: self.e,
                o: self.o,
            };
            let info = self.plan.info;
            let Some(p) = self.plan.inner.downcast_mut::<SpgemmPlan<I, V, Plan>>() else {
                // Types differ from the plan's on every rank alike (they were agreed).
                return comm.agree(err(
                    Status::TypeMismatch,
                    format!(
                        "the plan was made for {} indices and {} values",
                        info.indices.name(),
                        info.values.name()
                    ),
                ));
            };
            let refs: Vec<&dist::DistMatrix<'_, O, I, V>> = m.iter().collect();
            let r = p.numeric(&node, &refs, self.pre, self.cols, self.vals);
            self.plan.info = super::on::info(p);
            r
        }
    }
}
