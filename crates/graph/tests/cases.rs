//! Critical paths of small traces worked out by hand (their header comments give the
//! arithmetic), and the invariants of formats/pag.md on synthetic workloads.

use spoor_graph::cp::{self, Pred};
use spoor_graph::pag::ArcKind;
use spoor_graph::profile::{profile, Level};
use spoor_graph::{critical_path, whatif, CpOptions, Mode, Pag, Scale, Scope};
use spoor_testkit::{late_sender_with_samples, ms, pag_of_bytes, pag_of_file};

fn opts(scope: Scope) -> CpOptions {
    CpOptions { scope: Some(scope), ..CpOptions::default() }
}

fn row(pag: &Pag, path: &spoor_graph::CriticalPath, level: Level, name: &str) -> i64 {
    profile(pag, path, level).iter().find(|r| r.name == name).map_or(0, |r| r.time_ns)
}

fn zero(pag: &Pag, name: &str) -> i64 {
    let id = pag.defs.strings.lookup(name).expect("procedure name");
    cp::length(pag, &CpOptions { zero: vec![id], ..CpOptions::default() })
}

#[test]
fn late_sender_wall_path_runs_through_the_late_senders_computation() {
    let pag = pag_of_file("late-sender.txt", Mode::Wall);
    let path = critical_path(&pag, &CpOptions::default());
    // Wall mode: the elapsed time from the first event (0) to the last (10.22 ms).
    assert_eq!(path.length, ms(10.22));
    assert_eq!(path.steps.iter().map(|s| s.weight).sum::<i64>(), path.length);
    assert_eq!(row(&pag, &path, Level::Procedure, "compute"), ms(10.0));
    assert_eq!(row(&pag, &path, Level::Process, "rank0"), ms(10.03));
    // Two messages of 50 us each (rank 0 to 1, rank 1 to 2) and 40 us of barrier.
    assert_eq!(row(&pag, &path, Level::Process, "(messages)"), ms(0.1));
    assert_eq!(row(&pag, &path, Level::Process, "(collectives)"), ms(0.04));
    let kinds: Vec<ArcKind> = path
        .steps
        .iter()
        .filter_map(|s| match s.pred {
            Pred::Arc(a) => Some(pag.arc_kind[a as usize]),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ArcKind::Message, ArcKind::Message, ArcKind::CollIn, ArcKind::CollOut]);
    // The path starts on rank 0, the late sender.
    assert_eq!(pag.loc[path.steps[0].node as usize], 0);
}

#[test]
fn late_sender_cpu_path_and_zeroing() {
    let pag = pag_of_file("late-sender.txt", Mode::Cpu);
    let path = critical_path(&pag, &CpOptions::default());
    assert_eq!(path.length, ms(10.2));
    assert_eq!(row(&pag, &path, Level::Procedure, "compute"), ms(9.98));
    // Without compute, rank 1's own 1.98 ms before its receive decides: 2.13 ms.
    assert_eq!(zero(&pag, "compute"), ms(2.13));
    assert_eq!(zero(&pag, "main"), ms(10.14));
}

#[test]
fn late_sender_cpu_path_with_a_procedure_scaled_on_one_location_and_a_link_made_fast() {
    let pag = pag_of_file("late-sender.txt", Mode::Cpu);
    let compute = pag.defs.strings.lookup("compute").expect("procedure name");
    let scaled = |loc, factor| {
        let scale = vec![Scale { loc, proc: compute, factor }];
        cp::length(&pag, &CpOptions { scale, ..CpOptions::default() })
    };
    // Only rank 0 computes: removing it there is zeroing it; halving it takes 4.99 ms off
    // the 10.2 ms path; scaling it where it never runs changes nothing.
    assert_eq!(scaled(0, 0.0), zero(&pag, "compute"));
    assert_eq!(scaled(0, 0.5), ms(5.21));
    assert_eq!(scaled(1, 0.0), ms(10.2));
    // The 50 us message from rank 0 to rank 1 made free, named either way round.
    for link in [(0, 1, Some(0)), (1, 0, Some(0))] {
        assert_eq!(cp::length(&pag, &CpOptions { links: vec![link], ..CpOptions::default() }), ms(10.15));
    }
    // Both messages free (50 us each): an ideal network. Rank 1 now reaches the barrier
    // last (10.01 + 0.02 + 0.02 ms against rank 2's 10.01 + 0.02 + 0.01), then the same
    // 0.06 ms to the end: 10.11 ms.
    assert_eq!(cp::length(&pag, &CpOptions { message_weight: Some(0), ..CpOptions::default() }), ms(10.11));
    // The first message at its whole time from send to receive end (10.03 to 10.08 ms:
    // the 50 us the path already has).
    assert_eq!(cp::length(&pag, &CpOptions { links: vec![(0, 1, None)], ..CpOptions::default() }), ms(10.2));
}

