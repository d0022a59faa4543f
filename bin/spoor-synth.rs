//! spoor-synth: synthetic workload traces with known answers (the spoor-synth crate).

use anyhow::Context;
use clap::{CommandFactory, Parser};
use spoor_cli::{Output, Progress};
use spoor_format::{text, EventSink, TraceWriter, WriterOptions};
use spoor_model::{Definitions, Event};
use spoor_synth::{ExtraWork, SlowLink, Spec, SpecError};
use std::io::{self, Write};

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
}

impl<W: Write> EventSink for WriteSink<'_, W> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        self.progress.add(1);
        match &mut self.out {
            Form::Binary(w) => w.write(&ev),
            Form::Text(out, defs) => text::write_event(out, defs, &ev),
        }
    }
}

fn main() {
    let args = Args::parse();
    let spec = args
        .spec()
        .unwrap_or_else(|e| Args::command().error(clap::error::ErrorKind::ValueValidation, e).exit());
    spoor_cli::run("spoor-synth", || {
        let defs = spoor_synth::definitions(&spec);
        let mut out = Output::create(args.output.as_deref())?;
        let progress = Progress::new("events", Some(spec.event_count()));
        let form = if args.text {
            text::write_header(&mut out)?;
            text::write_definitions(&mut out, &defs)?;
            Form::Text(&mut out, &defs)
        } else {
            let opts = WriterOptions {
                block_events: args.block_events.max(1),
                index: !args.no_index,
                ..WriterOptions::default()
            };
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
