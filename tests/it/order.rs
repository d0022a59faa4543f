//! spoor-merge, spoor-align and spoor-order end to end: the binaries, their pipes,
//! their reports, exit codes and errors.

use crate::common::*;

use spoor_format::binary::flags;
use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event, Kind};
use std::path::Path;
use std::process::Output;

fn read(bytes: Vec<u8>) -> (u64, Definitions, Vec<Event>) {
    let r = TraceReader::from_bytes("out", bytes, ReadOptions::default()).unwrap();
    let fl = r.header().map_or(0, |h| h.flags);
    let (d, e) = r.read_all().unwrap();
    (fl, d, e)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_pipe_from_synth_to_an_ordered_trace() {
    // spoor-synth stencil | spoor-merge - | spoor-align | spoor-order > x
    let synth = ok("synth", &["stencil", "--procs", "6", "--steps", "15"], b"");
    let merged = ok("merge", &["-", "-q"], &synth);
    let aligned = ok("align", &["-q"], &merged);
    let ordered = ok("order", &[], &aligned);
    let (fl, defs, events) = read(ordered.clone());
    let (_, d0, e0) = read(synth);
    assert_eq!(
        fl & (flags::GLOBAL_ORDER | flags::ALIGNED | flags::MATCHED),
        flags::GLOBAL_ORDER | flags::ALIGNED | flags::MATCHED
    );
    assert_eq!(defs, d0);
    assert_eq!(events.len(), e0.len());
    assert!(events.iter().all(|e| e.ann.lamport.is_some()));
    let sends = events.iter().filter(|e| matches!(e.kind, Kind::Send { .. } | Kind::Isend { .. })).count();
    let matched = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Send { .. } | Kind::Isend { .. }) && e.ann.partner.is_some())
        .count();
    assert!(sends > 0);
    assert_eq!(sends, matched, "every send of the stencil is matched");
    // Synthetic clocks agree with happened-before: the total order is time order.
    assert!(events.windows(2).all(|w| w[0].wall <= w[1].wall));
    // Nothing to report on the result.
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.spoor");
    std::fs::write(&x, &ordered).unwrap();
    let check = run("order", &["--check", x.to_str().unwrap()], b"", &[]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(String::from_utf8_lossy(&check.stdout).contains("no problems"));
}

#[test]
fn output_does_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let synth = ok("synth", &["master-worker", "--procs", "5", "--steps", "6", "--block-events", "16"], b"");
    let p = dir.path().join("s.spoor");
    std::fs::write(&p, &synth).unwrap();
    let ps = p.to_str().unwrap();
    let text = testdata("order/collectives.txt");
    for (cmd, args) in [
        ("merge", vec![ps, text.as_str()]),
        ("merge", vec![ps]),
        ("align", vec![ps]),
        ("align", vec![ps, "--min-latency", "1us"]),
        ("order", vec![ps]),
        ("order", vec![text.as_str()]),
    ] {
        let one = run(cmd, &args, b"", &[("RAYON_NUM_THREADS", "1")]);
        let two = run(cmd, &args, b"", &[("RAYON_NUM_THREADS", "2")]);
        assert!(one.status.success() && two.status.success(), "{cmd} {args:?}: {}", stderr(&one));
        assert!(!one.stdout.is_empty());
        assert_eq!(one.stdout, two.stdout, "spoor-{cmd} {args:?}");
        assert_eq!(one.stderr, two.stderr, "spoor-{cmd} {args:?}");
    }
}

