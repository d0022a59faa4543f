//! spoor-pag and spoor-cp end to end: pipes from spoor-order, PAG files, output forms,
//! threads, exit codes and errors.

use crate::common::*;
use std::process::{Command, Stdio};

fn ordered(rel: &str) -> Vec<u8> {
    ok("order", &["-q", &testdata(rel)], b"")
}

#[test]
fn order_pag_cp_pipeline_gives_the_hand_worked_answers() {
    let trace = ordered("cp/spa.txt");
    let out = text(&ok("cp", &["--zeroing", "--profile", "procedure"], &trace));
    assert!(out.starts_with("critical path: 9.600 ms (cpu mode, global scope)"), "{out}");
    assert!(out.contains("6.000 ms   62.5%  servBusy2"), "{out}");
    assert!(out.contains("2.000 ms        7.950 ms        1.650 ms  servBusy1"), "{out}");
    // Through a PAG file: the same report.
    let pag = ok("pag", &[], &trace);
    assert!(pag.starts_with(b"\x89SPAG\r\n\x1a"));
    assert_eq!(text(&ok("cp", &["--zeroing", "--profile", "procedure"], &pag)), out);
    let wall = text(&ok("cp", &["--weight", "wall", "--profile", "none"], &trace));
    assert!(wall.starts_with("critical path: 9.700 ms (wall mode"), "{wall}");
}

#[test]
fn zeroing_gives_exclusive_and_inclusive_lengths() {
    // testdata/cp/helper.txt: serve has 0.10 ms of its own on the path and 3.00 ms in
    // the helper it calls; zeroing it with its helper leaves 1.30 ms of 4.40.
    let trace = ordered("cp/helper.txt");
    let out = text(&ok("cp", &["--zeroing", "--profile", "none"], &trace));
    let serve = out.lines().find(|l| l.ends_with("  serve")).unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = serve.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(cols, ["100.000 us", "4.300 ms", "100.000 us", "3.100 ms", "1.300 ms", "3.100 ms", "serve"]);
    let csv = text(&ok("cp", &["--zeroing", "--profile", "none", "-f", "csv"], &trace));
    assert!(csv.contains("\nzeroing,serve,4300000,,on_path_ns=100000\n"), "{csv}");
    assert!(csv.contains("\nzeroing_inclusive,serve,1300000,,on_path_ns=3100000\n"), "{csv}");
    let json = ok("cp", &["--zeroing", "--profile", "none", "-f", "json"], &trace);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["zeroing"][0]["procedure"], "serve");
    assert_eq!(v["zeroing"][0]["inclusive_length_ns"], 1_300_000);
}

#[test]
fn scopes_and_json_and_csv() {
    let trace = ordered("cp/client-server.txt");
    let json = ok(
        "cp",
        &["--scope", "inter", "--app", "clientA", "--profile", "application", "-f", "json", "--path"],
        &trace,
    );
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["length_ns"], 6_300_000);
    assert_eq!(v["scope"], "inter-application clientA");
    let rows = &v["profiles"][0]["rows"];
    assert_eq!(rows[0]["name"], "server");
    assert_eq!(rows[0]["time_ns"], 4_100_000);
    assert_eq!(v["path"].as_array().unwrap().len(), 10);
    assert_eq!(v["path"][1]["via"], "local");
    assert_eq!(v["path"][2]["via"], "message");
    assert_eq!(v["path"][2]["location"], "server");
    let csv = text(&ok(
        "cp",
        &["--scope", "intra", "--app", "clientB", "-f", "csv", "--profile", "process"],
        &trace,
    ));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("section,name,time_ns,share,detail"));
    assert_eq!(lines.next(), Some("length,intra-application clientB,9090000,1,cpu mode"));
    assert_eq!(lines.next(), Some("process,clientB,9090000,1.000000,"));
}

#[test]
fn output_is_identical_on_one_and_many_threads() {
    let trace = ok("synth", &["stencil", "--procs", "12", "--steps", "30"], b"");
    let trace = ok("order", &["-q"], &trace);
    let args = |t: &'static str| ["--threads", t, "--zeroing", "--near", "4", "--profile", "all", "--path"];
    assert_eq!(ok("cp", &args("1"), &trace), ok("cp", &args("4"), &trace));
    assert_eq!(ok("pag", &[], &trace), ok("pag", &[], &trace));
}

