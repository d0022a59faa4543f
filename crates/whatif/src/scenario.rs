//! Scenario sweeps (formats/scenarios.md): placements × networks × procedure moves ×
//! zeroings over one PAG, one prediction each, in parallel; results in scenario order
//! whatever the number of threads.

use crate::gag::{self, Costs, Sharing, Waits};
use crate::interval;
use crate::placement::{PlaceBy, Placement};
use crate::procedure::{move_weights, procedure_id};
use crate::serve::Wildcards;
use rayon::prelude::*;
use serde::Deserialize;
use spoor_graph::{cp, CpOptions, Error, Local, NetTable, Network, Pag, Result};
use std::io::{self, Write};
use std::path::Path;
use toml::Spanned;

/// The scenario file as written (formats/scenarios.md).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The trace or PAG file; relative to the scenario file.
    pub input: Option<String>,
    #[serde(default)]
    pub placement: Vec<Spanned<PlacementSpec>>,
    #[serde(default)]
    pub network: Vec<NetworkSpec>,
    /// Procedures to move (procedure LBF); "none" is always a choice too.
    #[serde(default)]
    pub moves: Vec<Spanned<String>>,
    /// Procedures to zero with everything they call (critical-path zeroing, inclusive,
    /// as a move carries the callees along); "none" is always a choice too.
    #[serde(default)]
    pub zeroings: Vec<Spanned<String>>,
    /// Where each line starts, for errors about the file's values.
    #[serde(skip)]
    line_starts: Vec<usize>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementSpec {
    pub name: Option<String>,
    /// `process`, `machine`, `block:K`, `cyclic:K`.
    pub by: Option<String>,
    /// The inline form `a,b;c,d`.
    pub place: Option<Spanned<String>>,
    /// A placement file (formats/placement.md), relative to the scenario file.
    pub file: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub name: Option<String>,
    /// A communication-cost table (formats/nettable.md); none: messages as measured.
    pub table: Option<Spanned<String>>,
    /// A network model (formats/network.md) or `ideal`.
    pub model: Option<Spanned<String>>,
    /// Which messages take the table's local time: processor (the default), machine or
    /// never.
    pub local: Option<Spanned<String>>,
}

impl ScenarioFile {
    pub fn parse(file: &str, text: &str) -> Result<ScenarioFile> {
        let mut spec: ScenarioFile = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: ")
                })
                .unwrap_or_default();
            Error::input(file, format!("{at}{}", e.message()))
        })?;
        spec.line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Ok(spec)
    }

    /// The line (from 1) of a value of the file.
    pub fn line_of<T>(&self, value: &Spanned<T>) -> usize {
        self.line_starts.partition_point(|&s| s <= value.span().start).max(1)
    }
}

/// One scenario, resolved against a PAG.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub placement: usize,
    pub network: usize,
    /// Index into the moves (0: none).
    pub mv: usize,
    pub zero: usize,
}

/// A sweep ready to run: everything parsed and checked.
pub struct Sweep {
    pub placements: Vec<(String, Placement)>,
    pub networks: Vec<(String, Option<Network>)>,
    pub moves: Vec<(String, Option<spoor_format::spill::SpillVec<i64>>)>,
    pub zeros: Vec<(String, Option<u32>)>,
    pub warnings: Vec<String>,
    /// What waiting processes do on shared processors (`Costs::waits`).
    pub waits: Waits,
    /// Which message a receive for any source takes (`Costs::wildcards`).
    pub wildcards: Wildcards,
    /// How the processes of a processor share it (`Costs::sharing`).
    pub sharing: Sharing,
}

/// One row of the result.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    pub scenario: usize,
    pub placement: String,
    pub network: String,
    #[serde(rename = "move")]
    pub mv: String,
    pub zero: String,
    pub processors: usize,
    pub predicted_ns: i64,
    /// The prediction's interval (formats/scenarios.md, "Intervals"); `None` when the
    /// recording's computation does not repeat enough to give one.
    pub predicted_low_ns: Option<i64>,
    pub predicted_high_ns: Option<i64>,
    /// The run's elapsed time (the wall-mode critical path's length).
    pub measured_ns: i64,
    /// The cpu-mode critical path: one processor per process, no waiting.
    pub ideal_ns: i64,
    /// (predicted - measured) / measured.
    pub change_vs_measured: f64,
    /// (predicted - ideal) / ideal.
    pub change_vs_ideal: f64,
}

