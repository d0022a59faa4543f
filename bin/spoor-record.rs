//! spoor-record: run a program with recording (one trace per process in -o DIR).

use clap::Parser;
use std::os::unix::process::CommandExt;

#[path = "args/record.rs"]
mod args;
use args::*;

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

/// The header of the phase marks (c/spoor.h), built in for `--include-dir`.
const SPOOR_H: &[u8] = include_bytes!("../crates/record-preload/c/spoor.h");

fn main() {
    spoor_cli::run("spoor-record", || {
        let args = Args::parse();
        let exe = std::env::current_exe()?;
        if args.include_dir {
            println!("{}", spoor_record::launch::find_include_dir(&exe, SPOOR_H)?.display());
            return Ok(());
        }
        if args.library {
            println!("{}", spoor_record::launch::find_preload(&exe, embedded_preload())?.display());
            return Ok(());
        }
        let Some(output) = &args.output else { return Err(spoor_cli::usage("give -o DIR")) };
        let dir = spoor_record::launch::check_output_dir(output)?;
        let preload = spoor_record::launch::find_preload(&exe, embedded_preload())?;
        if let Some(program) = spoor_record::launch::resolve_program(&args.command[0]) {
            spoor_record::launch::check_mpi(&program, &preload)?;
            spoor_record::launch::check_pvm(&program, &preload)?;
        }
        let env = spoor_record::launch::environment(&dir, args.app.as_deref(), &preload, std::process::id());
        let err = std::process::Command::new(&args.command[0]).args(&args.command[1..]).envs(env).exec();
        anyhow::bail!("cannot run {}: {err}", args.command[0].to_string_lossy())
    })
}
