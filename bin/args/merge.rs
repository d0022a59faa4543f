//! The command line of spoor-merge, shared with `spoor man` and `spoor completions`.

use clap::Parser;
use std::path::PathBuf;

pub const ABOUT_MERGE: &str = "\
Definitions are unified by name: applications by name (or the name --app gives), machines by
name (one physical tree shared by all applications), processes by application, name and rank,
locations by process and thread, communicators by name and members, metrics by name and unit.
Events are merged in the order of their times across inputs, each input's own order kept.
A location that gets events from two inputs is an error: give separate runs names with --app.
A directory stands for the files in it. Put --app groups after the plain inputs, or end them
with `--`.";

pub const EXAMPLES: &str = "\
Examples:
  spoor-merge traces/ -o run.spoor                  the per-process files of a recording
  spoor-merge --app server=srv/ --app client=cli/ -o session.spoor
  spoor-merge --app before=old/ --app after=new/ --compare after -o both.spoor";

/// Merge traces (per-process files, whole traces, several applications) into one trace.
#[derive(Parser)]
#[command(name = "spoor-merge", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT_MERGE}\n\n{EXAMPLES}"))]
pub struct Args {
    /// Traces to merge: files, directories of files, `-` for standard input.
    pub inputs: Vec<String>,
    /// An application: NAME=FILE [FILE...]. Every application of these inputs becomes NAME
    /// (IPS-2's multi-application session). Repeatable.
    #[arg(long, value_name = "NAME=FILES", num_args = 1.., action = clap::ArgAction::Append)]
    pub app: Vec<String>,
    /// Comparison mode for application NAME: shift its time base so that it starts together
    /// with the other applications. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub compare: Vec<String>,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Events per block of the output.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub block_events: usize,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
    /// At the end, print the peak resident memory and the disk used to spare memory on standard error.
    #[arg(short, long)]
    pub verbose: bool,
}
