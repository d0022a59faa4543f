//! What spoor-cp prints: one [`CpReport`] as a text table, CSV or JSON
//! (formats/pag.md, "spoor-cp output").

use crate::cp::{self, CriticalPath, Pred, Scope};
use crate::pag::{Pag, NONE};
use crate::profile::{self, Level, Row};
use crate::whatif::Zeroing;
use serde::Serialize;
use std::io::{self, Write};

/// One arc of the path as printed: the event it leads to and how it was reached.
#[derive(Clone, Debug, Serialize)]
pub struct PathRow {
    /// `LOC:INDEX` of the event, or `collective` for a virtual node.
    pub event: String,
    /// The event's location.
    pub location: String,
    /// The event's kind.
    pub kind: String,
    /// The event's wall time.
    pub wall_ns: i64,
    /// `source`, `local`, or the remote arc's kind.
    pub via: String,
    /// The arc's weight.
    pub weight_ns: i64,
}

/// One profile of the path.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// What it sums by (`Level::name`).
    pub level: &'static str,
    /// Its rows, largest first.
    pub rows: Vec<Row>,
}

/// Everything spoor-cp reports about one critical path.
#[derive(Clone, Debug, Serialize)]
pub struct CpReport {
    /// The input's name.
    pub input: String,
    /// The weight mode.
    pub mode: &'static str,
    /// Whose path.
    pub scope: String,
    /// The time window, if one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<(i64, i64)>,
    /// The path's length.
    pub length_ns: i64,
    /// Nodes in the graph.
    pub nodes: usize,
    /// Remote arcs in the graph.
    pub arcs: usize,
    /// Arcs on the path.
    pub path_arcs: usize,
    /// Remote arcs on the path by kind: message, coll_in, collective, lock, spawn.
    pub path_remote: [usize; 5],
    /// The profiles asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<Profile>,
    /// The path arc by arc, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathRow>>,
    /// Critical-path zeroing of the procedures asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zeroing: Option<Vec<Zeroing>>,
    /// Near-critical paths, if asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near: Option<Vec<crate::near::NearPath>>,
    /// What the reader should know about the graph.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the graph's clock-condition violations make of its times (also among the
    /// notes), for standard error.
    #[serde(skip)]
    pub clock_warning: Option<String>,
    /// Rows per profile in the text form (0: all); CSV and JSON have them all.
    #[serde(skip)]
    pub text_rows: usize,
}

impl CpReport {
    /// The report's summary of `path`; profiles and the rest are added after.
    pub fn new(
        input: &str,
        pag: &Pag,
        scope: Scope,
        window: Option<(i64, i64)>,
        path: &CriticalPath,
    ) -> Self {
        let clock_warning = pag.clock_violations().warning();
        CpReport {
            input: input.to_owned(),
            mode: pag.mode.name(),
            scope: cp::scope_label(pag, scope),
            window,
            length_ns: path.length,
            nodes: pag.graph_nodes(),
            arcs: pag.graph_arcs(),
            path_arcs: path.steps.len(),
            path_remote: cp::arc_counts(pag, path),
            profiles: Vec::new(),
            path: None,
            zeroing: None,
            near: None,
            notes: pag.notes.iter().cloned().chain(clock_warning.clone()).collect(),
            clock_warning,
            text_rows: 0,
        }
    }

    /// Adds a profile of `path` for each of `levels`.
    pub fn add_profiles(&mut self, pag: &Pag, path: &CriticalPath, levels: &[Level]) {
        for &l in levels {
            self.profiles.push(Profile { level: l.name(), rows: profile::profile(pag, path, l) });
        }
    }

    /// Adds `path` arc by arc.
    pub fn add_path(&mut self, pag: &Pag, path: &CriticalPath) {
        let nodes: Vec<u32> = path.steps.iter().map(|s| s.node).collect();
        let refs = pag.event_refs(&nodes);
        let rows = path
            .steps
            .iter()
            .zip(refs)
            .map(|(s, r)| {
                let i = s.node as usize;
                let l = pag.loc[i];
                PathRow {
                    event: r.map_or_else(|| "collective".to_owned(), |r| format!("{}:{}", r.loc, r.index)),
                    location: if l == NONE { String::new() } else { pag.defs.location_name(l) },
                    kind: pag.kind_name(s.node).to_owned(),
                    wall_ns: pag.wall[i],
                    via: match s.pred {
                        Pred::Source => "source".to_owned(),
                        Pred::Local(_) => "local".to_owned(),
                        Pred::Arc(a) => pag.arc_kind[a as usize].name().to_owned(),
                    },
                    weight_ns: s.weight,
                }
            })
            .collect();
        self.path = Some(rows);
    }
}

