//! What a stage leaves behind when it stops early, and memory it cannot have.
//!
//! Temporary files (an output not yet renamed into place, later spill files) are
//! registered while they exist; whatever ends the command early removes them: an error
//! (their owners' destructors), SIGINT, SIGTERM or SIGHUP (a thread of its own waits for
//! them, removes the files, then lets the signal end the process as it would have), or
//! memory about to run out. That thread also watches the resident memory: a trace too
//! large for what this machine (or its cgroup, or `SPOOR_MEMORY_LIMIT`) has stops the
//! command with the figures, exit code 1, instead of the kernel killing it without a
//! word.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable that caps a stage's resident memory: bytes, or with a
/// suffix K, M or G (powers of 1024).
pub const MEMORY_LIMIT_VAR: &str = "SPOOR_MEMORY_LIMIT";

/// How often the memory is looked at: a stage can fault in a few hundred megabytes in
/// that time.
const WATCH_EVERY: Duration = Duration::from_millis(10);

static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The last progress a stage reported (events done, and their total or `u64::MAX`), for
/// the message that stops it.
static DONE: AtomicU64 = AtomicU64::new(0);
static TOTAL: AtomicU64 = AtomicU64::new(u64::MAX);

/// A temporary file, removed by the guard if the command stops before it is dropped.
pub struct Temporary(PathBuf);

/// Registers `path` as a temporary file (or directory) until the returned value is dropped.
pub fn temporary(path: &Path) -> Temporary {
    temporaries().push(path.to_owned());
    Temporary(path.to_owned())
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut t = temporaries();
        if let Some(k) = t.iter().rposition(|p| *p == self.0) {
            t.swap_remove(k);
        }
    }
}

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn remove_temporaries() {
    for p in temporaries().iter() {
        // A spill directory goes with what it holds.
        let _ = if p.is_dir() { std::fs::remove_dir_all(p) } else { std::fs::remove_file(p) };
    }
}

/// Remembers how far the stage has got, for the message that stops it.
pub(crate) fn note_progress(done: u64, total: Option<u64>) {
    DONE.store(done, Ordering::Relaxed);
    TOTAL.store(total.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// Starts the guard of `command`; call it from the main thread before any other thread
/// starts (the signals are blocked in it, and so in every thread started after it). A
/// child process gets the usual mask back (Rust's `Command` resets it).
pub fn install(command: &'static str) {
    let limit = match memory_limit_from_env() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{command}: {e}");
            std::process::exit(crate::exit::USAGE);
        }
    };
    #[cfg(target_os = "linux")]
    {
        let set = stop_signals();
        // Below this resident size no check can fire: only it is read every time.
        let floor = limit.unwrap_or_else(|| {
            let total = meminfo().map_or(u64::MAX, |(total, _)| total);
            let cgroup = cgroup_memory().map_or(u64::MAX, |(_, max)| max);
            total.min(cgroup) / 4
        });
        // SAFETY: changes this thread's signal mask only, with a set built by sigaddset.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        // A write past the file size limit (ulimit -f) then fails as a full disk does,
        // with an error the stage reports, instead of killing it with its files left.
        // SAFETY: sets the disposition of one signal to "ignore", before other threads run.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        let spawned = std::thread::Builder::new().name("spoor-guard".into()).spawn(move || loop {
            if let Some(sig) = wait_for_signal(&set, WATCH_EVERY) {
                remove_temporaries();
                die_of(sig);
            }
            let why = resident().filter(|&r| r > floor).and_then(|_| out_of_memory(limit));
            if let Some(why) = why {
                remove_temporaries();
                eprintln!("{command}: {why}");
                // SAFETY: ends the process at once, as a fatal error does; the files it
                // must not leave are removed above.
                unsafe { libc::_exit(crate::exit::BAD_INPUT) };
            }
        });
        if spawned.is_err() {
            // No guard thread: let the signals act as they would without one.
            // SAFETY: as above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (command, limit);
}

/// The memory a stage may still take: `SPOOR_MEMORY_LIMIT` less what it holds, else
/// what the machine has available or its cgroup has left, the less of the two; `None`
/// where the system does not say.
pub fn memory_in_hand() -> Option<u64> {
    if let Ok(Some(limit)) = memory_limit_from_env() {
        return Some(limit.saturating_sub(resident().unwrap_or(0)));
    }
    let machine = meminfo().map(|(_, available)| available);
    let cgroup = cgroup_memory().map(|(held, max)| max.saturating_sub(held));
    machine.into_iter().chain(cgroup).min()
}

/// `SPOOR_MEMORY_LIMIT`, in bytes; `None` when unset or empty.
fn memory_limit_from_env() -> Result<Option<u64>, String> {
    match std::env::var(MEMORY_LIMIT_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_bytes(v.trim())
            .map(Some)
            .ok_or_else(|| format!("{MEMORY_LIMIT_VAR}={v}: expected bytes, or a number with K, M or G")),
        _ => Ok(None),
    }
}

/// `1234`, `64K`, `512M`, `2G`, `1.5G` (powers of 1024) as bytes.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let (num, unit) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((k, _)) => s.split_at(k),
        None => (s, ""),
    };
    let scale: u64 = match unit.to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    let n: f64 = num.trim().parse().ok()?;
    let bytes = (n * scale as f64) as u64;
    (n.is_finite() && bytes > 0).then_some(bytes)
}

#[cfg(target_os = "linux")]
fn stop_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before sigaddset reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

