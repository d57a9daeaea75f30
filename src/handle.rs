//! The typed handle: thread pool, options and reusable per-thread workspace.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::cpu::workspace::WorkspacePool;
use crate::error::{Error, Result, Status};
use crate::topo::info::{BindOutcome, PolicySource, Report};
use crate::topo::{BindPolicy, HbmMode, MachineDesc, Placement, Topo, bind, placement};

/// Environment variable that overrides the binding policy (values as `OMP_PROC_BIND`:
/// spread, close, none/false, auto/true).
pub const PROC_BIND_ENV: &str = "SPGEMM_PROC_BIND";

/// SpGEMM algorithm choice (codes as in the C header's `SPGEMM_ALG_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Chosen per product by the selector (`crate::exec::select`).
    Auto = 0,
    /// Dense accumulator: values and a marker array of length k per thread (KKDENSE).
    Dense = 1,
    /// Two-level open-addressing hash accumulator with linear probing, each level at
    /// most 50% full (KKLP).
    LinearProbe = 2,
    /// Two-level linked-list hash map: Begins/Nexts/Ids/Values (KKMEM).
    LinkedList = 3,
}

impl Algorithm {
    /// Every algorithm a caller can request, `Auto` first (benchmarks and tests iterate
    /// over it, so a new variant must be listed here).
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Auto,
        Algorithm::Dense,
        Algorithm::LinearProbe,
        Algorithm::LinkedList,
    ];

    /// The algorithm whose `name()` is `name` (ASCII case-insensitive).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn from_code(code: i32) -> Option<Algorithm> {
        match code {
            0 => Some(Algorithm::Auto),
            1 => Some(Algorithm::Dense),
            2 => Some(Algorithm::LinearProbe),
            3 => Some(Algorithm::LinkedList),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Dense => "kkdense",
            Algorithm::LinearProbe => "kklp",
            Algorithm::LinkedList => "kkmem",
        }
    }
}

/// Where products run (codes as in the C header's `SPGEMM_BACKEND_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// GPU for large products when a device is usable, else CPU.
    Auto = 0,
    Cpu = 1,
    Cuda = 2,
}

impl Backend {
    pub fn from_code(code: i32) -> Option<Backend> {
        match code {
            0 => Some(Backend::Auto),
            1 => Some(Backend::Cpu),
            2 => Some(Backend::Cuda),
            _ => None,
        }
    }
}

/// Options a caller may set on a handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub algorithm: Algorithm,
    /// Column indices of C sorted within each row (default true).
    pub sorted_output: bool,
    /// Full O(nnz) checks of the inputs (default true).
    pub validate: bool,
    pub backend: Backend,
    /// Hybrid CPU+GPU products (`crate::hybrid`): rows split between the CPU and the GPU
    /// when a GPU is usable (default false).
    pub hybrid: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algorithm: Algorithm::Auto,
            sorted_output: true,
            validate: true,
            backend: Backend::Auto,
            hybrid: false,
        }
    }
}

/// Owns the worker threads and what they reuse between calls.
pub struct Handle {
    pool: rayon::ThreadPool,
    threads: usize,
    pub options: Options,
    pub workspace: WorkspacePool,
    /// Where the workers run and where their memory should live.
    placement: Placement,
    /// Binding policy set through the API (None: not set).
    bind_option: Option<BindPolicy>,
    hbm: HbmMode,
    topo: Arc<Topo>,
    /// The machine as the creating thread saw it (its CPU mask applied).
    desc: MachineDesc,
    policy_source: PolicySource,
    /// What each worker's start hook did about binding.
    outcomes: Arc<Mutex<Vec<BindOutcome>>>,
    /// Notes for the topology info (environment variable not understood, ...).
    messages: Vec<String>,
    /// The GPU, opened on first use (kernels compiled once per handle).
    pub gpu: crate::cuda::DeviceSlot,
    /// CPU and GPU rates measured by hybrid products, for the next split (Heuristic II).
    pub hybrid_rates: Mutex<crate::hybrid::Rates>,
    /// SpMM's packed panel of X (column-major products with scattered columns), grown on
    /// first use and reused by later calls.
    pub spmm_pack: Mutex<crate::cpu::spmm::PackScratch>,
    /// Arrays of destroyed library-owned results, for the next ones (shared with the
    /// results, which give their arrays back when dropped; see [`crate::output_cache`]).
    pub outputs: Arc<crate::output_cache::OutputCache>,
}

/// Most worker threads a handle may have. Larger requests are refused before anything is
/// allocated: each worker costs a stack and a workspace, and no machine this library
/// targets has more hardware threads.
pub const MAX_THREADS: usize = 4096;

