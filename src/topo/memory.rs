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

use std::marker::PhantomData;
use std::ptr::NonNull;

use hwlocality::memory::binding::{MemoryBindingFlags, MemoryBindingPolicy};
use hwlocality::memory::nodeset::NodeSet;

use super::Topo;
use crate::error::{Error, Result, Status};

/// Element types for which all-zero bytes are a valid value (the mapping starts zeroed).
///
/// # Safety
/// Implement only for types whose all-zero bit pattern is a valid value and which hold no
/// pointers or drop glue.
pub unsafe trait ZeroValid: Copy + Send + Sync + 'static {}
// SAFETY: plain integers and IEEE floats; zero bytes are 0 / +0.0.
unsafe impl ZeroValid for u8 {}
unsafe impl ZeroValid for u16 {}
unsafe impl ZeroValid for u32 {}
unsafe impl ZeroValid for u64 {}
unsafe impl ZeroValid for usize {}
unsafe impl ZeroValid for i32 {}
unsafe impl ZeroValid for i64 {}
unsafe impl ZeroValid for isize {}
unsafe impl ZeroValid for f32 {}
unsafe impl ZeroValid for f64 {}

/// Where a buffer's memory was put.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufPlacement {
    /// Bound to this NUMA node (OS index).
    Bound(u32),
    /// Ordinary memory because binding to the requested node was not possible.
    Fallback { requested: u32, reason: String },
    /// Ordinary memory, as asked (no node requested).
    Ordinary,
}

/// A zero-initialised buffer of `len` elements of `T`, possibly bound to a NUMA node.
pub struct NodeBuf<T: ZeroValid> {
    ptr: NonNull<T>,
    len: usize,
    /// Bytes mapped (0 for an empty buffer, which maps nothing).
    mapped: usize,
    placement: BufPlacement,
    _own: PhantomData<T>,
}

// SAFETY: NodeBuf owns its mapping exclusively, like Vec<T>.
unsafe impl<T: ZeroValid> Send for NodeBuf<T> {}
// SAFETY: shared access only hands out &[T].
unsafe impl<T: ZeroValid> Sync for NodeBuf<T> {}

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

impl<T: ZeroValid> NodeBuf<T> {
    /// An empty buffer (no mapping).
    pub fn empty() -> NodeBuf<T> {
        NodeBuf {
            ptr: NonNull::dangling(),
            len: 0,
            mapped: 0,
            placement: BufPlacement::Ordinary,
            _own: PhantomData,
        }
    }

    /// `len` zeroed elements on NUMA node `node` (OS index; None: ordinary memory), bound
    /// and first-touched by the calling thread. Call it from the worker that will use the
    /// buffer. `what` names the buffer in the error message.
    ///
    /// Binding is skipped (ordinary memory, reason recorded) when `topo` does not
    /// describe this machine, the OS cannot bind memory, or the kernel reports less free
    /// memory on the node than the buffer needs.
    pub fn alloc_zeroed(
        topo: &Topo,
        len: usize,
        node: Option<u32>,
        what: &str,
    ) -> Result<NodeBuf<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::new(
                Status::AllocFailed,
                format!("cannot allocate {what}: {len} elements overflow the address space"),
            )
        })?;
        if bytes == 0 {
            let mut b = NodeBuf::empty();
            b.len = len;
            return Ok(b);
        }
        let page = page_size();
        let mapped = bytes.div_ceil(page).checked_mul(page).ok_or_else(|| {
            Error::new(
                Status::AllocFailed,
                format!("cannot allocate {what}: {bytes} bytes"),
            )
        })?;
        // SAFETY: anonymous private mapping, no file, no fixed address.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(Error::new(
                Status::AllocFailed,
                format!(
                    "cannot allocate {what}: {bytes} bytes ({})",
                    std::io::Error::last_os_error()
                ),
            ));
        }
        let base = raw.cast::<u8>();
        let placement = match node {
            None => BufPlacement::Ordinary,
            Some(n) => match bind_area(topo, base, mapped, n) {
                Ok(()) => BufPlacement::Bound(n),
                Err(reason) => BufPlacement::Fallback {
                    requested: n,
                    reason,
                },
            },
        };
        // First touch: one write per page places every page now, from this thread.
        for off in (0..mapped).step_by(page) {
            // SAFETY: off < mapped, inside the writable mapping.
            unsafe { base.add(off).write_volatile(0) };
        }
        Ok(NodeBuf {
            // SAFETY: mmap returned a non-null, page-aligned (so T-aligned) address.
            ptr: unsafe { NonNull::new_unchecked(base.cast::<T>()) },
            len,
            mapped,
            placement,
            _own: PhantomData,
        })
    }

    /// Makes the buffer at least `len` elements long, keeping its contents and node (the
    /// new part is zero). A no-op when it is long enough.
    pub fn grow_zeroed(&mut self, topo: &Topo, len: usize, what: &str) -> Result<()> {
        if len <= self.len {
            return Ok(());
        }
        let node = match &self.placement {
            BufPlacement::Bound(n) => Some(*n),
            BufPlacement::Fallback { requested, .. } => Some(*requested),
            BufPlacement::Ordinary => None,
        };
        let mut fresh = NodeBuf::alloc_zeroed(topo, len, node, what)?;
        fresh[..self.len].copy_from_slice(self);
        *self = fresh;
        Ok(())
    }

    pub fn placement(&self) -> &BufPlacement {
        &self.placement
    }

    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }
}

fn bind_area(
    topo: &Topo,
    base: *mut u8,
    mapped: usize,
    node: u32,
) -> std::result::Result<(), String> {
    if let Some(free) = node_free_bytes(node)
        && topo.is_this_system()
        && free < mapped as u64
    {
        return Err(format!(
            "node {node} has {free} bytes free, {mapped} needed"
        ));
    }
    // SAFETY: the mapping is `mapped` bytes that we own; viewed as MaybeUninit bytes.
    let area = unsafe { std::slice::from_raw_parts(base.cast_const().cast(), mapped) };
    bind_pages(topo, area, node, false)
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

impl<T: ZeroValid> std::ops::Deref for NodeBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised (zero-valid) elements at `ptr`, or an empty slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroValid> std::ops::DerefMut for NodeBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroValid> Drop for NodeBuf<T> {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // SAFETY: the mapping of `mapped` bytes at `ptr` is ours and unmapped once.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.mapped) };
        }
    }
}

impl<T: ZeroValid> Default for NodeBuf<T> {
    fn default() -> Self {
        NodeBuf::empty()
    }
}

impl<T: ZeroValid + std::fmt::Debug> std::fmt::Debug for NodeBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBuf")
            .field("len", &self.len)
            .field("placement", &self.placement)
            .finish()
    }
}
