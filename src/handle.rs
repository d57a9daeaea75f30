//! The typed handle: thread pool, options and reusable per-thread workspace.

use crate::cpu::workspace::WorkspacePool;
use crate::error::{Error, Result, Status};

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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algorithm: Algorithm::Auto,
            sorted_output: true,
            validate: true,
            backend: Backend::Auto,
        }
    }
}

/// Owns the worker threads and what they reuse between calls.
pub struct Handle {
    pool: rayon::ThreadPool,
    threads: usize,
    pub options: Options,
    pub workspace: WorkspacePool,
    /// The GPU, opened on first use (kernels compiled once per handle).
    pub gpu: crate::cuda::DeviceSlot,
}

/// Threads used when the caller does not say: `SPGEMM_NUM_THREADS`, else all cores.
pub fn default_threads() -> usize {
    std::env::var("SPGEMM_NUM_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("spgemm-worker-{i}"))
        .build()
        .map_err(|e| {
            Error::new(
                Status::AllocFailed,
                format!("cannot start {threads} worker threads: {e}"),
            )
        })
}

impl Handle {
    /// A handle with `threads` workers (0 = `default_threads()`).
    pub fn new(threads: usize) -> Result<Handle> {
        let threads = if threads == 0 {
            default_threads()
        } else {
            threads
        };
        Ok(Handle {
            pool: build_pool(threads)?,
            threads,
            options: Options::default(),
            workspace: WorkspacePool::new(threads),
            gpu: Default::default(),
        })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Replaces the worker pool (and the per-thread workspace that belonged to it).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        let threads = if threads == 0 {
            default_threads()
        } else {
            threads
        };
        if threads != self.threads {
            self.pool = build_pool(threads)?;
            self.threads = threads;
            self.workspace = WorkspacePool::new(threads);
        }
        Ok(())
    }

    /// Runs `f` inside this handle's worker pool.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}
