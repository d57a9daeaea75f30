//! criterion benchmark of input validation and the structure digest (`CsrRef::validate`,
//! `structure_digest`, `validate_and_digest`) at 2 threads, the passes every symbolic and
//! numeric call makes with validation on. Matrices come from `SPGEMM_VALIDATE_MTX`
//! (colon-separated Matrix Market paths); without it a synthetic 7-diagonal banded matrix
//! of 500k rows stands in.
//!
//! `cargo bench --bench validate`

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spgemm::CsrRef;

#[allow(dead_code, unused_imports)]
#[path = "../src/bin/spgemm-bench/mtx.rs"]
mod mtx;

/// A 0-based banded matrix: row i holds columns i-3..=i+3 clipped to the matrix.
fn banded(n: usize) -> mtx::Csr {
    let (mut row_ptr, mut col) = (vec![0i32], Vec::new());
    for i in 0..n as i64 {
        for j in (i - 3).max(0)..=(i + 3).min(n as i64 - 1) {
            col.push(j as i32);
        }
        row_ptr.push(col.len() as i32);
    }
    let val = vec![1.0; col.len()];
    mtx::Csr {
        nrows: n,
        ncols: n,
        row_ptr,
        col,
        val,
    }
}

fn matrices() -> Vec<(String, mtx::Csr)> {
    match std::env::var("SPGEMM_VALIDATE_MTX") {
        Ok(list) => list
            .split(':')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let name = Path::new(p)
                    .file_stem()
                    .map_or(p.to_string(), |s| s.to_string_lossy().into_owned());
                (name, mtx::read_mtx(Path::new(p)).expect("readable matrix"))
            })
            .collect(),
        Err(_) => vec![("banded_500k_7_synthetic".to_string(), banded(500_000))],
    }
}

fn validation(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (name, m) in matrices() {
        let a = CsrRef::<i32, i32, f64>::new(m.nrows, m.ncols, 0, &m.row_ptr, &m.col, None)
            .expect("valid matrix");
        let mut g = c.benchmark_group(format!("validate/{name}"));
        g.throughput(Throughput::Elements((m.nnz() + m.nrows + 1) as u64));
        g.bench_function("validate_and_digest", |bch| {
            bch.iter(|| pool.install(|| black_box(a.validate_and_digest("A").unwrap())))
        });
        g.bench_function("structure_digest", |bch| {
            bch.iter(|| pool.install(|| black_box(a.structure_digest())))
        });
        g.bench_function("validate", |bch| {
            bch.iter(|| pool.install(|| black_box(a.validate("A")).unwrap()))
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = validation
}
criterion_main!(benches);
