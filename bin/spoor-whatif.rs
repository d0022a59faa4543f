//! spoor-whatif: scenario sweeps (placements × networks × procedure moves × zeroings),
//! procedure LBF beside zeroing, and the search for a good placement (the spoor-whatif
//! crate; formats/scenarios.md).

use anyhow::bail;
use clap::Parser;
use spoor_cli::{Console, Output};
use spoor_graph::{file, Mode, NetTable};
use spoor_model::Feedback;
use spoor_whatif::procedure::{procedure_id, procedure_whatif};
use spoor_whatif::scenario::{self, ScenarioFile, Sweep};
use spoor_whatif::{placement, search, Costs};
use std::io::Write;
use std::path::Path;

#[path = "args/whatif.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-whatif", || {
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global()?;
        }
        let modes =
            args.scenarios.is_some() as u8 + (!args.procedure.is_empty()) as u8 + args.search.is_some() as u8;
        if modes != 1 {
            bail!("give one of --scenarios FILE, --procedure NAME and --search K");
        }
        let spec = match &args.scenarios {
            Some(f) => {
                let text = spoor_format::read_text(f)?;
                Some(ScenarioFile::parse(f, &text)?)
            }
            None => None,
        };
        let base =
            args.scenarios.as_deref().and_then(|f| Path::new(f).parent()).unwrap_or(Path::new("")).to_owned();
        let input = match (&args.input, spec.as_ref().and_then(|s| s.input.as_ref())) {
            (Some(i), _) => i.clone(),
            (None, Some(i)) => base.join(i).to_string_lossy().into_owned(),
            (None, None) => "-".to_owned(),
        };
        let console = Console::new("spoor-whatif", args.quiet);
        let mut pag = file::load(&input, Mode::Cpu, None, &console)?;
        if let Some(w) = pag.clock_violations().warning() {
            eprintln!("spoor-whatif: warning: {w}");
        }
        let mut out = Output::create(args.output.as_deref())?;
        if let (Some(spec), Some(f)) = (&spec, &args.scenarios) {
            if args.place.is_some()
                || args.place_file.is_some()
                || args.place_by.is_some()
                || args.net.is_some()
            {
                bail!("with --scenarios, placements and networks come from the scenario file");
            }
            let sweep = Sweep::new(&pag, f, spec, &base)?;
            for w in &sweep.warnings {
                console.warn(w);
            }
            let rows = sweep.run(&pag)?;
            match args.format {
                Format::Csv => scenario::write_csv(&mut out, &rows)?,
                Format::Json => scenario::write_json(&mut out, &rows)?,
            }
            return out.commit();
        }
        let table = args.net.as_deref().map(|t| NetTable::load(t, &console)).transpose()?;
        let costs = Costs { net: table.as_ref(), ..Costs::default() };
        if let Some(k) = args.search {
            if args.place.is_some() || args.place_file.is_some() || args.place_by.is_some() {
                bail!("--search finds the placement itself: leave out --place, --place-file, --place-by");
            }
            let r = search::search(&pag, k, &costs, args.rounds)?;
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
            return out.commit();
        }
        if table.is_some() {
            bail!("--procedure compares on the measured messages: leave out --net, or use --scenarios");
        }
        let given = args.place.is_some() || args.place_file.is_some() || args.place_by.is_some();
        let place = if given {
            Some(placement::from_args(
                &pag,
                args.place.as_deref(),
                args.place_file.as_deref(),
                args.place_by.as_deref(),
            )?)
        } else {
            None
        };
        let mut rows = Vec::new();
        for name in &args.procedure {
            let id = procedure_id(&pag, name)?;
            rows.push(procedure_whatif(&mut pag, id, place.as_ref())?);
        }
        match args.format {
            Format::Csv => {
                writeln!(
                    out,
                    "procedure,original_ns,moved_ns,moved_improvement,time_moved_ns,zeroed_ns,zeroed_improvement,\
                     zeroed_inclusive_ns,zeroed_inclusive_improvement,move_share_of_zeroing"
                )?;
                for r in &rows {
                    let share = r.move_share_of_zeroing().map_or(String::new(), |s| format!("{s:.6}"));
                    writeln!(
                        out,
                        "{},{},{},{:.6},{},{},{:.6},{},{:.6},{share}",
                        spoor_format::csv::field(&r.procedure),
                        r.original_ns,
                        r.moved_ns,
                        r.improvement(r.moved_ns),
                        r.time_moved_ns,
                        r.zeroed_ns,
                        r.improvement(r.zeroed_ns),
                        r.zeroed_inclusive_ns,
                        r.improvement(r.zeroed_inclusive_ns),
                    )?;
                }
            }
            Format::Json => {
                serde_json::to_writer_pretty(&mut out, &rows)?;
                writeln!(out)?;
            }
        }
        out.commit()
    })
}
