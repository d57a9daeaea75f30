//! An MPI rank that its launcher did not bind (`mpirun --bind-to none`) binds its workers
//! to its share of the node's cores, not from core 0 on like every other rank. A test
//! binary of its own: it sets the launcher's environment variables.

use spgemm::Handle;

#[test]
fn an_unbound_rank_binds_its_workers_to_its_share() {
    let h = Handle::new(1).unwrap();
    let all = h.placement().workers.len();
    assert_eq!(all, 1);
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    // Not under a narrower mask (taskset, a bound launcher): then the share applies.
    let whole = online > 1 && usable == online as usize;
    let this_system = h.topology_info().contains("\"this_system\":true");
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe {
        std::env::set_var("OMPI_COMM_WORLD_LOCAL_RANK", "1");
        std::env::set_var("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    }
    let h1 = Handle::new(1).unwrap();
    let w = &h1.placement().workers[0];
    if whole && this_system && !w.pus.is_empty() {
        // Rank 1 of 2: the second half of the PUs (the machine's upper cores).
        let info = h1.topology_info();
        assert!(info.contains("MPI rank 1 of 2 on this node"), "{info}");
        let h0_pu = h.placement().workers[0].pus.first().copied();
        assert_ne!(w.pus.first().copied(), h0_pu, "{info}");
        // The default thread count is the share's PUs, not the whole machine's.
        let d = spgemm::default_threads().unwrap();
        assert!((1..usable).contains(&d), "{d} of {usable}");
    }
    // SAFETY: as above.
    unsafe {
        std::env::remove_var("OMPI_COMM_WORLD_LOCAL_RANK");
        std::env::remove_var("OMPI_COMM_WORLD_LOCAL_SIZE");
    }
}
