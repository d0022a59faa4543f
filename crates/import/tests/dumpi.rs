//! The DUMPI reader: the real SST DUMPI test trace of $SPOOR_DATA against
//! `dumpi2ascii`'s text of rank 0, small `.bin` files written here with their
//! events worked out by hand, and hostile inputs (truncation at every byte,
//! corrupt bytes, huge counts, missing files) that must give errors, never
//! panics.

use spoor_format::ErrorKind;
use spoor_import::dumpi::{self, DumpiTrace};
use spoor_model::{CollOp, Kind, LocId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod common;
use common::data_dir;

fn name(t: &DumpiTrace, id: u32) -> String {
    t.defs.strings.name(id).into_owned()
}

/// One `entering`/`returning` line of dumpi2ascii: name, entering?, wall ns, cpu ns, thread.
type AsciiCall = (String, bool, i64, i64, u32);

fn secs_ns(s: &str) -> i64 {
    let (a, b) = s.split_once('.').unwrap();
    assert_eq!(b.len(), 9, "{s}");
    a.parse::<i64>().unwrap() * 1_000_000_000 + b.parse::<i64>().unwrap()
}

/// Parses `MPI_X entering at walltime S.N, cputime S.N seconds in thread T.` lines.
fn parse_ascii(text: &str) -> Vec<AsciiCall> {
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() == 11 && (w[1] == "entering" || w[1] == "returning") && w[3] == "walltime" {
            let wall = secs_ns(w[4].trim_end_matches(','));
            let cpu = secs_ns(w[6]);
            let thread = w[10].trim_end_matches('.').parse().unwrap();
            out.push((w[0].to_string(), w[1] == "entering", wall, cpu, thread));
        }
    }
    out
}

#[test]
fn real_trace_rank0_matches_dumpi2ascii() {
    let Some(data) = data_dir() else { return };
    let dir = data.join("dumpi/sst-dumpi-testtrace");
    let meta = dir.join("testtrace.meta");
    assert!(dumpi::looks_like(&std::fs::read(&meta).unwrap()));
    assert!(dumpi::looks_like(&std::fs::read(dir.join("testtrace-0001.bin")).unwrap()[..16]));
    let t = dumpi::read_dumpi_full(&meta).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let reference = parse_ascii(&std::fs::read_to_string(dir.join("testtrace-0000.txt")).unwrap());
    assert_eq!(reference.len(), 18);
    let base = t.wall_offset_s as i64 * 1_000_000_000;
    assert_eq!(t.defs.property("dumpi.wall_offset_s"), Some(t.wall_offset_s.to_string().as_str()));
    let ours: Vec<AsciiCall> = t
        .events
        .iter()
        .filter(|e| e.loc == 0)
        .filter_map(|e| match e.kind {
            Kind::Enter { proc } => Some((name(&t, proc), true, e.wall + base, e.cpu.unwrap(), 0)),
            Kind::Leave { proc } => Some((name(&t, proc), false, e.wall + base, e.cpu.unwrap(), 0)),
            _ => None,
        })
        .collect();
    assert_eq!(ours, reference);
    // Four ranks of the same nine calls, each counted by its footer.
    assert_eq!(t.defs.processes.len(), 4);
    assert_eq!(t.defs.locations.len(), 4);
    assert_eq!(name(&t, t.defs.machines[0].name), "hadalst-mbp.ca.sandia.gov");
    t.defs.check().unwrap();
    for r in &t.ranks {
        assert_eq!(r.version, (1, 0, 0));
        assert_eq!(r.records, 9);
        assert_eq!(Some(&r.calls), r.footer_calls.as_ref());
    }
    // A ring: rank r sends 4 bytes with tag 1337 to r+1 and receives from r-1;
    // the send request completes in MPI_Wait.
    for r in 0..4u32 {
        let ev: Vec<&Kind> = t.events.iter().filter(|e| e.loc == r).map(|e| &e.kind).collect();
        let to = (r + 1) % 4;
        let from = (r + 3) % 4;
        assert!(ev.contains(&&Kind::Isend { to, comm: 0, tag: 1337, bytes: 4, request: 2 }), "rank {r}");
        assert!(ev.contains(&&Kind::RecvBegin { from: Some(from), comm: 0, tag: Some(1337) }), "rank {r}");
        assert!(ev.contains(&&Kind::RecvEnd { from, comm: 0, tag: 1337, bytes: 4 }), "rank {r}");
        assert!(ev.contains(&&Kind::IsendComplete { request: 2 }), "rank {r}");
        let colls: Vec<CollOp> = ev
            .iter()
            .filter_map(|k| if let Kind::CollEnd { op, .. } = k { Some(*op) } else { None })
            .collect();
        assert_eq!(colls, [CollOp::Barrier, CollOp::Allreduce]);
    }
    // Per location: times sorted, CPU times non-decreasing, Enter/Leave balanced.
    let mut last: HashMap<LocId, (i64, i64, i32)> = HashMap::new();
    for e in &t.events {
        let s = last.entry(e.loc).or_insert((i64::MIN, i64::MIN, 0));
        assert!(e.wall >= s.0 && e.cpu.unwrap() >= s.1);
        s.0 = e.wall;
        s.1 = e.cpu.unwrap();
        match e.kind {
            Kind::Enter { .. } => s.2 += 1,
            Kind::Leave { .. } => s.2 -= 1,
            _ => {}
        }
    }
    assert!(last.values().all(|s| s.2 == 0));
}

