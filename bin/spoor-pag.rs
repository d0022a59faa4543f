//! spoor-pag: the Program Activity Graph of an ordered trace, as a PAG file or a
//! listing (the spoor-graph crate; formats/pag.md).

use clap::Parser;
use spoor_cli::{Console, Output, SpillDir};
use spoor_graph::{build, file, show, spilled, streamed, Pag};
use std::io::Write;

#[path = "args/pag.rs"]
mod args;
use args::*;

/// What the graph's reader should know, on standard error.
fn tell(pag: &Pag, quiet: bool) -> std::io::Result<()> {
    if let Some(w) = pag.clock_violations().warning() {
        eprintln!("spoor-pag: warning: {w}");
    }
    if !quiet {
        for n in &pag.notes {
            eprintln!("spoor-pag: note: {n}");
        }
    }
    std::io::stderr().flush()
}

fn main() {
    let args = Args::parse();
    spoor_cli::run_stage("spoor-pag", args.verbose, || {
        let mode = args.weight;
        let console = Console::new("spoor-pag", args.quiet);
        // A PAG file too large for the memory given is written as the graph is built.
        let budget = args.memory.unwrap_or_else(spoor_cli::graph_budget);
        let spill = SpillDir::new("spoor-pag", args.tmpdir.as_deref());
        let spills = args.net.is_none() && !args.dump;
        // A stream whose graph would not fit is read as a file: from a copy.
        let spooled = match spills {
            true => spoor_cli::spool_if_stream(&args.input, &spill)?,
            false => None,
        };
        let input = spoor_cli::read_from(&args.input, spooled.as_ref());
        let as_given = |e: spoor_graph::Error| spoor_cli::spill::named_as_given(spooled.as_ref(), e.into());
        let reader = match spills {
            true => streamed::trace_file(&input).map_err(as_given)?,
            false => None,
        };
        let pag = match reader {
            Some(reader) if streamed::graph_bytes(&reader).is_some_and(|b| b > budget) => {
                let mut out = Output::create(args.output.as_deref())?;
                if let Some((pag, bytes)) =
                    spilled::write_pag(reader, mode, spill.path()?, &mut out, &console).map_err(as_given)?
                {
                    spill.wrote(bytes);
                    out.commit()?;
                    return Ok(tell(&pag, args.quiet)?);
                }
                file::load(&input, mode, None, &console).map_err(as_given)?
            }
            Some(reader) => build::build_observed(reader, mode, &console).map_err(as_given)?,
            None => {
                let arena = spoor_cli::spill::graph_arena(&input, args.memory, &spill)
                    .map_err(|e| spoor_cli::spill::named_as_given(spooled.as_ref(), e))?;
                let net = args.net.as_deref().map(|t| (t, args.local));
                file::load_in(&input, mode, net, &console, arena.as_ref()).map_err(as_given)?
            }
        };
        let mut out = Output::create(args.output.as_deref())?;
        if args.dump {
            show::write_dump(&mut out, &pag)?;
        } else {
            file::write(&mut out, &pag)?;
        }
        out.commit()?;
        Ok(tell(&pag, args.quiet)?)
    })
}
