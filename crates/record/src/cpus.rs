//! Where the recorded process runs: the CPUs it may run on and those it was seen on,
//! noted in the definitions when the trace is finished (formats/trace.md, "Recorded
//! placement"), so that the analyses know whether processes shared processors.

use spoor_model::placement::{cpu_list, key, ALLOWED_KEY, USED_KEY};
use spoor_model::Definitions;
use std::sync::atomic::{AtomicU64, Ordering};

/// CPUs past this many are not noted.
const MAX_CPUS: usize = 1024;

static SEEN: [AtomicU64; MAX_CPUS / 64] = [const { AtomicU64::new(0) }; MAX_CPUS / 64];

/// Notes the CPU the calling thread runs on now (at readings of the CPU clock: a system
/// call already, next to which this costs little).
#[inline]
pub fn note() {
    // SAFETY: sched_getcpu takes nothing and only returns a number.
    let c = unsafe { libc::sched_getcpu() };
    if (0..MAX_CPUS as i32).contains(&c) {
        let (word, bit) = (c as usize / 64, 1u64 << (c % 64));
        if SEEN[word].load(Ordering::Relaxed) & bit == 0 {
            SEEN[word].fetch_or(bit, Ordering::Relaxed);
        }
    }
}

/// Forgets the CPUs seen (a new recording: a forked child's).
pub fn reset() {
    for w in &SEEN {
        w.store(0, Ordering::Relaxed);
    }
}

fn seen() -> Vec<u32> {
    (0..MAX_CPUS)
        .filter(|&c| SEEN[c / 64].load(Ordering::Relaxed) & (1 << (c % 64)) != 0)
        .map(|c| c as u32)
        .collect()
}

/// The CPUs the process may run on (its affinity mask), if the system says.
fn allowed() -> Option<Vec<u32>> {
    // SAFETY: a zeroed cpu_set_t is an empty set, and sched_getaffinity fills at most
    // its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        let n = (8 * std::mem::size_of::<libc::cpu_set_t>()).min(MAX_CPUS);
        Some((0..n).filter(|&c| libc::CPU_ISSET(c, &set)).map(|c| c as u32).collect())
    }
}

/// Writes where process 0 of `defs` (the recorded one) ran into the properties.
pub fn describe(defs: &mut Definitions) {
    let Some(p) = defs.processes.first() else { return };
    let app = defs.apps.get(p.app as usize).and_then(|a| defs.strings.get(a.name)).unwrap_or("").to_owned();
    let name = defs.strings.get(p.name).unwrap_or("").to_owned();
    if let Some(allowed) = allowed().filter(|a| !a.is_empty()) {
        defs.set_property(&key(ALLOWED_KEY, &app, &name), &cpu_list(&allowed));
    }
    let used = seen();
    if !used.is_empty() {
        defs.set_property(&key(USED_KEY, &app, &name), &cpu_list(&used));
    }
}