#[test]
fn check_lists_problems_and_fails() {
    let out = run("order", &["--check", &testdata("order/unmatched.txt")], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "unmatched send: rank0 (location 0) event 1 (send at 10 us)",
        "unmatched receive: rank1 (location 1) event 2 (recv_end at 12 us)",
        "size mismatch: rank1 (location 1) event 4 (recv_end at 22 us): receives 16 bytes",
        "collective: rank0 (location 0) event 5",
        "lock: rank1 (location 1) event 7",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    let json = run("order", &["--check", "--format", "json", &testdata("order/unmatched.txt")], b"", &[]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["errors"], 7);
    assert_eq!(v["problems"][0]["kind"], "unmatched_send");
    assert_eq!(v["problems"][0]["location_name"], "rank0");
    assert_eq!(v["problems"][0]["wall"], 10_000);
    // Without --check the trace is written, and the problems reported on standard error.
    let out = run("order", &[&testdata("order/unmatched.txt")], b"", &[]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("2 unmatched send"), "{}", stderr(&out));
    let (_, _, events) = read(out.stdout);
    assert_eq!(events.len(), 17, "unmatched events are kept");
    // A clean trace passes.
    let out = run("order", &["--check", &testdata("order/p2p.txt")], b"", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_cycle_names_its_events() {
    let out = run("order", &[&testdata("order/cycle.txt")], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("cycle"), "{e}");
    assert!(
        e.contains("rank0 (location 0) event 2 (recv_end at 10 us) waits for rank1 (location 1) event 3"),
        "{e}"
    );
    assert!(
        e.contains("rank1 (location 1) event 2 (recv_end at 10 us) waits for rank0 (location 0) event 3"),
        "{e}"
    );
    let check = run("order", &["--check", &testdata("order/cycle.txt")], b"", &[]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stdout).contains("cycle:"));
    // With -o, a failure leaves no file behind.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("out.spoor");
    let out = run("order", &[&testdata("order/cycle.txt"), "-o", o.to_str().unwrap()], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn align_reports_and_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = run("align", &[&testdata("order/skew.txt"), "--report", report.to_str().unwrap()], b"", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "the report goes to the file");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["violations_before"]["messages"], 5);
    assert_eq!(r["violations_after"]["messages"], 0);
    assert_eq!(r["locations"][1]["method"], "messages");
    assert_eq!(r["locations"][1]["offset_start_ns"], -1_000_000);
    let (fl, _, events) = read(out.stdout);
    assert_ne!(fl & flags::ALIGNED, 0);
    let moved: Vec<&Event> = events.iter().filter(|e| e.loc == 1).collect();
    assert!(moved.iter().all(|e| e.ann.raw_wall == Some(e.wall + 1_000_000)));
    // The text report on standard error.
    let out = run("align", &[&testdata("order/skew.txt")], b"", &[]);
    let e = stderr(&out);
    assert!(e.contains("violations before:             5 (messages 5"), "{e}");
    assert!(e.contains("violations after (final):      0"), "{e}");
    assert!(e.contains("rank1") && e.contains("-1 ms"), "{e}");
    // Without offsets the controlled logical clock alone repairs the violations.
    let out =
        run("align", &[&testdata("order/skew.txt"), "--method", "none", "--min-latency", "2us"], b"", &[]);
    assert!(stderr(&out).contains("violations after (final):      0"), "{}", stderr(&out));
    let input = spoor_order::Input::from_bytes("aligned", out.stdout);
    let scan = |keep| spoor_order::scan::scan(&input, keep).unwrap();
    let (records, walls) = (scan(spoor_order::scan::Keep::Records), scan(spoor_order::scan::Keep::Walls));
    assert_eq!(records.total_events(), 34);
    let sync = spoor_order::matching::match_events(&records.defs, &records.records);
    assert_eq!(sync.messages.len(), 10);
    assert_eq!(spoor_order::align::violations(&sync, &walls.walls[..], 2_000).total(), 0);
}

/// Alignment never leaves a real trace with more violations than it had, whatever the
/// method: Score-P's casita-4 archive is consistent as recorded, but its messages and
/// barrier (a late sender waits 9 s) put ranks 1 to 3 seconds apart; spoor-align
/// --method messages says so and keeps the recorded clocks. spoor-order --align gives
/// what spoor-align and spoor-order give.
#[test]
fn alignment_never_makes_real_clocks_worse() {
    let Some(data) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let report_arg = report.to_str().unwrap();
    for archive in
        ["casita-10_scorep_mpi_tags", "casita-4_mpi_ls_barr", "pipit-ping-pong", "pipit-ping-pong-papi"]
    {
        let path = data.join("otf2").join(archive).join("traces.otf2");
        let raw = ok("import", &["-q", "--clock", "raw", path.to_str().unwrap()], b"");
        // spoor-order --align is the two stages in one.
        let two = ok("order", &["-q"], &ok("align", &["-q"], &raw));
        assert!(ok("order", &["-q", "--align"], &raw) == two, "{archive}: spoor-order --align differs");
        for method in ["auto", "samples", "messages", "none"] {
            for clc in [true, false] {
                let mut args = vec!["-q", "--method", method, "--report", report_arg];
                if !clc {
                    args.push("--no-clc");
                }
                ok("align", &args, &raw);
                let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
                let total = |k: &str| {
                    let v = &r[k];
                    ["messages", "collectives", "locks"].iter().map(|x| v[x].as_u64().unwrap()).sum::<u64>()
                };
                let what = format!("{archive} --method {method} clc {clc}: {r}");
                assert!(total("violations_after_offsets") <= total("violations_before"), "{what}");
                assert!(total("violations_after") <= total("violations_before"), "{what}");
                if clc {
                    assert_eq!(total("violations_after"), 0, "{what}");
                }
                assert!(r["choice"]["reason"].as_str().is_some_and(|s| s.contains("violations")), "{what}");
                if (archive, method) == ("casita-4_mpi_ls_barr", "messages") {
                    assert_eq!(r["choice"]["clocks"], "recorded", "{what}");
                    assert_eq!(r["choice"]["violations_with_offsets"]["collectives"], 2, "{what}");
                }
            }
        }
    }
}

fn write(p: &Path, defs: &Definitions, events: &[Event]) {
    let mut w = TraceWriter::new(Vec::new(), defs, WriterOptions::default()).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    std::fs::write(p, w.finish().unwrap()).unwrap();
}

#[test]
fn merge_per_process_files_and_applications() {
    let dir = tempfile::tempdir().unwrap();
    let (_, defs, events) = read(ok("synth", &["ring", "--procs", "4", "--steps", "5"], b""));
    // One file per process in a directory, each with all definitions.
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    for l in 0..4u32 {
        let mine: Vec<Event> = events.iter().filter(|e| e.loc == l).cloned().collect();
        write(&ranks.join(format!("rank{l}.spoor")), &defs, &mine);
    }
    let merged = ok("merge", &[ranks.to_str().unwrap()], b"");
    let (_, d, e) = read(merged.clone());
    assert_eq!(d, defs);
    assert_eq!(e.len(), events.len());
    // ... and the merged trace orders with every message matched.
    let dir2 = tempfile::tempdir().unwrap();
    let m = dir2.path().join("m.spoor");
    std::fs::write(&m, merged).unwrap();
    assert!(run("order", &["--check", m.to_str().unwrap()], b"", &[]).status.success());

    // Two runs of one program, the second replayed in comparison mode.
    let a = dir.path().join("a.spoor");
    let b = dir.path().join("b.spoor");
    write(&a, &defs, &events);
    let later: Vec<Event> = events
        .iter()
        .cloned()
        .map(|mut e| {
            e.wall += 10_000_000_000;
            e
        })
        .collect();
    write(&b, &defs, &later);
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = run(
        "merge",
        &["--app", &format!("old={sa}"), "--app", &format!("new={sb}"), "--compare", "new"],
        b"",
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("comparison mode: new shifted by -10 s"), "{}", stderr(&out));
    let (_, d, e) = read(out.stdout);
    assert_eq!(d.apps.len(), 2);
    assert_eq!(d.machines.len(), defs.machines.len(), "machines are shared");
    assert_eq!(e.len(), 2 * events.len());
    assert!(e.iter().all(|x| x.wall < 10_000_000_000));
    // Without names the runs collide.
    let out = run("merge", &[sa, sb], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--app"), "{}", stderr(&out));
    // An unknown application for --compare is a usage error.
    let out = run("merge", &[sa, "--compare", "nope"], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_input_is_reported_not_panicked() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.spoor");
    std::fs::write(
        &garbage,
        b"\x89SPOOR\r\n\x01\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff",
    )
    .unwrap();
    let g = garbage.to_str().unwrap();
    let missing = dir.path().join("missing.spoor");
    let m = missing.to_str().unwrap();
    for cmd in ["merge", "align", "order"] {
        for (file, code) in [(g, 1), (m, 1)] {
            let out = run(cmd, &[file], b"", &[]);
            assert_eq!(out.status.code(), Some(code), "spoor-{cmd} {file}: {}", stderr(&out));
            assert!(stderr(&out).contains(file), "spoor-{cmd} names the file: {}", stderr(&out));
        }
        // Empty standard input.
        let out = run(cmd, &["-"], b"", &[]);
        assert_eq!(out.status.code(), Some(1), "spoor-{cmd} -: {}", stderr(&out));
        assert!(stderr(&out).contains("<stdin>"), "{}", stderr(&out));
    }
    // A newer major version: exit 3.
    let mut newer = ok("synth", &["ring", "--steps", "1"], b"");
    newer[8] = 9;
    for cmd in ["merge", "align", "order"] {
        let out = run(cmd, &["-"], &newer, &[]);
        assert_eq!(out.status.code(), Some(3), "spoor-{cmd}: {}", stderr(&out));
    }
    // A send to a location that does not exist: the error names the file and the event.
    let bad = dir.path().join("dangling.txt");
    std::fs::write(
        &bad,
        "spoor-text 1\napp 0 a\nmachine 0 m\nprocess 0 p0 app=0 machine=0 rank=0\nlocation 0 p0 process=0 thread=0\n\
         comm 0 world members=0\n0 0 - process_begin\n0 5us - send to=7 tag=1 bytes=4\n",
    )
    .unwrap();
    let b = bad.to_str().unwrap();
    for cmd in ["merge", "align", "order"] {
        let out = run(cmd, &[b], b"", &[]);
        assert_eq!(out.status.code(), Some(1), "spoor-{cmd}: {}", stderr(&out));
        let e = stderr(&out);
        assert!(
            e.contains(b) && e.contains("event 1 (send at 5 us)") && e.contains("location 7"),
            "spoor-{cmd}: {e}"
        );
    }
}

#[test]
fn help_names_the_rules() {
    for (cmd, needle) in [("merge", "--compare"), ("align", "--min-latency"), ("order", "--check")] {
        let out = run(cmd, &["--help"], b"", &[]);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains(needle));
    }
    let out = run("align", &["--gamma", "0", "x"], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn merge_follows_definitions_that_change_mid_stream() {
    // A recorder that learns names late writes the definitions again (trace.md).
    let mut defs = Definitions::new();
    let app = defs.add_app("late");
    let m = defs.add_machine("node0");
    let p = defs.add_process("p0", app, m, 0);
    defs.add_location("p0", p, 0);
    let early = defs.strings.intern("early");
    let mut w =
        TraceWriter::new(Vec::new(), &defs, WriterOptions { block_events: 2, ..Default::default() }).unwrap();
    for t in 0..4 {
        w.write(&Event::new(0, t, None, Kind::Enter { proc: early })).unwrap();
    }
    let late = defs.strings.intern("resolved-at-exit");
    let p1 = defs.add_process("p1", app, m, 1);
    defs.add_location("p1", p1, 0);
    w.set_definitions(&defs).unwrap();
    for t in 4..8 {
        w.write(&Event::new(1, t, None, Kind::Enter { proc: late })).unwrap();
    }
    let bytes = w.finish().unwrap();
    // Through a pipe: the definitions change while the merge is under way.
    let other = testdata("order/p2p.txt");
    let out = ok("merge", &["-", &other], &bytes);
    let (_, d, e) = read(out);
    let name = |ev: &Event| match ev.kind {
        Kind::Enter { proc } => d.strings.get(proc).map(str::to_owned),
        _ => None,
    };
    let names: Vec<String> = e.iter().filter_map(name).collect();
    assert_eq!(names.iter().filter(|n| *n == "early").count(), 4);
    assert_eq!(names.iter().filter(|n| *n == "resolved-at-exit").count(), 4);
    assert_eq!(d.apps.len(), 2);
    assert_eq!(d.locations.len(), 5, "p0, p1 and p2p's three ranks");
}

#[test]
fn copied_blocks_are_the_blocks_encoding_gives() {
    // A binary input's canonical full blocks are copied; its text form is encoded event
    // by event: the outputs are the same bytes, whatever the block size.
    let dir = tempfile::tempdir().unwrap();
    for (workload, be) in [("stencil", "64"), ("master-worker", "16"), ("barrier", "4096")] {
        let synth = ok("synth", &[workload, "--procs", "6", "--steps", "10", "--block-events", be], b"");
        let bin_path = dir.path().join("s.spoor");
        std::fs::write(&bin_path, &synth).unwrap();
        let text = ok("cat", &[bin_path.to_str().unwrap()], b"");
        let text_path = dir.path().join("s.txt");
        std::fs::write(&text_path, &text).unwrap();
        for out_be in [be, "16", "7"] {
            let args =
                |p: &Path| vec![p.to_str().unwrap().to_owned(), "--block-events".into(), out_be.into()];
            let a = args(&bin_path);
            let b = args(&text_path);
            let from_binary = ok("merge", &a.iter().map(String::as_str).collect::<Vec<_>>(), b"");
            let from_text = ok("merge", &b.iter().map(String::as_str).collect::<Vec<_>>(), b"");
            assert!(from_binary == from_text, "merge {workload} blocks {be} -> {out_be}");
            // align: decided from the records (copying) and replayed in full, the same.
            let m = dir.path().join("m.spoor");
            std::fs::write(&m, &from_binary).unwrap();
            let ms = m.to_str().unwrap();
            // An ordered trace too: multi-location blocks, annotated events.
            let ordered = ok("order", &[ms, "--block-events", out_be], b"");
            let o = dir.path().join("o.spoor");
            std::fs::write(&o, &ordered).unwrap();
            for input in [ms, o.to_str().unwrap()] {
                for lat in ["0", "3us"] {
                    let fast =
                        ok("align", &[input, "-q", "--min-latency", lat, "--block-events", out_be], b"");
                    let args =
                        [input, "-q", "--min-latency", lat, "--block-events", out_be, "--force-replay"];
                    let slow = ok("align", &args, b"");
                    assert!(fast == slow, "align {workload} {lat} blocks {out_be} {input}");
                }
            }
            // Merging the ordered trace (multi-location blocks, never copied) gives the
            // merge of its text form (whose header lacks the flags: the text form has none).
            let ordered_text = ok("cat", &[o.to_str().unwrap()], b"");
            let ot = dir.path().join("o.txt");
            std::fs::write(&ot, &ordered_text).unwrap();
            let a = ok("merge", &[o.to_str().unwrap(), "--block-events", out_be], b"");
            let b = ok("merge", &[ot.to_str().unwrap(), "--block-events", out_be], b"");
            assert!(a[24..] == b[24..], "merge of an ordered {workload} trace");
        }
    }
}

#[test]
fn block_by_block_merge_gives_the_event_by_event_merge() {
    // Binary files are merged block by block in parallel; text inputs event by event.
    // Traces in time order come out the same bytes either way, on 1 thread or 2. Where
    // the inputs' blocks are the output's size (the last case), the full ones are copied
    // as they are; a second application's (other ids, shifted) are encoded again.
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    for (workload, procs, be, made) in [
        ("stencil", "9", "5", "4096"),
        ("master-worker", "5", "16", "4096"),
        ("spa", "4", "4096", "4096"),
        ("stencil", "6", "16", "16"),
    ] {
        let synth = |args: &[&str]| {
            let mut all = vec![workload, "--procs", procs, "--block-events", made];
            all.extend(args);
            ok("synth", &all, b"")
        };
        let split = path(&format!("{workload}-{made}-split"));
        synth(&["--steps", "12", "--seed", "3", "--split", &split]);
        let mut files: Vec<String> = std::fs::read_dir(&split)
            .unwrap()
            .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
            .collect();
        files.sort();
        let texts: Vec<String> = files
            .iter()
            .map(|f| {
                let t = format!("{f}.txt");
                std::fs::write(&t, ok("cat", &[f], b"")).unwrap();
                t
            })
            .collect();
        let merge = |inputs: &[String], threads: &str| {
            let mut args: Vec<&str> = inputs.iter().map(String::as_str).collect();
            args.extend(["--block-events", be]);
            let out = run("merge", &args, b"", &[("RAYON_NUM_THREADS", threads)]);
            assert_success(&out, "spoor-merge");
            out.stdout
        };
        let by_events = merge(&texts, "2");
        for threads in ["1", "2"] {
            assert!(merge(&files, threads) == by_events, "{workload}, blocks of {be}, {threads} thread(s)");
        }
        // Inputs of many locations each, two applications, one shifted to start with
        // the other (comparison mode).
        let whole = path(&format!("{workload}-{made}.spoor"));
        std::fs::write(&whole, synth(&["--steps", "12"])).unwrap();
        let later = path(&format!("{workload}-{made}-later.spoor"));
        std::fs::write(&later, synth(&["--steps", "7", "--seed", "9"])).unwrap();
        let as_text = |f: &str| {
            let t = format!("{f}.txt");
            std::fs::write(&t, ok("cat", &[f], b"")).unwrap();
            t
        };
        let (whole_t, later_t) = (as_text(&whole), as_text(&later));
        let apps = |a: &str, b: &str| {
            let (a, b) = (format!("one={a}"), format!("two={b}"));
            let args = ["--app", &a, "--app", &b, "--compare", "two", "--block-events", be, "-q"];
            ok("merge", &args, b"")
        };
        assert!(apps(&whole, &later) == apps(&whole_t, &later_t), "{workload}: two applications");
    }
}

#[test]
fn a_damaged_block_among_many_inputs_is_an_error_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("run");
    let s = split.to_str().unwrap();
    ok("synth", &["stencil", "--procs", "8", "--steps", "40", "--block-events", "16", "--split", s], b"");
    let victim = split.join("stencil-0.5.spoor");
    let mut bytes = std::fs::read(&victim).unwrap();
    // A byte in the middle of the file: inside a block, whose checksum then fails.
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&victim, &bytes).unwrap();
    let out_path = dir.path().join("m.spoor");
    let out = run("merge", &[s, "-o", out_path.to_str().unwrap()], b"", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("stencil-0.5.spoor"), "{err}");
    assert!(err.contains("byte") || err.contains("offset"), "{err}");
    assert!(!out_path.exists(), "no half-written output");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing else left behind");
}

#[test]
fn a_dangling_id_among_many_inputs_names_the_event_by_its_location() {
    // Merged block by block, an input's definitions are let go once unified: the event
    // that names what they lack is still described by its location's name.
    let dir = tempfile::tempdir().unwrap();
    let mut defs = Definitions::new();
    let app = defs.add_app("app");
    let m = defs.add_machine("node0");
    for r in 0..2 {
        let p = defs.add_process(&format!("p{r}"), app, m, r);
        defs.add_location(&format!("worker{r}"), p, 0);
    }
    let comm = defs.add_comm("world", vec![0, 1]);
    let good = dir.path().join("a.spoor");
    write(&good, &defs, &[Event::new(0, 5, None, Kind::ProcessBegin { parent: None })]);
    let bad = dir.path().join("b.spoor");
    let send = Kind::Send { to: 7, comm, tag: 0, bytes: 8 };
    write(
        &bad,
        &defs,
        &[Event::new(1, 10, None, Kind::ProcessBegin { parent: None }), Event::new(1, 20, None, send)],
    );
    let out = run("merge", &[good.to_str().unwrap(), bad.to_str().unwrap()], b"", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("b.spoor") && err.contains("worker1") && err.contains("sends to location 7"),
        "{err}"
    );
}

/// Every stage from merge to diagnose ends with its peak memory under `-v`, and with
/// nothing more than without it on standard output.
#[test]
fn every_stage_says_its_peak_memory_under_v() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    std::fs::write(p("raw"), ok("synth", &["stencil", "--procs", "4", "--steps", "8"], b"")).unwrap();
    let stages: [(&str, Vec<String>); 9] = [
        ("merge", vec![p("raw"), "-o".into(), p("m")]),
        ("align", vec![p("m"), "-o".into(), p("a")]),
        ("order", vec![p("a"), "-o".into(), p("o")]),
        ("cp", vec![p("o")]),
        ("pag", vec![p("o"), "-o".into(), p("pag")]),
        ("gag", vec!["--predict".into(), "--place-by".into(), "process".into(), p("o")]),
        ("report", vec!["-t".into(), "waits".into(), p("o")]),
        ("diagnose", vec![p("o")]),
        ("whatif", vec!["procedure".into(), "stencilUpdate".into(), p("o")]),
    ];
    for (stage, args) in &stages {
        // spoor-report has no -q (its progress shows on a terminal only).
        let mut with: Vec<&str> = if *stage == "report" { vec!["-v"] } else { vec!["-q", "-v"] };
        with.extend(args.iter().map(String::as_str));
        let out = run(stage, &with, b"", &[]);
        assert_success(&out, stage);
        let e = text(&out.stderr);
        let line = e.lines().last().unwrap_or_default();
        let mib: f64 = line
            .strip_prefix(&format!("spoor-{stage}: peak resident memory "))
            .and_then(|r| r.strip_suffix(" MiB; no disk used"))
            .and_then(|m| m.parse().ok())
            .unwrap_or_else(|| panic!("spoor-{stage} -v: {e}"));
        assert!(mib > 0.5 && mib < 4096.0, "spoor-{stage}: {mib} MiB");
        if !args.contains(&"-o".to_owned()) {
            let without: Vec<&str> = with.iter().copied().filter(|a| *a != "-v").collect();
            assert_eq!(out.stdout, ok(stage, &without, b""), "spoor-{stage}: -v changes standard output");
        }
    }
}

#[test]
fn an_ordered_trace_aligned_again_is_copied_as_it_is() {
    // spoor-align writes an input in global order in the blocks spoor-order writes, so
    // a trace it leaves untouched is its full blocks copied: the same bytes.
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    ok("synth", &["stencil", "--procs", "8", "--events", "100000", "--seed", "3", "-o", &p("raw")], b"");
    ok("align", &["-q", &p("raw"), "-o", &p("a")], b"");
    let ordered = ok("order", &["-q", &p("a")], b"");
    std::fs::write(p("o"), &ordered).unwrap();
    assert!(ok("align", &["-q", &p("o")], b"") == ordered, "spoor-align changed an aligned ordered trace");
}

/// A trace given as the path of a pipe (a FIFO, what `<(...)` gives) is read once as it
/// comes, or copied to disk first where a stage reads it twice: every stage gives what
/// it gives for the file (the pipe's path where the file's was shown).
#[test]
fn a_pipe_given_by_its_path_is_read_as_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    let (raw, ordered, fifo) = (p("raw.spoor"), p("o.spoor"), p("fifo"));
    ok("synth", &["stencil", "--procs", "4", "--steps", "30", "--seed", "2", "-o", &raw], b"");
    ok("order", &["-q", &raw, "-o", &ordered], b"");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success(), "mkfifo");
    let cases: [(&str, &[&str], &str); 9] = [
        ("merge", &[], &raw),
        ("align", &["-q"], &raw),
        ("order", &["-q"], &raw),
        ("cp", &[], &ordered),
        ("pag", &["-q"], &ordered),
        ("report", &["-t", "waits"], &ordered),
        ("report", &["-f", "svg", "--critical-path", "wall"], &ordered),
        ("diagnose", &["-q"], &ordered),
        ("whatif", &["procedure", "stencilUpdate"], &ordered),
    ];
    for (stage, args, file) in cases {
        let from_file = ok(stage, &[args, &[file]].concat(), b"");
        let bytes = std::fs::read(file).unwrap();
        let fifo_path = fifo.clone();
        // The pipe's writer: the stage opens it once; nobody else does.
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo_path).unwrap();
            let _ = std::io::Write::write_all(&mut f, &bytes);
        });
        let out = run_within(stage, &[args, &[fifo.as_str()]].concat(), std::time::Duration::from_secs(60));
        // Whatever the stage left unread (nothing, when it works), so that the writer ends.
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut rest =
                std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
            let mut buf = vec![0u8; 1 << 16];
            while !writer.is_finished() {
                if !matches!(std::io::Read::read(&mut rest, &mut buf), Ok(n) if n > 0) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
        }
        writer.join().unwrap();
        assert_success(&out, stage);
        let shown = |b: &[u8]| String::from_utf8_lossy(b).replace(file, "FILE").replace(&fifo, "FILE");
        assert_eq!(shown(&out.stdout), shown(&from_file), "spoor-{stage} {args:?}: from the pipe");
    }
}

