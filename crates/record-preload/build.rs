//! Compiles the PMPI shim (c/mpi_shim.c) against the MPI found through `mpicc` (Open MPI's
//! `--showme`, MPICH's `-show`), links the library to libmpi, and exports the wrappers
//! (a cdylib exports only Rust symbols unless a version script says otherwise). Without
//! MPI the library is built with the `-finstrument-functions` hooks only, and says so;
//! spoor-record then refuses to record a program linked to libmpi with it.
//!
//! The PVM wrappers (c/pvm_shim.c) are compiled when PVM's header is found (`$PVM_ROOT/include`,
//! /usr/include, /usr/local/include: Debian's pvm-dev); they reach libpvm3 through
//! dlsym(RTLD_NEXT), so the library is not linked to it. Without the header, spoor-record
//! refuses programs linked to libpvm3 likewise.
//!
//! The build is redone when MPI or PVM appears: without mpicc, cargo watches the
//! directories of PATH (installing MPI adds mpicc to one of them) and PATH itself; with
//! it, mpicc's file; without pvm3.h, the directories it is looked for in.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `$MPICC`, else the first `mpicc` on PATH.
fn find_mpicc() -> Option<PathBuf> {
    if let Some(cc) = std::env::var_os("MPICC").filter(|c| !c.is_empty()) {
        let cc = PathBuf::from(cc);
        if cc.components().count() > 1 {
            return Some(cc);
        }
        return path_dirs().map(|d| d.join(&cc)).find(|p| p.is_file());
    }
    path_dirs().map(|d| d.join("mpicc")).find(|p| p.is_file())
}

/// The absolute directories of PATH that exist.
fn path_dirs() -> impl Iterator<Item = PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).filter(|d| d.is_absolute() && d.is_dir()).collect::<Vec<_>>().into_iter()
}

fn tokens(mpicc: &Path, args: &[&str]) -> Option<Vec<String>> {
    let out = Command::new(mpicc).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_owned).collect())
}

/// The directories pvm3.h is looked for in, those that exist.
fn pvm_include_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("PVM_ROOT").filter(|r| !r.is_empty()) {
        dirs.push(PathBuf::from(root).join("include"));
    }
    dirs.push("/usr/include".into());
    dirs.push("/usr/local/include".into());
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

fn main() {
    println!("cargo:rerun-if-changed=c/mpi_shim.c");
    println!("cargo:rerun-if-changed=c/pvm_shim.c");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rerun-if-env-changed=PVM_ROOT");
    println!("cargo::rustc-check-cfg=cfg(spoor_mpi)");
    println!("cargo::rustc-check-cfg=cfg(spoor_pvm)");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    // The wrappers to export (a cdylib exports only Rust symbols unless told otherwise).
    let mut exports = Vec::new();
    if build_mpi() {
        exports.push("MPI_*");
    }
    if build_pvm() {
        exports.push("pvm_*");
    }
    if exports.is_empty() {
        return;
    }
    println!("cargo:rustc-link-search=native={out}");
    let script = format!("{out}/exports.ver");
    let globals: String = exports.iter().map(|p| format!("{p}; ")).collect();
    std::fs::write(&script, format!("{{ global: {globals}}};\n")).expect("version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={script}");
}

/// The PMPI shim, when mpicc is found.
fn build_mpi() -> bool {
    let mpicc = find_mpicc();
    let flags = mpicc.as_deref().and_then(|cc| tokens(cc, &["--showme"]).or_else(|| tokens(cc, &["-show"])));
    let (Some(mpicc), Some(flags)) = (mpicc, flags) else {
        // A directory's time changes when a file is added to it: cargo runs this again
        // once mpicc is installed (a missing path would make it run on every build).
        println!("cargo:rerun-if-env-changed=PATH");
        for dir in path_dirs() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        println!(
            "cargo:warning=mpicc not found: libspoor_preload is built without MPI wrappers and \
             spoor-record refuses MPI programs; install libopenmpi-dev (Debian) and build again"
        );
        return false;
    };
    // An MPI removed, upgraded or replaced changes (or removes) mpicc.
    println!("cargo:rerun-if-changed={}", mpicc.display());
    let mut build = cc::Build::new();
    build.file("c/mpi_shim.c").warnings(true).flag_if_supported("-Wno-unused-parameter");
    for f in &flags {
        if let Some(dir) = f.strip_prefix("-I") {
            build.include(dir);
        } else if let Some(dir) = f.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = f.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={lib}");
        } else if let Some(rest) = f.strip_prefix("-Wl,-rpath,") {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{rest}");
        }
    }
    build.cargo_metadata(false).compile("spoor_mpi_shim");
    println!("cargo:rustc-link-lib=static:+whole-archive=spoor_mpi_shim");
    println!("cargo:rustc-cfg=spoor_mpi");
    true
}

/// The PVM wrappers, when pvm3.h is found.
fn build_pvm() -> bool {
    let dirs = pvm_include_dirs();
    let Some(include) = dirs.iter().find(|d| d.join("pvm3.h").is_file()) else {
        for dir in &dirs {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        println!(
            "cargo:warning=pvm3.h not found: libspoor_preload is built without PVM wrappers and \
             spoor-record refuses PVM programs; install pvm-dev (Debian) and build again"
        );
        return false;
    };
    println!("cargo:rerun-if-changed={}", include.join("pvm3.h").display());
    cc::Build::new()
        .file("c/pvm_shim.c")
        .include(include)
        .warnings(true)
        .flag_if_supported("-Wno-unused-parameter")
        .cargo_metadata(false)
        .compile("spoor_pvm_shim");
    // dlsym is in libc since glibc 2.34, in libdl before.
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:rustc-link-lib=static:+whole-archive=spoor_pvm_shim");
    println!("cargo:rustc-cfg=spoor_pvm");
    true
}
