//! Every CUDA kernel compiles through NVRTC for sm_80 and sm_90 (as the library compiles
//! it at run time) and assembles with ptxas; no GPU needed. Each kernel's registers,
//! shared memory and spills from `ptxas -v` go to target/cuda-kernels.txt, and a
//! local-memory spill in a hash kernel fails the test.
//!
//! NVRTC and ptxas come from `scripts/cuda_tools.sh` (PyPI wheels in .venv-cuda); `make
//! check` sets LD_LIBRARY_PATH, SPGEMM_PTXAS and SPGEMM_REQUIRE_NVRTC=1. Without them the
//! test reports itself skipped by name.

use std::path::PathBuf;
use std::process::Command;

use spgemm::cuda::{Source, compile_ptx_for, nvrtc_present};
use spgemm::types::ValueType;

const ARCHS: [&str; 2] = ["sm_80", "sm_90"];
/// Kernels that must not spill (their inner loops are the hash-table probes).
const NO_SPILL: [&str; 9] = [
    "sym_shared",
    "sym_global",
    "num_shared",
    "num_global",
    "num_dense",
    "sym_split",
    "num_split_acc",
    "num_split_out",
    "split_dense_acc",
];

#[derive(Debug, Default, Clone)]
struct Usage {
    kernel: String,
    registers: u32,
    smem: u32,
    stack: u32,
    spill_stores: u32,
    spill_loads: u32,
}

fn number_before(line: &str, unit: &str) -> Option<u32> {
    let i = line.find(unit)?;
    line[..i].split_whitespace().last()?.parse().ok()
}

