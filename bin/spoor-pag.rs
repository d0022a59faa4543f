//! spoor-pag: the Program Activity Graph of an ordered trace, as a PAG file or a
//! listing (the spoor-graph crate; formats/pag.md).

use clap::Parser;
use spoor_cli::Output;
use spoor_graph::{file, show, Mode};
use std::io::Write;

const ABOUT: &str = "\
Nodes are the trace's events in causal order (plus a virtual node per collective instance);
each has the local arc from its location's previous event, weighed by process time (cpu mode:
waiting weighs nothing) or elapsed time (wall mode). Remote arcs join sends to receives,
collective begins to ends, lock releases to acquisitions, parents to spawned processes.
formats/pag.md gives the cost model and the file format. spoor-cp reads the result.";

/// Build the Program Activity Graph of an ordered trace.
#[derive(Parser)]
#[command(name = "spoor-pag", version, after_long_help = ABOUT)]
struct Args {
    /// An ordered trace (spoor-order's output); `-` for standard input.
    #[arg(default_value = "-")]
    input: String,
    #[arg(long, value_name = "cpu|wall", default_value = "cpu")]
    weight: Mode,
    /// Message-arc weights from this communication-cost table (formats/nettable.md).
    #[arg(long, value_name = "TABLE")]
    net: Option<String>,
    /// Print the graph as text, one node or arc a line, instead of writing the PAG file.
    #[arg(long)]
    dump: bool,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    quiet: bool,
}

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-pag", || {
        let mode = args.weight;
        let pag = file::load(&args.input, mode, args.net.as_deref(), args.quiet)?;
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