/// Threads used when the caller does not say: `SPGEMM_NUM_THREADS`, else all cores (at
/// most [`MAX_THREADS`]). A value of the variable that is not a count in
/// `1..=MAX_THREADS` is an error, never a silent fallback.
pub fn default_threads() -> Result<usize> {
    match std::env::var("SPGEMM_NUM_THREADS") {
        Ok(s) => match s.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
            _ => Err(Error::new(
                Status::InvalidValue,
                format!("SPGEMM_NUM_THREADS={s:?} is not a thread count from 1 to {MAX_THREADS}"),
            )),
        },
        Err(_) => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(MAX_THREADS)),
    }
}

/// `threads`, or the default for 0; more than [`MAX_THREADS`] is an error.
fn thread_count(threads: usize) -> Result<usize> {
    match threads {
        0 => default_threads(),
        n if n > MAX_THREADS => Err(Error::new(
            Status::InvalidValue,
            format!("{n} threads asked for; at most {MAX_THREADS} are supported"),
        )),
        n => Ok(n),
    }
}

/// The policy in force: `SPGEMM_PROC_BIND` when set and understood, else the option,
/// else `Auto`. A value not understood is ignored with a note (never an error).
fn effective_policy(
    option: Option<BindPolicy>,
    notes: &mut Vec<String>,
) -> (BindPolicy, PolicySource) {
    if let Ok(v) = std::env::var(PROC_BIND_ENV) {
        match BindPolicy::parse(&v) {
            Some(p) => return (p, PolicySource::Environment),
            None => notes.push(format!(
                "{PROC_BIND_ENV}={v:?} is not one of spread, close, none, auto; ignored"
            )),
        }
    }
    match option {
        Some(p) => (p, PolicySource::Option),
        None => (BindPolicy::Auto, PolicySource::Default),
    }
}

/// Starts `threads` workers; worker i binds itself to `placement.worker(i)` in rayon's
/// start hook and records the outcome. Returns once every worker has started, so the
/// outcomes are complete.
fn build_pool(
    threads: usize,
    topo: &Arc<Topo>,
    placement: &Placement,
    outcomes: &Arc<Mutex<Vec<BindOutcome>>>,
) -> Result<rayon::ThreadPool> {
    *outcomes.lock() = vec![BindOutcome::Pending; threads];
    let places: Vec<Vec<u32>> = placement.workers.iter().map(|w| w.pus.clone()).collect();
    let hook_topo = Arc::clone(topo);
    let hook_outcomes = Arc::clone(outcomes);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("spgemm-worker-{i}"))
        .start_handler(move |i| {
            let pus = places.get(i).map_or(&[][..], |p| p.as_slice());
            let outcome = if pus.is_empty() {
                BindOutcome::Unbound
            } else {
                match bind::bind_current_thread(&hook_topo, pus) {
                    Ok(()) => BindOutcome::Bound,
                    Err(m) => BindOutcome::Failed(m),
                }
            };
            if let Some(slot) = hook_outcomes.lock().get_mut(i) {
                *slot = outcome;
            }
        })
        .build()
        .map_err(|e| {
            Error::new(
                Status::AllocFailed,
                format!("cannot start {threads} worker threads: {e}"),
            )
        })?;
    // Every worker runs its start hook before any job: one job on each is the barrier.
    pool.broadcast(|_| ());
    Ok(pool)
}

impl Handle {
    /// A handle with `threads` workers (0 = `default_threads()`), bound to cores by the
    /// default policy (see [`BindPolicy::Auto`], `SPGEMM_PROC_BIND`).
    pub fn new(threads: usize) -> Result<Handle> {
        Handle::with_topology(threads, Topo::system())
    }

    /// Like [`Handle::new`] on a given topology. On a topology that is not this machine's
    /// (XML, synthetic) the plan is made but no worker is bound (outcomes say why).
    pub fn with_topology(threads: usize, topo: Arc<Topo>) -> Result<Handle> {
        let threads = thread_count(threads)?;
        let desc = topo.desc_for_caller();
        let mut messages = Vec::new();
        let (policy, policy_source) = effective_policy(None, &mut messages);
        let placement = placement::plan(&desc, threads, policy, HbmMode::Auto);
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let pool = build_pool(threads, &topo, &placement, &outcomes)?;
        Ok(Handle {
            pool,
            threads,
            options: Options::default(),
            workspace: WorkspacePool::new(threads, Arc::clone(&topo), placement.workers.clone()),
            placement,
            bind_option: None,
            hbm: HbmMode::Auto,
            topo,
            desc,
            policy_source,
            outcomes,
            messages,
            gpu: Default::default(),
            hybrid_rates: Default::default(),
            spmm_pack: Default::default(),
            outputs: Default::default(),
        })
    }

