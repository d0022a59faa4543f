//! spoor-calibrate's network models (formats/network.md, "Fitting a model") fitted to
//! hand-made traces with known answers (testdata/whatif/net-*.txt), and its collective
//! and communication-cost tables measured with real MPI (which needs mpicc and mpirun: scripts/test installs
//! them; without them that test fails, saying so).

use crate::common::*;
use std::path::Path;

/// testdata/whatif/net-NAME.txt ordered, in `dir`.
fn ordered(dir: &Path, name: &str) -> String {
    let o = dir.join(format!("{name}.o")).to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata(&format!("whatif/net-{name}.txt")), "-o", &o]);
    o
}

/// The value of `key = "VALUE"` or `key = VALUE` in a model.
fn value<'a>(model: &'a str, key: &str) -> Option<&'a str> {
    model
        .lines()
        .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"'))
}

/// A duration or bandwidth of the model, without its unit.
fn number(model: &str, key: &str, unit: &str) -> f64 {
    let v = value(model, key).unwrap_or_else(|| panic!("no {key} in\n{model}"));
    v.strip_suffix(unit).unwrap_or_else(|| panic!("{key} = {v}: not in {unit}")).parse().unwrap()
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= want.abs() * 0.01
}

#[test]
fn calibrate_fits_latency_and_bandwidth_of_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "linear");
    let toml = dir.path().join("net.toml");
    let out = run("calibrate", &["--from-trace", &o, "-o", toml.to_str().unwrap()], b"", &[]);
    assert_success(&out, "spoor-calibrate --from-trace -o net.toml");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!e.contains("warning") && !e.contains("saturated"), "{e}");
    let m = std::fs::read_to_string(&toml).unwrap();
    // Remote: 1000 ns + 1 ns a byte; local: 200 ns + 1 ns per 4 bytes.
    assert!(close(number(&m, "latency", "ns"), 1000.0), "{m}");
    assert!(close(number(&m, "bandwidth", "B/s"), 1e9), "{m}");
    assert!(close(number(&m, "local_latency", "ns"), 200.0), "{m}");
    assert!(close(number(&m, "local_bandwidth", "B/s"), 4e9), "{m}");
    assert_eq!(value(&m, "local"), Some("machine"), "{m}");
    assert!(value(&m, "links_in").is_none() && value(&m, "links_out").is_none(), "{m}");
    assert!(m.contains("# 6 remote and 4 local messages"), "{m}");
    assert!(m.contains("# remote: 6 messages: latency 1000 ns, bandwidth 1000000000B/s; R^2 1.0000"), "{m}");
    assert!(m.contains("median relative error 0.0 %"), "{m}");
    // --form model on standard output gives the same model.
    let stdout = ok_text("calibrate", &["--from-trace", &o, "--form", "model"]);
    assert_eq!(stdout.lines().skip(1).collect::<Vec<_>>(), m.lines().skip(1).collect::<Vec<_>>());
    // The table keeps its form, with the line's quality as comments.
    let t = ok_text("calibrate", &["--from-trace", &o]);
    assert!(t.contains("\nbytes,local_ns,remote_ns\n64,216,1064\n"), "{t}");
    assert!(t.contains("# line fit: remote: 6 messages: latency 1000 ns"), "{t}");
    // --form table wins over the .toml name.
    let t2 = dir.path().join("t.toml");
    ok_text("calibrate", &["--from-trace", &o, "--form", "table", "-o", t2.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&t2).unwrap().contains("\nbytes,local_ns,remote_ns\n"));
    // --local never: every message remote (the local ones now scatter the line).
    let m = ok_text("calibrate", &["-q", "--from-trace", &o, "--local", "never", "--form", "model"]);
    assert_eq!(value(&m, "local"), Some("never"), "{m}");
    assert!(value(&m, "local_latency").is_none() && m.contains("# 10 remote and 0 local messages"), "{m}");
    // --local processor: p0 to p2 are different processes, so remote too.
    let m = ok_text("calibrate", &["-q", "--from-trace", &o, "--local", "processor", "--form", "model"]);
    assert!(m.contains("# 10 remote and 0 local messages (local: processor)"), "{m}");
}

