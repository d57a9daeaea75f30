//! Hybrid CPU+GPU SpGEMM: how many rows of A the CPU takes (seed 001, sections 4.2 and
//! 4.3). The CPU computes rows `0..r` of C and the GPU rows `r..m`, at the same time; C
//! is stitched by position (the CPU's rows come first in C's arrays). Pure code, tested
//! on every machine; the execution is in the dispatcher (`exec::hybrid`).
//!
//! - Row split by flops (4.2): r is the row where the prefix of per-row multiplications
//!   reaches the CPU's share t of all multiplications. Heuristic II takes
//!   t = t_g / (t_c + t_g) from the instance's CPU and GPU times; with rates in
//!   multiplications per second measured on earlier calls of the same handle
//!   (t_c = F / rate_cpu, t_g = F / rate_gpu) that is t = rate_cpu / (rate_cpu + rate_gpu),
//!   the share that makes both sides' predicted times equal. Before any measurement,
//!   Heuristic I: t = 25% (the paper's average GPU speed-up of about 3).
//! - Band split (4.3): when A and B are band matrices with A_d and B_d diagonals, each row
//!   costs the same, CPU time = alpha R, GPU time = beta R, copy of the GPU's part of C =
//!   gamma S with R = A_r A_d B_d and S = A_r (A_d + B_d - 1); equal times give
//!   t = (beta R + gamma S) / ((alpha + beta) R + gamma S), and r = t A_r.

use crate::common::csr::CsrRef;
use crate::types::{Idx, Scalar};

/// The CPU's share before any rate is measured (Heuristic I).
pub const DEFAULT_CPU_FRACTION: f64 = 0.25;

/// A side whose measured rate would give it less than this share of the work gets none:
/// the hybrid's fixed costs (the flop profile, a second symbolic set-up, the GPU side's
/// thread and copies, memory bandwidth shared with the other side) exceed what it saves.
pub const MIN_SIDE_SHARE: f64 = 0.15;

/// A product the faster side alone would finish in less than this (seconds, from the
/// measured rates) is not split: the hybrid's fixed costs (measured on an H200 with 16
/// CPU threads: 5-10 ms) would take most of what the split saves.
pub const MIN_SPLIT_SECONDS: f64 = 0.05;

/// A matrix counts as banded when its band holds at most this share of its columns...
pub const BAND_MAX_WIDTH_FRACTION: f64 = 0.1;
/// ... and its entries fill at least this share of the band (the paper's band matrices
/// are full bands stored as DIA).
pub const BAND_MIN_FILL: f64 = 0.5;

/// Throughputs measured on earlier calls of a handle. None: not measured yet.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    /// CPU multiplications per second.
    pub cpu: Option<f64>,
    /// GPU multiplications per second, the whole GPU part (uploads, kernels, C back):
    /// Heuristic II's t_g.
    pub gpu: Option<f64>,
    /// GPU multiplications per second without copying C back (the band rule's beta).
    pub gpu_compute: Option<f64>,
    /// Entries of C copied back from the GPU per second (the band rule's gamma).
    pub copy: Option<f64>,
}

impl Rates {
    /// Whether the band rule of [`plan_split`] has its rates (CPU, GPU compute, copy): only
    /// then are A's and B's bands worth finding.
    pub fn band_rule_ready(&self) -> bool {
        [self.cpu, self.gpu_compute, self.copy]
            .iter()
            .all(|r| r.is_some_and(|r| r > 0.0))
    }

    /// Records a measurement: `work` units done in `seconds` (ignored when not positive).
    /// Keeps the most recent value: the next product on a handle is usually like the last.
    pub fn record(slot: &mut Option<f64>, work: f64, seconds: f64) {
        if work > 0.0 && seconds > 0.0 && (work / seconds).is_finite() {
            *slot = Some(work / seconds);
        }
    }
}

