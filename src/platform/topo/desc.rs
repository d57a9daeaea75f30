//! A plain-data description of a machine: cores in topology order, NUMA nodes with their
//! capacity, kind and bandwidths. Placement planning reads only this, so it can be tested
//! on topologies of machines we do not have (loaded from XML), and it survives without
//! hwloc (a fallback description of `available_parallelism` cores and one node).

use hwlocality::Topology;
use hwlocality::bitmap::BitmapIndex;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::memory::attribute::{Initiator, MemoryAttribute};
use hwlocality::object::TopologyObject;
use hwlocality::object::types::ObjectType;

/// A node is treated as high-bandwidth memory when, seen from a core, its bandwidth is at
/// least this many times that of the core's ordinary node. MCDRAM is ~4-5x DDR4, HBM2e on
/// Sapphire Rapids ~2-3x DDR5; two sockets' DDR differ by far less than 1.5x.
pub const HBM_BANDWIDTH_RATIO: f64 = 1.5;

/// Subtypes hwloc gives to high-bandwidth nodes (KNL "MCDRAM", Xeon Max "HBM"): used when
/// the platform reports no bandwidth values.
const HBM_SUBTYPES: [&str; 2] = ["MCDRAM", "HBM"];

/// One core (a place for one or more workers), in hwloc's logical order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreDesc {
    /// hwloc logical index of the core (or of the PU on machines without Core objects).
    pub logical: usize,
    /// OS indices of the core's processing units (hardware threads) that we may use.
    pub pus: Vec<u32>,
    /// Logical index of the package (socket), 0 if unknown.
    pub package: usize,
}

/// A bandwidth value reported for a node, and the CPUs it was measured from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    /// OS indices of the initiator's PUs.
    pub from_pus: Vec<u32>,
    /// Average bandwidth in MiB/s (hwloc's unit).
    pub mib_s: u64,
}

/// One NUMA node (memory target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaDesc {
    /// OS index (what `numactl` and the kernel call the node).
    pub os_index: u32,
    /// Capacity in bytes (0 if unknown).
    pub capacity: u64,
    /// hwloc subtype ("MCDRAM", "HBM", "DRAM", ...), if any.
    pub subtype: Option<String>,
    /// OS indices of the PUs this node is local to (hwloc's cpuset of the node).
    pub local_pus: Vec<u32>,
    /// Bandwidths reported by the platform (ACPI HMAT, or an XML file); often empty.
    pub bandwidth: Vec<Bandwidth>,
}

/// What the library sees of a machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineDesc {
    /// Where the description came from ("hwloc", "xml", "synthetic", "fallback").
    pub source: String,
    pub cores: Vec<CoreDesc>,
    pub numa: Vec<NumaDesc>,
    /// Number of packages (sockets), at least 1.
    pub packages: usize,
    /// Other processes may run on these cores: the caller's CPU mask is every core of the
    /// machine and no MPI launcher named this process's share of them (see
    /// `Topo::desc_for_caller`). Under `Auto`, fewer workers than cores are then not bound.
    pub shared: bool,
}

fn includes(outer: &[u32], inner: &[u32]) -> bool {
    // Both sorted ascending.
    let mut it = outer.iter();
    inner.iter().all(|x| it.by_ref().any(|y| y == x))
}

impl NumaDesc {
    /// Bandwidth from the smallest reported initiator that contains all of `pus`.
    pub fn bandwidth_from(&self, pus: &[u32]) -> Option<u64> {
        self.bandwidth
            .iter()
            .filter(|b| includes(&b.from_pus, pus))
            .min_by_key(|b| b.from_pus.len())
            .map(|b| b.mib_s)
    }

    fn has_hbm_subtype(&self) -> bool {
        self.subtype
            .as_deref()
            .is_some_and(|s| HBM_SUBTYPES.iter().any(|h| s.eq_ignore_ascii_case(h)))
    }
}

impl MachineDesc {
    /// A description without hwloc: `cores` cores numbered 0.., one node of unknown size.
    pub fn fallback(cores: usize) -> MachineDesc {
        let cores = cores.max(1);
        MachineDesc {
            source: "fallback".into(),
            shared: false,
            cores: (0..cores)
                .map(|i| CoreDesc {
                    logical: i,
                    pus: vec![i as u32],
                    package: 0,
                })
                .collect(),
            numa: vec![NumaDesc {
                os_index: 0,
                capacity: 0,
                subtype: None,
                local_pus: (0..cores as u32).collect(),
                bandwidth: Vec::new(),
            }],
            packages: 1,
        }
    }

    /// Indices (into `numa`) of the nodes local to `core`: those whose PUs include all of
    /// the core's PUs.
    pub fn local_nodes(&self, core: usize) -> Vec<usize> {
        let pus = &self.cores[core].pus;
        (0..self.numa.len())
            .filter(|&n| includes(&self.numa[n].local_pus, pus))
            .collect()
    }

    /// Number of nodes that are local to at least one of our cores and not high-bandwidth:
    /// the "NUMA domains" relevant for spreading threads.
    pub fn ordinary_domains(&self) -> usize {
        let mut seen = Vec::new();
        for c in 0..self.cores.len() {
            if let Some(n) = self.ordinary_node(c)
                && !seen.contains(&n)
            {
                seen.push(n);
            }
        }
        seen.len().max(1)
    }

