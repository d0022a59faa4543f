//! Large vectors in large pages.

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
