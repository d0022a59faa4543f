//! The Paraver reader: the real Extrae trace of $SPOOR_DATA against its known
//! facts, a small hand-written trace with its events worked out by hand, and
//! hostile inputs (truncation, garbage, huge numbers) that must give errors,
//! never panics.

use spoor_import::paraver::{self, ParaverOptions, ParaverTrace};
use spoor_model::{CollOp, Event, Kind, LocId};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

mod common;
use common::data_dir;

fn real_trace() -> Option<PathBuf> {
    Some(data_dir()?.join("paraver/pypop-epoch-2proc/epoch_2proc.prv.gz"))
}

fn name(t: &ParaverTrace, id: u32) -> String {
    t.defs.strings.name(id).into_owned()
}

/// Checks per-location invariants: times sorted, Enter/Leave nested and
/// balanced, message and collective events inside an MPI call.
fn check_structure(t: &ParaverTrace) {
    check(t, true)
}

/// `check_structure`, with `strict` false for traces cut short (a message may
/// then end on a thread whose call was not read).
fn check(t: &ParaverTrace, strict: bool) {
    let mut stacks: HashMap<LocId, Vec<u32>> = HashMap::new();
    let mut last: HashMap<LocId, i64> = HashMap::new();
    // Per location: the open phase (states do not overlap), whether the process ended.
    let mut phase: HashMap<LocId, u32> = HashMap::new();
    let mut ended: HashMap<LocId, bool> = HashMap::new();
    let mut seen: HashMap<LocId, bool> = HashMap::new();
    let mut prev_wall = i64::MIN;
    for e in &t.events {
        assert!(e.wall >= prev_wall, "events are not in global time order");
        prev_wall = e.wall;
        let l = last.entry(e.loc).or_insert(i64::MIN);
        assert!(e.wall >= *l);
        *l = e.wall;
        let stack = stacks.entry(e.loc).or_default();
        assert!(!ended.get(&e.loc).copied().unwrap_or(false), "{e:?} after the process ended");
        let first = !seen.insert(e.loc, true).unwrap_or(false);
        match &e.kind {
            Kind::ProcessBegin { parent: None } => assert!(first, "process_begin not first at {}", e.wall),
            Kind::ProcessEnd => {
                assert!(
                    stack.is_empty() && !phase.contains_key(&e.loc),
                    "process_end inside a region or phase"
                );
                ended.insert(e.loc, true);
            }
            Kind::PhaseBegin { name } => assert_eq!(phase.insert(e.loc, *name), None, "overlapping states"),
            Kind::PhaseEnd { name } => assert_eq!(phase.remove(&e.loc), Some(*name), "unbalanced phase end"),
            Kind::Enter { proc } => stack.push(*proc),
            Kind::Leave { proc } => assert_eq!(stack.pop(), Some(*proc), "unbalanced leave at {}", e.wall),
            Kind::Send { .. }
            | Kind::RecvBegin { .. }
            | Kind::RecvEnd { .. }
            | Kind::IrecvRequest { .. }
            | Kind::IrecvComplete { .. }
            | Kind::CollBegin { .. }
            | Kind::CollEnd { .. } => {
                let top = stack.last().map(|&p| name(t, p)).unwrap_or_default();
                let in_mpi = top.starts_with("MPI_") || top.starts_with("event 5000000");
                assert!(in_mpi || !strict, "{:?} outside an MPI call", e);
            }
            _ => {}
        }
    }
    assert!(stacks.values().all(Vec::is_empty), "regions left open");
    assert!(phase.is_empty() || !strict, "phases left open");
}