    /// The core's ordinary node: among its local nodes without a high-bandwidth subtype,
    /// the most local (fewest PUs), then the lowest OS index (Linux numbers the nodes that
    /// hold CPUs, DDR, before CPU-less MCDRAM/HBM/CXL nodes). Falls back to any local node.
    /// Bandwidth is deliberately not used here: a slower local node may be CXL or NVM.
    pub fn ordinary_node(&self, core: usize) -> Option<usize> {
        let local = self.local_nodes(core);
        let key = |&n: &usize| (self.numa[n].local_pus.len(), self.numa[n].os_index);
        local
            .iter()
            .copied()
            .filter(|&n| !self.numa[n].has_hbm_subtype())
            .min_by_key(key)
            .or_else(|| local.iter().copied().min_by_key(key))
    }

    /// The highest-bandwidth node local to `core`, if it is high-bandwidth memory compared
    /// with the core's ordinary node: by reported bandwidth (ratio >= `HBM_BANDWIDTH_RATIO`)
    /// or, when no bandwidth is reported for it, by hwloc subtype (MCDRAM, HBM).
    pub fn hbm_node(&self, core: usize) -> Option<usize> {
        let ordinary = self.ordinary_node(core)?;
        let pus = &self.cores[core].pus;
        let base_bw = self.numa[ordinary].bandwidth_from(pus);
        let mut best: Option<(u64, usize)> = None;
        let mut by_subtype: Option<usize> = None;
        for n in self.local_nodes(core) {
            if n == ordinary {
                continue;
            }
            match (self.numa[n].bandwidth_from(pus), base_bw) {
                (Some(bw), Some(base)) => {
                    if bw as f64 >= HBM_BANDWIDTH_RATIO * base as f64
                        && best.is_none_or(|(b, _)| bw > b)
                    {
                        best = Some((bw, n));
                    }
                }
                _ => {
                    if self.numa[n].has_hbm_subtype() && by_subtype.is_none() {
                        by_subtype = Some(n);
                    }
                }
            }
        }
        best.map(|(_, n)| n).or(by_subtype)
    }

    /// Whether any core sees a high-bandwidth node (for the algorithm selector).
    pub fn hbm_present(&self) -> bool {
        (0..self.cores.len()).any(|c| self.hbm_node(c).is_some())
    }

    /// The description restricted to cores with at least one PU in `allowed` (OS indices,
    /// sorted); their PU lists are cut to `allowed`. An empty result keeps everything
    /// (a mask that names no core of ours is not a reason to run on nothing).
    pub fn restricted_to(&self, allowed: &[u32]) -> MachineDesc {
        let cores: Vec<CoreDesc> = self
            .cores
            .iter()
            .filter_map(|c| {
                let pus: Vec<u32> = c
                    .pus
                    .iter()
                    .copied()
                    .filter(|p| allowed.binary_search(p).is_ok())
                    .collect();
                (!pus.is_empty()).then(|| CoreDesc { pus, ..c.clone() })
            })
            .collect();
        if cores.is_empty() {
            return self.clone();
        }
        MachineDesc {
            cores,
            ..self.clone()
        }
    }
}

fn set_to_vec(set: &CpuSet) -> Vec<u32> {
    set.iter_set()
        .map(|i: BitmapIndex| usize::from(i) as u32)
        .collect()
}

fn obj_pus(obj: &TopologyObject) -> Vec<u32> {
    obj.cpuset().map(|s| set_to_vec(&s)).unwrap_or_default()
}

/// Reads the description out of an hwloc topology. Cores are restricted to the
/// topology's allowed CPUs (hwloc already drops disallowed ones by default).
pub fn describe(topo: &Topology, source: &str) -> MachineDesc {
    let allowed = set_to_vec(&topo.allowed_cpuset());
    let mut places: Vec<&TopologyObject> = topo.objects_with_type(ObjectType::Core).collect();
    if places.is_empty() {
        places = topo.objects_with_type(ObjectType::PU).collect();
    }
    let cores = places
        .iter()
        .filter_map(|obj| {
            let pus: Vec<u32> = obj_pus(obj)
                .into_iter()
                .filter(|p| allowed.binary_search(p).is_ok())
                .collect();
            (!pus.is_empty()).then(|| CoreDesc {
                logical: obj.logical_index(),
                pus,
                package: obj
                    .first_ancestor_with_type(ObjectType::Package)
                    .map_or(0, |p| p.logical_index()),
            })
        })
        .collect::<Vec<_>>();
    let bandwidth_attr = MemoryAttribute::bandwidth(topo);
    let numa = topo
        .objects_with_type(ObjectType::NUMANode)
        .map(|node| {
            let bandwidth = match bandwidth_attr.initiators(node) {
                Ok((inits, values)) => inits
                    .iter()
                    .zip(values)
                    .filter_map(|(init, v)| {
                        let from_pus = match init {
                            Initiator::CpuSet(s) => set_to_vec(s),
                            Initiator::Object(o) => obj_pus(o),
                        };
                        (!from_pus.is_empty() && v > 0).then_some(Bandwidth { from_pus, mib_s: v })
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            NumaDesc {
                os_index: node.os_index().unwrap_or(0) as u32,
                capacity: node.total_memory(),
                subtype: node.subtype().map(|s| s.to_string_lossy().into_owned()),
                local_pus: obj_pus(node),
                bandwidth,
            }
        })
        .collect::<Vec<_>>();
    let packages = topo.objects_with_type(ObjectType::Package).count().max(1);
    let desc = MachineDesc {
        source: source.into(),
        cores,
        numa,
        packages,
        shared: false,
    };
    if desc.cores.is_empty() {
        return MachineDesc::fallback(1);
    }
    desc
}
