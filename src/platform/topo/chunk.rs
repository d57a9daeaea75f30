//! Placement of the per-worker accumulator chunks of the ONE2ONE pool (section 3.1.2 of
//! the KokkosKernels paper): each buffer a worker's accumulators grow is bound to the
//! worker's memory node and touched by the worker, and what it actually got is recorded.
//!
//! The accumulators keep ordinary `Vec`s (the kernels stay as they are); their growth goes
//! through `crate::platform::alloc::try_grow` / `try_reserve`, which hand every new allocation made
//! inside a [`crate::platform::alloc::GrowthScope`] to a [`ChunkPlacer`]. The placer:
//!
//! 1. chooses the node ([`choose_node`], pure): the worker's planned memory node; when
//!    that is high-bandwidth memory without room for the buffer, the worker's ordinary
//!    node instead (a note says so);
//! 2. binds the buffer's whole pages to it (hwloc area binding, BIND without STRICT, so
//!    Linux prefers the node and never fails a page fault); pages already resident (reused
//!    heap memory, the part `realloc` copied) are moved there (`mbind` with MPOL_MF_MOVE);
//! 3. touches every page of the unused capacity from the worker, so all pages exist now,
//!    placed by the worker, before the kernel's hot loop;
//! 4. asks the kernel where the pages are (hwloc `get_area_memlocation`) and records it in
//!    the worker's [`ChunkLedger`], which `spgemm_topology_info` reports.
//!
//! Buffers under two pages share their first and last page with other heap data; binding
//! those pages would move neighbours, so such buffers are not bound (they are first-touched
//! by the worker, hence on its local node) and are counted apart. Every failure is a
//! reason in the ledger, never an error: the buffer is then ordinary memory.

use std::mem::MaybeUninit;

use super::Topo;
use super::memory::{BufPlacement, bind_pages, node_free_bytes, page_bytes, pages_location};
use super::placement::WorkerPlace;
use crate::platform::alloc::GrowthHook;

/// Where one buffer should go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeChoice {
    /// OS index of the node (None: ordinary allocation, placed by first touch).
    pub node: Option<u32>,
    /// Whether `node` is high-bandwidth memory.
    pub hbm: bool,
    /// Why the plan was not followed (high-bandwidth node too full).
    pub note: Option<String>,
}

/// The node for a buffer of `bytes` of the worker planned at `place`. `free_bytes(node)`
/// says how much memory the node has free (None: unknown, assumed to fit). Pure, so it is
/// tested on topologies of machines we do not have.
pub fn choose_node(
    place: &WorkerPlace,
    bytes: u64,
    free_bytes: impl Fn(u32) -> Option<u64>,
) -> NodeChoice {
    let Some(node) = place.memory_node else {
        return NodeChoice {
            node: None,
            hbm: false,
            note: None,
        };
    };
    if place.hbm
        && let Some(free) = free_bytes(node)
        && free < bytes
    {
        let fallback = match place.numa_node {
            Some(n) => format!("node {n}"),
            None => "ordinary memory".to_string(),
        };
        return NodeChoice {
            node: place.numa_node,
            hbm: false,
            note: Some(format!(
                "high-bandwidth node {node} has {free} bytes free, {bytes} needed: using {fallback}"
            )),
        };
    }
    NodeChoice {
        node: Some(node),
        hbm: place.hbm,
        note: None,
    }
}

/// Free bytes of `node` as seen for `topo`: the kernel's count on this machine; for a
/// topology of another machine (XML), its capacity (nothing is allocated there).
pub fn free_bytes_of(topo: &Topo, node: u32) -> Option<u64> {
    if topo.is_this_system() {
        node_free_bytes(node)
    } else {
        topo.desc()
            .numa
            .iter()
            .find(|n| n.os_index == node)
            .map(|n| n.capacity)
            .filter(|&c| c > 0)
    }
}

