//! Random definitions and events for property tests of the readers and writers.
#![allow(dead_code)]

use proptest::prelude::*;
use spoor_model::*;

pub fn arb_defs() -> impl Strategy<Value = Definitions> {
    (1usize..6, 1usize..4, prop::collection::vec("[a-zA-Z0-9_ \"\\\\=#é\n\t]{0,12}", 0..6)).prop_map(
        |(nloc, nmach, names)| {
            let mut d = Definitions::new();
            for n in &names {
                d.strings.intern(n);
            }
            let app = d.add_app("app");
            for m in 0..nmach {
                d.add_machine(&format!("node{m}"));
            }
            for l in 0..nloc {
                let p = d.add_process(&format!("rank {l}"), app, (l % nmach) as u32, l as u32);
                d.add_location(&format!("rank {l}/main"), p, 0);
            }
            d.add_comm("world", (0..nloc as u32).collect());
            d.add_metric("cache misses", "count");
            d.set_property("creator", "proptest");
            d
        },
    )
}

fn arb_kind(nloc: u32, nstr: u32) -> impl Strategy<Value = Kind> {
    let loc = 0..nloc;
    let oloc = prop::option::of(0..nloc);
    let s = 0..nstr.max(1);
    let op = prop::sample::select(CollOp::ALL.to_vec());
    let big = prop_oneof![0u64..100, any::<u64>()];
    prop_oneof![
        oloc.clone().prop_map(|parent| Kind::ProcessBegin { parent }),
        Just(Kind::ProcessEnd),
        oloc.clone().prop_map(|parent| Kind::ThreadBegin { parent }),
        Just(Kind::ThreadEnd),
        s.clone().prop_map(|proc| Kind::Enter { proc }),
        s.clone().prop_map(|proc| Kind::Leave { proc }),
        (loc.clone(), 0u32..3, any::<u32>(), big.clone()).prop_map(|(to, comm, tag, bytes)| Kind::Send {
            to,
            comm,
            tag,
            bytes
        }),
        (oloc.clone(), 0u32..3, prop::option::of(any::<u32>()))
            .prop_map(|(from, comm, tag)| Kind::RecvBegin { from, comm, tag }),
        (loc.clone(), 0u32..3, any::<u32>(), big.clone())
            .prop_map(|(from, comm, tag, bytes)| Kind::RecvEnd { from, comm, tag, bytes }),
        (loc.clone(), 0u32..3, any::<u32>(), big.clone(), any::<u64>())
            .prop_map(|(to, comm, tag, bytes, request)| Kind::Isend { to, comm, tag, bytes, request }),
        any::<u64>().prop_map(|request| Kind::IsendComplete { request }),
        (oloc.clone(), 0u32..3, prop::option::of(any::<u32>()), any::<u64>())
            .prop_map(|(from, comm, tag, request)| Kind::IrecvRequest { from, comm, tag, request }),
        (any::<u64>(), loc.clone(), 0u32..3, any::<u32>(), big.clone()).prop_map(
            |(request, from, comm, tag, bytes)| Kind::IrecvComplete { request, from, comm, tag, bytes }
        ),
        (op.clone(), 0u32..3).prop_map(|(op, comm)| Kind::CollBegin { op, comm }),
        (op, 0u32..3, oloc, big.clone(), big).prop_map(|(op, comm, root, sent, received)| Kind::CollEnd {
            op,
            comm,
            root,
            sent,
            received
        }),
        any::<u64>().prop_map(|lock| Kind::LockRequest { lock }),
        any::<u64>().prop_map(|lock| Kind::LockAcquire { lock }),
        any::<u64>().prop_map(|lock| Kind::LockRelease { lock }),
        s.clone().prop_map(|name| Kind::PhaseBegin { name }),
        s.prop_map(|name| Kind::PhaseEnd { name }),
        (0u32..1, prop_oneof![any::<f64>(), Just(f64::NAN), Just(-0.0), Just(f64::INFINITY)])
            .prop_map(|(metric, value)| Kind::Metric { metric, value }),
        (loc, any::<i64>(), any::<u64>()).prop_map(|(reference, offset, error)| Kind::ClockOffset {
            reference,
            offset,
            error
        }),
    ]
}

fn arb_ann(nloc: u32) -> impl Strategy<Value = Annotations> {
    prop_oneof![
        3 => Just(Annotations::default()),
        1 => (
            prop::option::of((0..nloc, any::<u64>()).prop_map(|(loc, index)| EventRef { loc, index })),
            prop::option::of(any::<u64>()),
            prop::option::of(any::<i64>())
        )
            .prop_map(|(partner, lamport, raw_wall)| Annotations { partner, lamport, raw_wall }),
    ]
}

/// Events whose locations, strings and metrics are defined in `defs`. Times are
/// random, anywhere in i64, including going backwards, so deltas wrap.
pub fn arb_events(defs: &Definitions, max: usize) -> impl Strategy<Value = Vec<Event>> {
    let nloc = defs.locations.len() as u32;
    let nstr = defs.strings.len() as u32;
    let time = prop_oneof![4 => 0i64..1_000_000, 1 => any::<i64>()];
    let cpu = prop::option::of(prop_oneof![4 => 0i64..1_000_000, 1 => any::<i64>()]);
    prop::collection::vec(
        (0..nloc, time, cpu, arb_kind(nloc, nstr), arb_ann(nloc))
            .prop_map(|(loc, wall, cpu, kind, ann)| Event { loc, wall, cpu, kind, ann }),
        0..max,
    )
}

/// Definitions and events consistent with them.
pub fn arb_trace(max: usize) -> impl Strategy<Value = (Definitions, Vec<Event>)> {
    arb_defs().prop_flat_map(move |d| {
        let ev = arb_events(&d, max);
        (Just(d), ev)
    })
}

/// f64 NaN != NaN: compare events with metric values by their bits.
pub fn same_events(a: &[Event], b: &[Event]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (&x.kind, &y.kind) {
            (Kind::Metric { metric: m1, value: v1 }, Kind::Metric { metric: m2, value: v2 }) => {
                m1 == m2
                    && v1.to_bits() == v2.to_bits()
                    && x.loc == y.loc
                    && x.wall == y.wall
                    && x.cpu == y.cpu
                    && x.ann == y.ann
            }
            _ => x == y,
        })
}