/// How the split was chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    /// Hybrid was asked for but there is no usable GPU: all rows on the CPU.
    NoDevice(String),
    /// By flops, CPU share from Heuristic I (no rates yet).
    FlopsDefault,
    /// By flops, CPU share from measured rates (Heuristic II).
    FlopsMeasured,
    /// Measured rates predict less than [`MIN_SIDE_SHARE`] of the work for one side: all
    /// rows on the other (`share`: the CPU share the rates gave).
    OneSide { cpu: bool, share: f64 },
    /// The faster side alone is predicted to take under [`MIN_SPLIT_SECONDS`]: all rows
    /// there (`seconds`: that prediction).
    Small { cpu: bool, seconds: f64 },
    /// A and B banded: the analytic share of section 4.3.
    Band {
        a_diagonals: usize,
        b_diagonals: usize,
    },
}

/// The split of a hybrid plan: CPU rows `0..split_row`, GPU rows `split_row..nrows`.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub nrows: usize,
    pub split_row: usize,
    /// The CPU's share of the multiplications it was aimed at.
    pub cpu_fraction: f64,
    pub how: How,
}

impl Split {
    /// Everything on the CPU, with the reason.
    pub fn all_cpu(nrows: usize, why: String) -> Split {
        Split {
            nrows,
            split_row: nrows,
            cpu_fraction: 1.0,
            how: How::NoDevice(why),
        }
    }
    pub fn cpu_rows(&self) -> usize {
        self.split_row
    }
    pub fn gpu_rows(&self) -> usize {
        self.nrows - self.split_row
    }
    /// One line for the plan info.
    pub fn describe(&self) -> String {
        let rows = format!(
            "rows 0..{} on the CPU, {}..{} on the GPU",
            self.split_row, self.split_row, self.nrows
        );
        match &self.how {
            How::NoDevice(why) => {
                format!("hybrid: all {} rows on the CPU: no GPU ({why})", self.nrows)
            }
            How::FlopsDefault => format!(
                "hybrid: {rows}; split by flops, CPU share {:.3} (default: no rates measured yet)",
                self.cpu_fraction
            ),
            How::FlopsMeasured => format!(
                "hybrid: {rows}; split by flops, CPU share {:.3} from measured CPU and GPU rates",
                self.cpu_fraction
            ),
            How::OneSide { cpu, share } => format!(
                "hybrid: all {} rows on the {}: measured rates give the CPU a share of {share:.3}, \
                 under which a split gains less than its fixed costs",
                self.nrows,
                if *cpu { "CPU" } else { "GPU" }
            ),
            How::Small { cpu, seconds } => format!(
                "hybrid: all {} rows on the {}: predicted {:.1} ms there alone, under the {:.0} ms \
                 a split needs to pay its fixed costs",
                self.nrows,
                if *cpu { "CPU" } else { "GPU" },
                seconds * 1e3,
                MIN_SPLIT_SECONDS * 1e3
            ),
            How::Band {
                a_diagonals,
                b_diagonals,
            } => format!(
                "hybrid: {rows}; band split (A {a_diagonals} and B {b_diagonals} diagonals), CPU \
                 share {:.3}",
                self.cpu_fraction
            ),
        }
    }
}

/// Heuristic II's CPU share from rates, or Heuristic I's default.
pub fn cpu_fraction(rates: &Rates) -> (f64, How) {
    match (rates.cpu, rates.gpu) {
        (Some(c), Some(g)) if c > 0.0 && g > 0.0 => {
            let t = c / (c + g);
            if t < MIN_SIDE_SHARE {
                (
                    0.0,
                    How::OneSide {
                        cpu: false,
                        share: t,
                    },
                )
            } else if 1.0 - t < MIN_SIDE_SHARE {
                (
                    1.0,
                    How::OneSide {
                        cpu: true,
                        share: t,
                    },
                )
            } else {
                (t, How::FlopsMeasured)
            }
        }
        _ => (DEFAULT_CPU_FRACTION, How::FlopsDefault),
    }
}

