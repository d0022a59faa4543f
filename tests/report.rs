//! spoor-report end to end: every output form, the Chrome export, comparison mode,
//! errors and exit codes, output identical for 1 and many threads, a 1,000-process
//! space-time diagram, and the HTML report opened in headless Chromium.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin(name: &str) -> &'static str {
    match name {
        "report" => env!("CARGO_BIN_EXE_spoor-report"),
        "order" => env!("CARGO_BIN_EXE_spoor-order"),
        "synth" => env!("CARGO_BIN_EXE_spoor-synth"),
        _ => unreachable!("{name}"),
    }
}

fn testdata(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name).to_string_lossy().into_owned()
}

fn run(name: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    common::run_with_stdin(bin(name), args, stdin, env)
}

fn ok(name: &str, args: &[&str]) -> Vec<u8> {
    let out = run(name, args, b"", &[]);
    assert!(out.status.success(), "spoor-{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn text(name: &str, args: &[&str]) -> String {
    String::from_utf8(ok(name, args)).unwrap()
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }
    fn path(&self, f: &str) -> String {
        self.0.path().join(f).to_string_lossy().into_owned()
    }
    /// A text trace through spoor-order, written to `f`.
    fn ordered(&self, src: &str, f: &str) -> String {
        let out = self.path(f);
        ok("order", &[src, "-o", &out]);
        out
    }
    fn synth(&self, args: &[&str], f: &str) -> String {
        let raw = self.path(&format!("{f}.raw"));
        let mut a = args.to_vec();
        a.extend(["-o", &raw]);
        ok("synth", &a);
        self.ordered(&raw, f)
    }
}

#[test]
fn csv_of_one_table_is_exact() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    // Hand-worked in testdata/report/late-sender.expected.
    assert_eq!(
        text("report", &[&t, "--table", "messages", "-f", "csv"]),
        "time,messages,min,avg,max\ntransit,2,50000,50000,50000\nqueue,2,0,0,0\n\
         recv_wait,2,8030000,8565000,9100000\nprocessing,1,20000,20000,20000\nreply,0,,,\n"
    );
    assert_eq!(
        text("report", &[&t, "-t", "profile", "-l", "process", "-m", "wait", "-f", "csv"]),
        "process,wait,share\nrank2,9180000,52.48713550600343\nrank1,8160000,46.65523156089194\nrank0,150000,0.8576329331046312\n"
    );
    let several =
        text("report", &[&t, "-t", "utilization", "-t", "histogram", "--hist", "calls", "-f", "csv"]);
    assert!(
        several
            .starts_with("# utilization\nprocess,application,threads,busy,idle,blocked,busy,idle,blocked\n"),
        "{several}"
    );
    assert!(several.contains("\n\n# histogram.calls\nstart,end,calls\n"), "{several}");
}

#[test]
fn json_holds_every_table_and_histogram() {
    let d = Dir::new();
    let t = d.ordered(&testdata("report/server.txt"), "s.spoor");
    let v: serde_json::Value =
        serde_json::from_slice(&ok("report", &[&t, "-f", "json", "--hist", "busy", "--hist", "npt"]))
            .unwrap();
    assert_eq!(v["ordered"], true);
    assert_eq!(v["matched"], true);
    assert_eq!(v["span"]["end_ns"], 12_000_000);
    let names: Vec<&str> =
        v["tables"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "metrics.application",
            "metrics.machine",
            "metrics.process",
            "metrics.thread",
            "metrics.procedure",
            "callgraph",
            "npt",
            "utilization",
            "messages",
            "transactions"
        ]
    );
    let h = &v["histograms"][1];
    assert_eq!(h["metric"], "npt");
    let sum: f64 = h["values"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum();
    assert!((sum - 10_000_000.0).abs() < 1e-3, "{sum}");
    let start = h["start_ns"].as_i64().unwrap();
    let bin = h["bin_ns"].as_i64().unwrap();
    assert!(start <= 0 && start + bin * h["values"].as_array().unwrap().len() as i64 > 12_000_000);
}

