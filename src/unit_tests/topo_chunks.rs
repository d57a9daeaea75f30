//! Placement of the per-worker accumulator chunks (ONE2ONE pool) and the selector's view of
//! high-bandwidth memory. Node choices are planned on XML topologies of machines we do not
//! have (two sockets, KNL in flat mode); binding and its verification run on this machine.

use std::sync::Arc;

use super::common::*;
use spgemm::IndexVec;
use spgemm::OutputFormat;
use spgemm::cpu::select::{Features, dense_numeric_budget, select_numeric};
use spgemm::platform::caches::Caches;
use spgemm::platform::topo::chunk::{ChunkSummary, choose_node};
use spgemm::platform::topo::memory::BufPlacement;
use spgemm::platform::topo::placement::plan;
use spgemm::platform::topo::{BindPolicy, HbmMode, Topo};
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle};

fn xml_text(name: &str) -> String {
    let path = format!(
        "{}/tests/data/topologies/{name}.xml",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn xml(name: &str) -> Topo {
    Topo::from_xml(&xml_text(name)).unwrap()
}

const GIB: u64 = 1 << 30;

/// Node chosen for a chunk of `bytes` for each worker, with free memory = node capacity
/// (`free` overrides it for one node).
fn chunk_nodes(
    t: &Topo,
    threads: usize,
    policy: BindPolicy,
    hbm: HbmMode,
    bytes: u64,
    free: Option<(u32, u64)>,
) -> Vec<(Option<u32>, bool)> {
    let d = t.desc();
    let p = plan(d, threads, policy, hbm);
    p.workers
        .iter()
        .map(|w| {
            let c = choose_node(w, bytes, |n| match free {
                Some((node, f)) if node == n => Some(f),
                _ => d.numa.iter().find(|x| x.os_index == n).map(|x| x.capacity),
            });
            (c.node, c.hbm)
        })
        .collect()
}

#[test]
fn two_socket_chunks_follow_the_binding_policy() {
    let t = xml("two_socket_2numa");
    let mib = 1 << 20;
    // spread: one worker per socket, each chunk on its socket's node.
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::Spread, HbmMode::Auto, mib, None),
        vec![(Some(0), false), (Some(1), false)]
    );
    // close: both workers on socket 0.
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::Close, HbmMode::Auto, mib, None),
        vec![(Some(0), false), (Some(0), false)]
    );
    // 8 workers: close fills socket 0 first, spread alternates... in runs of the core list.
    let close8: Vec<_> = chunk_nodes(&t, 8, BindPolicy::Close, HbmMode::Auto, mib, None);
    assert_eq!(
        close8.iter().map(|x| x.0.unwrap()).collect::<Vec<_>>(),
        vec![0, 0, 0, 0, 1, 1, 1, 1]
    );
    let spread4 = chunk_nodes(&t, 4, BindPolicy::Spread, HbmMode::Auto, mib, None);
    assert_eq!(
        spread4.iter().map(|x| x.0.unwrap()).collect::<Vec<_>>(),
        vec![0, 0, 1, 1]
    );
    // none: workers may run anywhere, so chunks are ordinary memory placed by first touch.
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::None, HbmMode::Auto, mib, None),
        vec![(None, false), (None, false)]
    );
    // No high-bandwidth memory: `on` cannot find any, chunks stay on the ordinary nodes.
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::Spread, HbmMode::On, mib, None),
        vec![(Some(0), false), (Some(1), false)]
    );
}

