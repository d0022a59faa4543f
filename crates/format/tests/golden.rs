//! The golden v1 trace: every later version of spoor must read it to the same events.

use spoor_format::{ReadOptions, TraceReader};
use spoor_model::*;

fn testdata(name: &str) -> String {
    format!("{}/../../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn golden_v1_reads_as_its_text_form() {
    let bin = TraceReader::open(&testdata("golden-v1.spoor"), ReadOptions::default()).unwrap();
    let h = *bin.header().unwrap();
    assert_eq!((h.major, h.minor, h.header_len, h.flags), (1, 0, 24, 0));
    let (defs, events) = bin.read_all().unwrap();
    let text = TraceReader::open(&testdata("golden-v1.txt"), ReadOptions::default()).unwrap();
    let (tdefs, tevents) = text.read_all().unwrap();
    assert_eq!(defs, tdefs);
    // The binary trace groups events by location; each location's order is the text's.
    for loc in 0..defs.locations.len() as u32 {
        let a: Vec<_> = events.iter().filter(|e| e.loc == loc).map(|e| format!("{e:?}")).collect();
        let b: Vec<_> = tevents.iter().filter(|e| e.loc == loc).map(|e| format!("{e:?}")).collect();
        assert_eq!(a, b, "location {loc}");
    }
    assert_eq!(events.len(), 37);
}

#[test]
fn golden_v1_holds_what_was_written_by_hand() {
    let (defs, events) =
        TraceReader::open(&testdata("golden-v1.spoor"), ReadOptions::default()).unwrap().read_all().unwrap();
    assert_eq!(defs.apps.len(), 2);
    assert_eq!(defs.strings.name(defs.apps[1].name), "second app");
    assert_eq!(defs.locations[2].thread, 1);
    assert_eq!(defs.comms[0].members, vec![0, 1]);
    assert!(defs.comms[1].members.is_empty());
    assert_eq!(defs.property("clock"), Some("one base, ns"));
    let at = |loc: u32, i: usize| events.iter().filter(|e| e.loc == loc).nth(i).unwrap().clone();
    // Every kind appears.
    let mut kinds: Vec<u8> = events.iter().map(|e| e.kind.code()).collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds, (0..KIND_COUNT).collect::<Vec<_>>());
    let recv = at(1, 2);
    assert_eq!(recv.wall, 6000);
    assert_eq!(recv.cpu, Some(100));
    assert_eq!(recv.kind, Kind::RecvEnd { from: 0, comm: 0, tag: 7, bytes: 1024 });
    assert_eq!(recv.ann.partner, Some(EventRef { loc: 0, index: 4 }));
    assert_eq!((recv.ann.lamport, recv.ann.raw_wall), (Some(4), Some(5990)));
    assert_eq!(at(1, 3).kind, Kind::RecvBegin { from: None, comm: 0, tag: None });
    assert_eq!(at(3, 0).wall, -20);
    assert_eq!(at(3, 0).cpu, None);
    assert_eq!(at(3, 1).kind, Kind::ClockOffset { reference: 0, offset: -1500, error: 20 });
    assert!(matches!(at(3, 2).kind, Kind::Metric { metric: 0, value } if value.is_nan()));
    assert!(matches!(at(0, 4).kind, Kind::Metric { value, .. } if value == 0.0 && value.is_sign_negative()));
    assert_eq!(at(1, 8).kind, Kind::IrecvComplete { request: 78, from: 0, comm: 1, tag: u32::MAX, bytes: 0 });
    assert_eq!(
        at(0, 13).kind,
        Kind::CollEnd { op: CollOp::Bcast, comm: 1, root: Some(0), sent: 64, received: 0 }
    );
}