#[test]
fn real_extrae_trace_counts_and_mapping() {
    let Some(prv) = real_trace() else { return };
    let t = paraver::read_paraver_with(&prv, &ParaverOptions::default()).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    // The records of each kind.
    assert_eq!(t.stats.state_records, 6985);
    assert_eq!(t.stats.event_records, 8147);
    assert_eq!(t.stats.comm_records, 1156);
    assert_eq!(t.stats.comm_lines, 3);
    assert_eq!(t.stats.states.values().map(|s| s.records).sum::<u64>(), 6985);
    assert_eq!(t.stats.states[&1].name, "Running");
    // The header.
    assert_eq!(t.header.runtime_ns(), 11_528_373_565);
    assert_eq!(t.defs.property("paraver.runtime_ns"), Some("11528373565"));
    assert!(t.events.last().unwrap().wall <= 11_528_373_565);
    // Two ranks, one thread each, on one node.
    assert_eq!(t.defs.apps.len(), 1);
    assert_eq!(t.defs.processes.len(), 2);
    assert_eq!(t.defs.processes.iter().map(|p| p.rank).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(t.defs.locations.len(), 2);
    assert_eq!(t.defs.machines.len(), 1);
    assert_eq!(name(&t, t.defs.machines[0].name), "s01r2b02");
    assert_eq!(name(&t, t.defs.locations[1].name), "THREAD 1.2.1");
    t.defs.check().unwrap();
    check_structure(&t);
    // Every communication is one send and one receive, with the same ends, tag and size.
    let count = |f: &dyn Fn(&Kind) -> bool| t.events.iter().filter(|e| f(&e.kind)).count();
    assert_eq!(count(&|k| matches!(k, Kind::Send { .. })), 1156);
    assert_eq!(count(&|k| matches!(k, Kind::RecvEnd { .. } | Kind::IrecvComplete { .. })), 1156);
    assert_eq!(count(&|k| matches!(k, Kind::RecvBegin { .. } | Kind::IrecvRequest { .. })), 1156);
    let mut sends: HashMap<(LocId, LocId, u32, u64), i64> = HashMap::new();
    for e in &t.events {
        match e.kind {
            Kind::Send { to, tag, bytes, .. } => *sends.entry((e.loc, to, tag, bytes)).or_insert(0) += 1,
            Kind::RecvEnd { from, tag, bytes, .. } | Kind::IrecvComplete { from, tag, bytes, .. } => {
                *sends.entry((from, e.loc, tag, bytes)).or_insert(0) -= 1
            }
            _ => {}
        }
    }
    assert!(sends.values().all(|&n| n == 0), "sends and receives differ: {sends:?}");
    // MPI calls: every non-zero value of the MPI types, named from the .pcf.
    assert_eq!(t.stats.mpi_calls, 3488);
    let enters: Vec<String> = t
        .events
        .iter()
        .filter_map(|e| if let Kind::Enter { proc } = e.kind { Some(name(&t, proc)) } else { None })
        .filter(|n| n.starts_with("MPI_"))
        .collect();
    assert_eq!(enters.len(), 3488);
    assert_eq!(enters.iter().filter(|n| *n == "MPI_Sendrecv").count(), 2568);
    for n in ["MPI_Init", "MPI_Finalize", "MPI_Comm_dup", "MPI_Barrier"] {
        assert!(enters.iter().any(|e| e == n), "{n}");
    }
    // Collectives: Allreduce 22, Bcast 872, Barrier 8 entries; every Bcast is rooted at rank 0.
    let colls: Vec<&Event> = t.events.iter().filter(|e| matches!(e.kind, Kind::CollEnd { .. })).collect();
    assert_eq!(colls.len(), 902);
    assert_eq!(count(&|k| matches!(k, Kind::CollBegin { .. })), 902);
    let by_op = |op: CollOp| {
        colls.iter().filter(|e| matches!(e.kind, Kind::CollEnd { op: o, .. } if o == op)).count()
    };
    assert_eq!((by_op(CollOp::Allreduce), by_op(CollOp::Bcast), by_op(CollOp::Barrier)), (22, 872, 8));
    for e in &colls {
        if let Kind::CollEnd { op: CollOp::Bcast, root, sent, received, .. } = e.kind {
            assert_eq!(root, Some(0));
            assert!(if e.loc == 0 { received == 0 } else { sent == 0 });
        }
    }
}

/// The whole run: the application's begin and end, states, counters and Extrae's own
/// activities, with what is left out counted by event type.
#[test]
fn real_extrae_trace_is_imported_whole() {
    let Some(prv) = real_trace() else { return };
    let t = paraver::read_paraver_with(&prv, &ParaverOptions::default()).unwrap();
    // Task 1 is "Not created" until 956,810 ns, where its application begins; the run
    // ends with task 1's application end at the header's runtime.
    let at = |loc: LocId, k: &dyn Fn(&Kind) -> bool| -> Vec<i64> {
        t.events.iter().filter(|e| e.loc == loc && k(&e.kind)).map(|e| e.wall).collect()
    };
    let begin = |k: &Kind| matches!(k, Kind::ProcessBegin { parent: None });
    let end = |k: &Kind| matches!(k, Kind::ProcessEnd);
    assert_eq!((at(0, &begin), at(0, &end)), (vec![956_810], vec![11_528_373_565]));
    assert_eq!((at(1, &begin), at(1, &end)), (vec![0], vec![11_528_082_114]));
    assert_eq!(t.events.first().unwrap().wall, 0);
    assert_eq!(t.events.last().unwrap().wall, 11_528_373_565);
    // Every state but the one "Not created" is a phase of its name and its length.
    assert_eq!((t.stats.states_imported, t.stats.states_outside), (6984, 1));
    let mut open: HashMap<LocId, i64> = HashMap::new();
    let mut by_name: HashMap<String, u64> = HashMap::new();
    for e in &t.events {
        match e.kind {
            Kind::PhaseBegin { .. } => assert!(open.insert(e.loc, e.wall).is_none()),
            Kind::PhaseEnd { name: n } => {
                *by_name.entry(name(&t, n)).or_default() += (e.wall - open.remove(&e.loc).unwrap()) as u64
            }
            _ => {}
        }
    }
    for (value, s) in &t.stats.states {
        if *value != paraver::STATE_NOT_CREATED {
            assert_eq!(by_name[&s.name], s.ns, "state {}", s.name);
        }
    }
    assert_eq!(by_name.len(), t.stats.states.len() - 1);
    // Counters: 8 metrics, one sample each per record that carries them.
    assert_eq!(t.defs.metrics.len(), 8);
    assert_eq!(name(&t, t.defs.metrics[0].name), "PAPI_TOT_INS");
    assert_eq!(t.stats.metric_samples, 8 * 6986);
    let metrics = t.events.iter().filter(|e| matches!(e.kind, Kind::Metric { .. })).count();
    assert_eq!(metrics as u64, t.stats.metric_samples);
    // Extrae's initialization and flushes are regions named by their type.
    let enters = |n: &str| {
        t.events.iter().filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&t, proc) == n)).count()
    };
    assert_eq!((enters("Trace initialization"), enters("Flushing Traces")), (2, 2));
    // What is left out, by type, with its .pcf label.
    assert!(t
        .skipped
        .contains(&(1, "state records outside their thread's application begin and end".into())));
    assert!(t.skipped.contains(&(3486, "values of event type 70000001 (Caller at level 1)".into())));
    assert!(t.skipped.contains(&(8, "values of event type 50000061".into())));
    check_structure(&t);
}