    /// Re-plans placement for the current options and, if the CPU binding changes or
    /// `force` is set, restarts the workers. The per-thread workspace starts afresh so its
    /// chunks are placed for the new plan.
    fn replan(&mut self, threads: usize, force: bool) -> Result<()> {
        let mut messages = Vec::new();
        let (policy, source) = effective_policy(self.bind_option, &mut messages);
        let placement = placement::plan(&self.desc, threads, policy, self.hbm);
        let cpus_changed = placement.workers.iter().map(|w| &w.pus).ne(self
            .placement
            .workers
            .iter()
            .map(|w| &w.pus));
        if force || cpus_changed || threads != self.threads {
            self.pool = build_pool(threads, &self.topo, &placement, &self.outcomes)?;
        }
        self.threads = threads;
        self.placement = placement;
        self.policy_source = source;
        self.messages = messages;
        self.workspace = WorkspacePool::new(
            threads,
            Arc::clone(&self.topo),
            self.placement.workers.clone(),
        );
        Ok(())
    }

    /// Sets the binding policy (`SPGEMM_PROC_BIND`, when set, still wins). Restarts the
    /// workers when their cores change.
    pub fn set_binding(&mut self, policy: BindPolicy) -> Result<()> {
        self.bind_option = Some(policy);
        self.replan(self.threads, false)
    }

    /// Sets the high-bandwidth memory mode and re-plans memory nodes.
    pub fn set_hbm(&mut self, mode: HbmMode) -> Result<()> {
        self.hbm = mode;
        self.replan(self.threads, false)
    }

    pub fn hbm_mode(&self) -> HbmMode {
        self.hbm
    }

    /// The binding policy asked for (option or environment; `Auto` unresolved).
    pub fn binding_requested(&self) -> BindPolicy {
        self.placement.requested
    }

    /// The plan: worker i's core, NUMA node and memory node (`placement().worker(i)`).
    /// The memory pool allocates worker i's chunk with
    /// `topo::memory::NodeBuf::alloc_zeroed(handle.topology(), len, worker.memory_node, ..)`
    /// from inside worker i.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    pub fn topology(&self) -> &Arc<Topo> {
        &self.topo
    }

    /// Whether the machine has high-bandwidth memory (for the algorithm selector).
    pub fn hbm_present(&self) -> bool {
        self.desc.hbm_present()
    }

    /// High-bandwidth memory holding every worker's chunk, if the plan puts them there
    /// (for the algorithm selector, `crate::exec::dense_numeric_budget`).
    pub fn hbm_budget(&self) -> Option<crate::topo::HbmBudget> {
        self.placement.hbm_budget(&self.desc)
    }

    /// What each worker did about binding (complete once the handle is built).
    pub fn bind_outcomes(&self) -> Vec<BindOutcome> {
        self.outcomes.lock().clone()
    }

    /// The topology report as JSON (see `spgemm_topology_info`).
    pub fn topology_info(&self) -> String {
        let outcomes = self.bind_outcomes();
        let mut messages = self.messages.clone();
        let failed = outcomes
            .iter()
            .filter(|o| matches!(o, BindOutcome::Failed(_)))
            .count();
        if failed > 0 {
            messages.push(format!(
                "{failed} of {} workers could not be bound and run unbound",
                outcomes.len()
            ));
        }
        Report {
            topo: &self.topo,
            desc: &self.desc,
            placement: &self.placement,
            outcomes: &outcomes,
            policy_source: self.policy_source,
            messages: &messages,
            chunks: &self.workspace.chunk_summaries(),
        }
        .to_json()
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Replaces the worker pool (and the per-thread workspace that belonged to it).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        let threads = thread_count(threads)?;
        if threads != self.threads {
            self.replan(threads, true)?;
        }
        Ok(())
    }

    /// Discards what the workers keep between calls (accumulators, marks, stamps, sums):
    /// called after any failed call, where a row interrupted midway may have left state
    /// that the next call would trust. Buffers are grown again on the next call.
    pub fn discard_scratch(&self) {
        self.workspace.reset();
        *self.spmm_pack.lock() = Default::default();
    }

    /// Runs `f` inside this handle's worker pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// The worker pool, for kernels that work on the calling thread beside the workers.
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }
}
