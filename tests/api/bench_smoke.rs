//! Smoke test of the benchmark program (scripts/bench_spgemm.sh depends on it): it must
//! read Matrix Market files, run every algorithm, verify its own result and print one
//! JSON line per algorithm with the schema's fields. Timings are not looked at.

use std::path::PathBuf;
use std::process::Command;

const FIELDS: &[&str] = &[
    "lib",
    "alg",
    "A",
    "B",
    "threads",
    "m",
    "n",
    "k",
    "nnzA",
    "nnzB",
    "nnzC",
    "flops",
    "symbolic_s",
    "numeric_s",
    "total_s",
    "reuse_s",
    "gflops",
    "sorted_output",
    "sumC",
    "sumabsC",
    "peak_rss_mb",
    "alg_symbolic",
    "alg_numeric",
    "check",
];

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("spgemm-bench-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 60 x 40 general matrix with duplicates and an empty row, a 40 x 50 symmetric-stored
/// pattern-free one, written deterministically.
fn write_inputs(dir: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    let mut a = String::from("%%MatrixMarket matrix coordinate real general\n% smoke\n");
    let mut ents = Vec::new();
    let mut x = 12345u64;
    let mut rnd = |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for _ in 0..300 {
        let i = rnd(60) + 1;
        if i == 7 {
            continue; // row 7 stays empty
        }
        ents.push(format!("{i} {} {}.5", rnd(40) + 1, rnd(9) as i64 - 4));
    }
    ents.push("1 1 2.0".into());
    ents.push("1 1 -0.5".into()); // duplicate: summed
    a.push_str(&format!("60 40 {}\n{}\n", ents.len(), ents.join("\n")));
    let mut b = String::from("%%MatrixMarket matrix coordinate integer general\n40 50 200\n");
    for t in 0..200 {
        b.push_str(&format!("{} {} {}\n", rnd(40) + 1, rnd(50) + 1, t % 7 - 3));
    }
    let mut s = String::from("%%MatrixMarket matrix coordinate real symmetric\n30 30 80\n");
    for _ in 0..80 {
        let i = rnd(30) + 1;
        let j = rnd(i) + 1;
        s.push_str(&format!("{i} {j} {}\n", rnd(5) as f64 + 0.25));
    }
    let (pa, pb, ps) = (dir.join("a.mtx"), dir.join("b.mtx"), dir.join("s.mtx"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    std::fs::write(&ps, s).unwrap();
    (pa, pb, ps)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spgemm-bench"))
        .args(args)
        .output()
        .expect("spgemm-bench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let s = &line[line
        .find(&pat)
        .unwrap_or_else(|| panic!("{key} missing in {line}"))
        + pat.len()..];
    let end = match s.strip_prefix('"') {
        Some(rest) => rest.find('"').unwrap() + 2,
        None => s.find([',', '}']).unwrap(),
    };
    &s[..end]
}

#[test]
fn bench_runs_checks_and_prints_schema_lines() {
    let dir = tmpdir();
    let (pa, pb, ps) = write_inputs(&dir);
    let (pa, pb, ps) = (
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        ps.to_str().unwrap(),
    );
    let (rc, names, _) = run(&["list-algs"]);
    assert_eq!(rc, 0);
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.first(), Some(&"auto"));
    for (a, b, m, n) in [(pa, pb, "60", "50"), (ps, "A", "30", "30")] {
        for sorted in ["0", "1"] {
            let (rc, out, err) = run(&[
                "spgemm",
                "--a",
                a,
                "--b",
                b,
                "--alg",
                "all",
                "--threads",
                "2",
                "--reps",
                "2",
                "--sorted",
                sorted,
            ]);
            assert_eq!(rc, 0, "stderr: {err}\nstdout: {out}");
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), names.len(), "{out}");
            for (line, alg) in lines.iter().zip(&names) {
                for f in FIELDS {
                    field(line, f);
                }
                assert_eq!(field(line, "alg"), format!("\"{alg}\""));
                assert_eq!(field(line, "check"), "\"ok\"", "{line}");
                assert_eq!(field(line, "m"), m);
                assert_eq!(field(line, "n"), n);
                if sorted == "1" {
                    assert_eq!(field(line, "sorted_output"), "true");
                }
                assert!(field(line, "checked").contains("reuse"), "{line}");
            }
            // Every algorithm computes the same C.
            let nnz: Vec<&str> = lines.iter().map(|l| field(l, "nnzC")).collect();
            assert!(nnz.iter().all(|x| *x == nnz[0]), "{nnz:?}");
        }
    }
}

