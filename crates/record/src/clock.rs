//! The clocks every recorded event carries: wall time (CLOCK_REALTIME, so that traces
//! of different machines start out roughly comparable before spoor-align) and the CPU
//! time of the recording thread (CLOCK_THREAD_CPUTIME_ID).

fn read(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec; clock_gettime only writes it.
    let r = unsafe { libc::clock_gettime(clock, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Wall-clock time in nanoseconds since the Unix epoch.
#[inline]
pub fn wall_ns() -> i64 {
    read(libc::CLOCK_REALTIME)
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> i64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by the whole process, in nanoseconds.
#[inline]
pub fn process_cpu_ns() -> i64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}
