//! The command line of spoor-record, shared with `spoor man` and `spoor completions`.

use clap::Parser;
use std::ffi::OsString;
use std::path::PathBuf;

pub const EXAMPLES: &str = "\
Examples:
  spoor-record -o traces -- ./app input.dat
  mpirun -np 4 spoor-record -o traces -- ./mpi-app
  spoor-merge traces/ | spoor-order -q -o run.o     next: one ordered trace
  spoor-record --app solver -o traces -- ./a.out
  mpicc -I\"$(spoor-record --include-dir)\" -o app app.c     phase marks: #include <spoor.h>
  mpifort -o app app.f90 \"$(spoor-record --library)\"       phase marks from Fortran";

/// Run PROGRAM with spoor's recording library preloaded: MPI calls (PMPI wrappers),
/// `-finstrument-functions` procedures, phase marks (spoor.h, MPI_Pcontrol), wall and CPU
/// time. Each process writes one trace
/// into DIR; `spoor-merge DIR/*` takes them next. Under `mpirun -np N spoor-record -o DIR
/// -- ./app` every rank is recorded. The program's output and exit status are its own.
#[derive(Parser)]
#[command(name = "spoor-record", version, after_help = EXAMPLES)]
pub struct Args {
    /// Directory for the traces (created if missing; must be writable).
    #[arg(short, long, required_unless_present_any = ["include_dir", "library"])]
    pub output: Option<PathBuf>,
    /// Application name (default: the program's file name).
    #[arg(long)]
    pub app: Option<String>,
    /// Print the directory holding spoor.h, the header of the phase marks
    /// (SPOOR_PHASE_BEGIN, SPOOR_PHASE_END), and exit: `mpicc -I$(spoor-record
    /// --include-dir) ...`.
    #[arg(long, exclusive = true)]
    pub include_dir: bool,
    /// Print the path of the recording library it preloads and exit: a Fortran program
    /// that calls spoor_phase_begin and spoor_phase_end is linked with it.
    #[arg(long, exclusive = true)]
    pub library: bool,
    /// The program and its arguments.
    #[arg(
        required_unless_present_any = ["include_dir", "library"],
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}
