//! Faulting in the graph's big arrays ahead of the builder.
//!
//! A PAG of 10^8 nodes fills about 4 GB of fresh memory, and the kernel's work to map
//! it page by page, on first write, costs about a third as much CPU time as building
//! the graph. Done by the building thread, it delays the whole pipeline; asked for in
//! advance from another thread (`MADV_POPULATE_WRITE`, Linux 5.14), it runs on a core
//! the decoding leaves idle.

/// The address range of a vector's whole capacity.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    start: usize,
    len: usize,
}

impl Region {
    /// The range of `v`'s capacity in memory (none for a vector in a file, whose pages
    /// would stay resident once faulted in).
    pub fn of<T: Copy>(v: &spoor_format::spill::SpillVec<T>) -> Region {
        let len = if v.is_spilled() { 0 } else { v.capacity() * std::mem::size_of::<T>() };
        Region { start: v.as_ptr() as usize, len }
    }
}

/// Faults in `regions`, a slice of each in turn so that all advance together as the
/// builder fills them, until `stop` is set. Best effort: a kernel without
/// `MADV_POPULATE_WRITE`, or memory already freed, only stops it.
pub fn populate(regions: &[Region], stop: &std::sync::atomic::AtomicBool) {
    #[cfg(target_os = "linux")]
    {
        // Background work: the builder, which it serves, comes first on a busy core.
        // SAFETY: setpriority on this thread (PRIO_PROCESS with a thread id) only
        // lowers its own priority.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
        }
        const PAGE: usize = 4096;
        const STEPS: usize = 512;
        for step in 0..STEPS {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            for r in regions {
                let lo = (r.start + r.len * step / STEPS).next_multiple_of(PAGE);
                let hi = ((r.start + r.len * (step + 1) / STEPS) / PAGE * PAGE).max(lo);
                if hi == lo {
                    continue;
                }
                // SAFETY: the range lies within a live allocation of the builder (or, if
                // the builder has grown and freed it since, fails harmlessly);
                // MADV_POPULATE_WRITE maps pages without changing their contents.
                let rc =
                    unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_POPULATE_WRITE) };
                if rc != 0 {
                    return;
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (regions, stop);
}

/// `n` copies of `value` beside a graph: in its `arena`'s file, or in memory as
/// [`filled`] makes them.
pub fn filled_in<T: Copy>(
    n: usize,
    value: T,
    arena: Option<&std::sync::Arc<spoor_format::spill::Arena>>,
) -> spoor_format::spill::SpillVec<T> {
    match arena {
        None => filled(n, value).into(),
        Some(_) => spoor_format::spill::SpillVec::filled_in(n, value, arena),
    }
}

/// A vector of `n` copies of `value` whose memory, when large, asks for transparent
/// huge pages first (`spoor_format::mem::ask_huge_pages`): on a virtual machine,
/// faulting in 4 KiB pages costs more than filling them.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    spoor_format::mem::ask_huge_pages(&v);
    v.resize(n, value);
    v
}
