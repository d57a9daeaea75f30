//! Hybrid CPU+GPU execution (seed 001): the CPU computes rows `0..r` of C with the CPU
//! backend while the GPU computes rows `r..m`; C is stitched by position, the CPU's rows
//! first. The split comes from [`crate::common::split`] (flops or band rule, rates of
//! earlier calls on the handle); each numeric call measures both sides and records their
//! rates. The dispatcher composes the two backends here; neither knows of the other.

use std::sync::Arc;
use std::time::Instant;

use super::engine::Engine;
use crate::common::check::check_nnz;
use crate::common::csr::CsrRef;
use crate::common::options::OutputFormat;
use crate::common::slices::IndexSliceMut;
use crate::common::split::{self, Rates, Split};
use crate::cpu::spgemm::CpuPlan;
use crate::cuda::{self, COut, Gpu, GpuPlan, ValuesIn};
use crate::error::{Error, Result, Status};
use crate::platform::alloc::try_filled;
use crate::types::{Idx, Scalar, ValueType};

/// Where a hybrid symbolic phase's time went (seconds): the parts the split needs before
/// either side starts, the two sides (at the same time: `sides` is their wall time) and C's
/// row offsets stitched. In the plan info, so that a run on a GPU machine shows what the
/// hybrid's own set-up costs beside the sides' symbolic phases.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SetupTimes {
    pub profile: f64,
    pub bands: f64,
    pub sides: f64,
    pub cpu: f64,
    pub gpu: Option<f64>,
    pub stitch: f64,
}

impl SetupTimes {
    /// One line for the plan info.
    pub fn describe(&self) -> String {
        let ms = |s: f64| s * 1e3;
        let gpu = self
            .gpu
            .map_or("no rows".to_string(), |g| format!("{:.2} ms", ms(g)));
        format!(
            "hybrid symbolic set-up: flop profile {:.2} ms, bands {:.2} ms, both sides {:.2} ms \
             (CPU symbolic {:.2} ms, GPU symbolic {gpu}), row offsets stitched {:.2} ms",
            ms(self.profile),
            ms(self.bands),
            ms(self.sides),
            ms(self.cpu),
            ms(self.stitch)
        )
    }
}

/// The two parts of a hybrid plan.
pub(crate) struct HybridPlan {
    /// Rows `0..r`: a CPU plan of the top rows of A times B.
    pub cpu: CpuPlan,
    /// Rows `r..m` on the GPU (None when the split gave the CPU every row).
    pub gpu: Option<GpuPlan>,
    pub split_row: usize,
    /// C's row offsets, stitched (0-based, m + 1).
    pub row_ptr: Vec<usize>,
    /// Multiplications of each side (for the rates).
    pub cpu_flops: u64,
    pub gpu_flops: u64,
    pub setup: SetupTimes,
}

impl std::fmt::Debug for HybridPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridPlan")
            .field("split_row", &self.split_row)
            .field("cpu_flops", &self.cpu_flops)
            .field("gpu_flops", &self.gpu_flops)
            .field("gpu", &self.gpu)
            .field("setup", &self.setup)
            .finish()
    }
}

impl HybridPlan {
    pub fn nnz(&self) -> usize {
        self.row_ptr.last().copied().unwrap_or(0)
    }
}

/// A panic on the GPU side's thread becomes an error.
fn joined<T>(r: std::thread::Result<Result<T>>) -> Result<T> {
    r.unwrap_or_else(|p| {
        Err(Error::new(
            Status::Internal,
            format!(
                "the GPU part of a hybrid product panicked: {}",
                crate::panics::message(p.as_ref())
            ),
        ))
    })
}

/// The thread that runs the GPU's side (named so that its panics stay quiet).
fn gpu_side<'s, 'e, T: Send + 's>(
    sc: &'s std::thread::Scope<'s, 'e>,
    f: impl FnOnce() -> Result<T> + Send + 's,
) -> Result<std::thread::ScopedJoinHandle<'s, Result<T>>> {
    std::thread::Builder::new()
        .name(format!("{}hybrid-gpu", crate::panics::THREAD_PREFIX))
        .spawn_scoped(sc, f)
        .map_err(|e| {
            Error::new(
                Status::AllocFailed,
                format!("cannot start the GPU side's thread: {e}"),
            )
        })
}

