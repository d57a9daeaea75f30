//! Hybrid CPU+GPU execution (GPU only): the CPU computes rows `0..r` of C with the CPU
//! backend while the GPU computes rows `r..m`; C is stitched by position, the CPU's rows
//! first. The split comes from `crate::hybrid` (flops or band rule, rates of earlier calls
//! on the handle); each numeric call measures both sides and records their rates.

use std::sync::Arc;
use std::time::Instant;

use super::device::Gpu;
use super::spgemm::{self, COut, GpuPlan, Timing, ValuesIn};
use crate::csr::{AnyCsr, CsrRef, FromAny, PairOp, dispatch_pair};
use crate::error::{Error, Result, Status, err};
use crate::handle::Handle;
use crate::hybrid::{self, Band, Rates, Split};
use crate::output::{IndexSliceMut, ValueSliceMut};
use crate::plan::{InputShape, OutputFormat, Plan};
use crate::types::{Idx, Scalar};

/// The two parts of a hybrid plan.
pub struct HybridPlan {
    /// Rows `0..r`: a CPU plan of the top rows of A times B.
    pub cpu: Plan,
    /// Rows `r..m` on the GPU (None when the split gave the CPU every row).
    pub gpu: Option<GpuPlan>,
    pub split_row: usize,
    /// Multiplications of each side (for the rates).
    pub cpu_flops: u64,
    pub gpu_flops: u64,
}

impl std::fmt::Debug for HybridPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridPlan")
            .field("split_row", &self.split_row)
            .field("cpu_flops", &self.cpu_flops)
            .field("gpu_flops", &self.gpu_flops)
            .field("gpu", &self.gpu)
            .finish()
    }
}

/// What the split needs: validation, digests, per-row multiplications, bands.
struct Prepare<'h> {
    handle: &'h Handle,
    format: OutputFormat,
}

struct Prepared {
    digests: Option<(u64, u64)>,
    prefix: Vec<u64>,
    bands: Option<(Band, Band)>,
}

impl PairOp for Prepare<'_> {
    type Out = Prepared;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<Prepared>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let h = self.handle;
        crate::exec::check_product(&a, &b, &self.format)?;
        super::limits::check_product(a.nrows(), a.ncols(), b.ncols(), a.nnz(), b.nnz())?;
        h.install(|| {
            let digests = if h.options.validate {
                // One pass over each matrix checks it and takes its digest.
                let da = a.validate_and_digest("A")?;
                Some((da, b.validate_and_digest("B")?))
            } else {
                None
            };
            let prefix = crate::cpu::partition::flop_profile(&a, &b, None)?.prefix;
            let bands = hybrid::band_of(&a).zip(hybrid::band_of(&b));
            Ok(Prepared {
                digests,
                prefix,
                bands,
            })
        })
    }
}

/// The GPU's rows of the product.
struct GpuRows<'g> {
    gpu: &'g Arc<Gpu>,
    rows: std::ops::Range<usize>,
    validated: bool,
    sorted: bool,
}

impl PairOp for GpuRows<'_> {
    type Out = spgemm::GpuPart;
    fn call<'a, O, I, V>(
        self,
        a: CsrRef<'a, O, I, V>,
        b: CsrRef<'a, O, I, V>,
    ) -> Result<spgemm::GpuPart>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        let timing = Timing::new(&self.gpu.main);
        spgemm::symbolic_rows(
            self.gpu,
            &a,
            &b,
            self.rows,
            self.validated,
            self.sorted,
            true,
            &timing,
        )
    }
}

fn joined<T>(r: std::thread::Result<Result<T>>) -> Result<T> {
    r.unwrap_or_else(|_| {
        Err(Error::new(
            Status::Internal,
            "the GPU part of a hybrid product panicked",
        ))
    })
}

