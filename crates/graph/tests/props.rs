//! Invariants of formats/pag.md on synthetic workloads, and property tests of the
//! longest-path algorithms against brute force on random small graphs.

use proptest::prelude::*;
use spoor_graph::cp::{self, Pred};
use spoor_graph::near::longest_paths;
use spoor_graph::pag::{ArcKind, Context, NONE, VIRTUAL};
use spoor_graph::{critical_path, file, whatif, CpOptions, Mode, Pag, Scope};
use spoor_model::Definitions;
use spoor_synth::{Spec, Workload};
use spoor_testkit::{ordered_bytes, pag_of_bytes, synth_bytes};

fn spec(w: Workload, procs: u32, steps: u64, seed: u64, apps: u32) -> Spec {
    Spec { procs: procs.max(w.min_procs()), steps, seed, apps, imbalance: 0.5, ..Spec::new(w) }
}

fn elapsed(pag: &Pag) -> i64 {
    let walls = (0..pag.nodes()).filter(|&i| pag.loc[i] != NONE).map(|i| pag.wall[i]);
    walls.clone().max().unwrap() - walls.min().unwrap()
}

#[test]
fn wall_critical_path_equals_elapsed_time_on_every_workload() {
    for w in Workload::ALL {
        for seed in 1..4 {
            let s = spec(w, 5, 6, seed, 1);
            let pag = pag_of_bytes("synth", synth_bytes(&s), Mode::Wall);
            let path = critical_path(&pag, &CpOptions::default());
            assert_eq!(path.length, elapsed(&pag), "{w:?} seed {seed}");
            assert_eq!(path.steps.iter().map(|s| s.weight).sum::<i64>(), path.length);
        }
    }
}

#[test]
fn cpu_path_is_never_longer_than_wall_and_zeroing_never_lengthens() {
    for w in Workload::ALL {
        let s = spec(w, 6, 8, 7, 1);
        let bytes = synth_bytes(&s);
        let cpu = pag_of_bytes("synth", bytes.clone(), Mode::Cpu);
        let wall = pag_of_bytes("synth", bytes, Mode::Wall);
        let p = critical_path(&cpu, &CpOptions::default());
        assert!(p.length <= critical_path(&wall, &CpOptions::default()).length, "{w:?}");
        assert!(p.length > 0, "{w:?}");
        for z in whatif::zeroing(&cpu, &CpOptions::default(), &p, 16) {
            assert!(z.length_ns <= p.length, "{w:?}: zeroing {} lengthened the path", z.procedure);
            assert!(
                z.length_ns >= p.length - z.on_path_ns,
                "{w:?}: zeroing {} saved more than it had",
                z.procedure
            );
            // Inclusive zeroing takes off a superset of the arcs: it saves at least as
            // much, and no more than the procedure's inclusive time on the path.
            assert!(z.inclusive_on_path_ns >= z.on_path_ns, "{w:?}: {z:?}");
            assert!(z.inclusive_length_ns <= z.length_ns, "{w:?}: {z:?}");
            assert!(z.inclusive_length_ns >= p.length - z.inclusive_on_path_ns, "{w:?}: {z:?}");
        }
    }
}

