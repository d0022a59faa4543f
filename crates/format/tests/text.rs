//! Tests of the text form (formats/text.md): round trips, hand-written input,
//! errors, detection and the example traces in testdata/.

use proptest::prelude::*;
use spoor_format::text::{self, looks_like_text, TextParser};
use spoor_format::{Error, ErrorKind};
use spoor_model::{
    Annotations, CollOp, Communicator, Definitions, Event, EventRef, Kind, Location, Metric, Process,
    KIND_NAMES,
};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn write_trace(defs: &Definitions, events: &[Event]) -> String {
    let mut out = Vec::new();
    text::write_header(&mut out).unwrap();
    text::write_definitions(&mut out, defs).unwrap();
    for ev in events {
        text::write_event(&mut out, defs, ev).unwrap();
    }
    String::from_utf8(out).expect("the writer writes UTF-8")
}

fn parse_bytes(input: &[u8]) -> Result<(Definitions, Vec<Event>), Error> {
    let mut p = TextParser::new("t.txt", input);
    let mut events = Vec::new();
    while let Some(ev) = p.next_event()? {
        events.push(ev);
    }
    Ok((p.into_defs(), events))
}

/// Parses, skipping the lines in error (a line in error changes no definition).
fn parse_lenient(input: &[u8]) -> (Definitions, Vec<Event>, usize) {
    let mut p = TextParser::new("t.txt", input);
    let (mut events, mut errors) = (Vec::new(), 0);
    loop {
        match p.next_event() {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break,
            Err(e) => {
                // A line's error names it; the end of the input's, the definition at fault.
                assert!(e.line.is_some_and(|l| l >= 1 && l <= p.line()), "{e}");
                errors += 1;
                assert!(errors <= input.len() + 1, "the parser is stuck");
            }
        }
    }
    (p.into_defs(), events, errors)
}

fn parse(input: &str) -> (Definitions, Vec<Event>) {
    match parse_bytes(input.as_bytes()) {
        Ok(x) => x,
        Err(e) => panic!("{e}\n--- input ---\n{input}"),
    }
}

fn parse_err(input: &[u8]) -> Error {
    match parse_bytes(input) {
        Ok(_) => panic!("expected an error for {:?}", String::from_utf8_lossy(input)),
        Err(e) => e,
    }
}

/// Asserts that parsing `input` fails at `line` with a message containing `msg`.
fn assert_err(input: &str, line: u64, msg: &str) {
    assert_err_bytes(input.as_bytes(), line, msg);
}

fn assert_err_bytes(input: &[u8], line: u64, msg: &str) {
    let e = parse_err(input);
    assert_eq!(e.line, Some(line), "wrong line for {e}");
    assert!(e.message.contains(msg), "message {:?} lacks {msg:?}", e.message);
    assert_eq!(e.file, "t.txt");
}

/// Events compare with `==` except metric values, compared bit for bit (NaN != NaN).
fn canon(ev: &Event) -> (Event, Option<u64>) {
    let mut e = ev.clone();
    let mut bits = None;
    if let Kind::Metric { value, .. } = &mut e.kind {
        bits = Some(value.to_bits());
        *value = 0.0;
    }
    (e, bits)
}

fn assert_same_events(a: &[Event], b: &[Event]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(canon(x), canon(y));
    }
}

/// Copies text as a streaming tool would: reads `chunk` events at a time and
/// writes the definitions added so far before them.
/// Lines in error are skipped.
fn copy_incrementally(input: &[u8], chunk: usize) -> String {
    let mut p = TextParser::new("t.txt", input);
    let mut out = Vec::new();
    let mut written = text::Written::default();
    text::write_header(&mut out).unwrap();
    loop {
        let mut batch = Vec::new();
        let mut end = false;
        while batch.len() < chunk {
            match p.next_event() {
                Ok(Some(e)) => batch.push(e),
                Ok(None) => {
                    end = true;
                    break;
                }
                Err(_) => {}
            }
        }
        text::write_new_definitions(&mut out, p.defs(), &mut written).unwrap();
        for e in &batch {
            text::write_event(&mut out, p.defs(), e).unwrap();
        }
        if end {
            break;
        }
    }
    String::from_utf8(out).unwrap()
}

fn round_trip(defs: &Definitions, events: &[Event]) -> String {
    let s = write_trace(defs, events);
    let (d2, e2) = parse(&s);
    assert_eq!(&d2, defs, "definitions differ after a round trip of\n{s}");
    assert_same_events(events, &e2);
    // Writing again gives the same text.
    assert_eq!(write_trace(&d2, &e2), s);
    s
}

