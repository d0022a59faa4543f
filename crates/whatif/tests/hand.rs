//! GAG, NF and procedure LBF cases worked out by hand (the headers of
//! testdata/whatif/*.txt and testdata/cp/spa.txt).

use spoor_graph::pag::NONE;
use spoor_graph::{cp, CpOptions, Local, Mode, NetTable, Network};
use spoor_testkit::{late_sender_with_samples, ms, pag_of_bytes, pag_of_file, testdata};
use spoor_whatif::procedure::{move_weights, procedure_id, procedure_whatif};
use spoor_whatif::{build_gag, predict, Costs, PlaceBy, Placement};

fn cpu_cp(pag: &spoor_graph::Pag) -> i64 {
    cp::length(pag, &CpOptions::default())
}

#[test]
fn figure1_groups_give_the_papers_epts() {
    let pag = pag_of_file("whatif/figure1.txt", Mode::Cpu);
    let place = Placement::parse_inline(&pag, "--place", "p1,p2;p3").unwrap();
    let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
    assert_eq!(pred.time_ns, ms(8.0));
    assert_eq!(cpu_cp(&gag), ms(8.0), "the GAG's critical path is the prediction");
    // The EPT of every event, by group, in group order: (kind, group time).
    let by_group = |g: u32| -> Vec<(&str, i64)> {
        (0..gag.nodes())
            .filter(|&i| gag.loc[i] == g)
            .map(|i| (gag.kind_name(i as u32), gag.wall[i] - gag.t0))
            .collect()
    };
    let g1 = by_group(0);
    let start = g1.iter().find(|e| e.0 == "recv_begin").unwrap();
    let end = g1.iter().find(|e| e.0 == "recv_end").unwrap();
    let send = g1.iter().rfind(|e| e.0 == "send").unwrap();
    assert_eq!((start.1, end.1, send.1), (ms(2.0), ms(8.0), ms(8.0)), "{g1:?}");
    let g2 = by_group(1);
    assert_eq!(
        g2.iter().filter(|e| e.0.starts_with("recv")).map(|e| e.1).collect::<Vec<_>>(),
        vec![ms(1.0), ms(1.0)],
        "{g2:?}"
    );
    // Group order: every group's nodes are chained, times never fall along a chain.
    for i in 0..gag.nodes() {
        let p = gag.prev[i];
        if p != NONE {
            assert_eq!(gag.loc[p as usize], gag.loc[i]);
            assert!(gag.wall[p as usize] <= gag.wall[i]);
        }
    }
    // One processor per process: the cpu-mode critical path (7); all on one: 9.
    assert_eq!(cpu_cp(&pag), ms(7.0));
    assert_eq!(
        predict(&pag, &Placement::by(&pag, PlaceBy::Process), &Costs::default()).unwrap().time_ns,
        ms(7.0)
    );
    assert_eq!(
        predict(&pag, &Placement::by(&pag, PlaceBy::Block(1)), &Costs::default()).unwrap().time_ns,
        ms(9.0)
    );
}

#[test]
fn spa_with_the_clients_on_one_processor() {
    // Worked in testdata/whatif/spa-clients.md: 11.60 ms.
    let pag = pag_of_file("cp/spa.txt", Mode::Cpu);
    let place = Placement::parse_inline(&pag, "--place", "server;client1,client2,client3").unwrap();
    let (gag, pred) = build_gag(&pag, &place, &Costs::default()).unwrap();
    assert_eq!(pred.time_ns, ms(11.60));
    assert_eq!(cpu_cp(&gag), ms(11.60));
    // The times of one kind of event on a processor (0: the server, 1: the clients).
    let at = |group: u32, kind: &str| -> Vec<i64> {
        (0..gag.nodes())
            .filter(|&i| gag.loc[i] == group && gag.kind_name(i as u32) == kind)
            .map(|i| gag.wall[i] - gag.t0)
            .collect()
    };
    // Clients' sends at 3.00 (client1), 4.01 (client2), 4.52 (client3).
    assert_eq!(at(1, "send"), vec![ms(3.0), ms(4.01), ms(4.52)]);
    // Their receive ends: 5.20, 8.35, 11.50.
    assert_eq!(at(1, "recv_end"), vec![ms(5.20), ms(8.35), ms(11.50)]);
    // The server's receive ends: 3.05, 5.20, 8.35.
    assert_eq!(at(0, "recv_end"), vec![ms(3.05), ms(5.20), ms(8.35)]);
}

