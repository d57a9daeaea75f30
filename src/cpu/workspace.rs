//! Per-thread workspace kept on the handle: one chunk of the ONE2ONE memory pool
//! ([`crate::pool`]) per worker, located by the worker's index. Buffers grow on demand
//! through fallible allocation and are reused by later calls, so the hot path does not
//! allocate.

use std::any::Any;

use crate::cpu::accum::{LinkedAcc, ProbeAcc};
use crate::cpu::dense::DenseRows;
use crate::cpu::symbolic::{LinkedBits, ProbeBits};
use crate::pool::{Pool, PoolMode};
use crate::types::Scalar;

/// Numeric accumulators for one value type.
#[derive(Default)]
struct Numeric<V: Scalar> {
    dense_rows: DenseRows<V>,
    linked: LinkedAcc<V>,
    probe: ProbeAcc<V>,
    /// Dense values of the replay kernel (all -0.0 between rows).
    replay: Vec<V>,
}

/// Accumulators of one worker: symbolic (bit sets) and numeric, for both value types.
#[derive(Default)]
pub struct Workspace {
    pub sym_linked: LinkedBits,
    pub sym_probe: ProbeBits,
    num64: Numeric<f64>,
    num32: Numeric<f32>,
}

impl Workspace {
    fn numeric<V: Scalar>(&mut self) -> &mut Numeric<V> {
        let n64: &mut dyn Any = &mut self.num64;
        if n64.is::<Numeric<V>>() {
            return n64.downcast_mut().expect("checked");
        }
        let n32: &mut dyn Any = &mut self.num32;
        n32.downcast_mut().expect("value types are f32 and f64")
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
    pub fn replay<V: Scalar>(&mut self) -> &mut Vec<V> {
        &mut self.numeric::<V>().replay
    }
}

/// One workspace per worker thread of a handle (ONE2ONE pool).
pub struct WorkspacePool {
    pool: Pool<Workspace>,
}

impl WorkspacePool {
    pub fn new(threads: usize) -> WorkspacePool {
        WorkspacePool {
            pool: Pool::new(PoolMode::OneToOne, threads, Workspace::default),
        }
    }

    /// Runs `f` with the calling worker's workspace. `f` must not start rayon work: a
    /// stolen job of the same worker would wait on this slot.
    pub fn with<R>(&self, f: impl FnOnce(&mut Workspace) -> R) -> R {
        self.pool.with_worker(f)
    }
}