#[test]
fn real_trace_plain_without_pcf_and_row() {
    let Some(prv) = real_trace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&prv).unwrap()).read_to_end(&mut text).unwrap();
    let plain = dir.path().join("copy.prv");
    std::fs::write(&plain, &text).unwrap();
    assert!(paraver::looks_like(&text[..64]));
    assert!(paraver::looks_like(&std::fs::read(&prv).unwrap()[..512]));
    let t = paraver::read_paraver_with(&plain, &ParaverOptions::default()).unwrap();
    assert_eq!(t.warnings.len(), 2, "{:?}", t.warnings);
    assert!(t.warnings[0].contains("copy.pcf") && t.warnings[1].contains("copy.row"), "{:?}", t.warnings);
    assert_eq!((t.stats.state_records, t.stats.event_records, t.stats.comm_records), (6985, 8147, 1156));
    assert_eq!(name(&t, t.defs.locations[1].name), "THREAD 1.2.1");
    assert_eq!(name(&t, t.defs.machines[0].name), "node 1");
    // Without names, no collective is recognised; the messages are all there.
    assert!(!t.events.iter().any(|e| matches!(e.kind, Kind::CollBegin { .. })));
    assert_eq!(t.events.iter().filter(|e| matches!(e.kind, Kind::Send { .. })).count(), 1156);
    let enters: Vec<String> = t
        .events
        .iter()
        .filter_map(|e| if let Kind::Enter { proc } = e.kind { Some(name(&t, proc)) } else { None })
        .collect();
    // Extrae's activities are named by type, MPI calls by type and value.
    assert_eq!(enters[0], "event 40000002");
    assert_eq!(enters.iter().find(|n| !n.starts_with("event 4000")).unwrap(), "event 50000003 value 31");
    check_structure(&t);
}

const PCF: &str = "DEFAULT_OPTIONS\n\nLEVEL THREAD\n\nSTATES\n0 Idle\n1 Running\n\n\
EVENT_TYPE\n9 50000001 MPI Point-to-point\nVALUES\n1 MPI_Send\n2 MPI_Recv\n3 MPI_Irecv\n4 MPI_Wait\n0 Outside MPI\n\n\
EVENT_TYPE\n9 50000002 MPI Collective Comm\nVALUES\n10 MPI_Allreduce\n7 MPI_Bcast\n0 Outside MPI\n\n\
EVENT_TYPE\n0 60000019 User function\nVALUES\n0 End\n1 main\n";

const ROW: &str = "LEVEL NODE SIZE 1\nhost\n\nLEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n";

