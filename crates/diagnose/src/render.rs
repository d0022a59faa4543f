//! A diagnosis as text (the findings, then the Search History Graph as a tree), JSON and
//! DOT (formats/diagnose.md, "Output").

use crate::search::{Node, State};
use crate::Diagnosis;
use serde::Serialize;
use std::fmt::Write as _;

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
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
    let (t0, t1) = d.span;
    let _ = writeln!(
        s,
        "{}: {} events, {} processes, {} of run, critical path (cpu mode) {}",
        d.trace,
        d.events,
        d.defs.processes.len(),
        ms(t1 - t0),
        ms(d.length_ns)
    );
    let _ = writeln!(s, "\nWhat to fix first (predicted by the critical path with the change made):");
    if d.fixes.is_empty() {
        let _ = writeln!(s, "  nothing found above the thresholds");
    }
    for (i, f) in d.fixes.iter().take(top).enumerate() {
        let verb = if f.bound { "at most" } else { "predicted" };
        let _ = writeln!(
            s,
            "{:>3}. {}\n     {}: {} -{} ({} -> {})",
            i + 1,
            f.finding,
            f.change,
            verb,
            pct(f.gain),
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
    let _ = writeln!(
        s,
        "\nSearch: {} hypothesis-focus pairs tested: {} true, {} false, {} not applicable; {} pruned, {} not tested",
        d.shg.tested,
        d.shg.count(State::True),
        d.shg.count(State::False),
        d.shg.count(State::NotApplicable),
        d.shg.count(State::Pruned),
        d.shg.count(State::NotTested)
    );
    if tree {
        let _ = writeln!(s, "\nSearch History Graph (true nodes):");
        let children = d.shg.children();
        let mut shown = vec![false; d.shg.nodes.len()];
        let roots: Vec<usize> = d.shg.nodes.iter().filter(|n| n.parents.is_empty()).map(|n| n.id).collect();
        for r in roots {
            tree_lines(d, &children, r, 1, &mut shown, &mut s);
        }
    }
    s
}

fn tree_lines(
    d: &Diagnosis,
    children: &[Vec<usize>],
    id: usize,
    depth: usize,
    shown: &mut [bool],
    s: &mut String,
) {
    let n = &d.shg.nodes[id];
    if n.state != State::True && depth > 1 {
        return;
    }
    let _ = writeln!(
        s,
        "{:indent$}{}{}",
        "",
        node_line(d, n),
        if shown[id] { " (above)" } else { "" },
        indent = 2 * depth
    );
    if shown[id] {
        return;
    }
    shown[id] = true;
    for &c in &children[id] {
        tree_lines(d, children, c, depth + 1, shown, s);
    }
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