/// `spoor-NAME ARGS`, killed and failed if it has not ended within `limit` (a stage that
/// opens a pipe twice waits for a writer that is gone).
fn run_within(name: &str, args: &[&str], limit: std::time::Duration) -> Output {
    let mut child = std::process::Command::new(bin(name))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut b);
        b
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("spoor-{name} {args:?} still runs after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// A run whose process was stopped early (its trace file cut short, as a crash leaves
/// it): every stage reads what is there, gives the results of the salvaged file, and
/// says once, even under `-q`, what it left out.
#[test]
fn a_run_with_a_trace_cut_short_is_analysed_up_to_the_cut_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    let (raw, mended) = (p("raw"), p("mended"));
    ok("synth", &["stencil", "--procs", "4", "--steps", "3000", "--seed", "3", "--split", &raw], b"");
    std::fs::create_dir(&mended).unwrap();
    let cut = format!("{raw}/stencil-0.1.spoor");
    for f in std::fs::read_dir(&raw).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, format!("{mended}/{}", f.file_name().unwrap().to_str().unwrap())).unwrap();
    }
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    ok("cat", &["--salvage", "-f", "binary", &cut, "-o", &format!("{mended}/stencil-0.1.spoor")], b"");
    let note_once = |out: &std::process::Output, stage: &str, file: &str| {
        assert_success(out, stage);
        let err = String::from_utf8_lossy(&out.stderr);
        let note = format!("spoor-{stage}: note: {file}: cut short at byte ");
        assert_eq!(err.matches(&note).count(), 1, "spoor-{stage}: {err}");
    };
    let out = run("merge", &[&raw, "-o", &p("m.spoor")], b"", &[]);
    note_once(&out, "merge", &cut);
    ok("merge", &[&mended, "-o", &p("m-mended.spoor")], b"");
    assert!(std::fs::read(p("m.spoor")).unwrap() == std::fs::read(p("m-mended.spoor")).unwrap());
    // An ordered trace cut short, read by the stages that read it twice and once.
    ok("order", &["-q", &p("m.spoor"), "-o", &p("o.spoor")], b"");
    let ordered = std::fs::read(p("o.spoor")).unwrap();
    std::fs::write(p("o-cut.spoor"), &ordered[..ordered.len() * 3 / 4]).unwrap();
    ok("cat", &["--salvage", "-f", "binary", &p("o-cut.spoor"), "-o", &p("o-mended.spoor")], b"");
    let cases: [(&str, &[&str]); 5] = [
        ("order", &["-q", "--check"]),
        ("cp", &[]),
        ("report", &["-t", "waits"]),
        ("report", &["-f", "svg", "--critical-path", "wall"]),
        ("diagnose", &["-q"]),
    ];
    for (stage, args) in cases {
        let out = run(stage, &[args, &[p("o-cut.spoor").as_str()]].concat(), b"", &[]);
        if stage == "order" {
            // The cut leaves messages without their receives: problems, exit 1.
            assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
            let err = String::from_utf8_lossy(&out.stderr);
            let note = format!("spoor-order: note: {}: cut short at byte ", p("o-cut.spoor"));
            assert_eq!(err.matches(&note).count(), 1, "{err}");
        } else {
            note_once(&out, stage, &p("o-cut.spoor"));
        }
        let mended = run(stage, &[args, &[p("o-mended.spoor").as_str()]].concat(), b"", &[]);
        let shown = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .replace(&p("o-cut.spoor"), "FILE")
                .replace(&p("o-mended.spoor"), "FILE")
        };
        assert_eq!(shown(&out.stdout), shown(&mended.stdout), "spoor-{stage} {args:?}");
    }
}