/// Nanoseconds in the unit that suits them: `950 ns`, `12.500 us`, `10.220 ms`, `3.000 s`.
pub fn fmt_ns(ns: i64) -> String {
    let a = ns.unsigned_abs();
    if a < 1_000 {
        format!("{ns} ns")
    } else if a < 1_000_000 {
        format!("{:.3} us", ns as f64 / 1e3)
    } else if a < 1_000_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    }
}

fn share(t: i64, of: i64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * t as f64 / of as f64
    }
}

/// The report as text tables.
pub fn write_text(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    let kinds = ["message", "coll_in", "collective", "lock", "spawn"];
    let remote: Vec<String> = r
        .path_remote
        .iter()
        .zip(kinds)
        .filter(|(n, k)| **n > 0 && *k != "coll_in")
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
    writeln!(
        out,
        "critical path: {} ({} mode, {} scope); {} arcs{}",
        fmt_ns(r.length_ns),
        r.mode,
        r.scope,
        r.path_arcs,
        if remote.is_empty() { String::new() } else { format!(" ({} remote)", remote.join(", ")) }
    )?;
    if let Some((a, b)) = r.window {
        writeln!(out, "window: {} .. {}", fmt_ns(a), fmt_ns(b))?;
    }
    writeln!(out, "graph: {} nodes, {} remote arcs", r.nodes, r.arcs)?;
    for n in &r.notes {
        writeln!(out, "note: {n}")?;
    }
    write_profiles_text(out, r)?;
    write_zeroing_text(out, r)?;
    write_near_text(out, r)?;
    write_path_text(out, r)
}

/// The critical-path profiles, each cut to the rows asked for.
fn write_profiles_text(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    for p in &r.profiles {
        writeln!(out)?;
        writeln!(out, "critical-path profile by {}:", p.level)?;
        writeln!(out, "{:>14}  {:>6}  {}", "time", "share", p.level)?;
        let shown = if r.text_rows == 0 { p.rows.len() } else { r.text_rows.min(p.rows.len()) };
        for row in &p.rows[..shown] {
            writeln!(
                out,
                "{:>14}  {:>5.1}%  {}",
                fmt_ns(row.time_ns),
                share(row.time_ns, r.length_ns),
                row.name
            )?;
        }
        if p.level == "imbalance" {
            let all: i64 = p.rows.iter().map(|r| r.time_ns).sum();
            writeln!(
                out,
                "{:>14}  {:>5.1}%  in all: the path's time beyond each procedure's mean per process",
                fmt_ns(all),
                share(all, r.length_ns)
            )?;
        }
        if shown < p.rows.len() {
            let rest: i64 = p.rows[shown..].iter().map(|r| r.time_ns).sum();
            writeln!(
                out,
                "{:>14}  {:>5.1}%  ... {} more (--rows 0 shows all)",
                fmt_ns(rest),
                share(rest, r.length_ns),
                p.rows.len() - shown
            )?;
        }
    }
    Ok(())
}

fn write_zeroing_text(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    let Some(z) = &r.zeroing else { return Ok(()) };
    writeln!(out)?;
    writeln!(
        out,
        "critical-path zeroing (exclusive: the procedure's own time set to zero; inclusive: with all it calls):"
    )?;
    writeln!(
        out,
        "{:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  procedure",
        "excl. on path", "new length", "saved", "incl. on path", "new length", "saved"
    )?;
    for row in z {
        writeln!(
            out,
            "{:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {}",
            fmt_ns(row.on_path_ns),
            fmt_ns(row.length_ns),
            fmt_ns(r.length_ns - row.length_ns),
            fmt_ns(row.inclusive_on_path_ns),
            fmt_ns(row.inclusive_length_ns),
            fmt_ns(r.length_ns - row.inclusive_length_ns),
            row.procedure
        )?;
    }
    Ok(())
}

/// The longest distinct paths.
fn write_near_text(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    let Some(near) = &r.near else { return Ok(()) };
    writeln!(out)?;
    writeln!(out, "longest distinct paths:")?;
    writeln!(out, "{:>4}  {:>14}  {:>6}  {:>10}  ends on", "", "length", "share", "sidetracks")?;
    for (k, p) in near.iter().enumerate() {
        writeln!(
            out,
            "{:>4}  {:>14}  {:>5.1}%  {:>10}  {}",
            k + 1,
            fmt_ns(p.length_ns),
            share(p.length_ns, r.length_ns),
            p.sidetracks,
            p.end
        )?;
    }
    Ok(())
}

