//! criterion benchmarks of the CPU kernels through the public API: the SpGEMM phases per
//! algorithm (symbolic, numeric from scratch, numeric reuse; KKMEM and KKLP are the hash
//! accumulators) on a 3-D stencil product, and SpMM row- and column-major. These track the kernels
//! between commits; the comparison with MKL, GraphBLAS and KokkosKernels on the benchmark
//! set is `scripts/bench_spgemm.sh` (docs/PERFORMANCE.md), not this file.
//!
//! `cargo bench --bench kernels` (add a filter such as `-- spgemm/` to run one group).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use spgemm::OutputFormat;
use spgemm::ValueSliceMut;
use spgemm::types::{IndexType, ValueType};
use spgemm::{Algorithm, Handle};
use spgemm::{AnyCsr, IndexSlice, OffsetSlice, ValueSlice};
use spgemm::{DenseArgs, Layout, Op};
use spgemm::{IndexVec, ValueVec};

/// A 0-based CSR matrix with int32 indices and f64 values.
struct Matrix {
    n: usize,
    ptr: Vec<i32>,
    col: Vec<i32>,
    val: Vec<f64>,
}

impl Matrix {
    /// The 27-point (`wide`) or 7-point stencil on an s x s x s grid, natural ordering.
    fn stencil(s: usize, wide: bool) -> Matrix {
        let n = s * s * s;
        let (mut ptr, mut col, mut val) = (vec![0i32], Vec::new(), Vec::new());
        let at = |x: usize, y: usize, z: usize| (z * s + y) * s + x;
        for z in 0..s {
            for y in 0..s {
                for x in 0..s {
                    for dz in -1i64..=1 {
                        for dy in -1i64..=1 {
                            for dx in -1i64..=1 {
                                let off = dx.abs() + dy.abs() + dz.abs();
                                if !wide && off > 1 {
                                    continue;
                                }
                                let (nx, ny, nz) = (x as i64 + dx, y as i64 + dy, z as i64 + dz);
                                let inside = |v: i64| (0..s as i64).contains(&v);
                                if inside(nx) && inside(ny) && inside(nz) {
                                    let c = at(nx as usize, ny as usize, nz as usize);
                                    col.push(c as i32);
                                    val.push(if off == 0 { 6.0 } else { -1.0 / off as f64 });
                                }
                            }
                        }
                    }
                    ptr.push(col.len() as i32);
                }
            }
        }
        Matrix { n, ptr, col, val }
    }

    fn any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.n,
            ncols: self.n,
            base: 0,
            offsets: OffsetSlice::I32(&self.ptr),
            indices: IndexSlice::I32(&self.col),
            values: Some(ValueSlice::F64(&self.val)),
            value_type: ValueType::Float64,
        }
    }
}

const FORMAT: OutputFormat = OutputFormat {
    offsets: IndexType::Int32,
    indices: IndexType::Int32,
    base: 0,
};

fn handle(alg: Algorithm, sorted: bool) -> Handle {
    let mut h = Handle::new(0).expect("handle");
    h.options.algorithm = alg;
    h.options.sorted_output = sorted;
    h
}

/// SpGEMM phases per algorithm on the 27-point stencil squared (C has up to 125 entries
/// per row): the symbolic phase, symbolic + numeric from scratch, and numeric on a plan
/// that has already run once (the reuse path).
fn spgemm_phases(c: &mut Criterion) {
    let a = Matrix::stencil(20, true);
    let any = a.any();
    let mut g = c.benchmark_group("spgemm");
    let flops: u64 = (0..a.n)
        .map(|i| {
            (a.ptr[i]..a.ptr[i + 1])
                .map(|p| {
                    let k = a.col[p as usize] as usize;
                    (a.ptr[k + 1] - a.ptr[k]) as u64
                })
                .sum::<u64>()
        })
        .sum();
    g.throughput(Throughput::Elements(flops));
    let algs = [
        Algorithm::Auto,
        Algorithm::Dense,
        Algorithm::LinearProbe,
        Algorithm::LinkedList,
    ];
    for alg in algs {
        for sorted in [false, true] {
            let h = handle(alg, sorted);
            let id = format!(
                "{}/{}",
                alg.name(),
                if sorted { "sorted" } else { "unsorted" }
            );
            g.bench_function(BenchmarkId::new("symbolic", &id), |bch| {
                bch.iter(|| spgemm::symbolic(&h, &any, &any, FORMAT).expect("symbolic"))
            });
            g.bench_function(BenchmarkId::new("full", &id), |bch| {
                bch.iter(|| {
                    let plan = spgemm::symbolic(&h, &any, &any, FORMAT).expect("symbolic");
                    let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).expect("C");
                    let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).expect("C");
                    spgemm::numeric(&h, &plan, &any, &any, idx.as_mut(), Some(val.as_mut()))
                        .expect("numeric");
                    black_box(val)
                })
            });
            let plan = spgemm::symbolic(&h, &any, &any, FORMAT).expect("symbolic");
            let mut idx = IndexVec::zeroed(IndexType::Int32, plan.nnz()).expect("C");
            let mut val = ValueVec::zeroed(ValueType::Float64, plan.nnz()).expect("C");
            g.bench_function(BenchmarkId::new("reuse", &id), |bch| {
                bch.iter(|| {
                    spgemm::numeric(&h, &plan, &any, &any, idx.as_mut(), Some(val.as_mut()))
                        .expect("numeric")
                })
            });
        }
    }
    g.finish();
}

/// SpMM Y = A*X on the 7-point stencil for k = 1, 8 and 64, row- and column-major.
fn spmm_kernels(c: &mut Criterion) {
    let a = Matrix::stencil(40, false);
    let any = a.any();
    let h = handle(Algorithm::Auto, false);
    let mut g = c.benchmark_group("spmm");
    for k in [1usize, 8, 64] {
        g.throughput(Throughput::Elements((2 * a.col.len() * k) as u64));
        let x: Vec<f64> = (0..a.n * k).map(|t| (t % 7) as f64 - 3.0).collect();
        let mut y = vec![0.0f64; a.n * k];
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let ld = if layout == Layout::RowMajor { k } else { a.n };
            let name = if layout == Layout::RowMajor {
                "row"
            } else {
                "col"
            };
            g.bench_function(BenchmarkId::new(name, k), |bch| {
                bch.iter(|| {
                    let d = DenseArgs {
                        layout,
                        k,
                        x: ValueSlice::F64(&x),
                        ldx: ld,
                        y: ValueSliceMut::F64(&mut y),
                        ldy: ld,
                    };
                    spgemm::spmm(&h, Op::NonTranspose, 1.0, &any, None, 0.0, d).expect("spmm")
                })
            });
        }
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = kernels;
    config = config();
    targets = spgemm_phases, spmm_kernels
}
criterion_main!(kernels);
