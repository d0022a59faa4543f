//! The command line of spoor-exp, shared with `spoor man` and `spoor completions`.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub const ABOUT: &str = "\
The program space of runs (formats/exp.md), after Karavanic's experiment management: each
run is kept in one SQLite file (--db, else $SPOOR_DB, else spoor.db) with the attributes the
user gives and the trace knows, and what was derived from its trace once: resource
hierarchies, metrics per focus, the critical-path profile, wait-state totals and the
diagnosis's search. Runs are named by id, or as a set by a query over their attributes
(`procs >= 8 and version = \"2\"`: medians over the set). The store is readable with sqlite3
and pandas; several processes may add at once.";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// Aligned tables.
    Text,
    /// Each table after a `# NAME` line.
    Csv,
    /// The tables as JSON.
    Json,
}

pub const EXAMPLES: &str = "\
Examples:
  spoor-exp add run.o --attr version=2 --attr input=big
  spoor-exp list --where 'version=2 and procs=64'
  spoor-exp diff 3 4 --threshold 5%                  what changed from run 3 to run 4
  spoor-exp diff version=1 version=2                 medians of each set
  spoor-exp structure 3 4                            shared resources, and a map if only names differ
  spoor-exp scaling --where program=epoch            speedup and the POP factors
  spoor-exp directives 3 4 -o app.dirs               then: spoor-diagnose --directives app.dirs new.o
  spoor-exp check 3 5 --max-regression 5%            exit 1 when run 5 regressed";

const ADD_EXAMPLES: &str = "\
Examples:
  spoor-exp add run.o --attr version=2 --attr flags=-O3
  spoor-exp --db runs.db add -q v1.o v2.o --attr input=big
  spoor-exp add run.o --again                        the same content once more";

const LIST_EXAMPLES: &str = "\
Examples:
  spoor-exp list
  spoor-exp list --where 'version=2 and not machine=node1' -f csv
  spoor-exp list --where 'flags like \"%O3%\"' -f json";

const SHOW_EXAMPLES: &str = "\
Examples:
  spoor-exp show 3
  spoor-exp show 3 -f json";

const RM_EXAMPLES: &str = "\
Examples:
  spoor-exp rm 3
  spoor-exp rm 3 4 5";

const STRUCTURE_EXAMPLES: &str = "\
Examples:
  spoor-exp structure 3 4
  spoor-exp structure version=1 version=2 --map renames.txt";

const DIFF_EXAMPLES: &str = "\
Examples:
  spoor-exp diff 3 4 --threshold 10%
  spoor-exp diff version=1 version=2 --metric cp --metric wait
  spoor-exp diff 3 4 --map renames.txt -f csv";

const SCALING_EXAMPLES: &str = "\
Examples:
  spoor-exp scaling --where program=epoch
  spoor-exp scaling --where 'version=2 and machine=cluster' -f csv";

const DIRECTIVES_EXAMPLES: &str = "\
Examples:
  spoor-exp directives 3 -o app.dirs
  spoor-exp directives version=2 --no-prune -o app.dirs";

const CHECK_EXAMPLES: &str = "\
Examples:
  spoor-exp check 3 5
  spoor-exp check version=1 version=2 --max-regression 2%";

/// The program space of runs: kept, compared, scaled, put to work.
#[derive(Parser)]
#[command(name = "spoor-exp", version, after_help = EXAMPLES, after_long_help = format!("{ABOUT}\n\n{EXAMPLES}"))]
pub struct Args {
    /// The store (a SQLite file, created when missing); default $SPOOR_DB, else spoor.db.
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// Output form.
    #[arg(short, long, global = true, value_enum, default_value = "text")]
    pub format: Format,
    /// Write here instead of standard output (replaced only when complete).
    #[arg(short, long, global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress on standard error.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Verb,
}