#[test]
fn real_trace_truncated_at_every_byte() {
    let Some(data) = data_dir() else { return };
    let bin = std::fs::read(data.join("dumpi/sst-dumpi-testtrace/testtrace-0000.bin")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.meta"), "numprocs=1\nfileprefix=t\n").unwrap();
    for cut in 0..bin.len() {
        std::fs::write(dir.path().join("t-0000.bin"), &bin[..cut]).unwrap();
        let e = dumpi::read_dumpi(&dir.path().join("t.meta")).unwrap_err();
        assert!(e.file.ends_with("t-0000.bin") && e.offset.is_some(), "cut {cut}: {e}");
    }
    // Every single corrupt byte: an error or a trace, never a panic.
    for i in 0..bin.len() {
        let mut b = bin.clone();
        b[i] ^= 0xa5;
        std::fs::write(dir.path().join("t-0000.bin"), &b).unwrap();
        let _ = dumpi::read_dumpi(&dir.path().join("t.meta"));
    }
}

/// Writes DUMPI `.bin` files (version 1.0.0).
struct BinWriter {
    body: Vec<u8>,
    counts: Vec<u32>,
    funcs: Vec<(u64, String)>,
    host: String,
}

/// Record arguments.
#[derive(Default)]
struct Args(Vec<u8>);

impl Args {
    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn str(self, s: &str) -> Self {
        let mut a = self.i32(s.len() as i32);
        a.0.extend_from_slice(s.as_bytes());
        a
    }
    fn ints(self, v: &[i32]) -> Self {
        let mut a = self.i32(v.len() as i32);
        for &x in v {
            a = a.i32(x);
        }
        a
    }
    /// Statuses: (bytes, source, cancelled, error, tag).
    fn statuses(self, v: &[(i32, i32, u8, u8, i32)]) -> Self {
        let mut a = self.i32(v.len() as i32);
        for &(b, s, c, e, t) in v {
            a = a.i32(b).i32(s);
            a.0.push(c);
            a.0.push(e);
            a = a.i32(t);
        }
        a
    }
}

const INIT: u16 = 124;
const FINALIZE: u16 = 125;
const SEND: u16 = 0;
const RECV: u16 = 1;
const ISEND: u16 = 8;
const IRECV: u16 = 12;
const WAIT: u16 = 13;
const WAITALL: u16 = 18;
const BCAST: u16 = 53;
const COMM_RANK: u16 = 82;
const COMM_SPLIT: u16 = 86;
const FENTER: u16 = 291;
const FEXIT: u16 = 292;

/// (seconds since the bias, ns) at entry and exit.
type Times = ((u16, u32), (u16, u32));

impl BinWriter {
    fn new(cpu_bias: u32, wall_bias: u32) -> Self {
        let mut body = Vec::new();
        body.extend_from_slice(&cpu_bias.to_be_bytes());
        body.extend_from_slice(&wall_bias.to_be_bytes());
        BinWriter { body, counts: vec![0; 291], funcs: Vec::new(), host: "node-a".into() }
    }

    fn rec(
        &mut self,
        label: u16,
        thread: Option<u16>,
        status: bool,
        cpu: Option<Times>,
        wall: Times,
        args: Args,
    ) {
        self.body.extend_from_slice(&label.to_be_bytes());
        let mask = if status { 3 } else { 0 }
            | if cpu.is_some() { 4 } else { 0 }
            | 8
            | if thread.is_some() { 0x40 } else { 0 };
        self.body.push(mask);
        if let Some(t) = thread {
            self.body.extend_from_slice(&t.to_be_bytes());
        }
        for ((s0, n0), (s1, n1)) in cpu.into_iter().chain([wall]) {
            self.body.extend_from_slice(&s0.to_be_bytes());
            self.body.extend_from_slice(&n0.to_be_bytes());
            self.body.extend_from_slice(&s1.to_be_bytes());
            self.body.extend_from_slice(&n1.to_be_bytes());
        }
        self.body.extend_from_slice(&args.0);
        if (label as usize) < self.counts.len() {
            self.counts[label as usize] += 1;
        }
    }

    fn finish(&self) -> Vec<u8> {
        let mut f = vec![0xff, 0xaa, 0xdd, b'D', b'U', b'M', b'P', b'I'];
        let body = f.len() as u64;
        f.extend_from_slice(&self.body);
        f.extend_from_slice(&293u16.to_be_bytes());
        let header = f.len() as u64;
        f.extend_from_slice(&[1, 0, 0]);
        f.extend_from_slice(&1_000u64.to_be_bytes());
        for s in [self.host.as_str(), "me"] {
            f.extend_from_slice(&(s.len() as u16).to_be_bytes());
            f.extend_from_slice(s.as_bytes());
        }
        f.extend_from_slice(&[0; 8]); // mesh: no dimensions, twice
        let footer = f.len() as u64;
        f.extend_from_slice(&0xf007_fee7u64.to_be_bytes());
        let total: u32 = self.counts.iter().take(290).sum();
        for (i, c) in self.counts.iter().enumerate() {
            f.extend_from_slice(&if i == 290 { total } else { *c }.to_be_bytes());
        }
        f.extend_from_slice(&vec![0; 291 * 4]);
        let perf = f.len() as u64;
        f.extend_from_slice(&0u32.to_be_bytes());
        let sizes = f.len() as u64;
        let table: [i32; 28] =
            [0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 0, 8, 8, 1, 0, 0, 8, 12, 12, 6, 8, 20];
        f.extend_from_slice(&(table.len() as i32).to_be_bytes());
        for s in table {
            f.extend_from_slice(&s.to_be_bytes());
        }
        let addr = f.len() as u64;
        f.extend_from_slice(&(self.funcs.len() as i32).to_be_bytes());
        for (a, n) in &self.funcs {
            f.extend_from_slice(&a.to_be_bytes());
            f.extend_from_slice(&(n.len() as u16).to_be_bytes());
            f.extend_from_slice(n.as_bytes());
        }
        f.extend_from_slice(&[0xff, 0xaa, 0xdd, b'D', b'U', b'M', b'P', b'I']);
        for o in [sizes, addr, perf, header, body, footer, 0] {
            f.extend_from_slice(&o.to_be_bytes());
        }
        f
    }
}

fn w(s0: u16, n0: u32, s1: u16, n1: u32) -> Times {
    ((s0, n0), (s1, n1))
}

/// Two ranks. Rank 0: Init, Comm_split (key 10: second in the new
/// communicator), Send to rank 0 of the new communicator (world rank 1),
/// Irecv from any source with any tag completed by Waitall (status: source 1,
/// tag 8, 16 bytes), Bcast rooted at 0, a profiled function, Finalize.
/// Rank 1: Init, Comm_split (key 9, a different handle), Recv from rank 1 of
/// the new communicator (world rank 0) without status, Isend to 0 + Wait,
/// Bcast, Comm_rank on thread 1, Finalize; no CPU times.
fn two_ranks() -> (Vec<u8>, Vec<u8>) {
    let mut r0 = BinWriter::new(0, 1000);
    r0.funcs.push((0x1000, "compute".into()));
    r0.rec(INIT, Some(0), false, Some(w(0, 10, 0, 20)), w(0, 100, 0, 200), Args::default().i32(1).str("./a"));
    let split = |key, new| Args::default().u16(2).i32(0).i32(key).u16(new);
    r0.rec(COMM_SPLIT, Some(0), false, Some(w(0, 30, 0, 40)), w(0, 300, 0, 400), split(10, 4));
    let send = Args::default().i32(3).u16(9).i32(0).i32(5).u16(4);
    // CPU time going back (5 < 40): raised to 40.
    r0.rec(SEND, Some(0), false, Some(w(0, 5, 0, 50)), w(0, 500, 0, 600), send);
    let irecv = Args::default().i32(2).u16(14).i32(-1).i32(-1).u16(2).i32(7);
    r0.rec(IRECV, Some(0), false, Some(w(0, 60, 0, 70)), w(0, 700, 0, 800), irecv);
    let waitall = Args::default().i32(1).ints(&[7]).statuses(&[(16, 1, 0, 0, 8)]);
    r0.rec(WAITALL, Some(0), true, Some(w(0, 80, 0, 90)), w(1, 0, 1, 100), waitall);
    let bcast = Args::default().i32(4).u16(2).i32(0).u16(2);
    r0.rec(BCAST, Some(0), false, Some(w(0, 100, 0, 110)), w(1, 200, 1, 300), bcast);
    r0.rec(FENTER, Some(0), false, Some(w(0, 120, 0, 120)), w(1, 400, 1, 400), Args::default().u64(0x1000));
    r0.rec(FEXIT, Some(0), false, Some(w(0, 130, 0, 130)), w(1, 500, 1, 500), Args::default().u64(0x1000));
    r0.rec(FINALIZE, Some(0), false, Some(w(0, 140, 0, 150)), w(1, 600, 1, 700), Args::default());

    let mut r1 = BinWriter::new(0, 1001);
    r1.rec(INIT, Some(0), false, None, w(0, 100, 0, 200), Args::default().i32(0));
    r1.rec(COMM_SPLIT, Some(0), false, None, w(0, 300, 0, 400), split(9, 5));
    let recv = Args::default().i32(3).u16(9).i32(1).i32(5).u16(5);
    r1.rec(RECV, Some(0), false, None, w(0, 500, 0, 650), recv);
    let isend = Args::default().i32(2).u16(14).i32(0).i32(8).u16(2).i32(3);
    r1.rec(ISEND, Some(0), false, None, w(0, 700, 0, 710), isend);
    // A send's status is undefined: not used.
    let wait = Args::default().i32(3).statuses(&[(99, 7, 0, 0, 4)]);
    r1.rec(WAIT, Some(0), true, None, w(0, 720, 0, 800), wait);
    let bcast = Args::default().i32(4).u16(2).i32(0).u16(2);
    r1.rec(BCAST, Some(0), false, None, w(0, 900, 0, 950), bcast);
    r1.rec(COMM_RANK, Some(1), false, None, w(0, 960, 0, 970), Args::default().u16(2).i32(1));
    r1.rec(FINALIZE, Some(0), false, None, w(0, 1000, 0, 1100), Args::default());
    (r0.finish(), r1.finish())
}

fn write_trace(dir: &Path, bins: &[Vec<u8>]) -> PathBuf {
    let meta = dir.join("run.meta");
    std::fs::write(&meta, format!("hostname=h\nnumprocs={}\nfileprefix=run\n", bins.len())).unwrap();
    for (r, b) in bins.iter().enumerate() {
        std::fs::write(dir.join(format!("run-{r:04}.bin")), b).unwrap();
    }
    meta
}

fn per_loc(t: &DumpiTrace) -> Vec<Vec<String>> {
    let mut v = vec![Vec::new(); t.defs.locations.len()];
    for e in &t.events {
        let k = match &e.kind {
            Kind::Enter { proc } => format!("enter {}", name(t, *proc)),
            Kind::Leave { proc } => format!("leave {}", name(t, *proc)),
            k => format!("{k:?}"),
        };
        let cpu = e.cpu.map_or("-".to_string(), |c| c.to_string());
        v[e.loc as usize].push(format!("{} {cpu} {k}", e.wall));
    }
    v
}

#[test]
fn hand_written_two_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let (b0, b1) = two_ranks();
    let meta = write_trace(dir.path(), &[b0, b1]);
    let t = dumpi::read_dumpi_full(&meta).unwrap();
    assert_eq!(t.warnings, ["rank 0: 2 CPU times below the previous one on their thread were raised to it"]);
    assert_eq!(t.wall_offset_s, 1000);
    assert_eq!(name(&t, t.defs.apps[0].name), "run");
    assert_eq!(t.defs.machines.len(), 1);
    assert_eq!(t.defs.locations.len(), 3);
    assert_eq!(name(&t, t.defs.locations[2].name), "rank 1 thread 1");
    assert_eq!((t.defs.locations[2].process, t.defs.locations[2].thread), (1, 1));
    // MPI_COMM_WORLD, MPI_COMM_SELF and the split (world rank 1 first: key 9 < 10).
    assert_eq!(t.defs.comms.len(), 3);
    assert_eq!(t.defs.comms[0].members, [0, 1]);
    assert!(t.defs.comms[1].members.is_empty());
    assert_eq!(t.defs.comms[2].members, [1, 0]);
    t.defs.check().unwrap();
    for r in &t.ranks {
        assert_eq!(Some(&r.calls), r.footer_calls.as_ref());
    }
    let s = 1_000_000_000i64;
    let ev = per_loc(&t);
    let expect0 = vec![
        "100 10 enter MPI_Init".to_string(),
        "200 20 leave MPI_Init".into(),
        "300 30 enter MPI_Comm_split".into(),
        "400 40 leave MPI_Comm_split".into(),
        "500 40 enter MPI_Send".into(),
        "500 40 Send { to: 1, comm: 2, tag: 5, bytes: 12 }".into(),
        "600 50 leave MPI_Send".into(),
        "700 60 enter MPI_Irecv".into(),
        "700 60 IrecvRequest { from: None, comm: 0, tag: None, request: 7 }".into(),
        "800 70 leave MPI_Irecv".into(),
        format!("{} 80 enter MPI_Waitall", s),
        format!("{} 90 IrecvComplete {{ request: 7, from: 1, comm: 0, tag: 8, bytes: 16 }}", s + 100),
        format!("{} 90 leave MPI_Waitall", s + 100),
        format!("{} 100 enter MPI_Bcast", s + 200),
        format!("{} 100 CollBegin {{ op: Bcast, comm: 0 }}", s + 200),
        format!("{} 110 CollEnd {{ op: Bcast, comm: 0, root: Some(0), sent: 4, received: 0 }}", s + 300),
        format!("{} 110 leave MPI_Bcast", s + 300),
        format!("{} 120 enter compute", s + 400),
        format!("{} 130 leave compute", s + 500),
        format!("{} 140 enter MPI_Finalize", s + 600),
        format!("{} 150 leave MPI_Finalize", s + 700),
    ];
    assert_eq!(ev[0], expect0);
    let expect1 = vec![
        format!("{} - enter MPI_Init", s + 100),
        format!("{} - leave MPI_Init", s + 200),
        format!("{} - enter MPI_Comm_split", s + 300),
        format!("{} - leave MPI_Comm_split", s + 400),
        format!("{} - enter MPI_Recv", s + 500),
        format!("{} - RecvBegin {{ from: Some(0), comm: 2, tag: Some(5) }}", s + 500),
        format!("{} - RecvEnd {{ from: 0, comm: 2, tag: 5, bytes: 12 }}", s + 650),
        format!("{} - leave MPI_Recv", s + 650),
        format!("{} - enter MPI_Isend", s + 700),
        format!("{} - Isend {{ to: 0, comm: 0, tag: 8, bytes: 16, request: 3 }}", s + 700),
        format!("{} - leave MPI_Isend", s + 710),
        format!("{} - enter MPI_Wait", s + 720),
        format!("{} - IsendComplete {{ request: 3 }}", s + 800),
        format!("{} - leave MPI_Wait", s + 800),
        format!("{} - enter MPI_Bcast", s + 900),
        format!("{} - CollBegin {{ op: Bcast, comm: 0 }}", s + 900),
        format!("{} - CollEnd {{ op: Bcast, comm: 0, root: Some(0), sent: 0, received: 4 }}", s + 950),
        format!("{} - leave MPI_Bcast", s + 950),
        format!("{} - enter MPI_Finalize", s + 1000),
        format!("{} - leave MPI_Finalize", s + 1100),
    ];
    assert_eq!(ev[1], expect1);
    assert_eq!(
        ev[2],
        [format!("{} - enter MPI_Comm_rank", s + 960), format!("{} - leave MPI_Comm_rank", s + 970)]
    );
    // The simple entry point gives the same.
    let (defs, events) = dumpi::read_dumpi(&meta).unwrap();
    assert_eq!((defs, events), (t.defs, t.events));
}

