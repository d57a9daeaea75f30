//! Topology, placement and NUMA memory. Placement is planned on XML topologies of machines
//! we do not have (a two-socket server, KNL in flat mode) and checked against the policy;
//! binding and node-bound memory are executed only on this machine's own topology.

use std::sync::Arc;

use spgemm::Handle;
use spgemm::Status;
use spgemm::platform::topo::info::BindOutcome;
use spgemm::platform::topo::placement::{core_of_worker, plan};
use spgemm::platform::topo::{BindPolicy, HbmMode, MachineDesc, Topo};

fn xml(name: &str) -> Topo {
    let path = format!(
        "{}/tests/data/topologies/{name}.xml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Topo::from_xml(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cores(p: &spgemm::platform::topo::Placement) -> Vec<Option<usize>> {
    p.workers.iter().map(|w| w.core).collect()
}

fn mem_nodes(p: &spgemm::platform::topo::Placement) -> Vec<Option<u32>> {
    p.workers.iter().map(|w| w.memory_node).collect()
}

// ---------------------------------------------------------------------------------------
// Two sockets, one NUMA node each, 4 cores x 2 hardware threads per socket, Intel-style
// numbering (core k of socket s has PUs 4s+k and 4s+k+8). No bandwidth attributes.

#[test]
fn two_socket_description() {
    let t = xml("two_socket_2numa");
    assert!(!t.is_this_system());
    let d = t.desc();
    assert_eq!(d.packages, 2);
    assert_eq!(d.cores.len(), 8);
    assert_eq!(d.numa.len(), 2);
    assert_eq!(d.cores[0].pus, vec![0, 8]);
    assert_eq!(d.cores[5].pus, vec![5, 13]);
    assert_eq!(d.cores[5].package, 1);
    assert_eq!(d.numa[1].os_index, 1);
    assert_eq!(d.numa[1].capacity, 64 << 30);
    assert!(d.numa.iter().all(|n| n.bandwidth.is_empty()));
    assert_eq!(d.ordinary_node(3), Some(0));
    assert_eq!(d.ordinary_node(4), Some(1));
    assert_eq!(d.ordinary_domains(), 2);
    assert!(!t.hbm_present());
}

#[test]
fn two_socket_spread_close_none() {
    let t = xml("two_socket_2numa");
    let d = t.desc();
    let p = plan(d, 2, BindPolicy::Spread, HbmMode::Auto);
    assert_eq!(cores(&p), vec![Some(0), Some(4)]);
    assert_eq!(p.workers[1].pus, vec![4, 12]);
    assert_eq!(mem_nodes(&p), vec![Some(0), Some(1)]);
    assert_eq!(p.workers[1].numa_node, Some(1));

    let p = plan(d, 2, BindPolicy::Close, HbmMode::Auto);
    assert_eq!(cores(&p), vec![Some(0), Some(1)]);
    assert_eq!(mem_nodes(&p), vec![Some(0), Some(0)]);

    let p = plan(d, 4, BindPolicy::Spread, HbmMode::Auto);
    assert_eq!(cores(&p), vec![Some(0), Some(2), Some(4), Some(6)]);
    assert_eq!(mem_nodes(&p), vec![Some(0), Some(0), Some(1), Some(1)]);

    let p = plan(d, 3, BindPolicy::None, HbmMode::Auto);
    assert!(
        p.workers
            .iter()
            .all(|w| w.core.is_none() && w.pus.is_empty())
    );
    assert_eq!(mem_nodes(&p), vec![None, None, None]);
}

#[test]
fn auto_policy_resolution() {
    let t = xml("two_socket_2numa");
    let d = t.desc();
    // Two NUMA domains: spread even when every core gets a worker.
    assert_eq!(BindPolicy::Auto.resolve(d, 8), BindPolicy::Spread);
    assert_eq!(BindPolicy::Auto.resolve(d, 2), BindPolicy::Spread);
    let p = plan(d, 2, BindPolicy::Auto, HbmMode::Auto);
    assert_eq!(p.requested, BindPolicy::Auto);
    assert_eq!(p.policy, BindPolicy::Spread);
    // One domain: spread with spare cores, close when the workers fill the machine.
    let one = Topo::from_synthetic("pack:1 [numa] core:4 pu:1").unwrap();
    assert_eq!(BindPolicy::Auto.resolve(one.desc(), 2), BindPolicy::Spread);
    assert_eq!(BindPolicy::Auto.resolve(one.desc(), 4), BindPolicy::Close);
    assert_eq!(BindPolicy::Auto.resolve(one.desc(), 9), BindPolicy::Close);
    // Explicit policies are kept.
    assert_eq!(BindPolicy::Close.resolve(d, 2), BindPolicy::Close);
    // A machine other processes may share (the caller's mask is all of it, no MPI share):
    // fewer workers than cores stay unbound, with a note; a full machine is still bound.
    for (desc, cores) in [(d, 8), (one.desc(), 4)] {
        let shared = MachineDesc {
            shared: true,
            ..desc.clone()
        };
        assert_eq!(BindPolicy::Auto.resolve(&shared, 1), BindPolicy::None);
        assert_eq!(
            BindPolicy::Auto.resolve(&shared, cores - 1),
            BindPolicy::None
        );
        assert_eq!(
            BindPolicy::Auto.resolve(&shared, cores),
            BindPolicy::Auto.resolve(desc, cores)
        );
        assert_eq!(BindPolicy::Spread.resolve(&shared, 1), BindPolicy::Spread);
        let p = plan(&shared, 1, BindPolicy::Auto, HbmMode::Auto);
        assert_eq!(p.policy, BindPolicy::None);
        assert!(p.workers.iter().all(|w| w.core.is_none()));
        assert!(
            p.notes.iter().any(|n| n.contains("unbound")),
            "{:?}",
            p.notes
        );
    }
}

#[test]
fn oversubscription_gives_blocks_of_workers_per_core() {
    let t = xml("two_socket_2numa");
    for policy in [BindPolicy::Spread, BindPolicy::Close] {
        let p = plan(t.desc(), 16, policy, HbmMode::Off);
        let want: Vec<Option<usize>> = (0..16).map(|i| Some(i / 2)).collect();
        assert_eq!(cores(&p), want, "{policy:?}");
    }
    // Every core used, each by 1 or 2 workers, in order.
    let p = plan(t.desc(), 11, BindPolicy::Spread, HbmMode::Off);
    let cs: Vec<usize> = p.workers.iter().map(|w| w.core.unwrap()).collect();
    assert!(cs.windows(2).all(|w| w[0] <= w[1]));
    for c in 0..8 {
        let n = cs.iter().filter(|&&x| x == c).count();
        assert!((1..=2).contains(&n), "core {c} has {n} workers: {cs:?}");
    }
}

#[test]
fn core_of_worker_formulas() {
    assert_eq!(core_of_worker(BindPolicy::Close, 2, 3, 8), 2);
    assert_eq!(core_of_worker(BindPolicy::Spread, 2, 3, 8), 5);
    assert_eq!(core_of_worker(BindPolicy::Spread, 0, 1, 8), 0);
    assert_eq!(core_of_worker(BindPolicy::Spread, 3, 4, 4), 3);
    assert_eq!(core_of_worker(BindPolicy::Close, 5, 6, 4), 3);
}

#[test]
fn hbm_requested_without_hbm_is_noted_not_failed() {
    let t = xml("two_socket_2numa");
    let p = plan(t.desc(), 2, BindPolicy::Spread, HbmMode::On);
    assert_eq!(mem_nodes(&p), vec![Some(0), Some(1)]);
    assert!(p.workers.iter().all(|w| !w.hbm));
    assert!(
        p.notes.iter().any(|n| n.contains("shows none")),
        "{:?}",
        p.notes
    );
    let p = plan(t.desc(), 2, BindPolicy::Spread, HbmMode::Auto);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

// ---------------------------------------------------------------------------------------
// KNL-like node in flat quadrant mode: 8 cores x 4 PUs, DDR node 0 (96 GiB, 90000 MiB/s)
// and MCDRAM node 1 (16 GiB, 420000 MiB/s, subtype MCDRAM), both local to every core.

#[test]
fn knl_flat_description() {
    let t = xml("knl_flat_quadrant");
    let d = t.desc();
    assert_eq!(d.cores.len(), 8);
    assert_eq!(d.cores[1].pus, vec![4, 5, 6, 7]);
    assert_eq!(d.numa.len(), 2);
    assert_eq!(d.numa[1].subtype.as_deref(), Some("MCDRAM"));
    assert_eq!(d.numa[0].bandwidth_from(&[4, 5, 6, 7]), Some(90000));
    assert_eq!(d.numa[1].bandwidth_from(&[4, 5, 6, 7]), Some(420000));
    assert_eq!(d.ordinary_node(3), Some(0));
    assert_eq!(d.hbm_node(3), Some(1));
    assert_eq!(d.ordinary_domains(), 1);
    assert!(t.hbm_present());
}

#[test]
fn knl_flat_places_memory_on_mcdram() {
    let t = xml("knl_flat_quadrant");
    let d = t.desc();
    for hbm in [HbmMode::Auto, HbmMode::On] {
        let p = plan(d, 4, BindPolicy::Auto, hbm);
        assert_eq!(p.policy, BindPolicy::Spread);
        assert_eq!(cores(&p), vec![Some(0), Some(2), Some(4), Some(6)]);
        assert!(p.workers.iter().all(|w| w.hbm && w.memory_node == Some(1)));
        assert!(p.workers.iter().all(|w| w.numa_node == Some(0)));
    }
    let p = plan(d, 4, BindPolicy::Auto, HbmMode::Off);
    assert!(p.workers.iter().all(|w| !w.hbm && w.memory_node == Some(0)));
    // Unbound workers may run anywhere, and MCDRAM is local to every core: still used.
    let p = plan(d, 4, BindPolicy::None, HbmMode::Auto);
    assert!(p.workers.iter().all(|w| w.hbm && w.memory_node == Some(1)));
}

// KNL-like in flat SNC-2 mode: two clusters of 4 cores, each with its own DDR node
// (OS 0, 2) and MCDRAM node (OS 1, 3); remote bandwidths are lower than local ones.

#[test]
fn knl_snc2_uses_the_local_mcdram_of_each_worker() {
    let t = xml("knl_flat_snc2");
    let d = t.desc();
    assert_eq!(d.numa.len(), 4);
    assert_eq!(d.ordinary_domains(), 2);
    let p = plan(d, 2, BindPolicy::Auto, HbmMode::Auto);
    assert_eq!(p.policy, BindPolicy::Spread);
    assert_eq!(cores(&p), vec![Some(0), Some(4)]);
    assert_eq!(
        p.workers.iter().map(|w| w.numa_node).collect::<Vec<_>>(),
        vec![Some(0), Some(2)]
    );
    assert_eq!(mem_nodes(&p), vec![Some(1), Some(3)]);
    let p = plan(d, 8, BindPolicy::Close, HbmMode::Off);
    assert_eq!(
        mem_nodes(&p),
        vec![
            Some(0),
            Some(0),
            Some(0),
            Some(0),
            Some(2),
            Some(2),
            Some(2),
            Some(2)
        ]
    );
    // Unbound: no MCDRAM node is local to every core, so normal memory, with a note.
    let p = plan(d, 2, BindPolicy::None, HbmMode::Auto);
    assert_eq!(mem_nodes(&p), vec![None, None]);
    assert!(
        p.notes.iter().any(|n| n.contains("unbound")),
        "{:?}",
        p.notes
    );
}

// ---------------------------------------------------------------------------------------
// High-bandwidth detection rules on hand-made descriptions.

fn two_node_desc() -> MachineDesc {
    let mut d =
        Topo::from_synthetic("pack:1 [numa(memory=1000000)] [numa(memory=1000)] core:2 pu:1")
            .unwrap()
            .desc()
            .clone();
    assert_eq!(d.numa.len(), 2);
    for n in &mut d.numa {
        n.bandwidth.clear();
        n.subtype = None;
    }
    d
}

#[test]
fn hbm_by_subtype_when_no_bandwidth_is_reported() {
    let mut d = two_node_desc();
    assert!(!d.hbm_present());
    d.numa[1].subtype = Some("HBM".into());
    assert!(d.hbm_present());
    assert_eq!(d.hbm_node(0), Some(1));
    // A subtype on the lower-numbered node: the other one is the ordinary node.
    let mut d = two_node_desc();
    d.numa[0].subtype = Some("MCDRAM".into());
    assert_eq!(d.ordinary_node(1), Some(1));
    assert_eq!(d.hbm_node(1), Some(0));
}

#[test]
fn hbm_by_bandwidth_needs_a_clear_ratio() {
    use spgemm::platform::topo::desc::Bandwidth;
    let mut d = two_node_desc();
    let all: Vec<u32> = d.cores.iter().flat_map(|c| c.pus.clone()).collect();
    let bw = |v| {
        vec![Bandwidth {
            from_pus: all.clone(),
            mib_s: v,
        }]
    };
    d.numa[0].bandwidth = bw(100_000);
    d.numa[1].bandwidth = bw(120_000);
    assert!(!d.hbm_present(), "1.2x is not high-bandwidth memory");
    d.numa[1].bandwidth = bw(200_000);
    assert!(d.hbm_present());
    // A slower extra node (CXL-like) is neither ordinary nor high-bandwidth.
    d.numa[1].bandwidth = bw(30_000);
    assert_eq!(d.ordinary_node(0), Some(0));
    assert_eq!(d.hbm_node(0), None);
}

#[test]
fn restriction_to_a_cpu_mask() {
    let t = xml("two_socket_2numa");
    // Only socket 1's first hardware threads (as an MPI launcher binding a rank would).
    let r = t.desc().restricted_to(&[4, 5, 6, 7]);
    assert_eq!(r.cores.len(), 4);
    assert!(r.cores.iter().all(|c| c.package == 1 && c.pus.len() == 1));
    let p = plan(&r, 2, BindPolicy::Auto, HbmMode::Auto);
    assert_eq!(p.policy, BindPolicy::Spread);
    assert_eq!(p.workers[0].pus, vec![4]);
    assert_eq!(p.workers[1].pus, vec![6]);
    assert_eq!(mem_nodes(&p), vec![Some(1), Some(1)]);
    // A mask naming none of our PUs keeps the whole machine.
    assert_eq!(t.desc().restricted_to(&[99]).cores.len(), 8);
}

#[test]
fn unbound_mpi_ranks_of_a_node_share_its_cores() {
    use spgemm::platform::topo::rank_share;
    // Enough cores: equal runs that tile the cores, one per rank.
    for (cores, size) in [(2, 2), (8, 3), (64, 6), (7, 7)] {
        let runs: Vec<_> = (0..size).map(|r| rank_share(cores, r, size)).collect();
        assert_eq!(runs[0].start, 0);
        assert_eq!(runs[size - 1].end, cores);
        assert!(runs.windows(2).all(|w| w[0].end == w[1].start));
        assert!(runs.iter().all(|r| !r.is_empty()));
    }
    assert_eq!(rank_share(8, 1, 3), 2..5);
    // Fewer cores than ranks (oversubscribed): one core each, ranks spread over them.
    let runs: Vec<_> = (0..4).map(|r| rank_share(2, r, 4)).collect();
    assert_eq!(runs, vec![0..1, 0..1, 1..2, 1..2]);
    // A rank's share restricts the description like a launcher's mask would, and the
    // default placement then binds its worker there, not on core 0.
    let t = xml("two_socket_2numa");
    let cores = &t.desc().cores;
    let pus: Vec<u32> = cores[rank_share(cores.len(), 1, 2)]
        .iter()
        .flat_map(|c| c.pus.iter().copied())
        .collect();
    let r = t.desc().restricted_to(&pus);
    assert_eq!(r.cores.len(), 4);
    let p = plan(&r, 1, BindPolicy::Auto, HbmMode::Auto);
    assert_eq!(p.workers[0].core.map(|c| r.cores[c].package), Some(1));
}

#[test]
fn bad_topology_inputs_are_errors() {
    assert_eq!(
        Topo::from_xml("<not a topology").unwrap_err().status,
        Status::InvalidValue
    );
    assert_eq!(
        Topo::from_synthetic("bogus:3").unwrap_err().status,
        Status::InvalidValue
    );
}

#[test]
fn policy_names_and_codes_round_trip() {
    for p in [
        BindPolicy::Auto,
        BindPolicy::None,
        BindPolicy::Close,
        BindPolicy::Spread,
    ] {
        assert_eq!(BindPolicy::from_code(p as i32), Some(p));
        assert_eq!(BindPolicy::parse(p.name()), Some(p));
    }
    assert_eq!(BindPolicy::parse(" SPREAD "), Some(BindPolicy::Spread));
    assert_eq!(BindPolicy::parse("false"), Some(BindPolicy::None));
    assert_eq!(BindPolicy::parse("true"), Some(BindPolicy::Auto));
    assert_eq!(BindPolicy::parse("master"), None);
    assert_eq!(BindPolicy::from_code(4), None);
    for m in [HbmMode::Auto, HbmMode::Off, HbmMode::On] {
        assert_eq!(HbmMode::from_code(m as i32), Some(m));
    }
    assert_eq!(HbmMode::from_code(-1), None);
}

// ---------------------------------------------------------------------------------------
// Handles: planned on foreign topologies, executed on this machine.

#[test]
fn handle_on_a_foreign_topology_plans_but_does_not_bind() {
    let t = Arc::new(xml("knl_flat_snc2"));
    let h = Handle::with_topology(2, t).unwrap();
    assert_eq!(cores(h.placement()), vec![Some(0), Some(4)]);
    assert_eq!(mem_nodes(h.placement()), vec![Some(1), Some(3)]);
    assert!(h.hbm_present());
    let outcomes = h.bind_outcomes();
    assert_eq!(outcomes.len(), 2);
    for o in &outcomes {
        match o {
            BindOutcome::Failed(m) => assert!(m.contains("does not describe this machine"), "{m}"),
            other => panic!("expected a planned-only binding, got {other:?}"),
        }
    }
    // The workers still run.
    assert_eq!(h.install(rayon::current_num_threads).unwrap(), 2);
    let info = h.topology_info();
    assert_valid_json(&info);
    assert!(info.contains("\"policy\":\"spread\""), "{info}");
    assert!(info.contains("\"memory_node\":3"), "{info}");
    assert!(info.contains("could not be bound"), "{info}");
    assert!(info.contains("\"hbm_present\":true"), "{info}");
}

#[test]
fn handle_without_hwloc_runs_unbound_with_a_message() {
    let t = Arc::new(Topo::fallback(
        3,
        "hwloc could not discover the topology: test",
    ));
    assert_eq!(t.desc().cores.len(), 3);
    assert!(!t.hbm_present());
    let h = Handle::with_topology(2, t).unwrap();
    assert_eq!(h.placement().policy, BindPolicy::Spread);
    for o in h.bind_outcomes() {
        assert!(
            matches!(&o, BindOutcome::Failed(m) if m.contains("no hwloc topology")),
            "{o:?}"
        );
    }
    assert_eq!(h.install(rayon::current_num_threads).unwrap(), 2);
    let info = h.topology_info();
    assert_valid_json(&info);
    assert!(info.contains("\"source\":\"fallback\""), "{info}");
    assert!(info.contains("\"load_error\":\"hwloc could not"), "{info}");
}

/// PUs the calling thread may run on, from the kernel.
fn affinity_of_this_thread() -> Vec<u32> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&i| libc::CPU_ISSET(i, &set))
            .map(|i| i as u32)
            .collect()
    }
}

