//! The typed handle: the engine (workers, per-backend state), the options and the cache
//! of library-owned result arrays. Every product call goes through [`Handle::guarded`],
//! so no failed call leaves state behind that could change a later call's result.

use std::sync::Arc;

use super::output_cache::OutputCache;
use crate::common::csr::{AnyCsr, CsrRef, FromAny, OneOp, dispatch_one};
use crate::common::options::Options;
use crate::error::{Error, Result, Status};
use crate::exec::Engine;
use crate::platform::topo::chunk::ChunkLedger;
use crate::platform::topo::info::BindOutcome;
use crate::platform::topo::{BindPolicy, HbmBudget, HbmMode, Placement, Topo};
use crate::types::{Idx, Scalar};

/// Owns the worker threads, the options and what calls reuse.
pub struct Handle {
    engine: Engine,
    pub options: Options,
    /// Arrays of destroyed library-owned results, for the next ones (shared with the
    /// results, which give their arrays back when dropped; see [`super::output_cache`]).
    pub outputs: Arc<OutputCache>,
}

impl Handle {
    /// A handle with `threads` workers (0 = `SPGEMM_NUM_THREADS`, else all cores), bound
    /// to cores by the default policy (`SPGEMM_PROC_BIND`).
    pub fn new(threads: usize) -> Result<Handle> {
        Handle::with_topology(threads, Topo::system())
    }

    /// Like [`Handle::new`] on a given topology. On a topology that is not this machine's
    /// (XML, synthetic) the plan is made but no worker is bound (outcomes say why).
    pub fn with_topology(threads: usize, topo: Arc<Topo>) -> Result<Handle> {
        Ok(Handle {
            engine: Engine::new(threads, topo)?,
            options: Options::default(),
            outputs: Default::default(),
        })
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Runs a product call so that a failure leaves nothing behind: a panic becomes an
    /// error, the backends' scratch is discarded (a row cut short leaves marks and sums
    /// that the next call would trust), and with validation off a failure is explained by
    /// validating `inputs` after the fact.
    pub(crate) fn guarded<T>(
        &self,
        inputs: &[(&str, &AnyCsr<'_>)],
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        crate::panics::catch(f).map_err(|e| {
            self.engine.discard_scratch();
            self.explain(inputs, e)
        })
    }

    /// With validation off, bad input shows up as some other failure (an index past an
    /// array, a row whose length differs from the plan's): validate the inputs now and
    /// report what is wrong with them instead.
    fn explain(&self, inputs: &[(&str, &AnyCsr<'_>)], e: Error) -> Error {
        if self.options.validate || !matches!(e.status, Status::Internal | Status::PlanMismatch) {
            return e;
        }
        struct Check<'n>(&'n str);
        impl OneOp for Check<'_> {
            type Out = ();
            fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>) -> Result<()>
            where
                O: Idx + FromAny<'a>,
                I: Idx + FromAny<'a>,
                V: Scalar + FromAny<'a>,
            {
                a.validate(self.0)
            }
        }
        for (name, m) in inputs {
            let found =
                crate::panics::catch(|| self.engine.install(|| dispatch_one(m, Check(name)))?);
            if let Err(bad) = found {
                return Error::new(
                    bad.status,
                    format!(
                        "validation is off (spgemm_set_validation) and the inputs are invalid: {} \
                         (checked after the call failed with: {})",
                        bad.message, e.message
                    ),
                );
            }
        }
        e
    }

    pub fn threads(&self) -> usize {
        self.engine.workers().threads()
    }

    /// Replaces the worker pool (and the per-thread workspace that belonged to it).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        self.engine.set_threads(threads)
    }

    /// Sets the binding policy (`SPGEMM_PROC_BIND`, when set, still wins). Restarts the
    /// workers when their cores change.
    pub fn set_binding(&mut self, policy: BindPolicy) -> Result<()> {
        self.engine.set_binding(policy)
    }

    /// Sets the high-bandwidth memory mode and re-plans memory nodes.
    pub fn set_hbm(&mut self, mode: HbmMode) -> Result<()> {
        self.engine.set_hbm(mode)
    }

    pub fn hbm_mode(&self) -> HbmMode {
        self.engine.workers().hbm_mode()
    }

    /// The binding policy asked for (option or environment; `Auto` unresolved).
    pub fn binding_requested(&self) -> BindPolicy {
        self.engine.workers().binding_requested()
    }

    /// The plan: worker i's core, NUMA node and memory node (`placement().worker(i)`).
    pub fn placement(&self) -> &Placement {
        self.engine.workers().placement()
    }

    pub fn topology(&self) -> &Arc<Topo> {
        self.engine.workers().topology()
    }

    /// Whether the machine has high-bandwidth memory.
    pub fn hbm_present(&self) -> bool {
        self.engine.workers().hbm_present()
    }

    /// High-bandwidth memory holding every worker's chunk, if the plan puts them there.
    pub fn hbm_budget(&self) -> Option<HbmBudget> {
        self.engine.workers().hbm_budget()
    }

    /// What each worker did about binding (starts the workers if they are not running).
    pub fn bind_outcomes(&self) -> Vec<BindOutcome> {
        self.engine.workers().bind_outcomes()
    }

    /// Whether the worker threads are running (they start on the first call that splits).
    pub fn workers_started(&self) -> bool {
        self.engine.workers().started()
    }

    /// The topology report as JSON (see `spgemm_topology_info`).
    pub fn topology_info(&self) -> String {
        self.engine.topology_info()
    }

    /// Where each worker's buffers were placed (for tests and reports).
    pub fn ledgers(&self) -> Vec<ChunkLedger> {
        self.engine.ledgers()
    }

    /// Runs `f` inside this handle's worker pool (started on first use).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        self.engine.install(f)
    }

    /// Why the GPU cannot be used, or Ok (opens it on first call).
    pub fn gpu_check(&self) -> Result<()> {
        self.engine.gpu().map(|_| ())
    }

    /// Whether a usable GPU is present.
    pub fn gpu_available(&self) -> bool {
        self.gpu_check().is_ok()
    }

    /// One line naming the GPU, for reports ("none: <reason>" without one).
    pub fn gpu_describe(&self) -> String {
        self.engine.gpu_describe()
    }

    /// Shared memory per block of the GPU (bytes), for tests of the bin tables.
    #[cfg(feature = "cuda")]
    pub fn gpu_smem_per_block(&self) -> Result<usize> {
        self.engine.gpu().map(|g| g.smem_per_block)
    }

    /// CPU and GPU rates measured by hybrid products, for the next split.
    pub fn hybrid_rates(&self) -> crate::common::split::Rates {
        self.engine.rates()
    }
}
