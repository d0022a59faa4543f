//! spoor-report end to end: every output form, the Chrome export, comparison mode,
//! errors and exit codes, output identical for 1 and many threads, a 1,000-process
//! space-time diagram, and the HTML report opened in headless Chromium.

use crate::common::*;

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

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
        ok("order", &[src, "-o", &out], b"");
        out
    }
    fn synth(&self, args: &[&str], f: &str) -> String {
        let raw = self.path(&format!("{f}.raw"));
        let mut a = args.to_vec();
        a.extend(["-o", &raw]);
        ok("synth", &a, b"");
        self.ordered(&raw, f)
    }
}

#[test]
fn csv_of_one_table_is_exact() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    // Hand-worked in testdata/report/late-sender.expected.
    assert_eq!(
        ok_text("report", &[&t, "--table", "messages", "-f", "csv"]),
        "time,messages,min,avg,max\ntransit,2,50000,50000,50000\nqueue,2,0,0,0\n\
         recv_wait,2,8030000,8565000,9100000\nprocessing,1,20000,20000,20000\nreply,0,,,\n"
    );
    assert_eq!(
        ok_text("report", &[&t, "-t", "profile", "-l", "process", "-m", "wait", "-f", "csv"]),
        "process,wait,share\nrank2,9180000,52.48713550600343\nrank1,8160000,46.65523156089194\nrank0,150000,0.8576329331046312\n"
    );
    let several =
        ok_text("report", &[&t, "-t", "utilization", "-t", "histogram", "--hist", "calls", "-f", "csv"]);
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
        serde_json::from_slice(&ok("report", &[&t, "-f", "json", "--hist", "busy", "--hist", "npt"], b""))
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
    assert_eq!(s, ok_text("report", &[&t]), "a file and a pipe give the same report");
}

#[test]
fn unordered_input_and_bad_names_are_errors_listing_what_exists() {
    let d = Dir::new();
    let raw = testdata("late-sender.txt");
    // Without spoor-order: what needs matching is left out with a note, or refused when asked for.
    let s = ok_text("report", &[&raw]);
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
    // Cut short: read up to the cut, with a note; damaged in its last bytes: an error.
    let whole = std::fs::read(&t).unwrap();
    let n = whole.len();
    let f = d.path("cut.spoor");
    std::fs::write(&f, &whole[..n - 40]).unwrap();
    let o = run("report", &[&f], b"", &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("note: ") && err.contains("cut.spoor: cut short at byte"), "{err}");
    let mut bad = whole.clone();
    bad[n - 4..].fill(0xff);
    std::fs::write(&f, &bad).unwrap();
    let o = run("report", &[&f], b"", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cut.spoor") && err.contains("byte") && !err.contains("note"), "{err}");
}

/// The Chrome export parses, names every process and thread, nests each thread's
/// slices, and pairs every message's flow start with its end; the overlay is a track.
#[test]
fn chrome_export_is_well_formed() {
    let d = Dir::new();
    let t = d.synth(&["master-worker", "--procs", "4", "--steps", "3"], "mw.spoor");
    let v: serde_json::Value = serde_json::from_slice(&ok("report", &[&t, "-f", "chrome"], b"")).unwrap();
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
    let bytes = ok("report", &[&t, "-f", "chrome"], b"");
    assert_eq!(bytes, ok("report", &[&t, "-f", "chrome"], b""), "deterministic");
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
        ..Default::default()
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
    spoor_report::analyze(
        &t,
        &Default::default(),
        Some(Box::new(W(buf.clone()))),
        Some(&o),
        &spoor_model::Silent,
    )
    .unwrap();
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

/// The wait states and their root causes are the same whether their fold runs on a
/// thread of its own beside the decoding (a binary trace) or on one thread with every
/// other fold (the text form of the same trace).
#[test]
fn wait_states_the_same_from_a_binary_trace_and_its_text_form() {
    let d = Dir::new();
    let t = d.synth(&["stencil", "--procs", "16", "--steps", "200", "--imbalance", "0.3"], "st.spoor");
    let text = d.path("st.txt");
    ok("cat", &[&t, "-o", &text], b"");
    let csv =
        |trace: &str| String::from_utf8(ok("report", &["-t", "waits", "-f", "csv", trace], b"")).unwrap();
    assert!(csv(&t).contains("late_sender"));
    assert_eq!(csv(&t), csv(&text));
    // The JSON names its trace; everything else is the same.
    let json = |trace: &str| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&ok("report", &["-t", "waits", "-f", "json", trace], b"")).unwrap();
        v.as_object_mut().unwrap().remove("trace").expect("the trace named");
        v
    };
    assert_eq!(json(&t), json(&text));
}

