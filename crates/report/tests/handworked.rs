//! The report of small hand-written traces against answers worked out by hand
//! (testdata/report/*.expected), and the invariants every report keeps.

use spoor_report::{analyze_bytes, Analysis, Cell, Level, Metric, Options, Overlay, PathArc, Segment, Table};
use std::path::Path;

fn testdata(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name).to_string_lossy().into_owned()
}

/// The trace through spoor-order (binary, GLOBAL_ORDER | MATCHED).
fn ordered(text_file: &str) -> Vec<u8> {
    let input = spoor_order::Input::open(&testdata(text_file)).unwrap();
    let mut out = Vec::new();
    spoor_order::order::order(&input, &mut out, &Default::default()).unwrap();
    out
}

fn report(text_file: &str, opts: &Options) -> Analysis {
    analyze_bytes(text_file, ordered(text_file), opts).unwrap()
}

fn all_hist() -> Options {
    Options { hist: Metric::HISTOGRAM.to_vec(), ..Options::default() }
}

fn cell(t: &Table, row: usize, col: &str) -> f64 {
    let c = t.column(col).unwrap_or_else(|| panic!("{}: no column {col}", t.name));
    match &t.rows[row][c] {
        Cell::Num(v) => *v,
        Cell::Empty => f64::NAN,
        other => panic!("{}: {col} is {other:?}", t.name),
    }
}

fn row_named(t: &Table, name: &str) -> usize {
    t.rows.iter().position(|r| r[0] == Cell::Text(name.into())).unwrap_or_else(|| {
        panic!("{}: no row {name}: {:?}", t.name, t.rows.iter().map(|r| &r[0]).collect::<Vec<_>>())
    })
}

/// Looks up one expected value and compares it.
fn check_line(a: &Analysis, table: &str, row: &str, col: &str, want: f64) {
    let got = match table {
        t if t.starts_with("metrics.") => {
            let t = a.metric_table(Level::parse(&t["metrics.".len()..]).unwrap());
            cell(&t, row_named(&t, row), col)
        }
        "npt" => {
            let t = a.npt_table().unwrap();
            cell(&t, row_named(&t, row), col)
        }
        "npt.total" => {
            let t = a.npt_table().unwrap();
            (0..t.rows.len()).map(|r| cell(&t, r, col)).sum()
        }
        "utilization" => {
            let t = a.utilization_table();
            cell(&t, row_named(&t, row), col)
        }
        "messages" => {
            let t = a.messages_table().unwrap();
            cell(&t, row_named(&t, row), col)
        }
        "transactions" => {
            let t = a.transactions_table().unwrap();
            cell(&t, row_named(&t, row), col)
        }
        "callgraph.primary" | "callgraph.callee" => {
            let t = a.callgraph_table();
            let text = |r: usize, c: &str| t.rows[r][t.column(c).unwrap()].clone();
            let (proc_, role, callee) = match row.split_once('.') {
                Some((p, c)) => (p, "callee", Some(c)),
                None => (row, "primary", None),
            };
            let prim = (0..t.rows.len())
                .find(|&r| {
                    text(r, "role") == Cell::Text("primary".into())
                        && text(r, "procedure") == Cell::Text(proc_.into())
                })
                .unwrap_or_else(|| panic!("no primary line for {proc_}"));
            let index = cell(&t, prim, "index");
            let r = match callee {
                None => prim,
                Some(c) => (0..t.rows.len())
                    .find(|&r| {
                        cell(&t, r, "index") == index
                            && text(r, "role") == Cell::Text(role.into())
                            && text(r, "procedure") == Cell::Text(c.into())
                    })
                    .unwrap_or_else(|| panic!("no callee {c} under {proc_}")),
            };
            cell(&t, r, col)
        }
        other => panic!("unknown table {other} in an expected file"),
    };
    let ok = if want == 0.0 { got == 0.0 } else { ((got - want) / want).abs() < 1e-9 };
    assert!(ok, "{table} {row} {col}: got {got}, want {want}");
}

