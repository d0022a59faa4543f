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
        let reader = match args.net.is_none() && !args.dump {
            true => streamed::trace_file(&args.input)?,
            false => None,
        };
        let pag = match reader {
            Some(reader) if streamed::graph_bytes(&reader).is_some_and(|b| b > budget) => {
                let spill = SpillDir::new("spoor-pag", args.tmpdir.as_deref());
                let mut out = Output::create(args.output.as_deref())?;
                if let Some((pag, bytes)) =
                    spilled::write_pag(reader, mode, spill.path()?, &mut out, &console)?
                {
                    spill.wrote(bytes);
                    out.commit()?;
                    return Ok(tell(&pag, args.quiet)?);
                }
                file::load(&args.input, mode, None, &console)?
            }
            Some(reader) => build::build_observed(reader, mode, &console)?,
            None => file::load(&args.input, mode, args.net.as_deref().map(|t| (t, args.local)), &console)?,
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
