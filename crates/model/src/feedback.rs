//! How far long work has got, and what the user should know about it: libraries tell a
//! [`Feedback`], the commands decide what to show (spoor-cli's `Console`: a progress
//! bar on a terminal, `command: warning: ...` lines unless `--quiet`). No library
//! prints.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Where a library reports the progress of long work and the warnings met on the way.
/// Every method does nothing unless implemented; [`Silent`] implements none, [`Collected`]
/// keeps what it is told.
///
/// Short calls whose warnings are a natural part of their answer return them instead
/// (`NetTable::parse`, `Sweep::warnings`); a `Feedback` is for work that streams.
///
/// ```
/// use spoor_model::Feedback;
/// use std::sync::Mutex;
///
/// /// Keeps the warnings, and the last count seen.
/// #[derive(Default)]
/// struct Log {
///     warnings: Mutex<Vec<String>>,
///     done: Mutex<u64>,
/// }
///
/// impl Feedback for Log {
///     fn progress(&self, _unit: &str, done: u64, _total: Option<u64>) {
///         *self.done.lock().unwrap() = done;
///     }
///     fn warn(&self, message: &str) {
///         self.warnings.lock().unwrap().push(message.to_owned());
///     }
/// }
///
/// fn work(feedback: &dyn Feedback) {
///     for done in 1..=3 {
///         feedback.progress("events", done, Some(3));
///     }
///     feedback.finish();
///     feedback.warn("t.csv: not monotone");
/// }
///
/// let log = Log::default();
/// work(&log);
/// assert_eq!(*log.done.lock().unwrap(), 3);
/// assert_eq!(*log.warnings.lock().unwrap(), ["t.csv: not monotone"]);
/// ```
pub trait Feedback: Sync {
    /// `done` `unit`s (say, "events") of `total` (`None`: not known) are finished. Called
    /// often (once per block of events): it must be cheap. Work in several passes names
    /// each before its unit (`reading: events`, then `writing: events`).
    fn progress(&self, unit: &str, done: u64, total: Option<u64>) {
        let _ = (unit, done, total);
    }

    /// The work whose progress was reported is over, complete or not.
    fn finish(&self) {}

    /// Something that does not stop the work but that the user should know, as a
    /// sentence without the command's name or a `warning:` prefix.
    fn warn(&self, message: &str) {
        let _ = message;
    }
}

/// Feedback that goes nowhere: for tests and for library users who do not want it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Feedback for Silent {}

/// Feedback kept as values, to be shown later or checked: every warning, the last
/// progress report and how many times work finished.
#[derive(Debug, Default)]
pub struct Collected {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    warnings: Vec<String>,
    last: Option<(String, u64, Option<u64>)>,
    finished: usize,
}

impl Collected {
    fn kept(&self) -> MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The warnings, in the order they came.
    pub fn warnings(&self) -> Vec<String> {
        self.kept().warnings.clone()
    }

    /// The last progress report: unit, done, total.
    pub fn last_progress(&self) -> Option<(String, u64, Option<u64>)> {
        self.kept().last.clone()
    }

    /// How many times `finish` was called.
    pub fn finished(&self) -> usize {
        self.kept().finished
    }
}

impl Feedback for Collected {
    fn progress(&self, unit: &str, done: u64, total: Option<u64>) {
        self.kept().last = Some((unit.to_owned(), done, total));
    }

    fn finish(&self) {
        self.kept().finished += 1;
    }

    fn warn(&self, message: &str) {
        self.kept().warnings.push(message.to_owned());
    }
}
