//! spoor-gag, spoor-whatif and spoor-calibrate end to end: pipelines from spoor-order,
//! GAG files read by spoor-cp, scenario sweeps, procedure LBF, search, tables, errors.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// testdata/cp/spa.txt ordered, in a temporary folder.
fn spa(dir: &Path) -> String {
    let o = dir.join("spa.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("cp/spa.txt"), "-o", &o]);
    o
}

#[test]
fn gag_file_read_by_spoor_cp_is_the_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let gag = dir.path().join("spa.gag").to_string_lossy().into_owned();
    ok_text("gag", &["-q", "--place", "server;client1,client2,client3", &o, "-o", &gag]);
    let cp = ok_text("cp", &["--profile", "process", &gag]);
    assert!(cp.starts_with("critical path: 11.600 ms (cpu mode"), "{cp}");
    assert!(cp.contains("cpu0") && cp.contains("cpu1"), "{cp}");
    let out = run("gag", &["--predict", "--place", "server;client1,client2,client3", &o], b"", &[]);
    let p = String::from_utf8_lossy(&out.stdout);
    assert!(p.starts_with("predicted time: 11.600 ms on 2 processors"), "{p}");
    // 32 events take well under a millisecond: a time shown as 0.000 s gives no rate
    // (it gave hundreds of thousands of M events/s).
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("32 events simulated in "), "{e}");
    for timed in ["0.000 s (", "0.000 s on the simulating thread's CPU: "] {
        assert!(
            e.match_indices(timed).all(|(i, _)| e[i + timed.len()..].starts_with("too short to time")),
            "{e}"
        );
    }
    // A placement file and the rules.
    let pf = dir.path().join("p.txt");
    std::fs::write(&pf, "# clients together\nsrv: server\nclients: client1, client2, client3\n").unwrap();
    let p = ok_text("gag", &["--predict", "--place-file", pf.to_str().unwrap(), &o]);
    assert!(p.starts_with("predicted time: 11.600 ms"), "{p}");
    let p = ok_text("gag", &["--predict", "--place-by", "process", &o]);
    assert!(p.starts_with("predicted time: 9.600 ms on 4 processors"), "{p}");
    let p = ok_text("gag", &["--predict", "--place-by", "block:1", &o]);
    assert!(p.starts_with("predicted time: 13.380 ms on 1 processors"), "{p}");
    // NF: a table with 1 ms between processors (worked in the scenario test below).
    let p =
        ok_text("gag", &["--predict", "--place-by", "process", "--net", &testdata("whatif/slow.csv"), &o]);
    assert!(p.starts_with("predicted time: 11.500 ms"), "{p}");
}

