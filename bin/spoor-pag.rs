//! spoor-pag: the Program Activity Graph of an ordered trace, as a PAG file or a
//! listing (the spoor-graph crate; formats/pag.md).

use clap::Parser;
use spoor_cli::{Console, Output};
use spoor_graph::{file, show};
use std::io::Write;

#[path = "args/pag.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    spoor_cli::run_stage("spoor-pag", args.verbose, || {
        let mode = args.weight;
        let pag = file::load(
            &args.input,
            mode,
            args.net.as_deref().map(|t| (t, args.local)),
            &Console::new("spoor-pag", args.quiet),
        )?;
        let mut out = Output::create(args.output.as_deref())?;
        if args.dump {
            show::write_dump(&mut out, &pag)?;
        } else {
            file::write(&mut out, &pag)?;
        }
        out.commit()?;
        if let Some(w) = pag.clock_violations().warning() {
            eprintln!("spoor-pag: warning: {w}");
        }
        if !args.quiet {
            for n in &pag.notes {
                eprintln!("spoor-pag: note: {n}");
            }
        }
        std::io::stderr().flush()?;
        Ok(())
    })
}