/// 1,000 processes: rows of the space-time diagram are grouped and the caption says how.
#[test]
fn spacetime_at_a_thousand_processes() {
    let d = Dir::new();
    let t = d.synth(&["ring", "--procs", "1000", "--steps", "3"], "ring.spoor");
    let svg = ok_text("report", &[&t, "-f", "svg", "--rows", "50", "--arrows", "200"]);
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
    let csv = ok_text("report", &[&a, "--compare", &b, "-l", "application", "-f", "csv"]);
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
    let svg = ok_text("report", &[&a, "--compare", &b, "-f", "svg", "--hist", "busy"]);
    let hist = svg.split("histogram-busy").nth(1).unwrap();
    assert_eq!(hist.matches(r#"class="series""#).count(), 2, "the runs overlaid");
    let t = ok_text("report", &[&a, "--compare", &a, "-l", "process"]);
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

/// The HTML report opens with a summary, worked out by hand from late-sender.txt: the run
/// lasts 10.22 ms; the wall path is as long and holds rank 0's 10 ms of `compute`; rank 2
/// waits longest (9.15 ms in its receive, 0.03 ms in the barrier), then rank 1 (8.08 ms
/// and 0.08 ms). Section headings are not repeated as table captions.
#[test]
fn html_report_opens_with_a_summary() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    let page = ok_text("report", &[&t, "-f", "html"]);
    let first = page.find("<section").unwrap();
    let summary = &page[first..page[first..].find("</section>").unwrap() + first];
    assert!(summary.contains("<h2>Summary</h2>"), "{summary}");
    assert!(summary.contains("Elapsed time <b>10.220 ms</b> over 3 processes"), "{summary}");
    assert!(
        summary.contains("The critical path (wall mode) is <b>10.220 ms</b> (100.0 % of the elapsed time)")
    );
    let top_proc = r#"<tr><td>compute</td><td class="num">10.000</td><td class="num">97.8</td></tr>"#;
    assert!(summary.contains(top_proc), "{summary}");
    assert!(summary.contains(r#"<tr><td>rank0</td><td class="num">10.030</td>"#), "{summary}");
    let waits = &summary[summary.find("summary-waits").unwrap()..];
    let rank2 = waits.find("<td>rank2</td><td class=\"num\">9.180</td>").expect(waits);
    let rank1 = waits.find("<td>rank1</td><td class=\"num\">8.160</td>").expect(waits);
    assert!(rank2 < rank1, "the largest wait first");
    assert!(
        waits.contains(r#"<td class="num">9.150</td><td class="num">0.030</td><td class="num">0.000</td>"#)
    );
    assert!(!page.contains("<caption>"), "headings are not repeated as captions");
    // Waits outside every procedure are named as the tables name them (t2 of lock.txt
    // waits 2 ms for the lock outside any procedure).
    let lock = d.ordered(&testdata("whatif/lock.txt"), "lock.spoor");
    let page = ok_text("report", &[&lock, "-f", "html"]);
    assert!(
        page.contains(r#"<tr><td>(outside any procedure)</td><td>t2</td><td class="num">2.000</td>"#),
        "{page}"
    );
    assert!(!page.contains("?4294967295"));
    // An unordered trace has no path, and the summary says why.
    let page = ok_text("report", &[&testdata("late-sender.txt"), "-f", "html"]);
    assert!(page.contains("No critical path:"), "{}", &page[..2000.min(page.len())]);
}

/// The HTML report opened in headless Chromium: the DOM it builds holds every table and
/// picture, and nothing was fetched from outside the file.
#[test]
fn html_report_in_headless_chromium() {
    let d = Dir::new();
    let t = d.synth(&["spa", "--procs", "6", "--steps", "4"], "spa.spoor");
    let html = d.path("report.html");
    ok("report", &[&t, "-f", "html", "--hist", "busy", "--hist", "cpu", "-m", "self", "-o", &html], b"");
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

/// Wait states of a real Score-P run (casita-4 in $SPOOR_DATA): the late-sender chain
/// 0→1→2→3, each wait as otf2-print's times give it (from the receiver's entry into
/// MPI_Recv to the sender's MPI_SEND record), nothing else waiting in MPI_Recv, and rank
/// 0's extra work in `foo` the root cause of the chain.
#[test]
fn wait_states_of_a_real_trace_match_otf2_print() {
    let Some(data) = data() else { return };
    let archive = data.join("otf2/casita-4_mpi_ls_barr");
    let d = Dir::new();
    let raw = d.path("c4.spoor");
    ok("import", &[archive.to_str().unwrap(), "-o", &raw], b"");
    let aligned = d.path("c4-aligned.spoor");
    ok("align", &[&raw, "-o", &aligned], b"");
    let t = d.ordered(&aligned, "c4-ordered.spoor");
    let csv = ok_text("report", &[&t, "-t", "waits", "-f", "csv"]);
    // otf2-print: (location, time) of each ENTER MPI_Recv and each MPI_SEND's receiver.
    let out = Command::new("otf2-print")
        .arg(archive.join("traces.otf2"))
        .output()
        .expect("otf2-print (Debian's otf2-tools; scripts/test installs it)");
    let listing = String::from_utf8_lossy(&out.stdout);
    let mut recv_enter = std::collections::BTreeMap::new();
    let mut send_to = std::collections::BTreeMap::new();
    for line in listing.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let (loc, time): (u32, i64) = match (f[1].parse(), f[2].parse()) {
            (Ok(l), Ok(t)) => (l, t),
            _ => continue,
        };
        if f[0] == "ENTER" && line.contains("\"MPI_Recv\"") {
            recv_enter.insert(loc, time);
        } else if f[0] == "MPI_SEND" {
            let receiver: u32 = f[4].trim_end_matches(',').parse().unwrap();
            send_to.insert(receiver, time);
        }
    }
    assert_eq!(recv_enter.len(), 3, "{listing}");
    let section = csv.split("# waits.process").nth(1).unwrap();
    for rank in 1..=3u32 {
        let want = send_to[&rank] - recv_enter[&rank];
        let row = format!("late_sender,MPI Rank {rank},1,{want},{want}");
        assert!(section.contains(&row), "rank {rank}: want {row} in\n{section}");
    }
    // The root cause of the chain: rank 0's extra work in `foo`, the largest delay.
    let causes = csv.split("# waits.causes").nth(1).unwrap();
    let first = causes.lines().nth(2).unwrap();
    assert!(first.starts_with("MPI Rank 0/Master thread,main > late_sender > foo,"), "{causes}");
    let by_proc = csv.split("# waits.procedure").nth(1).unwrap();
    let total: i64 = (1..=3u32).map(|r| send_to[&r] - recv_enter[&r]).sum();
    assert!(by_proc.contains(&format!("late_sender,MPI_Recv,3,{total},")), "{by_proc}");
}

/// Wait states in the pictures: the Chrome export marks each one on its location's track
/// and the space-time diagram outlines the largest; rank 2's late sender of
/// late-sender.txt waits from 1 ms for 9.1 ms.
#[test]
fn wait_states_are_marked_in_the_chrome_export_and_the_spacetime_diagram() {
    let d = Dir::new();
    let t = d.ordered(&testdata("late-sender.txt"), "ls.spoor");
    let chrome = ok_text("report", &[&t, "-f", "chrome"]);
    assert_eq!(chrome.matches("\"cat\":\"wait-state\"").count(), 6, "{chrome}");
    let rank2 = r#""cat":"wait-state","name":"late_sender","pid":2,"tid":2,"ts":1000.000,"dur":9100.000"#;
    assert!(chrome.contains(rank2), "{chrome}");
    let svg = ok_text("report", &[&t, "-f", "svg"]);
    assert_eq!(svg.matches(r#"class="wait-state""#).count(), 6);
    assert!(svg.contains("late_sender: rank2 waits 9.100 ms"), "{svg}");
    let svg = ok_text("report", &[&t, "-f", "svg", "--top", "1"]);
    assert_eq!(svg.matches(r#"class="wait-state""#).count(), 1);
}

/// Wait states of every real trace in $SPOOR_DATA, imported, aligned and ordered: the
/// waits of a location lie inside its run and never overlap, every charged wait is
/// charged in full to delays (or counted as found without work), and the tables are the
/// same on 1 and 4 threads.
#[test]
fn wait_state_invariants_on_the_real_traces() {
    let Some(data) = data() else { return };
    let inputs = [
        "otf2/casita-4_mpi_ls_barr",
        "otf2/casita-10_scorep_mpi_tags",
        "otf2/pipit-ping-pong",
        "otf2/pipit-ping-pong-papi",
        "paraver/pypop-epoch-2proc/epoch_2proc.prv.gz",
        "dumpi/sst-dumpi-testtrace/testtrace.meta",
    ];
    let d = Dir::new();
    for (k, rel) in inputs.iter().enumerate() {
        let raw = d.path(&format!("{k}.spoor"));
        ok("import", &[data.join(rel).to_str().unwrap(), "-o", &raw], b"");
        let aligned = d.path(&format!("{k}-aligned.spoor"));
        ok("align", &[&raw, "-o", &aligned], b"");
        let t = d.ordered(&aligned, &format!("{k}-ordered.spoor"));
        let r = spoor_format::TraceReader::open(&t, spoor_format::ReadOptions::default()).unwrap();
        let (defs, w) = spoor_waits::analyze(r).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let events = spoor_format::TraceReader::open(&t, spoor_format::ReadOptions::default())
            .unwrap()
            .read_all()
            .unwrap()
            .1;
        let mut span = vec![(i64::MAX, i64::MIN); defs.locations.len()];
        for e in &events {
            let s = &mut span[e.loc as usize];
            *s = (s.0.min(e.wall), s.1.max(e.wall));
        }
        for i in &w.instances {
            let s = span[i.loc as usize];
            assert!(i.start >= s.0 && i.start + i.duration <= s.1, "{rel}: {i:?} outside {s:?}");
        }
        for pair in w.instances.windows(2) {
            if pair[0].loc == pair[1].loc {
                assert!(pair[0].start + pair[0].duration <= pair[1].start, "{rel}: {pair:?}");
            }
        }
        let charged: i64 =
            w.instances.iter().filter(|i| spoor_waits::caused_by_delay(i.pattern)).map(|i| i.duration).sum();
        let costs: f64 = w.causes.delays.iter().map(|x| x.cost_ns()).sum::<f64>() + w.causes.unattributed_ns;
        assert!(
            (costs - charged as f64).abs() <= 1e-6 * (charged as f64).max(1.0),
            "{rel}: {costs} against {charged}"
        );
        let one = run("report", &[&t, "-t", "waits", "-f", "csv"], b"", &[("RAYON_NUM_THREADS", "1")]);
        let four = run("report", &[&t, "-t", "waits", "-f", "csv"], b"", &[("RAYON_NUM_THREADS", "4")]);
        assert!(one.status.success(), "{rel}: {}", String::from_utf8_lossy(&one.stderr));
        assert_eq!(one.stdout, four.stdout, "{rel}");
    }
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

/// The wait-state tables alone skip the statistics: the same tables as beside them, the
/// same events and span, and still the warning about messages received before they are
/// sent (counted by the wait states then).
#[test]
fn wait_states_alone_match_wait_states_beside_the_statistics() {
    let d = Dir::new();
    let t = d.synth(
        &["stencil", "--procs", "8", "--events", "20000", "--seed", "5", "--extra-work", "compute:3:40000"],
        "s.spoor",
    );
    let tables = |args: &[&str]| -> serde_json::Value {
        let mut a = vec![t.as_str(), "-f", "json"];
        a.extend(args);
        serde_json::from_slice(&ok("report", &a, b"")).unwrap()
    };
    let alone = tables(&["-t", "waits"]);
    let beside = tables(&["-t", "waits", "-t", "utilization"]);
    let waits = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("waits."))
            .cloned()
            .collect()
    };
    assert_eq!(waits(&alone).len(), 5, "{alone}");
    assert_eq!(waits(&alone), waits(&beside));
    for k in ["events", "span", "ordered", "matched"] {
        assert_eq!(alone[k], beside[k], "{k}");
    }
    let skew = d.ordered(&testdata("order/skew-samples.txt"), "skew.spoor");
    let out = run("report", &[&skew, "-t", "waits"], b"", &[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("5 messages are received before they are sent"), "{err}");
}