#[test]
fn spa_cpu_path_profile_and_zeroing_of_servbusy() {
    let pag = pag_of_file("cp/spa.txt", Mode::Cpu);
    let path = critical_path(&pag, &CpOptions::default());
    assert_eq!(path.length, ms(9.6));
    assert_eq!(row(&pag, &path, Level::Procedure, "servBusy2"), ms(6.0));
    assert_eq!(row(&pag, &path, Level::Procedure, "servBusy1"), ms(2.0));
    assert_eq!(zero(&pag, "servBusy1"), ms(7.95));
    assert_eq!(zero(&pag, "servBusy2"), ms(3.6));
    let z = whatif::zeroing(&pag, &CpOptions::default(), &path, 16);
    let got: Vec<(&str, i64, i64)> =
        z.iter().map(|z| (z.procedure.as_str(), z.on_path_ns, z.length_ns)).collect();
    assert_eq!(got, [("servBusy2", ms(6.0), ms(3.6)), ("servBusy1", ms(2.0), ms(7.95))]);
    // They call nothing: inclusive zeroing is the same.
    assert!(z.iter().all(|z| z.inclusive_length_ns == z.length_ns && z.inclusive_on_path_ns == z.on_path_ns));
    let wall = pag_of_file("cp/spa.txt", Mode::Wall);
    assert_eq!(critical_path(&wall, &CpOptions::default()).length, ms(9.7));
}

#[test]
fn zeroing_a_caller_inclusively_takes_off_its_helpers_time() {
    // testdata/cp/helper.txt: serve's work sits in the helper `work` it calls.
    let pag = pag_of_file("cp/helper.txt", Mode::Cpu);
    let path = critical_path(&pag, &CpOptions::default());
    assert_eq!(path.length, ms(4.4));
    assert_eq!(row(&pag, &path, Level::Procedure, "serve"), ms(0.1));
    assert_eq!(row(&pag, &path, Level::Inclusive, "serve"), ms(3.1));
    assert_eq!(zero(&pag, "serve"), ms(4.3));
    let serve = pag.defs.strings.lookup("serve").unwrap();
    let inclusive = CpOptions { zero: vec![serve], zero_inclusive: true, ..CpOptions::default() };
    assert_eq!(cp::length(&pag, &inclusive), ms(1.3));
    // `work` calls nothing: both zeroings are one.
    let z = whatif::zeroing(&pag, &CpOptions::default(), &path, 16);
    let got: Vec<(&str, i64, i64, i64, i64)> = z
        .iter()
        .map(|z| {
            (z.procedure.as_str(), z.on_path_ns, z.length_ns, z.inclusive_on_path_ns, z.inclusive_length_ns)
        })
        .collect();
    assert_eq!(
        got,
        [("serve", ms(0.1), ms(4.3), ms(3.1), ms(1.3)), ("work", ms(3.0), ms(1.4), ms(3.0), ms(1.4))]
    );
    // With --top 1 the caller still comes, by its inclusive time.
    let z = whatif::zeroing(&pag, &CpOptions::default(), &path, 1);
    assert_eq!(z.iter().map(|z| z.procedure.as_str()).collect::<Vec<_>>(), ["serve", "work"]);
}

