//! Platform layer: the machine's topology (hwloc), worker placement, thread binding and
//! NUMA / high-bandwidth memory.
//!
//! Planning is separated from executing: [`placement::plan`] turns a plain
//! [`desc::MachineDesc`] into a [`placement::Placement`] without touching the OS (tests
//! plan for XML topologies of machines we do not have); [`bind`] and [`memory`] carry a
//! plan out, and only on a topology of this very machine ([`Topo::is_this_system`]).
//!
//! Nothing here fails a product: a machine without hwloc data gets a fallback description
//! (all cores, one node), a binding that the OS refuses leaves the worker unbound with a
//! message, and memory that cannot be bound is ordinary memory.
//!
//! For the memory pool (one chunk per worker, ONE2ONE): worker `i` of a handle runs on
//! `handle.placement().worker(i)`, whose `memory_node` is where its chunk should live;
//! [`memory::NodeBuf::alloc_zeroed`] called from that worker returns a buffer bound to the
//! node and first-touched by the worker, or ordinary memory when that is not possible.

pub mod bind;
pub mod chunk;
pub mod desc;
pub mod info;
pub mod memory;
pub mod placement;

use std::sync::{Arc, OnceLock};

use hwlocality::Topology;
use hwlocality::topology::builder::TopologyBuilder;

use crate::error::{Error, Result, Status};
pub use desc::MachineDesc;
pub use placement::{BindPolicy, HbmBudget, HbmMode, Placement};

/// A loaded topology: hwloc's object (when there is one) and our description of it.
pub struct Topo {
    hw: Option<Topology>,
    desc: MachineDesc,
    this_system: bool,
    /// Why hwloc could not be used (only for the fallback description).
    pub load_error: Option<String>,
}

impl std::fmt::Debug for Topo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topo")
            .field("desc", &self.desc)
            .field("this_system", &self.this_system)
            .field("load_error", &self.load_error)
            .finish()
    }
}

fn invalid(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        Status::InvalidValue,
        format!("cannot load topology from {what}: {e}"),
    )
}

impl Topo {
    /// This machine's topology, discovered once per process (hwloc walks sysfs: tens of
    /// milliseconds) and shared by every handle. Never fails: without hwloc data the
    /// description is `available_parallelism` cores on one node.
    pub fn system() -> Arc<Topo> {
        static SYSTEM: OnceLock<Arc<Topo>> = OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                let t = match Topology::new() {
                    Ok(hw) => {
                        let desc = desc::describe(&hw, "hwloc");
                        let this_system = hw.is_this_system();
                        Topo {
                            hw: Some(hw),
                            desc,
                            this_system,
                            load_error: None,
                        }
                    }
                    Err(e) => Topo::fallback(
                        std::thread::available_parallelism().map_or(1, |n| n.get()),
                        format!("hwloc could not discover the topology: {e}"),
                    ),
                };
                Arc::new(t)
            })
            .clone()
    }

    /// A topology read from hwloc XML (as written by `lstopo --of xml`). Plans for it can
    /// be made and inspected; nothing is bound on it.
    pub fn from_xml(xml: &str) -> Result<Topo> {
        let hw = TopologyBuilder::new()
            .from_xml(xml)
            .map_err(|e| invalid("XML", e))?
            .build()
            .map_err(|e| invalid("XML", e))?;
        Ok(Topo::foreign(hw, "xml"))
    }

    /// A topology from an hwloc synthetic description (e.g. `"pack:2 [numa] core:4 pu:2"`).
    pub fn from_synthetic(description: &str) -> Result<Topo> {
        let hw = TopologyBuilder::new()
            .from_synthetic(description)
            .map_err(|e| invalid("synthetic description", e))?
            .build()
            .map_err(|e| invalid("synthetic description", e))?;
        Ok(Topo::foreign(hw, "synthetic"))
    }

    fn foreign(hw: Topology, source: &str) -> Topo {
        Topo {
            desc: desc::describe(&hw, source),
            this_system: false,
            hw: Some(hw),
            load_error: None,
        }
    }

    /// A description without hwloc (`cores` cores, one node); nothing is ever bound.
    pub fn fallback(cores: usize, why: impl Into<String>) -> Topo {
        Topo {
            hw: None,
            desc: MachineDesc::fallback(cores),
            this_system: false,
            load_error: Some(why.into()),
        }
    }

    pub fn desc(&self) -> &MachineDesc {
        &self.desc
    }

    /// Whether threads and memory may be bound with this topology (it describes the
    /// machine we run on, not an XML file).
    pub fn is_this_system(&self) -> bool {
        self.this_system
    }

    pub(crate) fn hwloc(&self) -> Option<&Topology> {
        self.hw.as_ref()
    }

    /// Whether some core sees a high-bandwidth memory node (MCDRAM, HBM): a query for the
    /// algorithm selector (e.g. larger dense accumulators are cheap there).
    pub fn hbm_present(&self) -> bool {
        self.desc.hbm_present()
    }

    /// The description as seen by the calling thread: cores outside its CPU mask (set by
    /// `taskset`, an MPI launcher, a cgroup) are left out, as OpenMP does with its places.
    /// When the mask is the whole machine but the launcher says several ranks of one job
    /// share this node ([`node_rank`]), the rank's share of the cores ([`rank_share`]):
    /// unbound ranks that each bound their workers from core 0 on would all run there
    /// (Kokkos partitions the cores the same way).
    /// Otherwise, with a mask of the whole machine, the description is marked `shared`:
    /// nothing says that other processes do not run there too.
    pub fn desc_for_caller(&self) -> MachineDesc {
        let own = match bind::current_thread_pus(self) {
            Some(pus) => self.desc.restricted_to(&pus),
            None => self.desc.clone(),
        };
        let whole = own.cores.len() == self.desc.cores.len();
        match node_rank() {
            Some((rank, size)) if whole => {
                let share = rank_share(own.cores.len(), rank, size);
                let mut pus: Vec<u32> = own.cores[share]
                    .iter()
                    .flat_map(|c| c.pus.iter().copied())
                    .collect();
                pus.sort_unstable();
                own.restricted_to(&pus)
            }
            _ => MachineDesc {
                shared: whole && self.this_system,
                ..own
            },
        }
    }
}

/// This process's rank among the ranks of its MPI job on this node and their number, from
/// the launcher's environment (Open MPI, MPICH/Hydra and Intel MPI, MVAPICH2); None
/// outside MPI or with one rank per node.
pub fn node_rank() -> Option<(usize, usize)> {
    const VARS: [(&str, &str); 3] = [
        ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
        ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
        ("MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"),
    ];
    let num = |v: &str| std::env::var(v).ok()?.trim().parse::<usize>().ok();
    VARS.iter().find_map(|&(r, s)| {
        let (rank, size) = (num(r)?, num(s)?);
        (size > 1 && rank < size).then_some((rank, size))
    })
}

/// The cores (indices into `cores` cores) of rank `rank` of `size` ranks sharing them: an
/// equal run each, or one core for several ranks when there are fewer cores than ranks.
pub fn rank_share(cores: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    let size = size.max(1);
    if cores < size {
        let c = rank * cores / size;
        return c..c + 1;
    }
    rank * cores / size..(rank + 1) * cores / size
}
