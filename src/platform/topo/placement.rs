//! Placement planning: which core each worker is bound to and which NUMA node its memory
//! should come from. Pure functions of a [`MachineDesc`]: nothing here touches the OS, so
//! placements for machines we do not have are tested by loading their topology from XML.

use super::desc::{HBM_BANDWIDTH_RATIO, MachineDesc};

/// How workers are bound to cores (C: `SPGEMM_BIND_*`; env `SPGEMM_PROC_BIND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindPolicy {
    /// Chosen from the machine: `None` when there are more cores than workers on a machine
    /// other processes may share ([`MachineDesc::shared`]: every process would bind from
    /// the same first cores); else `Spread` when there is more than one NUMA domain or more
    /// cores than workers, else `Close` (then every core gets a worker and both agree).
    Auto = 0,
    /// No binding: the OS places workers (within the creating thread's CPU mask).
    None = 1,
    /// Workers on consecutive cores in topology order (share caches; fill a socket first).
    Close = 2,
    /// Workers spread evenly over the cores (and so over sockets and NUMA nodes).
    Spread = 3,
}

impl BindPolicy {
    pub fn from_code(code: i32) -> Option<BindPolicy> {
        match code {
            0 => Some(BindPolicy::Auto),
            1 => Some(BindPolicy::None),
            2 => Some(BindPolicy::Close),
            3 => Some(BindPolicy::Spread),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BindPolicy::Auto => "auto",
            BindPolicy::None => "none",
            BindPolicy::Close => "close",
            BindPolicy::Spread => "spread",
        }
    }

    /// Parses a `SPGEMM_PROC_BIND` value, in the spirit of `OMP_PROC_BIND`: `spread`,
    /// `close`, `none`/`false`, `auto`/`true` (case-insensitive). `master`/`primary` are
    /// not offered: binding every worker to one core is never what a SpGEMM wants.
    pub fn parse(s: &str) -> Option<BindPolicy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "spread" => Some(BindPolicy::Spread),
            "close" => Some(BindPolicy::Close),
            "none" | "false" | "off" => Some(BindPolicy::None),
            "auto" | "true" | "on" => Some(BindPolicy::Auto),
            _ => None,
        }
    }

    /// The concrete policy `Auto` stands for on `desc` with `threads` workers.
    pub fn resolve(self, desc: &MachineDesc, threads: usize) -> BindPolicy {
        match self {
            BindPolicy::Auto => {
                if desc.shared && desc.cores.len() > threads {
                    BindPolicy::None
                } else if desc.ordinary_domains() > 1 || desc.cores.len() > threads {
                    BindPolicy::Spread
                } else {
                    BindPolicy::Close
                }
            }
            p => p,
        }
    }
}

/// Whether pool chunks and temporaries go to high-bandwidth memory (C: `SPGEMM_HBM_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HbmMode {
    /// Use high-bandwidth memory when the topology shows some (default).
    Auto = 0,
    /// Never.
    Off = 1,
    /// Use it; when there is none, the info says so and normal memory is used.
    On = 2,
}

impl HbmMode {
    pub fn from_code(code: i32) -> Option<HbmMode> {
        match code {
            0 => Some(HbmMode::Auto),
            1 => Some(HbmMode::Off),
            2 => Some(HbmMode::On),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HbmMode::Auto => "auto",
            HbmMode::Off => "off",
            HbmMode::On => "on",
        }
    }
}

/// Where one worker runs and where its memory should live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerPlace {
    /// Index into `MachineDesc::cores` of the core the worker is bound to (None: unbound).
    pub core: Option<usize>,
    /// OS indices of the PUs the worker is bound to (empty: unbound).
    pub pus: Vec<u32>,
    /// OS index of the worker's ordinary NUMA node (None when unbound or unknown).
    pub numa_node: Option<u32>,
    /// OS index of the node its pool chunk and temporaries should be bound to (None:
    /// ordinary allocation, placed by first touch).
    pub memory_node: Option<u32>,
    /// Whether `memory_node` is high-bandwidth memory.
    pub hbm: bool,
}

/// The plan for a pool of workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The policy asked for (after the environment override).
    pub requested: BindPolicy,
    /// The concrete policy used (`Auto` resolved).
    pub policy: BindPolicy,
    pub hbm_mode: HbmMode,
    pub workers: Vec<WorkerPlace>,
    /// Notes about choices (HBM requested but absent, ...), for the topology info.
    pub notes: Vec<String>,
}

/// High-bandwidth memory that holds every worker's chunk: what the algorithm selector
/// needs to know about it (`crate::exec::dense_numeric_budget`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HbmBudget {
    /// Capacity of the distinct high-bandwidth nodes the workers use, in bytes (0 when
    /// unknown).
    pub capacity: u64,
    /// Bandwidth of that memory over the workers' ordinary memory, the smallest over the
    /// workers; [`HBM_BANDWIDTH_RATIO`] (the least that makes a node high-bandwidth here)
    /// when the platform reports no bandwidths.
    pub bandwidth_ratio: f64,
}

