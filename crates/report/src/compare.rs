//! IPS-2's comparison mode: several runs side by side, a column per run and the
//! difference of each from the first.

use crate::metric::{Level, Metric};
use crate::table::{Cell, Table, Unit};
use crate::Analysis;
use std::collections::BTreeMap;

/// Distinct labels for runs: their names, with `#2`, `#3` after repeats.
pub fn labels(runs: &[Analysis]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    runs.iter()
        .map(|r| {
            let n = seen.entry(r.name.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                r.name.clone()
            } else {
                format!("{}#{}", r.name, n)
            }
        })
        .collect()
}

/// `compare.LEVEL`: a row per node (matched by name) and metric; a column per run, then
/// per later run its difference from the first and that difference in percent of the
/// first. A node a run does not have is empty there.
pub fn table(runs: &[Analysis], level: Level) -> Table {
    let labels = labels(runs);
    let per_run: Vec<Table> = runs.iter().map(|r| r.metric_table(level)).collect();
    let metrics: Vec<Metric> = level
        .metrics()
        .iter()
        .copied()
        .filter(|&m| m != Metric::Npt || runs.iter().all(|r| r.ordered))
        .collect();
    // Nodes in the order first met, run by run.
    let mut nodes: Vec<String> = Vec::new();
    let mut values: Vec<BTreeMap<String, Vec<Cell>>> = Vec::new();
    for t in &per_run {
        let mut m = BTreeMap::new();
        for r in &t.rows {
            let Cell::Text(name) = &r[0] else { continue };
            if !nodes.contains(name) {
                nodes.push(name.clone());
            }
            m.insert(name.clone(), r.clone());
        }
        values.push(m);
    }
    let mut cols: Vec<(String, Unit)> =
        vec![(level.name().into(), Unit::Text), ("metric".into(), Unit::Text)];
    for l in &labels {
        cols.push((l.clone(), Unit::Number));
    }
    for l in labels.iter().skip(1) {
        cols.push((format!("diff {l}"), Unit::Number));
        cols.push((format!("diff% {l}"), Unit::Pct));
    }
    let colrefs: Vec<(&str, Unit)> = cols.iter().map(|(n, u)| (n.as_str(), *u)).collect();
    let mut t = Table::new(
        &format!("compare.{}", level.name()),
        &format!(
            "Comparison of {} runs: {} level (differences from {})",
            runs.len(),
            level.name(),
            labels[0]
        ),
        &colrefs,
    );
    for node in &nodes {
        for &m in &metrics {
            let vals: Vec<Option<f64>> = per_run
                .iter()
                .zip(&values)
                .map(|(pt, v)| {
                    let c = pt.column(m.name())?;
                    v.get(node)?.get(c)?.num()
                })
                .collect();
            let mut row = vec![Cell::Text(node.clone()), Cell::Text(m.name().into())];
            row.extend(vals.iter().map(|v| Cell::from(*v)));
            for v in vals.iter().skip(1) {
                match (vals[0], v) {
                    (Some(a), Some(b)) => {
                        row.push(Cell::Num(b - a));
                        row.push(if a != 0.0 { Cell::Num(100.0 * (b - a) / a) } else { Cell::Empty });
                    }
                    _ => {
                        row.push(Cell::Empty);
                        row.push(Cell::Empty);
                    }
                }
            }
            t.push(row);
        }
    }
    t.notes.push("times in ns in every form (units per metric: formats/report.md)".into());
    t
}
