//! The program space (Karavanic's experiment management, formats/exp.md): runs kept in
//! one SQLite file with their attributes and what was derived from each trace once, and
//! the operators over them: structural merge and difference, resource mapping, the
//! performance difference operator, scaling with the POP model's factors, a regression
//! gate, and search directives for spoor-diagnose from what earlier searches found.
//!
//! [`derive::derive`] reads a trace; [`store::Store`] keeps runs; [`ops`] compares them;
//! [`render`] turns the answers into tables.

pub mod derive;
pub mod ops;
pub mod query;
pub mod render;
pub mod store;

pub use derive::{derive, derive_within, Derived};
pub use ops::{Mapping, Side};
pub use query::{Query, Runs};
pub use store::{Store, SCHEMA_VERSION};

/// Why an experiment operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Format(#[from] spoor_format::Error),
    #[error(transparent)]
    Report(#[from] spoor_report::Error),
    #[error(transparent)]
    Graph(#[from] spoor_graph::Error),
    /// The trace is not spoor-order's output.
    #[error("{0}")]
    NotOrdered(String),
    /// The store could not be read or written (the message names the file).
    #[error("{0}")]
    Store(String),
    /// What the user asked for does not fit (a run that is not there, a bad map file).
    #[error("{0}")]
    Usage(String),
}

/// Where a stored run's trace is now, against what was stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceStatus {
    /// Same size and modification time.
    Unchanged,
    /// Another size or modification time: it may have been rewritten.
    Changed,
    /// Not there any more (moved or removed).
    Missing,
}

impl TraceStatus {
    pub fn of(run: &store::Run) -> TraceStatus {
        match std::fs::metadata(&run.trace) {
            Err(_) => TraceStatus::Missing,
            Ok(m) => {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64);
                if m.len() as i64 == run.size && mtime == run.mtime_ns {
                    TraceStatus::Unchanged
                } else {
                    TraceStatus::Changed
                }
            }
        }
    }

    /// A sentence for the user, `None` when all is well.
    pub fn describe(self, run: &store::Run) -> Option<String> {
        match self {
            TraceStatus::Unchanged => None,
            TraceStatus::Changed => Some(format!(
                "run {}: its trace {} changed since it was added (size or time differ); the stored figures are those of the trace as added",
                run.id, run.trace
            )),
            TraceStatus::Missing => Some(format!(
                "run {}: its trace {} is no longer there (moved or removed); the stored figures remain",
                run.id, run.trace
            )),
        }
    }
}
