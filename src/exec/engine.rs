//! What a handle keeps between calls for its backends, and the CPU backend's context built
//! from it.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::common::options::Options;
use crate::common::split::Rates;
use crate::cpu::{self, CpuState};
use crate::cuda::{DeviceSlot, Gpu};
use crate::error::Result;
use crate::platform::topo::Topo;
use crate::platform::topo::chunk::ChunkLedger;
use crate::platform::workers::Workers;

/// Products whose inputs hold fewer entries stay on the CPU under `Backend::Auto`: the
/// copies to and from the device would cost more than the product.
pub const AUTO_MIN_INPUT_NNZ: usize = 1 << 20;

/// What a handle keeps between calls for its backends: the worker threads, the CPU's
/// per-worker workspace, the GPU (opened on first use) and the rates hybrid products
/// measured.
pub struct Engine {
    workers: Workers,
    cpu: CpuState,
    gpu: DeviceSlot,
    pub(super) rates: Mutex<Rates>,
}

impl Engine {
    /// `threads` workers (0 = the default) on `topo`.
    pub fn new(threads: usize, topo: Arc<Topo>) -> Result<Engine> {
        let workers = Workers::new(threads, topo)?;
        let cpu = Self::cpu_state(&workers);
        Ok(Engine {
            workers,
            cpu,
            gpu: DeviceSlot::default(),
            rates: Mutex::default(),
        })
    }

    fn cpu_state(w: &Workers) -> CpuState {
        CpuState::new(
            w.threads(),
            Arc::clone(w.topology()),
            w.placement().workers.clone(),
        )
    }

    pub fn workers(&self) -> &Workers {
        &self.workers
    }

    /// Changes the worker threads (0 = the default); their workspace starts afresh.
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        let before = self.workers.threads();
        self.workers.set_threads(threads)?;
        if self.workers.threads() != before {
            self.cpu = Self::cpu_state(&self.workers);
        }
        Ok(())
    }

    /// Re-plans binding; the workspace is placed anew.
    pub fn set_binding(&mut self, policy: crate::platform::topo::BindPolicy) -> Result<()> {
        self.workers.set_binding(policy)?;
        self.cpu = Self::cpu_state(&self.workers);
        Ok(())
    }

    /// Re-plans high-bandwidth memory; the workspace is placed anew.
    pub fn set_hbm(&mut self, mode: crate::platform::topo::HbmMode) -> Result<()> {
        self.workers.set_hbm(mode)?;
        self.cpu = Self::cpu_state(&self.workers);
        Ok(())
    }

    /// The topology report as JSON (see `spgemm_topology_info`).
    pub fn topology_info(&self) -> String {
        self.workers.topology_info(&self.cpu.chunk_summaries())
    }

    /// Where each worker's chunk is (for tests of the placement).
    #[cfg(test)]
    pub(crate) fn topology_chunks(&self) -> Vec<crate::platform::topo::chunk::ChunkSummary> {
        self.cpu.chunk_summaries()
    }

    /// Where each worker's buffers were placed (for tests and reports).
    pub fn ledgers(&self) -> Vec<ChunkLedger> {
        self.cpu.ledgers()
    }

    /// Discards what the backends keep between calls (after a failed call).
    pub fn discard_scratch(&self) {
        self.cpu.reset();
    }

    /// The GPU, or why it cannot be used (opened on first call).
    pub fn gpu(&self) -> Result<Arc<Gpu>> {
        self.gpu.get()
    }

    /// CPU and GPU rates measured by hybrid products.
    pub fn rates(&self) -> Rates {
        *self.rates.lock()
    }

    /// One line naming the GPU ("none: <reason>" without one).
    pub fn gpu_describe(&self) -> String {
        self.gpu.describe()
    }

    /// Runs `f` inside the worker pool (started on first use).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        self.workers.install(f)
    }

    /// [`Self::cpu_ctx`] for a product whose inputs never change structure (`fixed`: the
    /// distributed backend's node products, validation off): its calls trust the structure
    /// without digests, so C's columns and slot maps may be kept as where every call checks
    /// it.
    pub(super) fn cpu_ctx_for(&self, o: &Options, fixed: bool) -> cpu::Ctx<'_> {
        let mut ctx = self.cpu_ctx(o);
        ctx.keep_columns |= fixed && o.memory_limit == 0;
        ctx
    }

    pub(super) fn cpu_ctx(&self, o: &Options) -> cpu::Ctx<'_> {
        cpu::Ctx {
            workers: &self.workers,
            threads: self.workers.threads(),
            state: &self.cpu,
            algorithm: o.algorithm,
            sorted: o.sorted_output,
            hbm: self.workers.hbm_budget(),
            small: false,
            // Only where every numeric call checks the structure (the record replaces the
            // discovery of C's columns) and no memory limit asks for the leanest plan.
            keep_columns: o.validate && o.memory_limit == 0,
            structure_wanted: false,
        }
    }
}