#[test]
fn bad_placements_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let out = run("gag", &["--place", "server,clientX;client1", &o], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("clientX") && e.contains("leaves out these processes: client2, client3"), "{e}");
    // A rule that does not parse is a usage error.
    let out = run("gag", &["--place-by", "blocks:2", &o], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("block:K"));
    // A table that is not monotone is accepted, with a warning naming the rows.
    let out = run(
        "gag",
        &["--predict", "--place-by", "process", "--net", &testdata("whatif/falling.csv"), &o],
        b"",
        &[],
    );
    assert!(out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("warning") && e.contains("remote time falls from 9000 ns at 64 bytes"), "{e}");
    // Wall-mode PAG files are refused.
    let wall = dir.path().join("wall.pag");
    let out = Command::new(env!("CARGO_BIN_EXE_spoor-pag"))
        .args(["-q", "--weight", "wall", &o, "-o", wall.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    // A PAG of the other mode does not fit the command: a usage error, saying what to run.
    let out = run("gag", &["--predict", wall.to_str().unwrap()], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wall mode"));
}

#[test]
fn scenario_sweep_gives_the_hand_worked_rows() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let sc = testdata("whatif/spa-scenarios.toml");
    let csv = ok_text("whatif", &["-q", "scenarios", &sc, &o]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 17, "{csv}");
    let row = |placement: &str, net: &str, mv: &str, zero: &str| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.split(',').map(str::to_owned).collect::<Vec<_>>())
            .find(|c| c[1] == placement && c[2] == net && c[3] == mv && c[4] == zero)
            .unwrap_or_else(|| panic!("no row {placement} {net} {mv} {zero}: {csv}"))
    };
    // (predicted, measured, ideal): testdata/cp/spa.txt and testdata/whatif/spa-clients.md.
    let r = row("process", "measured", "none", "none");
    assert_eq!(r[5..9], ["4", "9600000", "9700000", "9600000"]);
    assert_eq!(row("process", "measured", "servBusy2", "none")[6], "5110000");
    assert_eq!(row("process", "measured", "none", "servBusy1")[6], "7950000");
    let r = row("clients together", "measured", "none", "none");
    assert_eq!((r[5].as_str(), r[6].as_str(), r[10].as_str()), ("2", "11600000", "0.208333"));
    // 1 ms per message, every process on its own processor: server's receives end at
    // 2.00, 4.15 and 7.30, client3's at 11.40, its end at 11.50.
    assert_eq!(row("process", "slow", "none", "none")[6], "11500000");
    // JSON: the same rows, and the same on one thread as on several.
    let json = ok_text("whatif", &["-q", "scenarios", &sc, "-f", "json", "--threads", "1", &o]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 16);
    assert_eq!(v[0]["predicted_ns"], 9600000);
    assert_eq!(v[0]["move"], "none");
    assert_eq!(json, ok_text("whatif", &["-q", "scenarios", &sc, "-f", "json", "--threads", "3", &o]));
    // Bad scenario files name the file and line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "moves = [\"servBusy2\"]\n[[placement]]\nby = \"process\"\nplace = \"server\"\n")
        .unwrap();
    let out = run("whatif", &["scenarios", bad.to_str().unwrap(), &o], b"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exactly one of by, place, file"));
    std::fs::write(&bad, "movs = []\n").unwrap();
    let out = run("whatif", &["scenarios", bad.to_str().unwrap(), &o], b"", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && e.contains("bad.toml: line 1"), "{e}");
    // Values the trace does not know: the file and the line of the value.
    let fails = |text: &[u8], want: &[&str]| {
        std::fs::write(&bad, text).unwrap();
        let out = run("whatif", &["scenarios", bad.to_str().unwrap(), &o], b"", &[]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{e}");
        for w in want {
            assert!(e.contains(w), "{e} lacks {w}");
        }
        assert!(!e.contains("--place"), "{e}");
    };
    fails(
        b"# two\n[[placement]]\nplace = \"server;clientX\"\n",
        &["bad.toml: line 3: place 'server;clientX'", "clientX"],
    );
    fails(
        b"moves = [\"servBusy2\",\n  \"nosuch\"]\n",
        &["bad.toml: line 2: moves: no procedure named `nosuch`"],
    );
    fails(b"\n\nzeroings = [\"nosuch\"]\n", &["bad.toml: line 3: zeroings: no procedure named `nosuch`"]);
    fails(b"\n[[placement]]\nby = \"blocks:2\"\n", &["bad.toml: line 2: placement 1: by = `blocks:2`"]);
    fails(b"moves = []\n# caf\xe9\n", &["bad.toml: line 2: byte 16: not valid UTF-8"]);
    // A placement file: the line of a name the trace does not have, and bad UTF-8.
    let pf = dir.path().join("p.txt");
    std::fs::write(&pf, "srv: server\nclients: client1, clientX\n").unwrap();
    let out = run("gag", &["--predict", "--place-file", pf.to_str().unwrap(), &o], b"", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1) && e.contains("p.txt: line 2: the placement names processes"),
        "{e}"
    );
    assert!(
        e.contains("clientX (line 2)") && e.contains("leaves out these processes: client2, client3"),
        "{e}"
    );
    std::fs::write(&pf, b"srv: server\nclients: client1,\xff client2, client3\n").unwrap();
    let out = run("gag", &["--predict", "--place-file", pf.to_str().unwrap(), &o], b"", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && e.contains("p.txt: line 2: byte 29: not valid UTF-8"), "{e}");
}

#[test]
fn scenario_zeroing_is_inclusive() {
    // testdata/cp/helper.txt: zeroing serve with the helper it calls leaves 1.30 ms; the
    // move of serve gives 4.21 ms (one processor per process: the cpu-mode path).
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("helper.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("cp/helper.txt"), "-o", &h]);
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, "moves = [\"serve\"]\nzeroings = [\"serve\"]\n").unwrap();
    let csv = ok_text("whatif", &["-q", "scenarios", sc.to_str().unwrap(), &h]);
    let predicted = |mv: &str, zero: &str| -> String {
        let cols = csv.lines().map(|l| l.split(',').collect::<Vec<_>>()).find(|c| c[3] == mv && c[4] == zero);
        cols.unwrap_or_else(|| panic!("{csv}"))[6].to_owned()
    };
    assert_eq!(predicted("none", "none"), "4400000");
    assert_eq!(predicted("none", "serve"), "1300000");
    assert_eq!(predicted("serve", "none"), "4210000");
}

