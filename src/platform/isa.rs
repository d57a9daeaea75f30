//! Which instruction-set copy of a kernel this machine runs: detected once per process,
//! shared by every module that compiles kernels for several ISAs.

use std::sync::OnceLock;

/// The instruction-set path of the kernels with per-ISA copies (SpMM, the validation and
/// digest scan of `csr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// The target the library was built for (SSE2 on x86-64), no FMA.
    Base,
    /// AVX2 + FMA.
    Avx2,
    /// AVX-512F/VL/DQ/BW + AVX2 + FMA (every AVX-512 CPU with VL also has DQ and BW).
    Avx512,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Base => "base",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this machine can run the path.
    pub fn available(self) -> bool {
        match self {
            Isa::Base => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512dq")
                    && is_x86_feature_detected!("avx512bw")
                    && Isa::Avx2.available()
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The best path on this machine, or the one named by `SPGEMM_SPMM_ISA`
    /// (base, avx2, avx512) when that is available. Decided once per process.
    pub fn detect() -> Isa {
        static ISA: OnceLock<Isa> = OnceLock::new();
        *ISA.get_or_init(|| {
            let forced = std::env::var("SPGEMM_SPMM_ISA").ok().and_then(|s| {
                [Isa::Base, Isa::Avx2, Isa::Avx512]
                    .into_iter()
                    .find(|i| i.name() == s.trim())
            });
            if let Some(i) = forced.filter(|i| i.available()) {
                return i;
            }
            [Isa::Avx512, Isa::Avx2]
                .into_iter()
                .find(|i| i.available())
                .unwrap_or(Isa::Base)
        })
    }
}

/// Whether the SpMV sums rows through 8-lane AVX-512 gathers (`cpu::spmm::spmv`): on the
/// AVX-512 path of Intel server cores from Sapphire Rapids on (family 6, model 0x8F and
/// later), where a gather of eight values costs about what eight scalar loads do and an
/// SpMV of power-law rows ran 1.3x faster; not on AMD (gathers microcoded, measured slower)
/// nor on the Intel cores whose gathers carry the Gather Data Sampling mitigation (Skylake
/// to Ice Lake and Rocket Lake, model 0xA7). `SPGEMM_SPMV_GATHER=0|1` overrides (only onto
/// a machine with the AVX-512 path). Decided once per process, so every product of a
/// process sums the same way (docs/DESIGN-NOTES.md, cpu::spmm::spmv).
pub fn fast_gather() -> bool {
    static FAST: OnceLock<bool> = OnceLock::new();
    *FAST.get_or_init(|| {
        if Isa::detect() != Isa::Avx512 {
            return false;
        }
        match std::env::var("SPGEMM_SPMV_GATHER")
            .ok()
            .as_deref()
            .map(str::trim)
        {
            Some("1") => return true,
            Some("0") => return false,
            _ => {}
        }
        intel_gather_ok()
    })
}

#[cfg(target_arch = "x86_64")]
fn intel_gather_ok() -> bool {
    use std::arch::x86_64::__cpuid;
    let v = __cpuid(0);
    let vendor = [v.ebx, v.edx, v.ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect::<Vec<u8>>();
    if vendor != b"GenuineIntel" {
        return false;
    }
    let f = __cpuid(1).eax;
    let family = (f >> 8) & 0xF;
    let model = ((f >> 4) & 0xF) | (((f >> 16) & 0xF) << 4);
    family == 6 && model >= 0x8F && model != 0xA7
}

#[cfg(not(target_arch = "x86_64"))]
fn intel_gather_ok() -> bool {
    false
}
