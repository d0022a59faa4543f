//! Builds libspoor_preload.so into spoor-record, so that an installed spoor-record
//! (`cargo install` installs executables only) still has its library; spoor-record writes
//! it out when none is found beside it (crates/record/src/launch.rs).
//!
//! The library is the spoor-record-preload dependency's output, which cargo builds before
//! linking the binaries; it is taken in at link time (an assembler file whose `.incbin`
//! names it), so that `cargo check` and clippy, which build no library, need none.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    // OUT_DIR is <target>/<profile>/build/spoor-<hash>/out; dependencies go to
    // <target>/<profile>/deps.
    let in_build = out.ancestors().nth(2).is_some_and(|b| b.ends_with("build"));
    let Some(profile) = out.ancestors().nth(3).filter(|_| in_build) else {
        panic!("OUT_DIR {} is not <target>/<profile>/build/<package>/out", out.display())
    };
    let lib = profile.join("deps").join("libspoor_preload.so");
    let asm = out.join("preload.s");
    let quoted = lib.to_str().expect("a UTF-8 target directory").replace('\\', "\\\\").replace('"', "\\\"");
    let text = format!(
        "\t.section .rodata.spoor_preload,\"a\"\n\t.balign 16\n\
         \t.globl spoor_preload_so_start\n\t.hidden spoor_preload_so_start\nspoor_preload_so_start:\n\
         \t.incbin \"{quoted}\"\n\
         \t.globl spoor_preload_so_end\n\t.hidden spoor_preload_so_end\nspoor_preload_so_end:\n\
         \t.section .note.GNU-stack,\"\",%progbits\n"
    );
    std::fs::write(&asm, text).expect("writing preload.s");
    println!("cargo:rustc-link-arg-bin=spoor-record={}", asm.display());
}