#[cfg(target_os = "linux")]
fn wait_for_signal(set: &libc::sigset_t, timeout: Duration) -> Option<i32> {
    let ts = libc::timespec { tv_sec: timeout.as_secs() as _, tv_nsec: timeout.subsec_nanos() as _ };
    // SAFETY: the set is initialised; a null info pointer is allowed.
    let sig = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (sig > 0).then_some(sig)
}

/// Ends the process by `sig`, as it would have ended without the guard (the status a
/// shell sees is the signal's).
#[cfg(target_os = "linux")]
fn die_of(sig: i32) -> ! {
    // SAFETY: restores the default action of one signal, unblocks it in this thread
    // (the others keep it blocked, so it comes here) and raises it.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

/// What the process may hold, and why it must stop if it holds more: the limit set in
/// the environment; else its cgroup's limit less a reserve; else the machine's memory
/// about to run out (less than the reserve available); the last two only while this
/// process holds a quarter of it or more (it is then the one the kernel would kill).
fn out_of_memory(env_limit: Option<u64>) -> Option<String> {
    let rss = resident()?;
    let progress = progress_words();
    if let Some(limit) = env_limit {
        return (rss > limit).then(|| {
            format!(
                "stopped: {} resident{progress}, over the {} that {MEMORY_LIMIT_VAR} allows: this stage holds the trace in memory and the trace is too large for that",
                gib(rss),
                gib(limit)
            )
        });
    }
    if let Some((held, max)) = cgroup_memory() {
        if held + reserve_of(max) > max && rss > max / 4 {
            return Some(format!(
                "out of memory: {} resident{progress}, its cgroup holding {} of the {} it may use: this stage holds the trace in memory and the trace is too large for it; stopped before the kernel kills it",
                gib(rss),
                gib(held),
                gib(max)
            ));
        }
    }
    let (total, available) = meminfo()?;
    (available < reserve_of(total) && rss > total / 4).then(|| {
        format!(
            "out of memory: {} resident{progress}, {} left of this machine's {}: this stage holds the trace in memory and the trace is too large for this machine; stopped before the kernel kills it",
            gib(rss),
            gib(available),
            gib(total)
        )
    })
}

/// What is kept free of `total`: more than a stage faults in between two checks (a
/// thirty-second, and at least 512 MiB, or a quarter of a small total).
fn reserve_of(total: u64) -> u64 {
    (total / 32).max((total / 4).min(512 << 20))
}

fn progress_words() -> String {
    let (done, total) = (DONE.load(Ordering::Relaxed), TOTAL.load(Ordering::Relaxed));
    match (done, total) {
        (0, _) => String::new(),
        (d, u64::MAX) => format!(" after {d} events"),
        (d, t) => format!(" after {d} of {t} events"),
    }
}

fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// The resident memory, bytes (/proc/self/statm).
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096))
}

/// MemTotal and MemAvailable, bytes.
fn meminfo() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    };
    Some((field("MemTotal:")?, field("MemAvailable:")?))
}

/// The memory this process's cgroup holds that the kernel cannot just drop (what it
/// charges less its page cache, which reading a large trace fills), and its limit, when
/// it has one: cgroup v2 (`memory.max`), else v1's memory controller.
fn cgroup_memory() -> Option<(u64, u64)> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |dir: &Path, file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
    let stat_field = |dir: &Path, name: &str| -> Option<u64> {
        read(dir, "memory.stat")?.lines().find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
    };
    let cgroup_dir = |mount: &str, rel: &str| Path::new(mount).join(rel.trim_start_matches('/'));
    let v2 = own.lines().find_map(|l| l.strip_prefix("0::")).map(|rel| cgroup_dir("/sys/fs/cgroup", rel));
    if let Some(dir) = v2.filter(|d| d.join("memory.max").is_file()) {
        let max = number(read(&dir, "memory.max"))?;
        let current = number(read(&dir, "memory.current"))?;
        return Some((current.saturating_sub(stat_field(&dir, "file ").unwrap_or(0)), max));
    }
    let rel = own.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers.split(',').any(|c| c == "memory").then_some(path)
    })?;
    let dir = cgroup_dir("/sys/fs/cgroup/memory", rel);
    // v1 says "no limit" with a number near 2^63.
    let max = number(read(&dir, "memory.limit_in_bytes")).filter(|&m| m < 1 << 60)?;
    let usage = number(read(&dir, "memory.usage_in_bytes"))?;
    Some((usage.saturating_sub(stat_field(&dir, "total_cache ").unwrap_or(0)), max))
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_bytes("1234"), Some(1234));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes("512m"), Some(512 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5G"), Some(3 << 29));
        for bad in ["", "x", "12Q", "-3M", "0", "M", "0.1", "inf"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_reserve_is_a_thirty_second_and_at_least_512_mib_or_a_quarter() {
        assert_eq!(super::reserve_of(24 << 30), 768 << 20);
        assert_eq!(super::reserve_of(4 << 30), 512 << 20);
        assert_eq!(super::reserve_of(1 << 30), 256 << 20);
    }

    #[test]
    fn a_temporary_file_is_registered_while_it_lives() {
        let p = std::path::PathBuf::from("/nonexistent/spoor-guard-test");
        {
            let _t = super::temporary(&p);
            assert!(super::temporaries().contains(&p));
        }
        assert!(!super::temporaries().contains(&p));
    }
}
