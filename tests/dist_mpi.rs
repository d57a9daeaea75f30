//! The distributed checks under mpirun: `spgemm-dist-check` at 1, 2, 3 and 4 ranks,
//! and at 4 ranks forced onto a 2 x 2 grid (SpMM), and with `--spgemm` at 1 to 4 ranks
//! (SpGEMM and R*A*P). Each run must exit 0 and report no failure.
//! The MPI environment (run-as-root, oversubscription, Open MPI components that work in a
//! container) is the one `scripts/dist_check.sh` documents.
#![cfg(feature = "mpi")]

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One mpirun at a time: the machine has few cores and the runs oversubscribe them.
static SERIAL: Mutex<()> = Mutex::new(());

/// Open MPI settings for containers, unless the caller set them: no UCX one-sided
/// component (it is picked first and fails without a UCX network), no single-copy
/// shared-memory mechanism (CMA needs ptrace rights containers often lack).
const DEFAULT_ENV: [(&str, &str); 2] = [
    ("OMPI_MCA_osc", "^ucx"),
    ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
];

fn run(np: usize, extra: &[&str]) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = env!("CARGO_BIN_EXE_spgemm-dist-check");
    let mut c = Command::new("mpirun");
    c.arg("--oversubscribe");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.arg("--allow-run-as-root");
    }
    c.args(["-np", &np.to_string(), bin]).args(extra);
    for (k, v) in DEFAULT_ENV {
        if std::env::var_os(k).is_none() {
            c.env(k, v);
        }
    }
    let out_path = std::env::temp_dir().join(format!(
        "spgemm-dist-check-{}-{np}{}.log",
        std::process::id(),
        extra.join("")
    ));
    let log = std::fs::File::create(&out_path).expect("log file");
    c.stdout(Stdio::from(log.try_clone().expect("log file")))
        .stderr(Stdio::from(log));
    let mut child = c.spawn().expect("mpirun (install openmpi-bin)");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for mpirun") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mpirun -np {np} {extra:?} still running after 600 s (a hang); log: {}",
                out_path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    println!("mpirun -np {np} {extra:?}:\n{text}");
    let summary = text
        .lines()
        .find(|l| l.ends_with(" failed") && l.contains(" passed, "))
        .unwrap_or_else(|| panic!("no summary line in the output of -np {np}:\n{text}"));
    assert!(
        status.success() && summary.ends_with(" 0 failed"),
        "-np {np} {extra:?}: {summary} (exit {status})"
    );
    let passed: usize = summary
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed > 0, "-np {np}: nothing ran");
}

#[test]
fn one_rank() {
    run(1, &[]);
}

#[test]
fn two_ranks() {
    run(2, &[]);
}

#[test]
fn three_ranks() {
    run(3, &[]);
}

#[test]
fn four_ranks() {
    run(4, &[]);
}

#[test]
fn four_ranks_on_a_2x2_grid() {
    run(4, &["--grid", "2x2"]);
}

#[test]
fn spgemm_one_rank() {
    run(1, &["--spgemm"]);
}

#[test]
fn spgemm_two_ranks() {
    run(2, &["--spgemm"]);
}

#[test]
fn spgemm_three_ranks() {
    run(3, &["--spgemm"]);
}

#[test]
fn spgemm_four_ranks() {
    run(4, &["--spgemm"]);
}