#[test]
fn auto_leaves_fewer_workers_than_cores_unbound_on_a_whole_machine() {
    let t = Topo::system();
    let cores = t.desc().cores.len();
    let whole = affinity_of_this_thread().len()
        == t.desc().cores.iter().map(|c| c.pus.len()).sum::<usize>();
    if cores < 2
        || !whole
        || std::env::var_os("SPGEMM_PROC_BIND").is_some()
        || spgemm::platform::topo::node_rank().is_some()
    {
        eprintln!(
            "SKIPPED auto_leaves_fewer_workers_than_cores_unbound_on_a_whole_machine: {cores} cores, whole mask {whole}"
        );
        return;
    }
    let h = Handle::new(cores - 1).unwrap();
    assert_eq!(h.placement().policy, BindPolicy::None);
    let masks = h
        .install(|| rayon::broadcast(|_| affinity_of_this_thread()))
        .unwrap();
    assert!(masks.iter().all(|m| m.len() > 1), "{masks:?}");
    assert!(h.topology_info().contains("workers unbound"));
    let h = Handle::new(cores).unwrap();
    assert_ne!(h.placement().policy, BindPolicy::None);
}

#[test]
fn handle_on_this_machine_binds_workers_where_planned() {
    let t = Topo::system();
    assert!(!t.desc().cores.is_empty());
    for policy in [BindPolicy::Spread, BindPolicy::Close, BindPolicy::None] {
        let mut h = Handle::new(2).unwrap();
        h.set_binding(policy).unwrap();
        let outcomes = h.bind_outcomes();
        assert!(!outcomes.contains(&BindOutcome::Pending), "{outcomes:?}");
        let masks = h
            .install(|| rayon::broadcast(|ctx| (ctx.index(), affinity_of_this_thread())))
            .unwrap();
        for (i, mask) in masks {
            let w = h.placement().worker(i);
            match &outcomes[i] {
                BindOutcome::Bound => assert_eq!(mask, w.pus, "worker {i} under {policy:?}"),
                BindOutcome::Unbound => {
                    assert_eq!(policy, BindPolicy::None);
                    assert!(w.pus.is_empty());
                }
                // A machine that refuses binding (some containers): recorded, not failed.
                BindOutcome::Failed(m) => assert!(!m.is_empty()),
                BindOutcome::Pending => unreachable!(),
            }
        }
        assert_valid_json(&h.topology_info());
    }
}

