//! Recording real PVM programs: examples/pvm_farm.c (a master that spawns three workers,
//! one of them slow) under spoor-record, with a pvmd that each test starts on this host in
//! a directory of its own (PVM_TMP) and halts on every exit path. Needs Debian's pvm and
//! pvm-dev (scripts/test installs them); without them the tests fail, saying so.

use crate::common::{assert_success, bin, tool};
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{CollOp, Definitions, Event, Kind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PVM_ROOT: &str = "/usr/lib/pvm3";
const MISSING: &str = "PVM not found: install Debian's pvm and pvm-dev (scripts/test installs them)";

/// The PVM environment of a test: the daemon's files in `tmp` (no other daemon is met),
/// root allowed (the tests may run as root).
fn pvm_env<'c>(c: &'c mut Command, tmp: &Path) -> &'c mut Command {
    c.env("PVM_ROOT", PVM_ROOT).env("PVM_TMP", tmp).env("PVM_ALLOW_ROOT", "yes")
}

/// A pvmd of this test, halted (then killed, if it is still there) when dropped.
struct Pvmd {
    child: Child,
    tmp: PathBuf,
}

impl Pvmd {
    /// Starts pvmd on this host; spawned programs are looked for in `ep` and in PVM's own
    /// directory (the group server pvmgs).
    fn start(tmp: &Path, ep: &Path) -> Pvmd {
        let pvmd = tool("pvmd").unwrap_or_else(|| panic!("{MISSING}"));
        let lib = Path::new(PVM_ROOT).join("lib");
        let hostfile = tmp.join("hostfile");
        let host = spoor_record::hostname();
        std::fs::write(&hostfile, format!("{host} ep={}:{}\n", ep.display(), lib.display())).unwrap();
        let state = tmp.join("pvm");
        std::fs::create_dir_all(&state).unwrap();
        let child = pvm_env(&mut Command::new(pvmd), &state)
            .arg(&hostfile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let d = Pvmd { child, tmp: state };
        // The daemon is ready once it has written its address file (pvmd.UID).
        let start = Instant::now();
        while !std::fs::read_dir(&d.tmp)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().starts_with("pvmd."))
        {
            assert!(start.elapsed() < Duration::from_secs(20), "pvmd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        d
    }
}

impl Drop for Pvmd {
    fn drop(&mut self) {
        if let Some(console) = tool("pvm") {
            let halt = pvm_env(&mut Command::new(console), &self.tmp)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(mut halt) = halt {
                use std::io::Write;
                let _ = halt.stdin.take().map(|mut i| i.write_all(b"halt\n"));
                let _ = halt.wait();
            }
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// examples/pvm_farm.c compiled into `dir`.
fn farm(dir: &Path) -> PathBuf {
    assert!(Path::new("/usr/include/pvm3.h").is_file(), "{MISSING}");
    let exe = dir.join("pvm_farm");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pvm_farm.c");
    let out = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(["-lgpvm3", "-lpvm3"])
        .output()
        .unwrap();
    assert_success(&out, "cc pvm_farm.c");
    exe
}

/// `[spoor-record -o rec --] ./pvm_farm` in the program's directory (the daemon spawns the
/// workers by file name).
fn farm_command(exe: &Path, tmp: &Path, rec: Option<&Path>) -> Command {
    let mut c = match rec {
        Some(rec) => {
            let mut c = Command::new(bin("record"));
            c.arg("-o").arg(rec).arg("--").arg("./pvm_farm");
            c
        }
        None => Command::new("./pvm_farm"),
    };
    c.current_dir(exe.parent().unwrap()).stdin(Stdio::null());
    pvm_env(&mut c, &tmp.join("pvm"));
    c
}

fn read(path: &Path, salvage: bool) -> Result<(Definitions, Vec<Event>), spoor_format::Error> {
    TraceReader::open(path.to_str().unwrap(), ReadOptions { salvage })?.read_all()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// The workers outlive the master by a little: waits until `n` traces are complete.
fn wait_for_traces(dir: &Path, n: usize) -> Vec<PathBuf> {
    let start = Instant::now();
    loop {
        let f = files(dir);
        if f.len() == n && f.iter().all(|p| read(p, false).is_ok()) {
            return f;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "traces not complete: {f:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The workers outlive the master by a little: waits until no process runs `exe`, so that
/// a run's tasks have left its group before the next run of the program joins the group.
fn wait_for_exit(exe: &Path) {
    let start = Instant::now();
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path().join("exe")).ok())
            .any(|p| p == exe)
    };
    while running() {
        assert!(start.elapsed() < Duration::from_secs(30), "{} still runs", exe.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn name(d: &Definitions, id: u32) -> String {
    d.strings.name(id).into_owned()
}

fn loc_name(d: &Definitions, loc: u32) -> String {
    name(d, d.locations[loc as usize].name)
}

#[test]
fn pvm_farm_spawns_messages_multicasts_and_barrier_and_the_slow_worker_is_on_the_critical_path() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = farm(tmp.path());
    let _pvmd = Pvmd::start(tmp.path(), exe.parent().unwrap());
    let plain = farm_command(&exe, tmp.path(), None).output().unwrap();
    assert_success(&plain, "pvm_farm");
    wait_for_exit(&exe.canonicalize().unwrap());
    let rec = tmp.path().join("rec");
    let out = farm_command(&exe, tmp.path(), Some(&rec)).output().unwrap();
    assert_success(&out, "spoor-record pvm_farm");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    let plain_text = String::from_utf8_lossy(&plain.stdout).into_owned();
    let mut plain_lines: Vec<String> =
        plain_text.lines().map(|l| l.split(" from ").next().unwrap().to_owned()).collect();
    plain_lines.sort();
    let recorded: Vec<String> = lines.iter().map(|l| l.split(" from ").next().unwrap().to_owned()).collect();
    assert_eq!(recorded, plain_lines, "the recorded run computes what the plain one does");
    // The task that got item 1, the slow one (its result line names it).
    let slow = lines.iter().find_map(|l| l.strip_prefix("item 1: 2000 from ")).expect(&text).to_owned();
    let slow = format!("task {slow}");

    // One trace per task, named by application and task id.
    let traces = wait_for_traces(&rec, 4);
    let names: Vec<String> =
        traces.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| n.starts_with("pvm_farm.t") && n.ends_with(".spoor")), "{names:?}");
    let mut master = None;
    for t in &traces {
        let (d, ev) = read(t, false).unwrap();
        assert_eq!(name(&d, d.apps[0].name), "pvm_farm");
        let me = loc_name(&d, 0);
        assert_eq!(
            format!("pvm_farm.t{}.spoor", me.strip_prefix("task t").unwrap()),
            t.file_name().unwrap().to_string_lossy()
        );
        let Kind::ProcessBegin { parent } = ev[0].kind else { panic!("{me}: first event {:?}", ev[0]) };
        match parent {
            None => {
                assert!(master.is_none(), "one task without a parent");
                master = Some(me);
            }
            Some(p) => assert_eq!(Some(loc_name(&d, p)), master.clone().or_else(|| Some(loc_name(&d, p)))),
        }
    }
    let master = master.expect("the master's trace");

    // Merged: one application, four tasks; the workers' begins name the master (spawn arcs).
    let merged = tmp.path().join("m.spoor");
    assert_success(
        &Command::new(bin("merge")).args(&traces).arg("-o").arg(&merged).output().unwrap(),
        "spoor-merge",
    );
    let (d, ev) = read(&merged, false).unwrap();
    assert_eq!(d.apps.len(), 1);
    let mut per: BTreeMap<String, Vec<&Event>> = BTreeMap::new();
    for e in &ev {
        per.entry(loc_name(&d, e.loc)).or_default().push(e);
    }
    assert_eq!(per.len(), 4, "the group server is not a task of the program: {:?}", per.keys());
    let loc_of = |n: &str| d.locations.iter().position(|l| name(&d, l.name) == n).unwrap() as u32;
    let m = loc_of(&master);
    let workers: Vec<&String> = per.keys().filter(|k| **k != master).collect();
    for w in &workers {
        let evs = &per[*w];
        assert_eq!(evs[0].kind, Kind::ProcessBegin { parent: Some(m) }, "{w}");
        // pvm_recv of the multicast: 4 bytes (one packed int), tag 1, from the master.
        assert!(
            evs.iter().any(|e| matches!(e.kind, Kind::RecvEnd { from, tag: 1, bytes: 4, .. } if from == m)),
            "{w}"
        );
        // pvm_trecv with any tag: posted without one, completed with tag 2.
        assert!(evs
            .iter()
            .any(|e| matches!(e.kind, Kind::IrecvRequest { from: Some(f), tag: None, .. } if f == m)));
        assert!(evs
            .iter()
            .any(|e| matches!(e.kind, Kind::IrecvComplete { from, tag: 2, bytes: 4, .. } if from == m)));
        // pvm_psend of two longs.
        assert!(evs.iter().any(|e| matches!(e.kind, Kind::Send { to, tag: 3, bytes: 16, .. } if to == m)));
        // Clock samples against the master, measured by ping-pong at enrolment (before the
        // worker's first message) and at pvm_exit (after its barrier): one host, so the
        // offset is within a few hundred microseconds of 0, and the round trip took time.
        let samples: Vec<(usize, i64, u64)> = evs
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e.kind {
                Kind::ClockOffset { reference, offset, error } if reference == m => Some((i, offset, error)),
                _ => None,
            })
            .collect();
        eprintln!("{w}: clock samples against the master (offset ns, error ns): {samples:?}");
        assert_eq!(samples.len(), 2, "{w}: one sample at enrolment, one at exit: {samples:?}");
        for &(_, offset, error) in &samples {
            assert!(error > 0, "{w}: a round trip takes time: {samples:?}");
            assert!(offset.unsigned_abs() < 500_000, "{w}: one host, one clock: {samples:?}");
        }
        let first_msg = evs.iter().position(|e| matches!(e.kind, Kind::Send { .. } | Kind::RecvBegin { .. }));
        let barrier = evs.iter().position(|e| matches!(e.kind, Kind::CollEnd { .. }));
        assert!(samples[0].0 < first_msg.unwrap(), "{w}: the first sample is taken at enrolment");
        assert!(samples[1].0 > barrier.unwrap(), "{w}: the second at pvm_exit");
        // The program's messages only (the pings and answers are not recorded): one result
        // sent, the size and the item received.
        let count = |f: fn(&Kind) -> bool| evs.iter().filter(|e| f(&e.kind)).count();
        assert_eq!(count(|k| matches!(k, Kind::Send { .. })), 1, "{w}");
        assert_eq!(count(|k| matches!(k, Kind::RecvEnd { .. } | Kind::IrecvComplete { .. })), 2, "{w}");
    }
    let mevs = &per[&master];
    let sends = |tag| mevs.iter().filter(|e| matches!(e.kind, Kind::Send { tag: t, .. } if t == tag)).count();
    assert_eq!((sends(1), sends(2)), (3, 3), "the multicast is one send per worker, then one send each");
    assert_eq!(
        mevs.iter().filter(|e| matches!(e.kind, Kind::Send { .. })).count(),
        6,
        "the program's sends only"
    );
    assert_eq!(
        mevs.iter().filter(|e| matches!(e.kind, Kind::RecvEnd { .. })).count(),
        3,
        "its receives only"
    );
    assert!(!mevs.iter().any(|e| matches!(e.kind, Kind::ClockOffset { .. })), "the master has no parent");
    // pvm_precv from any task: the begin has no source, each end the worker's.
    let ends: Vec<String> = mevs
        .iter()
        .filter_map(|e| match e.kind {
            Kind::RecvEnd { from, tag: 3, bytes: 16, .. } => Some(loc_name(&d, from)),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 3);
    assert!(mevs.iter().any(|e| matches!(e.kind, Kind::RecvBegin { from: None, tag: Some(3), .. })));
    // One barrier on every task, all on the one communicator of group farm, whose members
    // are the four tasks (each task saw them join and leave at its own moments).
    let mut barrier_comms = BTreeSet::new();
    for (n, evs) in &per {
        let b: Vec<_> =
            evs.iter().filter(|e| matches!(e.kind, Kind::CollEnd { op: CollOp::Barrier, .. })).collect();
        assert_eq!(b.len(), 1, "{n}");
        let Kind::CollEnd { comm, .. } = b[0].kind else { unreachable!() };
        barrier_comms.insert(comm);
    }
    assert_eq!(barrier_comms.len(), 1, "{barrier_comms:?}");
    let farm = &d.comms[*barrier_comms.first().unwrap() as usize];
    assert_eq!(name(&d, farm.name), "pvm group farm");
    let members: BTreeSet<String> = farm.members.iter().map(|&l| loc_name(&d, l)).collect();
    assert_eq!(members, per.keys().cloned().collect(), "the group's members are the program's tasks");
    assert_eq!(d.comms.iter().filter(|c| name(&d, c.name) == "pvm group farm").count(), 1);

    // Aligned by the samples (the master is the reference) and ordered without problems.
    let aligned = tmp.path().join("a.spoor");
    let report = tmp.path().join("align.json");
    assert_success(
        &Command::new(bin("align"))
            .arg("-q")
            .arg(&merged)
            .arg("-o")
            .arg(&aligned)
            .arg("--report")
            .arg(&report)
            .output()
            .unwrap(),
        "spoor-align",
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    eprintln!("spoor-align report: {r}");
    assert_eq!(r["messages"], 9, "the program's 9 messages, no ping-pong: {r}");
    for l in r["locations"].as_array().unwrap() {
        let want = if l["name"] == master.as_str() { "reference" } else { "samples" };
        assert_eq!(l["method"], want, "{r}");
    }
    assert_eq!(r["choice"]["clocks"], "offsets", "{r}");
    assert_eq!(
        r["violations_after"],
        serde_json::json!({"messages": 0, "collectives": 0, "locks": 0}),
        "{r}"
    );
    let check = Command::new(bin("order")).arg("--check").arg(&aligned).output().unwrap();
    assert_success(&check, "spoor-order --check");
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("no problems"),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let ordered = tmp.path().join("o.spoor");
    assert_success(
        &Command::new(bin("order")).arg("-q").arg(&aligned).arg("-o").arg(&ordered).output().unwrap(),
        "spoor-order",
    );

    // The critical path (wall time): from the master through a spawn arc into the slow
    // worker, whose 300 ms of computing are on it.
    let cp = Command::new(bin("cp"))
        .arg(&ordered)
        .args(["--weight", "wall", "--profile", "process", "-f", "json"])
        .output()
        .unwrap();
    assert_success(&cp, "spoor-cp");
    let v: serde_json::Value = serde_json::from_slice(&cp.stdout).unwrap();
    let rows = v["profiles"][0]["rows"].as_array().unwrap();
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).map_or(0, |r| r["time_ns"].as_i64().unwrap());
    let json = String::from_utf8_lossy(&cp.stdout);
    assert!(row(&slow) >= 300_000_000, "{slow} computes 300 ms on the path: {json}");
    for w in &workers {
        if **w != slow {
            assert!(row(w) < 300_000_000, "{w} is a fast worker: {json}");
        }
    }
    assert!(row("(spawns)") > 0, "the path enters the slow worker by its spawn arc: {json}");
    assert!(row(&master) > 0, "the path starts in the master: {json}");
}

/// A parent that makes no PVM call until its child has enrolled (so it cannot answer the
/// child's enrolment pings): the child says so with a file, which the parent waits for
/// without PVM; then it receives one message from the child, whose exit pings it answers.
const SLEEPY: &str = r#"
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int child, v = 7, i;
    char mark[4096], spawned[4096];
    FILE *f;
    /* The child enrols only once its parent has left pvm_spawn for a loop with no PVM
     * call: then the enrolment's pings find no parent to answer them, however slow the
     * host. */
    for (i = 0; argc > 2 && i < 6000 && access(argv[2], F_OK) != 0; i++) usleep(10000);
    if (pvm_mytid() < 0) return 1;
    int parent = pvm_parent();
    if (parent == PvmNoParent) {
        char *self = strrchr(argv[0], '/'); /* spawned by file name, along ep= */
        char *args[] = {mark, spawned, NULL};
        if (!getcwd(mark, sizeof mark - 16)) return 1;
        strcpy(spawned, mark);
        strcat(mark, "/enrolled");
        strcat(spawned, "/spawned");
        if (pvm_spawn(self ? self + 1 : argv[0], args, PvmTaskDefault, "", 1, &child) != 1) return 1;
        if (!(f = fopen(spawned, "w"))) return 1;
        fclose(f);
        for (i = 0; i < 6000 && access(mark, F_OK) != 0; i++) usleep(10000);
        if (pvm_recv(child, 1) < 0) return 1;
        pvm_upkint(&v, 1, 1);
        printf("got %d\n", v);
    } else {
        f = argc > 1 ? fopen(argv[1], "w") : NULL;
        if (f) fclose(f);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        pvm_send(parent, 1);
    }
    pvm_exit();
    return 0;
}
"#;

#[test]
fn a_parent_in_no_pvm_call_gives_no_sample_after_a_bounded_wait_and_align_uses_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(Path::new("/usr/include/pvm3.h").is_file(), "{MISSING}");
    let src = tmp.path().join("sleepy.c");
    std::fs::write(&src, SLEEPY).unwrap();
    let exe = tmp.path().join("pvm_sleepy");
    assert_success(
        &Command::new("cc").arg("-o").arg(&exe).arg(&src).arg("-lpvm3").output().unwrap(),
        "cc sleepy.c",
    );
    let _pvmd = Pvmd::start(tmp.path(), tmp.path());
    let rec = tmp.path().join("rec");
    let mut c = Command::new(bin("record"));
    c.arg("-o").arg(&rec).arg("--").arg("./pvm_sleepy").current_dir(tmp.path()).stdin(Stdio::null());
    let out = pvm_env(&mut c, &tmp.path().join("pvm")).output().unwrap();
    assert_success(&out, "spoor-record pvm_sleepy");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got 7\n");
    assert!(out.stderr.is_empty(), "the recorder says nothing: {}", String::from_utf8_lossy(&out.stderr));
    let traces = wait_for_traces(&rec, 2);
    let merged = tmp.path().join("m.spoor");
    assert_success(
        &Command::new(bin("merge")).args(&traces).arg("-o").arg(&merged).output().unwrap(),
        "spoor-merge",
    );
    let (d, ev) = read(&merged, false).unwrap();
    let child = ev
        .iter()
        .find_map(|e| matches!(e.kind, Kind::ProcessBegin { parent: Some(_) }).then_some(e.loc))
        .expect("the child's trace");
    let cev: Vec<&Event> = ev.iter().filter(|e| e.loc == child).collect();
    let samples: Vec<(usize, i64, u64)> = cev
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.kind {
            Kind::ClockOffset { offset, error, .. } => Some((i, offset, error)),
            _ => None,
        })
        .collect();
    eprintln!("{}: samples {samples:?}", loc_name(&d, child));
    // At enrolment the parent sleeps: no sample, after a wait of about 1 s (the pvm_mytid
    // that enrolled took it); at exit it is in pvm_recv or pvm_exit and answers (a late
    // answer to the first ping is skipped).
    assert_eq!(samples.len(), 1, "{samples:?}");
    let send = cev.iter().position(|e| matches!(e.kind, Kind::Send { .. })).unwrap();
    assert!(samples[0].0 > send, "the sample is the one at exit");
    assert!(samples[0].2 > 0 && samples[0].1.unsigned_abs() < 500_000, "{samples:?}");
    // pvm_mytid records no call: the wait lies between the begin and pvm_send's enter.
    let waited = cev[send - 1].wall - cev[0].wall;
    assert!(matches!(cev[send - 1].kind, Kind::Enter { .. }), "{:?}", cev[send - 1]);
    assert!((900_000_000..1_900_000_000).contains(&waited), "the wait is bounded: {waited} ns");
    assert_eq!(ev.iter().filter(|e| matches!(e.kind, Kind::Send { .. })).count(), 1, "no ping recorded");
    let report = tmp.path().join("align.json");
    assert_success(
        &Command::new(bin("align"))
            .arg("-q")
            .arg(&merged)
            .arg("-o")
            .arg(tmp.path().join("a.spoor"))
            .arg("--report")
            .arg(&report)
            .output()
            .unwrap(),
        "spoor-align",
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["locations"][child as usize]["method"], "samples", "{r}");
}

#[test]
fn without_a_pvmd_the_program_gets_pvms_error_and_its_exit_status() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = farm(tmp.path());
    std::fs::create_dir_all(tmp.path().join("pvm")).unwrap();
    let plain = farm_command(&exe, tmp.path(), None).output().unwrap();
    let rec = tmp.path().join("rec");
    let out = farm_command(&exe, tmp.path(), Some(&rec)).output().unwrap();
    assert_eq!(out.status.code(), plain.status.code());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pvm_mytid") && err.contains("local daemon"), "PVM's own error: {err}");
    assert!(!err.contains("spoor-record"), "{err}");
    // The master's trace is complete: it begins and ends, and holds no PVM event.
    let f = files(&rec);
    assert_eq!(f.len(), 1);
    let (_, ev) = read(&f[0], false).unwrap();
    assert!(matches!(ev.first().map(|e| &e.kind), Some(Kind::ProcessBegin { parent: None })));
    assert!(matches!(ev.last().map(|e| &e.kind), Some(Kind::ProcessEnd)));
}

#[test]
fn a_task_killed_mid_run_leaves_a_trace_read_up_to_its_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = farm(tmp.path());
    let pvmd = Pvmd::start(tmp.path(), exe.parent().unwrap());
    let rec = tmp.path().join("rec");
    // Small blocks (passed on to the workers): what a task did is on disk as it runs.
    let mut master = farm_command(&exe, tmp.path(), Some(&rec))
        .env("SPOOR_RECORD_BLOCK_BYTES", "64")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A worker that has enrolled (its trace is named by its task id) is killed mid-run.
    let master_pid = master.id() as i32;
    let start = Instant::now();
    let victim = loop {
        let enrolled = files(&rec).into_iter().find_map(|p: PathBuf| {
            if !p.file_name()?.to_string_lossy().starts_with("pvm_farm.t") {
                return None;
            }
            let (d, _) = read(p.as_path(), true).ok()?;
            let pid = d.property("pid").and_then(|p| p.parse::<i32>().ok())?;
            // spoor-record runs the master in its own process: any other task is a worker.
            (pid != master_pid).then_some((p, pid))
        });
        if let Some((p, pid)) = enrolled {
            // SAFETY: killing a task this test started.
            assert_eq!(unsafe { libc_kill(pid, 9) }, 0, "the task ran to its end before it was killed");
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no worker enrolled: {:?}", files(&rec));
        std::thread::sleep(Duration::from_millis(5));
    };
    // The master now waits for ever: halting the daemon ends it (PVM kills its tasks).
    drop(pvmd);
    let deadline = Instant::now() + Duration::from_secs(10);
    while master.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = master.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = master.wait();
    // It has no end: it is read up to its cut, with a note, as a salvaging read does.
    let r = TraceReader::open(victim.to_str().unwrap(), ReadOptions::default()).unwrap();
    assert!(r.salvage_report().stopped.is_some(), "a killed task's trace has no end");
    let out = Command::new(bin("cat")).arg("--count").arg(&victim).output().unwrap();
    assert_success(&out, "spoor-cat --count");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("note: {}: cut short at byte", victim.display())), "{err}");
    let (d, ev) = read(&victim, false).unwrap();
    assert!(ev == read(&victim, true).unwrap().1);
    // Its parent is defined from its start (its own name may still be its pid's: the
    // definitions are written again before the next block).
    assert!(loc_name(&d, 1).starts_with("task t"), "{}", loc_name(&d, 1));
    // Whatever reached the disk before the kill: it begins with the spawn arc.
    if let Some(first) = ev.first() {
        assert_eq!(first.kind, Kind::ProcessBegin { parent: Some(1) });
    }
    assert!(!ev.iter().any(|e| matches!(e.kind, Kind::ProcessEnd)), "it died before its end");
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
