//! The worker threads of a handle: a rayon pool whose workers bind themselves to the cores
//! the placement plan gives them (hwloc), with the plan, the binding outcomes and the
//! notes the topology report shows. Re-planned when the thread count, binding policy or
//! high-bandwidth memory mode changes. The pool starts on first use: a handle that only
//! makes small products (run on the calling thread) never starts a thread, and creating a
//! handle or changing its thread count costs no thread start and join.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::error::{Error, Result, Status};
use crate::platform::topo::chunk::ChunkSummary;
use crate::platform::topo::info::{BindOutcome, PolicySource, Report};
use crate::platform::topo::{
    BindPolicy, HbmBudget, HbmMode, MachineDesc, Placement, Topo, bind, placement,
};

/// Environment variable that overrides the binding policy (values as `OMP_PROC_BIND`:
/// spread, close, none/false, auto/true).
pub const PROC_BIND_ENV: &str = "SPGEMM_PROC_BIND";

/// Most worker threads a handle may have. Larger requests are refused before anything is
/// allocated: each worker costs a stack and a workspace, and no machine this library
/// targets has more hardware threads.
pub const MAX_THREADS: usize = 4096;

/// Bytes the worker pool itself may allocate during one parallel call, for memory
/// estimates: rayon's injector takes a new block of 63 jobs (1,520 bytes) when one fills, a
/// worker's deque doubles past 32 pending jobs, and a thread's first steal registers it
/// with crossbeam's epoch collector (about 2 KiB, kept while the thread lives).
pub fn call_overhead_bytes(threads: usize) -> u64 {
    2048 + 4096 * threads as u64
}

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
        Err(_) => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            // An MPI rank sharing the node: the PUs of the cores its workers are placed on
            // (`Topo::desc_for_caller`, the one place that decides the share).
            let n = match crate::platform::topo::node_rank() {
                Some(_) => {
                    let desc = Topo::system().desc_for_caller();
                    n.min(desc.cores.iter().map(|c| c.pus.len()).sum())
                }
                None => n,
            };
            Ok(n.clamp(1, MAX_THREADS))
        }
    }
}

/// `threads`, or the default for 0; more than [`MAX_THREADS`] is an error.
pub fn thread_count(threads: usize) -> Result<usize> {
    match threads {
        0 => default_threads(),
        n if n > MAX_THREADS => Err(Error::new(
            Status::InvalidValue,
            format!("{n} threads asked for; at most {MAX_THREADS} are supported"),
        )),
        n => Ok(n),
    }
}

