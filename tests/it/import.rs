//! spoor-import over the real traces of $SPOOR_DATA, checked against their known facts.

use crate::common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// Imports `input` and counts the events of each kind.
fn import_kinds(input: &std::path::Path) -> BTreeMap<String, usize> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.spoor");
    let o = Command::new(bin("import")).arg(input).arg("-o").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(bin("cat")).args(["-f", "json"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut kinds = BTreeMap::new();
    for line in String::from_utf8(o.stdout).unwrap().lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *kinds.entry(v["kind"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    kinds
}

#[test]
fn casita_late_sender_has_its_known_records() {
    let Some(d) = data() else { return };
    let k = import_kinds(&d.join("otf2/casita-4_mpi_ls_barr"));
    assert_eq!(k["enter"], 48);
    assert_eq!(k["leave"], 48);
    assert_eq!(k["send"], 3);
    assert_eq!(k["recv_end"], 3);
    assert_eq!(k["recv_begin"], 3, "one recv_begin per blocking receive");
    assert_eq!(k["coll_begin"], 4);
    assert_eq!(k["coll_end"], 4);
}

#[test]
fn casita_tags_and_pipit_ping_pong_have_their_known_records() {
    let Some(d) = data() else { return };
    let k = import_kinds(&d.join("otf2/casita-10_scorep_mpi_tags/traces.otf2"));
    assert_eq!((k["enter"], k["leave"], k["send"], k["recv_end"]), (196, 196, 18, 18));
    assert!(k["clock_offset"] > 0, "CLOCK_OFFSET records become clock_offset events");
    let k = import_kinds(&d.join("otf2/pipit-ping-pong"));
    assert_eq!((k["send"], k["recv_end"]), (16, 16));
    assert_eq!(k["process_begin"], 2);
}

#[test]
fn bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin("import")).arg(dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("without traces.otf2"));
    let bogus = dir.path().join("traces.otf2");
    std::fs::write(&bogus, b"not an anchor").unwrap();
    let o = Command::new(bin("import")).arg(&bogus).output().unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("traces.otf2"));
    let o = Command::new(bin("import")).arg(dir.path().join("nothing.prv")).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing.prv"));
}

#[test]
fn paraver_epoch_has_one_send_and_one_receive_per_communication() {
    let Some(d) = data() else { return };
    let dir = d.join("paraver/pypop-epoch-2proc");
    let k = import_kinds(&dir);
    assert_eq!(k["send"], 1156);
    let receives = k.get("recv_end").copied().unwrap_or(0) + k.get("irecv_complete").copied().unwrap_or(0);
    assert_eq!(receives, 1156);
    assert_eq!(k["enter"], k["leave"]);
    assert_eq!(k["coll_begin"], k["coll_end"]);
    // The application's begin and end, every state but one "Not created", 8 counters.
    assert_eq!((k["process_begin"], k["process_end"]), (2, 2));
    assert_eq!((k["phase_begin"], k["phase_end"]), (6984, 6984));
    assert_eq!(k["metric"], 8 * 6986);
}

#[test]
fn dumpi_testtrace_has_its_ring_and_collectives() {
    let Some(d) = data() else { return };
    let k = import_kinds(&d.join("dumpi/sst-dumpi-testtrace"));
    // Each of the 4 ranks: Isend to rank+1, Recv from rank-1, Wait, Barrier, Allreduce.
    assert_eq!(k["isend"], 4);
    assert_eq!(k["recv_end"], 4);
    assert_eq!(k["isend_complete"], 4);
    assert_eq!(k["coll_begin"], 8);
    assert_eq!(k["enter"], k["leave"]);
}

#[test]
fn every_real_trace_imports_and_passes_order_check_and_the_pipeline() {
    let Some(d) = data() else { return };
    let traces = [
        "otf2/casita-4_mpi_ls_barr",
        "otf2/casita-10_scorep_mpi_tags",
        "otf2/pipit-ping-pong",
        "paraver/pypop-epoch-2proc",
        "dumpi/sst-dumpi-testtrace",
    ];
    let dir = tempfile::tempdir().unwrap();
    for t in traces {
        let out = dir.path().join("t.spoor");
        let o = Command::new(bin("import")).arg(d.join(t)).arg("-o").arg(&out).output().unwrap();
        assert!(o.status.success(), "{t}: {}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(bin("order")).arg("--check").arg(&out).output().unwrap();
        let report = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && report.contains("no problems"), "{t}: {report}");
        let aligned = dir.path().join("a.spoor");
        let o = Command::new(bin("align")).arg(&out).arg("-o").arg(&aligned).output().unwrap();
        assert!(o.status.success(), "{t}: {}", String::from_utf8_lossy(&o.stderr));
        let ordered = dir.path().join("o.spoor");
        let o = Command::new(bin("order")).arg(&aligned).arg("-o").arg(&ordered).output().unwrap();
        assert!(o.status.success(), "{t}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// The whole run is imported (the application's begin and end, states, counters), so the
/// wall-mode critical path of the EPOCH run, aligned and ordered, is its measured runtime:
/// the header's 11,528,373,565 ns, within 0.1 %.
#[test]
fn paraver_epoch_wall_path_is_the_runtime() {
    let Some(d) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("t.spoor");
    let o = Command::new(bin("import"))
        .arg(d.join("paraver/pypop-epoch-2proc"))
        .arg("-o")
        .arg(&imported)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // What is not imported is counted on standard error by type.
    assert!(err.contains("skipped 3486 values of event type 70000001 (Caller at level 1)"), "{err}");
    let aligned = dir.path().join("a.spoor");
    let o = Command::new(bin("align")).arg(&imported).arg("-o").arg(&aligned).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ordered = dir.path().join("o.spoor");
    let o = Command::new(bin("order")).arg(&aligned).arg("-o").arg(&ordered).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(bin("cp"))
        .args(["--weight", "wall", "--format", "json", "--profile", "none"])
        .arg(&ordered)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let length = v["length_ns"].as_f64().unwrap();
    let runtime = 11_528_373_565.0;
    assert!((length - runtime).abs() <= runtime * 1e-3, "wall path {length} ns, runtime {runtime} ns");
}
