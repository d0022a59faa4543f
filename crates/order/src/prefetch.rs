//! A hint to the processor to bring memory into its caches before it is read: the
//! replay visits a thousand locations in turn, and each location's next wall times,
//! points and partners are otherwise a cache miss every time it comes round.

/// Asks for the cache line holding `p` (which need not be valid: a prefetch never
/// faults and reads nothing the program sees).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache; it does not dereference `p` in any
    // way the program can observe, and SSE is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
