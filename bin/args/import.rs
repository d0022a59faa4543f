//! The command line of spoor-import, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Clock {
    /// Each location's own clock; recorded clock offsets become clock_offset events for spoor-align.
    Raw,
    /// Times corrected with the trace's own clock offsets, as the source tool's reader does.
    Corrected,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-import scorep-run/traces.otf2 -o run.spoor
  spoor-import --clock corrected scorep-run/ -o run.spoor
  spoor-import app.prv.gz -o run.spoor              Paraver (.pcf and .row beside it)
  spoor-import dumpi-run/ -o run.spoor              the directory of a DUMPI .meta";

/// Read another tool's trace and write it as a spoor trace: an OTF2 archive (its anchor
/// `traces.otf2`, or its directory), a Paraver trace (`.prv` or `.prv.gz`, with its `.pcf`
/// and `.row` beside it) or a DUMPI trace (its `.meta`, or a directory holding one). The
/// format is told from the content. What is not converted is counted on standard error.
#[derive(Parser)]
#[command(name = "spoor-import", version, after_help = EXAMPLES)]
pub struct Args {
    /// The trace to import: an OTF2 anchor, a .prv(.gz), a DUMPI .meta, or a directory holding one.
    pub input: PathBuf,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Which clock the event times are on.
    #[arg(long, value_enum, default_value = "raw")]
    pub clock: Clock,
    /// Do not add a recv_begin at the start of each blocking receive call.
    #[arg(long)]
    pub no_recv_begin: bool,
    /// Say nothing about skipped records.
    #[arg(short, long)]
    pub quiet: bool,
}
