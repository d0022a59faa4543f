//! The command line of spoor-cat, shared with `spoor man` and `spoor completions`.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// The text form (formats/text.md), one event per line.
    Text,
    /// JSON lines: the definitions on the first line, then one event a line.
    Json,
    /// The binary format (formats/trace.md), e.g. to turn a hand-written text trace into one.
    Binary,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-cat run.spoor | less                        the events as text
  spoor-cat --count run.spoor
  spoor-cat -f json run.spoor | head
  spoor-cat -f binary hand-written.txt -o trace.spoor
  spoor-cat --salvage -f binary damaged.spoor -o rescued.spoor";

/// Print a trace (binary, gzip-ed or text form) as text or JSON lines, or count its events.
#[derive(Parser)]
#[command(name = "spoor-cat", version, after_help = EXAMPLES)]
pub struct Args {
    /// The trace to read; `-` for standard input.
    #[arg(default_value = "-")]
    pub input: String,
    /// Output form.
    #[arg(short, long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print only the number of events (blocks decoded in parallel).
    #[arg(long)]
    pub count: bool,
    /// Read every intact block of a damaged trace and report what was lost on standard error.
    #[arg(long)]
    pub salvage: bool,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}