#[test]
fn text_report_and_standard_input() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    let bytes = std::fs::read(&t).unwrap();
    let out = run("report", &["-"], &bytes, &[]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    for title in [
        "Metric table: process level",
        "Call graph (gprof)",
        "NPT profile",
        "Utilization per process",
        "Message transactions",
        "Time histogram of busy",
    ] {
        assert!(s.contains(title), "{title} missing:\n{s}");
    }
    assert_eq!(s, text("report", &[&t]), "a file and a pipe give the same report");
}

#[test]
fn unordered_input_and_bad_names_are_errors_listing_what_exists() {
    let d = Dir::new();
    let raw = testdata("late-sender.txt");
    // Without spoor-order: what needs matching is left out with a note, or refused when asked for.
    let s = text("report", &[&raw]);
    assert!(
        s.contains("note: no message transactions: they need matched messages; run spoor-order first"),
        "{s}"
    );
    let e = run("report", &[&raw, "-t", "messages"], b"", &[]);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("run spoor-order first"));
    let t = d.ordered(&raw, "ls.spoor");
    for (args, want) in [
        (
            vec!["-t", "profile", "-l", "process", "-m", "speed"],
            "unknown metric `speed` at the process level; its metrics are: elapsed, cpu, busy",
        ),
        (
            vec!["-l", "galaxy"],
            "unknown level `galaxy`; the levels are: application, machine, process, thread, procedure",
        ),
        (vec!["-t", "flamegraph"], "unknown table `flamegraph`; the tables are: metrics, profile"),
        (
            vec!["--hist", "elapsed"],
            "unknown histogram metric `elapsed`; the metrics over time are: busy, wait",
        ),
        (vec!["--focus", "process=rank7"], "no process named `rank7`; the processs are: rank0, rank1, rank2"),
        (
            vec!["-t", "profile"],
            "the profile table needs --metric; the metrics of the procedure level are: calls, elapsed, self",
        ),
        (vec!["-t", "spacetime"], "the space-time diagram is a picture: use --format svg or html"),
    ] {
        let mut a = vec![t.as_str()];
        a.extend(args.iter());
        let o = run("report", &a, b"", &[]);
        assert_eq!(o.status.code(), Some(1), "{a:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{a:?}: {err}");
    }
    let o = run("report", &["/nonexistent/trace.spoor"], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/trace.spoor"));
    let mut bad = std::fs::read(&t).unwrap();
    let n = bad.len();
    bad.truncate(n - 40);
    let f = d.path("cut.spoor");
    std::fs::write(&f, &bad).unwrap();
    let o = run("report", &[&f], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.spoor") && err.contains("byte"), "{err}");
}

/// The Chrome export parses, names every process and thread, nests each thread's
/// slices, and pairs every message's flow start with its end; the overlay is a track.
#[test]
fn chrome_export_is_well_formed() {
    let d = Dir::new();
    let t = d.synth(&["master-worker", "--procs", "4", "--steps", "3"], "mw.spoor");
    let v: serde_json::Value = serde_json::from_slice(&ok("report", &[&t, "-f", "chrome"])).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = evs
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(evs.iter().filter(|e| e["name"] == "thread_name").count(), 4);
    let mut depth = std::collections::HashMap::new();
    for e in evs {
        match e["ph"].as_str().unwrap() {
            "B" => *depth.entry(e["tid"].as_u64().unwrap()).or_insert(0i64) += 1,
            "E" => {
                let d = depth.entry(e["tid"].as_u64().unwrap()).or_insert(0);
                *d -= 1;
                assert!(*d >= 0, "an E without its B");
            }
            _ => {}
        }
    }
    assert!(depth.values().all(|&d| d == 0), "every B closed: {depth:?}");
    let ids = |ph: &str| {
        let mut v: Vec<String> =
            evs.iter().filter(|e| e["ph"] == ph).map(|e| e["id"].as_str().unwrap().to_owned()).collect();
        v.sort();
        v
    };
    let (s, f) = (ids("s"), ids("f"));
    // 3 workers x 3 tasks: 9 tasks + 3 stops sent, 9 results back.
    assert_eq!(s.len(), 21);
    assert_eq!(s, f, "every flow start has its end");
    assert!(evs.iter().any(|e| e["ph"] == "X" && e["cat"] == "wait"));
    let bytes = ok("report", &[&t, "-f", "chrome"]);
    assert_eq!(bytes, ok("report", &[&t, "-f", "chrome"]), "deterministic");
}

#[test]
fn chrome_export_draws_an_overlay_track() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    let o = spoor_report::Overlay {
        name: "critical path".into(),
        segments: vec![
            spoor_report::Segment { loc: 0, start: 0, end: 10_030_000 },
            spoor_report::Segment { loc: 1, start: 10_080_000, end: 10_100_000 },
        ],
        arcs: vec![spoor_report::PathArc {
            from_loc: 0,
            from_time: 10_030_000,
            to_loc: 1,
            to_time: 10_080_000,
        }],
    };
    let buf = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    struct W(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
    impl Write for W {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    spoor_report::analyze(&t, &Default::default(), Some(Box::new(W(buf.clone()))), Some(&o)).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf.borrow()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let track =
        evs.iter().find(|e| e["name"] == "process_name" && e["args"]["name"] == "critical path").unwrap();
    assert_eq!(track["pid"], 3);
    let segs: Vec<&serde_json::Value> =
        evs.iter().filter(|e| e["cat"] == "critical" && e["ph"] == "X").collect();
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0]["ts"].as_f64(), Some(0.0));
    assert_eq!(segs[0]["dur"].as_f64(), Some(10030.0));
    assert_eq!(segs[1]["name"], "rank1");
    assert_eq!(
        evs.iter().filter(|e| e["cat"] == "critical" && (e["ph"] == "s" || e["ph"] == "f")).count(),
        2
    );
}