/// The row r that balances predicted times when the CPU works at share `t` of the total
/// speed: CPU time prefix[r] / t against GPU time (F - prefix[r]) / (1 - t), both in the
/// same unit. `prefix` has m + 1 non-decreasing entries from 0 (multiplications of rows
/// before each row). Of the two rows around the crossing, the one with the smaller
/// maximum wins (ties to the smaller r). t <= 0 gives 0 (all GPU), t >= 1 gives m.
pub fn split_by_flops(prefix: &[u64], t: f64) -> usize {
    let m = prefix.len().saturating_sub(1);
    if m == 0 || t.is_nan() || t <= 0.0 {
        return 0;
    }
    if t >= 1.0 {
        return m;
    }
    let total = prefix[m] as f64;
    let predicted = |r: usize| {
        let p = prefix[r] as f64;
        (p / t).max((total - p) / (1.0 - t))
    };
    // First r whose CPU part reaches the target share.
    let target = t * total;
    let hi = prefix.partition_point(|&p| (p as f64) < target).min(m);
    let lo = hi.saturating_sub(1);
    if predicted(lo) <= predicted(hi) {
        lo
    } else {
        hi
    }
}

/// The diagonals a matrix's entries occupy: every entry (i, j) has
/// `-lower <= j - i <= upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub lower: usize,
    pub upper: usize,
}

impl Band {
    pub fn diagonals(&self) -> usize {
        self.lower.saturating_add(self.upper).saturating_add(1)
    }
}

/// The band of `a` when it is a band matrix: entries within a band of at most
/// `BAND_MAX_WIDTH_FRACTION` of the columns (at least 1 diagonal) that they fill to at
/// least `BAND_MIN_FILL`. None for an empty matrix or any other pattern.
///
/// Row by row, and over as soon as the band seen so far fails either test: both only get
/// harder as the band widens, so the answer is that of a scan of every entry, while a
/// matrix that is no band (a graph, a 3-D stencil) is rejected within its first rows
/// instead of costing a serial pass over its entries in every hybrid symbolic phase.
pub fn band_of<O: Idx, I: Idx, V: Scalar>(a: &CsrRef<'_, O, I, V>) -> Option<Band> {
    let (m, n) = (a.nrows(), a.ncols());
    if m == 0 || n == 0 || a.nnz() == 0 {
        return None;
    }
    let max_width = (BAND_MAX_WIDTH_FRACTION * n as f64).max(1.0);
    let fails = |band: Band| {
        band.diagonals() as f64 > max_width
            || (a.nnz() as f64) < BAND_MIN_FILL * band_slots_at_least(m, n, band) as f64
    };
    // i64 offsets: a column beyond i64 (a bad index) wraps to a wide band, never a narrow one.
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for i in 0..m {
        let (mut row_lo, mut row_hi) = (lo, hi);
        for &c in a.row_cols(i) {
            let d = (a.col_of(c) as i64).wrapping_sub(i as i64);
            row_lo = row_lo.min(d);
            row_hi = row_hi.max(d);
        }
        if row_lo < lo || row_hi > hi {
            (lo, hi) = (row_lo, row_hi);
            if fails(band_from(lo.into(), hi.into())) {
                return None;
            }
        }
    }
    let band = band_from(lo.into(), hi.into());
    (!fails(band) && a.nnz() as f64 >= BAND_MIN_FILL * band_slots(m, n, band) as f64)
        .then_some(band)
}

/// The band of the diagonals `lo..=hi` (j - i), widened to hold the main diagonal.
fn band_from(lo: i128, hi: i128) -> Band {
    let clamp = |x: i128| x.clamp(0, usize::MAX as i128) as usize;
    Band {
        lower: clamp(-lo),
        upper: clamp(hi),
    }
}