#[test]
fn untranslatable_messages_are_counted_not_invented() {
    let dir = tempfile::tempdir().unwrap();
    let mut r0 = BinWriter::new(0, 0);
    // A send on a communicator never created, a send to MPI_PROC_NULL (-2), a
    // wildcard receive without status, a wait on an unknown request, a
    // collective with a datatype outside the size table.
    r0.rec(SEND, None, false, None, w(0, 1, 0, 2), Args::default().i32(1).u16(9).i32(0).i32(0).u16(77));
    r0.rec(SEND, None, false, None, w(0, 3, 0, 4), Args::default().i32(1).u16(9).i32(-2).i32(0).u16(2));
    r0.rec(RECV, None, false, None, w(0, 5, 0, 6), Args::default().i32(1).u16(9).i32(-1).i32(0).u16(2));
    r0.rec(WAIT, None, false, None, w(0, 7, 0, 8), Args::default().i32(55));
    r0.rec(BCAST, None, false, None, w(0, 9, 0, 10), Args::default().i32(2).u16(999).i32(0).u16(2));
    let meta = write_trace(dir.path(), &[r0.finish()]);
    let t = dumpi::read_dumpi_full(&meta).unwrap();
    let kinds: Vec<&Kind> = t
        .events
        .iter()
        .map(|e| &e.kind)
        .filter(|k| !matches!(k, Kind::Enter { .. } | Kind::Leave { .. }))
        .collect();
    assert_eq!(
        kinds,
        [
            &Kind::CollBegin { op: CollOp::Bcast, comm: 0 },
            &Kind::CollEnd { op: CollOp::Bcast, comm: 0, root: Some(0), sent: 0, received: 0 }
        ]
    );
    assert_eq!(t.events.len(), 12);
    assert_eq!(t.warnings.len(), 5, "{:#?}", t.warnings);
}

