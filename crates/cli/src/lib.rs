//! Plumbing shared by the binaries in bin/: exit codes (design.md, "Conventions"),
//! output written to a temporary file and renamed, quiet exit on a closed pipe, and
//! the progress bars and warnings of the libraries' work ([`Console`]).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub mod guard;
pub mod ordering;
pub mod spill;

pub use spill::{open_input, read_from, spool_if_stream, SpillDir};

/// An error said again in other words, keeping the exit code it had.
#[derive(Debug)]
pub(crate) struct Reworded {
    pub(crate) message: String,
    pub(crate) code: i32,
}

impl std::fmt::Display for Reworded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Reworded {}

/// Exit codes of every spoor command; [`exit_code`] is the one place an error gets its code.
pub mod exit {
    /// Success, and a closed pipe downstream.
    pub const OK: i32 = 0;
    /// Bad input, or an analysis that failed.
    pub const BAD_INPUT: i32 = 1;
    /// The command line or the options do not fit.
    pub const USAGE: i32 = 2;
    /// A trace of a format version this build does not read.
    pub const VERSION: i32 = 3;
}

/// Runs a command's body and exits with the code its outcome calls for. The message
/// goes to standard error prefixed with the command's name. A closed pipe downstream
/// (EPIPE) ends the command quietly with success, as `head` expects.
pub fn run(command: &str, body: impl FnOnce() -> anyhow::Result<()>) -> ! {
    show_notes(command);
    let code = match body() {
        Ok(()) => exit::OK,
        Err(e) if is_broken_pipe(&e) => exit::OK,
        Err(e) => {
            eprintln!("{command}: {e:#}");
            exit_code(&e)
        }
    };
    std::process::exit(code)
}

/// The notes readers give about their inputs (a trace cut short, read up to its last
/// whole chunk) go to standard error, each once (a stage that reads its input twice
/// meets the same cut twice), `--quiet` or not: they say what the results leave out.
fn show_notes(command: &str) {
    let command = command.to_owned();
    let shown = std::sync::Mutex::new(std::collections::HashSet::new());
    spoor_format::notes::set_sink(move |message| {
        let mut shown = shown.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if shown.insert(message.to_owned()) {
            let line = || eprintln!("{command}: note: {message}");
            match active_bar() {
                Some(bar) => bar.suspend(line),
                None => line(),
            }
        }
    });
}

/// The progress bar on the screen, if any: lines written meanwhile take it off first.
static ACTIVE_BAR: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);

fn active_bar() -> Option<indicatif::ProgressBar> {
    ACTIVE_BAR.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

fn set_active_bar(bar: Option<indicatif::ProgressBar>) {
    *ACTIVE_BAR.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = bar;
}

/// [`run`] for a stage of the pipeline: with `verbose` (`-v`), a successful run ends
/// with a line of its peak resident memory on standard error.
/// Its temporary files are removed whatever stops it, and memory about to run out stops
/// it with the figures ([`guard`]).
pub fn run_stage(command: &'static str, verbose: bool, body: impl FnOnce() -> anyhow::Result<()>) -> ! {
    guard::install(command);
    run(command, || {
        body()?;
        if verbose {
            eprintln!("{command}: {}", peak_memory_line(peak_memory(), spill::spilled()));
        }
        Ok(())
    })
}

/// The memory a stage lets a whole graph take before it finds its critical path without
/// one (`spoor_graph::streamed::path_graph`): half of what it has in hand
/// (`guard::memory_in_hand`), all of it where the system does not say.
pub fn graph_budget() -> u64 {
    guard::memory_in_hand().map_or(u64::MAX, |m| m / 2)
}

/// `--memory SIZE`: bytes as `SPOOR_MEMORY_LIMIT` takes them, or 0 (never keep the graph).
pub fn memory_arg(s: &str) -> Result<u64, String> {
    match s.trim() {
        "0" => Ok(0),
        _ => {
            guard::parse_bytes(s).ok_or_else(|| format!("`{s}`: expected bytes, or a number with K, M or G"))
        }
    }
}

/// The process's peak resident memory, bytes (Linux: `VmHWM` in /proc/self/status).
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// `-v`'s closing line: the peak resident memory (said unknown where the system does not
/// tell it), and the disk the stage used to spare memory (what it wrote to files, and its
/// mapped files at their largest, room reserved ahead of writes included), and where.
pub fn peak_memory_line(peak: Option<u64>, (spilled, dir): (u64, Option<PathBuf>)) -> String {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    let peak = peak.map_or_else(|| "unknown (no /proc/self/status)".to_owned(), mib);
    match dir {
        Some(dir) => {
            format!("peak resident memory {peak}; {} of disk used in {}", mib(spilled), dir.display())
        }
        None => format!("peak resident memory {peak}; no disk used"),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<spoor_order::Error>().is_some_and(spoor_order::Error::is_broken_pipe)
    })
}

