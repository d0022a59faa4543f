//! spoor-align: put every location of a trace on one time base (the spoor-order crate's
//! `align`).

use clap::{CommandFactory, Parser};
use spoor_cli::Output;
use spoor_order::align::{self, AlignOptions, Method};

#[path = "args/align.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    if !(args.gamma > 0.0 && args.gamma <= 1.0) {
        Args::command()
            .error(
                clap::error::ErrorKind::ValueValidation,
                format!("--gamma {}: expected a number in (0, 1]", args.gamma),
            )
            .exit();
    }
    if !(args.max_drift >= 0.0 && args.max_drift.is_finite()) {
        Args::command()
            .error(clap::error::ErrorKind::ValueValidation, "--max-drift: expected a non-negative number")
            .exit();
    }
    spoor_cli::run_stage("spoor-align", args.verbose, || {
        let opts = AlignOptions {
            method: match args.method {
                MethodArg::Auto => Method::Auto,
                MethodArg::Samples => Method::Samples,
                MethodArg::Messages => Method::Messages,
                MethodArg::None => Method::None,
            },
            clc: !args.no_clc,
            reference: args.reference.clone(),
            min_latency: args.min_latency,
            gamma: args.gamma,
            max_drift: args.max_drift * 1e-6,
            block_events: args.block_events,
            force_replay: args.force_replay,
        };
        let spill = spoor_cli::SpillDir::new("spoor-align", args.tmpdir.as_deref());
        let input = spoor_cli::open_input(&args.input, &spill)?;
        let mut out = Output::create(args.output.as_deref())?;
        let console = spoor_cli::Console::new("spoor-align", args.quiet);
        let report = match align::align_with_feedback(&input, &opts, &mut out, &console) {
            Ok(r) => r,
            Err(spoor_order::Error::Usage(m)) => {
                drop(out);
                Args::command().error(clap::error::ErrorKind::ValueValidation, m).exit()
            }
            Err(e) => return Err(e.into()),
        };
        out.commit()?;
        if let Some(path) = &args.report {
            let mut r = Output::create(Some(path))?;
            serde_json::to_writer_pretty(&mut r, &report)?;
            std::io::Write::write_all(&mut r, b"\n")?;
            r.commit()?;
        } else if !args.quiet {
            eprint!("{}", report.to_text());
        }
        Ok(())
    })
}
