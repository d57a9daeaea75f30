//! Per-thread workspace kept on the handle: one chunk of the ONE2ONE memory pool
//! ([`crate::platform::pool`]) per worker, located by the worker's index. Buffers grow on demand
//! through fallible allocation and are reused by later calls, so the hot path does not
//! allocate.
//!
//! NUMA placement: each use of a worker's chunk runs inside a growth scope
//! ([`crate::platform::alloc::GrowthScope`]) whose hook ([`crate::platform::topo::chunk::ChunkPlacer`]) binds
//! every buffer the accumulators grow to that worker's planned memory node (its NUMA node,
//! or high-bandwidth memory when the handle's HBM mode says so and it fits), touches it from
//! the worker and records where its pages went. Only growth reaches the hook, so steady-state
//! calls pay nothing but the scope's two thread-local writes per chunk of rows.

use std::any::Any;
use std::sync::Arc;

use crate::platform::alloc::GrowthScope;
use crate::platform::topo::Topo;
use crate::platform::topo::chunk::{ChunkLedger, ChunkPlacer, ChunkSummary};
use crate::platform::topo::placement::WorkerPlace;

use crate::cpu::accum::{LinkedAcc, ProbeAcc};
use crate::cpu::dense::DenseRows;
use crate::cpu::symbolic::{LinkedBits, ProbeBits};
use crate::platform::pool::{Pool, PoolMode};
use crate::types::{Complex32, Complex64, Scalar, ValueType};

/// The most buffers of a worker's workspace one call grows: the dense accumulator's twelve
/// and the replay's two, with room to spare (for the placement records' estimate).
pub const GROWN_PER_CALL: usize = 16;

/// Numeric accumulators for one value type.
#[derive(Default)]
struct Numeric<V: Scalar> {
    dense_rows: DenseRows<V>,
    /// Interleaved values of the grouped replay kernel (a lane per row of a group; all
    /// -0.0 between groups).
    lanes: Vec<[V; crate::cpu::row_groups::LANES]>,
    linked: LinkedAcc<V>,
    probe: ProbeAcc<V>,
}

/// Accumulators of one worker: symbolic (bit sets) and numeric, for each value type (a
/// type's buffers are allocated when a product of that type first runs).
#[derive(Default)]
pub struct Workspace {
    pub sym_linked: LinkedBits,
    pub sym_probe: ProbeBits,
    num64: Numeric<f64>,
    num32: Numeric<f32>,
    num_c64: Numeric<Complex64>,
    num_c32: Numeric<Complex32>,
}

impl Workspace {
    fn numeric<V: Scalar>(&mut self) -> &mut Numeric<V> {
        let n: &mut dyn Any = match V::KIND {
            ValueType::Float64 => &mut self.num64,
            ValueType::Float32 => &mut self.num32,
            ValueType::Complex64 => &mut self.num_c64,
            ValueType::Complex32 => &mut self.num_c32,
        };
        n.downcast_mut()
            .expect("each value type's KIND names its own accumulators")
    }

    pub fn dense_rows<V: Scalar>(&mut self) -> &mut DenseRows<V> {
        &mut self.numeric::<V>().dense_rows
    }
    pub fn linked<V: Scalar>(&mut self) -> &mut LinkedAcc<V> {
        &mut self.numeric::<V>().linked
    }
    pub fn probe<V: Scalar>(&mut self) -> &mut ProbeAcc<V> {
        &mut self.numeric::<V>().probe
    }
    /// Dense values of the replay kernel (all -0.0 between rows): the dense numeric
    /// kernel's value array, so a plan that is replayed keeps one such array per worker.
    pub fn replay<V: Scalar>(&mut self) -> &mut Vec<V> {
        self.numeric::<V>().dense_rows.values_mut()
    }
    /// [`Workspace::replay`] and the interleaved values of the grouped replay kernel.
    #[allow(clippy::type_complexity)]
    pub fn replay_grouped<V: Scalar>(
        &mut self,
    ) -> (&mut Vec<V>, &mut Vec<[V; crate::cpu::row_groups::LANES]>) {
        let n = self.numeric::<V>();
        (n.dense_rows.values_mut(), &mut n.lanes)
    }
}

/// A worker's chunk: its workspace and the record of where its buffers were placed.
struct Chunk {
    ws: Workspace,
    ledger: ChunkLedger,
}

impl Default for Chunk {
    fn default() -> Self {
        Chunk {
            ws: Workspace::default(),
            // Room reserved now: recording a buffer during a call never grows the ledger.
            ledger: ChunkLedger::with_room(),
        }
    }
}

/// One workspace per worker thread of a handle (ONE2ONE pool), placed on each worker's
/// memory node.
pub struct WorkspacePool {
    pool: Pool<Chunk>,
    topo: Arc<Topo>,
    /// Worker i's plan (core, NUMA node, memory node); at least one entry.
    places: Vec<WorkerPlace>,
}

impl WorkspacePool {
    /// `places[i]` is worker i's plan (`Handle::placement().workers`); an empty list means
    /// no plan (ordinary memory).
    pub fn new(threads: usize, topo: Arc<Topo>, places: Vec<WorkerPlace>) -> WorkspacePool {
        let places = if places.is_empty() {
            vec![WorkerPlace {
                core: None,
                pus: Vec::new(),
                numa_node: None,
                memory_node: None,
                hbm: false,
            }]
        } else {
            places
        };
        WorkspacePool {
            pool: Pool::new(PoolMode::OneToOne, threads, Chunk::default),
            topo,
            places,
        }
    }

    /// Runs `f` with the calling worker's workspace; buffers it grows are placed for that
    /// worker. `f` must not start rayon work: a stolen job of the same worker would wait
    /// on this slot.
    pub fn with<R>(&self, f: impl FnOnce(&mut Workspace) -> R) -> R {
        let i = rayon::current_thread_index().unwrap_or(0);
        let mut chunk = self.pool.acquire(i);
        let Chunk { ws, ledger } = &mut *chunk;
        let mut placer = ChunkPlacer {
            topo: &self.topo,
            place: &self.places[i % self.places.len()],
            ledger,
        };
        let _scope = GrowthScope::enter(&mut placer);
        f(ws)
    }

    /// Drops every worker's accumulators (their invariants, such as marks below the
    /// current stamp and sums at -0.0 between rows, may not hold after a failed call).
    /// The placement records stay.
    pub fn reset(&self) {
        for i in 0..self.pool.len() {
            self.pool.acquire(i).ws = Workspace::default();
        }
    }

    /// The record of each worker's chunk buffers (for tests and reports).
    pub fn ledgers(&self) -> Vec<ChunkLedger> {
        (0..self.pool.len())
            .map(|i| self.pool.acquire(i).ledger.clone())
            .collect()
    }

    /// Where each worker's chunk is, as recorded when its buffers were allocated.
    pub fn chunk_summaries(&self) -> Vec<ChunkSummary> {
        (0..self.pool.len())
            .map(|i| {
                let chunk = self.pool.acquire(i);
                ChunkSummary::new(i, &self.places[i % self.places.len()], &chunk.ledger)
            })
            .collect()
    }
}
