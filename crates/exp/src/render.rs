//! The answers as tables: text, CSV (each table after a `# NAME` line) and JSON
//! (formats/exp.md, "Output").

use crate::ops::{Difference, Regression, ScalingRow, StructDiff};
use crate::store::{Finding, Run};
use spoor_report::{Cell, Table, Unit};

/// Output form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Text,
    Csv,
    Json,
}

/// The tables in one form.
pub fn tables(ts: &[Table], form: Form) -> String {
    match form {
        Form::Text => ts.iter().map(|t| t.to_text()).collect::<Vec<_>>().join("\n"),
        Form::Csv => {
            ts.iter().map(|t| format!("# {}\n{}", t.name, t.to_csv())).collect::<Vec<_>>().join("\n")
        }
        Form::Json => {
            let v: Vec<serde_json::Value> = ts.iter().map(|t| t.to_json()).collect();
            let doc = if v.len() == 1 {
                v.into_iter().next().unwrap_or_default()
            } else {
                serde_json::json!({ "tables": v })
            };
            format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
        }
    }
}

/// The unit of a stored metric (formats/exp.md, "Metrics").
pub fn unit_of(metric: &str) -> &'static str {
    match metric {
        "calls" | "messages" => "count",
        "bytes" => "bytes",
        _ => "ns",
    }
}

/// A metric's value as the text form shows it (times in ms), raw elsewhere.
fn value(metric: &str, v: f64, form: Form) -> Cell {
    if form != Form::Text {
        return Cell::Num(v);
    }
    match unit_of(metric) {
        "ns" => Cell::Text(format!("{:.3} ms", v / 1e6)),
        _ => Cell::Text(spoor_report::table::plain_number(v)),
    }
}

/// The runs, one a row: id, trace, events, elapsed, then each attribute.
pub fn runs(list: &[Run], form: Form) -> Table {
    let mut keys: Vec<&str> = list.iter().flat_map(|r| r.attrs.iter().map(|(k, _)| k.as_str())).collect();
    keys.sort_unstable();
    keys.dedup();
    // What every run repeats in its own columns.
    keys.retain(|k| !["events", "elapsed_ns"].contains(k));
    let mut cols: Vec<(&str, Unit)> =
        vec![("id", Unit::Count), ("trace", Unit::Text), ("events", Unit::Count), ("elapsed", Unit::Ns)];
    cols.extend(keys.iter().map(|k| (*k, Unit::Text)));
    let mut t = Table::new("runs", "Runs", &cols);
    for r in list {
        let mut row = vec![
            Cell::Num(r.id as f64),
            Cell::Text(if form == Form::Text { short(&r.trace) } else { r.trace.clone() }),
            Cell::Num(r.events as f64),
            Cell::Num(r.elapsed_ns as f64),
        ];
        for k in &keys {
            row.push(
                r.attrs.iter().find(|(x, _)| x == k).map_or(Cell::Empty, |(_, v)| Cell::Text(v.clone())),
            );
        }
        t.push(row);
    }
    t
}

