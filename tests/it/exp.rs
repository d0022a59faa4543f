//! spoor-exp end to end: runs added and listed as a user does, the output forms, the
//! gate's exit code, concurrent adds from several processes, the POP factors of a real
//! run, and the errors.

use crate::common::*;
use std::process::{Command, Stdio};

/// An ordered synthetic trace in `dir`.
fn synth(dir: &tempfile::TempDir, name: &str, args: &[&str]) -> String {
    let raw = dir.path().join(format!("{name}.raw")).to_string_lossy().into_owned();
    let mut a = args.to_vec();
    a.extend(["-o", &raw]);
    ok("synth", &a, b"");
    let out = dir.path().join(format!("{name}.o")).to_string_lossy().into_owned();
    ok("order", &["-q", &raw, "-o", &out], b"");
    out
}

fn exp(db: &str, args: &[&str]) -> std::process::Output {
    let mut a = vec!["--db", db];
    a.extend(args);
    run("exp", &a, b"", &[])
}

fn exp_ok(db: &str, args: &[&str]) -> String {
    let out = exp(db, args);
    assert_success(&out, &format!("spoor-exp {args:?}"));
    text(&out.stdout)
}

#[test]
fn runs_are_added_listed_compared_and_gated() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db").to_string_lossy().into_owned();
    let base = synth(&d, "base", &["stencil", "--procs", "8", "--steps", "20", "--seed", "1"]);
    let again = synth(&d, "again", &["stencil", "--procs", "8", "--steps", "20", "--seed", "2"]);
    let slow =
        synth(&d, "slow", &["stencil", "--procs", "8", "--steps", "20", "--extra-work", "late:3:3000000"]);
    assert_eq!(exp_ok(&db, &["add", "-q", &base, &again, "--attr", "version=1"]).lines().count(), 2);
    exp_ok(&db, &["add", "-q", &slow, "--attr", "version=2", "--attr", "flags=-O3 -g"]);
    // The same content twice is refused unless asked for.
    let out = exp(&db, &["add", "-q", &base]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("run 1 already holds a trace of this content; --again"),
        "{}",
        text(&out.stderr)
    );
    let list = exp_ok(&db, &["list", "--where", "procs >= 8 and version = 1", "-f", "csv"]);
    let rows: Vec<&str> = list.lines().skip(2).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].starts_with("1,") && rows[1].starts_with("2,"), "{list}");
    let json: serde_json::Value = serde_json::from_str(&exp_ok(&db, &["list", "-f", "json"])).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 3, "{json}");
    let show = exp_ok(&db, &["show", "3"]);
    assert!(show.contains("flags") && show.contains("-O3 -g") && show.contains("Bottlenecks"), "{show}");
    // The difference names the injected procedure; the gate fails on it, exit 1.
    let diff = exp_ok(&db, &["diff", "1", "3", "--threshold", "5%"]);
    assert!(diff.lines().any(|l| l.starts_with("/Code/late") && l.contains("new")), "{diff}");
    let gate = exp(&db, &["check", "1", "3", "--max-regression", "5%"]);
    assert_eq!(gate.status.code(), Some(1));
    let err = text(&gate.stderr);
    assert!(
        err.contains("run 3 regressed beyond 5% against run 1") && err.contains("/Code/late cp"),
        "{err}"
    );
    let table = text(&gate.stdout);
    assert!(table.lines().any(|l| l.starts_with("/ ") && l.contains(" elapsed ")), "{table}");
    let pass = exp_ok(&db, &["check", "1", "2"]);
    assert!(pass.contains("no regression beyond 5 %"), "{pass}");
    // Sets: medians of version 1 against version 2.
    let sets = exp_ok(&db, &["diff", "version = 1", "version = 2", "--metric", "elapsed"]);
    assert!(sets.contains("2 runs where version = 1 (A)"), "{sets}");
    // Directives for spoor-diagnose, which takes them.
    let dirs = d.path().join("d.txt").to_string_lossy().into_owned();
    exp_ok(&db, &["directives", "1", "2", "-o", &dirs]);
    let diag = ok_text("diagnose", &["-q", &again, "--directives", &dirs]);
    assert!(diag.contains("pruned"), "{diag}");
    exp_ok(&db, &["rm", "2"]);
    assert_eq!(exp_ok(&db, &["list", "-f", "csv"]).lines().skip(2).count(), 2);
}