/// Two tasks: a blocking send/receive, a reply sent at the very time its
/// sender's receive ends, an Allreduce, a Bcast rooted at task 1, and a
/// non-blocking receive completed in MPI_Wait.
const PRV: &str = "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),2
c:1:1:2:1:2
c:1:2:1:1
2:1:1:1:1:0:60000019:1
2:1:1:1:1:100:50000001:1
3:1:1:1:1:100:100:2:1:2:1:150:300:64:7
2:2:1:2:1:150:50000001:2
2:1:1:1:1:200:50000001:0
2:1:1:1:1:250:50000001:2
2:2:1:2:1:300:50000001:0:50000001:1
3:2:1:2:1:300:300:1:1:1:1:250:330:4:5
2:2:1:2:1:320:50000001:0
2:1:1:1:1:330:50000001:0
2:1:1:1:1:400:50000002:10:50100001:8:50100002:8:50100004:1
2:2:1:2:1:400:50000002:10:50100001:8:50100002:8:50100004:1
2:1:1:1:1:500:50000002:0
2:2:1:2:1:500:50000002:0
2:1:1:1:1:600:50000002:7:50100001:16:50100002:0:50100004:1:50100003:1
2:2:1:2:1:600:50000002:7:50100001:0:50100002:16:50100004:1
2:1:1:1:1:700:50000002:0
2:2:1:2:1:700:50000002:0
2:2:1:2:1:800:50000001:3
2:2:1:2:1:810:50000001:0
2:1:1:1:1:850:50000001:1
3:1:1:1:1:850:850:2:1:2:1:810:950:32:9
2:1:1:1:1:860:50000001:0
2:2:1:2:1:900:50000001:4
2:2:1:2:1:1000:50000001:0
2:1:1:1:1:1000:60000019:0
1:1:1:1:1:0:1000:1
1:2:1:2:1:0:150:0
1:2:1:2:1:150:1000:1
";

fn write_trace(dir: &Path, stem: &str, prv: &str, pcf: Option<&str>, row: Option<&str>) -> PathBuf {
    let p = dir.join(format!("{stem}.prv"));
    std::fs::write(&p, prv).unwrap();
    if let Some(pcf) = pcf {
        std::fs::write(dir.join(format!("{stem}.pcf")), pcf).unwrap();
    }
    if let Some(row) = row {
        std::fs::write(dir.join(format!("{stem}.row")), row).unwrap();
    }
    p
}

/// Per location, its events as text.
fn per_loc(t: &ParaverTrace) -> Vec<Vec<String>> {
    let mut v = vec![Vec::new(); t.defs.locations.len()];
    for e in &t.events {
        let k = match &e.kind {
            Kind::Enter { proc } => format!("enter {}", name(t, *proc)),
            Kind::Leave { proc } => format!("leave {}", name(t, *proc)),
            Kind::PhaseBegin { name: n } => format!("phase_begin {}", name(t, *n)),
            Kind::PhaseEnd { name: n } => format!("phase_end {}", name(t, *n)),
            Kind::ProcessBegin { parent: None } => "process_begin".into(),
            Kind::ProcessEnd => "process_end".into(),
            Kind::Metric { metric, value } => {
                format!("metric {} {value}", name(t, t.defs.metrics[*metric as usize].name))
            }
            k => format!("{k:?}"),
        };
        v[e.loc as usize].push(format!("{} {k}", e.wall));
    }
    v
}

