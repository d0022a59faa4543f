//! Phase marks from the program (formats/trace.md, `phase_begin`/`phase_end`): the C
//! functions that c/spoor.h declares, their Fortran entry points, and what the MPI shim's
//! `MPI_Pcontrol(1, "name")` / `MPI_Pcontrol(-1, "name")` calls. A name is interned each
//! time: phases are rare.

use crate::recorder;
use std::ffi::{c_char, CStr};

/// Records a phase mark named by `name` (UTF-8, invalid bytes replaced); nothing for an
/// empty name or outside a recording.
fn mark(name: &[u8], begin: bool) {
    let Some(rec) = recorder() else { return };
    if name.is_empty() {
        return;
    }
    let name = rec.intern(&String::from_utf8_lossy(name));
    if begin {
        rec.phase_begin(name);
    } else {
        rec.phase_end(name);
    }
}

/// A C string's bytes; none for a null pointer.
///
/// # Safety
/// `name` is null or points at a NUL-terminated string.
unsafe fn c_name<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        return &[];
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(name) }.to_bytes()
}

/// A Fortran string: `len` bytes (the hidden length argument), blank-padded as Fortran
/// pads them, so its trailing blanks are trimmed.
///
/// # Safety
/// `name` is null or points at `len` readable bytes.
unsafe fn fortran_name<'a>(name: *const c_char, len: usize) -> &'a [u8] {
    if name.is_null() {
        return &[];
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), len) };
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
    &bytes[..end]
}

/// The begin of phase `name` (a NUL-terminated string) on the calling thread.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn spoor_phase_begin(name: *const c_char) {
    // SAFETY: the caller's promise.
    mark(unsafe { c_name(name) }, true);
}

/// The end of phase `name` on the calling thread.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn spoor_phase_end(name: *const c_char) {
    // SAFETY: the caller's promise.
    mark(unsafe { c_name(name) }, false);
}

/// Fortran's `call spoor_phase_begin('name')` (gfortran's naming: a trailing underscore,
/// the string's length passed after the arguments).
///
/// # Safety
/// `name` is null or points at `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn spoor_phase_begin_(name: *const c_char, len: usize) {
    // SAFETY: the caller's promise.
    mark(unsafe { fortran_name(name, len) }, true);
}

/// Fortran's `call spoor_phase_end('name')`.
///
/// # Safety
/// `name` is null or points at `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn spoor_phase_end_(name: *const c_char, len: usize) {
    // SAFETY: the caller's promise.
    mark(unsafe { fortran_name(name, len) }, false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_names_lose_their_trailing_blanks_only() {
        let name = |s: &str| unsafe { fortran_name(s.as_ptr().cast(), s.len()) }.to_vec();
        assert_eq!(name("solve     "), b"solve");
        assert_eq!(name(" halo x "), b" halo x");
        assert_eq!(name("    "), b"");
        assert_eq!(name(""), b"");
        // The length is the string's: bytes after it are not read.
        let padded = "io  and more";
        assert_eq!(unsafe { fortran_name(padded.as_ptr().cast(), 4) }, b"io");
        assert_eq!(unsafe { fortran_name(std::ptr::null(), 3) }, b"");
        assert_eq!(unsafe { c_name(c"solve".as_ptr()) }, b"solve");
        assert_eq!(unsafe { c_name(std::ptr::null()) }, b"");
    }
}