fn ev(loc: u32, wall: i64, cpu: Option<i64>, kind: Kind) -> Event {
    Event::new(loc, wall, cpu, kind)
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

/// Definitions with awkward names, and one event of every kind.
fn sample() -> (Definitions, Vec<Event>) {
    let mut d = Definitions::new();
    let app = d.add_app("my app");
    let m = d.add_machine("node=1");
    let weird = [
        "",
        "a b",
        "quote\"d",
        "back\\slash",
        "new\nline",
        "tab\there",
        "cr\rhere",
        "#hash",
        "@7",
        "ctl\u{1}\u{7f}\u{85}",
        "uni\u{2028}code é 日本",
        "\u{feff}bom",
        "any",
        "-",
        "123",
    ];
    for w in weird {
        d.strings.intern(w);
    }
    for r in 0..3 {
        let p = d.add_process(&format!("rank {r}"), app, m, r);
        d.add_location(&format!("rank {r}/main"), p, 0);
    }
    d.add_location("rank 0/worker", 0, 1);
    d.add_comm("world", vec![0, 1, 2]);
    d.add_comm("empty", vec![]);
    d.add_metric("cache misses", "count/s");
    d.set_property("creator", "spoor test");
    d.set_property("command line", "mpirun -n 3 ./a.out \"x y\"");
    let compute = d.strings.intern("compute");
    let odd = d.strings.lookup("quote\"d").unwrap();
    let phase = d.strings.intern("phase #1");
    let e = vec![
        ev(0, 0, Some(0), Kind::ProcessBegin { parent: None }),
        ev(1, 5, None, Kind::ProcessBegin { parent: Some(0) }),
        ev(3, -17, Some(-3), Kind::ThreadBegin { parent: Some(0) }),
        ev(2, 6, Some(1), Kind::ThreadBegin { parent: None }),
        ev(0, 10, Some(9), Kind::Enter { proc: compute }),
        ev(0, 20, Some(19), Kind::Leave { proc: odd }),
        ev(0, 21, Some(20), Kind::Send { to: 1, comm: 0, tag: 7, bytes: 4096 }),
        ev(0, 22, Some(20), Kind::Send { to: 2, comm: 1, tag: u32::MAX, bytes: u64::MAX }),
        ev(1, 1, Some(1), Kind::RecvBegin { from: None, comm: 0, tag: None }),
        ev(1, 2, Some(1), Kind::RecvBegin { from: Some(0), comm: 3, tag: Some(0) }),
        ev(1, 30, Some(1), Kind::RecvEnd { from: 0, comm: 0, tag: 7, bytes: 4096 }),
        ev(1, 31, None, Kind::Isend { to: 2, comm: 0, tag: 1, bytes: 8, request: 99 }),
        ev(1, 32, None, Kind::IsendComplete { request: 99 }),
        ev(2, 33, None, Kind::IrecvRequest { from: None, comm: 0, tag: Some(1), request: 5 }),
        ev(2, 34, None, Kind::IrecvRequest { from: Some(1), comm: 2, tag: None, request: 6 }),
        ev(2, 35, None, Kind::IrecvComplete { request: 5, from: 1, comm: 0, tag: 1, bytes: 8 }),
        ev(0, 40, Some(30), Kind::CollBegin { op: CollOp::Barrier, comm: 0 }),
        ev(0, 41, Some(30), Kind::CollEnd { op: CollOp::Barrier, comm: 0, root: None, sent: 0, received: 0 }),
        ev(0, 42, Some(30), Kind::CollBegin { op: CollOp::ReduceScatter, comm: 1 }),
        ev(
            0,
            43,
            Some(31),
            Kind::CollEnd { op: CollOp::ReduceScatter, comm: 1, root: Some(2), sent: 10, received: 20 },
        ),
        ev(3, 50, None, Kind::LockRequest { lock: 0 }),
        ev(3, 51, None, Kind::LockAcquire { lock: 0xdead_beef }),
        ev(3, 52, None, Kind::LockRelease { lock: u64::MAX }),
        ev(0, 60, None, Kind::PhaseBegin { name: phase }),
        ev(0, 61, None, Kind::PhaseEnd { name: 0 }),
        ev(0, 62, None, Kind::Metric { metric: 0, value: 1.5 }),
        ev(0, 63, None, Kind::Metric { metric: 0, value: f64::NAN }),
        ev(0, 64, None, Kind::Metric { metric: 0, value: f64::from_bits(0xfff0_0000_dead_0001) }),
        ev(0, 65, None, Kind::Metric { metric: 0, value: f64::INFINITY }),
        ev(0, 66, None, Kind::Metric { metric: 0, value: f64::NEG_INFINITY }),
        ev(0, 67, None, Kind::Metric { metric: 0, value: -0.0 }),
        ev(0, 68, None, Kind::Metric { metric: 0, value: f64::MIN_POSITIVE / 3.0 }),
        ev(0, 69, None, Kind::Metric { metric: 1, value: f64::MAX }),
        ev(0, 70, None, Kind::Metric { metric: 0, value: 1e-300 }),
        ev(0, 71, None, Kind::Metric { metric: 0, value: 0.1 + 0.2 }),
        ev(0, 72, None, Kind::ClockOffset { reference: 1, offset: -1234, error: 56 }),
        ev(
            0,
            i64::MIN,
            Some(i64::MAX),
            Kind::ClockOffset { reference: 0, offset: i64::MAX, error: u64::MAX },
        ),
        ev(2, i64::MAX, Some(i64::MIN), Kind::ProcessEnd),
        ev(3, 80, None, Kind::ThreadEnd),
        // A string id the table does not hold is written @ID and reads back.
        ev(0, 81, None, Kind::Enter { proc: 1000 }),
    ];
    (d, e)
}

#[test]
fn round_trip_every_kind() {
    let (d, mut e) = sample();
    let covered: std::collections::BTreeSet<&str> = e.iter().map(|e| e.kind.name()).collect();
    assert_eq!(covered.len(), KIND_NAMES.len(), "the sample lacks a kind");
    // Annotations, alone and together.
    e[6].ann = Annotations { partner: Some(EventRef { loc: 1, index: 2 }), lamport: None, raw_wall: None };
    e[10].ann = Annotations {
        partner: Some(EventRef { loc: 0, index: u64::MAX }),
        lamport: Some(17),
        raw_wall: Some(-5),
    };
    e[0].ann.lamport = Some(0);
    e[1].ann.raw_wall = Some(i64::MIN);
    let s = round_trip(&d, &e);
    // Spot checks of what the writer prints.
    assert!(s.starts_with("spoor-text 1\nstring 0 \"my app\"\nstring 1 \"node=1\"\n"), "{s}");
    assert!(s.contains("\nstring 4 \"quote\\\"d\"\n"), "{s}");
    assert!(s.contains("\nstring 11 \"ctl\\u{1}\\u{7f}\\u{85}\"\n"), "{s}");
    assert!(s.contains("\nstring 10 \"@7\"\n"), "{s}");
    assert!(s.contains("\nstring 14 any\n"), "{s}");
    assert!(s.contains("\nprocess 0 \"rank 0\" app=0 machine=0 rank=0\n"), "{s}");
    assert!(s.contains("\ncomm 1 empty members=\n"), "{s}");
    assert!(s.contains("\n0 21 20 send to=1 tag=7 bytes=4096 partner=1:2\n"), "{s}");
    assert!(s.contains("\n1 1 1 recv_begin\n"), "{s}");
    assert!(s.contains("\n0 63 - metric metric=0 value=NaN\n"), "{s}");
    assert!(s.contains("\n0 64 - metric metric=0 value=0xfff00000dead0001\n"), "{s}");
    assert!(s.contains("value=-0.0\n"), "{s}");
    assert!(s.contains("value=inf\n") && s.contains("value=-inf\n"), "{s}");
    assert!(s.contains("\n0 43 31 coll_end reduce_scatter comm=1 root=2 sent=10 recv=20\n"), "{s}");
    assert!(s.contains("\n0 81 - enter @1000\n"), "{s}");
}

#[test]
fn empty_trace_round_trips() {
    let s = round_trip(&Definitions::new(), &[]);
    assert_eq!(s, "spoor-text 1\n");
    assert_eq!(parse("").0, Definitions::new());
}

#[test]
fn definitions_arrive_before_the_events_that_follow_them() {
    let input = "app 0 a\n0 1 - process_end\nmachine 0 m\n0 2 - process_end\n";
    let mut p = TextParser::new("t.txt", input.as_bytes());
    assert_eq!(p.line(), 0);
    p.next_event().unwrap().unwrap();
    assert_eq!(p.line(), 2);
    assert_eq!(p.defs().machines.len(), 1, "the implicit machine");
    // machine 0 was defined implicitly by the first event.
    let e = p.next_event().unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("machine 0 is already defined (implicitly at line 2)"), "{}", e.message);
    // The parser goes on after an error.
    assert_eq!(p.next_event().unwrap().unwrap().wall, 2);
    assert!(p.next_event().unwrap().is_none());
    assert_eq!(p.line(), 4);
}

