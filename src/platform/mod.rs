//! Platform: what the machine offers, beneath every backend. Fallible allocation, the
//! ONE2ONE / MANY2MANY chunk pool, hwloc topology with worker placement, binding and
//! NUMA / high-bandwidth memory, the worker threads, instruction sets and cache sizes.

pub mod alloc;
pub mod caches;
pub mod isa;
pub mod pool;
pub mod topo;
pub mod workers;
