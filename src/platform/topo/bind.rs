//! Executing a placement: binding the calling thread to CPUs. Only on a topology of this
//! machine; a refusal (no permission, a CPU that went offline, a container) is reported
//! as a message and the thread stays where it was: binding is an optimisation, never a
//! reason to fail.

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;

use super::Topo;

/// OS indices of the PUs the calling thread may run on (sorted), if hwloc can tell.
pub fn current_thread_pus(topo: &Topo) -> Option<Vec<u32>> {
    if !topo.is_this_system() {
        return None;
    }
    let hw = topo.hwloc()?;
    let set = hw.cpu_binding(CpuBindingFlags::THREAD).ok()?;
    let pus: Vec<u32> = set.iter_set().map(|i| usize::from(i) as u32).collect();
    (!pus.is_empty()).then_some(pus)
}

/// Binds the calling thread to the PUs `pus` (OS indices). Errors are messages.
pub fn bind_current_thread(topo: &Topo, pus: &[u32]) -> Result<(), String> {
    if pus.is_empty() {
        return Ok(());
    }
    let Some(hw) = topo.hwloc() else {
        return Err(format!(
            "no hwloc topology: {}",
            topo.load_error.as_deref().unwrap_or("not loaded")
        ));
    };
    if !topo.is_this_system() {
        return Err(format!(
            "the topology ({}) does not describe this machine",
            topo.desc().source
        ));
    }
    let mut set = CpuSet::new();
    for &p in pus {
        set.set(p as usize);
    }
    hw.bind_cpu(&set, CpuBindingFlags::THREAD)
        .map_err(|e| format!("binding to PUs {pus:?} failed: {e}"))
}