/// A command's usage error found after its arguments parsed (an option that does not
/// fit the input): [`exit_code`] gives it [`exit::USAGE`].
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A [`UsageError`] as the commands' error type.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// The exit code for an error: [`exit::VERSION`] for a trace of an unsupported version,
/// [`exit::USAGE`] for options that do not fit the inputs, [`exit::BAD_INPUT`] for
/// everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if let Some(r) = e.downcast_ref::<Reworded>() {
        return r.code;
    }
    let of_format = |f: &spoor_format::Error| match f.kind {
        spoor_format::ErrorKind::Version => exit::VERSION,
        _ => exit::BAD_INPUT,
    };
    for c in e.chain() {
        if c.is::<UsageError>() {
            return exit::USAGE;
        }
        if let Some(f) = c.downcast_ref::<spoor_format::Error>() {
            return of_format(f);
        }
        if let Some(o) = c.downcast_ref::<spoor_order::Error>() {
            return match o {
                spoor_order::Error::Format(f) => of_format(f),
                spoor_order::Error::Usage(_) => exit::USAGE,
                _ => exit::BAD_INPUT,
            };
        }
        // spoor-cp's and the what-if commands' options that name what the trace lacks.
        if let Some(g) = c.downcast_ref::<spoor_graph::Error>() {
            return match g {
                spoor_graph::Error::Format(f) => of_format(f),
                spoor_graph::Error::Usage(_) => exit::USAGE,
                _ => exit::BAD_INPUT,
            };
        }
    }
    exit::BAD_INPUT
}

/// Where a command writes: standard output, or a file that appears under its
/// name only once complete (written to a temporary file beside it, then renamed).
/// A path that names something other than a regular file (`/dev/null`, a FIFO, a
/// terminal) is written to directly: renaming over it would replace it.
pub struct Output {
    target: Option<PathBuf>,
    inner: OutputInner,
}

enum OutputInner {
    Stdout(io::BufWriter<io::StdoutLock<'static>>),
    /// The file, and its registration with the guard until it is renamed into place.
    File(io::BufWriter<tempfile::NamedTempFile>, guard::Temporary),
    Direct(io::BufWriter<std::fs::File>),
}

impl Output {
    /// `None` or `-` for standard output.
    pub fn create(path: Option<&Path>) -> anyhow::Result<Output> {
        Self::create_with_capacity(path, 1 << 20)
    }

    /// As [`Output::create`], buffering `capacity` bytes (for many outputs at once).
    pub fn create_with_capacity(path: Option<&Path>, capacity: usize) -> anyhow::Result<Output> {
        match path {
            None => Ok(Self::stdout()),
            Some(p) if p == Path::new("-") => Ok(Self::stdout()),
            Some(p) if std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .map_err(|e| anyhow::anyhow!("{}: cannot open the output: {e}", p.display()))?;
                Ok(Output {
                    target: None,
                    inner: OutputInner::Direct(io::BufWriter::with_capacity(capacity, f)),
                })
            }
            Some(p) => {
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                // 0o666 before the umask, as for any file a command creates.
                use std::os::unix::fs::PermissionsExt;
                let tmp = tempfile::Builder::new()
                    .prefix(".spoor-partial-")
                    .permissions(std::fs::Permissions::from_mode(0o666))
                    .tempfile_in(dir)
                    .map_err(|e| anyhow::anyhow!("{}: cannot create the output file: {e}", p.display()))?;
                let registered = guard::temporary(tmp.path());
                Ok(Output {
                    target: Some(p.to_owned()),
                    inner: OutputInner::File(io::BufWriter::with_capacity(capacity, tmp), registered),
                })
            }
        }
    }

    fn stdout() -> Output {
        Output {
            target: None,
            inner: OutputInner::Stdout(io::BufWriter::with_capacity(1 << 20, io::stdout().lock())),
        }
    }