#[test]
fn changing_threads_replans_placement() {
    let mut h = Handle::new(1).unwrap();
    h.set_binding(BindPolicy::Close).unwrap();
    assert_eq!(h.placement().workers.len(), 1);
    h.set_threads(3).unwrap();
    assert_eq!(h.placement().workers.len(), 3);
    assert_eq!(h.bind_outcomes().len(), 3);
    assert_eq!(h.install(rayon::current_num_threads).unwrap(), 3);
    h.set_hbm(HbmMode::Off).unwrap();
    assert_eq!(h.hbm_mode(), HbmMode::Off);
    assert!(h.placement().workers.iter().all(|w| !w.hbm));
}

// ---------------------------------------------------------------------------------------
// A small JSON syntax checker, so the report is known to parse.

fn assert_valid_json(s: &str) {
    fn ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn value(b: &[u8], i: &mut usize) -> Result<(), String> {
        ws(b, i);
        match b.get(*i) {
            Some(b'{') => {
                *i += 1;
                ws(b, i);
                if b.get(*i) == Some(&b'}') {
                    *i += 1;
                    return Ok(());
                }
                loop {
                    ws(b, i);
                    string(b, i)?;
                    ws(b, i);
                    if b.get(*i) != Some(&b':') {
                        return Err(format!("':' expected at {i}"));
                    }
                    *i += 1;
                    value(b, i)?;
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("',' or '}}' expected at {i}")),
                    }
                }
            }
            Some(b'[') => {
                *i += 1;
                ws(b, i);
                if b.get(*i) == Some(&b']') {
                    *i += 1;
                    return Ok(());
                }
                loop {
                    value(b, i)?;
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b']') => {
                            *i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("',' or ']' expected at {i}")),
                    }
                }
            }
            Some(b'"') => string(b, i),
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                *i += 1;
                while *i < b.len() && (b[*i].is_ascii_digit() || b".eE+-".contains(&b[*i])) {
                    *i += 1;
                }
                Ok(())
            }
            _ => {
                for lit in [&b"true"[..], b"false", b"null"] {
                    if b[*i..].starts_with(lit) {
                        *i += lit.len();
                        return Ok(());
                    }
                }
                Err(format!("value expected at {i}"))
            }
        }
    }
    fn string(b: &[u8], i: &mut usize) -> Result<(), String> {
        if b.get(*i) != Some(&b'"') {
            return Err(format!("string expected at {i}"));
        }
        *i += 1;
        while *i < b.len() {
            match b[*i] {
                b'"' => {
                    *i += 1;
                    return Ok(());
                }
                b'\\' => *i += 2,
                c if c < 0x20 => return Err(format!("control character at {i}")),
                _ => *i += 1,
            }
        }
        Err("unterminated string".into())
    }
    let b = s.as_bytes();
    let mut i = 0;
    value(b, &mut i).unwrap_or_else(|e| panic!("invalid JSON ({e}): {s}"));
    ws(b, &mut i);
    assert_eq!(i, b.len(), "trailing text in JSON: {s}");
}

#[test]
fn json_checker_rejects_bad_json() {
    for bad in ["{\"a\":}", "[1,]", "{\"a\" 1}", "\"x", "{} x"] {
        assert!(
            std::panic::catch_unwind(|| assert_valid_json(bad)).is_err(),
            "{bad}"
        );
    }
    assert_valid_json("{\"a\":[1,-2.5e3,true,null,{\"b\":\"c\\\"\"}]}");
}
