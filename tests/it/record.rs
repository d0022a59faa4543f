//! spoor-record end to end: the example programs (examples/) are built and recorded for
//! real, and what was recorded is checked against what the programs did; the recorded
//! directories go through spoor-merge | spoor-align | spoor-order --check.
//!
//! The MPI tests need Debian's libopenmpi-dev and openmpi-bin (scripts/test installs them);
//! without mpicc they fail, saying so.

use crate::common::*;
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{Definitions, Event, Kind};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Compiles a C source of the repository into `dir`.
fn compile(cc: &Path, src: &str, flags: &[&str], dir: &Path) -> PathBuf {
    let exe = dir.join(Path::new(src).file_stem().unwrap());
    let out = Command::new(cc).args(flags).arg("-o").arg(&exe).arg(root().join(src)).output().unwrap();
    assert_success(&out, &format!("compiling {src}"));
    exe
}

/// `mpirun -np N [spoor-record -o DIR --] PROGRAM ARGS`, as root on a small machine.
fn mpirun(np: usize, record: Option<&Path>, exe: &Path, args: &[&str]) -> Output {
    mpirun_command(np, record, exe, args).output().unwrap()
}

fn mpirun_command(np: usize, record: Option<&Path>, exe: &Path, args: &[&str]) -> Command {
    let (_, run) = mpi();
    let mut c = Command::new(run);
    c.args(["--oversubscribe", "-np", &np.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl", "self,vader,tcp")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .stdin(Stdio::null());
    if let Some(dir) = record {
        c.arg(bin("record")).arg("-o").arg(dir).arg("--");
    }
    c.arg(exe).args(args);
    c
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(b).lines().map(str::to_owned).collect();
    v.sort();
    v
}

fn read(path: &Path, salvage: bool) -> (Definitions, Vec<Event>) {
    TraceReader::open(path.to_str().unwrap(), ReadOptions { salvage }).unwrap().read_all().unwrap()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// spoor-merge DIR/* into one file, then spoor-align (report) and spoor-order --check.
/// Returns the merged trace and the alignment report.
fn pipeline(dir: &Path, tmp: &Path) -> ((Definitions, Vec<Event>), serde_json::Value) {
    let merged = tmp.join("merged.spoor");
    let out = Command::new(bin("merge")).args(files(dir)).arg("-o").arg(&merged).output().unwrap();
    assert_success(&out, "spoor-merge");
    let aligned = tmp.join("aligned.spoor");
    let report = tmp.join("align.json");
    let out = Command::new(bin("align"))
        .arg(&merged)
        .arg("--report")
        .arg(&report)
        .arg("-o")
        .arg(&aligned)
        .output()
        .unwrap();
    assert_success(&out, "spoor-align");
    let out = Command::new(bin("order")).arg("--check").arg(&aligned).output().unwrap();
    assert_success(&out, "spoor-order --check");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no problems"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let rep: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (read(&merged, false), rep)
}

fn by_loc(events: &[Event]) -> BTreeMap<u32, Vec<&Event>> {
    let mut m: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    for e in events {
        m.entry(e.loc).or_default().push(e);
    }
    m
}

/// CPU time is on every event and never advances more than wall time on a location.
fn check_cpu(events: &[Event]) {
    for (loc, evs) in by_loc(events) {
        for w in evs.windows(2) {
            let (a, b) = (w[0].cpu.expect("cpu time"), w[1].cpu.expect("cpu time"));
            assert!(
                b >= a && b - a <= w[1].wall - w[0].wall,
                "location {loc}: cpu {a}->{b}, wall {}->{}",
                w[0].wall,
                w[1].wall
            );
        }
    }
}

/// Every point-to-point message has its receive: the k-th send of each channel (sender,
/// receiver, communicator, tag) and its k-th completed receive agree on the size.
/// Returns the messages per (sender, receiver).
fn check_messages(events: &[Event]) -> BTreeMap<(u32, u32), Vec<(u32, u64)>> {
    let mut sends: HashMap<(u32, u32, u32, u32), Vec<u64>> = HashMap::new();
    let mut recvs: HashMap<(u32, u32, u32, u32), Vec<u64>> = HashMap::new();
    let mut pairs: BTreeMap<(u32, u32), Vec<(u32, u64)>> = BTreeMap::new();
    for e in events {
        match e.kind {
            Kind::Send { to, comm, tag, bytes } | Kind::Isend { to, comm, tag, bytes, .. } => {
                sends.entry((e.loc, to, comm, tag)).or_default().push(bytes);
                pairs.entry((e.loc, to)).or_default().push((tag, bytes));
            }
            Kind::RecvEnd { from, comm, tag, bytes } | Kind::IrecvComplete { from, comm, tag, bytes, .. } => {
                recvs.entry((from, e.loc, comm, tag)).or_default().push(bytes)
            }
            _ => {}
        }
    }
    assert_eq!(sends, recvs, "sends and receives per channel");
    pairs
}

fn loc_of_rank(defs: &Definitions) -> BTreeMap<u32, u32> {
    defs.locations
        .iter()
        .enumerate()
        .filter(|(_, l)| l.thread == 0)
        .map(|(i, l)| (defs.processes[l.process as usize].rank, i as u32))
        .collect()
}

/// Clock-offset samples at MPI_Init and MPI_Finalize on every rank, against rank 0.
fn check_offsets(defs: &Definitions, events: &[Event], report: &serde_json::Value) {
    let ranks = loc_of_rank(defs);
    let r0 = ranks[&0];
    for (&rank, &loc) in &ranks {
        let samples: Vec<&Event> =
            events.iter().filter(|e| e.loc == loc && matches!(e.kind, Kind::ClockOffset { .. })).collect();
        assert_eq!(samples.len(), 2, "rank {rank}: one sample at MPI_Init, one at MPI_Finalize");
        for s in samples {
            let Kind::ClockOffset { reference, offset, error } = s.kind else { unreachable!() };
            assert_eq!(reference, r0);
            if rank == 0 {
                assert_eq!((offset, error), (0, 0));
            } else {
                // One machine: the clocks agree within the round trip (generously bounded).
                assert!(offset.unsigned_abs() <= error + 1_000_000, "rank {rank}: offset {offset} ± {error}");
            }
        }
        let m = report["locations"].as_array().unwrap().iter().find(|l| l["location"] == loc).unwrap();
        // The samples are applied unless they would break the clock condition more often
        // than the recorded clocks (one machine, one clock: their error can), and then
        // the report says the recorded clocks were kept.
        let want = match (rank, report["choice"]["clocks"].as_str()) {
            (0, _) => "reference",
            (_, Some("recorded")) => "none",
            _ => "samples",
        };
        assert_eq!(m["method"], want, "rank {rank} aligned by {}: {}", m["method"], report["choice"]);
    }
}

fn name(defs: &Definitions, id: u32) -> &str {
    defs.strings.get(id).unwrap()
}

/// The token's path through the 4 ranks of examples/ring.c: r -> r+1, six rounds, round k
/// with tag k and 100 + k ints.
fn check_ring_tokens(defs: &Definitions, events: &[Event]) {
    let rank = loc_of_rank(defs);
    let pairs = check_messages(events);
    let want: Vec<(u32, u64)> = (0..6).map(|k| (k, (100 + k as u64) * 4)).collect();
    for r in 0..4u32 {
        assert_eq!(pairs[&(rank[&r], rank[&((r + 1) % 4)])], want, "messages of rank {r}");
    }
    assert_eq!(pairs.len(), 4);
}

#[test]
fn mpi_ring_with_a_late_sender() {
    let (cc, _) = mpi();
    let tmp = tempfile::tempdir().unwrap();
    let exe = compile(&cc, "examples/ring.c", &["-O1"], tmp.path());
    let plain = mpirun(4, None, &exe, &[]);
    assert_success(&plain, "ring");
    let dir = tmp.path().join("traces");
    let rec = mpirun(4, Some(&dir), &exe, &[]);
    assert_success(&rec, "recorded ring");
    assert_eq!(sorted_lines(&rec.stdout), sorted_lines(&plain.stdout), "recording changed the output");
    let names: Vec<String> =
        files(&dir).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(
        names,
        ["ring.rank00000.spoor", "ring.rank00001.spoor", "ring.rank00002.spoor", "ring.rank00003.spoor"]
    );
    // Each rank's own file defines every rank, its own main thread as location 0.
    for (r, f) in files(&dir).iter().enumerate() {
        let (defs, events) = read(f, false);
        assert_eq!(defs.processes.len(), 4);
        assert_eq!(defs.processes[0].rank, r as u32);
        assert!(events.iter().all(|e| e.loc == 0));
        let world = defs.comms.iter().find(|c| name(&defs, c.name) == "MPI_COMM_WORLD").unwrap();
        let world_ranks: Vec<u32> = world
            .members
            .iter()
            .map(|&l| defs.processes[defs.locations[l as usize].process as usize].rank)
            .collect();
        assert_eq!(world_ranks, [0, 1, 2, 3]);
    }

    let ((defs, events), report) = pipeline(&dir, tmp.path());
    check_cpu(&events);
    check_offsets(&defs, &events, &report);
    check_ring_tokens(&defs, &events);
    let rank = loc_of_rank(&defs);
    // Odd rounds are received with wildcards; the actual source and tag are recorded.
    for r in 0..4u32 {
        let l = rank[&r];
        let begins: Vec<&Kind> = events
            .iter()
            .filter(|e| e.loc == l && matches!(e.kind, Kind::RecvBegin { .. }))
            .map(|e| &e.kind)
            .collect();
        assert_eq!(begins.len(), 6);
        for (k, b) in begins.iter().enumerate() {
            let Kind::RecvBegin { from, tag, .. } = b else { unreachable!() };
            if k % 2 == 1 {
                assert_eq!((*from, *tag), (None, None));
            } else {
                assert_eq!((*from, *tag), (Some(rank[&((r + 3) % 4)]), Some(k as u32)));
            }
        }
    }
    // Rank 2 waits for the late rank 1 (20 ms of computing per round) in its receives.
    let l2 = rank[&2];
    let evs: Vec<&Event> = events.iter().filter(|e| e.loc == l2).collect();
    let waits: Vec<i64> = evs
        .windows(2)
        .filter(|w| matches!(w[0].kind, Kind::RecvBegin { .. }) && matches!(w[1].kind, Kind::RecvEnd { .. }))
        .map(|w| w[1].wall - w[0].wall)
        .collect();
    assert_eq!(waits.len(), 6);
    // (On a loaded machine rank 2 may itself post a receive late: most rounds suffice.)
    assert!(waits.iter().filter(|&&w| w >= 10_000_000).count() >= 4, "rank 2 waits {waits:?}");
    // Barrier at the end: one coll_begin/coll_end on every rank.
    let barriers = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::CollEnd { op: spoor_model::CollOp::Barrier, .. }))
        .count();
    assert_eq!(barriers, 4);
    // MPI calls are procedures too.
    let sends = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "MPI_Send"))
        .count();
    assert_eq!(sends, 24);
}