fn check_expected(a: &Analysis, file: &str) -> usize {
    let text = std::fs::read_to_string(testdata(file)).unwrap();
    let mut n = 0;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        // The row may hold spaces ("(outside any procedure)"): table first, value and column last.
        let (head, value) = line.rsplit_once(' ').unwrap();
        let (head, col) = head.rsplit_once(' ').unwrap();
        let (table, row) = head.split_once(' ').unwrap();
        check_line(a, table, row, col, value.parse().unwrap());
        n += 1;
    }
    n
}

#[test]
fn late_sender_hand_worked() {
    let a = report("late-sender.txt", &all_hist());
    assert!(a.ordered && a.matched);
    assert!(check_expected(&a, "report/late-sender.expected") > 60);
}

#[test]
fn server_hand_worked() {
    let a = report("report/server.txt", &all_hist());
    assert!(check_expected(&a, "report/server.expected") > 40);
}

#[test]
fn server_phase_hand_worked() {
    let opts = Options { phase: Some("rpc".into()), ..all_hist() };
    let a = report("report/server.txt", &opts);
    check_expected(&a, "report/server-phase.expected");
}

#[test]
fn unknown_phase_lists_the_phases() {
    let opts = Options { phase: Some("nope".into()), ..Options::default() };
    let e = analyze_bytes("s", ordered("report/server.txt"), &opts).err().unwrap().to_string();
    assert!(e.contains("no phase named `nope`") && e.contains("rpc"), "{e}");
}

/// Histograms hold exactly the totals of the tables, whatever the bins.
#[test]
fn histograms_sum_to_the_totals() {
    for bins in [2, 7, 64, 1000] {
        let a = report("late-sender.txt", &Options { bins, ..all_hist() });
        let app = a.metric_table(Level::Application);
        for m in [
            Metric::Busy,
            Metric::Wait,
            Metric::WaitRecv,
            Metric::Cpu,
            Metric::MsgsSent,
            Metric::BytesRecv,
            Metric::Calls,
        ] {
            let (_, _, v) = a.histogram(m).unwrap();
            assert!(v.len() <= bins, "{bins} bins: {}", v.len());
            let total: f64 = v.iter().sum();
            let want = cell(&app, 0, m.name());
            assert!(
                (total - want).abs() < 1e-6 * want.max(1.0),
                "{} with {bins} bins: {total} vs {want}",
                m.name()
            );
        }
        let (_, _, npt) = a.histogram(Metric::Npt).unwrap();
        assert!((npt.iter().sum::<f64>() - 10_130_000.0).abs() < 1e-3);
    }
}

/// Self times over procedures add up to the locations' elapsed times, busy plus waits
/// to elapsed per location, and NPT to the time anything was busy.
#[test]
fn totals_agree_across_levels() {
    let a = report("report/server.txt", &Options::default());
    let procs = a.metric_table(Level::Procedure);
    let threads = a.metric_table(Level::Thread);
    let sum = |t: &Table, c: &str| (0..t.rows.len()).map(|r| cell(t, r, c)).sum::<f64>();
    assert_eq!(sum(&procs, "self"), sum(&threads, "elapsed"));
    assert_eq!(sum(&procs, "busy"), sum(&threads, "busy"));
    assert_eq!(sum(&procs, "msgs_sent"), sum(&threads, "msgs_sent"));
    for r in 0..threads.rows.len() {
        assert_eq!(cell(&threads, r, "busy") + cell(&threads, r, "wait"), cell(&threads, r, "elapsed"));
    }
}