/// Symbolic phase of a hybrid product (a usable GPU is present): split, then the CPU's
/// symbolic phase on its rows and the GPU's on the others at the same time.
pub fn symbolic(
    handle: &Handle,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    format: OutputFormat,
) -> Result<Plan> {
    let gpu = handle.gpu.get()?;
    let prep = dispatch_pair(a, b, Prepare { handle, format })?;
    let rates: Rates = *handle.hybrid_rates.lock();
    let split: Split = hybrid::plan_split(&prep.prefix, prep.bands, &rates);
    let (m, r) = (a.nrows, split.split_row);
    let a_top = hybrid::top_rows(a, r);
    let validated = prep.digests.is_some();
    let sorted = handle.options.sorted_output;
    let (cpu, part) = std::thread::scope(|sc| {
        let job = (r < m).then(|| {
            let gpu = &gpu;
            sc.spawn(move || {
                dispatch_pair(
                    a,
                    b,
                    GpuRows {
                        gpu,
                        rows: r..m,
                        validated,
                        sorted,
                    },
                )
            })
        });
        let cpu = crate::exec::symbolic_cpu(handle, &a_top, b, format);
        let part = job.map(|j| joined(j.join())).transpose();
        (cpu, part)
    });
    let (cpu, part) = (cpu?, part?);
    let cpu_nnz = cpu.nnz();
    let mut row_ptr = crate::alloc::try_filled(m + 1, 0usize, "row offsets of C")?;
    row_ptr[..=r].copy_from_slice(&cpu.row_ptr);
    if let Some(p) = &part {
        let start = row_ptr[r];
        for (i, &end) in p.row_ptr.iter().enumerate().skip(1) {
            row_ptr[r + i] = start + end;
        }
    }
    let nnz = row_ptr[m];
    let limit = format.offsets.max_usize() - format.base;
    if nnz > limit {
        return err(
            Status::IndexOverflow,
            format!(
                "C has {nnz} entries, more than {} row offsets can address ({limit})",
                format.offsets.name()
            ),
        );
    }
    debug_assert!(cpu_nnz <= nnz);
    let gpu_flops = part.as_ref().map_or(0, |p| p.flops);
    let gpu_max_nnz = part.as_ref().map_or(0, |p| p.max_row_nnz);
    let gpu_max_flops = part.as_ref().map_or(0, |p| p.max_row_flops);
    Ok(Plan {
        shape: InputShape {
            sig: a.sig(),
            a_nrows: m,
            a_ncols: a.ncols,
            b_ncols: b.ncols,
            a_nnz: a.nnz(),
            b_nnz: b.nnz(),
            a_base: a.base,
            b_base: b.base,
        },
        digests: prep.digests,
        format,
        row_ptr,
        chunks: Vec::new(),
        flops: cpu.flops + gpu_flops,
        max_row_flops: cpu.max_row_flops.max(gpu_max_flops),
        max_row_nnz: cpu.max_row_nnz.max(gpu_max_nnz),
        symbolic_alg: cpu.symbolic_alg,
        numeric_alg: cpu.numeric_alg,
        sorted: cpu.sorted,
        gpu: None,
        compressed: false,
        reuse: Default::default(),
        split: Some(split),
        hybrid: Some(Box::new(HybridPlan {
            cpu_flops: cpu.flops,
            cpu,
            gpu: part.map(|p| p.plan),
            split_row: r,
            gpu_flops,
        })),
        row_groups: None,
        prefetch: false,
    })
}

/// The GPU's rows of a numeric call (host arrays; checked by the caller).
struct GpuNumeric<'o> {
    g: &'o GpuPlan,
    /// With validation: the digest A's structure must have (the CPU part checks only its
    /// own rows; the GPU uses the plan's copy of the others, so a change there would give
    /// a wrong C silently).
    a_digest: Option<u64>,
    format: OutputFormat,
    cols: IndexSliceMut<'o>,
    vals: Option<ValueSliceMut<'o>>,
}

