//! spoor-cat and the spoor front command, run as a user runs them.

use crate::common::*;
use std::io::Write;
use std::process::{Command, Stdio};

const WORKLOADS: [&str; 6] = ["spa", "ring", "stencil", "master-worker", "pipeline", "barrier"];

fn synth(workload: &str) -> Vec<u8> {
    ok("synth", &[workload, "--procs", "6", "--steps", "4", "--seed", "3"], b"")
}

#[test]
fn binary_to_text_to_binary_round_trips_every_workload() {
    for w in WORKLOADS {
        let bin = synth(w);
        let text = ok("cat", &["-"], &bin);
        let bin2 = ok("cat", &["-f", "binary", "-"], &text);
        let text2 = ok("cat", &["-"], &bin2);
        assert_eq!(String::from_utf8(text.clone()).unwrap(), String::from_utf8(text2).unwrap(), "{w}");
        // Re-encoding the same events with the same block size gives the same bytes.
        assert!(bin == bin2, "{w}: binary differs after a round trip through text");
        // The synthesizer's own text output (events in generation order) is the same
        // trace: encoded, it gives the same bytes.
        let direct = ok("synth", &[w, "--procs", "6", "--steps", "4", "--seed", "3", "--text"], b"");
        assert!(ok("cat", &["-f", "binary", "-"], &direct) == bin, "{w}: --text is another trace");
    }
}

#[test]
fn count_and_json_agree_with_the_text() {
    let bin = synth("stencil");
    let text = String::from_utf8(ok("cat", &["-"], &bin)).unwrap();
    let events = text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).count();
    let count: usize = String::from_utf8(ok("cat", &["--count", "-"], &bin)).unwrap().trim().parse().unwrap();
    assert_eq!(count, events);
    let json = String::from_utf8(ok("cat", &["-f", "json", "-"], &bin)).unwrap();
    let mut lines = json.lines();
    let defs: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(defs["definitions"]["locations"].as_array().unwrap().len(), 6);
    let evs: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(evs.len(), events);
    let sends = evs.iter().filter(|e| e["kind"] == "isend").count();
    assert_eq!(sends, text.lines().filter(|l| l.contains(" isend ")).count());
    let enter = evs.iter().find(|e| e["kind"] == "enter").unwrap();
    assert_eq!(enter["name"], "main");
}

#[test]
fn output_is_the_same_with_one_thread_and_many() {
    let trace = synth("master-worker");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.spoor");
    std::fs::write(&f, &trace).unwrap();
    let f = f.to_str().unwrap();
    let with = |threads: &str, args: &[&str]| {
        let o =
            Command::new(bin("cat")).args(args).arg(f).env("RAYON_NUM_THREADS", threads).output().unwrap();
        assert!(o.status.success());
        o.stdout
    };
    for args in [&["--count"][..], &[][..], &["-f", "json"][..]] {
        assert_eq!(with("1", args), with("4", args), "{args:?}");
    }
}

#[test]
fn a_trace_cut_short_is_read_up_to_the_cut_with_a_note() {
    let bin = ok("synth", &["ring", "--procs", "4", "--steps", "2000", "--block-events", "256"], b"");
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.spoor");
    std::fs::write(&cut, &bin[..bin.len() * 2 / 3]).unwrap();
    let cut = cut.to_str().unwrap();
    let total: u64 = String::from_utf8(ok("cat", &["--count", "-"], &bin)).unwrap().trim().parse().unwrap();
    let o = run("cat", &["--salvage", "--count", cut], b"", &[]);
    assert_eq!(o.status.code(), Some(0));
    let salvaged: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert!(salvaged > total / 3 && salvaged < total, "{salvaged} of {total}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("salvaged") && err.contains("bytes after it lost") && !err.contains("note"),
        "{err}"
    );
    // Without --salvage: the same events, and a note naming the file and the byte.
    for (input, stdin, name) in [(cut, &b""[..], cut), ("-", &bin[..bin.len() * 2 / 3], "<stdin>")] {
        let o = run("cat", &["--count", input], stdin, &[]);
        assert_success(&o, "spoor-cat --count of a cut trace");
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim().parse::<u64>().unwrap(), salvaged);
        let err = String::from_utf8_lossy(&o.stderr);
        let note = format!("spoor-cat: note: {name}: cut short at byte ");
        assert_eq!(err.matches(&note).count(), 1, "{err}");
        assert!(err.contains("truncated") && err.contains("bytes from there on left out"), "{err}");
    }
}