#[test]
fn mpi_stencil_nonblocking_halo_and_allreduce() {
    let (cc, _) = mpi();
    let tmp = tempfile::tempdir().unwrap();
    let exe = compile(&cc, "examples/stencil.c", &["-O2"], tmp.path());
    let plain = mpirun(4, None, &exe, &["20", "16"]);
    assert_success(&plain, "stencil");
    let dir = tmp.path().join("traces");
    let rec = mpirun(4, Some(&dir), &exe, &["20", "16"]);
    assert_success(&rec, "recorded stencil");
    assert_eq!(rec.stdout, plain.stdout, "recording changed the output");
    let ((defs, events), report) = pipeline(&dir, tmp.path());
    check_cpu(&events);
    check_offsets(&defs, &events, &report);
    check_recorded_cpus(&defs);
    let rank = loc_of_rank(&defs);
    // A 2x2 grid (MPI_Dims_create): each rank has two neighbours; per iteration one
    // message of 16 doubles each way (the tags say the direction).
    let pairs = check_messages(&events);
    assert_eq!(pairs.len(), 8);
    for ((from, to), msgs) in &pairs {
        assert_eq!(msgs.len(), 20, "{from}->{to}");
        assert!(msgs.iter().all(|&(tag, bytes)| tag < 4 && bytes == 128));
    }
    let neighbours = |a: u32, b: u32| pairs.contains_key(&(rank[&a], rank[&b]));
    assert!(
        neighbours(0, 1) && neighbours(0, 2) && neighbours(3, 1) && neighbours(3, 2) && !neighbours(0, 3)
    );
    // The messages travel on the Cartesian communicator, named by its creation.
    let comm_names: Vec<&str> = events
        .iter()
        .filter_map(|e| match e.kind {
            Kind::Isend { comm, .. } => Some(name(&defs, defs.comms[comm as usize].name)),
            _ => None,
        })
        .collect();
    assert!(comm_names.iter().all(|&n| n == "comm 0.0"), "{:?}", &comm_names[..2]);
    // Every request completes once: isend_complete for sends, irecv_complete for receives.
    for (loc, evs) in by_loc(&events) {
        let mut open: HashMap<u64, bool> = HashMap::new();
        for e in &evs {
            match e.kind {
                Kind::Isend { request, .. } => assert!(open.insert(request, false).is_none()),
                Kind::IrecvRequest { request, .. } => assert!(open.insert(request, true).is_none()),
                Kind::IsendComplete { request } => assert_eq!(open.remove(&request), Some(false)),
                Kind::IrecvComplete { request, .. } => assert_eq!(open.remove(&request), Some(true)),
                _ => {}
            }
        }
        assert!(open.is_empty(), "location {loc}: requests never completed");
        let ends: Vec<&Kind> =
            evs.iter().filter(|e| matches!(e.kind, Kind::CollEnd { .. })).map(|e| &e.kind).collect();
        assert_eq!(ends.len(), 20);
        for k in ends {
            assert!(matches!(
                k,
                Kind::CollEnd { op: spoor_model::CollOp::Allreduce, root: None, sent: 8, received: 8, .. }
            ));
        }
    }
}