#[test]
fn hand_written_files_cut_or_corrupted_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let (b0, b1) = two_ranks();
    let meta = write_trace(dir.path(), &[b0.clone(), b1.clone()]);
    let f1 = dir.path().join("run-0001.bin");
    for cut in 0..b1.len() {
        std::fs::write(&f1, &b1[..cut]).unwrap();
        let e = dumpi::read_dumpi(&meta).unwrap_err();
        assert!(e.file.ends_with("run-0001.bin") && e.offset.is_some(), "cut {cut}: {e}");
    }
    for i in 0..b1.len() {
        for flip in [0xffu8, 0x01, 0x80] {
            let mut b = b1.clone();
            b[i] ^= flip;
            std::fs::write(&f1, &b).unwrap();
            if let Err(e) = dumpi::read_dumpi(&meta) {
                assert!(e.offset.is_some() || e.line.is_some(), "byte {i}: {e}");
            }
        }
    }
}

/// A one-rank trace whose last record has `args` under `label`.
fn one_record(dir: &Path, label: u16, status: bool, args: Args) -> Result<DumpiTrace, spoor_format::Error> {
    let mut r = BinWriter::new(0, 0);
    r.rec(INIT, None, false, None, w(0, 1, 0, 2), Args::default().i32(0));
    r.rec(label, None, status, None, w(0, 3, 0, 4), args);
    let meta = write_trace(dir, &[r.finish()]);
    dumpi::read_dumpi_full(&meta)
}