#[test]
fn procedure_lbf_beside_zeroing_and_search() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let csv = ok_text("whatif", &["procedure", "servBusy1,servBusy2", &o]);
    assert!(csv.contains("servBusy1,9600000,7950000,0.171875,2000000,7950000,0.171875"), "{csv}");
    assert!(csv.contains("servBusy2,9600000,5110000,0.467708,6000000,3600000,0.625000"), "{csv}");
    // testdata/cp/helper.txt: serve's 3.10 ms (3.00 in its helper) moves with the reply
    // and saves 0.19 ms; its own 0.10 zeroed saves 0.10, with the helper 3.10.
    let h = dir.path().join("helper.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("cp/helper.txt"), "-o", &h]);
    let csv = ok_text("whatif", &["procedure", "serve", &h]);
    assert!(
        csv.ends_with(
            "\nserve,4400000,4210000,0.043182,3100000,4300000,0.022727,1300000,0.704545,0.061290,,\n"
        ),
        "{csv}"
    );
    // A procedure the trace lacks is a usage error, as an unknown application is.
    let out = run("whatif", &["procedure", "nothere", &o], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("servBusy2"));
    // Search on 2 processors: every strategy's prediction is a real GAG prediction of
    // its placement, and the local search is no worse than greedy, block or cyclic.
    let csv = ok_text("whatif", &["-q", "search", "2", &o]);
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.splitn(4, ',').map(|s| s.trim_matches('"').to_owned()).collect())
        .collect();
    assert_eq!(
        rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(),
        ["block:2", "cyclic:2", "greedy", "local search"]
    );
    let best: i64 = rows[3][2].parse().unwrap();
    // No placement on 0 processors (it gave one processor's, labelled as such).
    let out = run("whatif", &["search", "0", &o], b"", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("<K>"));
    assert!(out.stdout.is_empty());
    for r in &rows {
        let p = ok_text("gag", &["--predict", "--place", &r[3], &o]);
        let ms: f64 = p["predicted time: ".len()..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!((ms * 1e6).round() as i64, r[2].parse::<i64>().unwrap(), "{r:?}");
        assert!(best <= r[2].parse::<i64>().unwrap());
    }
}

#[test]
fn whatif_modes_are_subcommands_with_their_own_options() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let sc = testdata("whatif/spa-scenarios.toml");
    // Usage errors exit 2 and write nothing: no mode, an option of another mode, and
    // the former flags, which name the subcommand that replaces them.
    let usage = |args: &[&str], want: &str| {
        let out = run("whatif", args, b"", &[]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(want) && out.stdout.is_empty(), "{args:?}: {e}");
    };
    usage(&[&o], "unrecognized subcommand");
    usage(&["scenarios", &sc, "--place-by", "process", &o], "--place-by");
    usage(&["search", "2", "--place", "server", &o], "--place");
    usage(&["procedure", "serve", "--net", &testdata("whatif/slow.csv"), &o], "--net");
    usage(&["--scenarios", &sc, &o], "now a subcommand: spoor-whatif scenarios FILE [TRACE]");
    usage(&["-q", "--procedure=servBusy1", &o], "spoor-whatif procedure NAME[,NAME...] [TRACE]");
    usage(&["--search", "2", &o], "spoor-whatif search K [TRACE]");
    // The options shared by every mode may come before the subcommand or after it.
    let before = ok_text("whatif", &["-q", "-f", "json", "procedure", "servBusy1,servBusy2", &o]);
    assert_eq!(before, ok_text("whatif", &["procedure", "servBusy1,servBusy2", &o, "-f", "json", "-q"]));
    // The trace from standard input.
    let stdin = std::fs::read(&o).unwrap();
    assert_eq!(
        text(&ok("whatif", &["-q", "search", "2"], &stdin)),
        ok_text("whatif", &["-q", "search", "2", &o])
    );
}

#[test]
fn calibrate_measures_and_fits_tables_that_parse() {
    let t = ok_text("calibrate", &["--reps", "20", "--sizes", "1,4096,65536"]);
    assert_eq!(table_rows(&t), 3, "{t}");
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let t = ok_text("calibrate", &["--from-trace", &o]);
    assert!(t.contains("\nbytes,local_ns,remote_ns\n64,50000,50000\n"), "{t}");
    // Fitted from a synthetic trace with known transfer times: 2 us + bytes / (1 byte/ns).
    let raw = dir.path().join("ring.raw");
    let ring = dir.path().join("ring.o");
    ok_text(
        "synth",
        &["ring", "--procs", "4", "--steps", "20", "--bytes", "4096", "-o", raw.to_str().unwrap()],
    );
    ok_text("order", &["-q", raw.to_str().unwrap(), "-o", ring.to_str().unwrap()]);
    let t = ok_text("calibrate", &["--from-trace", ring.to_str().unwrap()]);
    assert!(t.contains("\n4096,"), "{t}");
    // Transfer times that fall with the size (testdata/whatif/falling-messages.txt): the
    // table keeps 50 us for 4096 bytes, says so, and its readers have nothing to warn of.
    let falling = dir.path().join("falling.o");
    ok_text("order", &["-q", &testdata("whatif/falling-messages.txt"), "-o", falling.to_str().unwrap()]);
    let table = dir.path().join("t.csv");
    ok_text("calibrate", &["--from-trace", falling.to_str().unwrap(), "-o", table.to_str().unwrap()]);
    let t = std::fs::read_to_string(&table).unwrap();
    assert!(t.ends_with("\nbytes,local_ns,remote_ns\n64,50000,50000\n4096,50000,50000\n"), "{t}");
    assert!(t.contains("# local time at 4096 bytes raised from 10000 ns to 50000 ns"), "{t}");
    let out =
        run("gag", &["--predict", "--net", table.to_str().unwrap(), falling.to_str().unwrap()], b"", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !e.contains("warning"), "{e}");
    // Measured tables are monotone too, whatever the noise.
    let t = ok_text("calibrate", &["--reps", "5", "--sizes", "1,2,4,8,16,32,64,128"]);
    std::fs::write(&table, &t).unwrap();
    let out =
        run("gag", &["--predict", "--net", table.to_str().unwrap(), falling.to_str().unwrap()], b"", &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !e.contains("warning"), "{t}{e}");
}