impl PairOp for GpuNumeric<'_> {
    type Out = f64;
    fn call<'a, O, I, V>(self, a: CsrRef<'a, O, I, V>, b: CsrRef<'a, O, I, V>) -> Result<f64>
    where
        O: Idx + FromAny<'a>,
        I: Idx + FromAny<'a>,
        V: Scalar + FromAny<'a>,
    {
        if let Some(d) = self.a_digest
            && a.structure_digest() != d
        {
            return err(
                Status::PlanMismatch,
                "A: structure differs from the one the plan was made for",
            );
        }
        let vals = match self.vals {
            None => None,
            Some(v) => Some(V::from_values_mut(v).ok_or_else(|| {
                Error::new(
                    Status::TypeMismatch,
                    "C: values differ from A's and B's type",
                )
            })?),
        };
        spgemm::numeric_part(
            self.g,
            self.format,
            ValuesIn::Host(a.values(), b.values()),
            COut::Host {
                cols: self.cols,
                vals,
            },
        )
    }
}

/// Numeric phase of a hybrid plan: both sides at once into their parts of C's arrays,
/// then their rates go to the handle for the next split (Heuristic II).
pub fn numeric(
    handle: &Handle,
    plan: &Plan,
    hp: &HybridPlan,
    a: &AnyCsr<'_>,
    b: &AnyCsr<'_>,
    cols: IndexSliceMut<'_>,
    vals: Option<ValueSliceMut<'_>>,
) -> Result<()> {
    // The whole product's shape and types; each part checks its own structure.
    let s = &plan.shape;
    if a.sig() != s.sig || b.sig() != s.sig {
        return err(
            Status::TypeMismatch,
            format!(
                "inputs have {} but the plan was made for {}",
                a.sig(),
                s.sig
            ),
        );
    }
    if (a.nrows, a.ncols, b.ncols, a.nnz(), b.nnz(), a.base, b.base)
        != (
            s.a_nrows, s.a_ncols, s.b_ncols, s.a_nnz, s.b_nnz, s.a_base, s.b_base,
        )
    {
        return err(
            Status::PlanMismatch,
            "A or B differs in shape, entry count or base from the plan's inputs",
        );
    }
    if cols.len() != plan.nnz()
        || vals.as_ref().is_some_and(|v| match v {
            ValueSliceMut::F32(x) => x.len() != plan.nnz(),
            ValueSliceMut::F64(x) => x.len() != plan.nnz(),
        })
    {
        return err(
            Status::InvalidValue,
            format!("C: the arrays must hold nnz(C) = {} entries", plan.nnz()),
        );
    }
    let r = hp.split_row;
    let cut = plan.row_ptr[r];
    let ((c_cpu, v_cpu), (c_gpu, v_gpu)) = hybrid::split_outputs(cols, vals, cut);
    let a_top = hybrid::top_rows(a, r);
    let format = plan.format;
    let a_digest = plan
        .digests
        .filter(|_| handle.options.validate)
        .map(|d| d.0);
    let (cpu, gpu) = std::thread::scope(|sc| {
        let job = hp.gpu.as_ref().map(|g| {
            sc.spawn(move || {
                let t = Instant::now();
                let copy = dispatch_pair(
                    a,
                    b,
                    GpuNumeric {
                        g,
                        a_digest,
                        format,
                        cols: c_gpu,
                        vals: v_gpu,
                    },
                )?;
                Ok((t.elapsed().as_secs_f64(), copy))
            })
        });
        let t = Instant::now();
        let cpu = crate::exec::numeric(handle, &hp.cpu, &a_top, b, c_cpu, v_cpu)
            .map(|_| t.elapsed().as_secs_f64());
        let gpu = job.map(|j| joined(j.join())).transpose();
        (cpu, gpu)
    });
    let (cpu_s, gpu_s) = (cpu?, gpu?);
    let mut rates = handle.hybrid_rates.lock();
    Rates::record(&mut rates.cpu, hp.cpu_flops as f64, cpu_s);
    if let Some((total, copy)) = gpu_s {
        Rates::record(&mut rates.gpu, hp.gpu_flops as f64, total);
        Rates::record(&mut rates.gpu_compute, hp.gpu_flops as f64, total - copy);
        Rates::record(&mut rates.copy, (plan.nnz() - cut) as f64, copy);
    }
    Ok(())
}
