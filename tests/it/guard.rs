//! What a stage leaves when something stops it early (spoor_cli::guard): a signal ends it
//! as it would have ended, without its partial output; memory over the limit stops it
//! with the figures, exit code 1, and nothing written.

use crate::common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// spoor-synth writing a trace far too long to finish, stopped by `signal` once its
/// partial output exists.
fn stopped_by(signal: &str, number: i32) {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin("synth"))
        .args(["stencil", "--procs", "64", "--events", "10000000000", "--seed", "1", "-o", "t.spoor"])
        .current_dir(tmp.path())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !entries(tmp.path()).iter().any(|n| n.starts_with(".spoor-partial-")) {
        assert!(start.elapsed() < Duration::from_secs(60), "no partial output: {:?}", entries(tmp.path()));
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(number), "ended by the signal, as without the guard: {status:?}");
    assert!(entries(tmp.path()).is_empty(), "left behind: {:?}", entries(tmp.path()));
}

#[test]
fn sigterm_ends_a_stage_without_its_partial_output() {
    stopped_by("TERM", 15);
}

#[test]
fn sigint_ends_a_stage_without_its_partial_output() {
    stopped_by("INT", 2);
}

#[test]
fn memory_over_the_limit_stops_a_stage_with_the_figures_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let trace = dir.join("s.spoor");
    let out = run(
        "synth",
        &["stencil", "--procs", "64", "--events", "2000000", "--seed", "1", "-o", trace.to_str().unwrap()],
        b"",
        &[],
    );
    assert!(out.status.success());
    let ordered = |name: &str, env: &[(&str, &str)]| {
        run("order", &["-q", trace.to_str().unwrap(), "-o", dir.join(name).to_str().unwrap()], b"", env)
    };
    // Ordering 2 * 10^6 events holds more than 30 MiB.
    let out = ordered("o.spoor", &[("SPOOR_MEMORY_LIMIT", "30M")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("spoor-order: stopped: "), "{err}");
    assert!(
        err.contains("MiB resident") && err.contains("over the 30 MiB that SPOOR_MEMORY_LIMIT allows"),
        "{err}"
    );
    assert_eq!(entries(dir), ["s.spoor"], "nothing written");
    // Under a limit it stays below, the same bytes as without one.
    let free = ordered("free.spoor", &[]);
    let capped = ordered("capped.spoor", &[("SPOOR_MEMORY_LIMIT", "4G")]);
    assert!(free.status.success() && capped.status.success(), "{}", String::from_utf8_lossy(&capped.stderr));
    assert_eq!(
        std::fs::read(dir.join("free.spoor")).unwrap(),
        std::fs::read(dir.join("capped.spoor")).unwrap()
    );
}

#[test]
fn a_memory_limit_that_is_not_a_size_is_a_usage_error() {
    let out = run("cat", &["--count", &testdata("late-sender.txt")], b"", &[("SPOOR_MEMORY_LIMIT", "lots")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "spoor-cat: SPOOR_MEMORY_LIMIT=lots: expected bytes, or a number with K, M or G\n"
    );
}

/// spoor-order of standard input under `sh -c PREFIX`, its spill directory in `tmpdir`.
fn order_stdin(prefix: &str, tmpdir: &Path, out: &Path, stdin: Stdio) -> std::process::Child {
    Command::new("sh")
        .args(["-c", &format!("{prefix} exec \"$0\" \"$@\"")])
        .arg(bin("order"))
        .args(["-q", "-v", "--tmpdir", tmpdir.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn small_stencil(dir: &Path) -> Vec<u8> {
    let trace = dir.join("s.spoor");
    let args =
        ["stencil", "--procs", "16", "--events", "200000", "--seed", "1", "-o", trace.to_str().unwrap()];
    assert!(run("synth", &args, b"", &[]).status.success());
    std::fs::read(trace).unwrap()
}

/// Standard input, read twice, goes to a spill directory inside --tmpdir, gone at the
/// end; -v says how much went there; the output is that of the file read directly.
#[test]
fn standard_input_spills_into_the_tmpdir_and_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, spill) = (tmp.path(), tmp.path().join("spill"));
    std::fs::create_dir(&spill).unwrap();
    let bytes = small_stencil(dir);
    let child = order_stdin("", &spill, &dir.join("o.spoor"), Stdio::piped());
    let out = feed(child, bytes.clone());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let mib =
        format!("{:.1} MiB of disk used in {}", bytes.len() as f64 / (1u64 << 20) as f64, spill.display());
    assert!(err.trim_end().ends_with(&mib), "{err}");
    assert!(entries(&spill).is_empty(), "left behind: {:?}", entries(&spill));
    let direct = run("order", &["-q", dir.join("s.spoor").to_str().unwrap()], b"", &[]);
    assert_eq!(std::fs::read(dir.join("o.spoor")).unwrap(), direct.stdout);
}

/// A spill that cannot be written (the disk full; here the file size limit, which fails
/// the same write) is an error naming the spill directory, and leaves nothing behind.
#[test]
fn a_spill_that_fills_the_disk_is_an_error_naming_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, spill) = (tmp.path(), tmp.path().join("spill"));
    std::fs::create_dir(&spill).unwrap();
    let bytes = small_stencil(dir);
    // 256 KiB (ulimit counts blocks of 512 bytes); the trace is about 1 MiB.
    let child = order_stdin("ulimit -f 512;", &spill, &dir.join("o.spoor"), Stdio::piped());
    let out = feed(child, bytes);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "spoor-order: <stdin>: copying it to {}/spoor-order-spill-",
            spill.display()
        )),
        "{err}"
    );
    assert!(err.contains("File too large"), "{err}");
    assert!(entries(&spill).is_empty(), "left behind: {:?}", entries(&spill));
    assert_eq!(entries(dir), ["s.spoor", "spill"], "no output");
}