/// Every rank says where it ran (formats/trace.md, "Recorded placement"): on CPUs it was
/// allowed; ranks that outnumber the CPUs they could use together
/// shared processors.
fn check_recorded_cpus(defs: &Definitions) {
    let mut all = Vec::new();
    for p in 0..defs.processes.len() as u32 {
        let name = name(defs, defs.processes[p as usize].name);
        let cpus = defs.recorded_cpus(p).unwrap_or_else(|| panic!("{name}: no recorded CPUs"));
        assert!(!cpus.used.is_empty(), "{name}: no CPU seen");
        assert!(cpus.used.iter().all(|c| cpus.allowed.contains(c)), "{name}: {cpus:?}");
        all.extend(cpus.allowed);
    }
    all.sort_unstable();
    all.dedup();
    let shared = defs.shared_processors();
    if all.len() < defs.processes.len() {
        assert!(!shared.is_empty(), "{} ranks on CPUs {all:?} but none shared", defs.processes.len());
    }
}

/// What `spoor-record FLAG` prints (`--include-dir`, `--library`), with the built-in
/// copies written under `cache`.
fn record_says(flag: &str, cache: &Path) -> PathBuf {
    let out = Command::new(bin("record"))
        .arg(flag)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("SPOOR_PRELOAD")
        .output()
        .unwrap();
    assert_success(&out, &format!("spoor-record {flag}"));
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end())
}

