//! spoor-gag: the Group Activity Graph of a PAG for a placement of processes on
//! processors: process LBF, with NF under --net (the spoor-whatif crate;
//! formats/placement.md).

use clap::Parser;
use spoor_cli::{Console, Output, SpillDir};
use spoor_graph::show::fmt_ns;
use spoor_graph::{cp, file, CpOptions, Mode};
use spoor_whatif::{
    arrival_note, build_gag, interval, load_network, placement, predict_then, stretch, Costs, Wildcards,
};
use std::io::Write;

#[path = "args/gag.rs"]
mod args;
use args::*;

/// This thread's time on the CPU (Linux: /proc/thread-self/schedstat), for the timing
/// line of --predict.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let args = Args::parse();
    spoor_cli::run_stage("spoor-gag", args.verbose, || {
        let console = Console::new("spoor-gag", args.quiet);
        let spill = SpillDir::new("spoor-gag", args.tmpdir.as_deref());
        let arena = spoor_cli::spill::graph_arena(&args.input, args.memory, &spill)?;
        // The prediction prints the cpu-mode critical path beside it: made while building.
        let (pag, made) = if args.predict {
            file::load_with_distances_in(&args.input, Mode::Cpu, None, &console, arena.as_ref())?
        } else {
            (file::load_in(&args.input, Mode::Cpu, None, &console, arena.as_ref())?, None)
        };
        if let Some(w) = pag.clock_violations().warning() {
            eprintln!("spoor-gag: warning: {w}");
        }
        let stretch = stretch::choose(&pag, args.phase.as_deref(), args.window.as_deref())?;
        if let (Some(note), false) = (&stretch.note, args.quiet) {
            eprintln!("spoor-gag: {note}");
        }
        // What the model could not undo in the recording (formats/pag.md).
        for note in pag.notes.iter().filter(|_| !args.quiet) {
            eprintln!("spoor-gag: note: {note}");
        }
        // The build's distances are the whole graph's.
        let made = made.filter(|_| stretch.window.is_none());
        let pag = stretch::cut(pag, &stretch)?;
        if let (Wildcards::Arrival, false, Some(note)) = (args.wildcards, args.quiet, arrival_note(&pag)) {
            eprintln!("spoor-gag: note: {note}");
        }
        let place = placement::from_args(
            &pag,
            args.place.as_deref(),
            args.place_file.as_deref(),
            args.place_by.as_deref(),
        )?;
        let net = args.net.as_deref().map(|t| load_network(t, args.local, &pag, &console)).transpose()?;
        let costs = Costs {
            net: net.as_ref(),
            waits: args.waits,
            wildcards: args.wildcards,
            sharing: args.sharing,
            ..Costs::default()
        };
        let mut out = Output::create(args.output.as_deref())?;
        // How sure the prediction is: found on another core while it runs.
        let say_interval = |spread: &Result<interval::Spread, interval::NoSpread>, ns: i64| match spread {
            Ok(s) => s.describe(ns, fmt_ns),
            Err(why) => format!("none: {why}"),
        };
        if args.predict {
            let (p, spread, secs, cpu0, cpu1) = std::thread::scope(|scope| {
                // Started once the simulation is set up (when it fails, at once).
                let (go, wait) = std::sync::mpsc::channel::<()>();
                let pag_s = &pag;
                let spread = scope.spawn(move || {
                    let _ = wait.recv();
                    interval::spread(pag_s)
                });
                let (started, cpu0) = (std::time::Instant::now(), thread_cpu_ns());
                let p = predict_then(&pag, &place, &costs, move || drop(go));
                let (secs, cpu1) = (started.elapsed().as_secs_f64(), thread_cpu_ns());
                (p, spread.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), secs, cpu0, cpu1)
            });
            let p = p?;
            if !args.quiet {
                let rate = |s: f64| {
                    spoor_cli::rate(p.events, "events", s).unwrap_or_else(|| "too short to time".to_owned())
                };
                let cpu = match (cpu0, cpu1) {
                    (Some(a), Some(b)) => {
                        let c = b.saturating_sub(a) as f64 / 1e9;
                        format!("; {c:.3} s on the simulating thread's CPU: {}", rate(c))
                    }
                    _ => String::new(),
                };
                eprintln!("spoor-gag: {} events simulated in {secs:.3} s ({}{cpu})", p.events, rate(secs));
            }
            let ideal = cp::length_with(&pag, &CpOptions::default(), made.as_ref());
            writeln!(
                out,
                "predicted time: {} on {} processors ({} processes; cpu-mode critical path {}; {} events, at most {} in flight)",
                fmt_ns(p.time_ns),
                place.groups(),
                place.group_of.len(),
                fmt_ns(ideal),
                p.events,
                p.max_in_flight
            )?;
            writeln!(out, "interval: {}", say_interval(&spread, p.time_ns))?;
        } else {
            let (gag, p) = build_gag(&pag, &place, &costs)?;
            let spread = interval::spread(&pag);
            if args.dump {
                spoor_graph::show::write_dump(&mut out, &gag)?;
            } else {
                file::write(&mut out, &gag)?;
            }
            if !args.quiet {
                eprintln!(
                    "spoor-gag: predicted time {} on {} processors; interval {}",
                    fmt_ns(p.time_ns),
                    place.groups(),
                    say_interval(&spread, p.time_ns)
                );
            }
        }
        out.commit()?;
        Ok(())
    })
}