/// The number of rows of a table in the form of formats/nettable.md, checking the
/// header and that every row has three positive numbers.
fn table_rows(text: &str) -> usize {
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("bytes,local_ns,remote_ns"));
    let rows: Vec<&str> = lines.collect();
    for r in &rows {
        let cols: Vec<f64> = r.split(',').map(|c| c.parse().unwrap()).collect();
        assert_eq!(cols.len(), 3);
        assert!(cols[1] > 0.0 && cols[2] > 0.0, "{r}");
    }
    rows.len()
}

/// The whole output of every mode over the hand-made traces, against
/// testdata/whatif/golden/NAME (SPOOR_REGENERATE=1 writes them). The trace comes on
/// standard input, so no path of this machine is in the output.
#[test]
fn outputs_match_their_golden_files() {
    let ordered = |rel: &str| ok("order", &["-q", &testdata(rel)], b"");
    let (spa, helper) = (ordered("cp/spa.txt"), ordered("cp/helper.txt"));
    let (figure1, lock) = (ordered("whatif/figure1.txt"), ordered("whatif/lock.txt"));
    let (sweep, slow) = (testdata("whatif/spa-scenarios.toml"), testdata("whatif/slow.csv"));
    let runs: [(&str, &[u8], Vec<&str>); 13] = [
        ("spa.scenarios.csv", &spa, vec!["scenarios", &sweep, "-"]),
        ("spa.scenarios.json", &spa, vec!["scenarios", &sweep, "-", "-f", "json"]),
        ("spa.procedure.csv", &spa, vec!["procedure", "servBusy1,servBusy2"]),
        ("spa.procedure.json", &spa, vec!["procedure", "servBusy1,servBusy2", "-f", "json"]),
        ("spa.procedure-block2.csv", &spa, vec!["procedure", "servBusy1,servBusy2", "--place-by", "block:2"]),
        ("spa.search2.csv", &spa, vec!["search", "2"]),
        ("spa.search2.json", &spa, vec!["search", "2", "-f", "json"]),
        ("spa.search2-slow.csv", &spa, vec!["search", "2", "--net", &slow]),
        ("helper.procedure.csv", &helper, vec!["procedure", "serve,work"]),
        ("helper.search1.csv", &helper, vec!["search", "1"]),
        ("figure1.search2.csv", &figure1, vec!["search", "2"]),
        ("lock.search1.csv", &lock, vec!["search", "1"]),
        ("lock.search2.json", &lock, vec!["search", "2", "-f", "json"]),
    ];
    for (name, input, args) in runs {
        let args = [&["-q"][..], &args].concat();
        golden(&format!("whatif/golden/{name}"), &text(&ok("whatif", &args, input)));
    }
}

/// A network's `local` in a scenario file: the SPA's processes share one machine, so with
/// free local and 1 ms remote messages, local by machine frees every message (9.50 ms, the
/// cpu-mode path without transfers), while by processor (the default: one process a
/// processor here) or never they take 1 ms each (11.50 ms, as `slow` above).
#[test]
fn a_networks_local_is_what_the_scenario_file_says() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    std::fs::write(dir.path().join("net.csv"), "bytes,local_ns,remote_ns\n0,0,1000000\n").unwrap();
    let sc = dir.path().join("s.toml");
    let mut text = String::new();
    for (name, local) in [("default", None), ("machine", Some("machine")), ("never", Some("never"))] {
        text += &format!("[[network]]\nname = \"{name}\"\ntable = \"net.csv\"\n");
        if let Some(l) = local {
            text += &format!("local = \"{l}\"\n");
        }
    }
    std::fs::write(&sc, &text).unwrap();
    let csv = ok_text("whatif", &["-q", "scenarios", sc.to_str().unwrap(), &o]);
    let predicted = |net: &str| {
        let line = csv.lines().find(|l| l.split(',').nth(2) == Some(net)).unwrap_or_else(|| panic!("{csv}"));
        line.split(',').nth(6).unwrap().to_owned()
    };
    assert_eq!(predicted("default"), "11500000", "{csv}");
    assert_eq!(predicted("machine"), "9500000", "{csv}");
    assert_eq!(predicted("never"), "11500000", "{csv}");
    for (bad, says) in [
        (
            "[[network]]\ntable = \"net.csv\"\nlocal = \"rack\"\n",
            "line 3: local: `rack` is not a meaning of local",
        ),
        ("[[network]]\nname = \"x\"\nlocal = \"never\"\n", "line 3: local needs a table"),
    ] {
        std::fs::write(&sc, bad).unwrap();
        let out = run("whatif", &["scenarios", sc.to_str().unwrap(), &o], b"", &[]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(1) && e.contains(says), "{e}");
    }
}

