//! Memory: large vectors in large pages, and cache lines asked for ahead.

/// Asks the kernel to back the capacity of `v`, when it is large (at least 8 MiB) and
/// not yet touched, with transparent huge pages: faulting in (and zeroing) a gigabyte
/// of fresh 4 KiB pages costs the kernel hundreds of thousands of faults, with 2 MiB
/// pages a few hundred. Where huge pages are off the advice is ignored.
pub fn ask_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes >= 4 * HUGE {
            let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
            let end = (v.as_ptr() as usize + bytes) & !(HUGE - 1);
            if end > start {
                // SAFETY: the range lies inside the vector's own allocation;
                // MADV_HUGEPAGE changes only how the kernel backs it.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Asks for the cache line holding `p` (which need not be valid: a prefetch never
/// faults and reads nothing the program sees).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache; it does not dereference `p` in any
    // way the program can observe, and SSE is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
