//! A diagnosis as text (the findings, then the Search History Graph as a tree), JSON,
//! DOT and a self-contained HTML page with the graph and the annotations drawn in SVG
//! (formats/diagnose.md, "Output").

use crate::fixes::pct;
use crate::search::{Node, State};
use crate::Diagnosis;
use serde::Serialize;
use spoor_report::html::{self, Section};
use spoor_report::svg::esc;
use spoor_report::{Cell, Table, Unit};
use std::fmt::Write as _;

/// Nanoseconds as milliseconds.
fn ms(ns: i64) -> String {
    crate::fixes::ms(ns as f64)
}

/// The trace, its size and span, and its critical path.
fn headline(d: &Diagnosis) -> String {
    let (t0, t1) = d.span;
    format!(
        "{}: {} events, {} processes, {} of run, critical path (cpu mode) {}",
        d.trace,
        d.events,
        d.defs.processes.len(),
        ms(t1 - t0),
        ms(d.length_ns)
    )
}

/// What the search tested and how it came out.
fn search_counts(d: &Diagnosis) -> String {
    let c = |s| d.shg.count(s);
    format!(
        "{} hypothesis-focus pairs tested: {} true, {} false, {} not applicable; {} pruned, {} not tested",
        d.shg.tested,
        c(State::True),
        c(State::False),
        c(State::NotApplicable),
        c(State::Pruned),
        c(State::NotTested)
    )
}

fn node_line(d: &Diagnosis, n: &Node) -> String {
    let when = if n.window == 0 { String::new() } else { format!(" [{}]", d.shg.windows[n.window].name) };
    let value = match n.value {
        Some(v) => format!("{} (threshold {})", pct(v), pct(n.threshold)),
        None => String::new(),
    };
    let state = match n.state {
        State::True => "true",
        State::False => "false",
        State::Pruned => "pruned",
        State::NotTested => "not tested",
        State::NotApplicable => "n/a",
    };
    format!("{} at {}{}: {} {}", n.hypothesis.name(), n.focus_name, when, state, value).trim_end().to_owned()
}

/// The findings for a reader: what to fix first, the bottlenecks, the peer annotations,
/// then (with `tree`) every true node of the Search History Graph.
pub fn text(d: &Diagnosis, top: usize, tree: bool) -> String {
    let mut s = String::new();
    let (t0, _) = d.span;
    let _ = writeln!(s, "{}", headline(d));
    let _ = writeln!(s, "\nWhat to fix first (predicted by the critical path with the change made):");
    if d.fixes.is_empty() {
        let _ = writeln!(s, "  nothing found above the thresholds");
    }
    for (i, f) in d.fixes.iter().take(top).enumerate() {
        // A bound caps the gain: "at most -97.5 %" would say the change is at least that.
        let gain = if f.bound {
            format!("saves at most {}", pct(f.gain))
        } else {
            format!("predicted -{}", pct(f.gain))
        };
        let _ = writeln!(
            s,
            "{:>3}. {}\n     {}: {} ({} -> {})",
            i + 1,
            f.finding,
            f.change,
            gain,
            ms(f.length_ns),
            ms(f.predicted_ns)
        );
        for e in &f.evidence {
            let _ = writeln!(s, "     evidence: {e}");
        }
        for c in &f.commands {
            let _ = writeln!(s, "     see: {c}");
        }
    }
    let _ = writeln!(s, "\nBottlenecks (the most precise true hypotheses at the whole run):");
    if d.bottlenecks.is_empty() {
        let _ = writeln!(s, "  none");
    }
    for &b in d.bottlenecks.iter().take(top) {
        let n = &d.shg.nodes[b];
        let _ = writeln!(s, "  {}: {}", node_line(d, n), n.hypothesis.describe());
    }
    if !d.annotations.is_empty() {
        let _ = writeln!(
            s,
            "\nProcesses straying from their peers (busy share of the time against the group's median):"
        );
        for a in d.annotations.iter().take(top.max(20)) {
            let _ = writeln!(
                s,
                "  {} ({}): {} by up to {:.1} points from {} to {}",
                a.process_name,
                a.group,
                a.kind,
                100.0 * a.peak,
                ms(a.start - t0),
                ms(a.end - t0)
            );
        }
    }
    let _ = writeln!(s, "\nSearch: {}", search_counts(d));
    if tree {
        let _ = writeln!(s, "\nSearch History Graph (true nodes):");
        for (id, depth, above) in tree_rows(d) {
            let line = node_line(d, &d.shg.nodes[id]);
            let _ = writeln!(
                s,
                "{:indent$}{line}{}",
                "",
                if above { " (above)" } else { "" },
                indent = 2 * depth
            );
        }
    }
    s
}

