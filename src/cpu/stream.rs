//! Non-temporal (streaming) stores of scalar values: written around the caches, so a
//! large output that is not read again soon costs no read-for-ownership of its lines.
//! `movnti` is part of SSE2, so every x86-64 CPU has it (no runtime ISA check); other
//! targets store normally. A writer must call [`fence`] before another thread may read
//! what it streamed (rayon's own synchronisation does not order non-temporal stores).

use crate::types::Scalar;

/// Stores `v` into `dst` with a non-temporal store (a plain store off x86-64).
#[inline(always)]
pub(crate) fn put<V: Scalar>(dst: &mut V, v: V) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_stream_si32, _mm_stream_si64};
        let p = dst as *mut V;
        // SAFETY: `p` is a valid, aligned, exclusive pointer to a V. A V of 8 bytes aligned
        // to 8 (f64) or of 4 bytes (f32) is stored as an integer of the same size and bits,
        // whose alignment it has; movnti is SSE2. Other value types (complex: 8 bytes
        // aligned to 4, or 16 bytes) are stored normally.
        unsafe {
            match (std::mem::size_of::<V>(), std::mem::align_of::<V>()) {
                (8, 8) => _mm_stream_si64(p.cast::<i64>(), std::mem::transmute_copy(&v)),
                (4, 4) => _mm_stream_si32(p.cast::<i32>(), std::mem::transmute_copy(&v)),
                _ => *dst = v,
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = v;
    }
}

/// Orders this thread's earlier non-temporal stores before its later stores.
#[inline(always)]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence is SSE (every x86-64).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}
