//! spoor-diagnose end to end: a real Score-P run's first finding, the output forms,
//! directives from a file, and the errors and exit codes.

use crate::common::*;

fn ordered(dir: &tempfile::TempDir, src: &str, name: &str) -> String {
    let out = dir.path().join(name).to_string_lossy().into_owned();
    ok("order", &[src, "-o", &out], b"");
    out
}

fn synth(dir: &tempfile::TempDir, args: &[&str]) -> String {
    let raw = dir.path().join("raw.spoor").to_string_lossy().into_owned();
    let mut a = args.to_vec();
    a.extend(["-o", &raw]);
    ok("synth", &a, b"");
    ordered(dir, &raw, "t.spoor")
}

/// casita-4 in $SPOOR_DATA: rank 0's extra work in `foo` is behind the late-sender chain
/// 0→1→2→3, and it is the first thing to fix.
#[test]
fn the_first_finding_on_a_real_trace_is_the_extra_work_behind_its_late_senders() {
    let Some(data) = data() else { return };
    let d = tempfile::tempdir().unwrap();
    let raw = d.path().join("c4.spoor").to_string_lossy().into_owned();
    ok("import", &[data.join("otf2/casita-4_mpi_ls_barr").to_str().unwrap(), "-o", &raw], b"");
    let aligned = d.path().join("c4-aligned.spoor").to_string_lossy().into_owned();
    ok("align", &[&raw, "-o", &aligned], b"");
    let t = ordered(&d, &aligned, "c4.o");
    let json: serde_json::Value = serde_json::from_str(&ok_text("diagnose", &[&t, "-f", "json"])).unwrap();
    let first = &json["fixes"][0];
    assert_eq!(first["kind"], "delay", "{first}");
    assert_eq!(first["procedure"], "foo", "{first}");
    assert_eq!(first["processes"], serde_json::json!(["MPI Rank 0"]), "{first}");
    assert!(first["gain"].as_f64().unwrap() > 0.5, "{first}");
    // The search found the late senders of the chain, each waiting for the one before.
    let nodes = json["search"]["nodes"].as_array().unwrap();
    for (r, p) in [(1, 0), (2, 1), (3, 2)] {
        let focus = format!("/Code/MPI_Recv, /Process/MPI Rank {r}, /Partner/MPI Rank {p}");
        assert!(
            nodes
                .iter()
                .any(|n| n["hypothesis"] == "late_sender" && n["focus"] == focus && n["state"] == "true"),
            "{focus}"
        );
    }
}

#[test]
fn output_forms_and_directives_from_a_file() {
    let d = tempfile::tempdir().unwrap();
    let t = synth(&d, &["stencil", "--procs", "8", "--steps", "10", "--extra-work", "late:2:2000000"]);
    let text = ok_text("diagnose", &[&t, "--tree"]);
    assert!(text.contains("1. extra work in late on rank2 causes"), "{text}");
    assert!(text.contains("Search History Graph (true nodes):"), "{text}");
    let dot = ok_text("diagnose", &[&t, "-f", "dot"]);
    assert!(dot.starts_with("digraph shg {") && dot.contains("->"), "{dot}");
    let html = ok_text("diagnose", &[&t, "-f", "html"]);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"), "{html}");
    for part in ["What to fix first", "late removed on rank2", "Processes straying from their peers", "<svg"]
    {
        assert!(html.contains(part), "{part}");
    }
    let dirs = d.path().join("d.dirs");
    std::fs::write(&dirs, "prune cpu_bound /\n").unwrap();
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec![t.as_str(), "-f", "json"];
        a.extend(extra);
        serde_json::from_str(&ok_text("diagnose", &a)).unwrap()
    };
    let plain = json(&[]);
    let pruned = json(&["--directives", dirs.to_str().unwrap()]);
    assert!(pruned["search"]["tested"].as_u64() < plain["search"]["tested"].as_u64());
    let strict = json(&["--threshold", "sync_waiting=0.99"]);
    let root = &strict["search"]["nodes"][0];
    assert_eq!((root["hypothesis"].as_str(), root["threshold"].as_f64()), (Some("sync_waiting"), Some(0.99)));
}