#[test]
fn client_server_inter_application_paths() {
    let pag = pag_of_file("cp/client-server.txt", Mode::Cpu);
    let a = pag.app_id("clientA").unwrap();
    let b = pag.app_id("clientB").unwrap();
    assert_eq!(critical_path(&pag, &opts(Scope::Intra(a))).length, ms(2.11));
    let inter_a = critical_path(&pag, &opts(Scope::Inter(a)));
    assert_eq!(inter_a.length, ms(6.3));
    assert_eq!(row(&pag, &inter_a, Level::Application, "server"), ms(4.1));
    assert_eq!(row(&pag, &inter_a, Level::Application, "clientA"), ms(2.1));
    assert_eq!(row(&pag, &inter_a, Level::Procedure, "serveA"), ms(4.0));
    assert_eq!(row(&pag, &inter_a, Level::Message, "message ws1 -> db"), ms(0.05));
    assert_eq!(row(&pag, &inter_a, Level::Message, "message db -> ws1"), ms(0.05));
    // The server is not on B's inter-application path: B's answer came early.
    let inter_b = critical_path(&pag, &opts(Scope::Inter(b)));
    assert_eq!(inter_b.length, ms(9.09));
    assert_eq!(row(&pag, &inter_b, Level::Application, "server"), 0);
    assert_eq!(inter_b, critical_path(&pag, &opts(Scope::Intra(b))));
    assert_eq!(critical_path(&pag, &CpOptions::default()).length, ms(9.09));
    let wall = pag_of_file("cp/client-server.txt", Mode::Wall);
    assert_eq!(critical_path(&wall, &CpOptions::default()).length, ms(9.1));
    assert!(pag.app_id("nope").unwrap_err().to_string().contains("server, clientA, clientB"));
}

#[test]
fn barrier_waits_for_the_last_to_arrive() {
    for mode in [Mode::Cpu, Mode::Wall] {
        let pag = pag_of_file("cp/barrier.txt", mode);
        let path = critical_path(&pag, &CpOptions::default());
        assert_eq!(path.length, ms(6.3), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "rank1"), ms(6.1), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "(collectives)"), ms(0.15), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "rank2"), ms(0.05), "{mode:?}");
    }
}

#[test]
fn windows_and_phases_restrict_the_path() {
    let pag = pag_of_file("cp/spa.txt", Mode::Wall);
    // Wall mode in a window: from its start to the last event inside it (client 1's
    // end and the server's enter of servBusy2, both at 3.3 ms).
    let w = CpOptions { window: Some((ms(1.0), ms(5.0))), ..CpOptions::default() };
    assert_eq!(cp::length(&pag, &w), ms(2.3));
    // A phase is the window from its first begin to its last end.
    let text = "spoor-text 1\n\
        0 0 0 process_begin\n1 0 0 process_begin\n\
        0 1ms 1ms phase_begin solve\n1 2ms 2ms phase_begin solve\n\
        0 5ms 5ms phase_end solve\n1 4ms 4ms phase_end solve\n\
        0 9ms 9ms process_end\n1 9ms 9ms process_end\n";
    for mode in [Mode::Cpu, Mode::Wall] {
        let pag = pag_of_bytes("phases.txt", text.as_bytes().to_vec(), mode);
        assert_eq!(pag.phase_window("solve"), Some((ms(1.0), ms(5.0))));
        assert_eq!(pag.phase_names(), ["solve"]);
        let o = CpOptions { window: pag.phase_window("solve"), ..CpOptions::default() };
        // Location 0 from the phase's begin at 1 ms to its end at 5 ms.
        assert_eq!(cp::length(&pag, &o), ms(4.0), "{mode:?}");
        assert_eq!(cp::length(&pag, &CpOptions::default()), ms(9.0), "{mode:?}");
    }
}

