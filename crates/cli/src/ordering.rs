//! What a stage that orders its input does around the ordering (spoor-order, and spoor-cp
//! given a trace not yet ordered): the traces it is given, opened or merged first, and
//! what the ordering found, said on standard error.

use crate::{Console, SpillDir};
use spoor_model::Feedback;
use spoor_order::align::AlignOptions;
use spoor_order::merge::{self, MergeInput};
use spoor_order::order::{self, OrderSummary, Prepared};
use spoor_order::Input;

/// The traces at `paths` as one input: a trace file as it is (standard input or a pipe
/// copied into the spill directory), several traces or a directory of them (a run as
/// spoor-record writes it) first merged into the spill directory, as spoor-merge does.
pub fn open_traces(
    command: &'static str,
    paths: &[String],
    spill: &SpillDir,
    quiet: bool,
) -> anyhow::Result<Input> {
    let mut files = Vec::new();
    for path in paths {
        let expanded = merge::expand(path)?;
        if expanded.is_empty() {
            anyhow::bail!("{path}: an empty directory");
        }
        files.extend(expanded.into_iter().map(|path| MergeInput { path, app: None }));
    }
    if let [one] = paths {
        if files.len() == 1 && files[0].path == *one {
            return crate::open_input(one, spill);
        }
    }
    if files.iter().filter(|f| f.path == "-").count() > 1 {
        anyhow::bail!("standard input (`-`) can be read only once");
    }
    let console = Console::new(command, quiet);
    let name = paths.join(" ");
    let (merged, summary) = merge::merge_to_temporary(&files, &name, spill.path()?, &console)?;
    spill.wrote(merged.spooled_bytes());
    for w in &summary.warnings {
        eprintln!("{command}: warning: {w}");
    }
    Ok(merged)
}

/// `input` read once to be ordered ([`spoor_order::order::prepare`]), or with `align`
/// aligned first as spoor-align does with its defaults
/// ([`spoor_order::align::align_to_order`]: an aligned copy, where clocks move, goes to
/// the spill directory and is counted for `-v`), spoor-align's report then said on
/// standard error unless `quiet`.
pub fn prepare<'a>(
    input: &'a Input,
    align: bool,
    spill: &SpillDir,
    console: &Console,
    quiet: bool,
) -> anyhow::Result<Prepared<'a>> {
    if !align {
        return Ok(order::prepare(input, console)?);
    }
    let (report, prepared) =
        spoor_order::align::align_to_order(input, &AlignOptions::default(), &|| spill.io_path(), console)?;
    if prepared.spooled_bytes() > 0 {
        spill.wrote(prepared.spooled_bytes());
    }
    if !quiet {
        eprint!("{}", report.to_text());
    }
    Ok(prepared)
}

/// Whether the trace at `path` is still to be ordered before a graph can be built of it:
/// a directory (a recorded run), a binary trace without the flags of spoor-order's
/// output (GLOBAL_ORDER, MATCHED), a trace in the text form whose first event has no
/// Lamport clock. Standard input, a pipe and a PAG file are read as they are.
pub fn needs_ordering(path: &str) -> anyhow::Result<bool> {
    if spoor_format::is_stream(path) {
        return Ok(false);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(true);
    }
    if spoor_graph::file::is_pag_file(path)? {
        return Ok(false);
    }
    let mut reader = spoor_format::TraceReader::open(path, spoor_format::ReadOptions::default())?;
    let ordered = spoor_format::binary::flags::GLOBAL_ORDER | spoor_format::binary::flags::MATCHED;
    match reader.header() {
        Some(h) => Ok(h.flags & ordered != ordered),
        // The text form is for small, hand-written traces: its first block tells.
        None => Ok(reader.next_block()?.and_then(|b| b.events.first().map(|e| e.ann.lamport.is_none()))
            == Some(true)),
    }
}

/// The problems an ordering found, counted by kind: `2 unmatched send, 1 size mismatch`.
pub fn problem_counts(s: &OrderSummary) -> String {
    let mut by: Vec<(&str, usize)> = Vec::new();
    for p in &s.problems {
        match by.iter_mut().find(|(k, _)| *k == p.kind.label()) {
            Some(e) => e.1 += 1,
            None => by.push((p.kind.label(), 1)),
        }
    }
    by.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ")
}

/// Warns of the clock-condition violations an ordering met: times that break the clock
/// condition make every later time between locations wrong, so this is said whatever
/// `--quiet` asks.
pub fn warn_clocks(command: &str, s: &OrderSummary) {
    if let Some(w) = s.violations.warning() {
        eprintln!("{command}: warning: {w}");
    }
}

/// Says on standard error what the ordering of the input `name` found that is not right:
/// its problems (the first ten) and spawns let go early ([`warn_clocks`] says the rest,
/// where the stage's own report does not).
pub fn warn_ordered(command: &str, s: &OrderSummary, name: &str, console: &Console) {
    if !s.problems.is_empty() {
        eprintln!(
            "{command}: warning: {} in {name} (spoor-order --check lists them all):",
            problem_counts(s)
        );
        for p in s.problems.iter().take(10) {
            eprintln!("  {}", p.describe(&s.defs));
        }
        if s.problems.len() > 10 {
            eprintln!("  ... and {} more", s.problems.len() - 10);
        }
    }
    if s.released_spawns > 0 {
        console.warn(&format!(
            "{} spawn(s) placed before their parent's clock allowed, to avoid a cycle",
            s.released_spawns
        ));
    }
}