#[test]
fn streaming_copy_with_late_definitions() {
    let input = "\
0 0 - enter main
app 0 late   # implicit app 0 exists already: error, skipped below
";
    assert_err(input, 2, "app 0 is already defined (implicitly at line 1)");
    let input = "\
string 0 zero
0 0 - enter main
1 1 - enter other
metric 0 m unit=s
0 2 - metric metric=0 value=1
comm 0 world members=0,1,4
4 3 - enter \"late name\"
property k v
location 5 extra process=0 thread=1
5 4 - leave main
";
    let (d, e) = parse(input);
    assert_eq!(d.locations.len(), 6);
    for chunk in [1, 2, 3, 100] {
        let copy = copy_incrementally(input.as_bytes(), chunk);
        let (d2, e2) = parse(&copy);
        assert_eq!(d2, d, "chunk {chunk}:\n{copy}");
        assert_same_events(&e, &e2);
    }
    // The whole-file writer and the incremental one agree when everything is known up front.
    let mut whole = Vec::new();
    text::write_definitions(&mut whole, &d).unwrap();
    let mut inc = Vec::new();
    let mut w = text::Written::default();
    text::write_new_definitions(&mut inc, &d, &mut w).unwrap();
    assert_eq!(whole, inc);
    text::write_new_definitions(&mut inc, &d, &mut w).unwrap();
    assert_eq!(whole, inc, "nothing new, nothing written");
    assert_eq!(w.locations, 6);
}

// ---------------------------------------------------------------------------
// Property: parse(write(x)) == x
// ---------------------------------------------------------------------------

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{1,8}",
        "[ -~]{0,8}",
        prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
        prop::sample::select(vec!["", "@", "@1", "#", "=", "\"", "\\", "a b", "any", "-", "0", "\u{feff}"])
            .prop_map(String::from),
    ]
}

/// String ids, mostly held by the table (up to 10 strings), sometimes not.
fn str_id() -> impl Strategy<Value = u32> {
    prop_oneof![9 => 0u32..10, 1 => any::<u32>()]
}

fn small_or_any() -> impl Strategy<Value = u32> {
    prop_oneof![3 => 0u32..4, 1 => any::<u32>()]
}

fn any_defs() -> impl Strategy<Value = Definitions> {
    (
        prop::collection::vec(any_text(), 0..10),
        prop::collection::vec(str_id(), 0..3),
        prop::collection::vec(str_id(), 0..3),
        prop::collection::vec((str_id(), small_or_any(), small_or_any(), any::<u32>()), 0..4),
        prop::collection::vec((str_id(), small_or_any(), small_or_any()), 1..5),
        prop::collection::vec((str_id(), prop::collection::vec(any::<u32>(), 0..5)), 0..3),
        prop::collection::vec((str_id(), str_id()), 0..3),
        prop::collection::vec((str_id(), str_id()), 0..3),
    )
        .prop_map(|(strings, apps, machines, procs, locs, comms, metrics, props)| {
            let mut d = Definitions::new();
            for s in &strings {
                d.strings.intern(s);
            }
            d.apps = apps.into_iter().map(|name| spoor_model::Application { name }).collect();
            d.machines = machines.into_iter().map(|name| spoor_model::Machine { name }).collect();
            d.processes = procs
                .into_iter()
                .map(|(name, app, machine, rank)| Process { name, app, machine, rank })
                .collect();
            d.locations =
                locs.into_iter().map(|(name, process, thread)| Location { name, process, thread }).collect();
            d.comms = comms.into_iter().map(|(name, members)| Communicator { name, members }).collect();
            d.metrics = metrics.into_iter().map(|(name, unit)| Metric { name, unit }).collect();
            // Duplicate keys are kept as they are: the text form is lossless for them too.
            d.properties = props;
            consistent(d)
        })
}

/// `d` with every id it refers to taken modulo what is defined (one of each kind added
/// where something refers to it): readers refuse definitions naming ids never defined.
fn consistent(mut d: Definitions) -> Definitions {
    if d.strings.is_empty() {
        d.strings.intern("s");
    }
    let n = d.strings.len() as u32;
    if !d.locations.is_empty() && d.processes.is_empty() {
        d.processes.push(Process { name: 0, app: 0, machine: 0, rank: 0 });
    }
    if !d.processes.is_empty() && d.apps.is_empty() {
        d.apps.push(spoor_model::Application { name: 0 });
    }
    if !d.processes.is_empty() && d.machines.is_empty() {
        d.machines.push(spoor_model::Machine { name: 0 });
    }
    let (apps, machines, procs, locs) =
        (d.apps.len() as u32, d.machines.len() as u32, d.processes.len() as u32, d.locations.len() as u32);
    d.apps.iter_mut().for_each(|a| a.name %= n);
    d.machines.iter_mut().for_each(|m| m.name %= n);
    for p in &mut d.processes {
        (p.name, p.app, p.machine) = (p.name % n, p.app % apps, p.machine % machines);
    }
    for l in &mut d.locations {
        (l.name, l.process) = (l.name % n, l.process % procs);
    }
    for c in &mut d.comms {
        c.name %= n;
        c.members.iter_mut().for_each(|m| *m %= locs);
    }
    for m in &mut d.metrics {
        (m.name, m.unit) = (m.name % n, m.unit % n);
    }
    for (k, v) in &mut d.properties {
        (*k, *v) = (*k % n, *v % n);
    }
    d
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        any::<u64>().prop_map(f64::from_bits),
        prop::sample::select(vec![f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 5e-324]),
    ]
}