#[test]
fn a_damaged_length_in_the_middle_is_an_error_not_a_cut() {
    let bin = ok("synth", &["ring", "--procs", "4", "--steps", "2000", "--block-events", "256"], b"");
    // The first block's length made longer than the rest of the file, as a cut chunk's
    // is; but the file still ends with its end chunk. (The header is 24 bytes; a chunk
    // header 9: its type, its length, its checksum.)
    let len_at = |at: usize| u32::from_le_bytes(bin[at + 1..at + 5].try_into().unwrap()) as usize;
    let defs_at = 24;
    assert_eq!(bin[defs_at], 0x01, "the definitions come first");
    let block_at = defs_at + 9 + len_at(defs_at);
    let mut bad = bin.clone();
    bad[block_at + 1..block_at + 5].copy_from_slice(&(bin.len() as u32).to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.spoor");
    std::fs::write(&path, &bad).unwrap();
    for input in [path.to_str().unwrap(), "-"] {
        let o = run("cat", &["--count", input], &bad, &[]);
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("byte {block_at}")) && !err.contains("note"), "{err}");
    }
}

#[test]
fn a_newer_version_exits_3_and_bad_text_names_the_line() {
    let mut bin = synth("ring");
    bin[8] = 9;
    let o = run("cat", &["-"], &bin, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("upgrade spoor"));
    let o = run("cat", &["-"], b"0 10 - enter main\n0 20 - sned to=1\n", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("<stdin>: line 2"), "{err}");
    let o = run("cat", &["/nonexistent/trace"], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/trace"));
    let o = run("cat", &["--no-such-flag"], b"", &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_failed_run_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let o = run("cat", &["-o", out.to_str().unwrap(), "-"], b"0 10 - enter main\nbad line\n", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "a file was left behind");
    let o = run("cat", &["-o", out.to_str().unwrap(), "-"], b"0 10 - enter main\n", &[]);
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&out).unwrap().contains("0 10 - enter main"));
}

