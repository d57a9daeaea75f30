//! Buffers bound to a NUMA node: the allocation primitive of the per-worker memory pool.
//!
//! A [`NodeBuf`] is an anonymous mapping (page-aligned, zero-filled) whose pages hwloc
//! binds to one node (`hwloc_set_area_membind`, policy BIND without STRICT, which Linux
//! applies as "preferred": when the node is full the kernel takes pages from another node
//! instead of failing), then touched page by page by the calling thread, so they are
//! placed now, by the worker that will use them. Failure to bind is not an error: the
//! buffer is ordinary memory (still first-touched by the caller, so local to it) and
//! [`NodeBuf::placement`] says why. Only a failure to get memory at all is an error
//! (`Status::AllocFailed`), never an abort.

use hwlocality::memory::binding::{MemoryBindingFlags, MemoryBindingPolicy};
use hwlocality::memory::nodeset::NodeSet;

use super::Topo;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufPlacement {
    /// Bound to this NUMA node (OS index).
    Bound(u32),
    /// Ordinary memory because binding to the requested node was not possible.
    Fallback { requested: u32, reason: String },
    /// Ordinary memory, as asked (no node requested).
    Ordinary,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Free bytes on node `os_index` according to the kernel, if it says.
pub fn node_free_bytes(os_index: u32) -> Option<u64> {
    let path = format!("/sys/devices/system/node/node{os_index}/meminfo");
    let text = std::fs::read_to_string(path).ok()?;
    // Line format: "Node 0 MemFree:         1234567 kB"
    text.lines().find_map(|l| {
        let rest = l.split("MemFree:").nth(1)?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

/// `sysconf(_SC_PAGESIZE)`, 4096 if it cannot say.
pub(crate) fn page_bytes() -> usize {
    page_size()
}

/// Binds the pages of `area` (page-aligned start and length: binding applies to whole
/// pages) to `node`, policy BIND without STRICT (Linux: preferred node). With `migrate`,
/// pages already in memory are moved there (Linux; hwlocality refuses hwloc's MIGRATE
/// flag for areas, so that step is an `mbind(MPOL_PREFERRED, MPOL_MF_MOVE)`); others are
/// placed at their first touch. Only on this machine's topology; errors are reasons, not
/// failures.
pub(crate) fn bind_pages(
    topo: &Topo,
    area: &[std::mem::MaybeUninit<u8>],
    node: u32,
    migrate: bool,
) -> std::result::Result<(), String> {
    if !topo.is_this_system() {
        return Err(format!(
            "the topology ({}) does not describe this machine",
            topo.desc().source
        ));
    }
    let hw = topo.hwloc().ok_or("no hwloc topology")?;
    let support = hw.feature_support().memory_binding();
    let supported = support.is_some_and(|m| m.set_area() && m.bind_policy());
    if !supported {
        return Err("the OS does not support binding memory areas".into());
    }
    let mut set = NodeSet::new();
    set.set(node as usize);
    hw.bind_memory_area(
        area,
        &set,
        MemoryBindingPolicy::Bind,
        MemoryBindingFlags::empty(),
    )
    .map_err(|e| format!("binding {} bytes to node {node} failed: {e}", area.len()))?;
    if migrate && support.is_some_and(|m| m.migrate_flag()) {
        // A page that cannot be moved stays where it is; the caller's page-location query
        // (`pages_location`) reports that, so the failure itself is not an error here.
        let _ = move_resident_pages(area, node);
    }
    Ok(())
}

/// Moves the resident pages of `area` (whole pages) to `node`, keeping the preferred-node
/// policy hwloc just set.
#[cfg(target_os = "linux")]
fn move_resident_pages(
    area: &[std::mem::MaybeUninit<u8>],
    node: u32,
) -> std::result::Result<(), String> {
    const MPOL_PREFERRED: libc::c_long = 1;
    const MPOL_MF_MOVE: libc::c_long = 1 << 1;
    const WORD: usize = libc::c_ulong::BITS as usize;
    let node = node as usize;
    let mut mask: Vec<libc::c_ulong> = vec![0; node / WORD + 1];
    mask[node / WORD] |= 1 << (node % WORD);
    // The kernel reads maxnode - 1 bits.
    let maxnode = mask.len() * WORD + 1;
    // SAFETY: mbind only changes the policy and placement of pages of our own mapping
    // (`area`, page-aligned by the caller); the mask outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            area.as_ptr(),
            area.len(),
            MPOL_PREFERRED,
            mask.as_ptr(),
            maxnode,
            MPOL_MF_MOVE,
        )
    };
    if rc != 0 {
        return Err(format!(
            "bound to node {node}, but moving resident pages there failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn move_resident_pages(
    _area: &[std::mem::MaybeUninit<u8>],
    _node: u32,
) -> std::result::Result<(), String> {
    Ok(())
}

/// The NUMA nodes (OS indices) holding the resident pages of `area`, as the kernel reports
/// them now (hwloc `get_area_memlocation`). `Err` when it cannot be asked (not this
/// machine, no OS support).
pub(crate) fn pages_location(
    topo: &Topo,
    area: &[std::mem::MaybeUninit<u8>],
) -> std::result::Result<Vec<u32>, String> {
    if !topo.is_this_system() {
        return Err("the topology does not describe this machine".into());
    }
    let hw = topo.hwloc().ok_or("no hwloc topology")?;
    let supported = hw
        .feature_support()
        .memory_binding()
        .is_some_and(|m| m.get_area_memory_location());
    if !supported {
        return Err("the OS cannot report where memory pages are".into());
    }
    let set: NodeSet = hw
        .area_memory_location(area, MemoryBindingFlags::empty())
        .map_err(|e| format!("querying page locations failed: {e}"))?;
    Ok(set.iter_set().map(|i| usize::from(i) as u32).collect())
}