#[test]
fn spa_procedure_lbf_beside_zeroing() {
    let mut pag = pag_of_file("cp/spa.txt", Mode::Cpu);
    let b1 = procedure_id(&pag, "servBusy1").unwrap();
    let b2 = procedure_id(&pag, "servBusy2").unwrap();
    let r1 = procedure_whatif(&mut pag, b1, None, &Costs::default()).unwrap();
    assert_eq!(
        (r1.original_ns, r1.moved_ns, r1.zeroed_ns, r1.time_moved_ns),
        (ms(9.6), ms(7.95), ms(7.95), ms(2.0))
    );
    let r2 = procedure_whatif(&mut pag, b2, None, &Costs::default()).unwrap();
    assert_eq!((r2.moved_ns, r2.zeroed_ns, r2.time_moved_ns), (ms(5.11), ms(3.60), ms(6.0)));
    // The move itself: servBusy2's 3 ms before each reply now weigh on the clients'
    // receive ends; the server's arcs in servBusy2 weigh nothing.
    let m = move_weights(&pag, b2).unwrap();
    assert_eq!(m.messages, 2);
    let added: i64 =
        (0..pag.nodes()).filter(|&i| m.weight[i] > pag.weight[i]).map(|i| m.weight[i] - pag.weight[i]).sum();
    assert_eq!(added, ms(6.0));
    // Moving on the GAG with one processor per process is the same prediction.
    let place = Placement::by(&pag, PlaceBy::Process);
    assert_eq!(procedure_whatif(&mut pag, b2, Some(&place), &Costs::default()).unwrap(), r2);
    // The PAG's own weights are back.
    assert_eq!(cpu_cp(&pag), ms(9.6));
    // Unknown procedures are refused with the names there are.
    let e = procedure_id(&pag, "nope").unwrap_err().to_string();
    assert!(e.contains("servBusy1") && e.contains("servBusy2"), "{e}");
}

#[test]
fn nf_with_a_table_and_lbf_with_it() {
    let pag = pag_of_file("whatif/figure1.txt", Mode::Cpu);
    // 0.5 ms on one processor, 2 ms between processors, whatever the size.
    let (table, w) = NetTable::parse("t", "bytes,local_ns,remote_ns\n0,500000,2000000\n").unwrap();
    assert!(w.is_empty());
    let net = Network::from_table(table);
    let costs = Costs { net: Some(&net), ..Costs::default() };
    // One processor per process (NF alone): p1's endRecv at max(1, 7 + 2) = 9.
    assert_eq!(predict(&pag, &Placement::by(&pag, PlaceBy::Process), &costs).unwrap().time_ns, ms(9.0));
    // p1,p2;p3 (LBF and NF): the p2 -> p1 message is local: 8 + 0.5; p3's endRecv at
    // max(1, 0 + 2) = 2.
    let place = Placement::parse_inline(&pag, "--place", "p1,p2;p3").unwrap();
    let (gag, pred) = build_gag(&pag, &place, &costs).unwrap();
    assert_eq!(pred.time_ns, ms(8.5));
    assert_eq!(cpu_cp(&gag), ms(8.5));
    let p3_end = (0..gag.nodes()).filter(|&i| gag.loc[i] == 1).map(|i| gag.wall[i] - gag.t0).max().unwrap();
    assert_eq!(p3_end, ms(2.0));
    // What local means, as the user says: never (the p2 -> p1 message remote too: 8 + 2),
    // or one machine (all three share node0: p1's endRecv at max(1, 7 + 0.5)).
    let never = net.clone().with_local(Some(Local::Never));
    let costs = Costs { net: Some(&never), ..Costs::default() };
    assert_eq!(predict(&pag, &place, &costs).unwrap().time_ns, ms(10.0));
    let machine = net.clone().with_local(Some(Local::Machine));
    let costs = Costs { net: Some(&machine), ..Costs::default() };
    assert_eq!(predict(&pag, &Placement::by(&pag, PlaceBy::Process), &costs).unwrap().time_ns, ms(7.5));
    // The PAG's own table weights: local by machine unless the table says otherwise.
    let mut by_machine = pag.clone();
    assert!(by_machine.apply_network(&net).is_empty());
    assert_eq!(cpu_cp(&by_machine), ms(7.5));
    let mut remote = pag.clone();
    assert!(remote.apply_network(&never).is_empty());
    assert_eq!(cpu_cp(&remote), ms(9.0));
    let e = Local::parse("rack").unwrap_err();
    assert!(e.contains("processor, machine, never"), "{e}");
}