#[test]
fn intra_path_of_an_application_alone_is_its_global_path_and_apps_do_not_mix() {
    for w in Workload::ALL {
        let alone = pag_of_bytes("synth", synth_bytes(&spec(w, 4, 5, 3, 1)), Mode::Cpu);
        let global = critical_path(&alone, &CpOptions::default());
        for scope in [Scope::Intra(0), Scope::Inter(0)] {
            let o = CpOptions { scope: Some(scope), ..CpOptions::default() };
            assert_eq!(critical_path(&alone, &o), global, "{w:?} {scope:?}");
        }
        // Two independent copies: each one's intra and inter paths stay inside it, and
        // the global path is the longer of the two.
        let two = pag_of_bytes("synth", synth_bytes(&spec(w, 4, 5, 3, 2)), Mode::Cpu);
        let mut lengths = Vec::new();
        for app in 0..2 {
            let intra =
                critical_path(&two, &CpOptions { scope: Some(Scope::Intra(app)), ..CpOptions::default() });
            let inter =
                critical_path(&two, &CpOptions { scope: Some(Scope::Inter(app)), ..CpOptions::default() });
            assert_eq!(intra, inter, "{w:?} app {app}");
            assert!(intra.steps.iter().all(|s| {
                let l = two.loc[s.node as usize];
                l == NONE || two.app_of(l) == app
            }));
            lengths.push(intra.length);
        }
        assert_eq!(
            critical_path(&two, &CpOptions::default()).length,
            lengths.into_iter().max().unwrap(),
            "{w:?}"
        );
    }
}

/// Splitting the compute procedure into kernels moves no event in time: the critical
/// paths keep their lengths, and the kernels are the procedures zeroing ranks first.
#[test]
fn kernels_keep_the_paths_and_are_zeroed_one_by_one() {
    for w in [Workload::Stencil, Workload::Barrier, Workload::Spa] {
        let one = spec(w, 6, 8, 3, 1);
        let split = Spec { kernels: 16, ..one.clone() };
        for mode in [Mode::Cpu, Mode::Wall] {
            let a = pag_of_bytes("one", synth_bytes(&one), mode);
            let b = pag_of_bytes("split", synth_bytes(&split), mode);
            let pa = critical_path(&a, &CpOptions::default());
            let pb = critical_path(&b, &CpOptions::default());
            assert_eq!(pa.length, pb.length, "{w:?} {mode:?}");
            if mode == Mode::Wall {
                continue;
            }
            let z = whatif::zeroing(&b, &CpOptions::default(), &pb, 16);
            // The 16 with the most exclusive time are leaves (nothing called below them);
            // the callers the inclusive ranking adds have more inclusive than exclusive time.
            let z: Vec<_> = z.into_iter().filter(|z| z.inclusive_on_path_ns == z.on_path_ns).collect();
            assert_eq!(z.len(), 16, "{w:?}");
            // The kernels in order of their shares (spa's two server procedures take more).
            let kernels: Vec<u32> = z
                .iter()
                .filter_map(|z| z.procedure.rsplit_once('_').and_then(|(_, i)| i.parse().ok()))
                .collect();
            assert!(
                kernels.len() >= 14 && kernels.iter().copied().eq(1..=kernels.len() as u32),
                "{w:?}: {z:?}"
            );
            for z in &z {
                assert!(z.length_ns <= pb.length && z.length_ns >= pb.length - z.on_path_ns, "{w:?}: {z:?}");
            }
            assert!(z.windows(2).all(|p| p[0].on_path_ns >= p[1].on_path_ns), "{w:?}");
        }
    }
}

#[test]
fn results_are_identical_on_one_and_many_threads() {
    for kernels in [1, 16] {
        results_are_identical_on_one_and_many_threads_with(kernels);
    }
}

fn results_are_identical_on_one_and_many_threads_with(kernels: u32) {
    let bytes = synth_bytes(&Spec { procs: 16, steps: 40, kernels, ..Spec::new(Workload::Stencil) });
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let pag = pag_of_bytes("synth", bytes.clone(), Mode::Cpu);
            let p = critical_path(&pag, &CpOptions::default());
            let z = whatif::zeroing(&pag, &CpOptions::default(), &p, 16);
            let mut f = Vec::new();
            file::write(&mut f, &pag).unwrap();
            (f, p, z)
        })
    };
    assert_eq!(run(1), run(4));
}

