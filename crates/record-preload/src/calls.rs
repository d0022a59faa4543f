//! What the MPI and PVM wrappers share: whether this process records, and the enter and
//! leave of a wrapped call, named by the wrapper's string literal.

use crate::recorder;
use rustc_hash::FxHashMap as HashMap;
use spoor_model::{Kind, StrId};
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Function names (static C strings of the shims) by address.
static NAMES: Mutex<Option<HashMap<usize, StrId>>> = Mutex::new(None);

#[no_mangle]
pub extern "C" fn spoor_rs_active() -> c_int {
    recorder().is_some_and(|r| !r.is_finished()) as c_int
}

/// Recently used function names, without a lock: each slot holds the low 32 bits of a
/// name's address and its string id + 1 (0: empty). The names are string literals of the
/// shim, all in this library's read-only data (far less than 4 GiB), so distinct names
/// differ in their low 32 bits.
static NAME_SLOTS: [AtomicU64; 256] = [const { AtomicU64::new(0) }; 256];

#[inline]
fn name_id(name: *const c_char) -> Option<StrId> {
    let rec = recorder()?;
    let key = name as usize as u64 & 0xffff_ffff;
    let slot = &NAME_SLOTS[(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize];
    let v = slot.load(Ordering::Relaxed);
    if v != 0 && v >> 32 == key {
        return Some((v & 0xffff_ffff) as StrId - 1);
    }
    let id = {
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        *names.get_or_insert_with(HashMap::default).entry(name as usize).or_insert_with(|| {
            // SAFETY: the shim passes NUL-terminated string literals.
            let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            rec.intern(&s)
        })
    };
    if (id as u64) < 0xffff_ffff {
        slot.store(key << 32 | (id as u64 + 1), Ordering::Relaxed);
    }
    Some(id)
}

#[no_mangle]
pub extern "C" fn spoor_rs_enter(name: *const c_char) {
    if let (Some(r), Some(id)) = (recorder(), name_id(name)) {
        r.record(Kind::Enter { proc: id });
    }
}

/// The enter of a call whose next event begins a wait (a blocking receive, a collective):
/// that event's reading of the CPU clock serves this one too.
#[no_mangle]
pub extern "C" fn spoor_rs_enter_wait(name: *const c_char) {
    if let (Some(r), Some(id)) = (recorder(), name_id(name)) {
        r.record_before_wait(Kind::Enter { proc: id });
    }
}

#[no_mangle]
pub extern "C" fn spoor_rs_leave(name: *const c_char) {
    if let (Some(r), Some(id)) = (recorder(), name_id(name)) {
        r.record(Kind::Leave { proc: id });
    }
}