/// Symbolic phase of a hybrid product (a usable GPU; A and B checked, and validated when
/// `validated`): split, then the CPU's symbolic phase on its rows and the GPU's on the
/// others at the same time.
pub(crate) fn symbolic<O: Idx, I: Idx, V: Scalar>(
    e: &Engine,
    ctx: &crate::cpu::Ctx<'_>,
    gpu: &Arc<Gpu>,
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    validated: bool,
    (format, vt): (OutputFormat, ValueType),
) -> Result<(HybridPlan, Split)> {
    let mut setup = SetupTimes::default();
    let t = Instant::now();
    let prefix = e
        .install(|| crate::cpu::partition::flop_profile(a, b, None))??
        .prefix;
    setup.profile = t.elapsed().as_secs_f64();
    let rates: Rates = *e.rates.lock();
    // B's band only when A has one, and neither without the rates the band rule needs.
    let t = Instant::now();
    let bands = rates
        .band_rule_ready()
        .then(|| split::band_of(a).and_then(|ba| split::band_of(b).map(|bb| (ba, bb))))
        .flatten();
    setup.bands = t.elapsed().as_secs_f64();
    let split: Split = split::plan_split(&prefix, bands, &rates);
    let (m, r) = (a.nrows(), split.split_row);
    let a_top = a.top_rows(r)?;
    let flags = (validated, ctx.sorted, true);
    let t = Instant::now();
    let (cpu, part) = std::thread::scope(|sc| -> Result<_> {
        let job = if r < m {
            Some(gpu_side(sc, || {
                let t = Instant::now();
                let part = cuda::symbolic_host(gpu, a, b, r..m, vt, flags);
                Ok((part?, t.elapsed().as_secs_f64()))
            })?)
        } else {
            None
        };
        let t = Instant::now();
        let cpu = crate::cpu::spgemm::symbolic(ctx, &a_top, b, &format, vt.size());
        setup.cpu = t.elapsed().as_secs_f64();
        let part = job.map(|j| joined(j.join())).transpose();
        Ok((cpu, part))
    })?;
    setup.sides = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (cpu, part) = (cpu?, part?);
    setup.gpu = part.as_ref().map(|p| p.1);
    let part = part.map(|p| cuda::into_plan(p.0));
    let mut row_ptr = try_filled(m + 1, 0usize, "row offsets of C")?;
    row_ptr[..=r].copy_from_slice(&cpu.row_ptr);
    if let Some((_, info)) = &part {
        let start = row_ptr[r];
        for (i, &end) in info.row_ptr.iter().enumerate().skip(1) {
            row_ptr[r + i] = start + end;
        }
    }
    check_nnz(&format, row_ptr[m])?;
    setup.stitch = t.elapsed().as_secs_f64();
    let gpu_flops = part.as_ref().map_or(0, |(_, i)| i.flops);
    Ok((
        HybridPlan {
            cpu_flops: cpu.flops,
            cpu,
            gpu: part.map(|(g, _)| g),
            split_row: r,
            row_ptr,
            gpu_flops,
            setup,
        },
        split,
    ))
}

/// Numeric phase of a hybrid plan (inputs checked against the plan, C's arrays sized):
/// both sides at once into their parts of C's arrays, then their rates go to the handle
/// for the next split (Heuristic II).
pub(crate) fn numeric<O: Idx, I: Idx, V: Scalar>(
    e: &Engine,
    ctx: &crate::cpu::Ctx<'_>,
    (hp, format, reproducible): (&HybridPlan, OutputFormat, bool),
    (a, b): (&CsrRef<'_, O, I, V>, &CsrRef<'_, O, I, V>),
    trusted: bool,
    cols: IndexSliceMut<'_>,
    vals: Option<&mut [V]>,
) -> Result<()> {
    let r = hp.split_row;
    let cut = hp.row_ptr[r];
    let (c_cpu, c_gpu) = cols.split_at(cut);
    let (v_cpu, v_gpu) = match vals {
        Some(v) => {
            let (x, y) = v.split_at_mut(cut);
            (Some(x), Some(y))
        }
        None => (None, None),
    };
    let a_top = a.top_rows(r)?;
    let (cpu, gpu) = std::thread::scope(|sc| -> Result<_> {
        let job = match hp.gpu.as_ref() {
            Some(g) => Some(gpu_side(sc, move || {
                let t = Instant::now();
                let copy = cuda::numeric(
                    g,
                    format,
                    ValuesIn::Host(a.values(), b.values()),
                    COut::Host {
                        cols: c_gpu,
                        vals: v_gpu,
                    },
                    reproducible,
                )?;
                Ok((t.elapsed().as_secs_f64(), copy))
            })?),
            None => None,
        };
        let t = Instant::now();
        let cpu = crate::cpu::spgemm::numeric(
            ctx,
            &hp.cpu,
            &a_top,
            b,
            (format.base, trusted),
            c_cpu,
            v_cpu,
        )
        .map(|_| t.elapsed().as_secs_f64());
        let gpu = job.map(|j| joined(j.join())).transpose();
        Ok((cpu, gpu))
    })?;
    let (cpu_s, gpu_s) = (cpu?, gpu?);
    let mut rates = e.rates.lock();
    Rates::record(&mut rates.cpu, hp.cpu_flops as f64, cpu_s);
    if let Some((total, copy)) = gpu_s {
        Rates::record(&mut rates.gpu, hp.gpu_flops as f64, total);
        Rates::record(&mut rates.gpu_compute, hp.gpu_flops as f64, total - copy);
        Rates::record(&mut rates.copy, (hp.nnz() - cut) as f64, copy);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_times_in_the_plan_info() {
        let t = SetupTimes {
            profile: 0.0012,
            bands: 0.0,
            sides: 0.0101,
            cpu: 0.0093,
            gpu: Some(0.0071),
            stitch: 0.0004,
        };
        assert_eq!(
            t.describe(),
            "hybrid symbolic set-up: flop profile 1.20 ms, bands 0.00 ms, both sides 10.10 ms \
             (CPU symbolic 9.30 ms, GPU symbolic 7.10 ms), row offsets stitched 0.40 ms"
        );
        let all_cpu = SetupTimes { gpu: None, ..t };
        assert!(all_cpu.describe().contains("GPU symbolic no rows"));
    }
}