/// `spoor-order --align` is `spoor-align -q | spoor-order`: the same bytes whether the
/// alignment moves nothing (the trace read and matched once less) or moves clocks (the
/// aligned trace kept in the spill directory, asked for only then), from a file or a pipe,
/// with spoor-align's report on standard error unless -q.
#[test]
fn order_with_align_gives_the_pipe_of_the_two_stages() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    ok("synth", &["stencil", "--procs", "6", "--steps", "10", "-o", &p("even")], b"");
    ok(
        "synth",
        &["stencil", "--procs", "6", "--steps", "10", "--clock-offset", "50000", "-o", &p("skewed")],
        b"",
    );
    let missing = p("no/such/dir");
    for (trace, moves) in [(p("even"), false), (p("skewed"), true), (testdata("order/skew.txt"), true)] {
        let two = ok("order", &["-q"], &ok("align", &["-q", &trace], b""));
        assert!(ok("order", &["-q", "--align", &trace], b"") == two, "{trace}: the traces differ");
        let piped = std::fs::read(&trace).unwrap();
        assert!(
            ok("order", &["-q", "--align", "-"], &piped) == two,
            "{trace} from a pipe: the traces differ"
        );
        // The report spoor-align gives.
        let out = run("order", &["--align", &trace], b"", &[]);
        assert_success(&out, &trace);
        let report = text(&run("align", &[&trace], b"", &[]).stderr);
        assert!(text(&out.stderr).starts_with(&report), "{trace}: {}", text(&out.stderr));
        // Disk only where the clocks move.
        let out = run("order", &["-q", "-v", "--align", &trace, "-o", &p("o")], b"", &[]);
        assert_success(&out, &trace);
        let v = text(&out.stderr);
        assert_eq!(v.contains("no disk used"), !moves, "{trace}: {v}");
        let _ = std::fs::remove_file(p("o2"));
        let out = run("order", &["-q", "--align", "--tmpdir", &missing, &trace, "-o", &p("o2")], b"", &[]);
        if moves {
            assert_eq!(out.status.code(), Some(1), "{trace}");
            assert!(text(&out.stderr).contains(&missing), "{trace}: {}", text(&out.stderr));
            assert!(!Path::new(&p("o2")).exists(), "{trace}: a half-written output");
        } else {
            assert_success(&out, &trace);
        }
    }
    let out = run("order", &["--align", "--check", &p("even")], b"", &[]);
    assert_eq!(out.status.code(), Some(2), "--align with --check is a usage error");
}

