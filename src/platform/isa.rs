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