fn read(base: &Path, file: &str) -> Result<(String, String)> {
    let p = base.join(file);
    let name = p.to_string_lossy().into_owned();
    let text = spoor_format::read_text(&name)?;
    Ok((name, text))
}

/// Reads a communication-cost table file; its warnings are returned.
impl Sweep {
    /// Resolves a scenario file against the PAG; `base` is the scenario file's folder.
    pub fn new(pag: &Pag, file: &str, spec: &ScenarioFile, base: &Path) -> Result<Sweep> {
        let mut warnings = Vec::new();
        let mut placements = Vec::new();
        for (k, spanned) in spec.placement.iter().enumerate() {
            let p = spanned.get_ref();
            let what = format!("line {}: placement {}", spec.line_of(spanned), k + 1);
            let place = match (&p.by, &p.place, &p.file) {
                (Some(by), None, None) => Placement::by_name(pag, by)
                    .map_err(|m| Error::input(file, format!("{what}: by = {m}")))?,
                (None, Some(s), None) => Placement::parse_inline(
                    pag,
                    &format!("{file}: line {}: place", spec.line_of(s)),
                    s.get_ref(),
                )?,
                (None, None, Some(f)) => {
                    let (name, text) = read(base, f)?;
                    Placement::parse_file(pag, &name, &text)?
                }
                _ => return Err(Error::input(file, format!("{what}: give exactly one of by, place, file"))),
            };
            let name = p
                .name
                .clone()
                .or_else(|| p.by.clone())
                .or_else(|| p.place.as_ref().map(|s| s.get_ref().clone()))
                .or_else(|| p.file.clone());
            placements.push((name.unwrap_or_default(), place));
        }
        if placements.is_empty() {
            placements.push(("process".into(), Placement::by(pag, PlaceBy::Process)));
        }
        let mut networks = Vec::new();
        for n in &spec.network {
            let local = match &n.local {
                Some(l) => Some(
                    Local::parse(l.get_ref())
                        .map_err(|m| Error::input(file, format!("line {}: local: {m}", spec.line_of(l))))?,
                ),
                None => None,
            };
            let (name, net) = match (&n.table, &n.model) {
                (Some(t), Some(m)) => {
                    return Err(Error::input(
                        file,
                        format!(
                            "line {}: a network gives a table or a model, not both (line {})",
                            spec.line_of(m),
                            spec.line_of(t)
                        ),
                    ))
                }
                (None, None) => {
                    if let Some(l) = &n.local {
                        return Err(Error::input(
                            file,
                            format!(
                                "line {}: local needs a table or a model (messages as measured have no local time)",
                                spec.line_of(l)
                            ),
                        ));
                    }
                    ("measured".to_owned(), None)
                }
                (Some(t), None) => {
                    let (name, text) = read(base, t.get_ref())?;
                    let (table, w) = NetTable::parse(&name, &text)?;
                    warnings.extend(w);
                    (t.get_ref().clone(), Some(Network::from_table(table)))
                }
                (None, Some(m)) if m.get_ref() == "ideal" => ("ideal".to_owned(), Some(Network::ideal())),
                (None, Some(m)) => {
                    let collected = spoor_model::Collected::default();
                    let net = Network::load(&base.join(m.get_ref()).to_string_lossy(), &collected)?;
                    warnings.extend(collected.warnings());
                    warnings.extend(net.warnings_for(pag));
                    (m.get_ref().clone(), Some(net))
                }
            };
            let net = net.map(|n| n.with_local(local));
            networks.push((n.name.clone().unwrap_or(name), net));
        }
        if networks.is_empty() {
            networks.push(("measured".into(), None));
        }
        let procedure = |name: &Spanned<String>, what: &str| {
            procedure_id(pag, name.get_ref())
                .map_err(|e| Error::input(file, format!("line {}: {what}: {e}", spec.line_of(name))))
        };
        let mut moves = vec![("none".to_owned(), None)];
        for m in &spec.moves {
            let id = procedure(m, "moves")?;
            moves.push((m.get_ref().clone(), Some(move_weights(pag, id)?.weight)));
        }
        let mut zeros = vec![("none".to_owned(), None)];
        for z in &spec.zeroings {
            zeros.push((z.get_ref().clone(), Some(procedure(z, "zeroings")?)));
        }
        Ok(Sweep {
            placements,
            networks,
            moves,
            zeros,
            warnings,
            waits: Waits::Yield,
            wildcards: Wildcards::Recorded,
            sharing: Sharing::Equal,
        })
    }