#[test]
fn knl_chunks_go_to_mcdram_unless_off_or_full() {
    let t = xml("knl_flat_quadrant");
    let chunk = 64 << 20;
    for mode in [HbmMode::Auto, HbmMode::On] {
        for policy in [BindPolicy::Spread, BindPolicy::Close, BindPolicy::None] {
            // Node 1 is the MCDRAM (16 GiB); quadrant mode: every core sees it as local.
            assert_eq!(
                chunk_nodes(&t, 4, policy, mode, chunk, None),
                vec![(Some(1), true); 4],
                "{mode:?} {policy:?}"
            );
        }
    }
    assert_eq!(
        chunk_nodes(&t, 4, BindPolicy::Spread, HbmMode::Off, chunk, None),
        vec![(Some(0), false); 4]
    );
    // "Full": the MCDRAM has less free than the chunk needs -> DDR (node 0), with a note.
    assert_eq!(
        chunk_nodes(
            &t,
            4,
            BindPolicy::Spread,
            HbmMode::On,
            chunk,
            Some((1, chunk - 1))
        ),
        vec![(Some(0), false); 4]
    );
    let p = plan(t.desc(), 1, BindPolicy::Spread, HbmMode::Auto);
    let c = choose_node(&p.workers[0], 2 * GIB, |_| Some(GIB));
    assert_eq!((c.node, c.hbm), (Some(0), false));
    let note = c.note.expect("a fallback is explained");
    assert!(note.contains("node 1") && note.contains("node 0"), "{note}");
    // Unknown free memory is assumed to fit.
    let c = choose_node(&p.workers[0], 2 * GIB, |_| None);
    assert_eq!((c.node, c.hbm, c.note), (Some(1), true, None));
    // Unbound workers with a full MCDRAM: no ordinary node is known, ordinary memory.
    let p = plan(t.desc(), 2, BindPolicy::None, HbmMode::Auto);
    let c = choose_node(&p.workers[0], 2 * GIB, |_| Some(GIB));
    assert_eq!((c.node, c.hbm), (None, false));
}

#[test]
fn knl_snc2_chunks_use_each_workers_local_mcdram() {
    let t = xml("knl_flat_snc2");
    let chunk = 1 << 20;
    // Two clusters of 4 cores: nodes 0 (DDR) + 1 (MCDRAM), 2 (DDR) + 3 (MCDRAM).
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::Spread, HbmMode::Auto, chunk, None),
        vec![(Some(1), true), (Some(3), true)]
    );
    assert_eq!(
        chunk_nodes(&t, 2, BindPolicy::Spread, HbmMode::Off, chunk, None),
        vec![(Some(0), false), (Some(2), false)]
    );
    // Only cluster 1's MCDRAM is full: only worker 1 falls back, to its own DDR.
    assert_eq!(
        chunk_nodes(
            &t,
            2,
            BindPolicy::Spread,
            HbmMode::Auto,
            chunk,
            Some((3, 0))
        ),
        vec![(Some(1), true), (Some(2), false)]
    );
}

// ---------------------------------------------------------------------------------------
// Products on handles

fn f64_format() -> OutputFormat {
    OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int32,
        base: 0,
    }
}

/// A product with `k` columns in C, run on `h` with the dense accumulator (its arrays are
/// O(k), so k = 200,000 gives buffers of many pages).
fn run_dense(h: &mut Handle, k: usize, seed: u64) {
    h.options.algorithm = Algorithm::Dense;
    let mut rng = Rng::new(seed);
    let a = random(
        &mut rng,
        Shape {
            nrows: 400,
            ncols: 300,
            max_row: 6,
            ..Default::default()
        },
    );
    let b = random(
        &mut rng,
        Shape {
            nrows: 300,
            ncols: k,
            max_row: 40,
            ..Default::default()
        },
    );
    let ta = typed(
        &a,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let tb = typed(
        &b,
        IndexType::Int64,
        IndexType::Int32,
        ValueType::Float64,
        0,
        true,
    );
    let c = spgemm::multiply(h, &ta.any(), &tb.any(), f64_format()).unwrap();
    let (ptr, col, _) = reference::<f64>(&a, &b);
    assert_eq!(*ptr.last().unwrap(), col.len());
    let nnz = match &c.indices {
        IndexVec::I32(v) => v.len(),
        IndexVec::I64(v) => v.len(),
    };
    assert_eq!(nnz, col.len(), "product still right");
}

/// /proc/self/numa_maps policy of the mapping that contains `addr` (e.g. "prefer:0").
fn numa_policy_at(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/numa_maps").ok()?;
    maps.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let start = usize::from_str_radix(it.next()?, 16).ok()?;
            Some((start, it.next().unwrap_or("").to_string()))
        })
        .filter(|&(start, _)| start <= addr)
        .max_by_key(|&(start, _)| start)
        .map(|(_, p)| p)
}

fn summaries(h: &Handle) -> Vec<ChunkSummary> {
    h.engine().topology_chunks()
}

