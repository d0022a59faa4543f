//! Where a stage puts what it keeps on disk rather than in memory (standard input it must
//! read twice, runs spilled from memory): one directory of its own, made on first use
//! inside `--tmpdir` (else `$TMPDIR`, else /tmp) and removed when the stage ends,
//! however it ends: returning, an error, a signal or memory running out ([`guard`]).

use crate::guard;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bytes the stage wrote to its spill directories, for `-v`.
static SPILLED: AtomicU64 = AtomicU64::new(0);
/// Where the last of them was.
static SPILLED_IN: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// A stage's spill directory, made when first asked for.
pub struct SpillDir {
    command: &'static str,
    parent: PathBuf,
    made: OnceLock<(tempfile::TempDir, guard::Temporary)>,
}

impl SpillDir {
    /// The spill directory of `command` inside `tmpdir` (`None`: `$TMPDIR`, else /tmp).
    pub fn new(command: &'static str, tmpdir: Option<&Path>) -> SpillDir {
        let parent = tmpdir.map_or_else(std::env::temp_dir, Path::to_owned);
        SpillDir { command, parent, made: OnceLock::new() }
    }

    /// The directory, made now if it is not yet.
    pub fn path(&self) -> anyhow::Result<&Path> {
        if let Some((dir, _)) = self.made.get() {
            return Ok(dir.path());
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("{}-spill-", self.command))
            .tempdir_in(&self.parent)
            .with_context(|| format!("cannot make a spill directory in {}", self.parent.display()))?;
        let registered = guard::temporary(dir.path());
        Ok(self.made.get_or_init(|| (dir, registered)).0.path())
    }

    /// [`SpillDir::path`] as a library asks for it (where it copies a trace only when it
    /// must), its error said in full.
    pub fn io_path(&self) -> std::io::Result<PathBuf> {
        self.path().map(Path::to_owned).map_err(|e| std::io::Error::other(format!("{e:#}")))
    }

    /// Counts `bytes` written into it (for `-v`).
    pub fn wrote(&self, bytes: u64) {
        SPILLED.fetch_add(bytes, Ordering::Relaxed);
        if let Ok(mut at) = SPILLED_IN.lock() {
            *at = Some(self.parent.clone());
        }
    }
}

/// What the stage wrote to its spill directories, and where the last one was made.
pub(crate) fn spilled() -> (u64, Option<PathBuf>) {
    let mapped: u64 = ARENAS.lock().map_or(0, |a| a.iter().map(|a| a.most_bytes()).sum());
    (SPILLED.load(Ordering::Relaxed) + mapped, SPILLED_IN.lock().ok().and_then(|p| p.clone()))
}

/// A trace to read twice: the file at `path`; standard input (`-`) or a pipe (a FIFO,
/// `<(...)`) first copied into the stage's spill directory, as a stream can be read once.
pub fn open_input(path: &str, spill: &SpillDir) -> anyhow::Result<spoor_order::Input> {
    if !spoor_format::is_stream(path) {
        return Ok(spoor_order::Input::open(path)?);
    }
    let input = spoor_order::Input::spool_stream(path, spill.path()?)?;
    spill.wrote(input.spooled_bytes());
    Ok(input)
}

/// A trace a stage may read more than once: standard input or a pipe copied into the
/// stage's spill directory (`-v` tells how much); `None` for a file, read where it is.
pub fn spool_if_stream(path: &str, spill: &SpillDir) -> anyhow::Result<Option<spoor_order::Input>> {
    match spoor_format::is_stream(path) {
        true => open_input(path, spill).map(Some),
        false => Ok(None),
    }
}

/// Where to read the trace given as `path` from: its copy, where it was spooled.
pub fn read_from(path: &str, spooled: Option<&spoor_order::Input>) -> String {
    spooled.and_then(|i| i.file()).map_or_else(|| path.to_owned(), |p| p.to_string_lossy().into_owned())
}

/// `e`, naming the input as given (`<stdin>`, the pipe) where it named the copy `input`
/// is read from (a trace's error names the file it read), with the exit code it had.
pub fn named_as_given(input: Option<&spoor_order::Input>, e: anyhow::Error) -> anyhow::Error {
    let Some((copy, name)) = input.filter(|i| i.is_spooled()).and_then(|i| Some((i.file()?, i.name())))
    else {
        return e;
    };
    let message = format!("{e:#}");
    let renamed = message.replace(&*copy.to_string_lossy(), name);
    if renamed == message {
        return e;
    }
    anyhow::Error::new(crate::Reworded { message: renamed, code: crate::exit_code(&e) })
}