#[test]
fn bench_rejects_bad_input_with_a_message() {
    let dir = tmpdir();
    let bad = dir.join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n",
    )
    .unwrap();
    let (rc, out, err) = run(&["spgemm", "--a", bad.to_str().unwrap(), "--b", "A"]);
    assert_ne!(rc, 0);
    assert!(out.is_empty());
    assert!(err.contains("entry 1") && err.contains("bad.mtx"), "{err}");
    let (rc, _, err) = run(&[
        "spgemm",
        "--a",
        bad.to_str().unwrap(),
        "--b",
        "A",
        "--alg",
        "nosuch",
    ]);
    assert_ne!(rc, 0);
    assert!(err.contains("nosuch") && err.contains("auto"), "{err}");
}

/// `gen:NAME` inputs: generated in memory, named in the JSON lines, checked like files;
/// `--algo`, `--unsorted` and `--sorted` without a value are accepted; `gen OUTDIR`
/// writes a Matrix Market file that reads back as the same matrix.
#[test]
fn bench_generates_inputs() {
    for (a, b, sorted, name_b, m, n) in [
        (
            "gen:lap3d_7pt_6",
            "A",
            "--unsorted",
            "lap3d_7pt_6",
            "216",
            "216",
        ),
        (
            "gen:elast3d_p1_3",
            "A",
            "--sorted",
            "elast3d_p1_3",
            "81",
            "81",
        ),
        (
            "gen:lap3d_27pt_4",
            "gen:lap3d_7pt_4",
            "--sorted",
            "lap3d_7pt_4",
            "64",
            "64",
        ),
    ] {
        let (rc, out, err) = run(&[
            "spgemm",
            "--a",
            a,
            "--b",
            b,
            "--algo",
            "all",
            "--threads",
            "2",
            "--reps",
            "1",
            sorted,
        ]);
        assert_eq!(rc, 0, "stderr: {err}\nstdout: {out}");
        assert!(!out.is_empty());
        for line in out.lines() {
            for f in FIELDS {
                field(line, f);
            }
            assert_eq!(field(line, "check"), "\"ok\"", "{line}");
            assert_eq!(field(line, "A"), format!("\"{}\"", &a[4..]));
            assert_eq!(field(line, "B"), format!("\"{name_b}\""));
            assert_eq!(field(line, "m"), m);
            assert_eq!(field(line, "n"), n);
            let want = if sorted == "--sorted" {
                "true"
            } else {
                "false"
            };
            assert_eq!(field(line, "sort_requested"), want, "{line}");
        }
    }
    // 7-point Laplacian on 6^3: nnz = 7 N^3 - 6 N^2.
    let (_, out, _) = run(&[
        "spgemm",
        "--a",
        "gen:lap3d_7pt_6",
        "--b",
        "A",
        "--reps",
        "1",
    ]);
    assert_eq!(field(out.lines().next().unwrap(), "nnzA"), "1296");

    let dir = tmpdir().join("gen");
    let (rc, _, err) = run(&["gen", dir.to_str().unwrap(), "--only", "lap3d_7pt_5"]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(dir.join("lap3d_7pt_5.mtx")).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real general\n"));
    assert!(text.contains("\n125 125 725\n"), "{}", &text[..200]);
    let products = std::fs::read_to_string(dir.join("products.txt")).unwrap();
    assert_eq!(products, "lap3d_7pt_5^2\tlap3d_7pt_5\tA\n");
    let file = dir.join("lap3d_7pt_5.mtx");
    let (rc, out, err) = run(&[
        "spgemm",
        "--a",
        file.to_str().unwrap(),
        "--b",
        "A",
        "--reps",
        "1",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (_, gen_out, _) = run(&[
        "spgemm",
        "--a",
        "gen:lap3d_7pt_5",
        "--b",
        "A",
        "--reps",
        "1",
    ]);
    for f in ["nnzA", "nnzC", "sumC", "sumabsC"] {
        assert_eq!(field(&out, f), field(&gen_out, f), "{f}");
    }

    let (rc, out, err) = run(&["spgemm", "--a", "gen:nosuch_3", "--b", "A"]);
    assert_ne!(rc, 0);
    assert!(out.is_empty());
    assert!(
        err.contains("nosuch_3") && err.contains("lap3d_7pt_N"),
        "{err}"
    );
}