/// Each location's phase marks in order: (begin?, name, wall).
fn phase_marks<'a>(defs: &'a Definitions, events: &[Event]) -> BTreeMap<u32, Vec<(bool, &'a str, i64)>> {
    let mut m: BTreeMap<u32, Vec<(bool, &str, i64)>> = BTreeMap::new();
    for e in events {
        match e.kind {
            Kind::PhaseBegin { name: n } => m.entry(e.loc).or_default().push((true, name(defs, n), e.wall)),
            Kind::PhaseEnd { name: n } => m.entry(e.loc).or_default().push((false, name(defs, n), e.wall)),
            _ => {}
        }
    }
    m
}

/// examples/stencil.c built with spoor.h (`spoor-record --include-dir`): `setup` marked
/// with its macros, `solve` with MPI_Pcontrol. Without spoor-record it runs as before;
/// recorded, every rank has both phases around what they hold, and spoor-cp --phase
/// restricts the path to them.
#[test]
fn mpi_stencil_phases_from_spoor_h_and_mpi_pcontrol() {
    let (cc, _) = mpi();
    let tmp = tempfile::tempdir().unwrap();
    let include = record_says("--include-dir", &tmp.path().join("cache"));
    let header = std::fs::read(include.join("spoor.h")).unwrap();
    assert_eq!(header, std::fs::read(root().join("crates/record-preload/c/spoor.h")).unwrap());
    let exe = compile(&cc, "examples/stencil.c", &["-O2", &format!("-I{}", include.display())], tmp.path());
    // The marks are in the program: the weak references the header declares.
    let nm = Command::new("nm").arg(&exe).output().unwrap();
    assert!(text(&nm.stdout).contains(" w spoor_phase_begin"), "{}", text(&nm.stdout));
    let plain = mpirun(4, None, &exe, &["20", "16"]);
    assert_success(&plain, "stencil with phase marks, not recorded");
    let dir = tmp.path().join("traces");
    let rec = mpirun(4, Some(&dir), &exe, &["20", "16"]);
    assert_success(&rec, "recorded stencil with phase marks");
    assert_eq!(rec.stdout, plain.stdout, "recording changed the output");
    let ((defs, events), _) = pipeline(&dir, tmp.path());
    let marks = phase_marks(&defs, &events);
    assert_eq!(marks.len(), 4, "{marks:?}");
    let solve = |loc: u32| {
        let m = &marks[&loc];
        let names: Vec<(bool, &str)> = m.iter().map(|&(b, n, _)| (b, n)).collect();
        assert_eq!(
            names,
            [(true, "setup"), (false, "setup"), (true, "solve"), (false, "solve")],
            "location {loc}"
        );
        (m[2].2, m[3].2)
    };
    for (loc, evs) in by_loc(&events) {
        let (begin, end) = solve(loc);
        // Every iteration's allreduce lies in `solve`; MPI_Init lies before `setup`.
        let ends: Vec<i64> =
            evs.iter().filter(|e| matches!(e.kind, Kind::CollEnd { .. })).map(|e| e.wall).collect();
        assert_eq!(ends.len(), 20);
        assert!(ends.iter().all(|&t| begin < t && t < end), "location {loc}");
        let init =
            evs.iter().find(|e| matches!(e.kind, Kind::Leave { proc } if name(&defs, proc) == "MPI_Init"));
        assert!(init.unwrap().wall <= marks[&loc][0].2, "location {loc}");
    }
    // spoor-cp --phase solve: in wall mode the path runs from the earliest begin of `solve`
    // to its latest end, on the ordered trace's (aligned) clocks.
    let ordered = tmp.path().join("o.spoor");
    let aligned = tmp.path().join("aligned.spoor");
    assert_success(
        &Command::new(bin("order")).arg("-q").arg(&aligned).arg("-o").arg(&ordered).output().unwrap(),
        "spoor-order",
    );
    let (odefs, oevents) = read(&ordered, false);
    let omarks = phase_marks(&odefs, &oevents);
    let of =
        |begin: bool| omarks.values().flatten().filter(move |m| m.0 == begin && m.1 == "solve").map(|m| m.2);
    let (first, last) = (of(true).min().unwrap(), of(false).max().unwrap());
    let cp = |args: &[&str]| -> serde_json::Value {
        let out = Command::new(bin("cp")).arg(&ordered).args(args).args(["-f", "json"]).output().unwrap();
        assert_success(&out, &format!("spoor-cp {args:?}"));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let wall = cp(&["--weight", "wall", "--phase", "solve"]);
    assert_eq!(wall["window"], serde_json::json!([first, last]));
    assert_eq!(wall["length_ns"].as_i64().unwrap(), last - first);
    let whole = cp(&["--weight", "wall"]);
    assert!(whole["length_ns"].as_i64().unwrap() > last - first);
    // `setup`, which each rank ends before it begins `solve`, begins and ends earlier (the
    // ranks run apart: one may begin `solve` before another ends `setup`); an unknown
    // phase names the two.
    let setup = cp(&["--weight", "wall", "--phase", "setup"]);
    let (a, b) = (setup["window"][0].as_i64().unwrap(), setup["window"][1].as_i64().unwrap());
    assert!(a < first && b < last && setup["length_ns"].as_i64().unwrap() == b - a, "{setup}");
    let out = Command::new(bin("cp")).arg(&ordered).args(["--phase", "halo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).ends_with("the trace has: setup, solve\n"), "{}", text(&out.stderr));
    // The prediction of `solve` on a processor per rank is its cpu-mode critical path.
    let cpu = cp(&["--phase", "solve"])["length_ns"].as_i64().unwrap();
    let out = Command::new(bin("gag"))
        .arg(&ordered)
        .args(["-q", "--predict", "--place-by", "process", "--phase", "solve"])
        .output()
        .unwrap();
    assert_success(&out, "spoor-gag --phase solve");
    // Printed with three decimals in the unit that suits it (us for a short run).
    let said = text(&out.stdout);
    let words: Vec<&str> = said.split_whitespace().collect();
    let scale = match words[3] {
        "s" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        other => panic!("unit `{other}` in {said}"),
    };
    let predicted = words[2].parse::<f64>().unwrap() * scale;
    assert!((predicted - cpu as f64).abs() <= scale / 2e3, "{said} (want {cpu} ns)");
    assert!(said.contains("on 4 processors"), "{said}");
}

/// A Fortran program calls the library's Fortran entry points: linked with the library
/// (`spoor-record --library`) it runs as before without spoor-record, and recorded, its
/// blank-padded names come out trimmed.
#[test]
fn fortran_phase_marks_lose_their_trailing_blanks() {
    let Some(fc) = tool("gfortran") else {
        panic!("gfortran not found: install Debian's gfortran (libopenmpi-dev brings it) to run the Fortran test")
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("phases.f90");
    std::fs::write(
        &src,
        "program phases\n  call spoor_phase_begin('io')\n  call spoor_phase_end('io   ')\n  \
         call spoor_phase_begin('solve step')\n  call spoor_phase_end('solve step      ')\n  \
         call spoor_phase_begin('     ')\n  print '(a)', 'done'\nend program\n",
    )
    .unwrap();
    let library = record_says("--library", &tmp.path().join("cache"));
    let exe = tmp.path().join("phases");
    let out = Command::new(fc).arg("-o").arg(&exe).arg(&src).arg(&library).output().unwrap();
    assert_success(&out, "gfortran");
    let plain = Command::new(&exe).env_remove("SPOOR_RECORD_DIR").output().unwrap();
    assert_success(&plain, "the Fortran program alone");
    let dir = tmp.path().join("traces");
    let rec = Command::new(bin("record")).arg("-o").arg(&dir).arg("--").arg(&exe).output().unwrap();
    assert_success(&rec, "the Fortran program recorded");
    assert_eq!(rec.stdout, plain.stdout);
    let f = files(&dir);
    assert_eq!(f.len(), 1, "one trace: the library linked in is the one preloaded");
    let (defs, events) = read(&f[0], false);
    let marks: Vec<(bool, &str)> =
        phase_marks(&defs, &events).into_values().flatten().map(|(b, n, _)| (b, n)).collect();
    // A name of blanks only is no name: nothing recorded.
    assert_eq!(marks, [(true, "io"), (false, "io"), (true, "solve step"), (false, "solve step")]);
}

#[test]
fn mpi_spa_with_procedure_hooks() {
    let (cc, _) = mpi();
    let tmp = tempfile::tempdir().unwrap();
    let exe = compile(&cc, "examples/spa.c", &["-O1", "-finstrument-functions"], tmp.path());
    let dir = tmp.path().join("traces");
    let rec = mpirun(4, Some(&dir), &exe, &[]);
    assert_success(&rec, "recorded spa");
    let out = String::from_utf8_lossy(&rec.stdout);
    for c in 1..=3 {
        assert!(out.contains(&format!("server: served client {c} 8 times")), "{out}");
    }
    let ((defs, events), report) = pipeline(&dir, tmp.path());
    check_cpu(&events);
    check_offsets(&defs, &events, &report);
    let rank = loc_of_rank(&defs);
    let pairs = check_messages(&events);
    for c in 1..=3u32 {
        assert_eq!(pairs[&(rank[&c], rank[&0])], vec![(1, 8); 8]);
        assert_eq!(pairs[&(rank[&0], rank[&c])], vec![(2, 8); 8]);
    }
    // Procedure names come from the ELF symbols; the server's receives are wildcards,
    // and each servBusy call follows a request of the client it serves.
    let server = rank[&0];
    let mut last_from = None;
    let mut served: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e.loc == server) {
        match e.kind {
            Kind::RecvBegin { from, tag: Some(1), .. } => assert_eq!(from, None),
            Kind::RecvEnd { from, tag: 1, .. } => last_from = Some(from),
            Kind::Enter { proc } if name(&defs, proc).starts_with("servBusy") => {
                let client =
                    defs.processes[defs.locations[last_from.unwrap() as usize].process as usize].rank;
                *served.entry((name(&defs, proc).to_owned(), client)).or_default() += 1;
            }
            _ => {}
        }
    }
    let want: BTreeMap<(String, u32), usize> = [
        (("servBusy1".to_owned(), 1), 8),
        (("servBusy2".to_owned(), 2), 8),
        (("servBusy2".to_owned(), 3), 8),
    ]
    .into();
    assert_eq!(served, want);
    for c in 1..=3u32 {
        let work = events
            .iter()
            .filter(|e| {
                e.loc == rank[&c]
                    && matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "clientWork")
            })
            .count();
        assert_eq!(work, 8, "client {c}");
        let mains = events
            .iter()
            .filter(|e| e.loc == rank[&c] && matches!(e.kind, Kind::Enter { proc } | Kind::Leave { proc } if name(&defs, proc) == "main"))
            .count();
        assert_eq!(mains, 2, "client {c}: main entered and left");
    }
    // No address was left without a name.
    assert!(defs.strings.iter().all(|s| !s.starts_with("0x")), "unresolved procedure addresses");
}

/// The spin test program under spoor-record, not MPI.
fn spin(tmp: &Path) -> PathBuf {
    let cc = tool("cc").or_else(|| tool("gcc")).expect("a C compiler (cc)");
    compile(&cc, "tests/record/spin.c", &["-O1", "-finstrument-functions"], tmp)
}

#[test]
fn exit_code_and_output_are_the_programs() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = spin(tmp.path());
    let plain = Command::new(&exe).args(["exit", "7"]).output().unwrap();
    let dir = tmp.path().join("t");
    let rec = Command::new(bin("record"))
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&exe)
        .args(["exit", "7"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(7));
    assert_eq!(rec.status.code(), Some(7));
    assert_eq!(rec.stdout, plain.stdout);
    assert!(rec.stderr.is_empty(), "{}", String::from_utf8_lossy(&rec.stderr));
    let f = files(&dir);
    assert_eq!(f.len(), 1);
    let (defs, events) = read(&f[0], false);
    check_cpu(&events);
    let count = |n: &str| {
        events.iter().filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == n)).count()
    };
    assert_eq!((count("work"), count("main")), (1000, 1));
    assert_eq!(events.first().unwrap().kind, Kind::ProcessBegin { parent: None });
    assert_eq!(events.last().unwrap().kind, Kind::ProcessEnd);
}