fn any_kind() -> impl Strategy<Value = Kind> {
    let loc = || small_or_any();
    let comm = || prop_oneof![0u32..3, any::<u32>()];
    let op = || prop::sample::select(CollOp::ALL.to_vec());
    prop_oneof![
        prop::option::of(loc()).prop_map(|parent| Kind::ProcessBegin { parent }),
        Just(Kind::ProcessEnd),
        prop::option::of(loc()).prop_map(|parent| Kind::ThreadBegin { parent }),
        Just(Kind::ThreadEnd),
        str_id().prop_map(|proc| Kind::Enter { proc }),
        str_id().prop_map(|proc| Kind::Leave { proc }),
        (loc(), comm(), any::<u32>(), any::<u64>()).prop_map(|(to, comm, tag, bytes)| Kind::Send {
            to,
            comm,
            tag,
            bytes
        }),
        (prop::option::of(loc()), comm(), prop::option::of(any::<u32>()))
            .prop_map(|(from, comm, tag)| Kind::RecvBegin { from, comm, tag }),
        (loc(), comm(), any::<u32>(), any::<u64>()).prop_map(|(from, comm, tag, bytes)| Kind::RecvEnd {
            from,
            comm,
            tag,
            bytes
        }),
        (loc(), comm(), any::<u32>(), any::<u64>(), any::<u64>())
            .prop_map(|(to, comm, tag, bytes, request)| Kind::Isend { to, comm, tag, bytes, request }),
        any::<u64>().prop_map(|request| Kind::IsendComplete { request }),
        (prop::option::of(loc()), comm(), prop::option::of(any::<u32>()), any::<u64>())
            .prop_map(|(from, comm, tag, request)| Kind::IrecvRequest { from, comm, tag, request }),
        (any::<u64>(), loc(), comm(), any::<u32>(), any::<u64>()).prop_map(
            |(request, from, comm, tag, bytes)| Kind::IrecvComplete { request, from, comm, tag, bytes }
        ),
        (op(), comm()).prop_map(|(op, comm)| Kind::CollBegin { op, comm }),
        (op(), comm(), prop::option::of(loc()), prop_oneof![Just(0u64), any::<u64>()], any::<u64>())
            .prop_map(|(op, comm, root, sent, received)| Kind::CollEnd { op, comm, root, sent, received }),
        any::<u64>().prop_map(|lock| Kind::LockRequest { lock }),
        any::<u64>().prop_map(|lock| Kind::LockAcquire { lock }),
        any::<u64>().prop_map(|lock| Kind::LockRelease { lock }),
        str_id().prop_map(|name| Kind::PhaseBegin { name }),
        str_id().prop_map(|name| Kind::PhaseEnd { name }),
        (small_or_any(), any_f64()).prop_map(|(metric, value)| Kind::Metric { metric, value }),
        (loc(), any::<i64>(), any::<u64>()).prop_map(|(reference, offset, error)| Kind::ClockOffset {
            reference,
            offset,
            error
        }),
    ]
}

fn any_event() -> impl Strategy<Value = Event> {
    (
        any::<u32>(),
        any::<i64>(),
        prop::option::of(any::<i64>()),
        any_kind(),
        prop::option::of((any::<u32>(), any::<u64>())),
        prop::option::of(any::<u64>()),
        prop::option::of(any::<i64>()),
    )
        .prop_map(|(loc, wall, cpu, kind, partner, lamport, raw_wall)| Event {
            loc,
            wall,
            cpu,
            kind,
            ann: Annotations {
                partner: partner.map(|(loc, index)| EventRef { loc, index }),
                lamport,
                raw_wall,
            },
        })
}

/// Whatever a parse skipping the lines in error gives writes back, whole or as a
/// stream, to the same trace: the parser never leaves half a line applied.
fn check_what_parses(input: &[u8]) {
    let (d, e, errors) = parse_lenient(input);
    if d.check().is_err() {
        // Definitions naming ids never defined: refused at the end of any text holding them.
        assert!(parse_bytes(input).is_err());
        assert!(parse_bytes(write_trace(&d, &e).as_bytes()).is_err());
        return;
    }
    round_trip(&d, &e);
    for chunk in [1, 3] {
        let copy = copy_incrementally(input, chunk);
        let (d2, e2) = parse(&copy);
        assert_eq!(d2, d);
        assert_same_events(&e, &e2);
    }
    if errors == 0 {
        let (d3, e3) = parse_bytes(input).unwrap();
        assert_eq!(d3, d);
        assert_same_events(&e, &e3);
    }
}