#[test]
fn huge_counts_and_unknown_labels_are_errors_at_their_offset() {
    let dir = tempfile::tempdir().unwrap();
    // The second record starts at 8 (magic) + 8 (biases) + 19 (Init: label, mask, wall times, argc).
    let second = 8 + 8 + 2 + 1 + 12 + 4;
    let huge = i32::MAX;
    for (label, status, args) in [
        (WAITALL, false, Args::default().i32(1).i32(huge)),
        (WAITALL, true, Args::default().i32(0).i32(0).i32(huge)),
        (INIT, false, Args::default().i32(huge)),
        (INIT, false, Args::default().i32(1).i32(huge)),
        (INIT, false, Args::default().i32(1).i32(-5)),
        (128, false, Args::default()),
        (290, false, Args::default()),
        (999, false, Args::default()),
    ] {
        let e = one_record(dir.path(), label, status, args).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Corrupt, "{e}");
        let at = e.offset.unwrap();
        assert!(at >= second as u64 && e.file.ends_with("run-0000.bin"), "label {label}: {e}");
        if label >= 128 {
            assert_eq!(at, second as u64, "{e}");
        }
    }
}

#[test]
fn meta_problems() {
    let dir = tempfile::tempdir().unwrap();
    let (b0, b1) = two_ranks();
    let meta = write_trace(dir.path(), &[b0, b1]);
    // A rank's .bin missing: the error names it.
    std::fs::write(&meta, "numprocs=3\nfileprefix=run\n").unwrap();
    let e = dumpi::read_dumpi(&meta).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(e.file.ends_with("run-0002.bin"), "{e}");
    // Malformed lines.
    std::fs::write(&meta, "numprocs=2\nthis is not a pair\nfileprefix=run\n").unwrap();
    assert_eq!(dumpi::read_dumpi(&meta).unwrap_err().line, Some(2));
    std::fs::write(&meta, "numprocs=4294967297\nfileprefix=run\n").unwrap();
    assert_eq!(dumpi::read_dumpi(&meta).unwrap_err().line, Some(1));
    std::fs::write(&meta, "fileprefix=run\n").unwrap();
    assert!(dumpi::read_dumpi(&meta).unwrap_err().line.is_some());
    // Five-digit rank numbers are found too.
    std::fs::write(&meta, "numprocs=2\nfileprefix=run\n").unwrap();
    for r in 0..2 {
        std::fs::rename(
            dir.path().join(format!("run-{r:04}.bin")),
            dir.path().join(format!("run-{r:05}.bin")),
        )
        .unwrap();
    }
    assert_eq!(dumpi::read_dumpi_full(&meta).unwrap().ranks.len(), 2);
    // Not DUMPI, and an index pointing outside the file.
    std::fs::write(dir.path().join("run-00000.bin"), b"garbage garbage garbage").unwrap();
    assert_eq!(dumpi::read_dumpi(&meta).unwrap_err().offset, Some(0));
    let (mut b0, _) = two_ranks();
    let n = b0.len();
    b0[n - 8 * 3 + 6] = 0x7f; // the body offset
    std::fs::write(dir.path().join("run-00000.bin"), &b0).unwrap();
    let e = dumpi::read_dumpi(&meta).unwrap_err();
    assert!(e.message.contains("outside"), "{e}");
    // Sniffing.
    assert!(dumpi::looks_like(b"hostname=x\nnumprocs=2\nfileprefix=run\n"));
    assert!(!dumpi::looks_like(b"numprocs=2\n"));
    assert!(dumpi::looks_like(b"numprocs=2\nfileprefix=run\nstartime=12345 and a cut-off li"));
    assert!(!dumpi::looks_like(b"numprocs=2\nfileprefix=run\nnot a pair\n"));
    assert!(!dumpi::looks_like(b"#Paraver (x)"));
}