#[test]
fn bad_input_is_refused_with_names() {
    // Not ordered, on standard input (read as it is): a hand-written trace in the text form.
    let out = run("cp", &[], &std::fs::read(testdata("late-sender.txt")).unwrap(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("<stdin>: event 0:0 (process_begin) has no Lamport clock"), "{err}");
    // Unordered binary: spoor-cat's binary form has no ordering flags.
    let bin_trace = Command::new(env!("CARGO_BIN_EXE_spoor-cat"))
        .args(["-f", "binary", &testdata("late-sender.txt")])
        .output()
        .unwrap()
        .stdout;
    let out = run("pag", &[], &bin_trace, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("run it through spoor-order first"), "{}", text(&out.stderr));
    let trace = ordered("cp/client-server.txt");
    // Options that name what the trace lacks are usage errors.
    let out = run("cp", &["--scope", "inter", "--app", "nobody"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no application named `nobody`; the trace has: server, clientA, clientB")
    );
    let out = run("cp", &["--phase", "p"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no phase `p`: the trace has no phases"), "{}", text(&out.stderr));
    let out = run("cp", &["--phase", "nosuch"], &ordered("report/server.txt"), &[]);
    assert!(text(&out.stderr).ends_with("the trace has: rpc\n"), "{}", text(&out.stderr));
    let out = run("cp", &["--profile", "galaxy"], &trace, &[]);
    assert!(text(&out.stderr).contains("no profile level `galaxy`; there are: application, machine"));
    // A PAG with a cycle: an arc whose source is its own target.
    let mut pag = ok("pag", &[], &trace);
    let (at, payload_len) = arcs_chunk(&pag);
    // The first arc's target delta is a one-byte varint; its source gap follows.
    let gap_at = at + 9 + 1 + 1;
    pag[gap_at] = 0;
    let crc = crc32(&pag[at + 9..at + 9 + payload_len]);
    pag[at + 5..at + 9].copy_from_slice(&crc.to_le_bytes());
    let out = run("cp", &[], &pag, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("comes from itself: a cycle"), "{}", text(&out.stderr));
    // Truncated PAG.
    let good = ok("pag", &[], &trace);
    let out = run("cp", &[], &good[..good.len() - 5], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("<stdin>"), "{}", text(&out.stderr));
}

/// The offset and payload length of the first arcs chunk (type 4) of a PAG file.
fn arcs_chunk(b: &[u8]) -> (usize, usize) {
    let mut at = 24;
    loop {
        let len = u32::from_le_bytes(b[at + 1..at + 5].try_into().unwrap()) as usize;
        if b[at] == 4 {
            return (at, len);
        }
        at += 9 + len;
    }
}

fn crc32(b: &[u8]) -> u32 {
    // Bitwise CRC-32 (IEEE), enough for a test.
    let mut c = !0u32;
    for &x in b {
        c ^= x as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

#[test]
fn net_table_replaces_message_weights() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("net.csv");
    // 1 ms for any message: the SPA's six messages weigh 1 ms each.
    std::fs::write(&table, "bytes,local_ns,remote_ns\n0,1000000,1000000\n").unwrap();
    let trace = ordered("cp/spa.txt");
    let out = text(&ok("cp", &["--net", table.to_str().unwrap(), "--profile", "procedure"], &trace));
    // Hand-worked: C1 1.00 + 1 + S (0.05 + 2 + 0.05 + 0.05) + ... the server never waits
    // for client 2 or 3 (their requests arrive at 2.5 and 3.0 ms); it ends its last
    // service at 1+1+0.05+2+0.05+0.05 + 0.05+3+0.05+0.05 + 0.05+3+0.05 = 10.40, and the
    // reply reaches client 3 a ms later: 11.40 + its last 0.10 = 11.50 ms.
    assert!(out.starts_with("critical path: 11.500 ms"), "{out}");
    std::fs::write(&table, "bytes,local_ns,remote_ns\n0,5,5\n10,4,4\n").unwrap();
    let out = run("cp", &["--net", table.to_str().unwrap()], &trace, &[]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("not monotone"), "{}", text(&out.stderr));
}

/// The SPA's four processes share one machine: with free local messages and 1 ms remote
/// ones, `--local` decides which column they take. Remote, they are the hand-worked
/// 11.50 ms above; local (the default, by machine), every message is free: 9.50 ms.
#[test]
fn local_means_what_the_user_says() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("net.csv");
    std::fs::write(&table, "bytes,local_ns,remote_ns\n0,0,1000000\n").unwrap();
    let table = table.to_str().unwrap();
    let trace = ordered("cp/spa.txt");
    let length = |extra: &[&str]| {
        let args: Vec<&str> = ["--net", table, "--profile", "none"].iter().chain(extra).copied().collect();
        text(&ok("cp", &args, &trace)).lines().next().unwrap().to_owned()
    };
    assert!(length(&[]).starts_with("critical path: 9.500 ms"), "{}", length(&[]));
    assert!(length(&["--local", "machine"]).starts_with("critical path: 9.500 ms"));
    for remote in ["processor", "never"] {
        let got = length(&["--local", remote]);
        assert!(got.starts_with("critical path: 11.500 ms"), "{remote}: {got}");
    }
    let out = run("cp", &["--net", table, "--local", "rack"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected processor, machine, never"), "{}", text(&out.stderr));
    let out = run("cp", &["--local", "never"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--net"), "{}", text(&out.stderr));
}

#[test]
fn net_table_warnings_name_the_command_that_reads_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("spa.spoor");
    std::fs::write(&trace, ordered("cp/spa.txt")).unwrap();
    let trace = trace.to_str().unwrap();
    let table = dir.path().join("net.csv");
    std::fs::write(&table, "bytes,local_ns,remote_ns\n0,5,5\n10,4,4\n").unwrap();
    let table = table.to_str().unwrap();
    // Both columns fall from 5 ns at 0 bytes to 4 ns at 10 bytes: a warning each.
    let warnings = |command: &str| {
        ["local", "remote"]
            .map(|col| {
                format!(
                    "{command}: warning: {table}: {col} time falls from 5 ns at 0 bytes to 4 ns at 10 bytes (not monotone)\n"
                )
            })
            .concat()
    };
    for (name, command) in [("cp", "spoor-cp"), ("pag", "spoor-pag")] {
        let out = run(name, &["--net", table, trace, "-o", "/dev/null"], b"", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        // spoor-pag also says what its notes say (the server's receives from any source).
        let notes = if name == "pag" {
            "spoor-pag: note: 3 receive(s) from any source: they keep the sends they matched, which \
             under another timing could be others (spoor-gag and spoor-whatif --wildcards arrival \
             serve a server loop's requests as they arrive)\n"
        } else {
            ""
        };
        assert_eq!(text(&out.stderr), warnings(command) + notes);
        let out = run(name, &["-q", "--net", table, trace, "-o", "/dev/null"], b"", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "spoor-{name} -q");
    }
}

#[test]
fn spoor_report_draws_the_critical_path() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("ls.spoor");
    std::fs::write(&trace, ordered("late-sender.txt")).unwrap();
    let t = trace.to_str().unwrap();
    let report = env!("CARGO_BIN_EXE_spoor-report");
    let svg = Command::new(report)
        .args([t, "-f", "svg", "-t", "spacetime", "--critical-path", "wall"])
        .output()
        .unwrap();
    assert!(svg.status.success(), "{}", text(&svg.stderr));
    let svg = text(&svg.stdout);
    let overlay = &svg[svg.find(r#"<g class="overlay""#).expect("the path is drawn")..];
    let overlay = &overlay[..overlay.find("</g>").unwrap()];
    // Two messages (rank 0 to 1, 1 to 2) and the barrier (rank 2's begin to rank 1's end).
    assert_eq!(overlay.matches(r#"class="arc""#).count(), 3, "{overlay}");
    let chrome = Command::new(report).args([t, "-f", "chrome", "--critical-path", "cpu"]).output().unwrap();
    assert!(chrome.status.success());
    assert!(text(&chrome.stdout).contains("critical path (cpu mode)"));
    // Standard input is read twice from a copy on disk, named <stdin> in errors.
    let piped =
        Command::new(report).args(["-", "--critical-path", "wall"]).stdin(Stdio::null()).output().unwrap();
    assert_eq!(piped.status.code(), Some(1));
    assert!(text(&piped.stderr).contains("<stdin>: byte 0: the input is empty"), "{}", text(&piped.stderr));
    assert!(!text(&piped.stderr).contains("spill"), "{}", text(&piped.stderr));
}

#[test]
fn wall_critical_path_of_real_traces_is_their_elapsed_time() {
    let Some(data) = data() else { return };
    let traces = [
        "otf2/casita-10_scorep_mpi_tags/traces.otf2",
        "otf2/casita-4_mpi_ls_barr/traces.otf2",
        "otf2/pipit-ping-pong/traces.otf2",
        "paraver/pypop-epoch-2proc/epoch_2proc.prv.gz",
    ];
    for t in traces {
        let path = data.join(t);
        let imported = ok("import", &["-q", path.to_str().unwrap()], b"");
        let aligned = ok("align", &["-q"], &imported);
        let ordered = ok("order", &["-q"], &aligned);
        let r = spoor_format::TraceReader::from_bytes(t, ordered.clone(), Default::default()).unwrap();
        let (_, events) = r.read_all().unwrap();
        // Clock-offset samples carry no activity: the run is its other events.
        let walls = || events.iter().filter(|e| e.kind.name() != "clock_offset").map(|e| e.wall);
        let elapsed = walls().max().unwrap() - walls().min().unwrap();
        let out = run("cp", &["--weight", "wall", "-f", "json", "--profile", "none"], &ordered, &[]);
        assert!(out.status.success(), "{t}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("warning"), "{t}: aligned clocks: {}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["length_ns"].as_i64().unwrap(), elapsed, "{t}");
        assert!(v.get("notes").is_none(), "{t}: {v}");
        // The ideal (cpu) path is never longer than the measured one.
        let json = ok("cp", &["-f", "json", "--profile", "none"], &ordered);
        let cpu: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert!(cpu["length_ns"].as_i64().unwrap() <= elapsed, "{t}");
    }
}

#[test]
fn a_graph_over_the_memory_given_gives_the_same_report_without_it() {
    // Over --memory, a trace file's global path is found in two passes without the graph.
    let Some(data) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let traces = [
        "otf2/casita-10_scorep_mpi_tags/traces.otf2",
        "otf2/casita-4_mpi_ls_barr/traces.otf2",
        "otf2/pipit-ping-pong/traces.otf2",
        "paraver/pypop-epoch-2proc/epoch_2proc.prv.gz",
    ];
    for (k, t) in traces.iter().enumerate() {
        let imported = ok("import", &["-q", data.join(t).to_str().unwrap()], b"");
        let ordered = ok("order", &["-q"], &ok("align", &["-q"], &imported));
        let trace = dir.path().join(format!("{k}.spoor"));
        std::fs::write(&trace, &ordered).unwrap();
        let trace = trace.to_str().unwrap();
        for weight in ["wall", "cpu"] {
            let report = |memory: &str| {
                let args = ["-q", "--weight", weight, "--profile", "all", "--path", "-f", "json", "--memory"];
                let out = run("cp", &[&args[..], &[memory, trace]].concat(), b"", &[]);
                assert!(out.status.success(), "{t}: {}", text(&out.stderr));
                // On a terminal each pass shows its progress; here, nothing.
                assert_eq!(text(&out.stderr), "", "{t}");
                out.stdout
            };
            let streamed = report("0");
            assert_eq!(text(&streamed), text(&report("1G")), "{t} ({weight})");
            let v: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
            assert!(v["path"].as_array().is_some_and(|p| !p.is_empty()), "{t}");
        }
    }
    let out = run("cp", &["--memory", "lots", "-"], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`lots`: expected bytes"), "{}", text(&out.stderr));
}

#[test]
fn a_pag_over_the_memory_given_is_written_as_it_is_built_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.spoor");
    let raw = ok("synth", &["stencil", "--procs", "8", "--steps", "3000", "--seed", "2"], b"");
    std::fs::write(&trace, ok("order", &["-q"], &raw)).unwrap();
    let trace = trace.to_str().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    for weight in ["wall", "cpu"] {
        let whole = dir.path().join(format!("whole-{weight}.pag"));
        let built = dir.path().join(format!("built-{weight}.pag"));
        ok("pag", &["-q", "--weight", weight, trace, "-o", whole.to_str().unwrap()], b"");
        let args =
            ["-q", "-v", "--memory", "0", "--tmpdir", spill.to_str().unwrap(), "--weight", weight, trace];
        let out = run("pag", &[&args[..], &["-o", built.to_str().unwrap()]].concat(), b"", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(std::fs::read(&whole).unwrap() == std::fs::read(&built).unwrap(), "{weight}: other bytes");
        // -v says what went to disk, and where; nothing is left there.
        let said = text(&out.stderr);
        assert!(said.contains(&format!("MiB of disk used in {}", spill.display())), "{said}");
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    }
    // A spill directory that cannot be made: an error naming it, and no output.
    let built = dir.path().join("none.pag");
    let out = run(
        "pag",
        &["--memory", "0", "--tmpdir", "/nonexistent/spill", trace, "-o", built.to_str().unwrap()],
        b"",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/spill"), "{}", text(&out.stderr));
    assert!(!built.exists());
    // A disk that fills while spilling (a file size limit: 256 KiB, in blocks of 512
    // bytes): an error naming the spill file, and nothing left behind.
    let cmd = format!(
        "ulimit -f 512; exec {} --memory 0 --tmpdir {} {trace} -o {}",
        bin("pag"),
        spill.display(),
        built.display()
    );
    let out = Command::new("sh").args(["-c", &cmd]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}/spoor-pag-spill-", spill.display())) && err.contains("File too large"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    assert!(!built.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4 + 2);
}

#[test]
fn a_stream_over_the_memory_given_is_read_twice_from_a_copy() {
    // Standard input is copied to --tmpdir, then read as the file it is a copy of: the
    // same path (but for the input's name) and the same PAG, and nothing left there.
    let dir = tempfile::tempdir().unwrap();
    let raw = ok("synth", &["stencil", "--procs", "8", "--steps", "2000", "--seed", "5"], b"");
    let ordered = ok("order", &["-q"], &raw);
    let trace = dir.path().join("t.spoor");
    std::fs::write(&trace, &ordered).unwrap();
    let trace = trace.to_str().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let tmpdir = spill.to_str().unwrap();
    let args = ["-q", "--profile", "all", "--path", "-f", "json", "--memory", "0"];
    let from_file = text(&ok("cp", &[&args[..], &[trace]].concat(), b""));
    let out = run("cp", &[&args[..], &["-v", "--tmpdir", tmpdir, "-"]].concat(), &ordered, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        from_file.replacen(&format!("\"input\":\"{trace}\""), "\"input\":\"-\"", 1)
    );
    assert!(text(&out.stderr).contains(&format!("MiB of disk used in {tmpdir}")), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    let whole = ok("pag", &["-q", trace], b"");
    let out = run("pag", &["-q", "--memory", "0", "--tmpdir", tmpdir, "-"], &ordered, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout == whole, "a PAG built from standard input differs");
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
    // A damaged stream is named as given, not as its copy.
    let mut damaged = ordered.clone();
    let mid = damaged.len() / 2;
    damaged[mid..mid + 64].fill(0xa5);
    for stage in ["cp", "pag"] {
        let out = run(stage, &["-q", "--memory", "0", "--tmpdir", tmpdir, "-"], &damaged, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stage}: {err}");
        assert!(err.contains("<stdin>") && !err.contains(tmpdir), "{stage}: {err}");
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "{stage}");
    }
}

/// spoor-cp given a trace not yet ordered (one file, text or binary, or a run's directory
/// of per-process traces) orders it first: the results spoor-order's output gives (with
/// --align, spoor-order --align's), whether the ordered events go straight into the graph
/// or, past --memory or with options that read the graph, through a copy in --tmpdir;
/// on one thread as on many.
#[test]
fn a_trace_not_yet_ordered_is_ordered_first_with_the_results_of_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    let spec = ["stencil", "--procs", "6", "--steps", "40", "--clock-offset", "40000", "--machines", "6"];
    ok("synth", &[&spec[..], &["-o", &p("raw.spoor")]].concat(), b"");
    ok("synth", &[&spec[..], &["--split", &p("run")]].concat(), b"");
    std::fs::create_dir(p("spill")).unwrap();
    let spill = p("spill");
    let cases = [
        (p("raw.spoor"), false),
        (p("raw.spoor"), true),
        (p("run"), true),
        (testdata("late-sender.txt"), false),
        (testdata("order/skew.txt"), true),
    ];
    for (k, (input, align)) in cases.iter().enumerate() {
        let order_args: &[&str] = if *align { &["-q", "--align"] } else { &["-q"] };
        let o = p(&format!("o{k}.spoor"));
        ok("order", &[order_args, &[input.as_str(), "-o", &o]].concat(), b"");
        let cp_align: &[&str] = if *align { &["--align"] } else { &[] };
        for options in [
            &["--profile", "all", "--path"][..],
            &["-f", "csv", "--weight", "wall", "--profile", "all"],
            &["--memory", "0", "--tmpdir", &spill, "--path"],
            &["--zeroing", "--top", "3", "--tmpdir", &spill],
        ] {
            let case = format!("{input} align {align} {options:?}");
            let expected = ok("cp", &[&["-q"], options, &[o.as_str()]].concat(), b"");
            let got = ok("cp", &[&["-q"], cp_align, options, &[input.as_str()]].concat(), b"");
            assert_eq!(text(&got), text(&expected), "{case}");
            assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "{case}: a file left behind");
            let one_thread =
                ok("cp", &[&["-q", "--threads", "1"], cp_align, options, &[input.as_str()]].concat(), b"");
            assert_eq!(text(&one_thread), text(&expected), "{case} on one thread");
        }
        // What spoor-order says on standard error, spoor-cp says too.
        let said = |stage: &str, args: &[&str]| {
            let out = run(stage, &[args, &[input.as_str()]].concat(), b"", &[]);
            assert_success(&out, input);
            text(&out.stderr).replace("spoor-order:", "spoor-cp:")
        };
        let order_said = said("order", &[cp_align, &["-o", &o]].concat());
        assert_eq!(said("cp", &[cp_align, &["-o", &p("cp.txt")]].concat()), order_said, "{input}");
    }
    // Disk: none where the graph fits, the ordered copy where it does not.
    let out = run("cp", &["-q", "-v", &p("raw.spoor")], b"", &[]);
    assert!(text(&out.stderr).contains("no disk used"), "{}", text(&out.stderr));
    let out = run("cp", &["-q", "-v", "--memory", "0", "--tmpdir", &spill, &p("raw.spoor")], b"", &[]);
    assert!(text(&out.stderr).contains(&format!("of disk used in {spill}")), "{}", text(&out.stderr));
    // --align is for what is still to be ordered.
    let out = run("cp", &["--align", &p("o0.spoor")], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is ordered already"), "{}", text(&out.stderr));
    let out = run("cp", &["--align", "-"], &std::fs::read(p("raw.spoor")).unwrap(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a stream is read as it is"), "{}", text(&out.stderr));
    // A damaged trace in the run is named, and no output is written.
    std::fs::write(p("run/zz-broken.spoor"), b"SPOR garbage").unwrap();
    let out = run("cp", &["-q", "--align", &p("run"), "-o", &p("cp2.txt")], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("zz-broken.spoor"), "{}", text(&out.stderr));
    assert!(!std::path::Path::new(&p("cp2.txt")).exists(), "a half-written output");
}

/// Runs `cmd` (a shell command line) with a terminal as its standard error, through
/// util-linux's `script`; returns what the terminal showed.
fn on_a_terminal(cmd: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux's `script` runs commands on a terminal for this test; install util-linux");
    assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn long_work_shows_progress_on_a_terminal_only() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |f: &str| tmp.path().join(f).to_str().unwrap().to_owned();
    let (split, ordered) = (p("raw"), p("o"));
    ok("synth", &["stencil", "--procs", "16", "--events", "300000", "--seed", "1", "--split", &split], b"");
    // Every stage from the per-process traces on: events, their rate, and (the count
    // known) the time left.
    let bar = |shown: &str| shown.contains("events (") && shown.contains(" events/s");
    let stages = [
        ("merge", format!("{split} -o {}", p("m"))),
        // One whole trace: its blocks copied as they are.
        ("merge", format!("{} -o {}", p("m"), p("m1"))),
        ("align", format!("{} -o {}", p("m"), p("a"))),
        ("order", format!("{} -o {ordered}", p("a"))),
        ("cp", format!("{ordered} -o /dev/null")),
        // Without the graph: two passes.
        ("cp", format!("--memory 0 {ordered} -o /dev/null")),
        ("pag", format!("{ordered} -o /dev/null")),
        ("pag", format!("--memory 0 --tmpdir {} {ordered} -o /dev/null", tmp.path().display())),
        ("gag", format!("--predict --place-by process {ordered}")),
        ("whatif", format!("procedure stencilUpdate {ordered}")),
        ("report", format!("-t waits {ordered}")),
        ("diagnose", ordered.clone()),
    ];
    for (stage, args) in &stages {
        let shown = on_a_terminal(&format!("{} {args}", bin(stage)));
        assert!(bar(&shown), "spoor-{stage} shows no progress: {shown}");
        assert!(shown.contains(" left)"), "spoor-{stage} shows no time left: {shown}");
        // Both passes over the trace show, each named.
        if matches!(*stage, "align" | "order") {
            assert!(shown.contains("reading █") && shown.contains("writing █"), "spoor-{stage}: {shown}");
        }
        // The wait states' root causes, after the pass.
        if matches!(*stage, "report" | "diagnose") {
            assert!(shown.contains("root causes █") && shown.contains(" waits ("), "spoor-{stage}: {shown}");
        }
        if args.starts_with("--memory 0") && *stage == "cp" {
            assert!(
                shown.contains("critical path, pass 1 █") && shown.contains("critical path, pass 2 █"),
                "spoor-{stage}: {shown}"
            );
        }
        // And the pass that follows the fixes' critical paths.
        if *stage == "diagnose" {
            assert!(shown.contains("critical paths █"), "spoor-{stage}: {shown}");
        }
    }
    assert!(
        !bar(&on_a_terminal(&format!("{} -q {ordered} -o /dev/null", bin("cp")))),
        "-q still shows progress"
    );
    // Not a terminal: nothing on standard error but what spoor-cp has to say.
    let out = run("cp", &[&ordered, "-o", "/dev/null"], b"", &[]);
    assert!(out.status.success());
    assert!(
        !bar(&String::from_utf8_lossy(&out.stderr)),
        "progress in a log: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Score-P's casita-10 archive: its ranks keep their own clocks and recorded offsets
/// against rank 0 at the start and end (up to 3.656 us; no message breaks the clock
/// condition). Imported with raw clocks, ordered without spoor-align, the path is
/// flagged; after spoor-align the wall-mode path is the run's elapsed time (647.425 ms,
/// from rank 0's first event to rank 2's `leave main`; rank 0's last clock-offset
/// sample comes 3.35 ms later and is not part of it), with MPI_Init on top.
#[test]
fn casita_10_paths_know_their_clocks() {
    let Some(data) = data() else { return };
    let path = data.join("otf2/casita-10_scorep_mpi_tags/traces.otf2");
    let imported = ok("import", &["-q", path.to_str().unwrap()], b"");
    let json = |ordered: &[u8]| -> (serde_json::Value, String) {
        let args = ["--weight", "wall", "-f", "json", "--profile", "procedure", "--path"];
        let out = run("cp", &args, ordered, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (serde_json::from_slice(&out.stdout).unwrap(), text(&out.stderr))
    };
    let (raw, _) = json(&ok("order", &["-q"], &imported));
    let notes = raw["notes"].to_string();
    assert!(
        notes.contains("the clocks are not aligned: 18 clock-offset sample(s), offsets up to 3.656 us"),
        "{notes}"
    );
    assert!(notes.contains("spoor-align"), "{notes}");

    let aligned = ok("order", &["-q"], &ok("align", &["-q"], &imported));
    let (v, stderr) = json(&aligned);
    assert_eq!(stderr, "");
    let length = v["length_ns"].as_i64().unwrap();
    let r = spoor_format::TraceReader::from_bytes("aligned", aligned, Default::default()).unwrap();
    let (_, events) = r.read_all().unwrap();
    let walls = || events.iter().filter(|e| e.kind.name() != "clock_offset").map(|e| e.wall);
    let elapsed = walls().max().unwrap() - walls().min().unwrap();
    assert!((length - elapsed).abs() * 1000 <= elapsed, "path {length} ns, elapsed {elapsed} ns");
    assert_eq!(length / 1_000_000, 647, "{length}");
    let path = v["path"].as_array().unwrap();
    assert!(path.iter().all(|s| s["kind"] != "clock_offset"), "{path:?}");
    assert_eq!(path.last().unwrap()["kind"], "leave", "{path:?}");
    let top = &v["profiles"][0]["rows"][0];
    assert_eq!(top["name"], "MPI_Init", "{top}");
}

/// testdata/order/skew-samples.txt: rank 1's clock runs 1 ms ahead, so its five answers
/// arrive, by the recorded times, before they were sent. Every stage that reads those
/// times says so and names spoor-align; after spoor-align none does.
#[test]
fn violating_clocks_are_never_silent() {
    let trace = testdata("order/skew-samples.txt");
    let warning = "warning: 5 messages are received before they are sent (clock-condition violations)";
    let out = run("order", &["-q", &trace], b"", &[]);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("spoor-order: {warning}")) && err.contains("run spoor-align first"),
        "{err}"
    );
    let ordered = out.stdout;
    for (cmd, args) in [("pag", vec!["-q"]), ("cp", vec!["-q", "--weight", "wall"]), ("cp", vec!["-q"])] {
        let out = run(cmd, &args, &ordered, &[]);
        assert!(out.status.success());
        let err = text(&out.stderr);
        assert!(err.contains(&format!("spoor-{cmd}: {warning}")), "{cmd} {args:?}: {err}");
    }
    // The output of spoor-cp carries it too, with the samples that were not applied.
    let json = ok("cp", &["-q", "--weight", "wall", "-f", "json"], &ordered);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let notes = v["notes"].to_string();
    assert!(notes.contains("5 messages are received before they are sent"), "{notes}");
    assert!(notes.contains("2 clock-offset sample(s), offsets up to 1.000 ms, were not applied"), "{notes}");
    // A PAG file keeps what it takes to say it.
    let pag = ok("pag", &["-q", "--weight", "wall"], &ordered);
    let out = run("cp", &["-q", "--weight", "wall"], &pag, &[]);
    assert!(text(&out.stderr).contains(warning), "{}", text(&out.stderr));

    let aligned = ok("align", &["-q", &trace], b"");
    let out = run("order", &["-q"], &aligned, &[]);
    assert_eq!(text(&out.stderr), "");
    let out = run("cp", &["-q", "--weight", "wall", "-f", "json"], &out.stdout, &[]);
    assert_eq!(text(&out.stderr), "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("notes").is_none(), "{v}");
    // 0 to 800 us: rank 0's start to rank 1's end, on rank 0's clock.
    assert_eq!(v["length_ns"], 800_000);
}

/// The whole output of the main forms over every hand-made trace of testdata/cp, against
/// testdata/cp/golden/TRACE.FORM (SPOOR_REGENERATE=1 writes them). The trace comes on
/// standard input, so no path of this machine is in the output.
#[test]
fn outputs_match_their_golden_files() {
    let all = ["--profile", "all", "--zeroing", "--near", "3", "--path"];
    let forms: [(&str, Vec<&str>); 5] = [
        ("cpu.out", all.to_vec()),
        ("wall.out", [&["--weight", "wall"][..], &all].concat()),
        ("cpu.csv", [&["-f", "csv"][..], &all].concat()),
        ("wall.csv", [&["-f", "csv", "--weight", "wall"][..], &all].concat()),
        ("cpu.json", [&["-f", "json"][..], &all].concat()),
    ];
    for trace in ["spa", "helper", "barrier", "client-server"] {
        let input = ordered(&format!("cp/{trace}.txt"));
        for (form, args) in &forms {
            golden(&format!("cp/golden/{trace}.{form}"), &text(&ok("cp", args, &input)));
        }
    }
}

/// A run whose clock starts at 1 s, as recorded traces start at their epoch time.
const LATE_START: &str = "spoor-text 1
app 0 shifted
machine 0 node0
process 0 rank0 app=0 machine=0 rank=0
process 1 rank1 app=0 machine=0 rank=1
location 0 rank0 process=0 thread=0
location 1 rank1 process=1 thread=0
comm 0 MPI_COMM_WORLD members=0,1
0 1s     0    process_begin
1 1s     0    process_begin
0 1s     0    enter compute
1 1.001s 1ms  recv_begin from=0 tag=1
0 1.01s  10ms leave compute
0 1.011s 11ms send to=1 tag=1 bytes=8
1 1.012s 1ms  recv_end from=0 tag=1 bytes=8
0 1.02s  20ms process_end
1 1.02s  9ms  process_end
";

#[test]
fn windows_count_from_the_first_event_unless_absolute_and_an_empty_one_is_refused() {
    let trace = ok("order", &["-q"], LATE_START.as_bytes());
    let relative = text(&ok("cp", &["--weight", "wall", "--window", "0..11ms", "--profile", "none"], &trace));
    let absolute =
        text(&ok("cp", &["--weight", "wall", "--window", "@1s..1.011s", "--profile", "none"], &trace));
    assert_eq!(relative, absolute);
    // rank 0's compute from 1 s to 1.01 s, then its send: 11 ms.
    assert!(relative.starts_with("critical path: 11.000 ms (wall mode, global scope"), "{relative}");
    let out = run("cp", &["--window", "@0..5ms"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--window @0..5ms holds no event: the trace runs from 0 to 20 ms after its first event (@1000000000..1020000000 in ns)"),
        "{err}"
    );
    let out = run("cp", &["--window", "30ms..40ms"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = run("cp", &["--window", "5ms..1ms"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("the end is before the start"));
}

#[test]
fn time_inside_blocking_calls_is_never_work() {
    // testdata/cp/spinning.txt, worked by hand: 7 ms of work on rank1, where counting
    // the library's spinning as work would give 8.1 ms.
    let trace = ordered("cp/spinning.txt");
    let out = text(&ok("cp", &["--profile", "procedure"], &trace));
    assert!(out.starts_with("critical path: 7.000 ms (cpu mode, global scope)"), "{out}");
    assert!(out.contains("7.000 ms  100.0%  work"), "{out}");
    assert!(
        out.contains(
            "note: 3.100 ms of CPU time inside blocking calls is communication, not work \
             (MPI_Send 2.000 ms, MPI_Wait 1.000 ms, MPI_Recv 100.000 us)"
        ),
        "{out}"
    );
    let wall = text(&ok("cp", &["--weight", "wall", "--profile", "none"], &trace));
    assert!(wall.starts_with("critical path: 8.100 ms (wall mode"), "{wall}");
    assert!(!wall.contains("blocking calls"), "{wall}");
}

/// A trace recorded on shared processors: its cpu-mode and wall-mode critical paths, and
/// the note that says what cpu mode did not charge.
fn shared_processors_case(file: &str, cpu: &str, lowered: &str, wall: &str) {
    let trace = ordered(file);
    let out = text(&ok("cp", &["--profile", "process"], &trace));
    assert!(out.starts_with(&format!("critical path: {cpu} (cpu mode, global scope)")), "{out}");
    let note = "note: the run was recorded with processes sharing processors (node0: 2 processes on CPU 0): ";
    assert!(out.contains(&format!("{note}{lowered}")), "{out}");
    let w = text(&ok("cp", &["--weight", "wall", "--profile", "none"], &trace));
    assert!(w.starts_with(&format!("critical path: {wall} (wall mode")), "{w}");
    assert!(!w.contains("sharing processors"), "{w}");
}

#[test]
fn a_recording_on_shared_processors_is_not_charged_the_wait_for_a_processor() {
    // testdata/cp/shared-cpu.txt, worked by hand: the message into rank1, which shared
    // CPU 0 with rank0, weighs 10 us (the least of its size) instead of 1.01 ms.
    shared_processors_case(
        "cp/shared-cpu.txt",
        "2.510 ms",
        "1 message arc(s) into them weigh the least transfer time of messages of their size instead of \
         the wait for a processor (1.000 ms less in all)\n",
        "3.510 ms",
    );
}

#[test]
fn a_collective_recorded_on_shared_processors_is_not_charged_the_wait_for_a_processor() {
    // testdata/cp/shared-cpu-coll.txt, worked by hand: the barrier's arc into rank1, which
    // shared CPU 0 with rank0, weighs 10 us (the least barrier arc) instead of 1.01 ms.
    shared_processors_case(
        "cp/shared-cpu-coll.txt",
        "2.010 ms",
        "0 message arc(s) into them weigh the least transfer time of messages of their size instead of \
         the wait for a processor (0 ns less in all); 1 collective arc(s) into them the least time of \
         their operation and size (1.000 ms less)\n",
        "2.510 ms",
    );
}

#[test]
fn receives_from_any_source_are_a_caveat_of_cpu_mode() {
    // testdata/cp/spa.txt: the server takes its three requests from any source.
    let trace = ordered("cp/spa.txt");
    let out = text(&ok("cp", &["--profile", "none"], &trace));
    assert!(out.contains("note: 3 receive(s) from any source:"), "{out}");
    let wall = text(&ok("cp", &["--weight", "wall", "--profile", "none"], &trace));
    assert!(!wall.contains("any source"), "{wall}");
}