fn mostly_valid_line() -> impl Strategy<Value = String> {
    let name = || prop::sample::select(vec!["main", "\"a b\"", "@1", "@99", "x", "\"\\u{7}\"", "\"\""]);
    let time = || prop::sample::select(vec!["0", "5", "-3", "1.5us", "2ms", "1s", "7ns"]);
    let cpu = || prop::sample::select(vec!["-", "0", "4", "1us"]);
    let kind = || {
        prop::sample::select(vec![
            "process_begin",
            "process_begin parent=1",
            "thread_end lamport=3",
            "send to=1 tag=2 bytes=3",
            "send to=1 tag=2 bytes=3 comm=1 partner=1:0",
            "recv_begin",
            "recv_begin from=any tag=4",
            "recv_end from=0 tag=2 bytes=3",
            "isend to=0 tag=1 bytes=0 req=9",
            "isend_complete req=9",
            "irecv_request req=2 from=3",
            "irecv_complete req=2 from=3 tag=0 bytes=1",
            "coll_begin allreduce comm=1",
            "coll_end gather root=0 sent=8 recv=16 raw_wall=1us",
            "lock_acquire lock=3",
            "metric metric=0 value=-0.0",
            "metric metric=1 value=NaN",
            "clock_offset ref=0 offset=-1us error=10",
            "enter",
            "send to=1",
        ])
    };
    prop_oneof![
        4 => (0u32..5, time(), cpu(), kind()).prop_map(|(l, t, c, k)| format!("{l} {t} {c} {k}")),
        2 => (0u32..5, time(), cpu(), prop::sample::select(vec!["enter", "leave", "phase_begin"]), name())
            .prop_map(|(l, t, c, k, n)| format!("{l} {t} {c} {k} {n}")),
        1 => (prop::sample::select(vec!["app", "machine", "string"]), 0u32..4, name())
            .prop_map(|(k, i, n)| format!("{k} {i} {n}")),
        1 => (0u32..6, name(), 0u32..3).prop_map(|(i, n, p)| format!("location {i} {n} process={p} thread=1")),
        1 => (0u32..4, name()).prop_map(|(i, n)| format!("process {i} {n} app=0 machine=0 rank={i}")),
        1 => (0u32..3, name()).prop_map(|(i, n)| format!("comm {i} {n} members=0,2")),
        1 => (0u32..3, name(), name()).prop_map(|(i, n, u)| format!("metric {i} {n} unit={u}")),
        1 => (name(), name()).prop_map(|(k, v)| format!("property {k} {v}  # comment")),
        1 => Just("# just a comment".to_string()),
        1 => Just(String::new()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_of_write_is_identity(
        defs in any_defs(),
        events in prop::collection::vec(any_event(), 0..24),
    ) {
        // Events belong to defined locations (an undefined one would be defined implicitly).
        let n = defs.locations.len() as u32;
        let events: Vec<Event> = events.into_iter().map(|mut e| { e.loc %= n; e }).collect();
        round_trip(&defs, &events);
    }

    /// Damaged text never panics the parser; it yields events or errors with a line.
    #[test]
    fn damaged_text_never_panics(
        defs in any_defs(),
        events in prop::collection::vec(any_event(), 0..8),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let n = defs.locations.len() as u32;
        let events: Vec<Event> = events.into_iter().map(|mut e| { e.loc %= n; e }).collect();
        let mut bytes = write_trace(&defs, &events).into_bytes();
        for (i, b) in edits {
            let i = i.index(bytes.len());
            match b % 3 {
                0 => bytes[i] = b,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, b),
            }
        }
        let _ = looks_like_text(&bytes);
        check_what_parses(&bytes);
    }

    #[test]
    fn random_lines_never_panic(lines in prop::collection::vec(
        prop_oneof![
            any::<String>(),
            "[0-9]{1,3} [-0-9.a-z]{1,6} [-0-9a-z]{1,4} [a-z_]{3,14}( [a-z_@]{1,6}(=[-0-9a-z,:\"]{0,8})?){0,4}",
            "(string|app|machine|process|location|comm|metric|property) [0-9]{1,2} [a-z\"\\\\@]{0,5}( [a-z]{1,7}=[0-9,]{0,5}){0,3}",
        ], 0..12)) {
        check_what_parses(lines.join("\n").as_bytes());
    }

    /// Lines built to be mostly valid, so that many inputs parse with few errors.
    #[test]
    fn mostly_valid_lines_round_trip(lines in prop::collection::vec(mostly_valid_line(), 0..16)) {
        check_what_parses(lines.join("\n").as_bytes());
    }
}

// ---------------------------------------------------------------------------
// Hand-written input
// ---------------------------------------------------------------------------

#[test]
fn time_units() {
    let (_, e) = parse(
        "0 1.5ms 2us process_begin\n\
         0 1s - process_end\n\
         0 -3ns -0 thread_end\n\
         0 0.000000001s 1.250000000ms thread_end\n\
         0 12 7 thread_end   # plain nanoseconds\n\
         0 -9223372036854775808 9223372036854775807 thread_end\n\
         0 9223372036.854775807s 0.5us thread_end\n\
         0 1 - clock_offset ref=0 offset=-1.5us error=2ms raw_wall=1s\n",
    );
    let times: Vec<(i64, Option<i64>)> = e.iter().map(|e| (e.wall, e.cpu)).collect();
    assert_eq!(
        times,
        vec![
            (1_500_000, Some(2_000)),
            (1_000_000_000, None),
            (-3, Some(0)),
            (1, Some(1_250_000)),
            (12, Some(7)),
            (i64::MIN, Some(i64::MAX)),
            (i64::MAX, Some(500)),
            (1, None),
        ]
    );
    assert_eq!(e[7].kind, Kind::ClockOffset { reference: 0, offset: -1500, error: 2_000_000 });
    assert_eq!(e[7].ann.raw_wall, Some(1_000_000_000));
}

#[test]
fn implicit_locations() {
    let (d, e) = parse("# no definitions at all\n2 100 - process_begin\n0 5 5 enter main\n");
    assert_eq!(e.len(), 2);
    assert_eq!(d.apps.len(), 1);
    assert_eq!(d.strings.get(d.apps[0].name), Some("app"));
    assert_eq!(d.machines.len(), 1);
    assert_eq!(d.strings.get(d.machines[0].name), Some("localhost"));
    assert_eq!(d.processes.len(), 3);
    assert_eq!(d.locations.len(), 3);
    for n in 0..3u32 {
        let p = &d.processes[n as usize];
        let l = &d.locations[n as usize];
        assert_eq!(d.strings.get(p.name), Some(format!("p{n}").as_str()));
        assert_eq!((p.app, p.machine, p.rank), (0, 0, n));
        assert_eq!(d.strings.get(l.name), Some(format!("p{n}").as_str()));
        assert_eq!((l.process, l.thread), (n, 0));
    }
    // Strings are interned in the order met.
    let strings: Vec<&str> = d.strings.iter().collect();
    assert_eq!(strings, ["app", "localhost", "p0", "p1", "p2", "main"]);
    assert_eq!(e[1].kind, Kind::Enter { proc: 5 });
    assert!(d.check().is_ok());

    // Explicit definitions first; implicit ones fill in after them, using app 0 and machine 0.
    let (d, _) = parse(
        "app 0 solver\napp 1 other\nmachine 0 n0\nprocess 0 server app=1 machine=0 rank=0\n\
         location 0 server process=0 thread=0\nlocation 1 server/io process=0 thread=1\n\
         3 0 - thread_begin\nlocation 4 late process=0 thread=2\n",
    );
    assert_eq!(d.apps.len(), 2);
    assert_eq!(d.machines.len(), 1);
    assert_eq!(d.processes.len(), 3);
    assert_eq!(
        d.processes[1],
        Process { name: d.strings.lookup("p2").unwrap(), app: 0, machine: 0, rank: 2 }
    );
    assert_eq!(d.locations[3], Location { name: d.strings.lookup("p3").unwrap(), process: 2, thread: 0 });
    assert_eq!(d.locations.len(), 5);

    assert_err(
        "1 0 - process_begin\nlocation 1 x process=0 thread=0\n",
        2,
        "location 1 is already defined (implicitly at line 1)",
    );
    assert_err(
        "1 0 - process_begin\nprocess 0 x app=0 machine=0 rank=0\n",
        2,
        "process 0 is already defined (implicitly at line 1)",
    );
    assert_err(
        "location 0 x process=0 thread=0\nlocation 0 y process=0 thread=0\n",
        2,
        "location 0 is already defined at line 1",
    );
    assert_err("65536 0 - process_end\n", 1, "location 65536 is not defined");
}

#[test]
fn hand_written_conveniences() {
    let (d, e) = parse(concat!(
        "\u{feff}# a byte order mark, comments and blank lines are fine\n",
        "\n",
        "   # indented comment\r\n",
        "spoor-text 1.3   # minor versions are accepted\n",
        "comm 0 world members=0   # names are interned as met\n",
        "metric 0 \"L2 misses\" unit=count\n",
        "property \"started at\" \"2024-01-01 12:00\"\n",
        "0 0 - recv_begin\n",
        "0 1 - recv_begin from=any tag=any comm=0\n",
        "0 2 - recv_begin tag=3 from=1\n",
        "0 3 - send bytes=8 tag=1 to=1   # keys in any order\n",
        "0 4 - coll_end bcast root=1\n",
        "0 5 - enter \"two words\"\n",
        "0 6 - enter @0\n",
        "0 7 - leave \"tab\\there \\\"q\\\" \\\\ \\u{1F600}\"\n",
        "0 8 - metric metric=0 value=1e3\n",
        "0 9 - metric metric=0 value=-INF\n",
        "0 10 - metric metric=0 value=nan\n",
        "0 11 - metric metric=0 value=0x3ff0000000000000\n",
        "0 12 - process_begin parent=1 partner=1:0 lamport=4\n",
        "0 13 - irecv_request req=1\n",
    ));
    let strings: Vec<&str> = d.strings.iter().collect();
    assert_eq!(
        strings,
        [
            "world",
            "L2 misses",
            "count",
            "started at",
            "2024-01-01 12:00",
            "app",
            "localhost",
            "p0",
            "two words",
            "tab\there \"q\" \\ \u{1F600}"
        ]
    );
    assert_eq!(d.comms[0].members, vec![0]);
    assert_eq!(d.property("started at"), Some("2024-01-01 12:00"));
    let kinds: Vec<Kind> = e.iter().map(|e| e.kind.clone()).collect();
    assert_eq!(kinds[0], Kind::RecvBegin { from: None, comm: 0, tag: None });
    assert_eq!(kinds[1], Kind::RecvBegin { from: None, comm: 0, tag: None });
    assert_eq!(kinds[2], Kind::RecvBegin { from: Some(1), comm: 0, tag: Some(3) });
    assert_eq!(kinds[3], Kind::Send { to: 1, comm: 0, tag: 1, bytes: 8 });
    assert_eq!(kinds[4], Kind::CollEnd { op: CollOp::Bcast, comm: 0, root: Some(1), sent: 0, received: 0 });
    assert_eq!(kinds[5], Kind::Enter { proc: 8 });
    assert_eq!(kinds[6], Kind::Enter { proc: 0 });
    assert_eq!(kinds[7], Kind::Leave { proc: 9 });
    assert_eq!(kinds[8], Kind::Metric { metric: 0, value: 1000.0 });
    assert_eq!(kinds[9], Kind::Metric { metric: 0, value: f64::NEG_INFINITY });
    assert!(matches!(kinds[10], Kind::Metric { value, .. } if value.is_nan()));
    assert_eq!(kinds[11], Kind::Metric { metric: 0, value: 1.0 });
    assert_eq!(kinds[12], Kind::ProcessBegin { parent: Some(1) });
    assert_eq!(
        e[12].ann,
        Annotations { partner: Some(EventRef { loc: 1, index: 0 }), lamport: Some(4), raw_wall: None }
    );
    assert_eq!(kinds[13], Kind::IrecvRequest { from: None, comm: 0, tag: None, request: 1 });

    // Explicit string lines fix ids; later names reuse them.
    let (d, e) = parse("string 0 b\nstring 1 a\napp 0 a\n0 0 - enter b\nstring 4 c\n");
    assert_eq!(d.strings.iter().collect::<Vec<_>>(), ["b", "a", "localhost", "p0", "c"]);
    assert_eq!(d.apps[0].name, 1);
    assert_eq!(e[0].kind, Kind::Enter { proc: 0 });
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

#[test]
fn errors_name_the_line_and_what_was_expected() {
    // Unknown kind.
    assert_err("# c\n\n0 1 - jump\n", 3, "unknown event kind jump (expected one of process_begin");
    // Missing arguments.
    assert_err("0 1 - process_begin\n0 1 - send to=1 tag=0\n", 2, "send: expected bytes=N");
    assert_err("0 1 - enter\n", 1, "enter: expected a procedure NAME");
    assert_err("0 1 - coll_begin\n", 1, "coll_begin: expected a collective operation (barrier, bcast");
    assert_err("0 1\n", 1, "expected CPU");
    assert_err("process 0 p app=0 rank=0\n", 1, "process: expected machine=ID");
    // Bad numbers.
    assert_err("0 1 - send to=x tag=0 bytes=1\n", 1, "send: expected to=LOC, found to=x");
    assert_err("0 1 - send to=1 tag=-1 bytes=1\n", 1, "send: expected tag=N, found tag=-1");
    assert_err("0 1 - send to=1 tag=\"1\" bytes=1\n", 1, "send: expected tag=N, found tag=\"1\"");
    assert_err("0 x1 - process_end\n", 1, "expected WALL, a time");
    assert_err("0 1.5 - process_end\n", 1, "expected WALL, a time");
    assert_err("0 1.5ns - process_end\n", 1, "WALL 1.5ns is not a whole number of nanoseconds");
    assert_err("0 1 2.0000000001s process_end\n", 1, "CPU 2.0000000001s is not a whole number");
    assert_err("0 1 - metric metric=0 value=fast\n", 1, "metric: expected value=F");
    assert_err("0 1 - clock_offset ref=0 offset=0 error=-1\n", 1, "clock_offset: error=-1 is out of range");
    assert_err("0 1 - send to=1 tag=0 bytes=1 partner=3\n", 1, "send: expected partner=LOC:INDEX");
    assert_err("comm 0 w members=1,,2\n", 1, "comm: expected members=LOC,LOC,...");
    // Overflow.
    assert_err(
        "0 1 - send to=1 tag=4294967296 bytes=0\n",
        1,
        "send: tag=4294967296 is out of range (at most 4294967295)",
    );
    assert_err(
        "0 1 - lock_acquire lock=18446744073709551616\n",
        1,
        "lock=18446744073709551616 is out of range",
    );
    assert_err("0 9223372036854775808 - process_end\n", 1, "WALL 9223372036854775808 is out of range");
    assert_err("0 10000000000s - process_end\n", 1, "out of range");
    assert_err("4294967296 0 - process_end\n", 1, "location 4294967296 is out of range");
    assert_err("0 1 - thread_end raw_wall=99999999999999999999999999999999999999999999ms\n", 1, "raw_wall=");
    // Quoting and lexing.
    assert_err("0 1 - enter \"abc\n", 1, "unterminated quoted string");
    assert_err("0 1 - enter \"a\\qb\"\n", 1, "unknown escape \\q");
    assert_err("0 1 - enter \"\\u{d800}\"\n", 1, "not a Unicode scalar value");
    assert_err("0 1 - enter \"\\u{1234567}\"\n", 1, "bad escape");
    assert_err("0 1 - enter a\"b\"\n", 1, "unexpected '\"' after a");
    assert_err("0 1 - process_end# no space\n", 1, "a comment needs whitespace before its '#'");
    assert_err("0 1 - send =1\n", 1, "'=' without a key");
    assert_err("0 1 - send to=1=2\n", 1, "unexpected '=' after to=1");
    assert_err("0 1 - enter @x\n", 1, "enter: expected a procedure NAME (a name or @ID), found @x");
    assert_err("0 1 - enter a b\n", 1, "enter: unexpected argument b");
    assert_err("0 1 - coll_end barrier comm=0 2\n", 1, "unexpected 2 after key=value arguments");
    assert_err("0 1 - coll_end gossip\n", 1, "coll_end: unknown collective operation gossip");
    let long = format!("0 1 - coll_end {}\n", "x".repeat(10_000));
    let e = parse_err(long.as_bytes());
    assert!(e.message.len() < 400 && e.message.contains("xxx..."), "{}", e.message);
    // Out-of-order and duplicate ids.
    assert_err("app 0 a\napp 2 b\n", 2, "app 2: expected id 1 (ids are given in order 0, 1, 2, ...)");
    assert_err("app 0 a\napp 0 b\n", 2, "app 0 is already defined at line 1");
    assert_err("string 1 a\n", 1, "string 1: expected id 0");
    assert_err("string 0 a\nstring 0 b\n", 2, "string 0 is already defined");
    assert_err("string 0 a\nstring 1 a\n", 2, "string 1: a is already string 0 (strings are unique)");
    assert_err("app 0 x\nstring 0 a\n", 2, "string 0 is already defined");
    assert_err("string 0 @a\n", 1, "TEXT starting with '@' must be quoted");
    assert_err("metric x m unit=s\n", 1, "metric: expected ID NAME, found x as ID");
    // Duplicate and unknown keys.
    assert_err("0 1 - send to=1 to=2 tag=0 bytes=1\n", 1, "send: duplicate key to=");
    assert_err(
        "0 1 - thread_end foo=1\n",
        1,
        "thread_end: unknown key foo= (expected partner=, lamport=, raw_wall=)",
    );
    assert_err(
        "0 1 - send to=1 tag=0 bytes=1 com=2\n",
        1,
        "unknown key com= (expected to=, tag=, bytes=, comm=",
    );
    assert_err("location 0 l process=0 thread=0 core=3\n", 1, "location: unknown key core=");
    // Lines that are not definitions, events or a version.
    assert_err("evnt 0 1\n", 1, "unknown line start evnt: expected an event");
    assert_err("x=1\n", 1, "expected an event (LOC WALL CPU KIND ...)");
    assert_err("-1 0 - process_end\n", 1, "unknown line start -1");
    // Non-UTF-8 bytes.
    assert_err_bytes(b"# ok\n0 1 - enter caf\xe9\n", 2, "not valid UTF-8 (at byte 16 of the line)");
}

#[test]
fn version_line() {
    let e = parse_err(b"# written by hand\nspoor-text 2\n");
    assert_eq!(e.kind, ErrorKind::Version);
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("version 2 is not supported (this spoor reads version 1)"), "{}", e.message);
    assert!(e.message.contains("newer spoor"), "{}", e.message);
    assert_eq!(parse_err(b"spoor-text 0.9\n").kind, ErrorKind::Version);
    assert_eq!(parse_err(b"spoor-text 99999999999\n").kind, ErrorKind::Version);
    assert_err("spoor-text\n", 1, "expected spoor-text MAJOR");
    assert_err("spoor-text one\n", 1, "expected spoor-text MAJOR");
    assert_err("spoor-text 1 extra\n", 1, "expected spoor-text MAJOR");
    assert_err("spoor-text 1\nspoor-text 1\n", 2, "must come before every definition and event");
    assert_err("app 0 a\nspoor-text 1\n", 2, "must come before every definition and event");
    assert_eq!(parse("# c\n\nspoor-text 1.0\n").1.len(), 0);
}

#[test]
fn overlong_lines_are_refused_and_skipped() {
    for tail in [&b"x\n"[..], &b"xyz\n"[..], &b"x\r\n"[..]] {
        let mut input = b"# ".to_vec();
        input.resize(64 << 20, b'x');
        input.extend_from_slice(tail);
        input.extend_from_slice(b"0 7 - process_end\n");
        let mut p = TextParser::new("t.txt", &input[..]);
        let e = p.next_event().unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("line longer than"), "{}", e.message);
        assert_eq!(p.next_event().unwrap().map(|e| e.wall), Some(7));
        assert_eq!(p.line(), 2);
    }
    // A line of exactly the limit is fine.
    let mut input = b"# ".to_vec();
    input.resize(64 << 20, b'x');
    input.extend_from_slice(b"\r\n0 7 - process_end\n");
    assert_eq!(parse_bytes(&input).unwrap().1.len(), 1);
}

