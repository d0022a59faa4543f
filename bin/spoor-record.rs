//! spoor-record: run a program with recording (one trace per process in -o DIR).

use clap::Parser;
use std::os::unix::process::CommandExt;

#[path = "args/record.rs"]
mod args;
use args::*;

fn main() {
    spoor_cli::run("spoor-record", || {
        let args = Args::parse();
        let dir = spoor_record::launch::check_output_dir(&args.output)?;
        let exe = std::env::current_exe()?;
        let Some(preload) = spoor_record::launch::find_preload(&exe) else {
            anyhow::bail!(
                "cannot find {} next to {} (build it with `cargo build -p spoor-record-preload`, \
                 or set SPOOR_PRELOAD)",
                spoor_record::launch::PRELOAD_NAME,
                exe.display()
            );
        };
        let env = spoor_record::launch::environment(&dir, args.app.as_deref(), &preload, std::process::id());
        let err = std::process::Command::new(&args.command[0]).args(&args.command[1..]).envs(env).exec();
        anyhow::bail!("cannot run {}: {err}", args.command[0].to_string_lossy())
    })
}