/// spoor-order given a run's per-process traces merges them into its spill directory,
/// and aligns a trace whose clocks move into it: a disk that fills on the way (the file
/// size limit here) is an error naming the directory, leaving nothing behind.
#[test]
fn a_merge_or_alignment_that_fills_the_disk_is_an_error_naming_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, spill) = (tmp.path(), tmp.path().join("spill"));
    std::fs::create_dir(&spill).unwrap();
    let run_dir = dir.join("run");
    let synth = ["stencil", "--procs", "16", "--events", "200000", "--seed", "1", "--machines", "4"];
    let skewed = [&synth[..], &["--clock-offset", "40000"]].concat();
    let split = [&synth[..], &["--split", run_dir.to_str().unwrap()]].concat();
    let one = dir.join("skewed.spoor");
    assert!(run("synth", &split, b"", &[]).status.success());
    assert!(run("synth", &[&skewed[..], &["-o", one.to_str().unwrap()]].concat(), b"", &[]).status.success());
    for (input, what) in [(&run_dir, "merged"), (&one, "aligned")] {
        let out = Command::new("sh")
            .args(["-c", "ulimit -f 512; exec \"$0\" \"$@\""])
            .arg(bin("order"))
            .args(["-q", "--align", "--tmpdir", spill.to_str().unwrap(), "-o"])
            .args([dir.join("o.spoor"), input.to_path_buf()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains(&format!("writing to {}/spoor-order-spill-", spill.display())), "{what}: {err}");
        assert!(err.contains("File too large"), "{what}: {err}");
        assert!(entries(&spill).is_empty(), "{what}: left behind: {:?}", entries(&spill));
        assert_eq!(entries(dir), ["run", "skewed.spoor", "spill"], "{what}: no output");
    }
}

/// SIGTERM while standard input is being spilled removes the spill directory.
#[test]
fn sigterm_while_spilling_removes_the_spill_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, spill) = (tmp.path(), tmp.path().join("spill"));
    std::fs::create_dir(&spill).unwrap();
    let bytes = small_stencil(dir);
    let mut child = order_stdin("", &spill, &dir.join("o.spoor"), Stdio::piped());
    // Half the trace, then standard input stays open: the spill is under way.
    let mut input = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut input, &bytes[..bytes.len() / 2]).unwrap();
    let start = Instant::now();
    while entries(&spill).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no spill directory");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    drop(input);
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(entries(&spill).is_empty(), "left behind: {:?}", entries(&spill));
}

/// Writes `stdin` to the child and waits for it.
fn feed(mut child: std::process::Child, stdin: Vec<u8>) -> std::process::Output {
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut input, &stdin);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn a_stage_that_keeps_the_whole_graph_keeps_one_beyond_its_memory_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = ok("synth", &["stencil", "--procs", "8", "--steps", "500", "--seed", "3"], b"");
    let trace = tmp.path().join("o.spoor");
    std::fs::write(&trace, ok("order", &["-q"], &raw)).unwrap();
    let trace = trace.to_str().unwrap();
    let pag = tmp.path().join("o.pag");
    ok("pag", &["-q", trace, "-o", pag.to_str().unwrap()], b"");
    let pag = pag.to_str().unwrap();
    let spill = tmp.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let tmpdir = spill.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 7] = [
        ("gag", vec!["--predict", "--place-by", "cyclic:4", trace]),
        ("gag", vec!["--predict", "--place-by", "cyclic:4", pag]),
        ("gag", vec!["--dump", "--place-by", "cyclic:4", trace]),
        ("whatif", vec!["search", "4", trace]),
        ("cp", vec!["--zeroing", trace]),
        ("cp", vec!["--near", "3", pag]),
        ("pag", vec!["--dump", trace]),
    ];
    for (stage, args) in &cases {
        let memory = ok(stage, args, b"");
        // No memory for the graph: on disk, the same output, and nothing left behind.
        let spilled = [&["-v", "--memory", "0", "--tmpdir", tmpdir][..], args].concat();
        let out = run(stage, &spilled, b"", &[]);
        let err = text(&out.stderr);
        assert!(out.status.success(), "{stage} {args:?}: {err}");
        assert!(out.stdout == memory, "spoor-{stage} {args:?}: another output");
        assert!(err.contains(&format!("MiB of disk used in {tmpdir}")), "{stage} {args:?}: {err}");
        assert_eq!(entries(&spill), Vec::<String>::new(), "left behind");
    }
    // A disk that fills (a file size limit of 64 KiB, in blocks of 512 bytes) is an error
    // naming the directory, with nothing left behind and no output.
    for file in [trace, pag] {
        let output = tmp.path().join("gag.txt");
        let line = format!(
            "ulimit -f 128; exec {} --predict --place-by cyclic:4 --memory 0 --tmpdir {tmpdir} {file} -o {}",
            bin("gag"),
            output.display()
        );
        let out = Command::new("sh").args(["-c", &line]).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("spilling to {tmpdir}/spoor-gag-spill-")) && err.contains("File too large"),
            "{err}"
        );
        assert_eq!(entries(&spill), Vec::<String>::new(), "left behind");
        assert!(!output.exists());
    }
}
