//! spoor-calibrate: a communication-cost table (formats/nettable.md) measured on this
//! host or fitted from a trace's own messages, a network model (formats/network.md)
//! fitted from them, or a collective table or a communication-cost table measured with
//! real MPI (the spoor-whatif crate).

use clap::Parser;
use spoor_cli::{usage, Console, Output};
use spoor_graph::{file, Local, Mode};
use spoor_model::Feedback;
use spoor_whatif::{calibrate, collectives, netfit};

#[path = "args/calibrate.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-calibrate", || {
        let console = Console::new("spoor-calibrate", args.quiet);
        let mut out;
        if let Some(f) = &args.from_trace {
            let pag = file::load(f, Mode::Cpu, None, &console)?;
            if let Some(w) = pag.clock_violations().warning() {
                eprintln!("spoor-calibrate: warning: {w}");
            }
            let local = args.local.unwrap_or(Local::Machine);
            let fit = netfit::fit_model(&pag, local);
            let toml = args.output.as_ref().is_some_and(|o| o.extension().is_some_and(|e| e == "toml"));
            let title = format!("fitted by spoor-calibrate --from-trace {f}");
            if args.form.map_or(toml, |form| form == Form::Model) {
                if fit.remote.is_none() && fit.local_line.is_none() {
                    anyhow::bail!("{f}: the trace has no matched messages to fit a model from");
                }
                for w in &fit.warnings {
                    console.warn(w);
                }
                if let Some(c) = fit.contention.as_ref().filter(|c| c.saturated && !args.quiet) {
                    eprintln!("spoor-calibrate: note: {}: links_in = 1, links_out = 1", c.verdict());
                }
                out = Output::create(args.output.as_deref())?;
                fit.write_toml(&mut out, &[title])?;
            } else {
                let (rows, notes) = calibrate::fit_with(&pag, local);
                if rows.is_empty() {
                    anyhow::bail!("{f}: the trace has no matched messages to fit a table from");
                }
                if let Some(c) = fit.contention.as_ref().filter(|c| c.saturated && !args.quiet) {
                    eprintln!(
                        "spoor-calibrate: note: {} (a table cannot say so: --form model writes links)",
                        c.verdict()
                    );
                }
                let mut c = vec![title];
                c.extend(notes);
                c.extend(fit.comments.iter().map(|l| format!("line fit: {l}")));
                out = Output::create(args.output.as_deref())?;
                calibrate::write_table(&mut out, &c, &rows)?;
            }
        } else if args.collectives {
            let procs = args.procs.clone().unwrap_or_else(|| collectives::PROCS.to_vec());
            if procs.is_empty() || procs.contains(&0) {
                return Err(usage("--procs: give process counts of at least 1"));
            }
            let sizes = args.sizes.clone().unwrap_or_else(|| collectives::SIZES.to_vec());
            check_sizes(&sizes)?;
            let m = collectives::measure(&procs, &sizes, args.reps)?;
            let mut c = vec![format!(
                "measured on {} by spoor-calibrate --collectives: the median of {} repetitions, \
                 each the slowest rank's time after a barrier",
                collectives::hostname(),
                args.reps.max(1)
            )];
            if let Some(v) = &m.mpi_version {
                c.push(format!("MPI: {v}"));
            }
            c.push("bytes: the most one process sends or receives in the call (formats/network.md)".into());
            out = Output::create(args.output.as_deref())?;
            collectives::write_table(&mut out, &c, &m.rows)?;
        } else if args.mpi {
            let hosts = match args.hosts.as_deref() {
                None => None,
                Some([a, b]) if !a.trim().is_empty() && !b.trim().is_empty() => Some((a.trim(), b.trim())),
                Some(_) => return Err(usage("--hosts: give two host names, A,B")),
            };
            let sizes = args.sizes.clone().unwrap_or_else(|| calibrate::SIZES.to_vec());
            check_sizes(&sizes)?;
            if sizes.iter().any(|&s| s > i32::MAX as usize) {
                return Err(usage(format!("--sizes: at most {} bytes with --mpi", i32::MAX)));
            }
            let m = calibrate::measure_mpi(&sizes, args.reps, hosts)?;
            let reps = args.reps.max(1);
            let mut c = vec![format!(
                "measured on {} by spoor-calibrate --mpi: MPI_Send/MPI_Recv ping-pong between ranks 0 and 1, \
                 half the median of {reps} round trips after {} warm-ups a size",
                collectives::hostname(),
                m.warmups
            )];
            if let Some(v) = &m.mpi_version {
                c.push(format!("MPI: {v}"));
            }
            let (l0, l1) = &m.local_hosts;
            c.push(format!("local: mpirun -np 2, rank 0 on {l0}, rank 1 on {l1}"));
            match (&m.remote_hosts, hosts) {
                (Some((r0, r1)), Some((a, b))) => {
                    c.push(format!("remote: mpirun -np 2 --host {a},{b}, rank 0 on {r0}, rank 1 on {r1}"));
                    if r0 == r1 {
                        let w = format!("--hosts {a},{b}: both ranks ran on {r0}, so the remote column is not between hosts");
                        console.warn(&w);
                        c.push(format!("warning: {w}"));
                    }
                }
                _ => {
                    let n = "no --hosts: the remote column is the local one, measured on this host";
                    if !args.quiet {
                        eprintln!("spoor-calibrate: note: {n}");
                    }
                    c.push(n.to_owned());
                }
            }
            c.extend(m.notes);
            let connect = match m.connect {
                Some(ns) => format!(
                    "connect: the pair's first round trip took {} more than a later one of {} bytes, \
                     the median of {} runs (the connection; formats/network.md)",
                    spoor_format::text::describe_duration(ns.round() as i64),
                    sizes[0],
                    calibrate::CONNECT_RUNS
                ),
                None => "connect: not measured without --hosts".to_owned(),
            };
            c.push(connect);
            if !args.quiet {
                eprintln!("spoor-calibrate: note: {}", c.last().unwrap());
            }
            let toml = args.output.as_ref().is_some_and(|o| o.extension().is_some_and(|e| e == "toml"));
            if args.form.map_or(toml, |form| form == Form::Model) {
                // The model names its table, written beside it as FILE.csv.
                let model = args.output.as_deref().filter(|o| *o != std::path::Path::new("-"));
                let table = model.map(|m| m.with_extension("csv")).filter(|t| Some(t.as_path()) != model);
                let (Some(model), Some(table)) = (model, table) else {
                    return Err(usage(
                        "--mpi --form model writes its table beside the model: give -o FILE.toml",
                    ));
                };
                let mut t = Output::create(Some(&table))?;
                calibrate::write_table(&mut t, &c, &m.rows)?;
                out = Output::create(Some(model))?;
                calibrate::write_mpi_model(&mut out, &c, &table, m.connect)?;
                t.commit()?;
            } else {
                out = Output::create(args.output.as_deref())?;
                calibrate::write_table(&mut out, &c, &m.rows)?;
            }
        } else {
            let sizes = args.sizes.clone().unwrap_or_else(|| calibrate::SIZES.to_vec());
            check_sizes(&sizes)?;
            let (rows, notes) = calibrate::measure(&sizes, args.reps)?;
            let mut c = vec![
                format!(
                    "measured on {} by spoor-calibrate: half the median round trip of {} ping-pongs",
                    collectives::hostname(),
                    args.reps
                ),
                "local: UNIX socket pair; remote: TCP on loopback".to_owned(),
            ];
            c.extend(notes);
            out = Output::create(args.output.as_deref())?;
            calibrate::write_table(&mut out, &c, &rows)?;
        }
        out.commit()?;
        Ok(())
    })
}

/// Sizes must increase from at least 1 byte.
fn check_sizes(sizes: &[usize]) -> anyhow::Result<()> {
    if sizes.is_empty() || sizes.windows(2).any(|w| w[1] <= w[0]) || sizes[0] == 0 {
        anyhow::bail!("--sizes: give increasing sizes of at least 1 byte");
    }
    Ok(())
}
