//! libspoor_preload.so: loaded by `spoor-record` through LD_PRELOAD.
//!
//! At load it starts a [`Recorder`] for the process (if `SPOOR_RECORD_DIR` is set and
//! `SPOOR_RECORD_PID`, when set, is this process: children the program starts are not
//! recorded), and finishes the trace at exit. It holds the `-finstrument-functions` hooks
//! (addresses only on the hot path) and, when built against MPI, the PMPI wrappers
//! (c/mpi_shim.c) with their Rust side (`mpi`), and the phase marks a program sets through
//! c/spoor.h, its Fortran entry points or MPI_Pcontrol (`phases`).
//!
//! Environment: `SPOOR_RECORD_DIR` (output directory), `SPOOR_RECORD_APP` (application
//! name; default the program's name), `SPOOR_RECORD_PID`, `SPOOR_RECORD_BLOCK_BYTES`,
//! `SPOOR_RECORD_CPU_INTERVAL_NS` ([`spoor_record::Config::cpu_interval_ns`]).

use spoor_record::{Config, Recorder};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

#[cfg(any(spoor_mpi, spoor_pvm))]
mod calls;
#[cfg(spoor_mpi)]
mod mpi;
mod phases;
#[cfg(spoor_pvm)]
mod pvm;

static REC: OnceLock<Recorder> = OnceLock::new();
/// This process records. A forked child (same memory, other pid) does not: the fork
/// handler clears it (asking getpid on every event would be a system call each).
static ACTIVE: AtomicBool = AtomicBool::new(false);

#[inline]
pub(crate) fn recorder() -> Option<&'static Recorder> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return None;
    }
    REC.get()
}

extern "C" fn forked_child() {
    ACTIVE.store(false, Ordering::Relaxed);
}

fn program_name() -> String {
    std::fs::read_link("/proc/self/exe")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "program".into())
}

extern "C" fn init() {
    let Some(dir) = std::env::var_os("SPOOR_RECORD_DIR") else { return };
    let pid = std::process::id();
    let pvm_parent = pvm_parent();
    if let Some(want) = std::env::var("SPOOR_RECORD_PID").ok().and_then(|p| p.parse::<u32>().ok()) {
        if want != pid && pvm_parent.is_none() {
            return;
        }
    }
    let prog = program_name();
    let app =
        std::env::var("SPOOR_RECORD_APP").ok().filter(|a| !a.is_empty()).unwrap_or_else(|| prog.clone());
    // A spawned task is named by its task id once it enrols; until then by its pid, so
    // that tasks that never enrol stay apart.
    let process = if pvm_parent.is_some() { format!("{prog} pid {pid}") } else { prog.clone() };
    let mut cfg = Config::new(dir, &app, &process, 0);
    #[cfg(spoor_pvm)]
    if let Some(parent) = pvm_parent {
        cfg.parent = Some((pvm::task_name(parent), parent));
    }
    cfg.file_name = Some(format!("{}.{pid}.spoor", spoor_record::file_safe(&app)));
    if let Some(b) = std::env::var("SPOOR_RECORD_BLOCK_BYTES").ok().and_then(|b| b.parse().ok()) {
        cfg.block_bytes = b;
    }
    if let Some(n) = std::env::var("SPOOR_RECORD_CPU_INTERVAL_NS").ok().and_then(|n| n.parse().ok()) {
        cfg.cpu_interval_ns = n;
    }
    match Recorder::start(cfg) {
        Ok(r) => {
            let _ = REC.set(r);
            #[cfg(spoor_pvm)]
            if let Some(parent) = pvm_parent {
                pvm::started_by(parent, 1);
            }
            // SAFETY: registering plain extern "C" functions with libc.
            unsafe {
                libc::pthread_atfork(None, None, Some(forked_child));
                libc::atexit(at_exit);
            }
            ACTIVE.store(true, Ordering::Relaxed);
            warn_if_mpi_unrecorded();
        }
        Err(e) => eprintln!("spoor-record: {e}; this process is not recorded"),
    }
}

/// The spawning task when this process is a PVM task the daemon started for a recorded
/// task (the recording reaches it through PVM_EXPORT, not through spoor-record).
fn pvm_parent() -> Option<u32> {
    #[cfg(spoor_pvm)]
    return pvm::spawned_by();
    #[cfg(not(spoor_pvm))]
    None
}

/// Built without the PMPI (PVM) wrappers, the library records nothing of a program's MPI
/// (PVM): spoor-record refuses programs linked to libmpi (libpvm3), and this says so for
/// the others (the library loaded through another library or dlopen), once, at start or
/// at exit.
fn warn_if_mpi_unrecorded() {
    static WARNED: AtomicBool = AtomicBool::new(false);
    // SAFETY: looking up a symbol by a NUL-terminated name in the loaded objects.
    let loaded = |sym: &std::ffi::CStr| !unsafe { libc::dlsym(libc::RTLD_DEFAULT, sym.as_ptr()) }.is_null();
    let missing = if !cfg!(spoor_mpi) && loaded(c"PMPI_Init") {
        Some(("MPI", "libopenmpi-dev"))
    } else if !cfg!(spoor_pvm) && loaded(c"pvm_mytid") {
        Some(("PVM", "pvm-dev"))
    } else {
        None
    };
    if let Some((what, package)) = missing {
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "spoor-record: this program uses {what} but libspoor_preload.so was built without {what} \
                 wrappers: its {what} calls are not recorded (install {package} and build spoor again)"
            );
        }
    }
}

extern "C" fn at_exit() {
    if let Some(r) = recorder() {
        warn_if_mpi_unrecorded();
        if let Err(e) = r.finish() {
            eprintln!("spoor-record: cannot finish the trace {}: {e}", r.path().display());
        }
    }
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

/// GCC and Clang call this on entry to every function compiled with `-finstrument-functions`.
#[no_mangle]
pub extern "C" fn __cyg_profile_func_enter(this_fn: *mut libc::c_void, _call_site: *mut libc::c_void) {
    if let Some(r) = recorder() {
        r.enter_addr(this_fn as usize);
    }
}

/// ... and this on exit.
#[no_mangle]
pub extern "C" fn __cyg_profile_func_exit(this_fn: *mut libc::c_void, _call_site: *mut libc::c_void) {
    if let Some(r) = recorder() {
        r.leave_addr(this_fn as usize);
    }
}