#[test]
fn scan_ends_wait_for_the_lower_ranks_begins() {
    // Rank r's scan end waits for the begins of ranks below r (formats/pag.md): rank 2
    // begins at 2 ms but ends at 3.2 ms, after rank 1's begin at 3 ms. Both modes: the
    // path is rank 1's 3 ms, the collective arc of 0.2 ms, rank 2's last 0.1 ms.
    let text = "spoor-text 1\n\
        app 0 a\nmachine 0 m\n\
        process 0 r0 app=0 machine=0 rank=0\nprocess 1 r1 app=0 machine=0 rank=1\nprocess 2 r2 app=0 machine=0 rank=2\n\
        location 0 r0 process=0 thread=0\nlocation 1 r1 process=1 thread=0\nlocation 2 r2 process=2 thread=0\n\
        comm 0 world members=0,1,2\n\
        0 0 0 process_begin\n1 0 0 process_begin\n2 0 0 process_begin\n\
        0 1ms 1ms coll_begin scan\n0 1.1ms 1ms coll_end scan\n0 1.2ms 1.1ms process_end\n\
        2 2ms 2ms coll_begin scan\n\
        1 3ms 3ms coll_begin scan\n1 3.1ms 3ms coll_end scan\n1 3.2ms 3.1ms process_end\n\
        2 3.2ms 2ms coll_end scan\n2 3.3ms 2.1ms process_end\n";
    for mode in [Mode::Cpu, Mode::Wall] {
        let pag = pag_of_bytes("scan.txt", text.as_bytes().to_vec(), mode);
        let path = critical_path(&pag, &CpOptions::default());
        assert_eq!(path.length, ms(3.3), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "r1"), ms(3.0), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "(collectives)"), ms(0.2), "{mode:?}");
        assert_eq!(row(&pag, &path, Level::Process, "r2"), ms(0.1), "{mode:?}");
    }
}

#[test]
fn many_messages_in_flight_to_one_location_each_find_their_send() {
    // Rank 0 sends 150 messages (tag k, 1000 + k bytes, at k us) before rank 1 receives
    // any (at 1000 + k us): more than a location keeps in place, so the later ones wait
    // in the builder's map; each receive still gets the arc from its own send.
    let mut text = String::from(
        "spoor-text 1\napp 0 x\nmachine 0 m\nprocess 0 a app=0 machine=0 rank=0\n\
         process 1 b app=0 machine=0 rank=1\nlocation 0 a process=0 thread=0\n\
         location 1 b process=1 thread=0\ncomm 0 w members=0,1\n",
    );
    let n = 150;
    for k in 0..n {
        text += &format!("0 {}us {}us send to=1 tag={k} bytes={}\n", k + 1, k + 1, 1000 + k);
    }
    for k in 0..n {
        text += &format!("1 {}us {}us recv_end from=0 tag={k} bytes={}\n", 1000 + k, 1000 + k, 1000 + k);
    }
    let pag = pag_of_bytes("in-flight", text.into_bytes(), Mode::Wall);
    let messages: Vec<usize> = (0..pag.arcs()).filter(|&a| pag.arc_kind[a] == ArcKind::Message).collect();
    assert_eq!(messages.len(), n);
    for a in messages {
        let (from, to) = (pag.arc_from[a] as usize, pag.arc_to[a] as usize);
        let k = pag.arc_bytes[a] as i64 - 1000;
        assert_eq!((pag.loc[from], pag.loc[to]), (0, 1));
        assert_eq!(pag.wall[from], (k + 1) * 1000, "arc {a}: the send of tag {k}");
        assert_eq!(pag.wall[to], (1000 + k) * 1000, "arc {a}: the receive of tag {k}");
    }
    assert!(pag.notes.is_empty(), "{:?}", pag.notes);
    // Wall mode: the path is the elapsed time, from the first send (1 us) to the last
    // receive.
    assert_eq!(critical_path(&pag, &CpOptions::default()).length, (1000 + n as i64 - 1 - 1) * 1000);
}