#[test]
fn communicator_reconstruction() {
    // Four ranks: split WORLD by parity (key = -rank: reversed), dup the result,
    // then a Cart_create 2x2 on WORLD and a Cart_sub keeping dimension 1; then a
    // send on each derived communicator from rank 0 to its rank 1.
    let dir = tempfile::tempdir().unwrap();
    const DUP: u16 = 84;
    const CART_CREATE: u16 = 99;
    const CART_SUB: u16 = 111;
    let mut bins = Vec::new();
    for r in 0..4i32 {
        let mut b = BinWriter::new(0, 0);
        let mut t = 0u32;
        let mut at = || {
            t += 10;
            w(0, t, 0, t + 5)
        };
        b.rec(
            COMM_SPLIT,
            None,
            false,
            None,
            at(),
            Args::default().u16(2).i32(r % 2).i32(-r).u16(10 + r as u16),
        );
        b.rec(DUP, None, false, None, at(), Args::default().u16(10 + r as u16).u16(20));
        let cart = Args::default().u16(2).i32(2).ints(&[2, 2]).ints(&[0, 0]).i32(0).u16(30);
        b.rec(CART_CREATE, None, false, None, at(), cart);
        b.rec(CART_SUB, None, false, None, at(), Args::default().i32(2).u16(30).ints(&[0, 1]).u16(40));
        for comm in [10 + r as u16, 20, 30, 40] {
            b.rec(SEND, None, false, None, at(), Args::default().i32(1).u16(5).i32(1).i32(0).u16(comm));
        }
        bins.push(b.finish());
    }
    let meta = write_trace(dir.path(), &bins);
    let t = dumpi::read_dumpi_full(&meta).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let members: Vec<Vec<u32>> = t.defs.comms.iter().map(|c| c.members.clone()).collect();
    assert_eq!(
        members,
        [
            vec![0, 1, 2, 3], // world
            vec![],           // self
            vec![2, 0],       // split, color 0, by key -rank
            vec![3, 1],       // split, color 1
            vec![3, 1],       // dup of color 1 (its members made the call first)
            vec![2, 0],       // dup of color 0
            vec![0, 1, 2, 3], // cart 2x2
            vec![0, 1],       // sub: row 0
            vec![2, 3],       // sub: row 1
        ]
    );
    // Rank 0's sends go to rank 1 of: its split (itself), its dup (itself), the cart (1), its row (1).
    let to: Vec<(u32, u32)> = t
        .events
        .iter()
        .filter(|e| e.loc == 0)
        .filter_map(|e| if let Kind::Send { to, comm, .. } = e.kind { Some((to, comm)) } else { None })
        .collect();
    assert_eq!(to, [(0, 2), (0, 5), (1, 6), (1, 7)]);
}
