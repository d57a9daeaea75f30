//! CPU backend: flop-balanced row partitions over the handle's rayon pool, per-thread
//! accumulators (KKDENSE, KKMEM, KKLP) for the symbolic (bit sets) and numeric phases,
//! compression of B, the KKSPGEMM selector, the replay kernel for reused plans, and the
//! SpMM kernels. A peer of the other backends: it imports only the layers beneath
//! (`common`, `platform`) and is driven by the dispatcher through [`Ctx`].

/// Defines the kernel `$name` (never inlined) whose loop `$body` runs compiled for AVX2
/// where the CPU has it (`Isa::detect`), else in the base ISA: the same Rust code, so the
/// same bits (the compiler never fuses a multiply and an add). Parameters are plain names.
macro_rules! avx2_copy {
    (
        $(#[$m:meta])*
        fn $name:ident<$($g:ident: $b:path),*>($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $(#[$m])*
        #[inline(never)]
        fn $name<$($g: $b),*>($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body<$($g: $b),*>($($arg: $ty),*) $(-> $ret)? $body
            /// # Safety
            /// The CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<$($g: $b),*>($($arg: $ty),*) $(-> $ret)? {
                body($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if crate::platform::isa::Isa::detect() != crate::platform::isa::Isa::Base {
                // SAFETY: the CPU has AVX2 (detected).
                return unsafe { avx2($($arg),*) };
            }
            body($($arg),*)
        }
    };
}

pub mod accum;
pub mod args;
pub mod compress;
pub mod dense;
// Only the distributed SpMV plans keep diagonal runs (they own their copy of A's values).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub mod diag_runs;
pub mod gustavson;
// Only the distributed SpMV plans keep rows in length order (they own their copy of A).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub mod length_order;
pub mod partition;
pub mod prefetch;
pub mod record;
pub(crate) mod replay_parts;
pub mod row_groups;
pub mod select;
pub mod slot_map;
pub mod small;
pub mod sort;
pub mod spgemm;
pub mod spmm;
pub(crate) mod stream;
pub mod symbolic;
pub mod util;
pub mod workspace;

use std::sync::Arc;

use parking_lot::Mutex;

use crate::common::options::Algorithm;
use crate::platform::topo::chunk::{ChunkLedger, ChunkSummary};
use crate::platform::topo::placement::WorkerPlace;
use crate::platform::topo::{HbmBudget, Topo};
use crate::platform::workers::Workers;
use workspace::WorkspacePool;

/// What the CPU backend keeps between calls of a handle: one workspace per worker (the
/// ONE2ONE pool) and SpMM's packed panel of X.
pub struct CpuState {
    pub(crate) workspace: WorkspacePool,
    /// The accumulators of small products, which run on the calling thread
    /// ([`small`]); ordinary memory, first touched by that thread.
    pub(crate) small: Mutex<workspace::Workspace>,
    pub(crate) spmm_pack: Mutex<spmm::PackScratch>,
}

impl CpuState {
    /// State for `threads` workers placed as `places` says (see [`WorkspacePool::new`]).
    pub fn new(threads: usize, topo: Arc<Topo>, places: Vec<WorkerPlace>) -> CpuState {
        CpuState {
            workspace: WorkspacePool::new(threads, topo, places),
            small: Default::default(),
            spmm_pack: Default::default(),
        }
    }

    /// Drops everything the workers keep between calls (after a failed call, whose
    /// interrupted rows may have broken the accumulators' invariants).
    pub fn reset(&self) {
        self.workspace.reset();
        *self.small.lock() = Default::default();
        *self.spmm_pack.lock() = Default::default();
    }

    /// Where each worker's chunk is, as recorded when its buffers were allocated.
    pub fn chunk_summaries(&self) -> Vec<ChunkSummary> {
        self.workspace.chunk_summaries()
    }

    /// The record of each worker's chunk buffers (for tests and reports).
    pub fn ledgers(&self) -> Vec<ChunkLedger> {
        self.workspace.ledgers()
    }
}

/// What a CPU call runs with: the handle's workers and their state, and the options that
/// concern the CPU kernels.
pub struct Ctx<'a> {
    /// The handle's workers; `workers.pool()` starts them if they are not running.
    pub workers: &'a Workers,
    pub threads: usize,
    pub state: &'a CpuState,
    /// The algorithm asked for (`Auto`: the selector's choice).
    pub algorithm: Algorithm,
    /// Column indices of C sorted within each row.
    pub sorted: bool,
    /// High-bandwidth memory holding every worker's accumulators (None: ordinary memory).
    pub hbm: Option<HbmBudget>,
    /// The product is small: it runs serially on the calling thread ([`small`]; the
    /// dispatcher's choice).
    pub small: bool,
    /// The dense symbolic phase keeps C's columns in the plan ([`record`]).
    pub keep_columns: bool,
    /// The caller reads C's structure right after the symbolic phase: a record pays
    /// whatever the products per row and predicted size ([`record::pays`]).
    pub structure_wanted: bool,
}

impl Ctx<'_> {
    /// The workers' pool for a split SpMM, or None when they cannot be started: the call
    /// then runs on the calling thread alone (SpMM gives the same Y on any thread count).
    pub fn pool_or_caller(&self) -> Option<&rayon::ThreadPool> {
        self.workers.pool().ok()
    }
}
