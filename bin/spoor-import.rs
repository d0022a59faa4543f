//! spoor-import: read another tool's trace (OTF2, Paraver, DUMPI) and write it in spoor's format.

use anyhow::{bail, Context};
use clap::Parser;
use spoor_cli::Output;
use spoor_format::{TraceWriter, WriterOptions};
use spoor_import::otf2::{ClockMode, Otf2Archive, Otf2Options};
use spoor_import::{dumpi, paraver};
use spoor_model::{Definitions, Event};
use std::path::{Path, PathBuf};

#[path = "args/import.rs"]
mod args;
use args::*;

/// What the input is, told from its content.
enum Source {
    Otf2(PathBuf),
    Paraver(PathBuf),
    Dumpi(PathBuf),
}

fn detect(path: &Path) -> anyhow::Result<Source> {
    if path.is_dir() {
        let anchor = path.join("traces.otf2");
        if anchor.is_file() {
            return Ok(Source::Otf2(anchor));
        }
        let found = |ends: &[&str]| -> anyhow::Result<Vec<PathBuf>> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("{}: cannot list", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_str().is_some_and(|s| ends.iter().any(|e| s.ends_with(e))))
                .collect();
            v.sort();
            Ok(v)
        };
        let (metas, prvs) = (found(&[".meta"])?, found(&[".prv", ".prv.gz"])?);
        return match (metas.as_slice(), prvs.as_slice()) {
            ([meta], []) => Ok(Source::Dumpi(meta.clone())),
            ([], [prv]) => Ok(Source::Paraver(prv.clone())),
            ([], []) => bail!(
                "{}: a directory without traces.otf2, a .prv or a DUMPI .meta: expected a trace",
                path.display()
            ),
            _ => bail!("{}: holds several traces: name the one to import", path.display()),
        };
    }
    let mut head = vec![0u8; 512];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .with_context(|| format!("{}: cannot read", path.display()))?;
    head.truncate(n);
    if paraver::looks_like(&head) {
        return Ok(Source::Paraver(path.to_owned()));
    }
    if dumpi::looks_like(&head) {
        if path.extension().is_some_and(|e| e == "bin") {
            bail!("{}: a DUMPI rank file: import the trace's .meta file instead", path.display());
        }
        return Ok(Source::Dumpi(path.to_owned()));
    }
    // An OTF2 anchor is an OTF2 binary file; the archive reader checks its content.
    if path.extension().is_some_and(|e| e == "otf2") {
        return Ok(Source::Otf2(path.to_owned()));
    }
    bail!(
        "{}: not a trace spoor-import reads (expected an OTF2 anchor *.otf2, a Paraver .prv, or a DUMPI .meta)",
        path.display()
    )
}

fn main() {
    spoor_cli::run("spoor-import", || {
        let args = Args::parse();
        match detect(&args.input)? {
            Source::Otf2(anchor) => import_otf2(&args, &anchor),
            Source::Paraver(prv) => {
                let t = paraver::read_paraver_with(&prv, &paraver::ParaverOptions::default())?;
                write_all(&args, &prv, &t.defs, &t.events, &t.warnings, &t.skipped)
            }
            Source::Dumpi(meta) => {
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