#[test]
fn every_prediction_has_the_interval_of_its_recorded_computation() {
    // Every figure is worked in testdata/whatif/interval.txt.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("interval.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("whatif/interval.txt"), "-o", &o]);
    let said = "the tenths of the recording computed -5.5 % to +9.5 % off their usual speed (10 of 10 \
                tenths; 100 % of the computation repeats)";
    let p = ok_text("gag", &["--predict", "--place-by", "block:1", &o]);
    assert_eq!(p.lines().nth(1), Some(format!("interval: 190.000 ms to 220.000 ms: {said}").as_str()), "{p}");
    let p = ok_text("gag", &["--predict", "--place-by", "process", &o]);
    assert!(p.starts_with("predicted time: 101.000 ms on 2 processors"), "{p}");
    assert_eq!(p.lines().nth(1), Some(format!("interval: 95.473 ms to 110.547 ms: {said}").as_str()), "{p}");
    // Writing the GAG says it beside the prediction.
    let g = dir.path().join("g.gag").to_string_lossy().into_owned();
    let out = run("gag", &["--place-by", "block:1", &o, "-o", &g], b"", &[]);
    assert_success(&out, "spoor-gag -o");
    let e = text(&out.stderr);
    assert!(
        e.contains("predicted time 201.000 ms on 1 processors; interval 190.000 ms to 220.000 ms"),
        "{e}"
    );
    // spoor-whatif: a column pair for each scenario, and for the moved procedure.
    let csv = ok_text("whatif", &["-q", "scenarios", &two_placements(dir.path()), &o]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][11..], ["predicted_low_ns", "predicted_high_ns"], "{csv}");
    assert_eq!((rows[1][6], rows[1][11], rows[1][12]), ("101000000", "95472637", "110547264"), "{csv}");
    assert_eq!((rows[2][6], rows[2][11], rows[2][12]), ("201000000", "190000000", "220000000"), "{csv}");
    let json = ok_text("whatif", &["-q", "scenarios", &two_placements(dir.path()), "-f", "json", &o]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (v[1]["predicted_low_ns"].as_i64(), v[1]["predicted_high_ns"].as_i64()),
        (Some(190000000), Some(220000000))
    );
    let csv = ok_text("whatif", &["-q", "procedure", "work", "--place-by", "block:1", &o]);
    assert!(csv.lines().next().unwrap().ends_with(",moved_low_ns,moved_high_ns"), "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("work,201000000,201000000,"), "{csv}");
    assert!(csv.lines().nth(1).unwrap().ends_with(",190000000,220000000"), "{csv}");
    // A recording whose computation does not repeat says it has no interval.
    let p = ok_text("gag", &["-q", "--predict", "--place-by", "process", &stretch(dir.path())]);
    assert_eq!(
        p.lines().nth(1),
        Some("interval: none: no computation of the recording repeats, so its variation is unknown"),
        "{p}"
    );
}

/// testdata/whatif/stretch.txt ordered, in a temporary folder.
fn stretch(dir: &Path) -> String {
    let o = dir.join("stretch.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("whatif/stretch.txt"), "-o", &o]);
    o
}

/// A scenario file with one processor per process and both on one processor.
fn two_placements(dir: &Path) -> String {
    let sc = dir.join("two.toml");
    std::fs::write(&sc, "[[placement]]\nby = \"process\"\n[[placement]]\nby = \"block:1\"\n").unwrap();
    sc.to_string_lossy().into_owned()
}

/// The (predicted, measured) columns of each row of spoor-whatif's CSV.
fn predicted_measured(csv: &str) -> Vec<(String, String)> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|c| (c[6].into(), c[7].into()))
        .collect()
}

