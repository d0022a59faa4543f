//! Memory: freed memory kept for reuse, large vectors in large pages, and cache lines
//! asked for ahead.

/// Keeps the memory the process frees for its next allocations. glibc serves a block of
/// more than 32 MiB with a mapping of its own and unmaps it when freed, and returns the
/// top of its heap to the kernel: the next large vector (a pass's distances after the
/// wait states, the PAG after the first pass) then faults in fresh pages, which the
/// kernel must zero and, on a virtual machine, the host must map again. Serving every
/// block from the heap and never trimming it (a threshold of -1) reuses those pages instead: the peak stays
/// what the largest phase needs. Called first thing by the commands that run phases
/// one after another (spoor-cp, spoor-report, spoor-diagnose, spoor-exp); spoor-gag,
/// whose simulation reads its tables at random, keeps fresh mappings in huge pages.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation policy for later calls; called
    // before the process allocates anything large, from its first thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
    }
}

/// Gives the pages of freed memory back to the kernel. glibc keeps what a thread frees
/// for that thread's arena, so memory one phase let go on its worker threads does not
/// serve the next phase's, which then takes fresh pages beside it: a stage whose peak
/// is two such phases in turn (spoor-order's matching, then its replay) returns the
/// first's before the second grows. Elsewhere a no-op.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Empties `v`, gives the kernel back the whole pages of its buffer, then frees it.
/// Under [`keep_freed_memory`] a freed block stays resident until it serves another:
/// a phase that moves large arrays into one new one would otherwise hold both.
pub fn drop_returning_pages<T>(mut v: Vec<T>) {
    v.clear();
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        let start = (v.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (v.as_ptr() as usize + bytes) & !(PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside the vector's own allocation, which holds no
            // element any more; the allocator's own words lie outside it (before the
            // buffer and after its last whole page), and the pages read as zeros if
            // touched again.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
    drop(v);
}

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

/// Calls `f` on each of `items` in turn, asking meanwhile for the cache lines of the
/// item a few places on. A fold over events that another thread decoded reads them from
/// memory, and the hardware prefetcher stops at every page boundary: asked for ahead,
/// the wait-state fold takes an eighth less time.
#[inline]
pub fn each_prefetched<T>(items: &[T], mut f: impl FnMut(&T)) {
    const AHEAD: usize = 16;
    let lines = std::mem::size_of::<T>().div_ceil(64);
    for (i, x) in items.iter().enumerate() {
        let ahead = items.as_ptr().wrapping_add(i + AHEAD) as *const u8;
        for line in 0..lines {
            prefetch(ahead.wrapping_add(64 * line));
        }
        f(x);
    }
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