/// Positions of an m x n matrix inside `band`: the sum of its diagonals' lengths.
fn band_slots(m: usize, n: usize, band: Band) -> u128 {
    (-(band.lower as i128)..=band.upper as i128)
        .map(|d| {
            let (m, n) = (m as i128, n as i128);
            let len = if d >= 0 { m.min(n - d) } else { n.min(m + d) };
            len.max(0) as u128
        })
        .sum()
}

/// A lower bound of [`band_slots`] in O(1): diagonal d holds at least min(m, n) - |d|
/// positions.
fn band_slots_at_least(m: usize, n: usize, band: Band) -> u128 {
    let s = m.min(n) as u128;
    // Sum of s - e over e = from..=to, the terms that stay positive.
    let run = |from: u128, to: u128| {
        let to = to.min(s.saturating_sub(1));
        if s == 0 || from > to {
            0
        } else {
            (to - from + 1).saturating_mul(2 * s - from - to) / 2
        }
    };
    run(0, band.upper as u128) + run(1, band.lower as u128)
}

/// The CPU's share for band matrices (section 4.3): `alpha`, `beta` are CPU and GPU
/// seconds per multiplication, `gamma` seconds per entry of C copied back from the GPU.
pub fn band_cpu_fraction(
    rows: usize,
    a_diagonals: usize,
    b_diagonals: usize,
    alpha: f64,
    beta: f64,
    gamma: f64,
) -> f64 {
    let r = rows as f64 * a_diagonals as f64 * b_diagonals as f64;
    let s = rows as f64 * (a_diagonals + b_diagonals).saturating_sub(1) as f64;
    let den = (alpha + beta) * r + gamma * s;
    if den > 0.0 && den.is_finite() {
        ((beta * r + gamma * s) / den).clamp(0.0, 1.0)
    } else {
        DEFAULT_CPU_FRACTION
    }
}