#[derive(Subcommand)]
pub enum Verb {
    /// Record runs: each ordered trace (spoor-order's output) with its attributes and what is
    /// derived from it once.
    #[command(after_help = ADD_EXAMPLES)]
    Add {
        /// Ordered traces (files).
        #[arg(required = true, value_name = "TRACE")]
        traces: Vec<PathBuf>,
        /// An attribute of the run (repeatable): version=2, input=big, flags=-O3.
        #[arg(long = "attr", value_name = "KEY=VALUE")]
        attrs: Vec<String>,
        /// Add a trace whose content a stored run already has.
        #[arg(long)]
        again: bool,
        /// Where the wait states of a trace too large for memory (about 24 bytes an
        /// event past half of what this machine has available) are kept while the run
        /// is derived, in a directory of its own removed at the end [default: $TMPDIR,
        /// else /tmp].
        #[arg(long, value_name = "DIR")]
        tmpdir: Option<PathBuf>,
    },
    /// The runs, a row each.
    #[command(after_help = LIST_EXAMPLES)]
    List {
        /// Only the runs this query selects.
        #[arg(long = "where", value_name = "QUERY")]
        query: Option<String>,
    },
    /// One run: its attributes, bottlenecks and the program's metrics; says when its trace
    /// moved or changed since it was added.
    #[command(after_help = SHOW_EXAMPLES)]
    Show {
        /// The run's id.
        run: i64,
    },
    /// Remove runs and all derived from them.
    #[command(after_help = RM_EXAMPLES)]
    Rm {
        /// Run ids.
        #[arg(required = true)]
        runs: Vec<i64>,
    },
    /// Structural merge and difference: the resources A and B share and those only one has;
    /// a mapping when they differ only by names.
    #[command(after_help = STRUCTURE_EXAMPLES)]
    Structure {
        /// A run id or a query (its runs merged).
        a: String,
        /// A run id or a query.
        b: String,
        /// Map A's resource names onto B's (formats/exp.md, "Mapping").
        #[arg(long, value_name = "FILE")]
        map: Option<PathBuf>,
    },
    /// The performance difference operator: the foci whose metrics differ by more than the
    /// threshold, largest first.
    #[command(after_help = DIFF_EXAMPLES)]
    Diff {
        /// A run id or a query (medians over its runs).
        a: String,
        /// A run id or a query.
        b: String,
        /// The smallest change listed, of A's value: 5% or 0.05.
        #[arg(long, default_value = "5%")]
        threshold: String,
        /// The smallest change listed, of the program's value of the metric.
        #[arg(long, default_value = "0.5%")]
        min_share: String,
        /// Only these metrics (repeatable): time, cpu, cp, waits.late_sender, ...
        #[arg(long = "metric", value_name = "METRIC")]
        metrics: Vec<String>,
        /// Map A's resource names onto B's.
        #[arg(long, value_name = "FILE")]
        map: Option<PathBuf>,
    },
    /// Speedup and the POP model's factors over runs at several process counts.
    #[command(after_help = SCALING_EXAMPLES)]
    Scaling {
        /// The runs (of one program).
        #[arg(long = "where", value_name = "QUERY")]
        query: Option<String>,
    },
    /// Search directives for spoor-diagnose from what the runs' searches found.
    #[command(after_help = DIRECTIVES_EXAMPLES)]
    Directives {
        /// Run ids or queries.
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<String>,
        /// Never prune: pairs false in every run get priority low instead.
        #[arg(long)]
        no_prune: bool,
        /// A hypothesis's threshold is this share of the smallest value it was true with
        /// (written only when above its threshold then).
        #[arg(long, default_value_t = 0.8)]
        margin: f64,
    },
    /// The regression gate: exit 1 when NEW's elapsed time, critical path or waits grew
    /// beyond the limit against BASELINE, naming the foci that did.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        /// A run id or a query.
        baseline: String,
        /// A run id or a query.
        new: String,
        /// The largest growth allowed: 5% or 0.05.
        #[arg(long, default_value = "5%")]
        max_regression: String,
        /// Map BASELINE's resource names onto NEW's.
        #[arg(long, value_name = "FILE")]
        map: Option<PathBuf>,
    },
}
