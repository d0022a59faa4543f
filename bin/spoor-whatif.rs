//! spoor-whatif: scenario sweeps (placements × networks × procedure moves × zeroings),
//! procedure LBF beside zeroing, and the search for a good placement (the spoor-whatif
//! crate; formats/scenarios.md), one subcommand each.

use clap::Parser;
use spoor_cli::{Console, Output, SpillDir};
use spoor_graph::{file, Mode as Weight, Pag};
use spoor_model::Feedback;
use spoor_whatif::procedure::{procedure_id, procedure_whatif};
use spoor_whatif::scenario::{self, ScenarioFile, Sweep};
use spoor_whatif::{arrival_note, load_network, placement, search, stretch, Costs, Wildcards};
use std::io::Write;
use std::path::Path;

#[path = "args/whatif.rs"]
mod args;
use args::*;

fn main() {
    refuse_former_flags();
    let args = Args::parse();
    spoor_cli::run_stage("spoor-whatif", args.verbose, || {
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global()?;
        }
        let console = Console::new("spoor-whatif", args.quiet);
        match &args.mode {
            Mode::Scenarios(s) => scenarios(s, &args, &console),
            Mode::Procedure(p) => procedures(p, &args, &console),
            Mode::Search(s) => placement_search(s, &args, &console),
        }
    })
}

/// The former `--scenarios FILE`, `--procedure F`, `--search K`: a usage error naming
/// the subcommand that replaces them.
fn refuse_former_flags() {
    for arg in std::env::args().skip(1) {
        let flag = arg.split('=').next().unwrap_or_default();
        if let Some((_, now)) = FORMER_FLAGS.iter().find(|(old, _)| *old == flag) {
            eprintln!("spoor-whatif: {flag} is now a subcommand: {now} (see spoor-whatif --help)");
            std::process::exit(spoor_cli::exit::USAGE);
        }
    }
}

/// The trace or PAG in cpu mode, with the clock warning it carries, cut to the stretch
/// to predict (`--phase`, `--window`, else after MPI_Init, said on standard error).
fn load(input: &str, args: &Args, console: &Console) -> anyhow::Result<Pag> {
    let spill = SpillDir::new("spoor-whatif", args.tmpdir.as_deref());
    let arena = spoor_cli::spill::graph_arena(input, args.memory, &spill)?;
    let pag = file::load_in(input, Weight::Cpu, None, console, arena.as_ref())?;
    if let Some(w) = pag.clock_violations().warning() {
        eprintln!("spoor-whatif: warning: {w}");
    }
    let stretch = stretch::choose(&pag, args.phase.as_deref(), args.window.as_deref())?;
    if let (Some(note), false) = (&stretch.note, args.quiet) {
        eprintln!("spoor-whatif: {note}");
    }
    // What the model could not undo in the recording (formats/pag.md).
    for note in pag.notes.iter().filter(|_| !args.quiet) {
        eprintln!("spoor-whatif: note: {note}");
    }
    let pag = stretch::cut(pag, &stretch)?;
    if let (Wildcards::Arrival, false, Some(note)) = (args.wildcards, args.quiet, arrival_note(&pag)) {
        eprintln!("spoor-whatif: note: {note}");
    }
    Ok(pag)
}

fn scenarios(s: &Scenarios, args: &Args, console: &Console) -> anyhow::Result<()> {
    let spec = ScenarioFile::parse(&s.file, &spoor_format::read_text(&s.file)?)?;
    // Paths in the file are relative to the file.
    let base = Path::new(&s.file).parent().unwrap_or(Path::new("")).to_owned();
    let input = match (&s.input, &spec.input) {
        (Some(i), _) => i.clone(),
        (None, Some(i)) => base.join(i).to_string_lossy().into_owned(),
        (None, None) => "-".to_owned(),
    };
    let pag = load(&input, args, console)?;
    let mut sweep = Sweep::new(&pag, &s.file, &spec, &base)?;
    sweep.waits = args.waits;
    sweep.wildcards = args.wildcards;
    sweep.sharing = args.sharing;
    for w in &sweep.warnings {
        console.warn(w);
    }
    let rows = sweep.run(&pag)?;
    let mut out = Output::create(args.output.as_deref())?;
    match args.format {
        Format::Csv => scenario::write_csv(&mut out, &rows)?,
        Format::Json => scenario::write_json(&mut out, &rows)?,
    }
    out.commit()
}