#[test]
fn errors_and_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let t = synth(&d, &["ring", "--procs", "3", "--steps", "2"]);
    let code = |args: &[&str]| {
        let out = run("diagnose", args, b"", &[]);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (c, e) = code(&[&testdata("late-sender.txt")]);
    assert_eq!(c, Some(1), "{e}");
    assert!(e.contains("run the trace through spoor-order first"), "{e}");
    // Standard input, empty: the error names it, not the copy it is read from.
    let (c, e) = code(&["-"]);
    assert_eq!(c, Some(1), "{e}");
    assert!(e.starts_with("spoor-diagnose: <stdin>: "), "{e}");
    let (c, e) = code(&[&t, "--threshold", "slow=0.1"]);
    assert_eq!(c, Some(2), "{e}");
    assert!(e.contains("the hypotheses are: sync_waiting"), "{e}");
    let dirs = d.path().join("bad.dirs");
    std::fs::write(&dirs, "# steer\nprune nosuch /\n").unwrap();
    let (c, e) = code(&[&t, "--directives", dirs.to_str().unwrap()]);
    assert_eq!(c, Some(1), "{e}");
    assert!(e.contains("bad.dirs:2: no hypothesis `nosuch`"), "{e}");
    let (c, e) = code(&[&t, "--peer-enter", "0.1", "--peer-leave", "0.2"]);
    assert_eq!(c, Some(2), "{e}");
    let (c, e) = code(&[d.path().join("missing.spoor").to_str().unwrap()]);
    assert_eq!(c, Some(1), "{e}");
}