/// The file name of a path, for narrow text.
fn short(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// One run: what it is, its bottlenecks, the program's metrics.
pub fn show(
    run: &Run,
    findings: &[Finding],
    program: &[(String, f64)],
    status: Option<String>,
    form: Form,
) -> Vec<Table> {
    let mut about =
        Table::new("run", &format!("Run {}", run.id), &[("key", Unit::Text), ("value", Unit::Text)]);
    for (k, v) in [
        ("trace", run.trace.clone()),
        ("hash", run.hash.clone()),
        ("size", run.size.to_string()),
        ("added", run.added.clone()),
        ("events", run.events.to_string()),
        ("elapsed_ns", run.elapsed_ns.to_string()),
    ] {
        about.push(vec![k.into(), v.into()]);
    }
    for (k, v) in &run.attrs {
        if k != "events" && k != "elapsed_ns" {
            about.push(vec![k.as_str().into(), v.as_str().into()]);
        }
    }
    if let Some(s) = status {
        about.notes.push(s);
    }
    let mut bn = Table::new(
        "findings",
        "Bottlenecks (the most precise true hypotheses over the whole run)",
        &[
            ("hypothesis", Unit::Text),
            ("focus", Unit::Text),
            ("value", Unit::Pct),
            ("time", Unit::Ns),
            ("threshold", Unit::Pct),
        ],
    );
    const SHOWN: usize = 10;
    for f in findings.iter().take(if form == Form::Text { SHOWN } else { usize::MAX }) {
        bn.push(vec![
            f.hypothesis.as_str().into(),
            f.focus.as_str().into(),
            Cell::Num(f.value * 100.0),
            Cell::Num(f.amount_ns),
            Cell::Num(f.threshold * 100.0),
        ]);
    }
    if form == Form::Text && findings.len() > SHOWN {
        bn.notes.push(format!("{} more: -f csv or -f json lists them all", findings.len() - SHOWN));
    }
    let mut pm =
        Table::new("metrics", "The program's metrics", &[("metric", Unit::Text), ("value", Unit::Text)]);
    for (m, v) in program {
        pm.push(vec![m.as_str().into(), value(m, *v, form)]);
    }
    vec![about, bn, pm]
}

/// The structural difference.
pub fn structure(d: &StructDiff, a: &str, b: &str, suggestion: &[(String, String)]) -> Vec<Table> {
    let mut t = Table::new(
        "structure",
        &format!("Resources of {a} (A) and {b} (B)"),
        &[("resource", Unit::Text), ("in", Unit::Text)],
    );
    for (names, tag) in [(&d.only_a, "A only"), (&d.only_b, "B only"), (&d.shared, "both")] {
        for n in names {
            t.push(vec![n.as_str().into(), tag.into()]);
        }
    }
    t.notes.push(format!(
        "{} shared, {} only in A, {} only in B",
        d.shared.len(),
        d.only_a.len(),
        d.only_b.len()
    ));
    let mut out = vec![t];
    if !suggestion.is_empty() {
        let mut s = Table::new(
            "mapping",
            "The structures differ only by names: a map file (--map) that makes A's B's",
            &[("from", Unit::Text), ("to", Unit::Text)],
        );
        for (f, to) in suggestion {
            s.push(vec![f.as_str().into(), to.as_str().into()]);
        }
        out.push(s);
    }
    out
}

/// The performance differences.
pub fn diff(ds: &[Difference], a: &str, b: &str, threshold: f64, form: Form) -> Table {
    let mut t = Table::new(
        "diff",
        &format!("Foci whose metrics differ by more than {}: {a} (A) and {b} (B)", pct(threshold)),
        &[
            ("focus", Unit::Text),
            ("metric", Unit::Text),
            ("A", if form == Form::Text { Unit::Text } else { Unit::Number }),
            ("B", if form == Form::Text { Unit::Text } else { Unit::Number }),
            ("change", Unit::Pct),
            ("of program", Unit::Pct),
            ("unit", Unit::Text),
        ],
    );
    for d in ds {
        t.push(vec![
            d.focus.as_str().into(),
            d.metric.as_str().into(),
            value(&d.metric, d.a, form),
            value(&d.metric, d.b, form),
            if d.change.is_finite() { Cell::Num(d.change * 100.0) } else { Cell::Text("new".into()) },
            Cell::Num(d.share * 100.0),
            unit_of(&d.metric).into(),
        ]);
    }
    if ds.is_empty() {
        t.notes.push(format!("no focus differs by more than {}", pct(threshold)));
    }
    t
}

fn pct(x: f64) -> String {
    format!("{} %", spoor_report::table::plain_number(x * 100.0))
}

/// What the gate found.
pub fn check(rs: &[Regression], max: f64, form: Form) -> Table {
    let mut t = Table::new(
        "check",
        &format!("Regressions beyond {}", pct(max)),
        &[
            ("focus", Unit::Text),
            ("metric", Unit::Text),
            ("baseline", if form == Form::Text { Unit::Text } else { Unit::Number }),
            ("new", if form == Form::Text { Unit::Text } else { Unit::Number }),
            ("growth", Unit::Pct),
        ],
    );
    for r in rs {
        t.push(vec![
            r.focus.as_str().into(),
            r.metric.as_str().into(),
            value(&r.metric, r.baseline, form),
            value(&r.metric, r.new, form),
            Cell::Num(r.growth * 100.0),
        ]);
    }
    t.notes.push(if rs.is_empty() {
        format!("no regression beyond {}", pct(max))
    } else {
        "growth: of the baseline's elapsed time (elapsed, waits) or critical path (cp)".into()
    });
    t
}

/// The scaling study.
pub fn scaling(rows: &[ScalingRow]) -> Table {
    let mut t = Table::new(
        "scaling",
        "Scaling: speedup and the POP model's factors",
        &[
            ("procs", Unit::Count),
            ("runs", Unit::Count),
            ("elapsed", Unit::Ns),
            ("speedup", Unit::Number),
            ("global eff", Unit::Pct),
            ("parallel eff", Unit::Pct),
            ("load balance", Unit::Pct),
            ("comm eff", Unit::Pct),
            ("serialization", Unit::Pct),
            ("transfer", Unit::Pct),
            ("comp scalability", Unit::Pct),
        ],
    );
    for r in rows {
        t.push(vec![
            Cell::Num(r.procs as f64),
            Cell::Num(r.runs as f64),
            Cell::Num(r.elapsed_ns),
            Cell::Num(r.speedup),
            Cell::Num(r.global_efficiency * 100.0),
            Cell::Num(r.parallel_efficiency * 100.0),
            Cell::Num(r.load_balance * 100.0),
            Cell::Num(r.communication_efficiency * 100.0),
            Cell::Num(r.serialization_efficiency * 100.0),
            Cell::Num(r.transfer_efficiency * 100.0),
            Cell::Num(r.computation_scalability * 100.0),
        ]);
    }
    t.notes.push("transfer: the ideal network's predicted time over the elapsed time (spoor-cp with every message free)".into());
    t
}
