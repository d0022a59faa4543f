//! The critical path of a real recorded run: examples/ring.c under spoor-record, where
//! rank 1 is the late sender (it computes 20 ms before passing the token on, six times).
//! Needs Debian's libopenmpi-dev and openmpi-bin (scripts/test installs them); without
//! mpicc the test fails, saying so.

use crate::common::*;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The standard output of a command that must succeed.
fn stdout_of(c: &mut Command, what: &str) -> Vec<u8> {
    let out = c.stdin(Stdio::null()).output().unwrap();
    assert_success(&out, what);
    out.stdout
}

#[test]
fn the_late_senders_computation_is_on_the_critical_path_of_a_real_run() {
    let dir = tempfile::tempdir().unwrap();
    let (mpicc, mpirun) = mpi();
    let exe = dir.path().join("ring");
    let src = root().join("examples/ring.c");
    // -O0 keeps `compute` a function of its own for the procedure hooks.
    stdout_of(Command::new(mpicc).args(["-O0", "-finstrument-functions", "-o"]).arg(&exe).arg(&src), "mpicc");
    let rec = dir.path().join("rec");
    stdout_of(
        Command::new(mpirun)
            .args(["--oversubscribe", "-np", "4", bin("record"), "-o"])
            .arg(&rec)
            .arg("--")
            .arg(&exe)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_btl", "self,vader,tcp")
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
        "mpirun spoor-record ring",
    );
    let mut ranks: Vec<PathBuf> = std::fs::read_dir(&rec).unwrap().map(|e| e.unwrap().path()).collect();
    ranks.sort();
    assert_eq!(ranks.len(), 4);
    let merged = dir.path().join("m.spoor");
    stdout_of(Command::new(bin("merge")).args(&ranks).arg("-o").arg(&merged), "spoor-merge");
    let aligned = dir.path().join("a.spoor");
    stdout_of(Command::new(bin("align")).arg("-q").arg(&merged).arg("-o").arg(&aligned), "spoor-align");
    let ordered = dir.path().join("o.spoor");
    stdout_of(Command::new(bin("order")).arg("-q").arg(&aligned).arg("-o").arg(&ordered), "spoor-order");
    let json = stdout_of(
        Command::new(bin("cp")).arg(&ordered).args([
            "--weight",
            "wall",
            "--profile",
            "process,procedure",
            "-f",
            "json",
        ]),
        "spoor-cp",
    );
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let row = |level: usize, name: &str| {
        v["profiles"][level]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map_or(0, |r| r["time_ns"].as_i64().unwrap())
    };
    // Six rounds of 20 ms of busy computing on rank 1 (wall time: at least 20 ms each,
    // more when the oversubscribed machine takes the processor away).
    assert!(row(1, "compute") >= 120_000_000, "{}", String::from_utf8_lossy(&json));
    assert!(row(0, "rank 1") >= row(1, "compute"), "{}", String::from_utf8_lossy(&json));
    // Wall mode: the path is as long as the run (first to last recorded event).
    assert!(v["length_ns"].as_i64().unwrap() > row(1, "compute"));
}