#[test]
fn chunks_on_this_machine_are_bound_verified_and_persist() {
    let mut h = Handle::new(2).unwrap();
    assert!(
        summaries(&h)
            .iter()
            .all(|s| s.state == "empty" && s.buffers == 0)
    );
    run_dense(&mut h, 200_000, 1);
    let sums = summaries(&h);
    let used: Vec<&ChunkSummary> = sums.iter().filter(|s| s.buffers > 0).collect();
    assert!(!used.is_empty(), "{sums:?}");
    let this = h.topology().is_this_system();
    let total: u64 = used.iter().map(|s| s.bytes).sum();
    assert!(total >= 200_000 * 8, "dense values of k doubles: {sums:?}");
    for s in &used {
        let planned = h.placement().worker(s.worker).memory_node;
        assert_eq!(s.planned_node, planned);
        match planned {
            Some(n) if this && s.state != "ordinary" => {
                // Bound where planned, and the kernel says the pages are there.
                assert_eq!(s.requested_nodes, vec![n], "{s:?}");
                assert_eq!(s.bound_bytes, s.bytes - s.small_bytes, "{s:?}");
                if s.unverified_bytes == 0 {
                    assert_eq!(s.state, "verified", "{s:?}");
                    assert_eq!(s.verified_nodes, vec![n], "{s:?}");
                }
            }
            Some(_) => {
                // Binding not possible here (no OS support for it): ordinary memory, and
                // that reason is given (any other failure is a bug).
                assert_eq!(s.bound_bytes, 0, "{s:?}");
                assert!(
                    s.notes
                        .iter()
                        .any(|n| n.contains("does not support") || n.contains("does not describe")),
                    "{s:?}"
                );
            }
            None => assert_eq!(s.bound_bytes, 0, "{s:?}"),
        }
    }
    // The kernel's own view of the largest buffers' policy.
    let ledgers = h.ledgers();
    for (i, l) in ledgers.iter().enumerate() {
        for b in l.buffers() {
            if let BufPlacement::Bound(n) = b.placement {
                let start = b.addr.next_multiple_of(4096);
                if let Some(pol) = numa_policy_at(start) {
                    assert!(
                        pol == format!("prefer:{n}") || pol == format!("bind:{n}"),
                        "worker {i} {}: {pol}",
                        b.what
                    );
                }
            }
        }
    }
    // The same product again needs no more room: the same buffers are reused (chunks
    // persist on the handle; nothing is allocated again).
    run_dense(&mut h, 200_000, 1);
    let again = h.ledgers();
    let addrs = |ls: &[spgemm::platform::topo::chunk::ChunkLedger]| -> Vec<Vec<usize>> {
        ls.iter()
            .map(|l| {
                let mut v: Vec<usize> = l.buffers().iter().map(|b| b.addr).collect();
                v.sort_unstable();
                v
            })
            .collect()
    };
    // Work stealing may hand a worker its first rows only now; buffers it had stay.
    for (before, after) in addrs(&ledgers).iter().zip(addrs(&again).iter()) {
        assert!(
            before.iter().all(|x| after.contains(x)),
            "{before:?} {after:?}"
        );
    }
    // The report carries the chunks.
    let info = h.topology_info();
    eprintln!("topology info: {info}");
    assert!(info.contains("\"chunks\":[{\"worker\":0,"), "{info}");
    // Changing the HBM mode re-plans, so the chunks start afresh.
    h.set_hbm(HbmMode::Off).unwrap();
    assert!(summaries(&h).iter().all(|s| s.buffers == 0));
}

#[test]
fn unbound_workers_get_ordinary_first_touched_chunks() {
    let mut h = Handle::new(2).unwrap();
    h.set_binding(BindPolicy::None).unwrap();
    if h.placement().policy != BindPolicy::None {
        return; // SPGEMM_PROC_BIND set in the environment overrides the option.
    }
    run_dense(&mut h, 100_000, 3);
    for s in summaries(&h).iter().filter(|s| s.buffers > 0) {
        assert_eq!(s.planned_node, None);
        assert_eq!(s.bound_bytes, 0, "{s:?}");
        assert!(s.state == "ordinary", "{s:?}");
    }
}

/// KNL XML with the MCDRAM's capacity replaced by `mcdram` bytes.
fn knl_with_mcdram(mcdram: u64) -> Arc<Topo> {
    let text = xml_text("knl_flat_quadrant").replace(
        "subtype=\"MCDRAM\" local_memory=\"17179869184\"",
        &format!("subtype=\"MCDRAM\" local_memory=\"{mcdram}\""),
    );
    assert!(text.contains(&format!("local_memory=\"{mcdram}\"")));
    Arc::new(Topo::from_xml(&text).unwrap())
}