/// One buffer of a worker's chunk, as placed when it was allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferRecord {
    /// The buffer's name (as in allocation error messages).
    pub what: String,
    /// Start address (identifies the buffer while it lives; never dereferenced).
    pub addr: usize,
    pub bytes: usize,
    /// Under two pages: shares pages with other data, so it was not bound.
    pub small: bool,
    /// Whether the chosen node is high-bandwidth memory.
    pub hbm: bool,
    /// The binding outcome (`Ordinary` when no node was chosen).
    pub placement: BufPlacement,
    /// Nodes holding its pages right after allocation and first touch (kernel's answer);
    /// `Err` with the reason when that could not be asked.
    pub verified: Result<Vec<u32>, String>,
    /// A note from the node choice (high-bandwidth node full).
    pub note: Option<String>,
}

/// The buffers of one worker's chunk (replaced as they grow).
#[derive(Clone, Debug, Default)]
pub struct ChunkLedger {
    buffers: Vec<BufferRecord>,
}

/// Bytes of one record's texts at most: the buffer's name, the reason pages could not be
/// located, the node choice's note (each well under this; a bound for memory estimates).
const RECORD_TEXT_BYTES: u64 = 256;

/// Records a ledger keeps: more than the buffers a CPU workspace holds at once (130), the
/// oldest dropped first (after a failed call's reset every earlier record is of a freed
/// buffer). Reserved up front, so recording never grows the vector during a call.
pub const LEDGER_RECORDS: usize = 160;

impl ChunkLedger {
    /// An empty ledger with room for [`LEDGER_RECORDS`] (best effort: without the memory
    /// it starts empty and grows as before).
    pub fn with_room() -> ChunkLedger {
        let mut buffers = Vec::new();
        let _ = buffers.try_reserve_exact(LEDGER_RECORDS);
        ChunkLedger { buffers }
    }

    pub fn buffers(&self) -> &[BufferRecord] {
        &self.buffers
    }

    /// Bytes recording `grown` buffers of `bytes` in all may allocate, whatever the ledger
    /// holds: each record's texts and the page-location query of each buffer (hwloc asks
    /// the kernel with 12 bytes per 4 KiB page).
    pub fn growth_bytes(grown: usize, bytes: u64) -> u64 {
        (grown as u64 * RECORD_TEXT_BYTES).saturating_add(bytes / 256)
    }

    fn replace(&mut self, previous: usize, rec: BufferRecord) {
        if previous != 0 {
            self.buffers.retain(|b| b.addr != previous);
        }
        if self.buffers.len() >= LEDGER_RECORDS {
            self.buffers.remove(0);
        }
        self.buffers.push(rec);
    }
}

/// The growth hook for worker `place`'s chunk (see the module docs).
pub struct ChunkPlacer<'a> {
    pub topo: &'a Topo,
    pub place: &'a WorkerPlace,
    pub ledger: &'a mut ChunkLedger,
}

/// Writes one zero byte per page of `area` (and its first byte), from this thread.
fn touch_pages(area: &mut [MaybeUninit<u8>], page: usize) {
    let Some(first) = area.first_mut() else {
        return;
    };
    let start = first as *mut MaybeUninit<u8> as usize;
    let mut off = 0;
    while off < area.len() {
        // SAFETY: off < len: a byte of unused capacity that we may write.
        unsafe { std::ptr::write_volatile(area.as_mut_ptr().add(off), MaybeUninit::new(0)) };
        off += page - (start + off) % page;
    }
}

impl GrowthHook for ChunkPlacer<'_> {
    fn grown(&mut self, area: &mut [MaybeUninit<u8>], init: usize, previous: usize, what: &str) {
        let page = page_bytes();
        let start = area.as_ptr() as usize;
        let bytes = area.len();
        // The whole pages inside the buffer.
        let lo = start.next_multiple_of(page) - start;
        let hi = ((start + bytes) / page * page).saturating_sub(start);
        let small = hi <= lo;
        let choice = choose_node(self.place, bytes as u64, |n| free_bytes_of(self.topo, n));
        let placement = match choice.node {
            None => BufPlacement::Ordinary,
            Some(_) if small => BufPlacement::Ordinary,
            Some(n) => match bind_pages(self.topo, &area[lo..hi], n, true) {
                Ok(()) => BufPlacement::Bound(n),
                Err(reason) => BufPlacement::Fallback {
                    requested: n,
                    reason,
                },
            },
        };
        touch_pages(&mut area[init.min(bytes)..], page);
        let verified = if small {
            Err("under two pages, not bound".to_string())
        } else {
            pages_location(self.topo, &area[lo..hi])
        };
        self.ledger.replace(
            previous,
            BufferRecord {
                what: what.to_string(),
                addr: start,
                bytes,
                small,
                hbm: choice.hbm && matches!(placement, BufPlacement::Bound(_)),
                placement,
                verified,
                note: choice.note,
            },
        );
    }
}