/// The rows of the Search History Graph's tree: every root, then the true nodes under
/// each, depth first; a node reached twice is a row again, marked as shown above.
/// (node, depth, shown above).
fn tree_rows(d: &Diagnosis) -> Vec<(usize, usize, bool)> {
    fn walk(
        d: &Diagnosis,
        children: &[Vec<usize>],
        at: (usize, usize),
        shown: &mut [bool],
        rows: &mut Vec<(usize, usize, bool)>,
    ) {
        let (id, depth) = at;
        if d.shg.nodes[id].state != State::True && depth > 1 {
            return;
        }
        rows.push((id, depth, shown[id]));
        if shown[id] {
            return;
        }
        shown[id] = true;
        for &c in &children[id] {
            walk(d, children, (c, depth + 1), shown, rows);
        }
    }
    let children = d.shg.children();
    let mut shown = vec![false; d.shg.nodes.len()];
    let mut rows = Vec::new();
    for r in d.shg.nodes.iter().filter(|n| n.parents.is_empty()).map(|n| n.id) {
        walk(d, &children, (r, 1), &mut shown, &mut rows);
    }
    rows
}

#[derive(Serialize)]
struct Json<'a> {
    trace: &'a str,
    events: u64,
    processes: usize,
    span_ns: (i64, i64),
    critical_path_ns: i64,
    fixes: &'a [crate::Fix],
    bottlenecks: Vec<&'a Node>,
    annotations: &'a [crate::Annotation],
    search: &'a crate::Shg,
    warnings: &'a [String],
}

/// Everything as one JSON document.
pub fn json(d: &Diagnosis) -> String {
    let j = Json {
        trace: &d.trace,
        events: d.events,
        processes: d.defs.processes.len(),
        span_ns: d.span,
        critical_path_ns: d.length_ns,
        fixes: &d.fixes,
        bottlenecks: d.bottlenecks.iter().map(|&b| &d.shg.nodes[b]).collect(),
        annotations: &d.annotations,
        search: &d.shg,
        warnings: &d.warnings,
    };
    serde_json::to_string_pretty(&j).expect("a diagnosis serializes") + "\n"
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Search History Graph in Graphviz's DOT: true nodes filled, false ones plain,
/// pruned and untested ones dashed.
pub fn dot(d: &Diagnosis) -> String {
    let mut s = String::from("digraph shg {\n  rankdir=LR;\n  node [shape=box, fontname=\"sans-serif\"];\n");
    for n in &d.shg.nodes {
        let style = match n.state {
            State::True => "filled\", fillcolor=\"#f4a582",
            State::False => "solid",
            _ => "dashed",
        };
        let _ = writeln!(s, "  n{} [label=\"{}\", style=\"{}\"];", n.id, dot_escape(&node_line(d, n)), style);
        for p in &n.parents {
            let _ = writeln!(s, "  n{p} -> n{};", n.id);
        }
    }
    s.push_str("}\n");
    s
}

/// The most rows of the Search History Graph drawn in the HTML page.
const SVG_ROWS: usize = 400;

/// The Search History Graph's tree of true nodes as SVG: a box a row, indented by depth,
/// each joined to the row it refines.
fn shg_svg(d: &Diagnosis) -> String {
    let rows = tree_rows(d);
    let shown = rows.len().min(SVG_ROWS);
    let (row_h, indent, width) = (18, 16, 1100);
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">",
        shown * row_h + 4
    );
    // The last row drawn at each depth: where a child's connector starts.
    let mut last_at: Vec<usize> = Vec::new();
    for (k, &(id, depth, above)) in rows.iter().take(shown).enumerate() {
        let n = &d.shg.nodes[id];
        let (x, y) = (depth * indent, k * row_h + 2);
        if let Some(&p) = last_at.get(depth.wrapping_sub(2)) {
            let px = (depth - 1) * indent + 4;
            let _ = write!(
                o,
                "<path d=\"M{px} {} V{} H{x}\" fill=\"none\" stroke=\"#999\"/>",
                p * row_h + row_h - 2,
                y + row_h / 2 - 1
            );
        }
        last_at.truncate(depth - 1);
        last_at.push(k);
        let fill = match n.state {
            State::True => "#f4a582",
            State::False => "#ffffff",
            _ => "#eeeeee",
        };
        let text = format!("{}{}", node_line(d, n), if above { " (above)" } else { "" });
        let _ = write!(
            o,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#888\"/><text x=\"{}\" y=\"{}\">{}</text>",
            width - x - 2,
            row_h - 4,
            x + 4,
            y + row_h - 8,
            esc(&text)
        );
    }
    o.push_str("</svg>");
    if rows.len() > shown {
        let _ = write!(
            o,
            "<p class=\"note\">{} more rows: the text form's --tree and -f json have them all</p>",
            rows.len() - shown
        );
    }
    o
}