#[test]
fn knl_handle_plans_mcdram_chunks_and_falls_back_when_full() {
    // Planned, not executed: the topology is not this machine, so nothing is bound, and
    // the report says what was requested and why it did not happen.
    let mut h = Handle::with_topology(4, knl_with_mcdram(16 * GIB)).unwrap();
    run_dense(&mut h, 200_000, 4);
    let used: Vec<ChunkSummary> = summaries(&h)
        .into_iter()
        .filter(|s| s.buffers > 0)
        .collect();
    assert!(!used.is_empty());
    for s in &used {
        assert_eq!((s.planned_node, s.planned_hbm), (Some(1), true), "{s:?}");
        assert_eq!(s.bound_bytes, 0, "{s:?}");
        assert_eq!(s.state, "ordinary", "{s:?}");
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("does not describe this machine")),
            "{s:?}"
        );
        assert!(
            !s.notes.iter().any(|n| n.contains("high-bandwidth node")),
            "{s:?}"
        );
    }
    let ledgers = h.ledgers();
    let big: Vec<_> = ledgers
        .iter()
        .flat_map(|l| l.buffers())
        .filter(|b| !b.small)
        .collect();
    assert!(!big.is_empty());
    assert!(
        big.iter()
            .all(|b| matches!(b.placement, BufPlacement::Fallback { requested: 1, .. }))
    );

    // An MCDRAM of one page: every large buffer goes to DDR (node 0) with a note.
    let mut h = Handle::with_topology(4, knl_with_mcdram(4096)).unwrap();
    assert!(h.placement().workers.iter().all(|w| w.hbm));
    run_dense(&mut h, 200_000, 5);
    let ledgers = h.ledgers();
    let big: Vec<_> = ledgers
        .iter()
        .flat_map(|l| l.buffers())
        .filter(|b| !b.small)
        .collect();
    assert!(!big.is_empty());
    for b in big {
        assert!(
            matches!(b.placement, BufPlacement::Fallback { requested: 0, .. }),
            "{b:?}"
        );
        assert!(
            b.note
                .as_deref()
                .is_some_and(|n| n.contains("high-bandwidth node 1"))
        );
    }
    let info = h.topology_info();
    assert!(
        info.contains("high-bandwidth node 1 has 4096 bytes free"),
        "{info}"
    );
}

// ---------------------------------------------------------------------------------------
// The selector and high-bandwidth memory

fn features(k: usize, threads: usize, hbm: Option<spgemm::platform::topo::HbmBudget>) -> Features {
    Features {
        k,
        threads,
        hbm,
        flops: u64::MAX,
    }
}

#[test]
fn knl_hbm_budget_from_the_plan() {
    let t = Arc::new(xml("knl_flat_quadrant"));
    let mut h = Handle::with_topology(64, t).unwrap();
    let b = h.hbm_budget().expect("every worker's chunk on MCDRAM");
    assert_eq!(b.capacity, 16 * GIB);
    // The XML's bandwidth attributes: MCDRAM 420000, DDR 90000 MiB/s.
    assert!(
        (b.bandwidth_ratio - 420000.0 / 90000.0).abs() < 1e-9,
        "{b:?}"
    );
    h.set_hbm(HbmMode::Off).unwrap();
    assert_eq!(h.hbm_budget(), None);
    // SNC-2: two MCDRAM nodes (8 GiB each), local MCDRAM 210000 vs local DDR 45000.
    let mut h = Handle::with_topology(2, Arc::new(xml("knl_flat_snc2"))).unwrap();
    h.set_binding(BindPolicy::Spread).unwrap();
    if h.placement().policy == BindPolicy::Spread {
        let b = h.hbm_budget().unwrap();
        assert_eq!(b.capacity, 16 * GIB);
        assert!(
            (b.bandwidth_ratio - 210000.0 / 45000.0).abs() < 1e-9,
            "{b:?}"
        );
    }
    // No high-bandwidth memory: no budget.
    let h = Handle::with_topology(2, Arc::new(xml("two_socket_2numa"))).unwrap();
    assert_eq!(h.hbm_budget(), None);
    // This machine (no MCDRAM/HBM here).
    let h = Handle::new(2).unwrap();
    if !h.hbm_present() {
        assert_eq!(h.hbm_budget(), None);
    }
}

