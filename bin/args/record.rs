//! The command line of spoor-record, shared with `spoor man` and `spoor completions`.

use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

pub const EXAMPLES: &str = "\
Examples:
  spoor-record -o traces -- ./app input.dat
  mpirun -np 4 spoor-record -o traces -- ./mpi-app
  spoor-merge traces/ | spoor-order -q -o run.o     next: one ordered trace
  spoor-record --app solver -o traces -- ./a.out";

/// Run PROGRAM with spoor's recording library preloaded: MPI calls (PMPI wrappers),
/// `-finstrument-functions` procedures, wall and CPU time. Each process writes one trace
/// into DIR; `spoor-merge DIR/*` takes them next. Under `mpirun -np N spoor-record -o DIR
/// -- ./app` every rank is recorded. The program's output and exit status are its own.
#[derive(Parser)]
#[command(name = "spoor-record", version, after_help = EXAMPLES)]
pub struct Args {
    /// Directory for the traces (created if missing; must be writable).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Application name (default: the program's file name).
    #[arg(long)]
    pub app: Option<String>,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<OsString>,
}