#[test]
fn a_forked_child_is_not_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = spin(tmp.path());
    let dir = tmp.path().join("t");
    let rec = Command::new(bin("record"))
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&exe)
        .args(["fork", "3", "200"])
        .output()
        .unwrap();
    assert_eq!(rec.status.code(), Some(3), "{}", String::from_utf8_lossy(&rec.stderr));
    let f = files(&dir);
    assert_eq!(f.len(), 1, "one trace: the parent's");
    let (defs, events) = read(&f[0], false);
    check_cpu(&events);
    let works = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "work"))
        .count();
    assert_eq!(works, 200, "the child's 500 calls are not in the parent's trace");
    assert_eq!(events.last().unwrap().kind, Kind::ProcessEnd);
}

#[test]
fn killed_and_crashed_programs_leave_readable_traces() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let exe = spin(tmp.path());
    // SIGTERM while it runs.
    let dir = tmp.path().join("term");
    let mut child = Command::new(bin("record"))
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&exe)
        .arg("forever")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: signalling our own child.
    unsafe { libc_kill(child.id() as i32, 15) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "the program still dies of SIGTERM");
    // SIGSEGV.
    let dir2 = tmp.path().join("segv");
    let status = Command::new(bin("record"))
        .arg("-o")
        .arg(&dir2)
        .arg("--")
        .arg(&exe)
        .arg("segv")
        .output()
        .unwrap()
        .status;
    assert_eq!(status.signal(), Some(11), "the program still dies of SIGSEGV");
    for (d, least) in [(&dir, 20_001), (&dir2, 1000)] {
        let f = files(d);
        assert_eq!(f.len(), 1);
        let out = Command::new(bin("cat")).arg("--salvage").arg(&f[0]).output().unwrap();
        assert_success(&out, "spoor-cat --salvage");
        let (defs, events) = read(&f[0], true);
        let works = events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "work"))
            .count();
        assert!(works >= least, "{}: {works} calls of work recorded", d.display());
        check_cpu(&events);
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn unwritable_output_directory_is_an_error_before_the_program_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let marker = tmp.path().join("ran");
    let out = Command::new(bin("record"))
        .arg("-o")
        .arg(file.join("dir"))
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("spoor-record: ") && err.contains("cannot create the output directory"), "{err}");
    assert!(!marker.exists(), "the program ran");
    // A missing program is an error too.
    let out = Command::new(bin("record"))
        .arg("-o")
        .arg(tmp.path().join("d"))
        .args(["--", "/nonexistent/prog"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run /nonexistent/prog"));
}

/// The example built by cargo (cargo test builds examples; alone, this test builds it).
fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let exe = deps.parent().unwrap().join("examples").join(name);
    if !exe.is_file() {
        let out = Command::new(env!("CARGO"))
            .args(["build", "--example", name])
            .current_dir(root())
            .output()
            .unwrap();
        assert_success(&out, &format!("cargo build --example {name}"));
    }
    exe
}