/// The peer annotations on a time-line: a row per annotated process, a bar per stretch.
fn annotations_svg(d: &Diagnosis) -> String {
    let mut procs: Vec<&str> = d.annotations.iter().map(|a| a.process_name.as_str()).collect();
    procs.dedup();
    let (t0, t1) = d.span;
    let span = (t1 - t0).max(1) as f64;
    let (label, plot, row_h) = (160.0, 900.0, 16);
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">",
        label + plot + 10.0,
        procs.len() * row_h + 20
    );
    for a in &d.annotations {
        let row = procs.iter().position(|p| *p == a.process_name).unwrap_or(0);
        let x0 = label + plot * (a.start - t0) as f64 / span;
        let x1 = label + plot * (a.end - t0) as f64 / span;
        let color = if a.kind == "overworked" { "#d6604d" } else { "#4393c3" };
        let title = a.describe();
        let _ = write!(
            o,
            "<rect x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"{color}\"><title>{}</title></rect>",
            row * row_h + 2,
            (x1 - x0).max(1.0),
            row_h - 4,
            esc(&title)
        );
    }
    for (row, p) in procs.iter().enumerate() {
        let _ = write!(o, "<text x=\"2\" y=\"{}\">{}</text>", row * row_h + row_h - 4, esc(p));
    }
    let bottom = procs.len() * row_h + 16;
    let _ = write!(
        o,
        "<text x=\"{label}\" y=\"{bottom}\">0 ms</text><text x=\"{}\" y=\"{bottom}\" text-anchor=\"end\">{}</text></svg>",
        label + plot,
        ms(t1 - t0)
    );
    o
}

/// The diagnosis as one self-contained HTML page.
pub fn html(d: &Diagnosis, top: usize) -> String {
    let mut fixes = Table::new(
        "fixes",
        "What to fix first",
        &[
            ("rank", Unit::Count),
            ("finding", Unit::Text),
            ("change", Unit::Text),
            ("gain", Unit::Pct),
            ("path now", Unit::Ns),
            ("path after", Unit::Ns),
            ("see", Unit::Text),
        ],
    );
    for (i, f) in d.fixes.iter().enumerate() {
        fixes.push(vec![
            Cell::Num((i + 1) as f64),
            Cell::Text(f.finding.clone()),
            Cell::Text(f.change.clone()),
            Cell::Num(100.0 * f.gain),
            Cell::Num(f.length_ns as f64),
            Cell::Num(f.predicted_ns as f64),
            Cell::Text(f.commands.join("; ")),
        ]);
    }
    let mut bottlenecks = Table::new(
        "bottlenecks",
        "Bottlenecks",
        &[
            ("hypothesis", Unit::Text),
            ("focus", Unit::Text),
            ("value", Unit::Pct),
            ("threshold", Unit::Pct),
            ("time", Unit::Ns),
        ],
    );
    for &b in d.bottlenecks.iter().take(top.max(50)) {
        let n = &d.shg.nodes[b];
        bottlenecks.push(vec![
            Cell::Text(n.hypothesis.name().into()),
            Cell::Text(n.focus_name.clone()),
            Cell::Num(100.0 * n.value.unwrap_or(0.0)),
            Cell::Num(100.0 * n.threshold),
            Cell::Num(n.amount_ns.unwrap_or(0.0)),
        ]);
    }
    let mut sections = vec![
        Section { title: "What to fix first".into(), body: html::table(&fixes) },
        Section { title: "Bottlenecks".into(), body: html::table(&bottlenecks) },
    ];
    if !d.annotations.is_empty() {
        sections
            .push(Section { title: "Processes straying from their peers".into(), body: annotations_svg(d) });
    }
    let counts = format!("<p class=\"note\">{}</p>", esc(&search_counts(d)));
    sections.push(Section { title: "Search History Graph (true nodes)".into(), body: counts + &shg_svg(d) });
    let mut intro = vec![headline(d)];
    intro.extend(d.warnings.iter().map(|w| format!("warning: {w}")));
    html::page(&format!("spoor-diagnose: {}", d.trace), &intro, &sections)
}