#[test]
fn calibrate_sees_a_saturated_link() {
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "saturated");
    let out = run("calibrate", &["--from-trace", &o, "--form", "model"], b"", &[]);
    assert_success(&out, "spoor-calibrate --from-trace --form model");
    let (m, e) = (text(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(e.contains("note: the link was saturated: 12 remote messages"), "{e}");
    assert!(e.contains("took 2.000 ns a byte, the 6 that did not 1.000 ns"), "{e}");
    assert!(e.contains("2.00x as long a byte"), "{e}");
    assert!(m.contains("# the link was saturated: "), "{m}");
    assert_eq!((value(&m, "links_in"), value(&m, "links_out")), (Some("1"), Some("1")), "{m}");
    // The line is the messages that had the link alone: the model queues the others.
    assert!(close(number(&m, "latency", "ns"), 1000.0), "{m}");
    assert!(close(number(&m, "bandwidth", "B/s"), 1e9), "{m}");
    // With --local never links belong to processes: p0 and p2 send on their own links
    // and p1 and p3 receive on theirs, so nothing overlapped and the line is all of them.
    let m = ok_text("calibrate", &["-q", "--from-trace", &o, "--local", "never", "--form", "model"]);
    assert!(value(&m, "links_in").is_none() && value(&m, "node").is_none(), "{m}");
    assert!(m.contains("# contention not judged: 0 remote messages of at least 1024 bytes"), "{m}");
    assert!(close(number(&m, "bandwidth", "B/s"), 6e8), "{m}");
    // Quiet says nothing.
    let out = run("calibrate", &["-q", "--from-trace", &o, "--form", "model"], b"", &[]);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn calibrate_warns_of_a_poor_fit() {
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "scattered");
    let out = run("calibrate", &["--from-trace", &o, "--form", "model"], b"", &[]);
    assert_success(&out, "spoor-calibrate --from-trace --form model");
    let (m, e) = (text(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(e.contains("spoor-calibrate: warning: the remote fit is poor: R^2 = "), "{e}");
    assert!(e.contains("(below 0.5)") && e.contains("(above 25 %)"), "{e}");
    assert!(m.contains("# warning: the remote fit is poor"), "{m}");
    // Times falling with the size: no bandwidth to fit.
    assert_eq!(value(&m, "bandwidth"), Some("inf"), "{m}");
    assert!(value(&m, "latency").is_some_and(|l| l.ends_with("ns")), "{m}");
}

#[test]
fn calibrate_options_that_do_not_fit_are_usage_errors() {
    for args in [
        &["--collectives", "--from-trace", "x.o"][..],
        &["--local", "never"],
        &["--form", "model"],
        &["--procs", "2"],
        &["--from-trace", "x.o", "--local", "nowhere"],
        &["--mpi", "--from-trace", "x.o"],
        &["--mpi", "--collectives"],
        &["--hosts", "a,b"],
        &["--mpi", "--hosts", "a"],
        &["--mpi", "--hosts", "a,b,c"],
        &["--mpi", "--hosts", ",b"],
        &["--mpi", "--procs", "2"],
    ] {
        let out = run("calibrate", args, b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn calibrate_measures_collectives_with_mpi() {
    mpi();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("coll.csv");
    let out = run(
        "calibrate",
        &["--collectives", "--procs", "2", "--sizes", "8,1024", "--reps", "10", "-o", csv.to_str().unwrap()],
        b"",
        &[],
    );
    assert_success(&out, "spoor-calibrate --collectives");
    let t = std::fs::read_to_string(&csv).unwrap();
    let mut lines = t.lines().skip_while(|l| l.starts_with('#'));
    assert!(t.starts_with("# measured on ") && t.contains("the median of 10 repetitions"), "{t}");
    assert_eq!(lines.next(), Some("op,procs,bytes,ns"), "{t}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    for op in ["barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall"] {
        let of: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == op).collect();
        assert_eq!(of.len(), if op == "barrier" { 1 } else { 2 }, "{op}: {t}");
        for r in of {
            assert_eq!((r.len(), r[1]), (4, "2"), "{t}");
            assert!(r[3].parse::<f64>().unwrap() > 0.0, "{t}");
            assert!(op == "barrier" || ["8", "1024"].contains(&r[2]), "{t}");
        }
    }
    assert_eq!(rows.len(), 15, "{t}");
}

#[test]
fn calibrate_collectives_without_mpi_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let out = run("calibrate", &["--collectives"], b"", &[("PATH", dir.path().to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("--collectives needs MPI: mpicc not found on PATH (Debian: apt-get install libopenmpi-dev openmpi-bin)"),
        "{e}"
    );
}

#[test]
fn calibrate_measures_a_table_with_mpi() {
    mpi();
    let out = run("calibrate", &["--mpi", "--sizes", "1,64,1024", "--reps", "10"], b"", &[]);
    assert_success(&out, "spoor-calibrate --mpi");
    let (t, e) = (text(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(e.contains("note: no --hosts: the remote column is the local one, measured on this host"), "{e}");
    assert!(
        t.starts_with("# measured on ")
            && t.contains("by spoor-calibrate --mpi: MPI_Send/MPI_Recv ping-pong"),
        "{t}"
    );
    assert!(t.contains("half the median of 10 round trips after 3 warm-ups a size"), "{t}");
    assert!(t.contains("\n# MPI: ") && t.contains("\n# local: mpirun -np 2, rank 0 on "), "{t}");
    assert!(t.contains("\n# no --hosts: the remote column is the local one, measured on this host\n"), "{t}");
    let mut lines = t.lines().skip_while(|l| l.starts_with('#'));
    assert_eq!(lines.next(), Some("bytes,local_ns,remote_ns"), "{t}");
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|f| f.parse().unwrap()).collect()).collect();
    assert_eq!(rows.iter().map(|r| r[0]).collect::<Vec<_>>(), [1.0, 64.0, 1024.0], "{t}");
    for r in &rows {
        assert!(r.len() == 3 && r[1] > 0.0 && r[2] == r[1], "{t}");
    }
    // Made monotone, with a comment line for every raise.
    assert!(rows.windows(2).all(|w| w[1][1] >= w[0][1]), "{t}");
    // -q: no note; -o: the same form in the file.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("mpi.csv");
    let out = run(
        "calibrate",
        &["-q", "--mpi", "--sizes", "8", "--reps", "3", "-o", csv.to_str().unwrap()],
        b"",
        &[],
    );
    assert_success(&out, "spoor-calibrate -q --mpi -o mpi.csv");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = std::fs::read_to_string(&csv).unwrap();
    assert!(t.contains("\nbytes,local_ns,remote_ns\n8,"), "{t}");
}

#[test]
fn calibrate_writes_the_model_of_an_mpi_table_with_its_connection() {
    mpi();
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    let m = model.to_str().unwrap();
    // Both hosts this one: the remote run still goes through --host and --preload-binary.
    let args = ["--mpi", "--hosts", "localhost,localhost", "--sizes", "8,64", "--reps", "3", "-o", m];
    let out = run("calibrate", &args, b"", &[]);
    assert_success(&out, "spoor-calibrate --mpi --hosts -o m.toml");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("so the remote column is not between hosts"), "{e}");
    assert!(e.contains("note: connect: the pair's first round trip took "), "{e}");
    let t = std::fs::read_to_string(&model).unwrap();
    let table = std::fs::read_to_string(dir.path().join("m.csv")).unwrap();
    assert!(t.contains("\ntable = \"m.csv\"\nlocal = \"machine\"\nconnect = "), "{t}");
    let connect: i64 = t.lines().find_map(|l| l.strip_prefix("connect = ")).unwrap().parse().unwrap();
    assert!(connect >= 0, "{t}");
    assert!(table.contains("\nbytes,local_ns,remote_ns\n8,") && table.contains("\n# connect: "), "{table}");
    // The model reads back as --net.
    let trace = dir.path().join("t.o");
    ok_text("order", &["-q", &testdata("whatif/connect.txt"), "-o", trace.to_str().unwrap()]);
    ok_text("gag", &["-q", "--predict", "--place-by", "process", "--net", m, trace.to_str().unwrap()]);
    // A model names its table's file, so it needs one.
    let csv = dir.path().join("m2.csv");
    for extra in [vec![], vec!["-o", csv.to_str().unwrap()]] {
        let mut args = vec!["--mpi", "--sizes", "8", "--reps", "1", "--form", "model"];
        args.extend(extra);
        let out = run("calibrate", &args, b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("give -o FILE.toml"));
    }
    assert!(!csv.exists());
}

#[test]
fn calibrate_mpi_without_mpi_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let out = run("calibrate", &["--mpi"], b"", &[("PATH", dir.path().to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains(
            "--mpi needs MPI: mpicc not found on PATH (Debian: apt-get install libopenmpi-dev openmpi-bin)"
        ),
        "{e}"
    );
}