#[test]
fn rust_client_server_over_tcp_with_the_rust_api() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traces");
    let out = Command::new(example("tcp_client_server"))
        .arg("-o")
        .arg(&dir)
        .args(["--clients", "3", "--requests", "4"])
        .output()
        .unwrap();
    assert_success(&out, "tcp_client_server");
    assert_eq!(files(&dir).len(), 4);
    let ((defs, events), _) = pipeline(&dir, tmp.path());
    check_cpu(&events);
    let mut loc: BTreeMap<(String, u32), u32> = BTreeMap::new();
    for (i, l) in defs.locations.iter().enumerate() {
        let p = &defs.processes[l.process as usize];
        loc.insert((name(&defs, p.name).to_owned(), p.rank), i as u32);
    }
    assert_eq!(loc.len(), 4);
    let server = loc[&("server".to_owned(), 0)];
    let pairs = check_messages(&events);
    for k in 1..=3u32 {
        let c = loc[&("client".to_owned(), k)];
        let mut want = vec![(0, 4)];
        want.extend((0..4).map(|_| (1, 4 + 64 * k as u64)));
        assert_eq!(pairs[&(c, server)], want, "client {k}");
        assert_eq!(pairs[&(server, c)], vec![(2, 16); 4]);
    }
    let serves = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "serve"))
        .count();
    assert_eq!(serves, 12);
    let locks = events.iter().filter(|e| matches!(e.kind, Kind::LockAcquire { lock: 1 })).count();
    assert_eq!(locks, 12);
    let metrics: Vec<f64> = events
        .iter()
        .filter_map(|e| if let Kind::Metric { value, .. } = e.kind { Some(value) } else { None })
        .collect();
    assert_eq!(metrics, (1..=12).map(f64::from).collect::<Vec<_>>());
}