#[test]
fn hand_written_trace() {
    let dir = tempfile::tempdir().unwrap();
    let prv = write_trace(dir.path(), "small", PRV, Some(PCF), Some(ROW));
    let t = paraver::read_paraver_with(&prv, &ParaverOptions::default()).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert_eq!((t.stats.state_records, t.stats.event_records, t.stats.comm_records), (3, 23, 3));
    assert_eq!(t.stats.states[&1].ns, 1850);
    assert_eq!(t.stats.states[&0].name, "Idle");
    assert_eq!(t.defs.property("paraver.runtime_ns"), Some("1000"));
    // c:1:1 holds both tasks in order, so it is the communicator of point-to-point messages.
    assert_eq!(t.defs.comms.len(), 2);
    assert_eq!(name(&t, t.defs.comms[0].name), "comm 1");
    assert_eq!(t.defs.comms[0].members, [0, 1]);
    assert_eq!(t.defs.comms[1].members, [0]);
    assert_eq!(name(&t, t.defs.machines[0].name), "host");
    assert_eq!(name(&t, t.defs.apps[0].name), "small");
    let ev = per_loc(&t);
    let expect0 = [
        "0 phase_begin Running",
        "0 enter main",
        "100 enter MPI_Send",
        "100 Send { to: 1, comm: 0, tag: 7, bytes: 64 }",
        "200 leave MPI_Send",
        "250 enter MPI_Recv",
        "250 RecvBegin { from: Some(1), comm: 0, tag: Some(5) }",
        "330 RecvEnd { from: 1, comm: 0, tag: 5, bytes: 4 }",
        "330 leave MPI_Recv",
        "400 enter MPI_Allreduce",
        "400 CollBegin { op: Allreduce, comm: 0 }",
        "500 CollEnd { op: Allreduce, comm: 0, root: None, sent: 8, received: 8 }",
        "500 leave MPI_Allreduce",
        "600 enter MPI_Bcast",
        "600 CollBegin { op: Bcast, comm: 0 }",
        "700 CollEnd { op: Bcast, comm: 0, root: Some(0), sent: 16, received: 0 }",
        "700 leave MPI_Bcast",
        "850 enter MPI_Send",
        "850 Send { to: 1, comm: 0, tag: 9, bytes: 32 }",
        "860 leave MPI_Send",
        "1000 leave main",
        "1000 phase_end Running",
    ];
    let expect1 = [
        "0 phase_begin Idle",
        "150 phase_end Idle",
        "150 phase_begin Running",
        "150 enter MPI_Recv",
        "150 RecvBegin { from: Some(0), comm: 0, tag: Some(7) }",
        "300 RecvEnd { from: 0, comm: 0, tag: 7, bytes: 64 }",
        "300 leave MPI_Recv",
        "300 enter MPI_Send",
        "300 Send { to: 0, comm: 0, tag: 5, bytes: 4 }",
        "320 leave MPI_Send",
        "400 enter MPI_Allreduce",
        "400 CollBegin { op: Allreduce, comm: 0 }",
        "500 CollEnd { op: Allreduce, comm: 0, root: None, sent: 8, received: 8 }",
        "500 leave MPI_Allreduce",
        "600 enter MPI_Bcast",
        "600 CollBegin { op: Bcast, comm: 0 }",
        "700 CollEnd { op: Bcast, comm: 0, root: Some(0), sent: 0, received: 16 }",
        "700 leave MPI_Bcast",
        "800 enter MPI_Irecv",
        "810 IrecvRequest { from: Some(0), comm: 0, tag: Some(9), request: 1 }",
        "810 leave MPI_Irecv",
        "900 enter MPI_Wait",
        "950 IrecvComplete { request: 1, from: 0, comm: 0, tag: 9, bytes: 32 }",
        "1000 leave MPI_Wait",
        "1000 phase_end Running",
    ];
    assert_eq!(ev[0], expect0);
    assert_eq!(ev[1], expect1);
    check_structure(&t);
    // The same trace gzip-ed reads the same.
    let gz = dir.path().join("small.prv.gz");
    let mut enc =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::default());
    enc.write_all(PRV.as_bytes()).unwrap();
    enc.finish().unwrap();
    assert_eq!(paraver::companion_paths(&gz).0, dir.path().join("small.pcf"));
    let g = paraver::read_paraver_with(&gz, &ParaverOptions::default()).unwrap();
    assert_eq!(per_loc(&g), ev);
    assert_eq!(paraver::read_paraver(&gz).unwrap().1, t.events);
}