#[test]
fn predictions_cover_the_run_between_mpi_init_and_mpi_finalize_unless_a_stretch_is_named() {
    // Every figure is worked in testdata/whatif/stretch.txt.
    let dir = tempfile::tempdir().unwrap();
    let (o, sc) = (stretch(dir.path()), two_placements(dir.path()));
    let pair = |p: &str, m: &str| (p.to_owned(), m.to_owned());
    // No stretch named: from the last MPI_Init's return (32 ms) to the last MPI_Finalize's
    // entry (42 ms), said on standard error; the recorded placement is then predicted
    // exactly.
    let out = run("whatif", &["scenarios", &sc, &o], b"", &[]);
    assert_success(&out, "spoor-whatif scenarios");
    let e = text(&out.stderr);
    assert!(
        e.contains(
            "spoor-whatif: predicting the run from the last MPI_Init's return to the last \
             MPI_Finalize's entry (32 ms to 42 ms after its first event): start-up and shutdown, \
             76.7 % of the 43 ms measured, no model predicts; --window 0..43ms predicts the whole run"
        ),
        "{e}"
    );
    let rows = predicted_measured(&text(&out.stdout));
    assert_eq!(rows, [pair("10000000", "10000000"), pair("10000000", "10000000")]);
    // Quiet: the same rows, nothing said.
    let out = run("whatif", &["-q", "scenarios", &sc, &o], b"", &[]);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert_eq!(predicted_measured(&text(&out.stdout)), rows);
    // The whole run, as the note says: start-up's wall time is no CPU time, -65 %.
    let csv = ok_text("whatif", &["scenarios", &sc, &o, "--window", "0..43ms"]);
    assert_eq!(predicted_measured(&csv), [pair("15000000", "43000000"), pair("18000000", "43000000")]);
    // Its computation does not repeat: no interval.
    assert!(csv.lines().nth(1).unwrap().ends_with(",15000000,-0.651163,0.000000,,"), "{csv}");
    // The phase: 12 measured; both ranks on one processor 12.3.
    let csv = ok_text("whatif", &["--phase", "solve", "scenarios", &sc, &o]);
    assert_eq!(predicted_measured(&csv), [pair("12000000", "12000000"), pair("12300000", "12000000")]);
    // spoor-gag: the same stretches, the window from the first event or on the trace's clock.
    let gag = |args: &[&str]| {
        let out = run("gag", &[&["--predict"], args, &[&o]].concat(), b"", &[]);
        assert_success(&out, &format!("spoor-gag {args:?}"));
        (text(&out.stdout), text(&out.stderr))
    };
    let (p, e) = gag(&["--place-by", "block:1"]);
    assert!(p.starts_with("predicted time: 10.000 ms on 1 processors"), "{p}");
    assert!(e.contains("spoor-gag: predicting the run from the last MPI_Init's return"), "{e}");
    let (p, e) = gag(&["--place-by", "block:1", "--phase", "solve"]);
    assert!(p.starts_with(
        "predicted time: 12.300 ms on 1 processors (2 processes; cpu-mode critical path 12.000 ms"
    ));
    assert!(!e.contains("predicting"), "{e}");
    let (relative, _) = gag(&["--place-by", "process", "--window", "33ms..42.5ms"]);
    assert!(relative.starts_with("predicted time: 9.000 ms on 2 processors"), "{relative}");
    assert_eq!(gag(&["--place-by", "process", "--window", "@1.033s..1.0425s"]).0, relative);
    // The GAG of a stretch is its prediction.
    let g = dir.path().join("solve.gag").to_string_lossy().into_owned();
    ok_text("gag", &["-q", "--place-by", "block:1", "--phase", "solve", &o, "-o", &g]);
    let cp = ok_text("cp", &["--profile", "none", &g]);
    assert!(cp.starts_with("critical path: 12.300 ms (cpu mode"), "{cp}");
    // procedure and search modes predict the same stretch.
    let csv = ok_text("whatif", &["-q", "procedure", "compute", &o]);
    assert!(csv.lines().nth(1).unwrap().starts_with("compute,10000000,"), "{csv}");
    let csv = ok_text("whatif", &["-q", "search", "1", &o, "--phase", "solve"]);
    assert!(csv.lines().nth(1).unwrap().starts_with("block:1,1,12300000,"), "{csv}");
}

#[test]
fn bad_stretches_are_usage_errors_as_in_spoor_cp() {
    let dir = tempfile::tempdir().unwrap();
    let (o, sc) = (stretch(dir.path()), two_placements(dir.path()));
    let usage = |cmd: &str, args: &[&str], want: &str| {
        let out = run(cmd, args, b"", &[]);
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd} {args:?}: {e}");
        assert!(e.contains(want) && out.stdout.is_empty(), "{cmd} {args:?}: {e}");
    };
    let empty = "--window @0..5ms holds no event: the trace runs from 0 to 43 ms after its first event \
                 (@1000000000..1043000000 in ns)";
    let unknown = "no phase `setup` with a begin and an end; the trace has: solve\n";
    let both = "give --phase or --window, not both";
    for (cmd, args) in [
        ("gag", vec!["--predict", "--place-by", "process", &o]),
        ("gag", vec!["--place-by", "process", &o]),
        ("whatif", vec!["scenarios", &sc, &o]),
        ("whatif", vec!["procedure", "compute", &o]),
        ("whatif", vec!["search", "2", &o]),
        ("cp", vec![&o]),
    ] {
        usage(cmd, &[&args[..], &["--window", "@0..5ms"]].concat(), empty);
        usage(cmd, &[&args[..], &["--phase", "setup"]].concat(), unknown);
        usage(cmd, &[&args[..], &["--phase", "solve", "--window", "0..1ms"]].concat(), both);
        usage(cmd, &[&args[..], &["--window", "3ms"]].concat(), "--window 3ms: expected T0..T1 or @T0..T1");
    }
    // A trace without phases says so.
    let spa = spa(dir.path());
    usage("whatif", &["search", "2", &spa, "--phase", "solve"], "no phase `solve`: the trace has no phases");
}