/// The split for a product with per-row multiplication prefix `prefix`, the bands of A and
/// B when both are banded, and the handle's measured rates. The band rule needs the CPU,
/// GPU-compute and copy rates; without them the flops rule applies.
pub fn plan_split(prefix: &[u64], bands: Option<(Band, Band)>, rates: &Rates) -> Split {
    let m = prefix.len().saturating_sub(1);
    if let (Some((ba, bb)), Some(c), Some(g), Some(cp)) =
        (bands, rates.cpu, rates.gpu_compute, rates.copy)
        && c > 0.0
        && g > 0.0
        && cp > 0.0
    {
        let (ad, bd) = (ba.diagonals(), bb.diagonals());
        let t = band_cpu_fraction(m, ad, bd, 1.0 / c, 1.0 / g, 1.0 / cp);
        // Rows of a band product cost the same: the split is by rows.
        let split_row = ((t * m as f64).round() as usize).min(m);
        return Split {
            nrows: m,
            split_row,
            cpu_fraction: t,
            how: How::Band {
                a_diagonals: ad,
                b_diagonals: bd,
            },
        };
    }
    let (t, how) = cpu_fraction(rates);
    if let (How::FlopsMeasured, Some(c), Some(g)) = (&how, rates.cpu, rates.gpu) {
        let seconds = prefix[m] as f64 / c.max(g);
        if seconds < MIN_SPLIT_SECONDS {
            let cpu = c >= g;
            return Split {
                nrows: m,
                split_row: if cpu { m } else { 0 },
                cpu_fraction: if cpu { 1.0 } else { 0.0 },
                how: How::Small { cpu, seconds },
            };
        }
    }
    Split {
        nrows: m,
        split_row: split_by_flops(prefix, t),
        cpu_fraction: t,
        how,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::slices::IndexSliceMut;

    fn prefix_of(rows: &[u64]) -> Vec<u64> {
        let mut p = vec![0];
        for &r in rows {
            p.push(p.last().unwrap() + r);
        }
        p
    }

    /// Predicted time of a split in units where the CPU does t and the GPU 1 - t per
    /// second.
    fn time(prefix: &[u64], r: usize, t: f64) -> f64 {
        let total = *prefix.last().unwrap() as f64;
        let p = prefix[r] as f64;
        (p / t).max((total - p) / (1.0 - t))
    }

    #[test]
    fn split_points_balance_predicted_time() {
        // Irregular rows; every split is compared with the best over all r.
        let rows: Vec<u64> = (0..200u64)
            .map(|i| (i * 7919) % 97 + (i % 13) * 40)
            .collect();
        let prefix = prefix_of(&rows);
        for &t in &[0.05, 0.25, 0.4, 0.5, 0.75, 0.9] {
            let r = split_by_flops(&prefix, t);
            let best = (0..=rows.len())
                .map(|x| time(&prefix, x, t))
                .fold(f64::INFINITY, f64::min);
            assert!(
                (time(&prefix, r, t) - best).abs() <= 1e-9 * best,
                "t = {t}: r = {r} gives {} but the best is {best}",
                time(&prefix, r, t)
            );
            // The CPU's share is within one row of the target.
            let total = *prefix.last().unwrap() as f64;
            let max_row = *rows.iter().max().unwrap() as f64;
            assert!((prefix[r] as f64 - t * total).abs() <= max_row, "t = {t}");
        }
    }

    #[test]
    fn uniform_rows_split_at_the_share() {
        let prefix = prefix_of(&[10; 100]);
        assert_eq!(split_by_flops(&prefix, 0.25), 25);
        assert_eq!(split_by_flops(&prefix, 0.5), 50);
    }

    #[test]
    fn degenerate_splits() {
        let prefix = prefix_of(&[3, 0, 5, 1]);
        // All rows to one side.
        assert_eq!(split_by_flops(&prefix, 0.0), 0);
        assert_eq!(split_by_flops(&prefix, -1.0), 0);
        assert_eq!(split_by_flops(&prefix, f64::NAN), 0);
        assert_eq!(split_by_flops(&prefix, 1.0), 4);
        assert_eq!(split_by_flops(&prefix, 2.0), 4);
        // Empty matrix, and a matrix without multiplications.
        assert_eq!(split_by_flops(&[0], 0.5), 0);
        assert_eq!(split_by_flops(&[], 0.5), 0);
        assert_eq!(split_by_flops(&prefix_of(&[0, 0, 0]), 0.5), 0);
        // One huge row: whichever side takes it, the other is idle; the smaller maximum.
        let p = prefix_of(&[1, 1000, 1]);
        let r = split_by_flops(&p, 0.5);
        assert!(r == 1 || r == 2, "{r}");
        let s = plan_split(&[0], None, &Rates::default());
        assert_eq!((s.cpu_rows(), s.gpu_rows()), (0, 0));
    }

    #[test]
    fn heuristics_from_rates() {
        let (t, how) = cpu_fraction(&Rates::default());
        assert_eq!((t, how), (DEFAULT_CPU_FRACTION, How::FlopsDefault));
        let rates = Rates {
            cpu: Some(1e9),
            gpu: Some(3e9),
            ..Default::default()
        };
        let (t, how) = cpu_fraction(&rates);
        assert_eq!(how, How::FlopsMeasured);
        assert!((t - 0.25).abs() < 1e-12);
        // Equal predicted times: F t / rate_cpu == F (1 - t) / rate_gpu.
        assert!((t / 1e9 - (1.0 - t) / 3e9).abs() < 1e-21);
        // A product the faster side finishes in under MIN_SPLIT_SECONDS is not split.
        let rates = Rates {
            cpu: Some(2e9),
            gpu: Some(1e9),
            ..Default::default()
        };
        let small = prefix_of(&[1_000_000; 50]);
        let s = plan_split(&small, None, &rates);
        assert_eq!((s.cpu_rows(), s.gpu_rows()), (50, 0));
        assert!(matches!(s.how, How::Small { cpu: true, .. }), "{:?}", s.how);
        assert!(s.describe().contains("fixed costs"));
        let large = prefix_of(&[10_000_000; 50]);
        let s = plan_split(&large, None, &rates);
        assert_eq!(s.how, How::FlopsMeasured);
        assert!(s.cpu_rows() > 0 && s.gpu_rows() > 0);
        // A side that would get under MIN_SIDE_SHARE gets nothing.
        for (c, g, cpu) in [(1e9, 9e9, false), (9e9, 1e9, true)] {
            let rates = Rates {
                cpu: Some(c),
                gpu: Some(g),
                ..Default::default()
            };
            let (t, how) = cpu_fraction(&rates);
            assert_eq!(t, if cpu { 1.0 } else { 0.0 });
            assert!(matches!(how, How::OneSide { cpu: x, .. } if x == cpu));
            let prefix = prefix_of(&[5, 0, 7, 3]);
            let s = plan_split(&prefix, None, &rates);
            assert_eq!(s.cpu_rows(), if cpu { 4 } else { 0 });
            assert!(
                s.describe()
                    .contains(if cpu { "on the CPU" } else { "on the GPU" })
            );
        }
        let mut r = Rates::default();
        Rates::record(&mut r.cpu, 100.0, 0.0);
        assert_eq!(r.cpu, None);
        Rates::record(&mut r.cpu, 100.0, 2.0);
        assert_eq!(r.cpu, Some(50.0));
    }

    #[test]
    fn band_share_matches_the_papers_formula_and_balances_times() {
        // alpha, beta per multiplication, gamma per copied entry.
        let (rows, ad, bd) = (51200usize, 3usize, 4usize);
        let (alpha, beta, gamma) = (2e-9, 1e-9, 4e-9);
        let t = band_cpu_fraction(rows, ad, bd, alpha, beta, gamma);
        let r = (rows * ad * bd) as f64;
        let s = (rows * (ad + bd - 1)) as f64;
        // t alpha R == (1 - t)(beta R + gamma S)
        let cpu = t * alpha * r;
        let gpu = (1.0 - t) * (beta * r + gamma * s);
        assert!((cpu - gpu).abs() <= 1e-12 * cpu, "{cpu} vs {gpu}");
        // A slower GPU link moves work to the CPU.
        assert!(band_cpu_fraction(rows, ad, bd, alpha, beta, 10.0 * gamma) > t);
        assert_eq!(
            band_cpu_fraction(0, 0, 0, 0.0, 0.0, 0.0),
            DEFAULT_CPU_FRACTION
        );
    }

    fn csr_from(m: usize, n: usize, entries: &[(usize, usize)]) -> (Vec<u64>, Vec<i64>, Vec<f64>) {
        let mut ptr = vec![0u64; m + 1];
        for &(i, _) in entries {
            ptr[i + 1] += 1;
        }
        for i in 0..m {
            ptr[i + 1] += ptr[i];
        }
        let mut sorted = entries.to_vec();
        sorted.sort();
        assert!(sorted.iter().all(|&(_, j)| j < n));
        let col = sorted.iter().map(|&(_, j)| j as i64).collect::<Vec<_>>();
        let val = vec![1.0; col.len()];
        (ptr, col, val)
    }

    fn band_matrix(m: usize, lower: usize, upper: usize) -> Vec<(usize, usize)> {
        let mut e = Vec::new();
        for i in 0..m {
            for j in i.saturating_sub(lower)..=(i + upper).min(m - 1) {
                e.push((i, j));
            }
        }
        e
    }

    #[test]
    fn band_detection() {
        let m = 200;
        let (p, c, v) = csr_from(m, m, &band_matrix(m, 1, 2));
        let a = CsrRef::<u64, i64, f64>::new(m, m, 0, &p, &c, Some(&v)).unwrap();
        assert_eq!(band_of(&a), Some(Band { lower: 1, upper: 2 }));
        assert_eq!(band_of(&a).unwrap().diagonals(), 4);
        // Diagonal only.
        let (p, c, v) = csr_from(m, m, &band_matrix(m, 0, 0));
        let a = CsrRef::<u64, i64, f64>::new(m, m, 0, &p, &c, Some(&v)).unwrap();
        assert_eq!(band_of(&a), Some(Band { lower: 0, upper: 0 }));
        // A far corner entry makes the band too wide.
        let mut e = band_matrix(m, 1, 1);
        e.push((0, m - 1));
        let (p, c, v) = csr_from(m, m, &e);
        let a = CsrRef::<u64, i64, f64>::new(m, m, 0, &p, &c, Some(&v)).unwrap();
        assert_eq!(band_of(&a), None);
        // A sparse band (one entry in ten rows) is not a band matrix.
        let e: Vec<_> = (0..m).step_by(10).map(|i| (i, i)).collect();
        let (p, c, v) = csr_from(m, m, &e);
        let a = CsrRef::<u64, i64, f64>::new(m, m, 0, &p, &c, Some(&v)).unwrap();
        assert_eq!(band_of(&a), None);
        // Empty matrices.
        let (p, c, v) = csr_from(m, m, &[]);
        let a = CsrRef::<u64, i64, f64>::new(m, m, 0, &p, &c, Some(&v)).unwrap();
        assert_eq!(band_of(&a), None);
        let a = CsrRef::<u64, i64, f64>::new(0, 5, 0, &[0], &[], Some(&[])).unwrap();
        assert_eq!(band_of(&a), None);
    }

    /// The band rule by a scan of every entry (the early exit must give the same answer).
    fn band_by_full_scan(m: usize, n: usize, entries: &[(usize, usize)]) -> Option<Band> {
        if m == 0 || n == 0 || entries.is_empty() {
            return None;
        }
        let d = entries.iter().map(|&(i, j)| j as i128 - i as i128);
        let band = band_from(d.clone().min().unwrap(), d.max().unwrap());
        let fill = entries.len() as f64 >= BAND_MIN_FILL * band_slots(m, n, band) as f64;
        let narrow = band.diagonals() as f64 <= (BAND_MAX_WIDTH_FRACTION * n as f64).max(1.0);
        (narrow && fill).then_some(band)
    }

    #[test]
    fn slots_bound_is_a_lower_bound() {
        for m in 0..12 {
            for n in 0..12 {
                for lower in 0..14 {
                    for upper in 0..14 {
                        let band = Band { lower, upper };
                        let exact = band_slots(m, n, band);
                        let bound = band_slots_at_least(m, n, band);
                        assert!(bound <= exact, "{m}x{n} {band:?}: {bound} > {exact}");
                        if m == n {
                            assert_eq!(bound, exact, "{m}x{n} {band:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn early_exit_band_matches_the_full_scan() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |k: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % k.max(1) as u64) as usize
        };
        let mut banded = 0;
        for case in 0..600 {
            let (m, n) = match case % 4 {
                0 => (1 + next(300), 1 + next(300)),
                1 => (1 + next(40), 1 + next(2000)),
                2 => (1 + next(2000), 1 + next(40)),
                _ => {
                    let s = 1 + next(1000);
                    (s, s)
                }
            };
            let (lower, upper) = (next(n / 20 + 2), next(n / 20 + 2));
            let keep = [100, 90, 60, 50, 30][next(5)];
            let mut e: Vec<(usize, usize)> = band_matrix(m.max(n), lower, upper)
                .into_iter()
                .filter(|&(i, j)| i < m && j < n && next(100) < keep)
                .collect();
            // Empty rows, far entries at the start, middle or end, a widening band.
            match next(6) {
                0 => e.retain(|&(i, _)| i % 3 != 1),
                1 => e.push((next(m), next(n))),
                2 => e.push((m - 1, 0)),
                3 => e.push((0, n - 1)),
                4 => e.extend(
                    (0..m)
                        .step_by(1 + next(9))
                        .map(|i| (i, (i + i / 4).min(n - 1))),
                ),
                _ => {}
            }
            e.sort();
            e.dedup();
            let want = band_by_full_scan(m, n, &e);
            banded += want.is_some() as usize;
            let (p, c, v) = csr_from(m, n, &e);
            let a = CsrRef::<u64, i64, f64>::new(m, n, 0, &p, &c, Some(&v)).unwrap();
            assert_eq!(
                band_of(&a),
                want,
                "case {case}: {m}x{n}, {} entries",
                e.len()
            );
            // 1-based, the same pattern.
            let p1: Vec<u64> = p.iter().map(|x| x + 1).collect();
            let c1: Vec<i64> = c.iter().map(|x| x + 1).collect();
            let a1 = CsrRef::<u64, i64, f64>::new(m, n, 1, &p1, &c1, Some(&v)).unwrap();
            assert_eq!(band_of(&a1), want, "case {case}, 1-based");
        }
        // Both answers occur often enough for the comparison to mean something.
        assert!((100..500).contains(&banded), "{banded} of 600 banded");
    }

    #[test]
    fn band_rule_readiness() {
        let mut r = Rates::default();
        assert!(!r.band_rule_ready());
        r.cpu = Some(1e9);
        r.gpu_compute = Some(4e9);
        assert!(!r.band_rule_ready());
        r.copy = Some(1e8);
        assert!(r.band_rule_ready());
        r.copy = Some(0.0);
        assert!(!r.band_rule_ready());
    }

    #[test]
    fn top_rows_and_split_outputs_cut_where_the_cpu_part_ends() {
        // 1-based, rows of 2, 0, 3 entries.
        let off = [1i32, 3, 3, 6];
        let idx = [1i64, 2, 1, 2, 3];
        let val = [1.0f32, 2.0, 3.0, 4.0, 5.0];
        let a = CsrRef::new(3, 3, 1, &off, &idx, Some(&val[..])).unwrap();
        for (r, e) in [(0, 0), (1, 2), (2, 2), (3, 5), (9, 5)] {
            let t = a.top_rows(r).unwrap();
            assert_eq!(t.nrows(), r.min(3));
            assert_eq!(t.nnz(), e, "r = {r}");
            assert_eq!(t.values().unwrap().len(), e, "r = {r}");
        }
        let mut cols = vec![0i32; 5];
        let (c1, c2) = IndexSliceMut::I32(&mut cols).split_at(2);
        assert_eq!((c1.len(), c2.len()), (2, 3));
        let (c1, c2) = IndexSliceMut::I32(&mut cols).split_at(9);
        assert_eq!((c1.len(), c2.len()), (5, 0));
    }

    #[test]
    fn plan_split_uses_the_band_rule_only_with_all_rates() {
        let prefix = prefix_of(&[12; 1000]);
        let band = Band { lower: 1, upper: 1 };
        // Slow enough rates that the product is not small (MIN_SPLIT_SECONDS).
        let partial = Rates {
            cpu: Some(1e3),
            gpu: Some(2e3),
            gpu_compute: Some(2e3),
            copy: None,
        };
        let s = plan_split(&prefix, Some((band, band)), &partial);
        assert_eq!(s.how, How::FlopsMeasured);
        assert_eq!(s.split_row, 333);
        let full = Rates {
            copy: Some(1e2),
            ..partial
        };
        let s = plan_split(&prefix, Some((band, band)), &full);
        assert!(matches!(
            s.how,
            How::Band {
                a_diagonals: 3,
                b_diagonals: 3
            }
        ));
        let t = band_cpu_fraction(1000, 3, 3, 1e-3, 0.5e-3, 1e-2);
        assert_eq!(s.split_row, (t * 1000.0).round() as usize);
        assert!(s.describe().contains("band split"), "{}", s.describe());
        let none = Split::all_cpu(7, "no driver".into());
        assert_eq!((none.cpu_rows(), none.gpu_rows()), (7, 0));
        assert!(none.describe().contains("all 7 rows on the CPU"));
    }
}