/// spoor-order given a run's per-process traces (a directory, or the files) merges them
/// first as spoor-merge does: `spoor-order --align DIR` is
/// `spoor-merge DIR | spoor-align -q | spoor-order`.
#[test]
fn order_merges_per_process_traces_first() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    let args = ["stencil", "--procs", "5", "--steps", "9", "--clock-offset", "30000", "--machines", "5"];
    ok("synth", &[&args[..], &["--split", &p("run")]].concat(), b"");
    let merged = ok("merge", &["-q", &p("run")], b"");
    let two = ok("order", &["-q"], &ok("align", &["-q"], &merged));
    assert!(ok("order", &["-q", "--align", &p("run")], b"") == two, "a directory: the traces differ");
    let mut files: Vec<String> = std::fs::read_dir(p("run"))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    files.sort();
    let given: Vec<&str> = ["-q", "--align"].into_iter().chain(files.iter().map(String::as_str)).collect();
    assert!(ok("order", &given, b"") == two, "the files: the traces differ");
    assert!(ok("order", &["-q", &p("run")], b"") == ok("order", &["-q"], &merged), "without --align");
    // What spoor-merge refuses, spoor-order refuses.
    std::fs::create_dir(p("empty")).unwrap();
    let out = run("order", &["-q", &p("empty")], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("an empty directory"), "{}", text(&out.stderr));
    std::fs::write(p("run/zz-broken.spoor"), b"SPOR garbage").unwrap();
    let out = run("order", &["-q", "--align", &p("run"), "-o", &p("o")], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("zz-broken.spoor"), "{}", text(&out.stderr));
    assert!(!Path::new(&p("o")).exists(), "a half-written output");
}
