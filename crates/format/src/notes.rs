//! Notes about an input that do not stop the work: a trace cut short, read up to its
//! last whole chunk. A library has no standard error of its own, so the program sets
//! where notes go ([`set_sink`]; spoor's commands print them on standard error). Until
//! one is set they go nowhere, and [`crate::TraceReader::salvage_report`] still says
//! what was left out.

use std::sync::OnceLock;

type Sink = Box<dyn Fn(&str) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Sends every later note to `sink` (the first call wins: a program has one standard
/// error).
pub fn set_sink(sink: impl Fn(&str) + Send + Sync + 'static) {
    let _ = SINK.set(Box::new(sink));
}

/// Tells the program `message` (a sentence naming the input, without a prefix).
pub(crate) fn note(message: &str) {
    if let Some(sink) = SINK.get() {
        sink(message);
    }
}
