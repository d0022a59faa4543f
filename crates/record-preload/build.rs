//! Compiles the PMPI shim (c/mpi_shim.c) against the MPI found through `mpicc` (Open MPI's
//! `--showme`, MPICH's `-show`), links the library to libmpi, and exports the wrappers
//! (a cdylib exports only Rust symbols unless a version script says otherwise). Without
//! MPI the library is built with the `-finstrument-functions` hooks only, and says so;
//! spoor-record then refuses to record a program linked to libmpi with it.
//!
//! The build is redone when MPI appears: without mpicc, cargo watches the directories of
//! PATH (installing MPI adds mpicc to one of them) and PATH itself; with it, mpicc's file.

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

fn main() {
    println!("cargo:rerun-if-changed=c/mpi_shim.c");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo::rustc-check-cfg=cfg(spoor_mpi)");
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
        return;
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
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static:+whole-archive=spoor_mpi_shim");
    let script = format!("{out}/exports.ver");
    std::fs::write(&script, "{ global: MPI_*; };\n").expect("version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={script}");
    println!("cargo:rustc-cfg=spoor_mpi");
}
