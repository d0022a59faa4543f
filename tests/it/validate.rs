//! scripts/validate end to end in its tiny mode (VALIDATE_TINY=1): one case built,
//! measured, recorded and predicted for real, and VALIDATION.md's row read back. No
//! timing is asserted: how close the prediction comes is the script's report, not the
//! test's.
//!
//! Needs Debian's libopenmpi-dev and openmpi-bin (scripts/test installs them); without
//! mpicc it fails, saying so.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// The cells of the table row whose first cell is `case`.
fn row<'a>(md: &'a str, case: &str) -> Vec<&'a str> {
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("| {case} |")))
        .unwrap_or_else(|| panic!("no row for {case} in:\n{md}"));
    line.trim().trim_matches('|').split('|').map(str::trim).collect()
}

#[test]
fn validate_tiny_writes_a_row_with_the_prediction_the_measurement_and_the_error() {
    mpi();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("VALIDATION.md");
    let bindir = Path::new(bin("record")).parent().unwrap();
    let run = Command::new("bash")
        .arg(root().join("scripts/validate"))
        .arg(tmp.path().join("scratch"))
        .env("VALIDATE_TINY", "1")
        .env("VALIDATE_OUT", &out)
        .env("SPOOR_BIN", bindir)
        .env_remove("VALIDATE_CASES")
        .env_remove("VALIDATE_RUNS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_success(&run, "scripts/validate with VALIDATE_TINY=1");
    let md = std::fs::read_to_string(&out).unwrap();
    // The header says which command wrote it, on which machine.
    assert!(md.starts_with("# Validation"), "{md}");
    assert!(md.contains("Written by `VALIDATE_TINY=1 scripts/validate` (1 measured runs a case"), "{md}");
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let model = cpuinfo.lines().find_map(|l| l.strip_prefix("model name")).unwrap();
    let model = model.trim_start_matches([' ', '\t', ':']);
    assert!(md.contains(&format!("cores ({model})")), "{md}");
    // One row: case, program, configurations, command, predicted, measured, runs, error.
    let cells = row(&md, "stencil-2-own");
    assert_eq!(cells.len(), 9, "{cells:?}");
    assert!(cells[4].starts_with("`spoor gag --predict --place 'rank 0;rank 1'"), "{cells:?}");
    let number =
        |i: usize| -> f64 { cells[i].parse().unwrap_or_else(|e| panic!("cell {i} of {cells:?}: {e}")) };
    let (predicted, measured, error) = (number(5), number(6), number(8));
    assert!(predicted > 0.0 && measured > 0.0, "{cells:?}");
    assert!(error.is_finite() && (cells[8].starts_with('+') || cells[8].starts_with('-')), "{cells:?}");
    assert!(md.contains("\nMedian absolute error: "), "{md}");
    assert!(md.contains("within 5 %: ") && md.contains(" of 1 cases."), "{md}");
}