#[test]
fn io_errors_carry_the_file_name() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let mut p = TextParser::new("t.txt", std::io::BufReader::new(Broken));
    let e = p.next_event().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
    assert_eq!(e.file, "t.txt");
    assert!(e.to_string().contains("disk on fire"));
}

// ---------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------

#[test]
fn detection() {
    assert!(looks_like_text(b"spoor-text 1\n"));
    assert!(looks_like_text(b"# comment\n\n  string 0 x\n"));
    assert!(looks_like_text(b"\n\n0 1 - process_end\n"));
    assert!(looks_like_text(b"\xef\xbb\xbfapp 0 a\n"));
    assert!(looks_like_text(b"# only a comment\n"));
    assert!(looks_like_text(b"# cut inside a character: caf\xc3"));
    assert!(looks_like_text(b"# cut inside the first word\nspoor-te"));
    assert!(looks_like_text(b"locat"));
    assert!(!looks_like_text(b""));
    assert!(!looks_like_text(b"\n \n"));
    assert!(!looks_like_text(b"\x1f\x8b\x08\x00"));
    assert!(!looks_like_text(b"SPOOR\x00\x01\x00"));
    assert!(!looks_like_text(b"hello world\n"));
    assert!(!looks_like_text(b"# comment\n\xff\xfe"));
    assert!(!looks_like_text(b"apple 0 a\n"));
    assert!(!looks_like_text(b"\x00\x00\x00\x00"));
    let (d, e) = sample();
    assert!(looks_like_text(write_trace(&d, &e).as_bytes()));
    let mut only_defs = Vec::new();
    text::write_definitions(&mut only_defs, &d).unwrap();
    assert!(looks_like_text(&only_defs[..100]));
}

