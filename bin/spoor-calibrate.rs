//! spoor-calibrate: a communication-cost table (formats/nettable.md) measured on this
//! host, or fitted from a trace's own messages (the spoor-whatif crate).

use clap::Parser;
use spoor_cli::Output;
use spoor_graph::{file, Mode};
use spoor_whatif::calibrate;

const ABOUT: &str = "\
Without --from-trace, ping-pong on this host: the local column over a UNIX socket pair, the
remote column over TCP on loopback, each the median of half the round trips for every message
size (the LBF paper's lookup table). With --from-trace FILE, the median measured transfer time
of the trace's messages per size class (powers of two), local when both ends were on one
machine. spoor-pag, spoor-cp, spoor-gag and spoor-whatif read the result with --net.";

/// Measure or fit a communication-cost table.
#[derive(Parser)]
#[command(name = "spoor-calibrate", version, after_long_help = ABOUT)]
struct Args {
    /// Fit the table from this ordered trace or PAG file instead of measuring.
    #[arg(long, value_name = "FILE")]
    from_trace: Option<String>,
    /// Message sizes in bytes, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Option<Vec<usize>>,
    /// Round trips per size.
    #[arg(long, value_name = "N", default_value_t = 200)]
    reps: usize,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    quiet: bool,
}

fn main() {
    let args = Args::parse();
    spoor_cli::run("spoor-calibrate", || {
        let (rows, comments) = match &args.from_trace {
            Some(f) => {
                let pag = file::load(f, Mode::Cpu, None, args.quiet)?;
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