#[test]
fn clock_offset_samples_are_never_on_a_path() {
    for (mode, length) in [(Mode::Wall, ms(10.22)), (Mode::Cpu, ms(10.2))] {
        let plain = pag_of_file("late-sender.txt", mode);
        let pag = pag_of_bytes("late-sender with samples", late_sender_with_samples(), mode);
        assert_eq!(pag.nodes(), plain.nodes() + 3, "a sample is a node");
        assert_eq!(pag.t0, 0, "{mode:?}: t0 is the first activity, not the sample before it");
        let path = critical_path(&pag, &CpOptions::default());
        assert_eq!(path.length, length, "{mode:?}: the samples add nothing");
        assert_eq!(path.length, critical_path(&plain, &CpOptions::default()).length);
        assert_eq!(path.steps.iter().map(|s| s.weight).sum::<i64>(), path.length);
        for s in &path.steps {
            assert_ne!(pag.kind_name(s.node), "clock_offset", "{mode:?}: a sample on the path");
        }
        for level in [Level::Procedure, Level::Process] {
            let plain_path = critical_path(&plain, &CpOptions::default());
            assert_eq!(
                profile(&pag, &path, level),
                profile(&plain, &plain_path, level),
                "{mode:?} {level:?}"
            );
        }
        assert_eq!(zero(&pag, "compute"), zero(&plain, "compute"), "{mode:?}");
        // No near path ends on or passes through a sample either: the same lengths.
        let near = |p: &Pag| spoor_graph::near::longest_paths(p, &CpOptions::default(), 5);
        assert_eq!(near(&pag), near(&plain), "{mode:?}");
    }
}

/// A PAG file whose chain runs through a sample (as spoor-pag wrote them before samples
/// were left out of paths) is refused, not read into paths that skip the rest of the
/// location.
#[test]
fn a_sample_as_local_predecessor_is_refused() {
    let mut pag = pag_of_bytes("late-sender with samples", late_sender_with_samples(), Mode::Cpu);
    let sample =
        (0..pag.nodes()).find(|&i| pag.kind_name(i as u32) == "clock_offset" && pag.loc[i] == 0).unwrap();
    let next = (sample + 1..pag.nodes()).find(|&j| pag.loc[j] == 0).unwrap();
    assert_eq!(pag.prev[next], pag.prev[sample], "the sample is a leaf");
    let mut ok = Vec::new();
    spoor_graph::file::write(&mut ok, &pag).unwrap();
    assert!(spoor_graph::file::read("ok.pag", &ok[..]).is_ok());
    pag.prev[next] = sample as u32;
    let mut bad = Vec::new();
    spoor_graph::file::write(&mut bad, &pag).unwrap();
    let err = match spoor_graph::file::read("bad.pag", &bad[..]) {
        Err(spoor_graph::Error::Format(e)) => e.to_string(),
        other => panic!("expected a format error, got {:?}", other.map(|_| ())),
    };
    assert!(
        err.contains("bad.pag")
            && err.contains(&format!("node {next}'s local predecessor {sample} is a clock-offset sample")),
        "{err}"
    );
}

