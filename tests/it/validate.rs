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
    // One row: case, program, configurations, command, predicted, interval, measured,
    // runs, error.
    let cells = row(&md, "stencil-2-own");
    assert_eq!(cells.len(), 10, "{cells:?}");
    assert!(
        cells[4].starts_with("`spoor gag --predict --sharing slices --place 'rank 0;rank 1'"),
        "{cells:?}"
    );
    let parse = |c: &str| -> f64 { c.parse().unwrap_or_else(|e| panic!("{c} in {cells:?}: {e}")) };
    let number = |i: usize| parse(cells[i]);
    let (predicted, measured, error) = (number(5), number(7), number(9));
    assert!(predicted > 0.0 && measured > 0.0, "{cells:?}");
    assert!(error.is_finite() && (cells[9].starts_with('+') || cells[9].starts_with('-')), "{cells:?}");
    // The stencil's iterations repeat: an interval around the prediction.
    let (low, high) = cells[6].split_once('–').unwrap_or_else(|| panic!("no interval in {cells:?}"));
    assert!(parse(low) <= predicted && predicted <= parse(high), "{cells:?}");
    assert!(md.contains("\nThe measured median lies within the prediction's interval in "), "{md}");
    assert!(md.contains(" of 1 cases\nwith an interval"), "{md}");
    assert!(md.contains("\nMedian absolute error: "), "{md}");
    assert!(md.contains("within 5 %: ") && md.contains(" of 1 cases."), "{md}");
}