/// The application's begin and end bound each thread: states outside them are left out
/// (and counted), states across them are cut there, regions open at the end are left
/// there; counters are metric samples, Extrae's flush a region named by its type.
#[test]
fn application_bounds_states_counters_and_extrae_activities() {
    let pcf = format!(
        "{PCF}\nEVENT_TYPE\n6 40000003 Flushing Traces\nVALUES\n0 End\n1 Begin\n\n\
         EVENT_TYPE\n7 42000050 PAPI_TOT_INS [Instr completed]\n\n\
         EVENT_TYPE\n0 70000001 Caller at level 1\nVALUES\n3 main\n\n\
         STATES\n2 Not created\n"
    );
    let prv = "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1)
1:1:1:1:1:0:100:2
1:2:1:2:1:0:600:1
2:2:1:2:1:50:40000001:1
2:2:1:2:1:60:60000019:1
1:1:1:1:1:100:400:1
2:1:1:1:1:100:40000001:1:42000050:0
2:1:1:1:1:200:60000019:1:42000050:500
2:1:1:1:1:250:42000050:18446744073709551615
2:1:1:1:1:300:40000003:1
2:1:1:1:1:350:40000003:0
1:1:1:1:1:400:500:1
2:1:1:1:1:400:60000019:0
2:1:1:1:1:500:40000001:0:70000001:3
2:2:1:2:1:600:40000001:0
1:2:1:2:1:600:1000:0
";
    let dir = tempfile::tempdir().unwrap();
    let p = write_trace(dir.path(), "app", prv, Some(&pcf), Some(ROW));
    let t = paraver::read_paraver_with(&p, &ParaverOptions::default()).unwrap();
    let ev = per_loc(&t);
    assert_eq!(
        ev[0],
        [
            "100 process_begin",
            "100 phase_begin Running",
            "100 metric PAPI_TOT_INS 0",
            "200 enter main",
            "200 metric PAPI_TOT_INS 500",
            "250 metric PAPI_TOT_INS 18446744073709552000",
            "300 enter Flushing Traces",
            "350 leave Flushing Traces",
            "400 leave main",
            "400 phase_end Running",
            "400 phase_begin Running",
            "500 phase_end Running",
            "500 process_end",
        ]
    );
    // Running from 0 is cut at the application's begin (50); Idle after its end is left out.
    assert_eq!(
        ev[1],
        [
            "50 process_begin",
            "50 phase_begin Running",
            "60 enter main",
            "600 leave main",
            "600 phase_end Running",
            "600 process_end",
        ]
    );
    assert_eq!((t.stats.states_imported, t.stats.states_outside, t.stats.app_events), (3, 2, 4));
    assert_eq!(name(&t, t.defs.metrics[0].unit), "count since the previous sample");
    assert_eq!(
        t.skipped,
        [
            (2, "state records outside their thread's application begin and end".to_string()),
            (1, "values of event type 70000001 (Caller at level 1)".to_string()),
        ]
    );
    assert_eq!(t.warnings, ["regions still open at the application's end are left there"]);
    check_structure(&t);
    // A second begin, or a begin after the end, is ignored with a warning.
    let prv = "#Paraver (x):1000_ns:1(2):1:1(1:1)\n2:1:1:1:1:1:40000001:1\n2:1:1:1:1:2:40000001:0\n\
               2:1:1:1:1:3:40000001:1\n";
    let p = write_trace(dir.path(), "again", prv, Some(&pcf), None);
    let t = paraver::read_paraver_with(&p, &ParaverOptions::default()).unwrap();
    assert_eq!(per_loc(&t)[0], ["1 process_begin", "2 process_end"]);
    assert!(t.warnings.iter().any(|w| w.contains("application begin after")), "{:?}", t.warnings);
}

#[test]
fn user_regions_unclosed_and_named_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let prv = "#Paraver (x):50_us:0:1:1(2:0)\n\
               2:0:1:1:1:1:60000019:5\n\
               2:0:1:1:2:2:60000019:6:50000003:31\n\
               2:0:1:1:2:3:50000003:0:60000019:0\n\
               2:0:1:1:1:4:60000019:7\n";
    let p = write_trace(dir.path(), "u", prv, None, None);
    let t = paraver::read_paraver_with(&p, &ParaverOptions::default()).unwrap();
    let ev = per_loc(&t);
    // Microseconds: times times 1000; the unclosed regions of thread 1 end at its last event.
    assert_eq!(
        ev[0],
        [
            "1000 enter event 60000019 value 5",
            "4000 enter event 60000019 value 7",
            "4000 leave event 60000019 value 7",
            "4000 leave event 60000019 value 5"
        ]
    );
    assert_eq!(
        ev[1],
        [
            "2000 enter event 60000019 value 6",
            "2000 enter event 50000003 value 31",
            "3000 leave event 50000003 value 31",
            "3000 leave event 60000019 value 6"
        ]
    );
    assert!(t.warnings.iter().any(|w| w.contains("still open")), "{:?}", t.warnings);
    assert_eq!(name(&t, t.defs.locations[1].name), "THREAD 1.1.2");
    assert_eq!(name(&t, t.defs.machines[0].name), "unknown node");
    assert_eq!(t.defs.property("paraver.time_unit"), Some("us"));
    // A region type given as an option.
    let opts = ParaverOptions { region_types: vec![], ..Default::default() };
    let t = paraver::read_paraver_with(&p, &opts).unwrap();
    assert_eq!(t.stats.other_types[&60000019], 4);
}

