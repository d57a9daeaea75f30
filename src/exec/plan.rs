//! The plan of a product: what every backend's plan shares (the inputs' shape and
//! structure digests, C's format, the multiplications) and the backend part, one variant
//! per backend, each defined by its backend.

use super::hybrid::HybridPlan;
use super::ops::Ops;
use crate::common::options::{Algorithm, InputShape, Op, OutputFormat};
use crate::common::split::Split;
pub use crate::cpu::spgemm::CpuDetails;
use crate::cpu::spgemm::CpuPlan;
use crate::cuda::{self, GpuPlan};
use crate::error::Result;

/// Where a plan's numeric calls run.
#[derive(Debug)]
pub(crate) enum BackendPlan {
    Cpu(Box<CpuPlan>),
    Gpu(Box<GpuPlan>),
    Hybrid(Box<HybridPlan>),
}

/// The result of the symbolic phase, reusable while only the values of A and B change.
#[derive(Debug)]
pub struct Plan {
    /// What the inputs looked like at symbolic time; numeric calls must match it.
    pub(crate) shape: InputShape,
    /// Digests of A's and B's structure (taken when validation is on).
    pub(crate) digests: Option<(u64, u64)>,
    pub(crate) format: OutputFormat,
    /// Scalar multiplications of the product (the paper's f_m).
    pub(crate) flops: u64,
    /// Whether C's rows come out sorted (fixed when the plan is made).
    pub(crate) sorted: bool,
    /// The row split when hybrid execution was asked for (None: it was not).
    pub(crate) split: Option<Split>,
    /// op(A) and op(B), with the transposes they need (CPU plans only).
    pub(crate) ops: Ops,
    pub(crate) backend: BackendPlan,
}

/// Where a plan runs (for reports and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanKind {
    Cpu,
    Gpu,
    Hybrid,
}

impl Plan {
    pub fn nnz(&self) -> usize {
        match &self.backend {
            BackendPlan::Cpu(p) => p.nnz(),
            BackendPlan::Gpu(g) => cuda::plan_nnz(g),
            BackendPlan::Hybrid(h) => h.nnz(),
        }
    }
    /// Rows of C (of op(A)).
    pub fn nrows(&self) -> usize {
        self.ops
            .op_a()
            .shape(self.shape.a_nrows, self.shape.a_ncols)
            .0
    }
    /// Columns of C (of op(B)).
    pub fn ncols(&self) -> usize {
        self.ops
            .op_b()
            .shape(self.shape.b_nrows, self.shape.b_ncols)
            .1
    }
    /// op(A) and op(B) of the product the plan computes.
    pub fn ops(&self) -> (Op, Op) {
        (self.ops.op_a(), self.ops.op_b())
    }
    /// Scalar multiplications of the product (GFLOP/s = 2 flops / seconds / 1e9).
    pub fn flops(&self) -> u64 {
        self.flops
    }
    pub fn format(&self) -> OutputFormat {
        self.format
    }
    pub fn sorted(&self) -> bool {
        self.sorted
    }
    pub fn kind(&self) -> PlanKind {
        match self.backend {
            BackendPlan::Cpu(_) => PlanKind::Cpu,
            BackendPlan::Gpu(_) => PlanKind::Gpu,
            BackendPlan::Hybrid(_) => PlanKind::Hybrid,
        }
    }
    /// Whether the plan is a small product's: both phases run serially on the calling
    /// thread (see `Options::small_path`).
    pub fn small(&self) -> bool {
        matches!(&self.backend, BackendPlan::Cpu(p) if p.small)
    }
    /// The hybrid split (when hybrid execution was asked for).
    pub fn split(&self) -> Option<&Split> {
        self.split.as_ref()
    }

    /// The accumulator each phase runs with (the GPU's hash tables count as linear
    /// probing; a hybrid plan reports its CPU part's).
    pub fn algorithms(&self) -> (Algorithm, Algorithm) {
        match &self.backend {
            BackendPlan::Cpu(p) => (p.symbolic_alg, p.numeric_alg),
            BackendPlan::Gpu(_) => (Algorithm::LinearProbe, Algorithm::LinearProbe),
            BackendPlan::Hybrid(h) => (h.cpu.symbolic_alg, h.cpu.numeric_alg),
        }
    }

    /// C's 0-based row offsets (read from the device for a GPU plan).
    pub fn row_offsets(&self) -> Result<std::borrow::Cow<'_, [usize]>> {
        Ok(match &self.backend {
            BackendPlan::Cpu(p) => std::borrow::Cow::Borrowed(&p.row_ptr[..]),
            BackendPlan::Gpu(g) => std::borrow::Cow::Owned(cuda::plan_row_offsets(g)?),
            BackendPlan::Hybrid(h) => std::borrow::Cow::Borrowed(&h.row_ptr[..]),
        })
    }

    /// Where the plan's numeric calls run, and the hybrid split, as text (plan info).
    pub fn describe(&self) -> String {
        let backend = match self.kind() {
            PlanKind::Cpu => "cpu",
            PlanKind::Gpu => "gpu",
            PlanKind::Hybrid => "hybrid",
        };
        let mut s = format!(
            "backend: {backend}\nrows: {}\nnnz: {}\nmultiplications: {}\n",
            self.nrows(),
            self.nnz(),
            self.flops
        );
        let (op_a, op_b) = self.ops();
        if op_a.transposes() || op_b.transposes() {
            s.push_str(&format!(
                "operands: {} * {} (transposed structures kept: {} bytes)\n",
                op_a.of("A"),
                op_b.of("B"),
                self.ops.bytes()
            ));
        }
        if let BackendPlan::Cpu(p) = &self.backend {
            s.push_str(&p.describe());
        }
        if let BackendPlan::Hybrid(h) = &self.backend {
            s.push_str(&h.setup.describe());
            s.push('\n');
        }
        if let Some(sp) = &self.split {
            s.push_str(&sp.describe());
            s.push('\n');
        }
        s
    }

    /// Rows of C computed on the CPU and on the GPU.
    pub fn rows_by_side(&self) -> (usize, usize) {
        match (&self.split, &self.backend) {
            (Some(sp), _) => (sp.cpu_rows(), sp.gpu_rows()),
            (None, BackendPlan::Gpu(_)) => (0, self.nrows()),
            (None, _) => (self.nrows(), 0),
        }
    }

    /// A CPU plan's internals (None for other plans), for tests and reports.
    pub fn cpu_details(&self) -> Option<CpuDetails> {
        match &self.backend {
            BackendPlan::Cpu(p) => Some(p.details()),
            _ => None,
        }
    }

    /// The GPU plan (tests of the GPU backend's bins).
    #[cfg(test)]
    pub(crate) fn gpu_plan(&self) -> Option<&GpuPlan> {
        match &self.backend {
            BackendPlan::Gpu(g) => Some(g),
            _ => None,
        }
    }

    /// Forgets what earlier numeric calls learned (after a failed call).
    pub(crate) fn forget(&self) {
        match &self.backend {
            BackendPlan::Cpu(p) => p.forget(),
            BackendPlan::Hybrid(h) => h.cpu.forget(),
            BackendPlan::Gpu(_) => {}
        }
    }
}