/// The output does not depend on the number of threads.
#[test]
fn identical_with_one_and_many_threads() {
    let d = Dir::new();
    let t = d.synth(&["stencil", "--procs", "64", "--steps", "20"], "st.spoor");
    for form in ["json", "svg", "html", "chrome"] {
        let one = run("report", &[&t, "-f", form], b"", &[("RAYON_NUM_THREADS", "1")]);
        let many = run("report", &[&t, "-f", form], b"", &[("RAYON_NUM_THREADS", "8")]);
        assert!(one.status.success() && many.status.success());
        assert_eq!(one.stdout, many.stdout, "{form}");
    }
}

/// 1,000 processes: rows of the space-time diagram are grouped and the caption says how.
#[test]
fn spacetime_at_a_thousand_processes() {
    let d = Dir::new();
    let t = d.synth(&["ring", "--procs", "1000", "--steps", "3"], "ring.spoor");
    let svg = text("report", &[&t, "-f", "svg", "--rows", "50", "--arrows", "200"]);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("1000 locations in 50 rows of up to 20 consecutive locations"), "{}", &svg[..600]);
    assert!(svg.contains("3000 messages, the 200 longest in transit drawn"), "{}", &svg[..600]);
    let rows = svg.split(r#"<g class="rows">"#).nth(1).unwrap().split("</g>").next().unwrap();
    assert_eq!(rows.matches("</text>").count(), 50, "one label a row");
    let msgs = svg.split(r#"<g class="messages""#).nth(1).unwrap().split("</g>").next().unwrap();
    assert_eq!(msgs.matches("<line").count(), 200);
    assert!(svg.len() < 3_000_000, "{} bytes", svg.len());
}

#[test]
fn compare_sets_runs_side_by_side() {
    let d = Dir::new();
    let a = d.synth(&["barrier", "--procs", "4", "--steps", "5", "--imbalance", "0"], "a.spoor");
    let b = d.synth(&["barrier", "--procs", "4", "--steps", "5", "--imbalance", "0.5"], "b.spoor");
    let csv = text("report", &[&a, "--compare", &b, "-l", "application", "-f", "csv"]);
    let mut lines = csv.lines();
    let head = lines.next().unwrap();
    assert_eq!(head, format!("application,metric,{a},{b},diff {b},diff% {b}"));
    let elapsed: Vec<&str> = lines.find(|l| l.contains(",elapsed,")).unwrap().split(',').collect();
    let (x, y, diff): (f64, f64, f64) =
        (elapsed[2].parse().unwrap(), elapsed[3].parse().unwrap(), elapsed[4].parse().unwrap());
    assert_eq!(diff, y - x);
    let wait: Vec<&str> = csv.lines().find(|l| l.contains(",wait,")).unwrap().split(',').collect();
    assert!(
        wait[3].parse::<f64>().unwrap() > wait[2].parse::<f64>().unwrap(),
        "imbalance means more waiting: {wait:?}"
    );
    let svg = text("report", &[&a, "--compare", &b, "-f", "svg", "--hist", "busy"]);
    let hist = svg.split("histogram-busy").nth(1).unwrap();
    assert_eq!(hist.matches(r#"class="series""#).count(), 2, "the runs overlaid");
    let t = text("report", &[&a, "--compare", &a, "-l", "process"]);
    assert!(t.contains(&format!("diff {a}#2")), "{t}");
}

fn chromium() -> String {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c.to_owned();
        }
    }
    panic!(
        "headless Chromium is needed to check the HTML report: install Debian's chromium (scripts/test does)"
    );
}

/// The HTML report opened in headless Chromium: the DOM it builds holds every table and
/// picture, and nothing was fetched from outside the file.
#[test]
fn html_report_in_headless_chromium() {
    let d = Dir::new();
    let t = d.synth(&["spa", "--procs", "6", "--steps", "4"], "spa.spoor");
    let html = d.path("report.html");
    ok("report", &[&t, "-f", "html", "--hist", "busy", "--hist", "cpu", "-m", "self", "-o", &html]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://")
            || page.matches("http://").count() == page.matches("http://www.w3.org/2000/svg").count(),
        "no external resources"
    );
    assert!(!page.contains("<script") && !page.contains("<link"));
    let profile = PathBuf::from(d.path("chrome-profile"));
    std::fs::create_dir_all(&profile).unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{html}"),
        ])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for id in [
        "metrics.application",
        "metrics.process",
        "metrics.procedure",
        "profile.procedure.self",
        "callgraph",
        "npt",
        "utilization",
        "messages",
        "transactions",
        "histogram-busy",
        "histogram-cpu",
        "spacetime",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{id} missing from the DOM");
    }
    // The tables have their rows: 6 processes.
    let procs = dom.split("id=\"metrics.process\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert_eq!(procs.matches("<tr>").count(), 1 + 6);
    let st = dom.split("id=\"spacetime\"").nth(1).unwrap().split("</svg>").next().unwrap();
    assert!(st.matches("<rect").count() > 10, "the space-time diagram has its bars");
    // A screenshot: Chromium lays the page out and paints it.
    let shot = d.path("shot.png");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={shot}"),
            "--window-size=1280,2000",
            &format!("file://{html}"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "{} bytes", png.len());
}

/// testdata/order/skew-samples.txt ordered without spoor-align: rank 1's five answers
/// arrive, by the recorded times, before they leave. The report says so on standard
/// error and among its notes (their transit times are negative).
#[test]
fn messages_received_before_they_are_sent_are_named() {
    let d = Dir::new();
    let t = d.ordered(&testdata("order/skew-samples.txt"), "skew.spoor");
    let out = run("report", &[&t, "-f", "json"], b"", &[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spoor-report: warning: ")
            && err.contains("5 messages are received before they are sent"),
        "{err}"
    );
    assert!(err.contains("run spoor-align first"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["notes"].to_string().contains("5 messages are received before they are sent"),
        "{}",
        v["notes"]
    );
    // On one clock (late-sender.txt) nothing is said.
    let t = d.ordered(&testdata("late-sender.txt"), "late.spoor");
    let out = run("report", &[&t], b"", &[]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