#[test]
fn dense_accumulator_weighed_against_hbm_instead_of_l3() {
    let caches = Caches {
        l1d: 32 << 10,
        l2: 1 << 20,
        l3: 32 << 20,
    };
    let threads = 64;
    let knl = Handle::with_topology(threads, Arc::new(xml("knl_flat_quadrant")))
        .unwrap()
        .hbm_budget()
        .unwrap();
    // Without HBM the budget is the L3 cache.
    assert_eq!(
        dense_numeric_budget(&caches, &features(1000, threads, None)),
        32 << 20
    );
    // With the KNL plan: the paper's 250,000 columns scaled by the bandwidth ratio, for
    // every thread's 4-byte column slots (src/cpu/dense.rs); below an eighth of the 16 GiB.
    let budget = dense_numeric_budget(&caches, &features(1000, threads, Some(knl)));
    let cols = (250_000.0 * knl.bandwidth_ratio) as usize;
    assert_eq!(budget, cols * 4 * threads);
    assert!(budget < (2 * GIB) as usize);
    // Capacity bounds it: a tiny HBM leaves the L3 rule in force.
    let tiny = spgemm::platform::topo::HbmBudget {
        capacity: 64 << 20,
        bandwidth_ratio: 4.0,
    };
    assert_eq!(
        dense_numeric_budget(&caches, &features(1000, threads, Some(tiny))),
        32 << 20
    );

    // The selector's choice for the numeric phase (select reads this machine's caches, so
    // pick k relative to them).
    let l3 = spgemm::platform::caches::caches().l3;
    let k_over_l3 = l3 / (4 * threads) + 1000;
    let k_hbm = cols - 10;
    if k_over_l3 < k_hbm {
        let num = select_numeric(Algorithm::Auto, &features(k_over_l3, threads, None)).unwrap();
        assert_eq!(num, Algorithm::LinkedList, "dense arrays beyond L3 on DDR");
        let num =
            select_numeric(Algorithm::Auto, &features(k_over_l3, threads, Some(knl))).unwrap();
        assert_eq!(num, Algorithm::Dense, "dense arrays in MCDRAM");
        let num = select_numeric(Algorithm::Auto, &features(k_hbm, threads, Some(knl))).unwrap();
        assert_eq!(num, Algorithm::Dense);
    }
    let k_too_big = cols * 2 + l3;
    let num = select_numeric(Algorithm::Auto, &features(k_too_big, threads, Some(knl))).unwrap();
    assert_eq!(num, Algorithm::LinkedList, "beyond the scaled cut-off");
    // Explicit choices are untouched.
    let num = select_numeric(Algorithm::LinearProbe, &features(10, threads, Some(knl))).unwrap();
    assert_eq!(num, Algorithm::LinearProbe);
}

#[test]
fn dense_numeric_needs_work_for_its_arrays() {
    let c = spgemm::platform::caches::caches();
    // Slot arrays of a few times the L2 (and within the L3): dense with enough
    // multiplications, a hash map for a product of a few rows (F10).
    let threads = 2;
    let k = (2 * c.l2 / (4 * threads)).min(c.l3 / (4 * threads));
    let bytes = (k * 4 * threads) as u64;
    let with = |flops| Features {
        k,
        threads,
        hbm: None,
        flops,
    };
    if bytes > c.l2 as u64 {
        let few = select_numeric(Algorithm::Auto, &with(2)).unwrap();
        assert_eq!(
            few,
            Algorithm::LinkedList,
            "2 multiplications, {bytes} bytes"
        );
    }
    let many = bytes.div_ceil(spgemm::cpu::select::DENSE_BYTES_PER_FLOP);
    let num = select_numeric(Algorithm::Auto, &with(many)).unwrap();
    assert_eq!(
        num,
        Algorithm::Dense,
        "{many} multiplications, {bytes} bytes"
    );
    // Within the L2 the arrays cost little: dense whatever the work.
    let small = Features {
        k: c.l2 / (4 * threads),
        threads,
        hbm: None,
        flops: 1,
    };
    assert_eq!(
        select_numeric(Algorithm::Auto, &small).unwrap(),
        Algorithm::Dense
    );
}
