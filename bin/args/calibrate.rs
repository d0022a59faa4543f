//! The command line of spoor-calibrate, shared with `spoor man` and `spoor completions`.

use clap::Parser;

pub const ABOUT: &str = "\
Without --from-trace, ping-pong on this host: the local column over a UNIX socket pair, the
remote column over TCP on loopback, each the median of half the round trips for every message
size (the LBF paper's lookup table). With --from-trace FILE, the median measured transfer time
of the trace's messages per size class (powers of two), local when both ends were on one
machine. spoor-pag, spoor-cp, spoor-gag and spoor-whatif read the result with --net.";

pub const EXAMPLES: &str = "\
Examples:
  spoor-calibrate -o host.csv                       ping-pong on this host
  spoor-calibrate --sizes 64,4096,65536 --reps 500 -o host.csv
  spoor-calibrate --from-trace run.o -o fitted.csv  fitted from the trace's messages
  spoor-gag --predict --place-by block:2 --net host.csv run.o";

/// Measure or fit a communication-cost table.
#[derive(Parser)]
#[command(name = "spoor-calibrate", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// Fit the table from this ordered trace or PAG file instead of measuring.
    #[arg(long, value_name = "FILE")]
    pub from_trace: Option<String>,
    /// Message sizes in bytes, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
    /// Round trips per size.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub reps: usize,
    /// Write to this file (complete or not at all) instead of standard output.
    #[arg(short, long)]
    pub output: Option<std::path::PathBuf>,
    /// Say nothing on standard error unless something is wrong.
    #[arg(short, long)]
    pub quiet: bool,
}
