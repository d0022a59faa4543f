//! The summary that opens the HTML report: what a reader needs before the tables.

use crate::html::table;
use crate::overlay::Overlay;
use crate::table::{Cell, Table, Unit};
use crate::Analysis;
use std::fmt::Write as _;

/// Rows in each "top" list of the summary.
const TOP: usize = 5;

/// The summary as HTML: the elapsed time, the critical path (its length, top procedures
/// and processes) when one is given, utilization at a glance and the largest waits.
/// `path_note` says why there is no path when there is none.
pub fn html(a: &Analysis, path: Option<&Overlay>, path_note: Option<&str>) -> String {
    let mut o = String::new();
    let elapsed = a.span().map(|(s, e)| e - s);
    let _ = write!(
        o,
        r#"<p class="summary">Elapsed time <b>{}</b> over {} processes ({} events)."#,
        elapsed.map_or_else(|| "-".into(), ms),
        a.defs.processes.len(),
        a.events()
    );
    match path.filter(|p| p.has_path()) {
        Some(p) => {
            let share = elapsed
                .filter(|&e| e > 0)
                .map(|e| format!(" ({:.1} % of the elapsed time)", pct(p.length, e)));
            let _ = write!(
                o,
                " The {} is <b>{}</b>{}.",
                crate::svg::esc(&p.name),
                ms(p.length),
                share.unwrap_or_default()
            );
        }
        None => {
            if let Some(n) = path_note {
                let _ = write!(o, " No critical path: {}.", crate::svg::esc(n));
            }
        }
    }
    o.push_str("</p>");
    if let Some(p) = path.filter(|p| !p.marks.is_empty()) {
        // A process's marks repeat on each of its threads: listed once.
        let mut seen = std::collections::BTreeSet::new();
        o.push_str("<h3>Processes straying from their peers</h3><ul class=\"marks\">");
        for m in &p.marks {
            if seen.insert((&m.label, m.start, m.end)) {
                let from = a.span().map_or(m.start, |s| m.start - s.0);
                let to = a.span().map_or(m.end, |s| m.end - s.0);
                let _ = write!(o, "<li>{} from {} to {}</li>", crate::svg::esc(&m.label), ms(from), ms(to));
            }
        }
        o.push_str("</ul>");
    }
    if let Some(p) = path.filter(|p| p.has_path()) {
        for r in &p.profiles {
            let mut t = Table::new(
                &format!("summary-path-{}", r.level),
                "",
                &[(r.level.as_str(), Unit::Text), ("on the path", Unit::Ns), ("of the path", Unit::Pct)],
            );
            for (name, ns) in r.rows.iter().take(TOP) {
                t.push(vec![Cell::Text(name.clone()), Cell::Num(*ns as f64), Cell::Num(pct(*ns, p.length))]);
            }
            let plural = if r.level.ends_with('s') { "es" } else { "s" };
            let _ = write!(o, "<h3>Top {}{plural} on the critical path</h3>{}", r.level, table(&t));
        }
    }
    let _ = write!(o, "<h3>Utilization at a glance</h3>{}", utilization(a));
    let waits = largest_waits(a);
    if waits.rows.is_empty() {
        o.push_str("<h3>Largest waits</h3><p>No process waited.</p>");
    } else {
        let _ = write!(o, "<h3>Largest waits</h3>{}", table(&waits));
    }
    o
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Busy, idle and blocked over every process (the utilization table's columns summed),
/// as one stacked bar and its figures.
fn utilization(a: &Analysis) -> String {
    let t = a.utilization_table();
    let col = |name: &str| t.columns.iter().position(|c| c.name == name && c.unit == Unit::Ns);
    let (Some(b), Some(i), Some(k)) = (col("busy"), col("idle"), col("blocked")) else {
        return String::new();
    };
    let sum =
        |c: usize| -> f64 { t.rows.iter().map(|r| if let Cell::Num(x) = r[c] { x } else { 0.0 }).sum() };
    let (busy, idle, blocked) = (sum(b), sum(i), sum(k));
    let total = busy + idle + blocked;
    if total <= 0.0 {
        return "<p>No time was counted.</p>".into();
    }
    let mut o = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="utilization" width="600" height="22" viewBox="0 0 600 22">"#,
    );
    let mut x = 0.0;
    for (v, color, label) in
        [(busy, "#2ca02c", "busy"), (idle, "#bbbbbb", "idle"), (blocked, "#d62728", "blocked")]
    {
        let w = 600.0 * v / total;
        let _ = write!(
            o,
            r#"<rect x="{x:.2}" y="2" width="{w:.2}" height="18" fill="{color}"><title>{label}: {:.1} %</title></rect>"#,
            100.0 * v / total
        );
        x += w;
    }
    o.push_str("</svg>");
    let _ = write!(
        o,
        r#"<p class="note">busy {:.1} %, idle {:.1} %, blocked {:.1} % of the processes' time ({} processes)</p>"#,
        100.0 * busy / total,
        100.0 * idle / total,
        100.0 * blocked / total,
        t.rows.len()
    );
    o
}

/// The procedures and locations where the most time was spent waiting, largest first,
/// with what they waited in (receives, collectives, locks).
fn largest_waits(a: &Analysis) -> Table {
    let mut t = Table::new(
        "summary-waits",
        "",
        &[
            ("procedure", Unit::Text),
            ("location", Unit::Text),
            ("wait", Unit::Ns),
            ("of the elapsed time", Unit::Pct),
            ("in receives", Unit::Ns),
            ("in collectives", Unit::Ns),
            ("in locks", Unit::Ns),
        ],
    );
    let elapsed = a.span().map_or(0, |(s, e)| e - s);
    let mut waits: Vec<&crate::ProcStats> =
        a.procedure_stats().iter().filter(|p| p.wait_recv + p.wait_coll + p.wait_lock > 0).collect();
    let total = |p: &crate::ProcStats| p.wait_recv + p.wait_coll + p.wait_lock;
    waits.sort_by(|x, y| total(y).cmp(&total(x)).then_with(|| (x.loc, x.proc).cmp(&(y.loc, y.proc))));
    for p in waits.into_iter().take(TOP) {
        let ns = |v: i64| Cell::Num(v as f64);
        t.push(vec![
            Cell::Text(a.proc_label(p.proc)),
            Cell::Text(a.defs.location_name(p.loc)),
            ns(total(p)),
            Cell::Num(pct(total(p), elapsed)),
            ns(p.wait_recv),
            ns(p.wait_coll),
            ns(p.wait_lock),
        ]);
    }
    t
}
