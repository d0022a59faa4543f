//! What the tests of the analysis crates (graph, whatif) share: traces put through
//! spoor-order in memory, synthetic workloads and their PAGs. A dev-dependency only.

use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_graph::{build, Mode, Pag};
use spoor_model::Event;
use spoor_order::order::{self, OrderOptions};
use spoor_order::Input;
use spoor_synth::Spec;

/// A file of the repository's testdata directory.
pub fn testdata(rel: &str) -> String {
    format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A trace (any form) put through spoor-order, as bytes of the binary format (small
/// blocks, so that block boundaries fall everywhere).
pub fn ordered_bytes(name: &str, bytes: Vec<u8>) -> Vec<u8> {
    let input = Input::from_bytes(name, bytes);
    let mut out = Vec::new();
    order::order(&input, &mut out, &OrderOptions { block_events: 7 }).expect("spoor-order");
    out
}

/// The PAG of a trace after spoor-order.
pub fn pag_of_bytes(name: &str, bytes: Vec<u8>, mode: Mode) -> Pag {
    let ordered = ordered_bytes(name, bytes);
    let r = TraceReader::from_bytes(name, ordered, ReadOptions::default()).expect("reader");
    build::build(r, mode).expect("build")
}

/// The PAG of a testdata file after spoor-order.
pub fn pag_of_file(rel: &str, mode: Mode) -> Pag {
    let path = testdata(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    pag_of_bytes(&path, bytes, mode)
}

/// late-sender.txt with clock-offset samples (offset 0: one clock) where they would
/// change the answers if they counted as activity: before anything else on rank 1
/// (-5 us, earlier than t0 = 0), inside rank 0's computation (5 ms, CPU 4.99 ms), and
/// on rank 2 after the run's last event (10.5 ms; the run ends at 10.22 ms).
pub fn late_sender_with_samples() -> Vec<u8> {
    let text = std::fs::read_to_string(testdata("late-sender.txt")).unwrap();
    let sample =
        |loc: u32, wall: &str, cpu: &str| format!("{loc} {wall} {cpu} clock_offset ref=0 offset=0 error=0\n");
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("0 0 ") {
            out += &sample(1, "-5us", "-");
        }
        out += line;
        out += "\n";
        if line.starts_with("0 20us") {
            out += &sample(0, "5ms", "4.99ms");
        }
    }
    out += &sample(2, "10.5ms", "1.04ms");
    assert_eq!(out.matches("clock_offset").count(), 3);
    out.into_bytes()
}

/// A synthetic workload as a binary trace (not ordered).
pub fn synth_bytes(spec: &Spec) -> Vec<u8> {
    let mut events: Vec<Event> = Vec::new();
    spoor_synth::generate(spec, &mut events).unwrap();
    let defs = spoor_synth::definitions(spec);
    let mut w = TraceWriter::new(Vec::new(), &defs, WriterOptions { block_events: 64, ..Default::default() })
        .unwrap();
    for e in &events {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

/// The PAG of a synthetic workload.
pub fn synth_pag(spec: &Spec, mode: Mode) -> Pag {
    pag_of_bytes("synth", synth_bytes(spec), mode)
}

/// An error with its sources, as a command prints it: `what: why: ...`.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut said = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        said += &format!(": {s}");
        source = s.source();
    }
    said
}

/// Milliseconds as nanoseconds, exactly (for hand-worked figures like 9.60 ms).
pub fn ms(v: f64) -> i64 {
    (v * 1e6).round() as i64
}