/// A directory standing for PATH without MPI: a link to every program of PATH (the first
/// of each name) except the MPI compiler wrappers and launchers (`mpi*`).
fn path_without_mpi(dir: &Path) -> PathBuf {
    let shadow = dir.join("bin");
    std::fs::create_dir_all(&shadow).unwrap();
    let path = std::env::var_os("PATH").unwrap();
    for d in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            let link = shadow.join(&name);
            if !name.to_string_lossy().starts_with("mpi") && std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(e.path(), link).unwrap();
            }
        }
    }
    shadow
}

/// `cargo build -p spoor-record-preload` into `target` with PATH = `path`.
fn build_preload(target: &Path, path: &Path) -> Output {
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "-p", "spoor-record-preload"])
        .current_dir(root())
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    assert_success(&out, "cargo build -p spoor-record-preload");
    out
}

/// The library built where mpicc is not on PATH holds no MPI wrappers: spoor-record refuses
/// to record an MPI program with it (saying how to fix it) rather than write traces without
/// MPI; the library itself says so when preloaded directly. Once mpicc appears in a
/// directory of PATH, the next build gives the wrappers and the same program is recorded.
#[test]
fn a_library_built_without_mpicc_refuses_mpi_programs_until_mpi_appears() {
    let (cc, _) = mpi();
    let tmp = tempfile::tempdir().unwrap();
    let ring = compile(&cc, "examples/ring.c", &["-O1"], tmp.path());
    // A target directory of its own, kept between runs (only the library is rebuilt).
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let target = deps.parent().unwrap().parent().unwrap().join("preload-without-mpicc");
    let lib = target.join("debug").join("libspoor_preload.so");
    let shadow = path_without_mpi(tmp.path());

    let out = build_preload(&target, &shadow);
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(warning.contains("mpicc not found"), "{warning}");
    assert!(!spoor_record::launch::preload_has_mpi(&lib).unwrap());
    let dir = tmp.path().join("refused");
    let rec = Command::new(bin("record"))
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&ring)
        .env("SPOOR_PRELOAD", &lib)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(1), "{err}");
    assert!(err.starts_with("spoor-record: ") && err.contains("is linked to libmpi"), "{err}");
    assert!(err.contains("built without MPI wrappers") && err.contains("libopenmpi-dev"), "{err}");
    assert!(err.contains("cargo build --release"), "{err}");
    assert!(rec.stdout.is_empty(), "the program ran");
    assert!(files(&dir).is_empty());
    // Preloaded without spoor-record, the library flags what it cannot record.
    let direct = Command::new(&ring)
        .env("LD_PRELOAD", &lib)
        .env("SPOOR_RECORD_DIR", tmp.path().join("direct"))
        .output()
        .unwrap();
    assert_success(&direct, "ring with the library preloaded");
    let err = String::from_utf8_lossy(&direct.stderr);
    assert!(err.contains("this program uses MPI") && err.contains("not recorded"), "{err}");
    // Programs without MPI are still recorded with it.
    let spin = spin(tmp.path());
    let rec = Command::new(bin("record"))
        .arg("-o")
        .arg(tmp.path().join("spin-traces"))
        .arg("--")
        .arg(&spin)
        .args(["exit", "0"])
        .env("SPOOR_PRELOAD", &lib)
        .output()
        .unwrap();
    assert_success(&rec, "spin recorded with the library without MPI");
    assert_eq!(files(&tmp.path().join("spin-traces")).len(), 1);

    // MPI appears in a directory of PATH: the same build command now gives the wrappers.
    std::os::unix::fs::symlink(&cc, shadow.join("mpicc")).unwrap();
    build_preload(&target, &shadow);
    assert!(spoor_record::launch::preload_has_mpi(&lib).unwrap());
    let dir = tmp.path().join("traces");
    let rec = mpirun_command(4, Some(&dir), &ring, &[]).env("SPOOR_PRELOAD", &lib).output().unwrap();
    assert_success(&rec, "recorded ring");
    assert_eq!(files(&dir).len(), 4, "one trace per rank");
    let ((defs, events), _) = pipeline(&dir, tmp.path());
    check_ring_tokens(&defs, &events);
}