#[test]
fn profiles_are_sorted_and_bad_names_list_the_good_ones() {
    let a = report("late-sender.txt", &Options::default());
    let t = a.profile_table(Level::Process, Metric::Busy).unwrap();
    let names: Vec<&Cell> = t.rows.iter().map(|r| &r[0]).collect();
    assert_eq!(
        names,
        [&Cell::Text("rank0".into()), &Cell::Text("rank1".into()), &Cell::Text("rank2".into())]
    );
    let share: f64 = (0..3).map(|r| cell(&t, r, "share")).sum();
    assert!((share - 100.0).abs() < 1e-9);
    let e = Metric::parse("bogus", Level::Process).unwrap_err();
    assert!(e.contains("elapsed") && e.contains("wait_recv") && !e.contains("cpu_self"), "{e}");
    let e = Level::parse("galaxy").unwrap_err();
    assert!(e.contains("application, machine, process, thread, procedure"), "{e}");
    let e = Metric::parse_histogram("elapsed").unwrap_err();
    assert!(e.contains("busy"), "{e}");
    assert!(a.profile_table(Level::Procedure, Metric::SelfTime).is_ok());
    assert!(a.profile_table(Level::Process, Metric::SelfTime).is_err());
}

#[test]
fn focus_restricts_and_unknown_names_are_listed() {
    let opts = Options { focus: vec![(Level::Process, "rank1".into())], ..Options::default() };
    let a = report("late-sender.txt", &opts);
    let t = a.metric_table(Level::Process);
    assert_eq!(t.rows.len(), 1);
    assert_eq!(cell(&t, 0, "wait_recv"), 8_080_000.0);
    let (_, _, busy) = a.histogram(Metric::Busy).unwrap();
    assert!((busy.iter().sum::<f64>() - 2_060_000.0).abs() < 1e-6);
    let opts = Options { focus: vec![(Level::Process, "rank9".into())], ..Options::default() };
    let e = analyze_bytes("x", ordered("late-sender.txt"), &opts).err().unwrap().to_string();
    assert!(e.contains("no process named `rank9`") && e.contains("rank0, rank1, rank2"), "{e}");
}

/// What needs spoor-order says so on a trace that did not go through it.
#[test]
fn unordered_input_says_what_to_run() {
    let bytes = std::fs::read(testdata("late-sender.txt")).unwrap();
    let a = analyze_bytes("late-sender.txt", bytes, &Options::default()).unwrap();
    assert!(!a.matched);
    let e = a.messages_table().unwrap_err().to_string();
    assert!(e.contains("run spoor-order first"), "{e}");
    // Tables that need no matching are the same as on the ordered trace.
    let b = report("late-sender.txt", &Options::default());
    assert_eq!(a.metric_table(Level::Thread).rows, b.metric_table(Level::Thread).rows);
    assert!(a.notes().iter().any(|n| n.contains("run spoor-order first")));
}

fn hand_path() -> Overlay {
    // rank0 computes, its message wakes rank1, whose message wakes rank2.
    Overlay {
        name: "critical path".into(),
        segments: vec![
            Segment { loc: 0, start: 0, end: 10_030_000 },
            Segment { loc: 1, start: 10_080_000, end: 10_100_000 },
            Segment { loc: 2, start: 10_150_000, end: 10_210_000 },
        ],
        arcs: vec![
            PathArc { from_loc: 0, from_time: 10_030_000, to_loc: 1, to_time: 10_080_000 },
            PathArc { from_loc: 1, from_time: 10_100_000, to_loc: 2, to_time: 10_150_000 },
        ],
        ..Default::default()
    }
}

#[test]
fn spacetime_draws_rows_messages_and_the_overlay() {
    let a = report("late-sender.txt", &Options::default());
    let svg = spoor_report::svg::spacetime(&a, Some(&hand_path()));
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert_eq!(svg.matches(r#"class="segment""#).count(), 3);
    assert_eq!(svg.matches(r#"class="arc""#).count(), 2);
    assert!(svg.contains("all 2 messages drawn"), "{svg}");
    assert_eq!(svg.matches("<title>rank").count(), 2, "one line per message");
    for r in ["rank0", "rank1", "rank2"] {
        assert!(svg.contains(&format!(">{r}</text>")), "row label {r}");
    }
    let plain = spoor_report::svg::spacetime(&a, None);
    assert!(!plain.contains("class=\"overlay\""));
}