    /// Every combination, placements outermost.
    pub fn scenarios(&self) -> Vec<Scenario> {
        let mut v = Vec::new();
        for placement in 0..self.placements.len() {
            for network in 0..self.networks.len() {
                for mv in 0..self.moves.len() {
                    for zero in 0..self.zeros.len() {
                        v.push(Scenario { placement, network, mv, zero });
                    }
                }
            }
        }
        v
    }

    /// Runs every scenario (in parallel); rows in scenario order.
    pub fn run(&self, pag: &Pag) -> Result<Vec<Row>> {
        let ideal = cp::length(pag, &CpOptions::default());
        let measured = measured_ns(pag);
        let spread = interval::spread(pag).ok();
        self.scenarios()
            .par_iter()
            .enumerate()
            .map(|(k, s)| {
                let costs = Costs {
                    local: self.moves[s.mv].1.as_deref(),
                    zero: self.zeros[s.zero].1.into_iter().collect(),
                    zero_inclusive: true,
                    net: self.networks[s.network].1.as_ref(),
                    waits: self.waits,
                    wildcards: self.wildcards,
                    sharing: self.sharing,
                };
                let place = &self.placements[s.placement].1;
                let predicted = gag::predict(pag, place, &costs)?.time_ns;
                let (low, high) = spread.map(|s| s.interval(predicted)).unzip();
                Ok(Row {
                    scenario: k + 1,
                    placement: self.placements[s.placement].0.clone(),
                    network: self.networks[s.network].0.clone(),
                    mv: self.moves[s.mv].0.clone(),
                    zero: self.zeros[s.zero].0.clone(),
                    processors: place.groups(),
                    predicted_ns: predicted,
                    predicted_low_ns: low,
                    predicted_high_ns: high,
                    measured_ns: measured,
                    ideal_ns: ideal,
                    change_vs_measured: change(predicted, measured),
                    change_vs_ideal: change(predicted, ideal),
                })
            })
            .collect()
    }
}

fn change(v: i64, reference: i64) -> f64 {
    if reference == 0 {
        0.0
    } else {
        (v - reference) as f64 / reference as f64
    }
}

/// The run's elapsed time: from the PAG's source (the first activity event, or the start
/// of the stretch a sub-PAG covers) to the latest activity event; the wall-mode critical
/// path's length (formats/pag.md), so a prediction of a stretch is held against the
/// same stretch measured.
pub fn measured_ns(pag: &Pag) -> i64 {
    pag.activity_span().map_or(0, |(_, last)| last - pag.t0)
}

pub fn write_csv(out: &mut impl Write, rows: &[Row]) -> io::Result<()> {
    writeln!(
        out,
        "scenario,placement,network,move,zero,processors,predicted_ns,measured_ns,ideal_ns,change_vs_measured,\
         change_vs_ideal,predicted_low_ns,predicted_high_ns"
    )?;
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{}",
            r.scenario,
            spoor_format::csv::field(&r.placement),
            spoor_format::csv::field(&r.network),
            spoor_format::csv::field(&r.mv),
            spoor_format::csv::field(&r.zero),
            r.processors,
            r.predicted_ns,
            r.measured_ns,
            r.ideal_ns,
            r.change_vs_measured,
            r.change_vs_ideal,
            spoor_format::csv::optional(r.predicted_low_ns),
            spoor_format::csv::optional(r.predicted_high_ns)
        )?;
    }
    Ok(())
}

pub fn write_json(out: &mut impl Write, rows: &[Row]) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, rows)?;
    writeln!(out)
}