/// A worker's chunk in the topology report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkSummary {
    pub worker: usize,
    /// The plan: node and whether it is high-bandwidth memory.
    pub planned_node: Option<u32>,
    pub planned_hbm: bool,
    pub buffers: usize,
    pub bytes: u64,
    /// Bytes in buffers under two pages (not bound; first-touched by the worker).
    pub small_bytes: u64,
    /// Bytes bound to a node, and of those on high-bandwidth memory.
    pub bound_bytes: u64,
    pub hbm_bytes: u64,
    /// Nodes the large buffers were bound to.
    pub requested_nodes: Vec<u32>,
    /// Nodes the kernel reported for their pages.
    pub verified_nodes: Vec<u32>,
    /// Bytes of large buffers whose location could not be asked.
    pub unverified_bytes: u64,
    /// "empty" (no product yet), "verified" (every large buffer bound and its pages on
    /// the node asked for), "bound" (bound, location not known), "ordinary" (none bound),
    /// "partial" (some bound), "elsewhere" (pages found on other nodes than asked).
    pub state: &'static str,
    /// Reasons for fallbacks and notes, without repetitions.
    pub notes: Vec<String>,
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

impl ChunkSummary {
    pub fn new(worker: usize, place: &WorkerPlace, ledger: &ChunkLedger) -> ChunkSummary {
        let mut s = ChunkSummary {
            worker,
            planned_node: place.memory_node,
            planned_hbm: place.hbm,
            buffers: ledger.buffers.len(),
            bytes: 0,
            small_bytes: 0,
            bound_bytes: 0,
            hbm_bytes: 0,
            requested_nodes: Vec::new(),
            verified_nodes: Vec::new(),
            unverified_bytes: 0,
            state: "empty",
            notes: Vec::new(),
        };
        let mut large = 0u64;
        let mut elsewhere = false;
        for b in &ledger.buffers {
            let bytes = b.bytes as u64;
            s.bytes += bytes;
            if let Some(n) = &b.note {
                push_unique(&mut s.notes, n.clone());
            }
            if b.small {
                s.small_bytes += bytes;
                continue;
            }
            large += bytes;
            match &b.placement {
                BufPlacement::Bound(n) => {
                    s.bound_bytes += bytes;
                    if b.hbm {
                        s.hbm_bytes += bytes;
                    }
                    push_unique(&mut s.requested_nodes, *n);
                    if let Ok(v) = &b.verified {
                        elsewhere |= v.iter().any(|x| x != n);
                    }
                }
                BufPlacement::Fallback { reason, .. } => {
                    push_unique(&mut s.notes, reason.clone());
                }
                BufPlacement::Ordinary => {}
            }
            match &b.verified {
                Ok(v) => v
                    .iter()
                    .for_each(|&x| push_unique(&mut s.verified_nodes, x)),
                Err(reason) => {
                    s.unverified_bytes += bytes;
                    push_unique(&mut s.notes, reason.clone());
                }
            }
        }
        s.requested_nodes.sort_unstable();
        s.verified_nodes.sort_unstable();
        s.state = if s.buffers == 0 {
            "empty"
        } else if elsewhere {
            "elsewhere"
        } else if large == 0 || s.bound_bytes == 0 {
            "ordinary"
        } else if s.bound_bytes < large {
            "partial"
        } else if s.unverified_bytes == 0 {
            "verified"
        } else {
            "bound"
        };
        s
    }
}
