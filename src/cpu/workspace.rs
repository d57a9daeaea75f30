//! Per-thread workspace kept on the handle (one slot per worker, located by the worker's
//! index: the ONE2ONE arrangement of the KokkosKernels paper). Buffers grow on demand
//! through fallible allocation and are reused by later calls, so the hot path does not
//! allocate.

use std::any::Any;

use parking_lot::Mutex;

use crate::cpu::accum::{DenseAcc, HashAcc};
use crate::types::Scalar;

/// Accumulators of one worker, for both value types.
#[derive(Default)]
pub struct Workspace {
    dense64: DenseAcc<f64>,
    dense32: DenseAcc<f32>,
    hash64: HashAcc<f64>,
    hash32: HashAcc<f32>,
}

impl Workspace {
    pub fn dense<V: Scalar>(&mut self) -> &mut DenseAcc<V> {
        let d64: &mut dyn Any = &mut self.dense64;
        if d64.is::<DenseAcc<V>>() {
            return d64.downcast_mut().expect("checked");
        }
        let d32: &mut dyn Any = &mut self.dense32;
        d32.downcast_mut().expect("value types are f32 and f64")
    }

    pub fn hash<V: Scalar>(&mut self) -> &mut HashAcc<V> {
        let h64: &mut dyn Any = &mut self.hash64;
        if h64.is::<HashAcc<V>>() {
            return h64.downcast_mut().expect("checked");
        }
        let h32: &mut dyn Any = &mut self.hash32;
        h32.downcast_mut().expect("value types are f32 and f64")
    }
}

/// One workspace per worker thread of a handle.
pub struct WorkspacePool {
    slots: Vec<Mutex<Workspace>>,
}

impl WorkspacePool {
    pub fn new(threads: usize) -> WorkspacePool {
        WorkspacePool {
            slots: (0..threads.max(1))
                .map(|_| Mutex::new(Workspace::default()))
                .collect(),
        }
    }

    /// Runs `f` with the calling worker's workspace. `f` must not start rayon work: a
    /// stolen job of the same worker would wait on this slot.
    pub fn with<R>(&self, f: impl FnOnce(&mut Workspace) -> R) -> R {
        let i = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        f(&mut self.slots[i].lock())
    }
}