impl Placement {
    pub fn worker(&self, i: usize) -> &WorkerPlace {
        &self.workers[i % self.workers.len()]
    }

    /// Some when the plan puts every worker's memory on high-bandwidth memory (the
    /// selector then weighs dense accumulators against it instead of the L3 cache).
    pub fn hbm_budget(&self, desc: &MachineDesc) -> Option<HbmBudget> {
        if self.workers.is_empty() || !self.workers.iter().all(|w| w.hbm) {
            return None;
        }
        let node_index = |os: u32| desc.numa.iter().position(|n| n.os_index == os);
        let mut nodes: Vec<usize> = Vec::new();
        let mut ratio = f64::INFINITY;
        for w in &self.workers {
            let hbm = w.memory_node.and_then(node_index)?;
            if !nodes.contains(&hbm) {
                nodes.push(hbm);
            }
            // Unbound workers (common high-bandwidth node): judge from the first core.
            let core = w.core.unwrap_or(0);
            let pus = &desc.cores.get(core)?.pus;
            let measured = desc.ordinary_node(core).and_then(|o| {
                let fast = desc.numa[hbm].bandwidth_from(pus)?;
                let slow = desc.numa[o].bandwidth_from(pus)?;
                (slow > 0).then(|| fast as f64 / slow as f64)
            });
            ratio = ratio.min(measured.unwrap_or(HBM_BANDWIDTH_RATIO));
        }
        Some(HbmBudget {
            capacity: nodes.iter().map(|&n| desc.numa[n].capacity).sum(),
            bandwidth_ratio: ratio,
        })
    }
}

/// Core index (into the place list of `places` cores) of worker `i` of `threads`.
/// `Close`: worker i on core i while there are enough cores; `Spread`: the cores are cut
/// into `threads` equal runs and worker i takes the first core of run i. With more workers
/// than cores both give consecutive workers blocks of one core (as OpenMP does).
pub fn core_of_worker(policy: BindPolicy, i: usize, threads: usize, places: usize) -> usize {
    debug_assert!(i < threads && places > 0);
    if threads > places {
        return i * places / threads;
    }
    match policy {
        BindPolicy::Spread => i * places / threads,
        _ => i,
    }
}

/// Plans `threads` workers on `desc` under `policy` and `hbm`.
pub fn plan(desc: &MachineDesc, threads: usize, policy: BindPolicy, hbm: HbmMode) -> Placement {
    let threads = threads.max(1);
    let resolved = policy.resolve(desc, threads);
    let mut notes = Vec::new();
    let hbm_present = desc.hbm_present();
    let use_hbm = match hbm {
        HbmMode::Off => false,
        HbmMode::Auto => hbm_present,
        HbmMode::On => {
            if !hbm_present {
                notes.push(
                    "high-bandwidth memory requested but the topology shows none; using normal memory"
                        .to_string(),
                );
            }
            hbm_present
        }
    };
    // Unbound workers may run on any core: only a high-bandwidth node that every core sees
    // as its own is worth binding their memory to (KNL flat quadrant mode).
    let common_hbm = if use_hbm {
        let first = desc.hbm_node(0);
        (0..desc.cores.len())
            .all(|c| desc.hbm_node(c) == first)
            .then_some(first)
            .flatten()
    } else {
        None
    };
    let workers = (0..threads)
        .map(|i| {
            if resolved == BindPolicy::None {
                return WorkerPlace {
                    core: None,
                    pus: Vec::new(),
                    numa_node: None,
                    memory_node: common_hbm.map(|n| desc.numa[n].os_index),
                    hbm: common_hbm.is_some(),
                };
            }
            let c = core_of_worker(resolved, i, threads, desc.cores.len());
            let ordinary = desc.ordinary_node(c).map(|n| desc.numa[n].os_index);
            let hbm_node = if use_hbm { desc.hbm_node(c) } else { None };
            WorkerPlace {
                core: Some(c),
                pus: desc.cores[c].pus.clone(),
                numa_node: ordinary,
                memory_node: hbm_node.map(|n| desc.numa[n].os_index).or(ordinary),
                hbm: hbm_node.is_some(),
            }
        })
        .collect();
    if policy == BindPolicy::Auto && resolved == BindPolicy::None {
        notes.push(format!(
            "auto: {threads} workers for {} cores that other processes may use too (the CPU mask is the whole machine, no MPI launcher named this process's share): workers unbound; a launcher's or taskset's binding, or SPGEMM_PROC_BIND=spread|close, binds them",
            desc.cores.len()
        ));
    }
    if use_hbm && resolved == BindPolicy::None && common_hbm.is_none() {
        notes.push(
            "workers are unbound and no high-bandwidth node is local to every core; using normal memory"
                .to_string(),
        );
    }
    Placement {
        requested: policy,
        policy: resolved,
        hbm_mode: hbm,
        workers,
        notes,
    }
}
