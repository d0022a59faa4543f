//! spoor-synth: synthetic workload traces with known answers (the spoor-synth crate).

use anyhow::Context;
use clap::{CommandFactory, Parser};
use spoor_cli::{Output, Progress};
use spoor_format::{text, EventSink, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event};
use spoor_synth::{ExtraWork, SlowLink, Spec, SpecError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[path = "args/synth.rs"]
mod args;
use args::*;

impl Args {
    fn spec(&self) -> Result<Spec, SpecError> {
        let mut spec = Spec {
            workload: self.workload.0,
            procs: self.procs,
            steps: self.steps,
            compute_ns: self.compute,
            imbalance: self.imbalance,
            bytes: self.bytes,
            seed: self.seed,
            apps: self.apps,
            machines: self.machines,
            latency_ns: self.latency,
            bandwidth: self.bandwidth,
            call_ns: self.call_cost,
            kernels: self.kernels,
            extra: self.extra_work.iter().map(|x| ExtraWork::parse(x)).collect::<Result<_, _>>()?,
            serial_ns: self.serialize,
            hot_lock_ns: self.hot_lock,
            slow_link: self.slow_link.as_deref().map(SlowLink::parse).transpose()?,
            clock_offset_ns: self.clock_offset,
            clock_drift_ppm: self.clock_drift,
        };
        if let Some(n) = self.events {
            spec.steps = spec.steps_for_events(n);
        }
        spec.validate()?;
        Ok(spec)
    }
}

/// Writes each event in the chosen form and counts it on the progress bar.
struct WriteSink<'a, W: Write> {
    out: Form<'a, W>,
    progress: &'a Progress,
}

enum Form<'a, W: Write> {
    Binary(TraceWriter<W>),
    Text(W, &'a Definitions),
    /// A trace per process (`--split`), indexed by process; each location's process.
    Split(Vec<TraceWriter<Output>>, Vec<u32>),
}

impl<W: Write> EventSink for WriteSink<'_, W> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        self.progress.add(1);
        match &mut self.out {
            Form::Binary(w) => w.write(&ev),
            Form::Text(out, defs) => text::write_event(out, defs, &ev),
            Form::Split(writers, process_of) => writers[process_of[ev.loc as usize] as usize].write(&ev),
        }
    }
}

/// The per-process traces of `--split` in `dir`, named as spoor-record names a run's
/// (application and rank), each still a temporary file until committed.
fn split_writers(
    dir: &Path,
    defs: &Definitions,
    opts: &WriterOptions,
) -> anyhow::Result<Vec<(PathBuf, TraceWriter<Output>)>> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot make the directory", dir.display()))?;
    defs.processes
        .iter()
        .map(|p| {
            let app = defs.strings.name(defs.apps[p.app as usize].name);
            let path = dir.join(format!("{}.{}.spoor", spoor_record::file_safe(&app), p.rank));
            // A small buffer each: a run of thousands of processes has as many files open.
            let out = Output::create_with_capacity(Some(&path), 1 << 16)?;
            let w = TraceWriter::new(out, defs, opts.clone())
                .with_context(|| format!("{}: writing the trace", path.display()))?;
            Ok((path, w))
        })
        .collect()
}

fn main() {
    let args = Args::parse();
    let spec = args
        .spec()
        .unwrap_or_else(|e| Args::command().error(clap::error::ErrorKind::ValueValidation, e).exit());
    spoor_cli::run_stage("spoor-synth", false, || {
        let defs = spoor_synth::definitions(&spec);
        let progress = Progress::new("events", Some(spec.event_count()));
        let opts = WriterOptions {
            block_events: args.block_events.max(1),
            index: !args.no_index,
            ..WriterOptions::default()
        };
        if let Some(dir) = &args.split {
            let (paths, writers): (Vec<PathBuf>, Vec<_>) =
                split_writers(dir, &defs, &opts)?.into_iter().unzip();
            let process_of = defs.locations.iter().map(|l| l.process).collect();
            let mut sink =
                WriteSink { out: Form::<io::Sink>::Split(writers, process_of), progress: &progress };
            spoor_synth::generate(&spec, &mut sink).context("writing the traces")?;
            let Form::Split(writers, _) = sink.out else { unreachable!("the sink was made split") };
            // Finished first, renamed after: a failure leaves no file behind, and a signal
            // while they are renamed removes those already renamed (the guard holds them
            // until the last is), so that no part of the set is left.
            let held: Vec<_> = paths.iter().map(|p| spoor_cli::guard::temporary(p)).collect();
            let outs = writers
                .into_iter()
                .zip(&paths)
                .map(|(w, p)| w.finish().with_context(|| format!("{}: writing the trace", p.display())))
                .collect::<anyhow::Result<Vec<Output>>>()?;
            for (k, out) in outs.into_iter().enumerate() {
                if let Err(e) = out.commit() {
                    for p in &paths[..k] {
                        let _ = std::fs::remove_file(p);
                    }
                    return Err(e);
                }
            }
            drop(held);
            progress.finish();
            return Ok(());
        }
        let mut out = Output::create(args.output.as_deref())?;
        let form = if args.text {
            text::write_header(&mut out)?;
            text::write_definitions(&mut out, &defs)?;
            Form::Text(&mut out, &defs)
        } else {
            Form::Binary(TraceWriter::new(&mut out, &defs, opts).context("writing the trace")?)
        };
        let mut sink = WriteSink { out: form, progress: &progress };
        spoor_synth::generate(&spec, &mut sink).context("writing the trace")?;
        if let Form::Binary(w) = sink.out {
            w.finish().context("writing the trace")?;
        }
        progress.finish();
        out.commit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoor_synth::Workload;

    #[test]
    fn defaults_match_the_library() {
        for w in Workload::ALL {
            let args = Args::try_parse_from(["spoor-synth", w.name()]).unwrap();
            assert_eq!(args.spec().unwrap(), Spec::new(w));
        }
    }

    #[test]
    fn cli_is_consistent() {
        Args::command().debug_assert();
    }
}