// ---------------------------------------------------------------------------
// testdata/
// ---------------------------------------------------------------------------

/// The worked example of formats/text.md reads and writes back as the spec says.
#[test]
fn spec_worked_example() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/text.md");
    let spec = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let example = spec.split("## Worked example").nth(1).expect("a worked example section");
    let blocks: Vec<&str> =
        example.split("```").skip(1).step_by(2).map(|b| b.trim_start_matches('\n')).collect();
    let (input, expected) = (blocks[0], blocks[1]);
    let (d, e) = parse(input);
    assert_eq!(write_trace(&d, &e), expected);
    assert!(d.check().is_ok());
}

fn testdata(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn late_sender_example() {
    let input = testdata("late-sender.txt");
    assert!(looks_like_text(input.as_bytes()));
    let (d, events) = parse(&input);
    assert!(d.check().is_ok());
    assert_eq!(d.locations.len(), 3);
    assert_eq!(d.processes.iter().map(|p| p.rank).collect::<Vec<_>>(), [0, 1, 2]);
    let name = |id| d.strings.get(id).unwrap_or("?");

    // Per location: times never go back, CPU never runs faster than the wall clock,
    // and no CPU is consumed while waiting in a receive or a collective.
    for loc in 0..3u32 {
        let mine: Vec<&Event> = events.iter().filter(|e| e.loc == loc).collect();
        assert!(matches!(mine.first().map(|e| &e.kind), Some(Kind::ProcessBegin { .. })));
        assert!(matches!(mine.last().map(|e| &e.kind), Some(Kind::ProcessEnd)));
        for w in mine.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (ca, cb) = (a.cpu.unwrap(), b.cpu.unwrap());
            assert!(b.wall >= a.wall, "wall goes back at {b:?}");
            assert!(cb >= ca, "cpu goes back at {b:?}");
            assert!(cb - ca <= b.wall - a.wall, "cpu runs faster than wall at {b:?}");
            if matches!(a.kind, Kind::RecvBegin { .. } | Kind::CollBegin { .. }) {
                assert_eq!(ca, cb, "cpu advances while waiting at {b:?}");
            }
        }
    }
    // Every send is received, later, with the same tag and size.
    let sends: Vec<&Event> = events.iter().filter(|e| matches!(e.kind, Kind::Send { .. })).collect();
    assert_eq!(sends.len(), 2);
    for s in &sends {
        let Kind::Send { to, tag, bytes, comm } = s.kind else { unreachable!() };
        let r = events
            .iter()
            .find(|e| e.loc == to && e.kind == Kind::RecvEnd { from: s.loc, comm, tag, bytes })
            .expect("a matching receive");
        assert!(r.wall > s.wall);
    }
    // Rank 0 is the late sender: it computes in `compute` while rank 1 waits.
    let compute = d.strings.lookup("compute").expect("a procedure named compute");
    let enter = events.iter().find(|e| e.kind == Kind::Enter { proc: compute }).unwrap();
    let leave = events.iter().find(|e| e.kind == Kind::Leave { proc: compute }).unwrap();
    assert_eq!((enter.loc, leave.loc), (0, 0));
    let rb = events.iter().find(|e| e.loc == 1 && matches!(e.kind, Kind::RecvBegin { .. })).unwrap();
    assert!(rb.wall < sends[0].wall && sends[0].loc == 0);
    assert!(leave.wall - enter.wall > 1_000_000, "compute is long");
    // All three meet in a barrier.
    for loc in 0..3 {
        assert!(events
            .iter()
            .any(|e| e.loc == loc && e.kind == Kind::CollBegin { op: CollOp::Barrier, comm: 0 }));
        assert!(events
            .iter()
            .any(|e| e.loc == loc && matches!(e.kind, Kind::CollEnd { op: CollOp::Barrier, .. })));
    }
    assert_eq!(name(d.comms[0].name), "MPI_COMM_WORLD");
    assert_eq!(d.comms[0].members, [0, 1, 2]);
    // And it round-trips like anything else.
    round_trip(&d, &events);
}