/// Errors for malformed input must name the file and the line.
#[test]
fn malformed_lines_are_errors_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let good_header = "#Paraver (x):1000_ns:1(2):1:2(1:1,1:1)\n";
    let cases: &[(&str, u64)] = &[
        ("2:1:1:1:1:abc:50000001:1\n", 2),
        ("2:1:1:1:1:5:50000001\n", 2),
        ("1:1:1:1:1:5:4:1\n", 2),
        ("1:1:1:1:1:5\n", 2),
        ("3:1:1:1:1:1:1:1:1:2:1:2:3:4\n", 2),
        ("3:1:1:1:1:1:1:1:1:2:1:2:3:4:99999999999\n", 2),
        ("2:1:1:3:1:5:50000001:1\n", 2),
        ("2:1:2:1:1:5:50000001:1\n", 2),
        ("2:1:1:1:2:5:50000001:1\n", 2),
        ("2:1:1:1:1:5:50000001:1\n\n2:1:1:1:1:4:50000001:0\n", 4),
        ("x:1\n", 2),
        ("c:1:1:3:1:2\n", 2),
        ("c:1:1:1:7\n", 2),
        ("c:1:1:1:1\nc:1:1:1:2\n", 3),
        ("2:1:1:1:1:99999999999999999999:1:1\n", 2),
        ("2:1:1:1:1:18446744073709551615:1:1\n", 2),
        ("#Paraver (x):1:1(2):1:1(1:1)\n", 2),
    ];
    for (i, (body, line)) in cases.iter().enumerate() {
        let p = write_trace(dir.path(), &format!("m{i}"), &format!("{good_header}{body}"), Some(PCF), None);
        let e = paraver::read_paraver(&p).unwrap_err();
        assert_eq!(e.line, Some(*line), "case {i} {body:?}: {e}");
        assert!(e.file.ends_with(&format!("m{i}.prv")), "{e}");
    }
    // A malformed .pcf or .row is an error naming it.
    let p = write_trace(dir.path(), "badpcf", PRV, Some("EVENT_TYPE\nnine x y\n"), Some(ROW));
    let e = paraver::read_paraver(&p).unwrap_err();
    assert!(e.file.ends_with("badpcf.pcf") && e.line == Some(2), "{e}");
    let p = write_trace(dir.path(), "badrow", PRV, Some(PCF), Some("LEVEL THREAD SIZE 9\nx\n"));
    let e = paraver::read_paraver(&p).unwrap_err();
    assert!(e.file.ends_with("badrow.row") && e.line == Some(1), "{e}");
    // Not a Paraver file at all, and a missing one.
    let p = write_trace(dir.path(), "notprv", "hello\n", None, None);
    assert_eq!(paraver::read_paraver(&p).unwrap_err().line, Some(1));
    let e = paraver::read_paraver(&dir.path().join("absent.prv")).unwrap_err();
    assert_eq!(e.kind, spoor_format::ErrorKind::Io);
}

#[test]
fn huge_numbers_are_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    for (i, header) in [
        "#Paraver (x):1:1(2):1:1(4000000000:1)",
        "#Paraver (x):1:1(2):1:2(4000000:1,4000000:1)",
        "#Paraver (x):1:99999999999:1:1(1:1)",
        "#Paraver (x):1:1(2):99999999999:1(1:1)",
        "#Paraver (x):1:1(2):1:99999999999(1:1)",
    ]
    .iter()
    .enumerate()
    {
        let p = write_trace(dir.path(), &format!("h{i}"), &format!("{header}\n"), None, None);
        let e = paraver::read_paraver(&p).unwrap_err();
        assert_eq!(e.line, Some(1), "{header}: {e}");
    }
}