/// Rank 2 works 2 ms more a step: it strays from its peers, in the groups found and in a
/// group the user names; the report marks it on its time-line.
#[test]
fn named_peer_groups_and_annotations_on_the_report() {
    let d = tempfile::tempdir().unwrap();
    let t = synth(&d, &["stencil", "--procs", "8", "--steps", "20", "--extra-work", "late:2:2000000"]);
    let annotations = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut a = vec![t.as_str(), "-f", "json"];
        a.extend(extra);
        let v: serde_json::Value = serde_json::from_str(&ok_text("diagnose", &a)).unwrap();
        v["annotations"].as_array().unwrap().clone()
    };
    let found = annotations(&[]);
    assert!(found.iter().any(|a| a["process"] == "rank2" && a["kind"] == "overworked"), "{found:?}");
    let named = annotations(&["--peer-group", "mine=rank0,rank1,rank2"]);
    let mine: Vec<&serde_json::Value> = named.iter().filter(|a| a["group"] == "mine").collect();
    assert!(!mine.is_empty() && mine.iter().all(|a| a["process"] == "rank2"), "{named:?}");
    // The others keep their role: rank 2 is no longer among them.
    assert!(named.iter().all(|a| a["group"] == "mine" || a["process"] != "rank2"), "{named:?}");
    for (bad, want) in [
        ("mine=rank0,rank99", "no process named `rank99`"),
        ("mine=rank0", "needs two processes or more"),
        ("mine", "expected NAME=PROCESS,PROCESS"),
    ] {
        let out = run("diagnose", &[&t, "--peer-group", bad], b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(text(&out.stderr).contains(want), "{bad}: {}", text(&out.stderr));
    }
    // On the report: a band over rank 2's row with its label, a track in the export and a
    // list in the HTML summary.
    let svg = ok_text("report", &["-f", "svg", "--annotate", &t]);
    assert!(svg.contains(r#"<g class="marks""#) && svg.contains("rank2 overworked by up to"), "{svg}");
    let chrome = ok_text("report", &["-f", "chrome", "--annotate", &t]);
    assert!(chrome.contains(r#""cat":"annotation","name":"rank2 overworked by up to"#), "{chrome}");
    let html = ok_text("report", &["-f", "html", "--annotate", &t]);
    assert!(html.contains("Processes straying from their peers") && html.contains("rank2 overworked"));
    // From standard input (read twice: copied to disk), the same marks, named <stdin>.
    let out = run("report", &["-f", "svg", "--annotate", "-"], &std::fs::read(&t).unwrap(), &[]);
    assert_success(&out, "report");
    assert_eq!(text(&out.stdout).replace("&lt;stdin&gt;", &t), svg);
    let out = run("report", &["--annotate", "-"], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("spoor-report: <stdin>: byte 0: the input is empty"),
        "{}",
        text(&out.stderr)
    );
}

/// An ordered trace on standard input is copied to disk (it is read twice) and gives the
/// file's diagnosis, the commands it suggests reading `-`.
#[test]
fn standard_input_is_diagnosed_as_its_file() {
    let d = tempfile::tempdir().unwrap();
    let t = synth(&d, &["stencil", "--procs", "4", "--steps", "20"]);
    let file = run("diagnose", &["-q", &t], b"", &[]);
    assert!(file.status.success(), "{}", String::from_utf8_lossy(&file.stderr));
    let piped = run(
        "diagnose",
        &["-q", "-", "--tmpdir", d.path().to_str().unwrap()],
        &std::fs::read(&t).unwrap(),
        &[],
    );
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let (file, piped) = (String::from_utf8_lossy(&file.stdout), String::from_utf8_lossy(&piped.stdout));
    assert!(piped.contains(" see: spoor-") && piped.contains(" -\n"), "{piped}");
    assert_eq!(piped.replace(" -\n", &format!(" {t}\n")).replacen("-:", &format!("{t}:"), 1), *file);
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains("spill")), "left behind: {left:?}");
}

/// Wait states kept in a spill file (`--memory 0`) give the same report and diagnosis as
/// in memory (of a workload with extra work, and of a real run), say on `-v` how much went to disk and where, and leave nothing there; a
/// spill that cannot be written (the file size limit here: a full disk fails the same
/// call) is an error naming the directory, with no output.
#[test]
fn wait_states_spilled_to_disk_are_those_kept_in_memory() {
    let d = tempfile::tempdir().unwrap();
    let t = synth(&d, &["stencil", "--procs", "12", "--steps", "400", "--extra-work", "late:3,8:2000000"]);
    let spill = d.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let tmpdir = spill.to_str().unwrap();
    let spilled = ["--memory", "0", "--tmpdir", tmpdir];
    // And a real run (EPOCH's, from Paraver), where $SPOOR_DATA has it.
    let real = data().map(|data| epoch_ordered(&data, d.path()));
    let traces: Vec<&str> = std::iter::once(t.as_str()).chain(real.as_deref()).collect();
    for (cmd, args) in
        [("report", &["-t", "waits", "-f", "json"][..]), ("diagnose", &["-q", "-f", "json"][..])]
    {
        for trace in &traces {
            let memory = ok(cmd, &[args, &[trace]].concat(), b"");
            let out = run(cmd, &[args, &spilled, &["-v", trace]].concat(), b"", &[]);
            let err = text(&out.stderr);
            assert!(out.status.success(), "{err}");
            assert!(out.stdout == memory, "spoor-{cmd}'s spilled wait states of {trace} differ");
            assert!(err.contains(&format!("MiB of disk used in {tmpdir}")), "{err}");
            assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "left behind");
        }
        // 64 KiB (ulimit counts blocks of 512 bytes): the spill file's first step is more.
        let output = d.path().join(format!("{cmd}.json"));
        let line = format!(
            "ulimit -f 128; exec {} {} --memory 0 --tmpdir {tmpdir} {t} -o {}",
            bin(cmd),
            args.join(" "),
            output.display()
        );
        let out = std::process::Command::new("sh").args(["-c", &line]).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("spilling to {tmpdir}/spoor-{cmd}-spill-"))
                && err.contains("File too large"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "left behind");
        assert!(!output.exists());
    }
}
