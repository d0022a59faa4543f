//! Memory advice for the graph's big arrays.

/// Asks the kernel to back the capacity of `v` with transparent huge pages where the
/// system allows it (Linux's `madvise` mode): a PAG of 10^8 nodes fills about 4 GB, and
/// faulting it in 4 KiB pages costs more CPU than building the graph. Only the
/// 2 MiB-aligned middle of the allocation is advised; elsewhere, or when the kernel
/// says no, nothing changes but speed.
pub fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if std::env::var_os("SPOOR_NOHUGE").is_some() {
            return;
        }
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 2 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let lo = start.next_multiple_of(HUGE);
        let hi = (start + bytes) / HUGE * HUGE;
        if hi > lo {
            // SAFETY: [lo, hi) lies inside the vector's own allocation; MADV_HUGEPAGE
            // changes how pages are backed, never their contents.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
}
