//! Fatal signals (SIGTERM, SIGINT, SIGSEGV) close every trace before the process dies,
//! so a killed run leaves a complete file (or, if a buffer was busy, every block written
//! before). The previous disposition is kept: a program's own handler still runs (the
//! trace is then only flushed, since the program may go on), and a default action still
//! kills the process with the same signal, so the exit status does not change.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

const SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGSEGV];

/// The disposition each signal had before ours (indexed like `SIGNALS`).
static OLD: Mutex<[Option<libc::sigaction>; 3]> = Mutex::new([None, None, None]);
static INSTALLED: AtomicBool = AtomicBool::new(false);

fn slot(sig: libc::c_int) -> Option<usize> {
    SIGNALS.iter().position(|&s| s == sig)
}

fn handler_address() -> usize {
    on_signal as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize
}

/// Installs the handlers once (later calls do nothing; see [`reinstall`]).
pub fn install() {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    reinstall();
}

/// Installs the handlers again over whatever is installed now (e.g. after MPI_Init, whose
/// library installs its own), chaining to it. A signal that is ignored stays ignored.
pub fn reinstall() {
    let mut old = OLD.lock().unwrap_or_else(|e| e.into_inner());
    for (i, &sig) in SIGNALS.iter().enumerate() {
        // SAFETY: sigaction with a null new action only reads the current one.
        let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut cur) } != 0 {
            continue;
        }
        if cur.sa_sigaction == libc::SIG_IGN || cur.sa_sigaction == handler_address() {
            continue;
        }
        // SAFETY: a zeroed sigaction is valid; the handler is an extern "C" fn with the
        // SA_SIGINFO signature; sa_mask is initialised by sigemptyset.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler_address();
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            if libc::sigaction(sig, &act, std::ptr::null_mut()) == 0 {
                old[i] = Some(cur);
            }
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let prev = slot(sig).and_then(|i| match OLD.try_lock() {
        Ok(g) => g[i],
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner()[i],
        Err(_) => None,
    });
    let chains = prev.is_some_and(|p| p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN);
    crate::recorder::flush_from_signal(!chains);
    // SAFETY: we restore or call what was installed before us, with the arguments the
    // kernel gave us; raising a signal whose action is the default ends the process.
    unsafe {
        match prev {
            Some(p) if chains => {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(p.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    f(sig);
                }
            }
            _ => {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut dfl.sa_mask);
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
                libc::raise(sig);
            }
        }
    }
}

/// Holds back SIGTERM and SIGINT on this thread while alive: a section that holds the
/// trace file's lock takes one, so a handler never finds the lock taken by the code it
/// interrupted (it would have to leave out the block being written, and not close).
/// The signal is delivered when the guard drops.
pub(crate) struct Deferred(libc::sigset_t);

impl Deferred {
    pub(crate) fn new() -> Self {
        // SAFETY: sigset_t values are initialised by sigemptyset before use, and
        // pthread_sigmask only changes the calling thread's mask.
        unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            libc::sigaddset(&mut block, libc::SIGTERM);
            libc::sigaddset(&mut block, libc::SIGINT);
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut old);
            libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
            Deferred(old)
        }
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new` on the same thread.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}