#[test]
fn pag_files_round_trip_and_damage_is_an_error_never_a_panic() {
    let pag = pag_of_bytes("synth", synth_bytes(&spec(Workload::Spa, 4, 3, 1, 1)), Mode::Cpu);
    let mut bytes = Vec::new();
    file::write(&mut bytes, &pag).unwrap();
    let back = file::read("f.pag", &bytes[..]).unwrap();
    assert_eq!(
        (&back.loc, &back.prev, &back.wall, &back.weight, &back.ctx, &back.kind),
        (&pag.loc, &pag.prev, &pag.wall, &pag.weight, &pag.ctx, &pag.kind)
    );
    assert_eq!(
        (&back.arc_to, &back.arc_from, &back.arc_weight),
        (&pag.arc_to, &pag.arc_from, &pag.arc_weight)
    );
    assert_eq!(
        (&back.arc_kind, &back.arc_bytes, &back.contexts),
        (&pag.arc_kind, &pag.arc_bytes, &pag.contexts)
    );
    assert_eq!(critical_path(&back, &CpOptions::default()), critical_path(&pag, &CpOptions::default()));
    // The server's receives from any source (the WILDCARDS chunk).
    assert!(!pag.wildcard_receives.is_empty());
    assert_eq!(back.wildcard_receives, pag.wildcard_receives);
    for bad in [vec![pag.nodes() as u32], vec![3, 3]] {
        let mut wrong = Vec::new();
        file::write(&mut wrong, &Pag { wildcard_receives: bad.clone(), ..back.clone() }).unwrap();
        let e = file::read("w.pag", &wrong[..]).err().unwrap_or_else(|| panic!("{bad:?} was accepted"));
        let e = e.source().map_or(e.to_string(), |s| s.to_string());
        assert!(e.contains("w.pag") && e.contains("a wildcard receive names a node"), "{e}");
    }
    for cut in 0..bytes.len() {
        let e = file::read("f.pag", &bytes[..cut])
            .err()
            .unwrap_or_else(|| panic!("a PAG cut at {cut} was accepted"));
        assert!(e.source().map_or(e.to_string(), |s| s.to_string()).contains("f.pag"), "{e}");
    }
    for at in (0..bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        // Header fields other than the magic, version and mode are free; the rest is checksummed.
        if let Ok(p) = file::read("f.pag", &b[..]) {
            assert!((8..24).contains(&at), "a flipped bit at {at} went unnoticed");
            let _ = critical_path(&p, &CpOptions::default());
        }
    }
}

use std::error::Error as _;

// ---- random graphs against brute force ----

/// A random PAG: `locs` locations, nodes placed on them in order, some virtual nodes,
/// remote arcs from earlier to later nodes.
fn random_pag(locs: u32, spec: &[(u32, u8, i64)], arcs: &[(u8, u8, i64)]) -> Pag {
    let mut defs = Definitions::default();
    let app = defs.add_app("a");
    let m = defs.add_machine("m");
    for l in 0..locs {
        let p = defs.add_process(&format!("p{l}"), app, m, l);
        defs.add_location(&format!("p{l}"), p, 0);
    }
    let mut pag =
        Pag { defs, mode: Mode::Cpu, contexts: vec![Context { parent: NONE, proc: NONE }], ..Pag::default() };
    let mut last = vec![NONE; locs as usize];
    for (i, &(l, virt, w)) in spec.iter().enumerate() {
        let virtual_node = virt == 0 && i > 0;
        let l = if virtual_node { NONE } else { l % locs };
        pag.loc.push(l);
        pag.prev.push(if l == NONE { NONE } else { last[l as usize] });
        pag.wall.push(i as i64);
        pag.weight.push(if l == NONE { 0 } else { w });
        pag.ctx.push(0);
        pag.kind.push(if l == NONE { VIRTUAL } else { 4 });
        if l != NONE {
            last[l as usize] = i as u32;
        }
    }
    let n = spec.len();
    let mut list: Vec<(u32, u32, i64)> = arcs
        .iter()
        .filter_map(|&(a, b, w)| {
            let (a, b) = (a as usize % n, b as usize % n);
            (a < b).then_some((b as u32, a as u32, w))
        })
        .collect();
    list.sort_by_key(|a| (a.0, a.1));
    list.dedup_by_key(|a| (a.0, a.1));
    for (to, from, w) in list {
        pag.arc_to.push(to);
        pag.arc_from.push(from);
        pag.arc_weight.push(w);
        pag.arc_kind.push(ArcKind::Message);
        pag.arc_bytes.push(0);
        pag.arc_op.push(0);
    }
    pag
}