#[test]
fn several_processes_adding_at_once_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db").to_string_lossy().into_owned();
    let traces: Vec<String> = (1..=4)
        .map(|s| synth(&d, &format!("t{s}"), &["ring", "--procs", "4", "--seed", &s.to_string()]))
        .collect();
    let children: Vec<_> = traces
        .iter()
        .map(|t| {
            Command::new(bin("exp"))
                .args(["--db", &db, "add", "-q", t])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let list = exp_ok(&db, &["list", "-f", "csv"]);
    assert_eq!(list.lines().skip(2).count(), 4, "{list}");
}

#[test]
fn bad_input_is_refused_with_what_was_expected() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db").to_string_lossy().into_owned();
    // An unordered trace.
    let raw = d.path().join("raw.spoor").to_string_lossy().into_owned();
    ok("synth", &["ring", "--procs", "2", "-o", &raw], b"");
    let out = exp(&db, &["add", "-q", &raw]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("spoor-order"), "{}", text(&out.stderr));
    // A query that does not parse: usage, with the column.
    let out = exp(&db, &["list", "--where", "procs >="]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("column 9: expected a number or a string"), "{}", text(&out.stderr));
    // A run that is not there.
    let out = exp(&db, &["show", "7"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no run 7"), "{}", text(&out.stderr));
    // A map file with a bad line.
    let t = synth(&d, "t", &["ring", "--procs", "2"]);
    exp_ok(&db, &["add", "-q", &t]);
    let map = d.path().join("m.txt");
    std::fs::write(&map, "# renamed\n/Code/a -> /Code/b\n/Code/c /Code/d\n").unwrap();
    let out = exp(&db, &["diff", "1", "1", "--map", map.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("m.txt:3: expected `FROM -> TO`"), "{}", text(&out.stderr));
    let out = exp(&db, &["diff", "1", "1", "--threshold", "five"]);
    assert_eq!(out.status.code(), Some(2));
    // A file that is not a store is left as it was.
    let junk = d.path().join("junk.db");
    std::fs::write(&junk, b"not a database, not at all, but long enough to have a header....").unwrap();
    let before = std::fs::read(&junk).unwrap();
    let out = exp(junk.to_str().unwrap(), &["list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a spoor-exp store"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&junk).unwrap(), before);
    // A moved trace is reported by show, and its stored figures remain.
    std::fs::rename(&t, d.path().join("moved.o")).unwrap();
    let out = exp(&db, &["show", "1"]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("is no longer there (moved or removed)"), "{}", text(&out.stderr));
}

/// The POP factors of the EPOCH 2-process trace in $SPOOR_DATA against those BSC's
/// Dimemas gave (the data README): load balance 99.76 %, serialization 99.84 %, transfer
/// 99.77 %, each within 0.5 points.
#[test]
fn pop_factors_of_a_real_run_agree_with_dimemas() {
    let Some(data) = data() else { return };
    let d = tempfile::tempdir().unwrap();
    let t = epoch_ordered(&data, d.path());
    let db = d.path().join("runs.db").to_string_lossy().into_owned();
    exp_ok(&db, &["add", "-q", &t, "--attr", "program=epoch"]);
    let json: serde_json::Value =
        serde_json::from_str(&exp_ok(&db, &["scaling", "--where", "program = epoch", "-f", "json"])).unwrap();
    let row = &json["rows"][0];
    let col = |name: &str| {
        let k = json["columns"].as_array().unwrap().iter().position(|c| c["name"] == name).unwrap();
        row[k].as_f64().unwrap()
    };
    assert_eq!(col("procs"), 2.0);
    for (name, dimemas) in [("load balance", 99.76), ("serialization", 99.84), ("transfer", 99.77)] {
        assert!((col(name) - dimemas).abs() <= 0.5, "{name}: {} against {dimemas}", col(name));
    }
}