/// The path itself, arc by arc.
fn write_path_text(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    let Some(path) = &r.path else { return Ok(()) };
    writeln!(out)?;
    writeln!(out, "path ({} arcs, first to last):", path.len())?;
    writeln!(
        out,
        "{:>14}  {:<10}  {:>14}  {:<14}  {:<10}  location",
        "wall", "via", "weight", "kind", "event"
    )?;
    for p in path {
        writeln!(
            out,
            "{:>14}  {:<10}  {:>14}  {:<14}  {:<10}  {}",
            fmt_ns(p.wall_ns),
            p.via,
            fmt_ns(p.weight_ns),
            p.kind,
            p.event,
            p.location
        )?;
    }
    Ok(())
}

/// One CSV table: `section,name,time_ns,share,detail`.
pub fn write_csv(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    writeln!(out, "section,name,time_ns,share,detail")?;
    writeln!(out, "length,{},{},1,{} mode", spoor_format::csv::field(&r.scope), r.length_ns, r.mode)?;
    for p in &r.profiles {
        for row in &p.rows {
            writeln!(
                out,
                "{},{},{},{:.6},",
                p.level,
                spoor_format::csv::field(&row.name),
                row.time_ns,
                share(row.time_ns, r.length_ns) / 100.0
            )?;
        }
    }
    for z in r.zeroing.iter().flatten() {
        writeln!(
            out,
            "zeroing,{},{},,on_path_ns={}",
            spoor_format::csv::field(&z.procedure),
            z.length_ns,
            z.on_path_ns
        )?;
        writeln!(
            out,
            "zeroing_inclusive,{},{},,on_path_ns={}",
            spoor_format::csv::field(&z.procedure),
            z.inclusive_length_ns,
            z.inclusive_on_path_ns
        )?;
    }
    for (k, p) in r.near.iter().flatten().enumerate() {
        writeln!(
            out,
            "near,{},{},{:.6},ends on {} after {} sidetracks",
            k + 1,
            p.length_ns,
            share(p.length_ns, r.length_ns) / 100.0,
            spoor_format::csv::field(&p.end),
            p.sidetracks
        )?;
    }
    for p in r.path.iter().flatten() {
        writeln!(
            out,
            "path,{},{},,{} {} {} at {}",
            p.event,
            p.weight_ns,
            p.via,
            p.kind,
            spoor_format::csv::field(&p.location),
            p.wall_ns
        )?;
    }
    Ok(())
}

/// The report as JSON.
pub fn write_json(out: &mut impl Write, r: &CpReport) -> io::Result<()> {
    serde_json::to_writer(&mut *out, r).map_err(io::Error::other)?;
    writeln!(out)
}

/// The graph as text: a line per node (`node N LOC:INDEX kind wall weight context`)
/// and per remote arc (`arc FROM -> TO kind weight bytes`).
pub fn write_dump(out: &mut impl Write, pag: &Pag) -> io::Result<()> {
    writeln!(
        out,
        "# PAG: {} mode, t0 {} ns, {} nodes, {} remote arcs",
        pag.mode.name(),
        pag.t0,
        pag.nodes(),
        pag.arcs()
    )?;
    let mut count = vec![0u64; pag.defs.locations.len()];
    let mut a = 0;
    for i in 0..pag.nodes() {
        let l = pag.loc[i];
        let (ev, name) = if l == NONE {
            ("-".to_owned(), "collective".to_owned())
        } else {
            count[l as usize] += 1;
            (format!("{}:{}", l, count[l as usize] - 1), pag.defs.location_name(l))
        };
        let prev = if pag.prev[i] == NONE { "source".to_owned() } else { pag.prev[i].to_string() };
        writeln!(
            out,
            "node {i} {ev} {name} {} wall={} local_from={prev} weight={} in={}",
            pag.kind_name(i as u32),
            pag.wall[i],
            pag.weight[i],
            spoor_format::csv::field(&pag.proc_name(pag.proc_of_ctx(pag.ctx[i])))
        )?;
        while a < pag.arcs() && pag.arc_to[a] as usize == i {
            let op = match pag.arc_op[a].checked_sub(1).and_then(spoor_model::CollOp::from_code) {
                Some(op) => format!(" op={}", op.name()),
                None => String::new(),
            };
            writeln!(
                out,
                "arc {} -> {i} {} weight={} bytes={}{op}",
                pag.arc_from[a],
                pag.arc_kind[a].name(),
                pag.arc_weight[a],
                pag.arc_bytes[a]
            )?;
            a += 1;
        }
    }
    Ok(())
}
