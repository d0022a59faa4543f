//! spoor-order: match messages, group collectives, link lock hand-offs and spawns, and
//! write the trace in a causally consistent total order (the spoor-order crate's `order`).

use clap::Parser;
use spoor_cli::{ordering, Console, Output};
use spoor_order::order::{self, OrderOptions, Sink};
use std::io::Write;

#[path = "args/order.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    spoor_cli::run_stage("spoor-order", args.verbose, || {
        let spill = spoor_cli::SpillDir::new("spoor-order", args.tmpdir.as_deref());
        let input = ordering::open_traces("spoor-order", &args.inputs, &spill, args.quiet)?;
        if args.check {
            let s = order::check(&input)?;
            let mut out = Output::create(args.output.as_deref())?;
            match args.format {
                Format::Json => writeln!(out, "{}", s.to_json())?,
                Format::Text => {
                    for p in &s.problems {
                        writeln!(out, "{}", p.describe(&s.defs))?;
                    }
                    writeln!(
                        out,
                        "{} events; {} messages, {} collectives, {} lock hand-offs, {} spawns matched; {}",
                        s.events,
                        s.messages,
                        s.collectives,
                        s.handoffs,
                        s.spawns,
                        if s.problems.is_empty() {
                            "no problems".to_owned()
                        } else {
                            ordering::problem_counts(&s)
                        }
                    )?;
                }
            }
            out.commit()?;
            ordering::warn_clocks("spoor-order", &s);
            if s.error_count() > 0 {
                std::process::exit(spoor_cli::exit::BAD_INPUT);
            }
            return Ok(());
        }
        let mut out = Output::create(args.output.as_deref())?;
        let opts = OrderOptions { block_events: args.block_events.max(1) };
        let console = Console::new("spoor-order", args.quiet);
        let prepared = ordering::prepare(&input, args.align, &spill, &console, args.quiet)?;
        let s = prepared.order(Sink::Trace(&mut out, &opts), &console)?;
        out.commit()?;
        ordering::warn_ordered("spoor-order", &s, input.name(), &console);
        ordering::warn_clocks("spoor-order", &s);
        Ok(())
    })
}