#[test]
fn windows_and_phases_are_read_once_for_every_command_with_their_errors() {
    use spoor_graph::window::{finalize_start, init_end, parse_window, stretch, WindowError};
    // testdata/whatif/stretch.txt: from 1 s to 1.043 s on its clock, phase `solve`.
    let pag = pag_of_file("whatif/stretch.txt", Mode::Cpu);
    let s = ms(1000.0);
    assert_eq!(parse_window(&pag, "33ms..42.5ms"), Ok((s + ms(33.0), s + ms(42.5))));
    assert_eq!(parse_window(&pag, "@1.033s..1042500us"), Ok((s + ms(33.0), s + ms(42.5))));
    assert_eq!(stretch(&pag, Some("solve"), None), Ok(Some((s + ms(30.0), s + ms(42.0)))));
    assert_eq!(stretch(&pag, None, None), Ok(None));
    // The last MPI_Init returns on rank 1 at 32 ms; the last MPI_Finalize begins on rank 0
    // at 42 ms (rank 1's at 41 ms).
    assert_eq!((init_end(&pag), finalize_start(&pag)), (Some(s + ms(32.0)), Some(s + ms(42.0))));
    let spa = pag_of_file("cp/spa.txt", Mode::Cpu);
    assert_eq!((init_end(&spa), finalize_start(&spa)), (None, None));
    let says = |r: Result<Option<(i64, i64)>, WindowError>| r.unwrap_err().to_string();
    assert_eq!(says(stretch(&pag, Some("solve"), Some("0..1ms"))), "give --phase or --window, not both");
    assert_eq!(
        says(stretch(&pag, None, Some("@0..5ms"))),
        "--window @0..5ms holds no event: the trace runs from 0 to 43 ms after its first event \
         (@1000000000..1043000000 in ns)"
    );
    // Between rank 1's start at 12 ms and rank 0's end of MPI_Init at 30 ms nothing happens.
    assert!(says(stretch(&pag, None, Some("13ms..29ms"))).contains("holds no event"));
    assert_eq!(says(stretch(&pag, None, Some("2ms"))), "--window 2ms: expected T0..T1 or @T0..T1");
    assert_eq!(
        says(stretch(&pag, None, Some("1x..2ms"))),
        "--window 1x..2ms: `1x` is not a time (like 2ms, 1.5s, 300us or 1500)"
    );
    assert_eq!(says(stretch(&pag, None, Some("5ms..1ms"))), "--window 5ms..1ms: the end is before the start");
    assert_eq!(
        says(stretch(&pag, Some("setup"), None)),
        "no phase `setup` with a begin and an end; the trace has: solve"
    );
    assert_eq!(
        says(stretch(&pag_of_file("cp/spa.txt", Mode::Cpu), Some("solve"), None)),
        "no phase `solve`: the trace has no phases"
    );
    // The commands exit 2 for each: the graph's usage error.
    let e: spoor_graph::Error = WindowError::Both.into();
    assert!(matches!(e, spoor_graph::Error::Usage(_)));
}

#[test]
fn a_stretchs_sub_pag_is_worked_by_hand() {
    // testdata/whatif/stretch.txt after the last MPI_Init (32 to 43 ms): rank 0's compute
    // keeps 2 of its 4 ms, rank 1's MPI_Init nothing; the path is 11 ms in cpu mode, the
    // stretch's elapsed time in wall mode.
    let s = ms(1000.0);
    for (mode, length) in [(Mode::Cpu, ms(11.0)), (Mode::Wall, ms(11.0))] {
        let pag = pag_of_file("whatif/stretch.txt", mode);
        let sub = pag.within((s + ms(32.0), s + ms(43.0)));
        assert_eq!(sub.t0, s + ms(32.0));
        assert_eq!(cp::length(&sub, &CpOptions::default()), length, "{mode:?}");
        // Rank 0's first node in it is its leave of compute at 34 ms, a source arc.
        let first = (0..sub.nodes()).find(|&i| sub.loc[i] == 0).unwrap();
        assert_eq!((sub.wall[first], sub.prev[first]), (s + ms(34.0), spoor_graph::pag::NONE));
        assert_eq!(sub.weight[first], ms(2.0), "{mode:?}");
        // Both messages are in it; of the phase, rank 1's begin at 32 ms and both ends.
        assert_eq!(sub.arcs(), 2);
        assert_eq!(sub.phases.iter().map(|p| p.begin).collect::<Vec<_>>(), [true, false, false]);
        assert!(sub.notes.last().unwrap().starts_with("only the stretch from 32 ms to 43 ms after"));
    }
    // The phase (30 to 42 ms): rank 1's MPI_Init keeps 3 x 2 / 20 = 0.3 ms.
    let pag = pag_of_file("whatif/stretch.txt", Mode::Cpu);
    let sub = pag.within((s + ms(30.0), s + ms(42.0)));
    let first = (0..sub.nodes()).find(|&i| sub.loc[i] == 1).unwrap();
    assert_eq!(sub.weight[first], ms(0.3));
    assert_eq!(cp::length(&sub, &CpOptions::default()), ms(12.0));
}
