//! spoor-record: run a program with recording (one trace per process in -o DIR).

use clap::Parser;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// Run PROGRAM with spoor's recording library preloaded: MPI calls (PMPI wrappers),
/// `-finstrument-functions` procedures, wall and CPU time. Each process writes one trace
/// into DIR; `spoor-merge DIR/*` takes them next. Under `mpirun -np N spoor-record -o DIR
/// -- ./app` every rank is recorded. The program's output and exit status are its own.
#[derive(Parser)]
#[command(name = "spoor-record", version)]
struct Args {
    /// Directory for the traces (created if missing; must be writable).
    #[arg(short, long)]
    output: PathBuf,
    /// Application name (default: the program's file name).
    #[arg(long)]
    app: Option<String>,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<OsString>,
}

/// The preload library built into this binary (build.rs).
fn embedded_preload() -> &'static [u8] {
    extern "C" {
        static spoor_preload_so_start: u8;
        static spoor_preload_so_end: u8;
    }
    // SAFETY: the two symbols bound the library's bytes in read-only data.
    unsafe {
        let start = &raw const spoor_preload_so_start;
        let len = (&raw const spoor_preload_so_end).offset_from(start);
        std::slice::from_raw_parts(start, len as usize)
    }
}

fn main() {
    spoor_cli::run("spoor-record", || {
        let args = Args::parse();
        let dir = spoor_record::launch::check_output_dir(&args.output)?;
        let exe = std::env::current_exe()?;
        let preload = spoor_record::launch::find_preload(&exe, embedded_preload())?;
        if let Some(program) = spoor_record::launch::resolve_program(&args.command[0]) {
            spoor_record::launch::check_mpi(&program, &preload)?;
        }
        let env = spoor_record::launch::environment(&dir, args.app.as_deref(), &preload, std::process::id());
        let err = std::process::Command::new(&args.command[0]).args(&args.command[1..]).envs(env).exec();
        anyhow::bail!("cannot run {}: {err}", args.command[0].to_string_lossy())
    })
}