#[test]
fn declared_threads_and_nodes_are_bounded_by_the_option() {
    let dir = tempfile::tempdir().unwrap();
    // 3 threads on 1 node, then 3 nodes without a CPU list: within a limit of 3, over one of 2.
    for (i, header) in ["#Paraver (x):1:1(2):1:2(2:1,1:1)", "#Paraver (x):1:3:1:1(1:1)"].iter().enumerate() {
        let p = write_trace(dir.path(), &format!("m{i}"), &format!("{header}\n"), None, None);
        let three = ParaverOptions { max_threads: 3, ..Default::default() };
        let t = paraver::read_paraver_with(&p, &three).unwrap();
        assert_eq!(t.defs.locations.len() + t.defs.machines.len(), 4, "{header}");
        let two = ParaverOptions { max_threads: 2, ..Default::default() };
        let e = paraver::read_paraver_with(&p, &two).unwrap_err();
        assert_eq!(e.line, Some(1), "{header}: {e}");
    }
    assert_eq!(ParaverOptions::default().max_threads, paraver::MAX_THREADS);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn truncated_and_garbage_inputs_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.pcf"), PCF).unwrap();
    std::fs::write(dir.path().join("t.row"), ROW).unwrap();
    let p = dir.path().join("t.prv");
    // Plain text cut anywhere: either a valid shorter trace or an error naming a line.
    for cut in 0..PRV.len() {
        std::fs::write(&p, &PRV.as_bytes()[..cut]).unwrap();
        match paraver::read_paraver_with(&p, &ParaverOptions::default()) {
            Ok(t) => check(&t, false),
            Err(e) => assert!(e.line.is_some(), "cut {cut}: {e}"),
        }
    }
    // gzip cut anywhere short of its end: always an error.
    let gz = gzip(PRV.as_bytes());
    let pg = dir.path().join("t.prv.gz");
    for cut in 0..gz.len() {
        std::fs::write(&pg, &gz[..cut]).unwrap();
        let r = paraver::read_paraver(&pg);
        assert!(r.is_err(), "gzip cut at {cut} of {} read as a trace", gz.len());
    }
    // Garbage, plain and gzip-ed, and garbage after a valid header.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for round in 0..200 {
        let len = (round * 37) % 700 + 1;
        let mut g = Vec::with_capacity(len);
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            g.push(if round % 3 == 0 { b"0123456789:c\n#"[(x % 14) as usize] } else { x as u8 });
        }
        let mut with_header = b"#Paraver (x):1000_ns:1(2):1:2(1:1,1:1)\n".to_vec();
        with_header.extend_from_slice(&g);
        for bytes in [g.clone(), gzip(&g), with_header] {
            std::fs::write(&p, &bytes).unwrap();
            if let Ok(t) = paraver::read_paraver_with(&p, &ParaverOptions::default()) {
                check(&t, false);
            }
        }
    }
    // Sniffing.
    assert!(paraver::looks_like(PRV.as_bytes()));
    assert!(paraver::looks_like(&gzip(PRV.as_bytes())));
    assert!(!paraver::looks_like(b"#Parav"));
    assert!(!paraver::looks_like(&gzip(b"hello world")));
    assert!(!paraver::looks_like(&[0x1f, 0x8b, 8]));
}

/// A record line longer than the text form's limit is refused at that line, without
/// reading the rest of it (a small .prv.gz can inflate to one line of gigabytes).
#[test]
fn overlong_lines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.prv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    f.write_all(b"#Paraver (x):1000_ns:1(2):1:1(1:1)\n2:1:1:1:1:5:").unwrap();
    let chunk = vec![b'7'; 1 << 20];
    for _ in 0..=spoor_format::text::MAX_LINE >> 20 {
        f.write_all(&chunk).unwrap();
    }
    drop(f);
    let e = paraver::read_paraver(&p).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("line longer than"), "{e}");
}

/// The recorded placement comes from the records' CPU field, numbered over the header's
/// nodes: node 1 has CPUs 1-2, node 2 CPUs 3-4. Tasks 1.1 and 1.2 (node 1) ran on CPU 2
/// (a state, an event and the sending end of messages name it), task 1.3 (node 2) on
/// CPU 4 (a receiving end), plus a CPU 1 that is not its node's (left out); task 1.4
/// names no CPU (0).
#[test]
fn recorded_placement_from_the_records_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let prv = "#Paraver (x):1000_ns:2(2,2):1:4(1:1,1:1,1:2,1:2)\n\
               1:2:1:1:1:0:10:1\n\
               2:2:1:2:1:1:40000001:1\n\
               3:2:1:2:1:2:2:4:1:3:1:3:3:8:1\n\
               3:2:1:2:1:4:4:1:1:3:1:5:5:8:1\n\
               2:0:1:4:1:6:40000001:1\n";
    let p = write_trace(dir.path(), "cpus", prv, None, None);
    let t = paraver::read_paraver_with(&p, &ParaverOptions::default()).unwrap();
    let cpus = |task: &str| {
        let placement = |k: &str| t.defs.property(&format!("{k}cpus/{task}")).map(str::to_owned);
        (placement("cpus_allowed:"), placement("cpus_used:"))
    };
    let one = (Some("1".to_owned()), Some("1".to_owned()));
    assert_eq!(cpus("task 1.1"), one);
    assert_eq!(cpus("task 1.2"), one);
    assert_eq!(cpus("task 1.3"), one);
    assert_eq!(cpus("task 1.4"), (None, None));
    // Tasks 1.1 and 1.2 shared CPU 1 of node 1.
    let shared = t.defs.shared_processors();
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert_eq!((shared[0].processes.clone(), shared[0].cpus.clone()), (vec![0, 1], vec![1]));
    // The real trace: its two tasks on CPUs 1 and 2 of its one node, a processor each.
    let Some(real) = real_trace() else { return };
    let t = paraver::read_paraver_with(&real, &ParaverOptions::default()).unwrap();
    let allowed: Vec<_> = (0..2).filter_map(|p| t.defs.recorded_cpus(p)).map(|c| c.allowed).collect();
    assert_eq!(allowed, [vec![0], vec![1]]);
    assert!(t.defs.shared_processors().is_empty());
}
