//! The hand-written traces of testdata/order, with the answers their `#?` lines state.
//!
//! Expectation lines (comments to the trace reader):
//! `#? partner A:I B:J`, `#? no-partner A:I`, `#? lamport A:I N`, `#? before A:I B:J`
//! (spoor-order's output order), `#? problems N`, `#? errors N`, `#? problem KIND A:I`
//! (spoor-order --check), `#? cycle A:I B:J...` (the events a cycle names),
//! `#? violations-before N`, `#? violations-after-offsets N`, `#? violations-after N`,
//! `#? offset LOC NS TOL`, `#? drift LOC PPM TOL`, `#? wall A:I NS TOL`, `#? method LOC M`,
//! `#? clocks offsets|recorded`, `#? violations-with-offsets N` (spoor-align with its
//! defaults).

use spoor_format::brief::Brief;
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{Collected, Event, EventRef};
use spoor_order::align::{self, AlignOptions};
use spoor_order::order::{self, OrderOptions, Sink};
use spoor_order::Input;
use std::collections::HashMap;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/order")
}

fn expectations(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter_map(|l| l.strip_prefix("#?"))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

fn at(s: &str) -> EventRef {
    let (l, i) = s.split_once(':').expect("LOC:INDEX");
    EventRef { loc: l.parse().unwrap(), index: i.parse().unwrap() }
}

fn read(bytes: Vec<u8>) -> Vec<Event> {
    TraceReader::from_bytes("out", bytes, ReadOptions::default()).unwrap().read_all().unwrap().1
}

/// Output events by (location, index), with their position in the output.
fn by_ref(events: &[Event]) -> HashMap<EventRef, (usize, &Event)> {
    let mut next: HashMap<u32, u64> = HashMap::new();
    let mut m = HashMap::new();
    for (pos, e) in events.iter().enumerate() {
        let i = next.entry(e.loc).or_insert(0);
        m.insert(EventRef { loc: e.loc, index: *i }, (pos, e));
        *i += 1;
    }
    m
}

fn files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    v.sort();
    v
}

const ORDER_KEYS: &[&str] =
    &["partner", "no-partner", "lamport", "before", "problems", "errors", "problem", "cycle"];
const ALIGN_KEYS: &[&str] = &[
    "violations-before",
    "violations-after-offsets",
    "violations-after",
    "offset",
    "drift",
    "wall",
    "method",
    "clocks",
    "violations-with-offsets",
];