fn procedures(p: &Procedure, args: &Args, console: &Console) -> anyhow::Result<()> {
    let mut pag = load(&p.input, args, console)?;
    let place = if p.place.is_some() || p.place_file.is_some() || p.place_by.is_some() {
        Some(placement::from_args(&pag, p.place.as_deref(), p.place_file.as_deref(), p.place_by.as_deref())?)
    } else {
        None
    };
    // A name that holds a comma is one procedure when the trace has it.
    let ids = match procedure_id(&pag, &p.names) {
        Ok(id) => vec![id],
        Err(_) => p.names.split(',').map(|n| procedure_id(&pag, n)).collect::<Result<_, _>>()?,
    };
    let spread = spoor_whatif::interval::spread(&pag).ok();
    let base = modelled(args);
    let mut rows = Vec::new();
    for id in ids {
        rows.push(procedure_whatif(&mut pag, id, place.as_ref(), &base)?.with_interval(spread.as_ref()));
    }
    let mut out = Output::create(args.output.as_deref())?;
    match args.format {
        Format::Csv => {
            writeln!(
                out,
                "procedure,original_ns,moved_ns,moved_improvement,time_moved_ns,zeroed_ns,zeroed_improvement,\
                 zeroed_inclusive_ns,zeroed_inclusive_improvement,move_share_of_zeroing,moved_low_ns,moved_high_ns"
            )?;
            for r in &rows {
                let share = r.move_share_of_zeroing().map_or(String::new(), |s| format!("{s:.6}"));
                writeln!(
                    out,
                    "{},{},{},{:.6},{},{},{:.6},{},{:.6},{share},{},{}",
                    spoor_format::csv::field(&r.procedure),
                    r.original_ns,
                    r.moved_ns,
                    r.improvement(r.moved_ns),
                    r.time_moved_ns,
                    r.zeroed_ns,
                    r.improvement(r.zeroed_ns),
                    r.zeroed_inclusive_ns,
                    r.improvement(r.zeroed_inclusive_ns),
                    spoor_format::csv::optional(r.moved_low_ns),
                    spoor_format::csv::optional(r.moved_high_ns),
                )?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &rows)?;
            writeln!(out)?;
        }
    }
    out.commit()
}

/// The machine the options model: waiting, sharing a processor, receives for any source.
fn modelled(args: &Args) -> Costs<'static> {
    Costs { waits: args.waits, wildcards: args.wildcards, sharing: args.sharing, ..Costs::default() }
}

fn placement_search(s: &Search, args: &Args, console: &Console) -> anyhow::Result<()> {
    let pag = load(&s.input, args, console)?;
    let net = s.net.as_deref().map(|t| load_network(t, s.local, &pag, console)).transpose()?;
    let costs = Costs { net: net.as_ref(), ..modelled(args) };
    let r = search::search(&pag, s.processors, &costs, s.rounds)?;
    let mut out = Output::create(args.output.as_deref())?;
    match args.format {
        Format::Csv => {
            writeln!(out, "strategy,processors,predicted_ns,placement")?;
            for c in &r.candidates {
                writeln!(
                    out,
                    "{},{},{},{}",
                    spoor_format::csv::field(&c.strategy),
                    c.processors,
                    c.predicted_ns,
                    spoor_format::csv::field(&c.placement)
                )?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &r)?;
            writeln!(out)?;
        }
    }
    if !args.quiet {
        eprintln!("spoor-whatif: local search: {} predictions in {} rounds", r.evaluations, r.rounds);
    }
    out.commit()
}