#[test]
fn a_closed_pipe_downstream_is_quiet() {
    let trace = ok("synth", &["stencil", "--procs", "16", "--steps", "2000"], b"");
    let mut cat = Command::new(bin("cat"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = cat.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&trace);
    });
    // Read one line, then close the pipe, as `head -n 1` does.
    let mut out = cat.stdout.take().unwrap();
    let mut buf = [0u8; 64];
    std::io::Read::read(&mut out, &mut buf).unwrap();
    drop(out);
    let o = cat.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_front_command_lists_and_runs_the_commands() {
    let help = String::from_utf8(ok("spoor", &["--help"], b"")).unwrap();
    for verb in ["cat", "synth", "import", "order", "cp", "report"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(verb)), "{verb} missing:\n{help}");
    }
    // Every command listed exists: with all binaries built, none is missing.
    assert!(!help.contains("not installed"), "{help}");
    let bin = synth("barrier");
    assert_eq!(ok("spoor", &["cat", "--count", "-"], &bin), ok("cat", &["--count", "-"], &bin));
    let o = run("spoor", &["nosuchverb"], b"", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no command 'nosuchverb'"));
    // Exit codes pass through.
    let o = run("spoor", &["cat", "/nonexistent"], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
}

/// Every command, by its binary.
const COMMANDS: [&str; 15] = [
    "record",
    "import",
    "synth",
    "cat",
    "merge",
    "align",
    "order",
    "pag",
    "gag",
    "cp",
    "whatif",
    "calibrate",
    "report",
    "diagnose",
    "exp",
];

#[test]
fn every_command_describes_every_option_and_gives_examples() {
    for verb in COMMANDS {
        let help = String::from_utf8(ok(verb, &["-h"], b"")).unwrap();
        let options = help.lines().skip_while(|l| *l != "Options:").skip(1).take_while(|l| !l.is_empty());
        for line in options {
            // `  -f, --format <FORMAT>  Output form ...`: the text after two spaces.
            let text = line.trim_start().split_once("  ").map(|(_, t)| t.trim());
            assert!(text.is_some_and(|t| !t.is_empty()), "spoor-{verb}: no text for `{line}`\n{help}");
        }
        let examples: Vec<&str> = help.lines().skip_while(|l| *l != "Examples:").skip(1).collect();
        assert!(examples.iter().filter(|l| l.contains(&format!("spoor-{verb} "))).count() >= 2, "{help}");
        // The long help keeps them after the command's description.
        let long = String::from_utf8(ok(verb, &["--help"], b"")).unwrap();
        assert!(
            long.contains("Examples:") && long.ends_with(&format!("{}\n", examples.join("\n"))),
            "{long}"
        );
    }
}

#[test]
fn man_pages_and_completions_cover_every_command() {
    let dir = tempfile::tempdir().unwrap();
    ok("spoor", &["man", "-o", dir.path().to_str().unwrap()], b"");
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    let mut want: Vec<String> = COMMANDS.iter().map(|verb| format!("spoor-{verb}.1")).collect();
    want.push("spoor.1".into());
    want.sort();
    assert_eq!(pages, want);
    let cp = std::fs::read_to_string(dir.path().join("spoor-cp.1")).unwrap();
    assert!(
        cp.contains(".TH spoor-cp 1") && cp.contains("\\-\\-zeroing") && cp.contains("Examples:"),
        "{cp}"
    );
    assert_eq!(ok("spoor", &["man", "cp"], b""), cp.as_bytes());
    let front = String::from_utf8(ok("spoor", &["man"], b"")).unwrap();
    assert!(front.contains(".TH spoor 1") && front.contains("whatif"), "{front}");
    let o = run("spoor", &["man", "nosuch"], b"", &[]);
    assert_eq!(o.status.code(), Some(2));
    let bash = String::from_utf8(ok("spoor", &["completions", "bash"], b"")).unwrap();
    for verb in COMMANDS {
        assert!(bash.contains(&format!(" spoor-{verb}\n")), "no completion for spoor-{verb}");
    }
    assert!(bash.contains("-o default spoor\n") && bash.contains("--zeroing"));
    let zsh = String::from_utf8(ok("spoor", &["completions", "zsh"], b"")).unwrap();
    assert_eq!(zsh.matches("#compdef ").count(), COMMANDS.len() + 1);
    assert_eq!(run("spoor", &["completions", "tcsh"], b"", &[]).status.code(), Some(2));
}

#[test]
fn gzip_and_hand_written_text_are_read_everywhere() {
    let text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/late-sender.txt")).unwrap();
    let mut gz = flate2_gzip(&text);
    let a = ok("cat", &["-"], &text);
    let b = ok("cat", &["-"], &gz);
    assert_eq!(a, b);
    gz.truncate(gz.len() - 10);
    let o = run("cat", &["-"], &gz, &[]);
    assert_eq!(o.status.code(), Some(1));
}

fn flate2_gzip(b: &[u8]) -> Vec<u8> {
    let mut c = Command::new("gzip").arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut i = c.stdin.take().unwrap();
    let b = b.to_vec();
    let t = std::thread::spawn(move || i.write_all(&b).unwrap());
    let o = c.wait_with_output().unwrap();
    t.join().unwrap();
    o.stdout
}

/// A text trace whose definitions name ids that are not defined is refused by every
/// command that reads a trace, as the binary reader refuses such a definitions chunk:
/// exit 1, the file and the line of the definition at fault, never a panic, and no
/// binary file written for spoor's own reader to reject later.
#[test]
fn text_definitions_naming_undefined_ids_are_refused_everywhere() {
    let head = "spoor-text 1\napp 0 a\nmachine 0 m\n";
    let events = "0 0 - enter main\n0 10 - leave main\n";
    let cases = [
        ("process 0 p app=0 machine=3 rank=0\nlocation 0 l process=0 thread=0\n", 4, "machine 3"),
        ("process 0 p app=2 machine=0 rank=0\nlocation 0 l process=0 thread=0\n", 4, "application 2"),
        ("process 0 p app=0 machine=0 rank=0\nlocation 0 l process=5 thread=0\n", 5, "process 5"),
        (
            "process 0 p app=0 machine=0 rank=0\nlocation 0 l process=0 thread=0\ncomm 0 w members=0,9\n",
            6,
            "member location 9",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let commands: [(&str, &[&str]); 8] = [
        ("cat", &[]),
        ("cat", &["-f", "binary", "-o"]),
        ("report", &[]),
        ("order", &[]),
        ("align", &[]),
        ("merge", &[]),
        ("pag", &[]),
        ("cp", &[]),
    ];
    for (i, (defs, line, what)) in cases.iter().enumerate() {
        let input = dir.path().join(format!("bad{i}.txt"));
        std::fs::write(&input, format!("{head}{defs}{events}")).unwrap();
        let out = dir.path().join(format!("bad{i}.spoor"));
        for (cmd, args) in commands {
            let mut args: Vec<&str> = args.to_vec();
            if args.last() == Some(&"-o") {
                args.push(out.to_str().unwrap());
            }
            args.push(input.to_str().unwrap());
            let o = run(cmd, &args, b"", &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{cmd} {args:?}: {err}");
            assert!(!err.contains("panicked"), "{cmd} {args:?}: {err}");
            let at = format!("bad{i}.txt: line {line}: ");
            assert!(err.contains(&at) && err.contains(what), "{cmd} {args:?}: {err}");
        }
        assert!(!out.exists(), "spoor-cat -f binary wrote {}", out.display());
    }
}
