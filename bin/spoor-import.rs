//! spoor-import: read another tool's trace (OTF2, Paraver, DUMPI) and write it in spoor's format.

use clap::Parser;
use spoor_cli::Output;
use spoor_format::{TraceWriter, WriterOptions};
use spoor_import::otf2::{ClockMode, Otf2Archive, Otf2Options};
use spoor_import::{dumpi, paraver, Detected};
use spoor_model::{Definitions, Event};
use std::path::Path;

#[path = "args/import.rs"]
mod args;
use args::*;

fn main() {
    spoor_cli::run_stage("spoor-import", false, || {
        let args = Args::parse();
        match spoor_import::detect(&args.input)? {
            Detected::Otf2(anchor) => import_otf2(&args, &anchor),
            Detected::Paraver(prv) => {
                let t = paraver::read_paraver_with(&prv, &paraver::ParaverOptions::default())?;
                write_all(&args, &prv, &t.defs, &t.events, &t.warnings, &t.skipped)
            }
            Detected::Dumpi(meta) => {
                let t = dumpi::read_dumpi_full(&meta)?;
                write_all(&args, &meta, &t.defs, &t.events, &t.warnings, &[])
            }
        }
    })
}

fn import_otf2(args: &Args, anchor: &Path) -> anyhow::Result<()> {
    let clock = match args.clock {
        Clock::Raw => ClockMode::Raw,
        Clock::Corrected => ClockMode::Corrected,
    };
    let archive = Otf2Archive::open_with(anchor, Otf2Options { clock, recv_begin: !args.no_recv_begin })?;
    let mut out = Output::create(args.output.as_deref())?;
    let mut w = TraceWriter::new(&mut out, archive.definitions(), WriterOptions::default())?;
    let n = archive.location_count();
    // Each location decoded and encoded in parallel; blocks written in location order.
    let block_events = w.block_events();
    let summary = archive.for_each_block(block_events, |loc, block| -> anyhow::Result<()> {
        Ok(w.write_encoded(loc, block)?)
    })?;
    let events = w.events_written();
    w.finish()?;
    out.commit()?;
    if !args.quiet {
        eprintln!("spoor-import: {}: {events} events from {n} locations", anchor.display());
        for (what, n) in summary.skipped {
            eprintln!("spoor-import: skipped {n} {what}");
        }
    }
    Ok(())
}

/// Writes a trace read whole, and says what the reader could not convert.
fn write_all(
    args: &Args,
    input: &Path,
    defs: &Definitions,
    events: &[Event],
    warnings: &[String],
    skipped: &[(u64, String)],
) -> anyhow::Result<()> {
    let mut out = Output::create(args.output.as_deref())?;
    let mut w = TraceWriter::new(&mut out, defs, WriterOptions::default())?;
    for e in events {
        w.write(e)?;
    }
    w.finish()?;
    out.commit()?;
    if !args.quiet {
        eprintln!(
            "spoor-import: {}: {} events from {} locations",
            input.display(),
            events.len(),
            defs.locations.len()
        );
        for warning in warnings {
            eprintln!("spoor-import: {}: {warning}", input.display());
        }
        for (n, what) in skipped {
            eprintln!("spoor-import: skipped {n} {what}");
        }
    }
    Ok(())
}