/// Without MPI_Init the whole run is predicted, and a window holding all of it changes
/// nothing: every mode's output is the same with and without it.
#[test]
fn the_whole_run_as_a_window_gives_the_same_figures_as_no_window() {
    let dir = tempfile::tempdir().unwrap();
    let o = spa(dir.path());
    let sweep = testdata("whatif/spa-scenarios.toml");
    for args in [
        vec!["scenarios", &sweep, &o],
        vec!["procedure", "servBusy1,servBusy2", &o],
        vec!["search", "2", &o],
        vec!["search", "2", "-f", "json", &o],
    ] {
        let plain = run("whatif", &args, b"", &[]);
        assert_success(&plain, &format!("{args:?}"));
        assert!(!text(&plain.stderr).contains("predicting"), "{}", text(&plain.stderr));
        for window in ["0..9.7ms", "@0..1s"] {
            let windowed = ok_text("whatif", &[&args[..], &["--window", window]].concat());
            assert_eq!(windowed, text(&plain.stdout), "{args:?} --window {window}");
        }
    }
    let plain = ok_text("gag", &["--predict", "--place-by", "block:2", &o]);
    assert!(plain.starts_with("predicted time: "), "{plain}");
    assert_eq!(ok_text("gag", &["--predict", "--place-by", "block:2", "--window", "0..9.7ms", &o]), plain);
}