#[test]
fn bad_placements_are_refused_with_the_names() {
    let pag = pag_of_file("cp/spa.txt", Mode::Cpu);
    let e =
        Placement::parse_inline(&pag, "--place", "server,clientX;client1,client2").unwrap_err().to_string();
    assert!(e.contains("clientX") && e.contains("leaves out these processes: client3"), "{e}");
    let e = Placement::parse_inline(&pag, "--place", "server,client1;client1,client2,client3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than once: client1"), "{e}");
    let e = Placement::parse_file(&pag, "p.txt", "# two\nA: server, client1\n\n").unwrap_err().to_string();
    assert!(e.starts_with("p.txt: ") && e.contains("client2, client3"), "{e}");
    let e = Placement::parse_file(&pag, "p.txt", "A: server\nB:\n").unwrap_err().to_string();
    assert!(e.contains("p.txt: line 2"), "{e}");
    let ok =
        Placement::parse_file(&pag, "p.txt", "srv: server\nclients: client1, client2 # the rest\nclient3\n")
            .unwrap();
    assert_eq!(ok.names, vec!["srv", "clients", "cpu2"]);
    assert_eq!(ok.group_of, vec![0, 1, 1, 2]);
}

#[test]
fn lock_hand_offs_wait_like_receives() {
    let pag = pag_of_file("whatif/lock.txt", Mode::Cpu);
    assert_eq!(cpu_cp(&pag), ms(5.0));
    assert_eq!(
        predict(&pag, &Placement::by(&pag, PlaceBy::Process), &Costs::default()).unwrap().time_ns,
        ms(5.0)
    );
    let (gag, pred) =
        build_gag(&pag, &Placement::parse_inline(&pag, "--place", "t1,t2").unwrap(), &Costs::default())
            .unwrap();
    assert_eq!(pred.time_ns, ms(7.0));
    assert_eq!(cpu_cp(&gag), ms(7.0));
    let times = |kind: &str| -> Vec<i64> {
        (0..gag.nodes()).filter(|&i| gag.kind_name(i as u32) == kind).map(|i| gag.wall[i] - gag.t0).collect()
    };
    assert_eq!(times("lock_request"), vec![ms(2.0), ms(4.0)]);
    assert_eq!(times("lock_acquire"), vec![ms(2.0), ms(6.0)]);
    assert_eq!(times("lock_release"), vec![ms(6.0), ms(7.0)]);
}

/// Clock-offset samples carry no work: late-sender.txt with samples on its ranks (at a
/// start, inside rank 0's computation, after the end) predicts what it does without
/// them, on one processor per rank and on one processor for all, and the GAG chains
/// its groups around them.
#[test]
fn samples_take_no_time_in_a_gag() {
    let plain = pag_of_file("late-sender.txt", Mode::Cpu);
    let pag = pag_of_bytes("late-sender with samples", late_sender_with_samples(), Mode::Cpu);
    for spec in ["rank0;rank1;rank2", "rank0,rank1,rank2"] {
        let p0 = Placement::parse_inline(&plain, "--place", spec).unwrap();
        let p1 = Placement::parse_inline(&pag, "--place", spec).unwrap();
        let (_, want) = build_gag(&plain, &p0, &Costs::default()).unwrap();
        let (gag, got) = build_gag(&pag, &p1, &Costs::default()).unwrap();
        assert_eq!(got.time_ns, want.time_ns, "{spec}");
        assert_eq!(cpu_cp(&gag), want.time_ns, "{spec}: the GAG's path is the prediction");
    }
    let one = Placement::parse_inline(&pag, "--place", "rank0;rank1;rank2").unwrap();
    assert_eq!(predict(&pag, &one, &Costs::default()).unwrap().time_ns, ms(10.2), "the cpu-mode path");
}

