//! The clocks recorded events carry: wall time (CLOCK_REALTIME, so that traces of
//! different machines start out roughly comparable before spoor-align) and the CPU time of
//! the recording thread (CLOCK_THREAD_CPUTIME_ID) or process.
//!
//! The wall clock is read in user space (the vDSO); a CPU-time clock is a system call,
//! ten times dearer, which is why the recorder reads it only at some events
//! (formats/trace.md, "CPU time of recorded traces").

fn read(clock: libc::clockid_t) -> Option<i64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec; clock_gettime only writes it.
    let r = unsafe { libc::clock_gettime(clock, &mut ts) };
    (r == 0).then(|| ts.tv_sec * 1_000_000_000 + ts.tv_nsec)
}

/// Wall-clock time in nanoseconds since the Unix epoch.
#[inline]
pub fn wall_ns() -> i64 {
    read(libc::CLOCK_REALTIME).unwrap_or(0)
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> i64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// CPU time consumed by the whole process, in nanoseconds.
#[inline]
pub fn process_cpu_ns() -> i64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0)
}

/// The time of any clock, `None` when it cannot be read (e.g. the CPU clock of a thread
/// that has ended).
#[inline]
pub fn read_ns(clock: libc::clockid_t) -> Option<i64> {
    read(clock)
}

/// The CPU-time clock of the calling thread as a clock id other threads can read too
/// (pthread_getcpuclockid); CLOCK_THREAD_CPUTIME_ID, which only the thread itself can
/// read, if there is none.
pub fn this_thread_cpu_clock() -> libc::clockid_t {
    let mut id: libc::clockid_t = libc::CLOCK_THREAD_CPUTIME_ID;
    // SAFETY: pthread_self is the calling thread; `id` is written on success only.
    let r = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
    if r == 0 {
        id
    } else {
        libc::CLOCK_THREAD_CPUTIME_ID
    }
}