/// Bytes an event the wait states keep in memory, at about the most: the fold's
/// timelines and synchronization points, the waits and the root causes' arrays (a
/// stencil's take 21).
pub const WAIT_STATE_BYTES_PER_EVENT: u64 = 24;

/// Where the wait states of the trace at `path` keep what grows with it: memory where
/// its events at [`WAIT_STATE_BYTES_PER_EVENT`] fit `budget` (default: half of what is
/// in hand, [`crate::graph_budget`]; 0: never), else a file in the spill directory
/// (`-v` then tells how much it held). A stream's events are not known before it is
/// read: it spills only under a budget of 0.
pub fn wait_state_arena(
    path: &str,
    budget: Option<u64>,
    spill: &SpillDir,
) -> anyhow::Result<Option<std::sync::Arc<spoor_format::spill::Arena>>> {
    let need = || {
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?;
        let events = match spoor_format::binary::End::events_in(&file) {
            Some(n) => n,
            None => events_by_size(path)?,
        };
        Ok(events.saturating_mul(WAIT_STATE_BYTES_PER_EVENT))
    };
    match over_budget(path, budget, need)? {
        true => new_arena(spill).map(Some),
        false => Ok(None),
    }
}

/// Whether what a stage keeps of the file at `path`, `need()` bytes, is more than
/// `budget` (default: half of what is in hand, [`crate::graph_budget`]; 0: always). A
/// stream's size is not known before it is read: only under a budget of 0.
fn over_budget(
    path: &str,
    budget: Option<u64>,
    need: impl FnOnce() -> anyhow::Result<u64>,
) -> anyhow::Result<bool> {
    match budget.unwrap_or_else(crate::graph_budget) {
        0 => Ok(true),
        _ if spoor_format::is_stream(path) => Ok(false),
        budget => Ok(need()? > budget),
    }
}

/// A generous count of the events of a trace file without its index (a damaged tail),
/// from its size.
fn events_by_size(path: &str) -> anyhow::Result<u64> {
    let len = std::fs::metadata(path).with_context(|| format!("cannot read {path}"))?.len();
    Ok(len / spoor_format::binary::LEAST_BYTES_PER_EVENT)
}

/// A spill file in the stage's spill directory, counted for `-v`.
fn new_arena(spill: &SpillDir) -> anyhow::Result<std::sync::Arc<spoor_format::spill::Arena>> {
    let arena = spoor_format::spill::Arena::new(spill.path()?)?;
    if let Ok(mut all) = ARENAS.lock() {
        all.push(arena.clone());
    }
    if let Ok(mut at) = SPILLED_IN.lock() {
        *at = Some(spill.parent.clone());
    }
    Ok(arena)
}

/// How often a graph in a file has the pages its passes touched let go.
const GRAPH_PAGES_KEPT_FOR: std::time::Duration = std::time::Duration::from_millis(50);

/// Where a stage that keeps a whole graph (spoor-gag, spoor-whatif, spoor-cp with
/// options that read it) keeps the graph of the trace or PAG file at `path`: memory
/// where it fits `budget` (default: half of what is in hand, [`crate::graph_budget`];
/// 0: never), else a file in the spill directory whose pages are let go every 50 ms,
/// so that whatever passes over the graph holds only what it touched lately. A stream's
/// graph is not known before it is read: it spills only under a budget of 0.
pub fn graph_arena(
    path: &str,
    budget: Option<u64>,
    spill: &SpillDir,
) -> anyhow::Result<Option<std::sync::Arc<spoor_format::spill::Arena>>> {
    let need = || match spoor_graph::streamed::least_graph_bytes(path)? {
        Some(bytes) => Ok(bytes),
        None => Ok(events_by_size(path)?.saturating_mul(spoor_graph::streamed::GRAPH_BYTES_AT_LEAST)),
    };
    if !over_budget(path, budget, need)? {
        return Ok(None);
    }
    let arena = new_arena(spill)?;
    // Its passes go in node order: once evicted, pages are read back ahead of them.
    arena.read_ahead();
    arena.release_every(GRAPH_PAGES_KEPT_FOR);
    Ok(Some(arena))
}

/// The spill files handed out, for `-v`, which tells the most each held (kept to the
/// end: unlinked, they go with the process).
static ARENAS: std::sync::Mutex<Vec<std::sync::Arc<spoor_format::spill::Arena>>> =
    std::sync::Mutex::new(Vec::new());
