//! Compiles the PMPI shim (c/mpi_shim.c) against the MPI found through `mpicc` (Open MPI's
//! `--showme`, MPICH's `-show`), links the library to libmpi, and exports the wrappers
//! (a cdylib exports only Rust symbols unless a version script says otherwise). Without
//! MPI the library is built with the `-finstrument-functions` hooks only, and says so.

use std::process::Command;

fn tokens(args: &[&str]) -> Option<Vec<String>> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
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
    let flags = tokens(&["--showme"]).or_else(|| tokens(&["-show"]));
    let Some(flags) = flags else {
        println!(
            "cargo:warning=mpicc not found: libspoor_preload is built without MPI wrappers \
             (install libopenmpi-dev to record MPI programs)"
        );
        return;
    };
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
