//! libspoor_preload.so: loaded by `spoor-record` through LD_PRELOAD.
//!
//! At load it starts a [`Recorder`] for the process (if `SPOOR_RECORD_DIR` is set and
//! `SPOOR_RECORD_PID`, when set, is this process: children the program starts are not
//! recorded), and finishes the trace at exit. It holds the `-finstrument-functions` hooks
//! (addresses only on the hot path) and, when built against MPI, the PMPI wrappers
//! (c/mpi_shim.c) with their Rust side (`mpi`).
//!
//! Environment: `SPOOR_RECORD_DIR` (output directory), `SPOOR_RECORD_APP` (application
//! name; default the program's name), `SPOOR_RECORD_PID`, `SPOOR_RECORD_BLOCK_BYTES`.

use spoor_record::{Config, Recorder};
use std::sync::OnceLock;

#[cfg(spoor_mpi)]
mod mpi;

static REC: OnceLock<Recorder> = OnceLock::new();
/// The pid that recorded; a forked child (same memory, other pid) records nothing.
static PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[inline]
pub(crate) fn recorder() -> Option<&'static Recorder> {
    let r = REC.get()?;
    (PID.load(std::sync::atomic::Ordering::Relaxed) == std::process::id()).then_some(r)
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
    if let Some(want) = std::env::var("SPOOR_RECORD_PID").ok().and_then(|p| p.parse::<u32>().ok()) {
        if want != pid {
            return;
        }
    }
    let prog = program_name();
    let app =
        std::env::var("SPOOR_RECORD_APP").ok().filter(|a| !a.is_empty()).unwrap_or_else(|| prog.clone());
    let mut cfg = Config::new(dir, &app, &prog, 0);
    cfg.file_name = Some(format!("{}.{pid}.spoor", spoor_record::file_safe(&app)));
    if let Some(b) = std::env::var("SPOOR_RECORD_BLOCK_BYTES").ok().and_then(|b| b.parse().ok()) {
        cfg.block_bytes = b;
    }
    match Recorder::start(cfg) {
        Ok(r) => {
            PID.store(pid, std::sync::atomic::Ordering::Relaxed);
            let _ = REC.set(r);
            // SAFETY: registering plain extern "C" functions with libc.
            unsafe {
                libc::atexit(at_exit);
            }
        }
        Err(e) => eprintln!("spoor-record: {e}; this process is not recorded"),
    }
}

extern "C" fn at_exit() {
    if let Some(r) = recorder() {
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