/// A note for the topology info when `desc` is an MPI rank's share of the node's cores
/// (`Topo::desc_for_caller`).
fn share_note(topo: &Topo, desc: &MachineDesc) -> Option<String> {
    let (rank, size) = crate::platform::topo::node_rank()?;
    let all = topo.desc().cores.len();
    (desc.cores.len() < all).then(|| {
        format!(
            "MPI rank {rank} of {size} on this node: workers placed on its share of the cores ({} of {all})",
            desc.cores.len()
        )
    })
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
/// A rayon pool whose threads are joined when it is dropped: a handle's destruction (or a
/// restart of its workers) returns only once its threads have ended, so nothing of the
/// library runs, or holds memory, after `spgemm_destroy`.
pub struct Pool {
    pool: Option<rayon::ThreadPool>,
    joins: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
}

impl std::ops::Deref for Pool {
    type Target = rayon::ThreadPool;
    fn deref(&self) -> &rayon::ThreadPool {
        self.pool.as_ref().expect("present until dropped")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Dropping rayon's pool tells the workers to end; joining waits until they have.
        drop(self.pool.take());
        for j in std::mem::take(&mut *self.joins.lock()) {
            let _ = j.join();
        }
        // The workers' deques deferred their buffers to the epoch collector; a few
        // advances collect them now (each flush may move the epoch on by one, and garbage
        // is freed two epochs after it was deferred).
        for _ in 0..EPOCH_FLUSHES {
            crossbeam_epoch::pin().flush();
        }
    }
}

/// Epoch advances at a pool's end (see `Pool::drop`).
const EPOCH_FLUSHES: usize = 4;

fn build_pool(
    threads: usize,
    topo: &Arc<Topo>,
    placement: &Placement,
    outcomes: &Arc<Mutex<Vec<BindOutcome>>>,
) -> Result<Pool> {
    *outcomes.lock() = vec![BindOutcome::Pending; threads];
    let places: Vec<Vec<u32>> = placement.workers.iter().map(|w| w.pus.clone()).collect();
    let hook_topo = Arc::clone(topo);
    let hook_outcomes = Arc::clone(outcomes);
    let joins: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>> = Arc::default();
    let spawned = Arc::clone(&joins);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .spawn_handler(move |t| {
            let j = std::thread::Builder::new()
                .name(format!("spgemm-worker-{}", t.index()))
                .spawn(move || t.run())?;
            spawned.lock().push(j);
            Ok(())
        })
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
    Ok(Pool {
        pool: Some(pool),
        joins,
    })
}

/// A handle's workers and where they run.
pub struct Workers {
    /// Started by the first call that needs it ([`Workers::pool`]); emptied when a re-plan
    /// changes the threads or their cores.
    pool: OnceLock<Pool>,
    threads: usize,
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
}

impl Workers {
    /// `threads` workers (0 = [`default_threads`]) on `topo`, bound by the default policy
    /// (see [`BindPolicy::Auto`], `SPGEMM_PROC_BIND`). On a topology that is not this
    /// machine's (XML, synthetic) the plan is made but no worker is bound.
    pub fn new(threads: usize, topo: Arc<Topo>) -> Result<Workers> {
        let threads = thread_count(threads)?;
        let desc = topo.desc_for_caller();
        let mut messages: Vec<String> = share_note(&topo, &desc).into_iter().collect();
        let (policy, policy_source) = effective_policy(None, &mut messages);
        let placement = placement::plan(&desc, threads, policy, HbmMode::Auto);
        let outcomes = Arc::new(Mutex::new(vec![BindOutcome::Pending; threads]));
        Ok(Workers {
            pool: OnceLock::new(),
            threads,
            placement,
            bind_option: None,
            hbm: HbmMode::Auto,
            topo,
            desc,
            policy_source,
            outcomes,
            messages,
        })
    }

    /// Re-plans placement for the current options and, if the CPU binding changes or
    /// `force` is set, restarts the workers (the per-worker memory is then placed anew by
    /// its owner).
    fn replan(&mut self, threads: usize, force: bool) -> Result<()> {
        let mut messages: Vec<String> = share_note(&self.topo, &self.desc).into_iter().collect();
        let (policy, source) = effective_policy(self.bind_option, &mut messages);
        let placement = placement::plan(&self.desc, threads, policy, self.hbm);
        let cpus_changed = placement.workers.iter().map(|w| &w.pus).ne(self
            .placement
            .workers
            .iter()
            .map(|w| &w.pus));
        if force || cpus_changed || threads != self.threads {
            // The old workers are joined here; the new ones start on first use.
            self.pool = OnceLock::new();
            *self.outcomes.lock() = vec![BindOutcome::Pending; threads];
        }
        self.threads = threads;
        self.placement = placement;
        self.policy_source = source;
        self.messages = messages;
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

    /// Replaces the worker pool when the number of threads changes (0 = the default).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        let threads = thread_count(threads)?;
        if threads != self.threads {
            self.replan(threads, true)?;
        }
        Ok(())
    }

    pub fn hbm_mode(&self) -> HbmMode {
        self.hbm
    }

    /// The binding policy asked for (option or environment; `Auto` unresolved).
    pub fn binding_requested(&self) -> BindPolicy {
        self.placement.requested
    }

    /// The plan: worker i's core, NUMA node and memory node.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    pub fn topology(&self) -> &Arc<Topo> {
        &self.topo
    }

    /// Whether the machine has high-bandwidth memory.
    pub fn hbm_present(&self) -> bool {
        self.desc.hbm_present()
    }

    /// High-bandwidth memory holding every worker's chunk, if the plan puts them there.
    pub fn hbm_budget(&self) -> Option<HbmBudget> {
        self.placement.hbm_budget(&self.desc)
    }

    /// What each worker did about binding. Starts the workers if they are not running (a
    /// pool that cannot start leaves every outcome `Pending`).
    pub fn bind_outcomes(&self) -> Vec<BindOutcome> {
        let _ = self.pool();
        self.outcomes.lock().clone()
    }

    /// The topology report as JSON, with where each worker's memory chunk is (`chunks`).
    pub fn topology_info(&self, chunks: &[ChunkSummary]) -> String {
        let started = self.pool().err();
        let outcomes = self.outcomes.lock().clone();
        let mut messages = self.messages.clone();
        if let Some(e) = started {
            messages.push(e.message);
        }
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
            chunks,
        }
        .to_json()
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` inside the worker pool (started if it is not running).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        Ok(self.pool()?.install(f))
    }

    /// The worker pool, started on the first call: for kernels that work on the calling
    /// thread beside the workers. Fails (`AllocFailed`) when the threads cannot be started.
    pub fn pool(&self) -> Result<&rayon::ThreadPool> {
        if let Some(p) = self.pool.get() {
            return Ok(p);
        }
        let p = build_pool(self.threads, &self.topo, &self.placement, &self.outcomes)?;
        // Two calls racing on one handle: the loser's pool is dropped (its threads joined).
        let _ = self.pool.set(p);
        Ok(self.pool.get().expect("set above"))
    }

    /// Whether the workers are running (tests: a small product starts none).
    pub fn started(&self) -> bool {
        self.pool.get().is_some()
    }
}