/// Parses `ptxas -v` output ("Compiling entry function 'f'", "N bytes stack frame, N bytes
/// spill stores, N bytes spill loads", "Used N registers, ... N bytes smem").
fn parse_ptxas(text: &str) -> Vec<Usage> {
    let mut out: Vec<Usage> = Vec::new();
    for line in text.lines() {
        if let Some(i) = line.find("Compiling entry function '") {
            let rest = &line[i + "Compiling entry function '".len()..];
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push(Usage {
                kernel: name,
                ..Default::default()
            });
        } else if let Some(u) = out.last_mut() {
            if line.contains("spill stores") {
                u.stack = number_before(line, "bytes stack frame").unwrap_or(0);
                u.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                u.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            }
            if line.contains("Used") && line.contains("registers") {
                u.registers = number_before(line, "registers").unwrap_or(0);
                u.smem = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

fn ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("SPGEMM_PTXAS") {
        return Some(PathBuf::from(p));
    }
    let ok = Command::new("ptxas").arg("--version").output().is_ok();
    ok.then(|| PathBuf::from("ptxas"))
}

#[test]
fn ptxas_output_is_parsed() {
    let text = "ptxas info    : Compiling entry function 'num_shared' for 'sm_90'\n\
ptxas info    : Function properties for num_shared\n\
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
ptxas info    : Used 40 registers, 1024 bytes smem, 472 bytes cmem[0]\n";
    let u = parse_ptxas(text);
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].kernel, "num_shared");
    assert_eq!(
        (
            u[0].registers,
            u[0].smem,
            u[0].stack,
            u[0].spill_stores,
            u[0].spill_loads
        ),
        (40, 1024, 16, 8, 4)
    );
}

#[test]
fn kernels_compile_with_nvrtc_and_assemble_with_ptxas() {
    let name = "kernels_compile_with_nvrtc_and_assemble_with_ptxas";
    let required = std::env::var("SPGEMM_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    if !nvrtc_present() {
        assert!(
            !required,
            "{name}: SPGEMM_REQUIRE_NVRTC=1 but libnvrtc was not found"
        );
        eprintln!("SKIPPED {name}: libnvrtc not found (eval \"$(scripts/cuda_tools.sh)\")");
        return;
    }
    let ptxas = ptxas();
    assert!(
        ptxas.is_some() || !required,
        "{name}: SPGEMM_REQUIRE_NVRTC=1 but ptxas was not found (SPGEMM_PTXAS)"
    );
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tmp/cuda-kernels");
    std::fs::create_dir_all(&dir).unwrap();
    let mut report =
        String::from("# kernel arch value registers smem stack spill_stores spill_loads\n");
    let mut spills = Vec::new();
    let mut kernels_seen = 0;
    for arch in ARCHS {
        for (src, sname) in [(Source::Spgemm, "spgemm"), (Source::Spmm, "spmm")] {
            for (vt, vname) in [(ValueType::Float32, "f32"), (ValueType::Float64, "f64")] {
                let ptx = compile_ptx_for(src, vt, arch)
                    .unwrap_or_else(|e| panic!("{sname} {vname} {arch}: {e}"));
                assert!(
                    ptx.contains(".entry"),
                    "{sname} {vname} {arch}: no kernels in PTX"
                );
                let file = dir.join(format!("{sname}_{vname}_{arch}.ptx"));
                std::fs::write(&file, &ptx).unwrap();
                let Some(px) = &ptxas else { continue };
                let out = Command::new(px)
                    .args(["-v", &format!("-arch={arch}"), "-o", "/dev/null"])
                    .arg(&file)
                    .output()
                    .expect("run ptxas");
                let text = String::from_utf8_lossy(&out.stderr).to_string()
                    + &String::from_utf8_lossy(&out.stdout);
                assert!(out.status.success(), "ptxas {}: {text}", file.display());
                for u in parse_ptxas(&text) {
                    kernels_seen += 1;
                    report += &format!(
                        "{} {arch} {vname} {} {} {} {} {}\n",
                        u.kernel, u.registers, u.smem, u.stack, u.spill_stores, u.spill_loads
                    );
                    if NO_SPILL.contains(&u.kernel.as_str())
                        && (u.spill_stores > 0 || u.spill_loads > 0)
                    {
                        spills.push(format!("{} {arch} {vname}", u.kernel));
                    }
                }
            }
        }
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/cuda-kernels.txt");
    std::fs::write(&path, &report).unwrap();
    eprintln!("{report}");
    if ptxas.is_none() {
        eprintln!("SKIPPED ptxas part of {name}: ptxas not found (SPGEMM_PTXAS)");
        return;
    }
    // 29 kernels (27 in spgemm.cu, 2 in spmm.cu) x 2 value types x 2 architectures.
    assert_eq!(
        kernels_seen, 116,
        "ptxas reported {kernels_seen} kernels:\n{report}"
    );
    assert!(
        spills.is_empty(),
        "local-memory spills in hash kernels: {spills:?}\n{report}"
    );
}

/// Every launch of a named kernel in `src/cuda/spgemm.rs` passes as many arguments as the
/// kernel declares: a missing argument compiles, and the driver then reads a parameter
/// from beyond the caller's list (it crashed a numeric call on the H200, 2026-11-27).
#[test]
fn launches_pass_every_kernel_argument() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let cu = read("kernels/spgemm.cu");
    let mut params = std::collections::HashMap::new();
    for piece in cu.split("extern \"C\" __global__ void ").skip(1) {
        let open = piece.find('(').unwrap();
        let close = open + piece[open..].find(')').unwrap();
        let n = piece[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .count();
        params.insert(piece[..open].trim().to_string(), n);
    }
    let rs = read("src/cuda/spgemm.rs");
    let mut checked = 0;
    for piece in rs.split("launch_builder(").skip(1) {
        // Launches of a kernel named by a literal: `md.f("name")?)`.
        let Some(name) = piece
            .split_once(')')
            .and_then(|(head, _)| head.split_once(".f(\""))
            .map(|(_, n)| n.trim_end_matches('"'))
        else {
            continue;
        };
        let end = piece.find(".launch(").expect("a launch");
        let args = piece[..end].matches(".arg(").count();
        assert_eq!(
            Some(&args),
            params.get(name),
            "kernel {name}: {args} arguments passed"
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} launches found");
}