    /// Flushes, and renames a file output into place. Dropping an `Output` without
    /// committing removes the temporary file.
    pub fn commit(self) -> anyhow::Result<()> {
        match self.inner {
            OutputInner::Stdout(mut w) => Ok(w.flush()?),
            OutputInner::Direct(mut w) => Ok(w.flush()?),
            OutputInner::File(w, _registered) => {
                let target = self.target.expect("file output has a target");
                let tmp =
                    w.into_inner().map_err(|e| anyhow::anyhow!("{}: {}", target.display(), e.error()))?;
                tmp.as_file().sync_all().ok();
                tmp.persist(&target).map_err(|e| {
                    anyhow::anyhow!("{}: cannot rename into place: {}", target.display(), e.error)
                })?;
                Ok(())
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write(buf),
            OutputInner::File(w, _) => w.write(buf),
            OutputInner::Direct(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.write_all(buf),
            OutputInner::File(w, _) => w.write_all(buf),
            OutputInner::Direct(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            OutputInner::Stdout(w) => w.flush(),
            OutputInner::File(w, _) => w.flush(),
            OutputInner::Direct(w) => w.flush(),
        }
    }
}

/// The shortest time a rate is given for: below it, clock granularity and start-up
/// costs make the quotient meaningless (a 0 ns reading would give any rate at all).
pub const SHORTEST_TIMED_SECS: f64 = 1e-3;

/// `N unit/s` with three significant figures and a prefix (k, M, G), or `None` when
/// `secs` is too short to time.
pub fn rate(count: u64, unit: &str, secs: f64) -> Option<String> {
    if secs.is_nan() || secs < SHORTEST_TIMED_SECS {
        return None;
    }
    let r = count as f64 / secs;
    let (v, prefix) = match r {
        r if r >= 1e9 => (r / 1e9, "G "),
        r if r >= 1e6 => (r / 1e6, "M "),
        r if r >= 1e3 => (r / 1e3, "k "),
        r => (r, ""),
    };
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    Some(format!("{v:.decimals$} {prefix}{unit}/s"))
}

/// A progress bar on standard error for long work, shown only when standard error is
/// a terminal (never in pipelines' logs or batch jobs' output files).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    done: std::cell::Cell<u64>,
    drawn: std::cell::Cell<u64>,
}

impl Progress {
    /// Counts `unit`s towards `total` when it is known; `PHASE: UNIT` names the phase of
    /// a stage's work before its bar (`reading`, then `writing`).
    pub fn new(unit: &str, total: Option<u64>) -> Progress {
        use std::io::IsTerminal;
        let (phase, unit) = unit.split_once(": ").map_or(("", unit), |(p, u)| (p, u));
        let phase = if phase.is_empty() { String::new() } else { format!("{phase} ") };
        let bar = io::stderr().is_terminal().then(|| {
            // The rate as the commands' closing lines give it: three figures.
            let unit_rate = unit.to_owned();
            let style = |template: String| {
                indicatif::ProgressStyle::with_template(&template).expect("a valid template").with_key(
                    "rate",
                    move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let r = rate(s.pos(), &unit_rate, s.elapsed().as_secs_f64());
                        let _ = w.write_str(r.as_deref().unwrap_or("starting"));
                    },
                )
            };
            let bar = match total {
                Some(n) => indicatif::ProgressBar::new(n).with_style(style(format!(
                    "{phase}{{bar:40}} {{human_pos}}/{{human_len}} {unit} ({{rate}}, {{elapsed}} so far, {{eta}} left)"
                ))),
                None => indicatif::ProgressBar::new_spinner()
                    .with_style(style(format!("{phase}{{spinner}} {{human_pos}} {unit} ({{rate}}, {{elapsed}})"))),
            };
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
            set_active_bar(Some(bar.clone()));
            bar
        });
        Progress { bar, done: std::cell::Cell::new(0), drawn: std::cell::Cell::new(0) }
    }

    /// Adds `n`; cheap enough to call once per event.
    #[inline]
    pub fn add(&self, n: u64) {
        self.set(self.done.get() + n);
    }

    /// `done` units so far; the bar moves once every 65,536 of them.
    #[inline]
    pub fn set(&self, done: u64) {
        if let Some(bar) = &self.bar {
            self.done.set(done);
            if done.abs_diff(self.drawn.get()) >= 1 << 16 {
                bar.set_position(done);
                self.drawn.set(done);
            }
        }
    }

    /// Runs `f` (which writes to standard error) with the bar off the screen.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.set_position(self.done.get());
            bar.finish_and_clear();
            set_active_bar(None);
        }
    }
}

