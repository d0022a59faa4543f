//! spoor-calibrate: a communication-cost table (formats/nettable.md) measured on this
//! host, or fitted from a trace's own messages (the spoor-whatif crate).

use clap::Parser;
use spoor_cli::{Console, Output};
use spoor_graph::{file, Mode};
use spoor_whatif::calibrate;

#[path = "args/calibrate.rs"]
mod args;
use args::*;

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-calibrate", || {
        let (rows, comments) = match &args.from_trace {
            Some(f) => {
                let pag = file::load(f, Mode::Cpu, None, &Console::new("spoor-calibrate", args.quiet))?;
                if let Some(w) = pag.clock_violations().warning() {
                    eprintln!("spoor-calibrate: warning: {w}");
                }
                let (rows, notes) = calibrate::fit(&pag);
                if rows.is_empty() {
                    anyhow::bail!("{f}: the trace has no matched messages to fit a table from");
                }
                let mut c = vec![format!("fitted by spoor-calibrate --from-trace {f}")];
                c.extend(notes);
                (rows, c)
            }
            None => {
                let sizes = args.sizes.clone().unwrap_or_else(|| calibrate::SIZES.to_vec());
                if sizes.is_empty() || sizes.windows(2).any(|w| w[1] <= w[0]) || sizes[0] == 0 {
                    anyhow::bail!("--sizes: give increasing sizes of at least 1 byte");
                }
                let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
                let (rows, notes) = calibrate::measure(&sizes, args.reps)?;
                let mut c = vec![
                    format!(
                        "measured on {} by spoor-calibrate: half the median round trip of {} ping-pongs",
                        host.trim(),
                        args.reps
                    ),
                    "local: UNIX socket pair; remote: TCP on loopback".to_owned(),
                ];
                c.extend(notes);
                (rows, c)
            }
        };
        let mut out = Output::create(args.output.as_deref())?;
        calibrate::write_table(&mut out, &comments, &rows)?;
        out.commit()?;
        Ok(())
    })
}