/// Every path from the source, by brute force: (end node, length) of each.
fn all_paths(pag: &Pag) -> Vec<(u32, i64)> {
    fn extend(pag: &Pag, node: u32, len: i64, out: &mut Vec<(u32, i64)>) {
        if pag.loc[node as usize] != NONE {
            out.push((node, len));
        }
        for j in node as usize + 1..pag.nodes() {
            if pag.prev[j] == node {
                extend(pag, j as u32, len + pag.weight[j], out);
            }
        }
        for a in 0..pag.arcs() {
            if pag.arc_from[a] == node {
                extend(pag, pag.arc_to[a], len + pag.arc_weight[a], out);
            }
        }
    }
    let mut out = Vec::new();
    for i in 0..pag.nodes() {
        if pag.loc[i] != NONE && pag.prev[i] == NONE {
            extend(pag, i as u32, pag.weight[i], &mut out);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn longest_path_and_near_paths_match_brute_force(
        locs in 1u32..4,
        spec in prop::collection::vec((0u32..4, 0u8..5, 0i64..20), 1..11),
        arcs in prop::collection::vec((0u8..11, 0u8..11, 0i64..20), 0..10),
        k in 1usize..6,
    ) {
        let pag = random_pag(locs, &spec, &arcs);
        let paths = all_paths(&pag);
        let best = paths.iter().map(|p| p.1).max().unwrap_or(0);
        let path = critical_path(&pag, &CpOptions::default());
        prop_assert_eq!(path.length, best);
        prop_assert_eq!(path.steps.iter().map(|s| s.weight).sum::<i64>(), path.length);
        if let Some(first) = path.steps.first() {
            prop_assert_eq!(first.pred, Pred::Source);
        }
        // Each step leads on from the one before.
        for w in path.steps.windows(2) {
            prop_assert_eq!(w[1].from(&pag), w[0].node);
        }
        // Near paths: the k longest paths that end at a location's last node.
        let mut last = vec![NONE; locs as usize];
        for i in 0..pag.nodes() {
            if pag.loc[i] != NONE { last[pag.loc[i] as usize] = i as u32; }
        }
        let mut ends: Vec<i64> = paths.iter().filter(|p| last.contains(&p.0)).map(|p| p.1).collect();
        ends.sort_unstable_by(|a, b| b.cmp(a));
        ends.truncate(k);
        let near: Vec<i64> = longest_paths(&pag, &CpOptions::default(), k).iter().map(|p| p.length_ns).collect();
        prop_assert_eq!(near, ends);
        // Zeroing everything the root context holds (nothing) changes nothing.
        prop_assert_eq!(cp::length(&pag, &CpOptions::default()), best);
        // The pass that holds only what is in flight finds the same length.
        let lengths = cp::lengths(&pag, &[&CpOptions::default()], &pag.remote_arcs_out());
        prop_assert_eq!(lengths.ns, vec![best]);
        prop_assert_eq!(lengths.full_passes, 0);
    }
}

#[test]
fn lengths_held_in_flight_are_those_of_the_full_pass_under_every_option() {
    for w in Workload::ALL {
        let pag = pag_of_bytes("synth", synth_bytes(&spec(w, 6, 8, 5, 2)), Mode::Cpu);
        let (first, last) = pag.activity_span().unwrap();
        let mut procs: Vec<u32> = pag.contexts.iter().map(|c| c.proc).filter(|&p| p != NONE).collect();
        procs.sort_unstable();
        procs.dedup();
        procs.truncate(3);
        assert!(!procs.is_empty(), "{w:?}");
        let mut options = vec![
            CpOptions::default(),
            CpOptions {
                window: Some((first + (last - first) / 3, last - (last - first) / 4)),
                ..CpOptions::default()
            },
            CpOptions { scope: Some(Scope::Intra(0)), ..CpOptions::default() },
            CpOptions { scope: Some(Scope::Inter(1)), ..CpOptions::default() },
            CpOptions { message_weight: Some(0), ..CpOptions::default() },
            CpOptions { links: vec![(0, 1, None), (1, 2, Some(5))], ..CpOptions::default() },
        ];
        for &p in &procs {
            options.push(CpOptions { zero: vec![p], ..CpOptions::default() });
            options.push(CpOptions { zero: vec![p], zero_inclusive: true, ..CpOptions::default() });
            options.push(CpOptions {
                scale: vec![spoor_graph::Scale { loc: 1, proc: p, factor: 0.25 }],
                ..CpOptions::default()
            });
        }
        // All in one sweep, and each alone.
        let arcs_out = pag.remote_arcs_out();
        let each: Vec<&CpOptions> = options.iter().collect();
        let full: Vec<i64> = options.iter().map(|o| cp::length(&pag, o)).collect();
        let swept = cp::lengths(&pag, &each, &arcs_out);
        assert_eq!((&swept.ns, swept.full_passes), (&full, 0), "{w:?} {options:?}");
        for (o, want) in each.iter().zip(&full) {
            assert_eq!(cp::lengths(&pag, &[o], &arcs_out).ns, [*want], "{w:?} {o:?}");
        }
    }
    // A node whose local predecessor lies further back than the pass keeps: it falls
    // back to the full pass and still agrees.
    let spec: Vec<(u32, u8, i64)> = (0..12).map(|i| (0, 1, i as i64 + 1)).collect();
    let mut pag = random_pag(1, &spec, &[(0, 11, 100)]);
    pag.prev[11] = 2;
    // Node 10 ends the chain at 1 + ... + 11 = 66; node 11 by the arc: 1 + 100.
    let full = cp::length(&pag, &CpOptions::default());
    assert_eq!(full, 101);
    let swept = cp::lengths(&pag, &[&CpOptions::default(), &CpOptions::default()], &pag.remote_arcs_out());
    assert_eq!((swept.ns, swept.full_passes), (vec![full, full], 2));
}

#[test]
fn lanes_made_while_building_are_the_lengths_of_the_sweeps() {
    for w in Workload::ALL {
        for (seed, apps) in [(5, 2), (7, 1)] {
            let ordered = ordered_bytes("t", synth_bytes(&spec(w, 6, 8, seed, apps)));
            let pag = pag_of_bytes("synth", ordered.clone(), Mode::Cpu);
            let mut procs: Vec<u32> = pag.contexts.iter().map(|c| c.proc).filter(|&p| p != NONE).collect();
            procs.sort_unstable();
            procs.dedup();
            let mut options = vec![
                CpOptions::default(),
                CpOptions { message_weight: Some(0), ..CpOptions::default() },
                CpOptions { links: vec![(0, 1, None), (1, 2, Some(5))], ..CpOptions::default() },
                CpOptions { links: vec![(2, 3, Some(0))], message_weight: Some(7), ..CpOptions::default() },
            ];
            for &p in procs.iter().take(4) {
                options.push(CpOptions { zero: vec![p], ..CpOptions::default() });
                let scale = [(1, 0.25), (2, 0.0), (1, 3.0)].map(|(loc, factor)| spoor_graph::Scale {
                    loc,
                    proc: p,
                    factor,
                });
                options.push(CpOptions { scale: scale.to_vec(), ..CpOptions::default() });
            }
            let each: Vec<&CpOptions> = options.iter().collect();
            let swept = cp::lengths(&pag, &each, &pag.remote_arcs_out()).ns;
            let r = spoor_format::TraceReader::from_bytes("t", ordered.clone(), Default::default()).unwrap();
            let (built, made) = spoor_graph::build::build_with_lanes(r, Mode::Cpu, &options).unwrap();
            assert_eq!(built.nodes(), pag.nodes());
            let made = made.unwrap_or_else(|| panic!("{w:?}: no distances made"));
            assert_eq!(made.lanes(), Some(&swept[..]), "{w:?} seed {seed}: {options:?}");
            // The same lengths without keeping the graph, and its message arcs.
            let r = spoor_format::TraceReader::from_bytes("t", ordered.clone(), Default::default()).unwrap();
            let (only, messages) =
                spoor_graph::build::lengths_only(r, Mode::Cpu, &options, &spoor_model::Silent)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{w:?}: no lengths"));
            assert_eq!(only.lanes(), made.lanes(), "{w:?} seed {seed}");
            let base = cp::length(&pag, &CpOptions::default());
            assert_eq!(cp::length_with(&pag, &CpOptions::default(), Some(&only)), base, "{w:?} seed {seed}");
            let arcs: Vec<(u32, u32, i64)> = (0..built.arcs())
                .filter(|&a| built.arc_kind[a] == ArcKind::Message)
                .map(|a| {
                    (
                        built.loc[built.arc_from[a] as usize],
                        built.loc[built.arc_to[a] as usize],
                        built.arc_weight[a],
                    )
                })
                .collect();
            assert_eq!(messages, arcs, "{w:?} seed {seed}");
        }
    }
    // What lanes cannot give (a window, a scope, zeroing with callees, wall mode) they
    // do not guess: the caller sweeps.
    let ordered = ordered_bytes("t", synth_bytes(&spec(Workload::ALL[0], 4, 4, 1, 1)));
    let read = || spoor_format::TraceReader::from_bytes("t", ordered.clone(), Default::default()).unwrap();
    for o in [
        CpOptions { window: Some((0, 1)), ..CpOptions::default() },
        CpOptions { scope: Some(Scope::Intra(0)), ..CpOptions::default() },
        CpOptions { zero: vec![1], zero_inclusive: true, ..CpOptions::default() },
    ] {
        let (_, made) =
            spoor_graph::build::build_with_lanes(read(), Mode::Cpu, std::slice::from_ref(&o)).unwrap();
        assert_eq!(made.expect("distances").lanes(), None, "{o:?}");
    }
    let (_, made) =
        spoor_graph::build::build_with_lanes(read(), Mode::Wall, &[CpOptions::default()]).unwrap();
    assert_eq!(made.expect("distances").lanes(), None);
    // Lengths that need the graph kept (a source clamped by a later t0) are not given.
    let text = "spoor-text 1\napp 0 x\nmachine 0 m\nprocess 0 a app=0 machine=0 rank=0\n\
                process 1 b app=0 machine=0 rank=1\nlocation 0 a process=0 thread=0\n\
                location 1 b process=1 thread=0\ncomm 0 w members=0,1\n\
                1 100 90 send to=0 tag=1 bytes=8\n0 50 0 recv_end from=1 tag=1 bytes=8\n0 300 250 process_end\n";
    let ordered = ordered_bytes("t", text.as_bytes().to_vec());
    let r = spoor_format::TraceReader::from_bytes("t", ordered, Default::default()).unwrap();
    assert!(spoor_graph::build::lengths_only(r, Mode::Cpu, &[], &spoor_model::Silent).unwrap().is_none());
}

/// The path from the distances made while building, or `None` when the build gave
/// none, beside the path of the separate forward pass.
fn paths_both_ways(bytes: &[u8], mode: Mode) -> (Option<cp::CriticalPath>, cp::CriticalPath) {
    let ordered = ordered_bytes("t", bytes.to_vec());
    let r = spoor_format::TraceReader::from_bytes("t", ordered, Default::default()).unwrap();
    let (pag, made) = spoor_graph::build::build_with_distances(r, mode).unwrap();
    let opts = CpOptions::default();
    let plain = critical_path(&pag, &opts);
    let made = made.map(|d| {
        assert_eq!(cp::length_with(&pag, &opts, Some(&d)), plain.length);
        cp::critical_path_with(&pag, &opts, Some(&d))
    });
    (made, plain)
}

#[test]
fn distances_made_while_building_give_the_forward_pass_path() {
    for w in Workload::ALL {
        for (seed, apps) in [(1, 1), (2, 1), (3, 2)] {
            let bytes = synth_bytes(&spec(w, 5, 6, seed, apps));
            for mode in [Mode::Cpu, Mode::Wall] {
                let (made, plain) = paths_both_ways(&bytes, mode);
                let made = made.unwrap_or_else(|| panic!("{w:?} {mode:?}: no distances made"));
                assert_eq!(made, plain, "{w:?} seed {seed} apps {apps} {mode:?}");
            }
        }
    }
}

#[test]
fn distances_made_while_building_are_dropped_when_a_later_t0_clamps_a_source() {
    // Location 1's first event (at 100 ns, 90 ns of CPU before it) is read before
    // location 0's (at 50 ns: a receive whose clock is behind its send's), so when it
    // is read the elapsed time since the earliest event seems 0, not 50: the build
    // cannot know the source arc's weight, so it gives no distances; wall mode shifts.
    let text = "spoor-text 1\napp 0 x\nmachine 0 m\nprocess 0 a app=0 machine=0 rank=0\n\
                process 1 b app=0 machine=0 rank=1\nlocation 0 a process=0 thread=0\n\
                location 1 b process=1 thread=0\ncomm 0 w members=0,1\n\
                1 100 90 send to=0 tag=1 bytes=8\n0 50 0 recv_end from=1 tag=1 bytes=8\n0 300 250 process_end\n";
    let (made, plain) = paths_both_ways(text.as_bytes(), Mode::Cpu);
    assert!(made.is_none(), "the provisional source weight was wrong but distances were kept");
    // The source arc clamped to the 50 ns since t0, the message (0: the receive's clock
    // is behind), then 250 ns of location 0's CPU; wall mode measures the same arcs.
    assert_eq!(plain.length, 50 + 250);
    let (made, plain) = paths_both_ways(text.as_bytes(), Mode::Wall);
    assert_eq!(made.expect("wall-mode distances"), plain);
    assert_eq!(plain.length, 50 + 250);
}

/// The imbalance impact of injected extra work: 3 ms of `late` on one rank of four in
/// each of 5 barrier steps is on the cpu-mode path (15 ms) against a mean of 15 / 4 ms
/// per process, an impact of 11.25 ms; the balanced compute has none.
#[test]
fn imbalance_impact_is_the_injected_work_beyond_its_mean() {
    let extra = vec![spoor_synth::ExtraWork { proc: "late".into(), ranks: vec![2], ns: 3_000_000 }];
    let s = Spec { procs: 4, steps: 5, imbalance: 0.0, extra, ..Spec::new(Workload::Barrier) };
    let pag = spoor_testkit::synth_pag(&s, Mode::Cpu);
    let path = critical_path(&pag, &CpOptions::default());
    let rows = spoor_graph::profile::profile(&pag, &path, spoor_graph::profile::Level::Imbalance);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].name.as_str(), rows[0].time_ns), ("late", 11_250_000));
    // Without the injection nothing is imbalanced.
    let even = spoor_testkit::synth_pag(&Spec { extra: Vec::new(), ..s }, Mode::Cpu);
    let path = critical_path(&even, &CpOptions::default());
    assert!(spoor_graph::profile::profile(&even, &path, spoor_graph::profile::Level::Imbalance).is_empty());
}