#[test]
fn order_answers() {
    let mut checked = 0;
    for path in files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let exp = expectations(&text);
        if !exp.iter().any(|e| ORDER_KEYS.contains(&e[0].as_str())) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = Input::from_bytes(&name, text.clone().into_bytes());
        let summary = order::check(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let cycle: Vec<&Vec<String>> = exp.iter().filter(|e| e[0] == "cycle").collect();
        if !cycle.is_empty() {
            let mut out = Vec::new();
            let seen = Collected::default();
            let err = order::order_with_feedback(&input, &mut out, &OrderOptions::default(), &seen)
                .expect_err("a cycle is an error");
            assert_eq!(seen.finished(), 1, "{name}: the progress ends when the order fails");
            let msg = err.to_string();
            assert!(msg.contains("cycle"), "{name}: {msg}");
            for e in &cycle {
                for r in &e[1..] {
                    let r = at(r);
                    let needle = format!("(location {}) event {} ", r.loc, r.index);
                    assert!(msg.contains(&needle), "{name}: the cycle should name {r:?}: {msg}");
                }
            }
            assert!(
                summary.problems.iter().any(|p| p.kind == spoor_order::matching::ProblemKind::Cycle),
                "{name}: --check reports the cycle"
            );
            checked += 1;
            continue;
        }
        let mut out = Vec::new();
        let seen = Collected::default();
        let s2 = order::order_with_feedback(&input, &mut out, &OrderOptions { block_events: 3 }, &seen)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every event written is counted, out of the input's events.
        assert_eq!(
            seen.last_progress(),
            Some(("writing: events".to_owned(), s2.events, Some(s2.events))),
            "{name}"
        );
        assert_eq!(seen.finished(), 1, "{name}");
        assert_eq!(s2.problems, summary.problems, "{name}: order and check agree");
        let events = read(out);
        let refs = by_ref(&events);
        for e in &exp {
            let what = e.join(" ");
            match e[0].as_str() {
                "partner" => {
                    let got = refs[&at(&e[1])].1.ann.partner;
                    assert_eq!(got, Some(at(&e[2])), "{name}: {what}");
                }
                "no-partner" => assert_eq!(refs[&at(&e[1])].1.ann.partner, None, "{name}: {what}"),
                "lamport" => {
                    assert_eq!(refs[&at(&e[1])].1.ann.lamport, Some(e[2].parse().unwrap()), "{name}: {what}")
                }
                "before" => assert!(refs[&at(&e[1])].0 < refs[&at(&e[2])].0, "{name}: {what}"),
                "problems" => {
                    let list: Vec<String> =
                        summary.problems.iter().map(|p| p.describe(&summary.defs)).collect();
                    assert_eq!(
                        summary.problems.len(),
                        e[1].parse::<usize>().unwrap(),
                        "{name}: {what}: {list:#?}"
                    )
                }
                "errors" => {
                    assert_eq!(summary.error_count(), e[1].parse::<usize>().unwrap(), "{name}: {what}")
                }
                "problem" => {
                    let r = at(&e[2]);
                    let found = summary.problems.iter().any(|p| {
                        serde_json::to_value(p.kind).unwrap() == serde_json::Value::String(e[1].clone())
                            && p.at == r
                    });
                    let list: Vec<String> =
                        summary.problems.iter().map(|p| p.describe(&summary.defs)).collect();
                    assert!(found, "{name}: {what}: {list:#?}");
                }
                _ => {}
            }
        }
        // Every output is a linear extension of happened-before with Lamport clocks.
        for (r, (pos, ev)) in &refs {
            if r.index > 0 {
                let prev = refs[&EventRef { loc: r.loc, index: r.index - 1 }];
                assert!(prev.0 < *pos, "{name}: local order of {r:?}");
                assert!(prev.1.ann.lamport < ev.ann.lamport, "{name}: Lamport clocks grow along {r:?}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 4, "found the order traces");
}

#[test]
fn align_answers() {
    let mut checked = 0;
    for path in files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let exp = expectations(&text);
        if !exp.iter().any(|e| ALIGN_KEYS.contains(&e[0].as_str())) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = Input::from_bytes(&name, text.clone().into_bytes());
        let mut out = Vec::new();
        let rep = align::align(&input, &AlignOptions::default(), &mut out)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let events = read(out);
        let refs = by_ref(&events);
        let num = |s: &str| s.parse::<f64>().unwrap();
        for e in &exp {
            let what = e.join(" ");
            match e[0].as_str() {
                "violations-before" => {
                    assert_eq!(rep.violations_before.total(), num(&e[1]) as u64, "{name}: {what}")
                }
                "violations-after-offsets" => {
                    assert_eq!(rep.violations_after_offsets.total(), num(&e[1]) as u64, "{name}: {what}")
                }
                "violations-after" => {
                    assert_eq!(rep.violations_after.total(), num(&e[1]) as u64, "{name}: {what}")
                }
                "offset" => {
                    let c = &rep.locations[num(&e[1]) as usize];
                    assert!(
                        (c.offset_start_ns as f64 - num(&e[2])).abs() <= num(&e[3]),
                        "{name}: {what}: {c:?}"
                    );
                }
                "drift" => {
                    let c = &rep.locations[num(&e[1]) as usize];
                    assert!((c.drift_ppm - num(&e[2])).abs() <= num(&e[3]), "{name}: {what}: {c:?}");
                }
                "wall" => {
                    let w = refs[&at(&e[1])].1.wall;
                    assert!((w as f64 - num(&e[2])).abs() <= num(&e[3]), "{name}: {what}: got {w}");
                }
                "method" => assert_eq!(rep.locations[num(&e[1]) as usize].method, e[2], "{name}: {what}"),
                "clocks" => assert_eq!(rep.choice.clocks, e[1], "{name}: {what}: {:?}", rep.choice),
                "violations-with-offsets" => assert_eq!(
                    rep.choice.violations_with_offsets.total(),
                    num(&e[1]) as u64,
                    "{name}: {what}"
                ),
                _ => {}
            }
        }
        checked += 1;
    }
    assert!(checked >= 2, "found the align traces");
}

/// spoor-order --align on every hand-written trace: the bytes and reports of spoor-align
/// piped into spoor-order, and the same error where either fails (a cycle).
#[test]
fn align_and_order_in_one_gives_what_the_two_stages_give() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut same, mut failed) = (0, 0);
    for path in files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = Input::from_bytes(&name, std::fs::read(&path).unwrap());
        let opts = AlignOptions::default();
        let mut aligned = Vec::new();
        let arep = align::align(&input, &opts, &mut aligned);
        let mut two = Vec::new();
        let two_rep = arep.and_then(|arep| {
            order::order(&Input::from_bytes(&name, aligned), &mut two, &OrderOptions::default())
                .map(|o| (arep, o))
        });
        let mut one = Vec::new();
        let dir = || Ok(tmp.path().to_owned());
        let one_rep = align::align_and_order(
            &input,
            &opts,
            &OrderOptions::default(),
            &dir,
            &mut one,
            &spoor_model::Silent,
        );
        match (one_rep, two_rep) {
            (Ok(done), Ok((arep, orep))) => {
                assert!(one == two, "{name}: the traces differ");
                assert_eq!(serde_json::to_value(&done.align).unwrap(), serde_json::to_value(&arep).unwrap());
                assert_eq!(done.order.to_json(), orep.to_json(), "{name}");
                same += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "{name}");
                failed += 1;
            }
            (a, b) => panic!("{name}: in one {:?}, in two {:?}", a.err(), b.err()),
        }
    }
    assert!(same >= 8 && failed >= 1, "{same} alike, {failed} failing alike");
}