#[test]
fn the_recorded_placement_is_a_placement_rule() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("shared.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("cp/shared-cpu.txt"), "-o", &o]);
    // rank0 and rank1 were pinned to CPU 0, rank2 to CPU 1: two processors. Worked by
    // hand in the file: rank0's and rank1's work never overlaps, so sharing costs
    // nothing, and the path is the cpu-mode one without the wait for a processor.
    let out = run("gag", &["--predict", "--place-by", "recorded", &o], b"", &[]);
    assert!(out.status.success());
    let p = String::from_utf8_lossy(&out.stdout);
    assert!(p.starts_with("predicted time: 2.510 ms on 2 processors (3 processes"), "{p}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("note: the run was recorded with processes sharing processors"), "{e}");
    let gag = ok_text("gag", &["-q", "--place-by", "recorded", "--dump", &o]);
    assert!(gag.contains("node0:cpu0") && gag.contains("node0:cpu1"), "{gag}");
    // A trace that does not say where its processes ran: refused, naming them.
    let spa = spa(dir.path());
    let out = run("gag", &["--predict", "--place-by", "recorded", &spa], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("the trace does not say where server, client1, client2, client3 ran"), "{e}");
}

/// a works 2 ms and sends to b; b waits from the start for A's message, then works 1 ms.
const WAITER: &str = "spoor-text 1
app 0 waiter
machine 0 node0
process 0 a app=0 machine=0 rank=0
process 1 b app=0 machine=0 rank=1
location 0 a process=0 thread=0
location 1 b process=1 thread=0
comm 0 MPI_COMM_WORLD members=0,1
0 0    0    process_begin
1 0    0    process_begin
1 0    0    recv_begin from=0 tag=0
0 0    0    enter work
0 2ms  2ms  leave work
0 2ms  2ms  send to=1 tag=0 bytes=8
0 2ms  2ms  process_end
1 2ms  0    recv_end from=0 tag=0 bytes=8
1 2ms  0    enter work
1 3ms  1ms  leave work
1 3ms  1ms  process_end
";

#[test]
fn a_spinning_wait_keeps_its_share_of_a_shared_processor() {
    // a and b on one processor. Waits that yield: a works its 2 ms alone, b its 1 ms
    // after the message: 3 ms. Waits that spin: b takes half the processor while it
    // waits, so a's 2 ms take 4 ms, then b works 1 ms alone: 5 ms. On a processor each,
    // nothing is shared: 3 ms either way.
    let trace = ok("order", &["-q"], WAITER.as_bytes());
    let predict = |args: &[&str]| {
        let out = text(&ok("gag", &[&["-q", "--predict"][..], args].concat(), &trace));
        out.split(" on ").next().unwrap_or_default().to_owned()
    };
    assert_eq!(predict(&["--place", "a,b"]), "predicted time: 3.000 ms");
    assert_eq!(predict(&["--place", "a,b", "--waits", "yield"]), "predicted time: 3.000 ms");
    assert_eq!(predict(&["--place", "a,b", "--waits", "spin"]), "predicted time: 5.000 ms");
    assert_eq!(predict(&["--place-by", "process", "--waits", "spin"]), "predicted time: 3.000 ms");
    let out = run("gag", &["--predict", "--waits", "busy", "-"], &trace, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected yield or spin"), "{}", text(&out.stderr));
}

#[test]
fn a_server_loop_takes_its_requests_as_they_arrive() {
    // Every figure is worked in testdata/whatif/wildcards.txt: 10 ms as recorded, 9 ms
    // when p2's request, there first, is served first.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("w.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("whatif/wildcards.txt"), "-o", &o]);
    let predict = |trace: &str, wildcards: &str| {
        let out =
            run("gag", &["--predict", "--place-by", "process", "--wildcards", wildcards, trace], b"", &[]);
        assert_success(&out, "spoor-gag --wildcards");
        (text(&out.stdout), text(&out.stderr))
    };
    let (recorded, _) = predict(&o, "recorded");
    assert!(recorded.starts_with("predicted time: 10.000 ms on 3 processors"), "{recorded}");
    let (arrival, notes) = predict(&o, "arrival");
    assert!(arrival.starts_with("predicted time: 9.000 ms on 3 processors"), "{arrival}");
    assert!(
        notes.contains(
            "--wildcards arrival: 1 server loop(s) take their requests as they arrive: p0 (2 requests)"
        ),
        "{notes}"
    );
    // The PAG file keeps which receives were for any source.
    let pag = dir.path().join("w.pag").to_string_lossy().into_owned();
    ok_text("pag", &["-q", &o, "-o", &pag]);
    assert!(predict(&pag, "arrival").0.starts_with("predicted time: 9.000 ms"));
    // spoor-whatif: a scenario row, and procedure LBF on a placement.
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, "[[placement]]\nby = \"process\"\n").unwrap();
    let csv = ok_text("whatif", &["-q", "--wildcards", "arrival", "scenarios", sc.to_str().unwrap(), &o]);
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[6], "9000000", "{csv}");
    // Every process on its own processor, serve1 moved to its client: p0 serves p2 from
    // 1 to 2 ms and replies to p1 at 5 ms, p1 then serves itself to 9 ms.
    let mv = ok_text(
        "whatif",
        &["-q", "--wildcards", "arrival", "procedure", "serve1", "--place-by", "process", "-f", "csv", &o],
    );
    let row: Vec<&str> = mv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[1], row[2]), ("9000000", "9000000"), "{mv}");
    // From 7 to 11 ms, p2's request (sent at 6 ms) is there from the stretch's start: the
    // loop has that one request, and serves it as recorded (serve1's last 2 ms, serve2).
    let window = |wildcards: &str| {
        let args =
            ["--predict", "--place-by", "process", "--window", "7ms..11ms", "--wildcards", wildcards, &o];
        let out = run("gag", &args, b"", &[]);
        assert_success(&out, "spoor-gag --window --wildcards");
        (text(&out.stdout), text(&out.stderr))
    };
    let (stretch, notes) = window("arrival");
    assert!(stretch.starts_with("predicted time: 3.000 ms"), "{stretch}");
    assert_eq!(stretch, window("recorded").0);
    assert!(notes.contains("p0 (1 requests)"), "{notes}");
    // A receive for any source that is not served and answered before the next keeps its
    // recorded send, and the note says so.
    let half = dir.path().join("half.txt");
    let without_second_reply: String = std::fs::read_to_string(testdata("whatif/wildcards.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("0 10ms  5ms   send") && !l.starts_with("2 10ms  1ms   recv_end"))
        .map(|l| l.replace("2 10ms  1ms   process_end", "2 6ms   1ms   process_end") + "\n")
        .collect();
    std::fs::write(&half, without_second_reply.replace("2 6ms   1ms   recv_begin from=0 tag=2\n", ""))
        .unwrap();
    let h = dir.path().join("h.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", half.to_str().unwrap(), "-o", &h]);
    let (kept, notes) = predict(&h, "arrival");
    assert_eq!(kept, predict(&h, "recorded").0);
    assert!(notes.contains("--wildcards arrival: no server loop"), "{notes}");
    // Not a value it knows: a usage error naming those it does.
    let out = run("gag", &["--predict", "--wildcards", "first", &o], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected recorded or arrival"), "{}", text(&out.stderr));
}

#[test]
fn processes_of_a_processor_take_turns_in_slices() {
    // Every figure is worked in testdata/whatif/slices.txt: 9 ms sharing equally, 8 ms
    // in slices of 1 ms, 7 ms in slices of 3 ms or the default 6 ms.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("s.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("whatif/slices.txt"), "-o", &o]);
    for (sharing, expect) in [
        ("equal", "9.000 ms"),
        ("slices:1ms", "8.000 ms"),
        ("slices:3ms", "7.000 ms"),
        ("slices", "7.000 ms"),
    ] {
        let p = ok_text("gag", &["-q", "--predict", "--place", "p0,p1;p2", "--sharing", sharing, &o]);
        assert!(p.starts_with(&format!("predicted time: {expect} on 2 processors")), "{sharing}: {p}");
    }
    // One process per processor takes no turns: the cpu-mode critical path.
    let p = ok_text("gag", &["-q", "--predict", "--place-by", "process", "--sharing", "slices:1ms", &o]);
    assert!(p.starts_with("predicted time: 7.000 ms on 3 processors"), "{p}");
    // The same through a scenario row.
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, "[[placement]]\nplace = \"p0,p1;p2\"\n").unwrap();
    let csv = ok_text("whatif", &["-q", "--sharing", "slices:1ms", "scenarios", sc.to_str().unwrap(), &o]);
    assert!(csv.lines().nth(1).unwrap().contains(",2,8000000,7000000,"), "{csv}");
    // Slices and spinning waits do not go together; a slice of nothing is no slice.
    for (args, says) in [
        (vec!["--sharing", "slices", "--waits", "spin"], "it needs --sharing equal"),
        (vec!["--sharing", "slices:0"], "expected a slice longer than 0"),
        (vec!["--sharing", "turns"], "expected equal, slices or slices:DURATION"),
    ] {
        let mut all = vec!["--predict", "--place", "p0,p1;p2"];
        all.extend(args);
        all.push(&o);
        let out = run("gag", &all, b"", &[]);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(text(&out.stderr).contains(says), "{all:?}: {}", text(&out.stderr));
    }
}
