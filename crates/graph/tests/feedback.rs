//! What spoor-graph tells a `Feedback` while it loads a trace: how far the build has got,
//! and the warnings of a communication-cost table; it prints nothing itself.

use spoor_format::{ReadOptions, TraceReader};
use spoor_graph::{file, Mode};
use spoor_model::Collected;
use spoor_testkit::{ordered_bytes, testdata};

#[test]
fn load_reports_every_event_built_and_the_tables_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("spa.spoor");
    std::fs::write(&trace, ordered_bytes("spa", std::fs::read(testdata("cp/spa.txt")).unwrap())).unwrap();
    let trace = trace.to_str().unwrap();
    let events = TraceReader::open(trace, ReadOptions::default()).unwrap().read_all().unwrap().1.len() as u64;
    // Local time falls from 5 to 4 ns, and so does remote time: two warnings.
    let table = dir.path().join("falling.csv");
    std::fs::write(&table, "bytes,local_ns,remote_ns\n0,5,5\n10,4,4\n").unwrap();
    let table = table.to_str().unwrap();

    let seen = Collected::default();
    file::load(trace, Mode::Cpu, Some((table, None)), &seen).unwrap();
    assert_eq!(seen.last_progress(), Some(("events".to_owned(), events, Some(events))));
    assert_eq!(seen.finished(), 1);
    assert_eq!(
        seen.warnings(),
        [
            format!("{table}: local time falls from 5 ns at 0 bytes to 4 ns at 10 bytes (not monotone)"),
            format!("{table}: remote time falls from 5 ns at 0 bytes to 4 ns at 10 bytes (not monotone)"),
        ]
    );

    // Without a table nothing is warned about; a PAG file is read, not built: no progress.
    let seen = Collected::default();
    let pag_file = dir.path().join("spa.pag");
    let mut bytes = Vec::new();
    file::write(&mut bytes, &file::load(trace, Mode::Cpu, None, &seen).unwrap()).unwrap();
    assert!(seen.warnings().is_empty());
    std::fs::write(&pag_file, bytes).unwrap();
    let seen = Collected::default();
    file::load(pag_file.to_str().unwrap(), Mode::Cpu, None, &seen).unwrap();
    assert_eq!((seen.last_progress(), seen.finished()), (None, 0));
}