/// An installed spoor-record alone (`cargo install` copies only executables) writes out
/// the library built into it, once, and records with it.
#[test]
fn spoor_record_alone_uses_the_library_built_into_it() {
    let tmp = tempfile::tempdir().unwrap();
    let installed = tmp.path().join("bin").join("spoor-record");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::copy(bin("record"), &installed).unwrap();
    let spin = spin(tmp.path());
    let cache = tmp.path().join("cache");
    for run in ["first", "second"] {
        let dir = tmp.path().join(run);
        let rec = Command::new(&installed)
            .arg("-o")
            .arg(&dir)
            .arg("--")
            .arg(&spin)
            .args(["exit", "0"])
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("SPOOR_PRELOAD")
            .output()
            .unwrap();
        assert_success(&rec, &format!("{run} run of spoor-record alone"));
        let f = files(&dir);
        assert_eq!(f.len(), 1);
        let (defs, events) = read(&f[0], false);
        let works = events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Enter { proc } if name(&defs, proc) == "work"))
            .count();
        assert_eq!(works, 1000);
    }
    // One library written out, with MPI wrappers when the one cargo built has them. (Not
    // compared byte for byte: cargo may build the library twice for the binaries' and the
    // tests' features, and both copies land on the same file name in deps/.)
    let written = files(&cache.join("spoor"));
    assert_eq!(written.len(), 1, "{written:?}");
    let built = Path::new(bin("record")).parent().unwrap().join("deps").join("libspoor_preload.so");
    let has_mpi = |p: &Path| spoor_record::launch::preload_has_mpi(p).unwrap();
    assert_eq!(has_mpi(&written[0]), has_mpi(&built));
}
