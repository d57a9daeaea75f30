//! The AVX-512 vector of each value type and the operations the explicit-vector kernels
//! use (x86-64 only; the kernels are in `avx512`).

// The AVX-512 intrinsics are stable since Rust 1.89, above the crate's declared
// rust-version.
#![allow(clippy::incompatible_msrv)]

use std::arch::x86_64::*;

/// A scalar type's AVX-512 vector and the operations the kernels use. Every method needs
/// AVX-512F (callers run on the AVX-512 path only, see `Isa`); pointer arguments follow
/// the intrinsics' contracts (`_n` forms touch only the first `n < L` lanes).
pub trait Lanes: Copy {
    type V: Copy;
    /// Lanes per vector.
    const L: usize;
    /// # Safety
    /// AVX-512F available.
    unsafe fn zero() -> Self::V;
    /// # Safety
    /// As above.
    unsafe fn splat(s: Self) -> Self::V;
    /// # Safety
    /// As above, and `p..p + L` readable.
    unsafe fn load(p: *const Self) -> Self::V;
    /// # Safety
    /// As above, and `p..p + n` readable (`n < L`).
    unsafe fn load_n(p: *const Self, n: usize) -> Self::V;
    /// `a * b + c`, one rounding.
    /// # Safety
    /// AVX-512F available.
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// # Safety
    /// As above.
    unsafe fn vadd(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// As above.
    unsafe fn vmul(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// As above, and `p..p + L` writable.
    unsafe fn store(p: *mut Self, v: Self::V);
    /// # Safety
    /// As above, and `p..p + n` writable (`n < L`).
    unsafe fn store_n(p: *mut Self, v: Self::V, n: usize);
    /// Non-temporal store of a full vector (written around the caches); the writer must
    /// issue `_mm_sfence` before its stores are read by another thread.
    /// # Safety
    /// As for `store`, and `p` 64-byte aligned.
    unsafe fn stream(p: *mut Self, v: Self::V);
    /// Transposes an 8 x 8 block in registers: entry t of source row q (`src + q * ls +
    /// t`) goes to `dst + t * ld + q`. Exact copies, so any bits pass through unchanged.
    /// # Safety
    /// AVX-512F; `src + q * ls .. + 8` readable and `dst + t * ld .. + 8` writable for
    /// q, t < 8.
    unsafe fn transpose8(src: *const Self, ls: usize, dst: *mut Self, ld: usize);

    /// Eight lanes of the SpMV's gather kernel (`spmv`): f64 fills a 512-bit vector, f32 a
    /// 256-bit one, so both gather with eight 64-bit indices.
    type G: Copy;
    /// # Safety
    /// AVX-512F/VL available.
    unsafe fn g_zero() -> Self::G;
    /// `base[idx[t]]` in the lanes of `k`, zero in the others (not read).
    /// # Safety
    /// As above, and `base + idx[t]` readable for each lane t of `k`.
    unsafe fn g_gather(k: u8, idx: __m512i, base: *const Self) -> Self::G;
    /// `p[t]` in the lanes of `k`, zero in the others (not read).
    /// # Safety
    /// As above, and `p + t` readable for each lane t of `k`.
    unsafe fn g_load(k: u8, p: *const Self) -> Self::G;
    /// `a * x + acc` (one rounding) in the lanes of `k`; `acc` in the others.
    /// # Safety
    /// AVX-512F/VL available.
    unsafe fn g_fma(a: Self::G, x: Self::G, acc: Self::G, k: u8) -> Self::G;
    /// The lanes summed as ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)): halves, then
    /// quarters, then the last pair, as `spmv::tree8` sums eight scalars.
    /// # Safety
    /// AVX-512F/VL available.
    unsafe fn g_sum(v: Self::G) -> Self;
}

impl Lanes for f64 {
    type V = __m512d;
    const L: usize = 8;

    type G = __m512d;
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_zero() -> __m512d {
        _mm512_setzero_pd()
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_gather(k: u8, idx: __m512i, base: *const f64) -> __m512d {
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm512_mask_i64gather_pd::<8>(_mm512_setzero_pd(), k, idx, base) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_load(k: u8, p: *const f64) -> __m512d {
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm512_maskz_loadu_pd(k, p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_fma(a: __m512d, x: __m512d, acc: __m512d, k: u8) -> __m512d {
        _mm512_mask3_fmadd_pd(a, x, acc, k)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_sum(v: __m512d) -> f64 {
        let w = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd::<1>(v));
        let u = _mm_add_pd(_mm256_castpd256_pd128(w), _mm256_extractf128_pd::<1>(w));
        _mm_cvtsd_f64(u) + _mm_cvtsd_f64(_mm_unpackhi_pd(u, u))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zero() -> __m512d {
        _mm512_setzero_pd()
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn splat(s: f64) -> __m512d {
        _mm512_set1_pd(s)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const f64) -> __m512d {
        // SAFETY: per the contract.
        unsafe { _mm512_loadu_pd(p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load_n(p: *const f64, n: usize) -> __m512d {
        // SAFETY: per the contract; masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_pd(((1u32 << n) - 1) as __mmask8, p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn fma(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
        _mm512_fmadd_pd(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn vadd(a: __m512d, b: __m512d) -> __m512d {
        _mm512_add_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn vmul(a: __m512d, b: __m512d) -> __m512d {
        _mm512_mul_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut f64, v: __m512d) {
        // SAFETY: per the contract.
        unsafe { _mm512_storeu_pd(p, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store_n(p: *mut f64, v: __m512d, n: usize) {
        // SAFETY: per the contract; masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_pd(p, ((1u32 << n) - 1) as __mmask8, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn stream(p: *mut f64, v: __m512d) {
        // SAFETY: per the contract.
        unsafe { _mm512_stream_pd(p, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn transpose8(src: *const f64, ls: usize, dst: *mut f64, ld: usize) {
        // Three rounds of shuffles: pairs of entries, then pairs of 128-bit lanes twice.
        // SAFETY: per the contract.
        unsafe {
            macro_rules! r {
                ($q:expr) => {
                    _mm512_loadu_pd(src.add($q * ls))
                };
            }
            let (r0, r1, r2, r3) = (r!(0), r!(1), r!(2), r!(3));
            let (r4, r5, r6, r7) = (r!(4), r!(5), r!(6), r!(7));
            let (t0, t1) = (_mm512_unpacklo_pd(r0, r1), _mm512_unpackhi_pd(r0, r1));
            let (t2, t3) = (_mm512_unpacklo_pd(r2, r3), _mm512_unpackhi_pd(r2, r3));
            let (t4, t5) = (_mm512_unpacklo_pd(r4, r5), _mm512_unpackhi_pd(r4, r5));
            let (t6, t7) = (_mm512_unpacklo_pd(r6, r7), _mm512_unpackhi_pd(r6, r7));
            let u0 = _mm512_shuffle_f64x2::<0x88>(t0, t2);
            let u1 = _mm512_shuffle_f64x2::<0x88>(t1, t3);
            let u2 = _mm512_shuffle_f64x2::<0xDD>(t0, t2);
            let u3 = _mm512_shuffle_f64x2::<0xDD>(t1, t3);
            let u4 = _mm512_shuffle_f64x2::<0x88>(t4, t6);
            let u5 = _mm512_shuffle_f64x2::<0x88>(t5, t7);
            let u6 = _mm512_shuffle_f64x2::<0xDD>(t4, t6);
            let u7 = _mm512_shuffle_f64x2::<0xDD>(t5, t7);
            macro_rules! w {
                ($t:expr, $v:expr) => {
                    _mm512_storeu_pd(dst.add($t * ld), $v)
                };
            }
            w!(0, _mm512_shuffle_f64x2::<0x88>(u0, u4));
            w!(1, _mm512_shuffle_f64x2::<0x88>(u1, u5));
            w!(2, _mm512_shuffle_f64x2::<0x88>(u2, u6));
            w!(3, _mm512_shuffle_f64x2::<0x88>(u3, u7));
            w!(4, _mm512_shuffle_f64x2::<0xDD>(u0, u4));
            w!(5, _mm512_shuffle_f64x2::<0xDD>(u1, u5));
            w!(6, _mm512_shuffle_f64x2::<0xDD>(u2, u6));
            w!(7, _mm512_shuffle_f64x2::<0xDD>(u3, u7));
        }
    }
}

impl Lanes for f32 {
    type V = __m512;
    const L: usize = 16;

    type G = __m256;
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_zero() -> __m256 {
        _mm256_setzero_ps()
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_gather(k: u8, idx: __m512i, base: *const f32) -> __m256 {
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm512_mask_i64gather_ps::<4>(_mm256_setzero_ps(), k, idx, base) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_load(k: u8, p: *const f32) -> __m256 {
        // SAFETY: per the contract; masked-off lanes are not read.
        unsafe { _mm256_maskz_loadu_ps(k, p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_fma(a: __m256, x: __m256, acc: __m256, k: u8) -> __m256 {
        _mm256_mask3_fmadd_ps(a, x, acc, k)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn g_sum(v: __m256) -> f32 {
        let w = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let u = _mm_add_ps(w, _mm_movehl_ps(w, w));
        _mm_cvtss_f32(u) + _mm_cvtss_f32(_mm_shuffle_ps::<1>(u, u))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zero() -> __m512 {
        _mm512_setzero_ps()
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn splat(s: f32) -> __m512 {
        _mm512_set1_ps(s)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const f32) -> __m512 {
        // SAFETY: per the contract.
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load_n(p: *const f32, n: usize) -> __m512 {
        // SAFETY: per the contract; masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_ps(((1u32 << n) - 1) as __mmask16, p) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
        _mm512_fmadd_ps(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn vadd(a: __m512, b: __m512) -> __m512 {
        _mm512_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn vmul(a: __m512, b: __m512) -> __m512 {
        _mm512_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut f32, v: __m512) {
        // SAFETY: per the contract.
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store_n(p: *mut f32, v: __m512, n: usize) {
        // SAFETY: per the contract; masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_ps(p, ((1u32 << n) - 1) as __mmask16, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn stream(p: *mut f32, v: __m512) {
        // SAFETY: per the contract.
        unsafe { _mm512_stream_ps(p, v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn transpose8(src: *const f32, ls: usize, dst: *mut f32, ld: usize) {
        // Eight entries are a 256-bit vector: pairs, then quadruples within 128-bit
        // lanes, then the lanes themselves.
        // SAFETY: per the contract.
        unsafe {
            macro_rules! r {
                ($q:expr) => {
                    _mm256_loadu_ps(src.add($q * ls))
                };
            }
            let (r0, r1, r2, r3) = (r!(0), r!(1), r!(2), r!(3));
            let (r4, r5, r6, r7) = (r!(4), r!(5), r!(6), r!(7));
            let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
            let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
            let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
            let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
            let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            macro_rules! w {
                ($t:expr, $v:expr) => {
                    _mm256_storeu_ps(dst.add($t * ld), $v)
                };
            }
            w!(0, _mm256_permute2f128_ps::<0x20>(s0, s4));
            w!(1, _mm256_permute2f128_ps::<0x20>(s1, s5));
            w!(2, _mm256_permute2f128_ps::<0x20>(s2, s6));
            w!(3, _mm256_permute2f128_ps::<0x20>(s3, s7));
            w!(4, _mm256_permute2f128_ps::<0x31>(s0, s4));
            w!(5, _mm256_permute2f128_ps::<0x31>(s1, s5));
            w!(6, _mm256_permute2f128_ps::<0x31>(s2, s6));
            w!(7, _mm256_permute2f128_ps::<0x31>(s3, s7));
        }
    }
}