/// A slow link between ranks 1 and 2 of a pipeline (3 ms more a message): the wall-mode
/// path, which carries the last item across every link, is exactly 3 ms longer, and
/// the 3 ms are on the path's message arcs from node1 to node2.
#[test]
fn a_slow_link_lengthens_the_path_by_its_delay_on_that_link() {
    let s = Spec { procs: 4, steps: 6, imbalance: 0.0, ..Spec::new(Workload::Pipeline) };
    let slow = Spec { slow_link: Some(spoor_synth::SlowLink { a: 1, b: 2, ns: 3_000_000 }), ..s.clone() };
    let link = |spec: &Spec| {
        let pag = spoor_testkit::synth_pag(spec, Mode::Wall);
        let path = critical_path(&pag, &CpOptions::default());
        let rows = spoor_graph::profile::profile(&pag, &path, spoor_graph::profile::Level::Message);
        let on_link = rows.iter().find(|r| r.name == "message node1 -> node2").map_or(0, |r| r.time_ns);
        (path.length, on_link)
    };
    let ((len0, link0), (len1, link1)) = (link(&s), link(&slow));
    assert_eq!(len1 - len0, 3_000_000);
    assert_eq!(link1 - link0, 3_000_000);
}

/// The sub-PAG of a stretch has the critical path spoor-cp finds in that window (the same
/// length, the same arcs), in both modes, on every workload; it is a PAG file that reads
/// back; in wall mode the path runs from the stretch's start to its last event; the whole
/// run's stretch is the graph itself.
#[test]
fn a_stretchs_sub_pag_has_the_windows_critical_path() {
    for w in Workload::ALL {
        for mode in [Mode::Cpu, Mode::Wall] {
            let pag = pag_of_bytes("synth", synth_bytes(&spec(w, 5, 6, 3, 1)), mode);
            let (first, last) = pag.activity_span().unwrap();
            let at = |f: f64| first + ((last - first) as f64 * f) as i64;
            for (a, b) in [(0.2, 0.7), (0.5, 1.0), (0.0, 0.3), (0.3, 0.45)] {
                let win = (at(a), at(b));
                assert!(pag.activity_in(win.0, win.1) > 0, "{w:?} {win:?}");
                let sub = pag.within(win);
                let windowed = critical_path(&pag, &CpOptions { window: Some(win), ..CpOptions::default() });
                let direct = critical_path(&sub, &CpOptions::default());
                let arcs = |g: &Pag, p: &spoor_graph::CriticalPath| -> Vec<(u32, i64, u8, i64)> {
                    p.steps
                        .iter()
                        .map(|s| {
                            (
                                g.loc[s.node as usize],
                                g.wall[s.node as usize],
                                g.kind[s.node as usize],
                                s.weight,
                            )
                        })
                        .collect()
                };
                assert_eq!(direct.length, windowed.length, "{w:?} {mode:?} {win:?}");
                assert_eq!(arcs(&sub, &direct), arcs(&pag, &windowed), "{w:?} {mode:?} {win:?}");
                let mut bytes = Vec::new();
                file::write(&mut bytes, &sub).unwrap();
                let back = file::read("sub.pag", &bytes[..]).unwrap();
                assert_eq!(critical_path(&back, &CpOptions::default()).length, direct.length);
                if mode == Mode::Wall {
                    let end = (0..pag.nodes())
                        .filter(|&i| pag.loc[i] != NONE && (win.0..=win.1).contains(&pag.wall[i]))
                        .map(|i| pag.wall[i])
                        .max()
                        .unwrap();
                    assert_eq!(direct.length, end - win.0, "{w:?} {win:?}");
                }
            }
            let whole = pag.within((first, last));
            assert_eq!((&whole.loc, &whole.prev, &whole.weight), (&pag.loc, &pag.prev, &pag.weight), "{w:?}");
            assert_eq!((&whole.arc_from, &whole.arc_to), (&pag.arc_from, &pag.arc_to), "{w:?}");
        }
    }
}