/// Every event `order_to` (`align_and_order_to` with `align`) hands on, as briefs; no
/// block is larger than the blocks of a written trace.
fn handed_on(input: &Input, align: Option<&tempfile::TempDir>) -> spoor_order::Result<Vec<Brief>> {
    let mut all = Vec::new();
    let mut hand_on = |briefs: &[Brief]| {
        assert!(briefs.len() <= spoor_format::GLOBAL_ORDER_BLOCK_EVENTS, "a block of {}", briefs.len());
        all.extend_from_slice(briefs);
        Ok(())
    };
    let sink = Sink::briefs(&mut hand_on);
    match align {
        None => order::order_to(input, sink, &spoor_model::Silent).map(|_| ()),
        Some(tmp) => {
            let dir = || Ok(tmp.path().to_owned());
            align::align_and_order_to(input, &AlignOptions::default(), &dir, sink, &spoor_model::Silent)
                .map(|_| ())
        }
    }?;
    Ok(all)
}

/// Handing the ordered events on gives, on every hand-written trace, the briefs of the
/// trace spoor-order writes (aligned first or not), and the same error where it fails.
#[test]
fn ordered_events_handed_on_are_those_of_the_written_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut same, mut failed) = (0, 0);
    for path in files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = Input::from_bytes(&name, std::fs::read(&path).unwrap());
        for align in [None, Some(&tmp)] {
            let mut written = Vec::new();
            let wrote = match align {
                None => order::order(&input, &mut written, &OrderOptions::default()).map(|_| ()),
                Some(_) => {
                    let dir = || Ok(tmp.path().to_owned());
                    let opts = (AlignOptions::default(), OrderOptions::default());
                    align::align_and_order(&input, &opts.0, &opts.1, &dir, &mut written, &spoor_model::Silent)
                        .map(|_| ())
                }
            };
            match (handed_on(&input, align), wrote) {
                (Ok(briefs), Ok(())) => {
                    let expected: Vec<Brief> = read(written).iter().map(Brief::of).collect();
                    assert!(briefs == expected, "{name} (aligned: {}): the events differ", align.is_some());
                    same += 1;
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{name}");
                    failed += 1;
                }
                (a, b) => panic!("{name}: handed on {:?}, written {:?}", a.err(), b.err()),
            }
        }
    }
    assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none(), "a copy was left behind");
    assert!(same >= 16 && failed >= 2, "{same} alike, {failed} failing alike");
}

/// A consumer that stops the ordering gets its own error back, named as it gave it.
#[test]
fn a_consumer_that_stops_ends_the_ordering_with_its_error() {
    let path = files().into_iter().next().unwrap();
    let input = Input::from_bytes("t", std::fs::read(&path).unwrap());
    let mut hand_on = |_: &[Brief]| Err("the graph is full".into());
    let err = order::order_to(&input, Sink::briefs(&mut hand_on), &spoor_model::Silent).unwrap_err();
    assert_eq!(err.to_string(), "the graph is full");
}