/// testdata/whatif/stretch.txt, whose header works every figure: without a stretch the
/// prediction runs from the last MPI_Init's return to the last MPI_Finalize's entry and is
/// held against that stretch's measured time; a phase and a window are predicted the same
/// way.
#[test]
fn stretches_are_predicted_against_their_own_measured_time() {
    use spoor_whatif::scenario::measured_ns;
    use spoor_whatif::stretch::{choose, cut};
    let pag = pag_of_file("whatif/stretch.txt", Mode::Cpu);
    let s = ms(1000.0);
    let by_process =
        |p: &spoor_graph::Pag| predict(p, &Placement::by(p, PlaceBy::Process), &Costs::default());
    let on_one = |p: &spoor_graph::Pag| predict(p, &Placement::by(p, PlaceBy::Block(1)), &Costs::default());
    // The whole run: 15 predicted, 43 measured.
    assert_eq!((by_process(&pag).unwrap().time_ns, measured_ns(&pag)), (ms(15.0), ms(43.0)));
    // The default: from the last MPI_Init's return at 32 ms to the last MPI_Finalize's
    // entry at 42 ms, said why.
    let st = choose(&pag, None, None).unwrap();
    assert_eq!(st.window, Some((s + ms(32.0), s + ms(42.0))));
    let note = st.note.clone().unwrap();
    for part in [
        "from the last MPI_Init's return to the last MPI_Finalize's entry (32 ms to 42 ms after its first event)",
        "start-up and shutdown, 76.7 % of the 43 ms measured",
        "--window 0..43ms",
    ] {
        assert!(note.contains(part), "{note}");
    }
    let run = cut(pag.clone(), &st).unwrap();
    assert_eq!((by_process(&run).unwrap().time_ns, measured_ns(&run)), (ms(10.0), ms(10.0)));
    assert_eq!((cpu_cp(&run), on_one(&run).unwrap().time_ns), (ms(10.0), ms(10.0)));
    // Without MPI_Finalize: after the last MPI_Init's return, to the end (rank 0's last
    // 1 ms of CPU now outside any procedure): 11 and 11.
    let text = std::fs::read_to_string(testdata("whatif/stretch.txt")).unwrap();
    let unfinished: String =
        text.lines().filter(|l| !l.contains("MPI_Finalize")).map(|l| format!("{l}\n")).collect();
    let unfinished = pag_of_bytes("unfinished.txt", unfinished.into_bytes(), Mode::Cpu);
    let st = choose(&unfinished, None, None).unwrap();
    assert_eq!(st.window, Some((s + ms(32.0), s + ms(43.0))));
    let note = st.note.clone().unwrap();
    assert!(
        note.contains(
            "after the last MPI_Init's return (32 ms to 43 ms after its first event): start-up, 74.4 %"
        ),
        "{note}"
    );
    let after = cut(unfinished, &st).unwrap();
    assert_eq!((by_process(&after).unwrap().time_ns, measured_ns(&after)), (ms(11.0), ms(11.0)));
    // The phase: 12 measured, 12 on a processor each, 12.3 on one.
    let st = choose(&pag, Some("solve"), None).unwrap();
    assert_eq!((st.window, st.note.as_deref()), (Some((s + ms(30.0), s + ms(42.0))), None));
    let solve = cut(pag.clone(), &st).unwrap();
    assert_eq!(measured_ns(&solve), ms(12.0));
    assert_eq!((by_process(&solve).unwrap().time_ns, on_one(&solve).unwrap().time_ns), (ms(12.0), ms(12.3)));
    // A window: 9 and 9.
    let st = choose(&pag, None, Some("33ms..42.5ms")).unwrap();
    let w = cut(pag.clone(), &st).unwrap();
    assert_eq!((by_process(&w).unwrap().time_ns, measured_ns(&w)), (ms(9.0), ms(9.0)));
    // The whole run as a window is the run: no note, the same figures.
    let st = choose(&pag, None, Some("0..43ms")).unwrap();
    assert_eq!(st.note, None);
    let all = cut(pag.clone(), &st).unwrap();
    assert_eq!((by_process(&all).unwrap().time_ns, measured_ns(&all)), (ms(15.0), ms(43.0)));
    assert_eq!(on_one(&all).unwrap(), on_one(&pag).unwrap());
    // A trace without MPI_Init is predicted whole.
    let spa = pag_of_file("cp/spa.txt", Mode::Cpu);
    assert_eq!(choose(&spa, None, None).unwrap(), spoor_whatif::Stretch::default());
    // Bad stretches are usage errors.
    let e = choose(&pag, Some("solve"), Some("0..1ms")).unwrap_err();
    assert!(
        matches!(e, spoor_graph::Error::Usage(ref m) if m == "give --phase or --window, not both"),
        "{e}"
    );
}