/// What a command shows on standard error while a library works for it: the progress
/// of long work as a [`Progress`] bar, and warnings as `command: warning: ...` lines;
/// nothing of either under `--quiet`.
pub struct Console {
    command: &'static str,
    quiet: bool,
    /// The bar shown, and the unit it counts (a new unit, a new phase: a new bar).
    bar: std::sync::Mutex<Option<(String, Progress)>>,
}

impl Console {
    /// For `command` (its name, the prefix of every line), silent when `quiet`.
    pub fn new(command: &'static str, quiet: bool) -> Console {
        Console { command, quiet, bar: std::sync::Mutex::new(None) }
    }

    fn bar(&self) -> std::sync::MutexGuard<'_, Option<(String, Progress)>> {
        self.bar.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl spoor_model::Feedback for Console {
    fn progress(&self, unit: &str, done: u64, total: Option<u64>) {
        guard::note_progress(done, total);
        if !self.quiet {
            let mut bar = self.bar();
            if bar.as_ref().is_some_and(|(u, _)| u != unit) {
                if let Some((_, done)) = bar.take() {
                    done.finish();
                }
            }
            bar.get_or_insert_with(|| (unit.to_owned(), Progress::new(unit, total))).1.set(done);
        }
    }

    fn finish(&self) {
        if let Some((_, bar)) = self.bar().take() {
            bar.finish();
        }
    }

    fn warn(&self, message: &str) {
        if !self.quiet {
            let line = || eprintln!("{}: warning: {message}", self.command);
            match &*self.bar() {
                Some((_, bar)) => bar.suspend(line),
                None => line(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{exit, exit_code, is_broken_pipe, rate};

    #[test]
    fn errors_map_to_their_exit_codes() {
        let version = spoor_format::Error::version("t.spoor", "version 9");
        let corrupt = spoor_format::Error::corrupt("t.spoor", 12, "bad");
        assert_eq!(exit_code(&version.clone().into()), exit::VERSION);
        assert_eq!(exit_code(&anyhow::Error::new(corrupt).context("reading")), exit::BAD_INPUT);
        assert_eq!(exit_code(&spoor_order::Error::Format(version).into()), exit::VERSION);
        assert_eq!(exit_code(&spoor_order::Error::Usage("no input".into()).into()), exit::USAGE);
        assert_eq!(exit_code(&spoor_order::Error::input("t.spoor", "a cycle").into()), exit::BAD_INPUT);
        let unknown_app = spoor_graph::Error::Usage("no application named `x`".into());
        assert_eq!(exit_code(&anyhow::Error::new(unknown_app).context("spoor-cp")), exit::USAGE);
        assert_eq!(exit_code(&super::usage("--window 5ms..1ms: the end is before the start")), exit::USAGE);
        assert_eq!(exit_code(&anyhow::anyhow!("anything else")), exit::BAD_INPUT);
    }

    #[test]
    fn a_closed_pipe_is_told_apart() {
        let pipe = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(is_broken_pipe(&anyhow::Error::new(pipe()).context("writing")));
        assert!(is_broken_pipe(&spoor_order::Error::Write(pipe()).into()));
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(!is_broken_pipe(&spoor_order::Error::Write(other).into()));
    }

    #[test]
    fn rates_have_three_figures_and_none_below_a_millisecond() {
        assert_eq!(rate(448, "events", 0.0), None);
        assert_eq!(rate(448, "events", 1e-9), None);
        assert_eq!(rate(448, "events", 0.000_999), None);
        assert_eq!(rate(34_300_000, "events", 1.0).as_deref(), Some("34.3 M events/s"));
        assert_eq!(rate(5_000, "events", 0.002).as_deref(), Some("2.50 M events/s"));
        assert_eq!(rate(123_456, "events", 1.0).as_deref(), Some("123 k events/s"));
        assert_eq!(rate(7, "events", 2.0).as_deref(), Some("3.50 events/s"));
        assert_eq!(rate(2_500_000_000, "events", 1.0).as_deref(), Some("2.50 G events/s"));
    }
}
