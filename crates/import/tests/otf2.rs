//! The OTF2 reader against Debian's reference reader, `otf2-print`: every
//! archive of $SPOOR_DATA/otf2 and archives written here with Debian's
//! python3-otf2 (tests/gen_otf2.py, one of about 10^6 events) decode to the
//! same events, in the same order per location, at the same times; hostile
//! inputs are errors, never panics.

use spoor_format::{ErrorKind, TraceWriter, WriterOptions};
use spoor_import::otf2::{ClockMode, LocationEvents, Otf2Archive, Otf2Options, STREAM_BUFFER};
use spoor_model::{CollOp, Definitions, Kind};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::data_dir as data;

/// Fails unless the reference tools are installed.
fn require_tools() {
    let print = Command::new("otf2-print").arg("--version").output();
    let python = Command::new("/usr/bin/python3").args(["-c", "import otf2, _otf2"]).output();
    if !print.is_ok_and(|o| o.status.success()) || !python.is_ok_and(|o| o.status.success()) {
        panic!(
            "these tests need otf2-print and /usr/bin/python3's otf2 module: apt-get install -y otf2-tools python3-otf2"
        );
    }
}

/// Writes an archive with gen_otf2.py into `dir`; returns its anchor.
fn generate(dir: &Path, args: &[&str]) -> PathBuf {
    require_tools();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gen_otf2.py");
    let o = Command::new("/usr/bin/python3").arg(script).arg(dir).args(args).output().unwrap();
    assert!(o.status.success(), "gen_otf2.py failed: {}", String::from_utf8_lossy(&o.stderr));
    dir.join("traces.otf2")
}

fn opts(clock: ClockMode, recv_begin: bool) -> Otf2Options {
    Otf2Options { clock, recv_begin }
}

// ---------------------------------------------------------------------------
// otf2-print's output

struct PEvent {
    name: String,
    time: u64,
    attrs: String,
    /// ADDITIONAL ATTRIBUTES lines after it.
    attribute_lists: u64,
}

#[derive(Default)]
struct Printed {
    /// OTF2 location ids in definition order.
    locations: Vec<u64>,
    events: HashMap<u64, Vec<PEvent>>,
    /// CLOCK_OFFSET (time, offset, stddev) per location.
    offsets: HashMap<u64, Vec<(u64, i64, f64)>>,
}

/// The first three whitespace-separated fields of a line and the rest.
fn fields3(line: &str) -> Option<(&str, &str, &str, &str)> {
    let mut rest = line;
    let mut f = [""; 3];
    for x in &mut f {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        *x = &rest[..end];
        rest = &rest[end..];
    }
    Some((f[0], f[1], f[2], rest.trim()))
}

fn print_archive(anchor: &Path) -> Printed {
    require_tools();
    // Definitions, clock offsets, events: otf2-print shows one at a time.
    let mut text = String::new();
    for args in [&["-G"][..], &["-C"], &[]] {
        let o = Command::new("otf2-print").args(args).arg(anchor).output().unwrap();
        assert!(o.status.success(), "otf2-print failed: {}", String::from_utf8_lossy(&o.stderr));
        text += &String::from_utf8_lossy(&o.stdout);
    }
    let mut p = Printed::default();
    let mut section = "";
    let mut last: Option<u64> = None;
    for line in text.lines() {
        if line.starts_with("===") {
            section = if line.contains("Global Definitions") {
                "defs"
            } else if line.contains("Per Location") {
                "local"
            } else if line.contains("Events") {
                "events"
            } else {
                ""
            };
            continue;
        }
        if line.starts_with("---") || line.starts_with("Event ") || line.starts_with("Definition ") {
            continue;
        }
        match section {
            "defs" => {
                let mut t = line.split_whitespace();
                if t.next() == Some("LOCATION") {
                    p.locations.push(t.next().unwrap().parse().unwrap());
                }
            }
            "local" => {
                if let Some(("CLOCK_OFFSET", loc, _, _)) = fields3(line) {
                    let time = after(line, "Time: ").parse().unwrap();
                    let offset = after(line, "Offset: ").trim_start_matches('+').parse().unwrap();
                    let sd = after(line, "StdDev: ").parse().unwrap();
                    p.offsets.entry(loc.parse().unwrap()).or_default().push((time, offset, sd));
                }
            }
            "events" => {
                if line.starts_with(' ') {
                    if line.contains("ADDITIONAL ATTRIBUTES") {
                        p.events.get_mut(&last.unwrap()).unwrap().last_mut().unwrap().attribute_lists += 1;
                    }
                    continue;
                }
                let Some((name, loc, time, attrs)) = fields3(line) else { continue };
                if name.is_empty() {
                    continue;
                }
                let loc: u64 = loc.parse().unwrap_or_else(|_| panic!("bad event line: {line}"));
                last = Some(loc);
                p.events.entry(loc).or_default().push(PEvent {
                    name: name.to_owned(),
                    time: time.parse().unwrap(),
                    attrs: attrs.to_owned(),
                    attribute_lists: 0,
                });
            }
            _ => {}
        }
    }
    p
}

/// The text after `key` up to the next ',' or ')' (or the end).
fn after<'a>(s: &'a str, key: &str) -> &'a str {
    let i = s.find(key).unwrap_or_else(|| panic!("no {key:?} in {s:?}")) + key.len();
    let r = &s[i..];
    &r[..r.find([',', ')']).unwrap_or(r.len())]
}

/// A quoted name after `key`: `key"NAME" <id>`.
fn quoted<'a>(s: &'a str, key: &str) -> &'a str {
    let i = s.find(key).unwrap_or_else(|| panic!("no {key:?} in {s:?}")) + key.len();
    let r = &s[i..];
    let r = r.strip_prefix('"').unwrap_or_else(|| panic!("no name after {key:?} in {s:?}"));
    &r[..r.find("\" <").unwrap()]
}

/// The location id in `key R ("NAME" <L>)`, or None for `key NONE`.
fn peer(s: &str, key: &str) -> Option<u64> {
    let i = s.find(key).unwrap() + key.len();
    let r = &s[i..];
    if r.starts_with("NONE") {
        return None;
    }
    let j = r.find("\" <").unwrap() + 3;
    Some(r[j..j + r[j..].find('>').unwrap()].parse().unwrap())
}

fn coll_name(op: &str) -> &'static str {
    match op {
        "BARRIER" => "barrier",
        "BCAST" => "bcast",
        "GATHER" => "gather",
        "GATHERV" => "gatherv",
        "SCATTER" => "scatter",
        "SCATTERV" => "scatterv",
        "ALLGATHER" => "allgather",
        "ALLGATHERV" => "allgatherv",
        "ALLTOALL" => "alltoall",
        "ALLTOALLV" => "alltoallv",
        "ALLREDUCE" => "allreduce",
        "REDUCE" => "reduce",
        "REDUCE_SCATTER" | "REDUCE_SCATTER_BLOCK" => "reduce_scatter",
        "SCAN" => "scan",
        _ => "other",
    }
}

/// The events of one location as otf2-print shows them, normalized, and the
/// records spoor skips, counted by name. `ns` converts printed ticks.
fn expected(
    p: &Printed,
    otf2_loc: u64,
    loc_of: &HashMap<u64, usize>,
    ns: &dyn Fn(u64) -> i64,
) -> (Vec<String>, BTreeMap<String, u64>, u64) {
    let mut out = Vec::new();
    let mut skipped = BTreeMap::new();
    let empty = Vec::new();
    let evs = p.events.get(&otf2_loc).unwrap_or(&empty);
    let l = |id: Option<u64>| id.map(|i| loc_of[&i]);
    // Pending receive requests (request -> index in `out`), and the cancelled ones.
    let mut pending = HashMap::new();
    let mut cancelled = Vec::new();
    for e in evs {
        let (a, w) = (&e.attrs, ns(e.time));
        if e.attribute_lists > 0 {
            *skipped.entry("ATTRIBUTE_LIST".to_owned()).or_default() += e.attribute_lists;
        }
        let s = match e.name.as_str() {
            "ENTER" | "LEAVE" => format!("{} {w} {}", e.name, quoted(a, "Region: ")),
            "MPI_SEND" | "MPI_ISEND" | "MPI_RECV" | "MPI_IRECV" => {
                let who = if e.name.contains("SEND") { "Receiver: " } else { "Sender: " };
                let mut s = format!(
                    "{} {w} peer={:?} comm={} tag={} len={}",
                    e.name,
                    l(peer(a, who)).unwrap(),
                    quoted(a, "Communicator: "),
                    after(a, "Tag: "),
                    after(a, "Length: ")
                );
                if e.name == "MPI_ISEND" || e.name == "MPI_IRECV" {
                    s += &format!(" req={}", after(a, "Request: "));
                }
                s
            }
            "MPI_ISEND_COMPLETE" | "MPI_IRECV_REQUEST" => {
                if e.name == "MPI_IRECV_REQUEST" {
                    pending.insert(after(a, "Request: ").to_owned(), out.len());
                }
                format!("{} {w} req={}", e.name, after(a, "Request: "))
            }
            "MPI_COLLECTIVE_BEGIN" | "PROGRAM_BEGIN" | "PROGRAM_END" | "THREAD_BEGIN" | "THREAD_END" => {
                format!("{} {w}", e.name)
            }
            "MPI_COLLECTIVE_END" => format!(
                "{} {w} op={} comm={} root={:?} sent={} received={}",
                e.name,
                coll_name(after(a, "Operation: ")),
                quoted(a, "Communicator: "),
                l(peer(a, "Root: ")),
                after(a, "Sent: "),
                after(a, "Received: ")
            ),
            "METRIC" => {
                // ("NAME" <id>; TYPE; VALUE), ...
                for v in a.split("(\"").skip(1) {
                    let name = &v[..v.find("\" <").unwrap()];
                    let value = v.rsplit("; ").next().unwrap();
                    let value = value[..value.find(')').unwrap()].trim();
                    let x: f64 = value.parse().unwrap_or_else(|_| panic!("metric value {value:?}"));
                    out.push(format!("METRIC {w} {name} {x:?}"));
                }
                continue;
            }
            other => {
                if other == "MPI_REQUEST_CANCELLED" {
                    cancelled.extend(pending.remove(after(a, "Request: ")));
                }
                *skipped.entry(other.to_owned()).or_default() += 1;
                continue;
            }
        };
        if e.name == "MPI_IRECV" {
            pending.remove(after(a, "Request: "));
        }
        out.push(s);
    }
    // A cancelled receive request is dropped.
    if !cancelled.is_empty() {
        skipped.insert("MPI_IRECV_REQUEST (cancelled)".to_owned(), cancelled.len() as u64);
        cancelled.sort();
        for i in cancelled.into_iter().rev() {
            out.remove(i);
        }
    }
    (out, skipped, evs.len() as u64)
}

/// spoor's events of one location, normalized like [`expected`] (synthesized
/// RecvBegin and ClockOffset events left out).
fn actual(defs: &Definitions, l: &LocationEvents) -> Vec<String> {
    let name = |id| defs.strings.name(id).into_owned();
    let comm = |c: u32| name(defs.comms[c as usize].name);
    let mut out = Vec::new();
    for e in &l.events {
        let w = e.wall;
        assert_eq!(e.loc, l.loc);
        assert_eq!(e.cpu, None);
        out.push(match &e.kind {
            Kind::Enter { proc } => format!("ENTER {w} {}", name(*proc)),
            Kind::Leave { proc } => format!("LEAVE {w} {}", name(*proc)),
            Kind::Send { to, comm: c, tag, bytes } => {
                format!("MPI_SEND {w} peer={to} comm={} tag={tag} len={bytes}", comm(*c))
            }
            Kind::Isend { to, comm: c, tag, bytes, request } => {
                format!("MPI_ISEND {w} peer={to} comm={} tag={tag} len={bytes} req={request}", comm(*c))
            }
            Kind::RecvEnd { from, comm: c, tag, bytes } => {
                format!("MPI_RECV {w} peer={from} comm={} tag={tag} len={bytes}", comm(*c))
            }
            Kind::IrecvComplete { request, from, comm: c, tag, bytes } => {
                format!("MPI_IRECV {w} peer={from} comm={} tag={tag} len={bytes} req={request}", comm(*c))
            }
            Kind::IsendComplete { request } => format!("MPI_ISEND_COMPLETE {w} req={request}"),
            Kind::IrecvRequest { request, .. } => format!("MPI_IRECV_REQUEST {w} req={request}"),
            Kind::CollBegin { .. } => format!("MPI_COLLECTIVE_BEGIN {w}"),
            Kind::CollEnd { op, comm: c, root, sent, received } => format!(
                "MPI_COLLECTIVE_END {w} op={} comm={} root={root:?} sent={sent} received={received}",
                op.name(),
                comm(*c)
            ),
            Kind::Metric { metric, value } => {
                format!("METRIC {w} {} {value:?}", name(defs.metrics[*metric as usize].name))
            }
            Kind::ProcessBegin { .. } => format!("PROGRAM_BEGIN {w}"),
            Kind::ProcessEnd => format!("PROGRAM_END {w}"),
            Kind::ThreadBegin { .. } => format!("THREAD_BEGIN {w}"),
            Kind::ThreadEnd => format!("THREAD_END {w}"),
            Kind::RecvBegin { .. } | Kind::ClockOffset { .. } => continue,
            k => panic!("unexpected kind {k:?}"),
        });
    }
    out
}

/// What otf2-print shows, in Corrected mode.
fn compare_with_otf2_print(anchor: &Path) -> (Otf2Archive, Vec<LocationEvents>) {
    let p = print_archive(anchor);
    let a = Otf2Archive::open_with(anchor, opts(ClockMode::Corrected, false)).unwrap();
    let defs = a.definitions();
    defs.check().unwrap();
    assert_eq!(a.location_count(), p.locations.len(), "{}", anchor.display());
    let loc_of: HashMap<u64, usize> = p.locations.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let all = a.read_all().unwrap();
    let clock = *a.clock();
    for (i, &id) in p.locations.iter().enumerate() {
        assert_eq!(a.otf2_location_id(i), Some(id));
        let (want, skipped, records) = expected(&p, id, &loc_of, &|t| clock.ticks_to_ns(t));
        let l = &all[i];
        assert_eq!(l.loc as usize, i);
        let got = actual(defs, l);
        if let Some(k) = (0..want.len().max(got.len())).find(|&k| want.get(k) != got.get(k)) {
            panic!(
                "{}: location {id}: event {k} differs:\n  otf2-print: {:?}\n  spoor:      {:?}",
                anchor.display(),
                want.get(k),
                got.get(k)
            );
        }
        assert_eq!(l.skipped, skipped, "{}: location {id}: skipped records", anchor.display());
        assert_eq!(l.records, records, "{}: location {id}: records", anchor.display());
        check_pairs(l);
    }
    (a, all)
}

/// Collective begins carry their end's operation and communicator; Irecv
/// requests their completion's source, tag and communicator.
fn check_pairs(l: &LocationEvents) {
    let mut open: Option<(CollOp, u32)> = None;
    for e in l.events.iter().rev() {
        match &e.kind {
            Kind::CollEnd { op, comm, .. } => open = Some((*op, *comm)),
            Kind::CollBegin { op, comm } => assert_eq!(Some((*op, *comm)), open.take(), "a collective begin"),
            _ => {}
        }
    }
    for (k, e) in l.events.iter().enumerate() {
        if let Kind::IrecvRequest { from, comm, tag, request } = &e.kind {
            let done = l.events[k + 1..].iter().find_map(|x| match &x.kind {
                Kind::IrecvComplete { request: r, from, comm, tag, .. } if r == request => {
                    Some((from, comm, tag))
                }
                Kind::IrecvRequest { request: r, .. } if r == request => {
                    Some((&u32::MAX, &u32::MAX, &u32::MAX))
                }
                _ => None,
            });
            match done {
                Some((f, c, t)) if *f != u32::MAX => {
                    assert_eq!((*from, *comm, *tag), (Some(*f), *c, Some(*t)))
                }
                _ => assert_eq!((from, tag), (&None, &None), "an unmatched request is a wildcard"),
            }
        }
    }
}

/// In Raw mode: the same events on the raw clock, plus the clock offsets; with
/// 1 GHz ticks, OTF2's correction of the raw times gives otf2-print's times.
fn check_raw_mode(anchor: &Path, corrected: &[LocationEvents]) {
    let p = print_archive(anchor);
    let a = Otf2Archive::open_with(anchor, opts(ClockMode::Raw, false)).unwrap();
    let raw = a.read_all().unwrap();
    let clock = *a.clock();
    for (i, &id) in p.locations.iter().enumerate() {
        let (offsets, others): (Vec<_>, Vec<_>) =
            raw[i].events.iter().partition(|e| matches!(e.kind, Kind::ClockOffset { .. }));
        let printed = p.offsets.get(&id).cloned().unwrap_or_default();
        assert_eq!(offsets.len(), printed.len(), "location {id}: clock offsets");
        for (e, (t, o, sd)) in offsets.iter().zip(&printed) {
            let Kind::ClockOffset { reference, offset, error } = e.kind else { unreachable!() };
            assert_eq!(reference, 0);
            assert_eq!(e.wall, clock.ticks_to_ns(*t));
            assert_eq!(offset, (*o as f64 * 1e9 / clock.resolution as f64).round() as i64);
            assert_eq!(error, (sd * 1e9 / clock.resolution as f64).round() as u64);
        }
        // Each sample comes after the events of its time and before later ones.
        for w in raw[i].events.windows(2) {
            if matches!(w[0].kind, Kind::ClockOffset { .. }) || matches!(w[1].kind, Kind::ClockOffset { .. })
            {
                assert!(w[0].wall <= w[1].wall, "location {id}: a clock offset out of time order");
            }
        }
        assert_eq!(others.len(), corrected[i].events.len());
        let samples: Vec<(u64, i64)> = printed.iter().map(|s| (s.0, s.1)).collect();
        for (r, c) in others.iter().zip(&corrected[i].events) {
            assert_eq!(r.kind, c.kind);
            if samples.len() < 2 {
                assert_eq!(r.wall, c.wall, "location {id}: no correction without two samples");
            } else if clock.resolution == 1_000_000_000 {
                let ticks = (r.wall as i128 + clock.global_offset as i128) as u64;
                assert_eq!(
                    clock.ticks_to_ns(otf2_correct(&samples, ticks)),
                    c.wall,
                    "location {id}: corrected time"
                );
            }
        }
    }
}

/// OTF2's clock correction as its 3.x reader applies it: the offset is
/// interpolated linearly between the two samples around `t` (the first or
/// last pair outside them), rounded to a whole tick, and added.
fn otf2_correct(samples: &[(u64, i64)], t: u64) -> u64 {
    let k = samples.windows(2).position(|w| t <= w[1].0).unwrap_or(samples.len() - 2);
    let ((t0, o0), (t1, o1)) = (samples[k], samples[k + 1]);
    let slope = (o1 - o0) as f64 / (t1 - t0) as f64;
    let diff = if t >= t0 { (t - t0) as f64 } else { -((t0 - t) as f64) };
    (t as i64 + o0 + (slope * diff).round_ties_even() as i64) as u64
}

/// With `recv_begin`, one RecvBegin per RecvEnd, after its region's Enter.
fn check_recv_begins(anchor: &Path) {
    let a = Otf2Archive::open(anchor).unwrap();
    let defs = a.definitions();
    for l in a.read_all().unwrap() {
        let mut pending = Vec::new();
        let (mut begins, mut ends) = (0, 0);
        for (k, e) in l.events.iter().enumerate() {
            match &e.kind {
                Kind::RecvBegin { from, comm, tag } => {
                    begins += 1;
                    let prev = &l.events[k - 1];
                    let after_enter = matches!(&prev.kind, Kind::Enter { proc }
                        if defs.strings.name(*proc).to_lowercase().starts_with("mpi_") && prev.wall == e.wall);
                    let before_end = matches!(l.events[k + 1].kind, Kind::RecvEnd { .. });
                    assert!(
                        after_enter || before_end,
                        "a RecvBegin neither after an Enter nor before its RecvEnd"
                    );
                    pending.push((*from, *comm, *tag));
                }
                Kind::RecvEnd { from, comm, tag, .. } => {
                    ends += 1;
                    assert_eq!(pending.pop(), Some((Some(*from), *comm, Some(*tag))));
                }
                _ => {}
            }
        }
        assert_eq!(begins, ends);
    }
}

/// read_location and read_all (locations in parallel, or one by one with
/// their output faulted in by another thread) give the same events, in any
/// thread pool.
fn check_read_paths(anchor: &Path) {
    let reference = Otf2Archive::open(anchor).unwrap().read_all().unwrap();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let a = Otf2Archive::open(anchor).unwrap();
            let all = a.read_all().unwrap();
            assert!(all == reference, "read_all with {threads} threads");
            for (i, want) in reference.iter().enumerate() {
                let mut one = a.read_location(i).unwrap();
                // read_location leaves thread parents unresolved.
                for (e, w) in one.events.iter_mut().zip(&want.events) {
                    if let (Kind::ThreadBegin { parent }, Kind::ThreadBegin { parent: p }) =
                        (&mut e.kind, &w.kind)
                    {
                        assert_eq!(*parent, None);
                        *parent = *p;
                    }
                }
                assert!(one == *want, "read_location({i}) with {threads} threads");
            }
        });
    }
    check_streaming(anchor);
}

/// The bytes TraceWriter::write gives for `locations`' events, location by location.
fn written(defs: &Definitions, locations: &[LocationEvents], block_events: usize) -> Vec<u8> {
    let mut w =
        TraceWriter::new(Vec::new(), defs, WriterOptions { block_events, ..Default::default() }).unwrap();
    for e in locations.iter().flat_map(|l| &l.events) {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

/// for_each_block into TraceWriter::write_encoded writes the bytes of writing
/// the events of read_all (read_location's when no location is a thread)
/// one by one, in any thread pool, block size and buffer bound, with the
/// same skipped records.
fn check_streaming(anchor: &Path) {
    for clock in [ClockMode::Raw, ClockMode::Corrected] {
        let a = Otf2Archive::open_with(anchor, opts(clock, true)).unwrap();
        let defs = a.definitions();
        let mut reference = a.read_all().unwrap();
        if !defs.locations.iter().any(|l| l.thread > 0) {
            reference = (0..a.location_count()).map(|i| a.read_location(i).unwrap()).collect();
        }
        let mut skipped = BTreeMap::<String, u64>::new();
        for (what, n) in reference.iter().flat_map(|l| &l.skipped) {
            *skipped.entry(what.clone()).or_default() += n;
        }
        let records: u64 = reference.iter().map(|l| l.records).sum();
        for (threads, block_events, buffer) in
            [(2, 4096, STREAM_BUFFER), (1, 7, 1), (3, 100, 1), (3, 1, 4096)]
        {
            let want = written(defs, &reference, block_events);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut w =
                TraceWriter::new(Vec::new(), defs, WriterOptions { block_events, ..Default::default() })
                    .unwrap();
            let summary = pool
                .install(|| {
                    a.for_each_block_buffered(
                        block_events,
                        buffer,
                        |loc, b| -> Result<(), spoor_format::Error> {
                            w.write_encoded(loc, b).map_err(|e| spoor_format::Error::io("out", &e))
                        },
                    )
                })
                .unwrap();
            let got = w.finish().unwrap();
            let case =
                format!("{}: {clock:?}, {threads} threads, blocks of {block_events}", anchor.display());
            assert!(
                got == want,
                "{case}: {} bytes streamed, {} written event by event",
                got.len(),
                want.len()
            );
            assert_eq!(summary.skipped, skipped, "{case}");
            assert_eq!(summary.records, records, "{case}");
        }
    }
}

// ---------------------------------------------------------------------------
// The real archives

fn real_archives() -> Vec<PathBuf> {
    let Some(d) = data() else { return vec![] };
    let mut v: Vec<PathBuf> = std::fs::read_dir(d.join("otf2"))
        .unwrap()
        .map(|e| e.unwrap().path().join("traces.otf2"))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    assert!(v.len() >= 3, "expected the archives of $SPOOR_DATA/otf2");
    v
}

#[test]
fn every_real_archive_decodes_like_otf2_print() {
    for anchor in real_archives() {
        let (_, corrected) = compare_with_otf2_print(&anchor);
        check_raw_mode(&anchor, &corrected);
        check_recv_begins(&anchor);
        check_read_paths(&anchor);
    }
}

fn kinds(a: &Otf2Archive) -> BTreeMap<&'static str, usize> {
    let mut k = BTreeMap::new();
    for l in a.read_all().unwrap() {
        for e in &l.events {
            *k.entry(e.kind.name()).or_default() += 1;
        }
    }
    k
}

#[test]
fn real_archives_have_their_known_records() {
    let Some(d) = data() else { return };
    let a = Otf2Archive::open(&d.join("otf2/casita-4_mpi_ls_barr/traces.otf2")).unwrap();
    let k = kinds(&a);
    assert_eq!((k["enter"], k["leave"], k["send"], k["recv_end"], k["recv_begin"]), (48, 48, 3, 3, 3));
    assert_eq!((k["coll_begin"], k["coll_end"]), (4, 4));
    let defs = a.definitions();
    assert_eq!(defs.apps.len(), 1);
    assert_eq!(defs.strings.name(defs.apps[0].name), "casita-4_mpi_ls_barr");
    assert_eq!(defs.locations.len(), 4);
    assert_eq!(defs.processes.iter().map(|p| p.rank).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(defs.machines.len(), 1);
    for r in ["main", "late_sender", "foo", "barrier", "MPI_Barrier", "MPI_Win_wait"] {
        assert!(defs.strings.lookup(r).is_some(), "region {r} interned");
    }
    assert_eq!(defs.property("import.format"), Some("otf2"));
    assert_eq!(defs.property("otf2.version"), Some("1.4.0"));
    assert_eq!(defs.property("otf2.property.OTF2::MPI_COMMUNICATION_COMPLETE"), Some("true"));
    // Rank 0 computes in foo for about 9 s longer: the late sender.
    let all = a.read_all().unwrap();
    let foo = defs.strings.lookup("foo").unwrap();
    let first_foo = |l: usize| {
        let evs = &all[l].events;
        let b = evs.iter().position(|e| e.kind == Kind::Enter { proc: foo }).unwrap();
        let e = evs.iter().position(|e| e.kind == Kind::Leave { proc: foo }).unwrap();
        evs[e].wall - evs[b].wall
    };
    assert!(first_foo(0) - first_foo(1) > 8_000_000_000);

    let a = Otf2Archive::open(&d.join("otf2/casita-10_scorep_mpi_tags/traces.otf2")).unwrap();
    let k = kinds(&a);
    assert_eq!((k["enter"], k["leave"], k["send"], k["recv_end"]), (196, 196, 18, 18));
    assert_eq!(k["clock_offset"], 20);
    let tags: Vec<u32> = a.read_all().unwrap()[0]
        .events
        .iter()
        .filter_map(|e| match e.kind {
            Kind::RecvEnd { tag, .. } => Some(tag),
            _ => None,
        })
        .collect();
    assert_eq!(tags.len(), 18);
    assert!(tags.contains(&9) && tags.contains(&1));

    let a = Otf2Archive::open(&d.join("otf2/pipit-ping-pong/traces.otf2")).unwrap();
    let k = kinds(&a);
    assert_eq!((k["send"], k["recv_end"], k["process_begin"], k["process_end"]), (16, 16, 2, 2));
    assert_eq!(a.location_count(), 2);
    let all = a.read_all().unwrap();
    assert_eq!(all.iter().map(|l| l.records).sum::<u64>(), 120);
    let res = a.clock().resolution as f64;
    let offsets: Vec<i64> = all
        .iter()
        .flat_map(|l| &l.events)
        .filter_map(|e| match e.kind {
            Kind::ClockOffset { offset, .. } => Some(offset),
            _ => None,
        })
        .collect();
    let want: Vec<i64> = [-30.0f64, -19.0].iter().map(|t| (t * 1e9 / res).round() as i64).collect();
    for w in want {
        assert!(offsets.contains(&w), "a clock offset of {w} ns in {offsets:?}");
    }
}

// ---------------------------------------------------------------------------
// Archives written with python3-otf2

#[test]
fn generated_archives_decode_like_otf2_print() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str]); 4] = [
        ("small", &["--ranks", "4", "--iters", "60"]),
        ("ghz", &["--ranks", "5", "--iters", "40", "--resolution", "1000000000", "--regions", "3"]),
        ("one", &["--ranks", "1", "--iters", "9000", "--regions", "0"]),
        ("odd", &["--ranks", "3", "--iters", "30", "--resolution", "3000000007", "--threads", "3"]),
    ];
    for (name, args) in cases {
        let anchor = generate(&dir.path().join(name), args);
        let (a, corrected) = compare_with_otf2_print(&anchor);
        check_raw_mode(&anchor, &corrected);
        check_recv_begins(&anchor);
        check_read_paths(&anchor);
        if name == "one" {
            // One location of several chunks.
            let evt = std::fs::metadata(dir.path().join("one/traces/0.evt")).unwrap().len();
            assert!(evt > 2 * 256 * 1024, "{evt} bytes: several chunks");
        }
        if name == "small" {
            let defs = a.definitions();
            // The sub-communicator, the self communicators, the pthreads and their parents.
            let evens = defs.comms.iter().find(|c| defs.strings.name(c.name) == "EVENS").unwrap();
            assert_eq!(evens.members, [0, 2]);
            let selves: Vec<_> =
                defs.comms.iter().filter(|c| defs.strings.name(c.name) == "MPI_COMM_SELF").collect();
            assert_eq!(selves.len(), a.location_count());
            assert_eq!(defs.machines.len(), 2);
            assert_eq!(defs.locations[4].process, 1);
            assert_eq!(defs.locations[4].thread, 1);
            let all = Otf2Archive::open(&anchor).unwrap().read_all().unwrap();
            let parents: Vec<_> = all[4..]
                .iter()
                .flat_map(|l| &l.events)
                .filter_map(|e| match e.kind {
                    Kind::ThreadBegin { parent } => Some(parent),
                    _ => None,
                })
                .collect();
            assert_eq!(parents, [Some(1), Some(1)]);
            assert_eq!(defs.metrics.len(), 3);
            assert_eq!(corrected[1].skipped.get("THREAD_CREATE"), Some(&2));
        }
    }
}

#[test]
fn a_million_events_decode_like_otf2_print() {
    let dir = tempfile::tempdir().unwrap();
    let anchor = generate(dir.path(), &["--ranks", "8", "--iters", "3600", "--regions", "200"]);
    let (_, all) = compare_with_otf2_print(&anchor);
    let n: usize = all.iter().map(|l| l.events.len()).sum();
    assert!(n > 1_000_000, "{n} events");
    check_read_paths(&anchor);
}

// ---------------------------------------------------------------------------
// Hostile inputs

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Opens and reads everything; the first error (which streaming reports too).
fn read(anchor: &Path) -> Result<usize, spoor_format::Error> {
    let a = Otf2Archive::open(anchor)?;
    let streamed = a.for_each_block(4096, |_, _| Ok::<(), spoor_format::Error>(()));
    let all = match a.read_all() {
        Ok(all) => all,
        Err(e) => {
            let s = streamed.expect_err("streaming fails where read_all fails");
            assert_eq!(s.to_string(), e.to_string(), "streaming reports read_all's error");
            return Err(e);
        }
    };
    streamed.expect("streaming reads what read_all reads");
    for i in 0..a.location_count() {
        a.read_location(i)?;
    }
    Ok(all.iter().map(|l| l.events.len()).sum())
}

/// A copy of `src` with `file` (relative to the archive) changed by `f`.
fn mutated(src: &Path, work: &Path, file: &str, f: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let _ = std::fs::remove_dir_all(work);
    copy_dir(src, work);
    let p = work.join(file);
    let mut b = std::fs::read(&p).unwrap();
    f(&mut b);
    std::fs::write(&p, b).unwrap();
    work.join("traces.otf2")
}

fn must_fail(anchor: &Path, what: &str, file: &str) -> spoor_format::Error {
    match read(anchor) {
        Ok(n) => panic!("{what}: read {n} events, expected an error"),
        Err(e) => {
            assert!(e.file.ends_with(file), "{what}: the error names {}, not {file}: {e}", e.file);
            e
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn hostile_inputs_are_errors_not_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let small = generate(&tmp.path().join("small"), &["--ranks", "2", "--iters", "20", "--regions", "2"]);
    let big = generate(&tmp.path().join("big"), &["--ranks", "1", "--iters", "9000", "--regions", "0"]);
    let (small, big) = (small.parent().unwrap().to_owned(), big.parent().unwrap().to_owned());
    assert!(read(&small.join("traces.otf2")).is_ok());
    let work = tmp.path().join("work");
    let cs = 256 * 1024;

    // Truncation, of every file, at many points (every chunk boundary of the big one).
    for (src, file) in [
        (&small, "traces/0.evt"),
        (&small, "traces/1.def"),
        (&small, "traces.def"),
        (&small, "traces.otf2"),
        (&big, "traces/0.evt"),
    ] {
        let len = std::fs::metadata(src.join(file)).unwrap().len() as usize;
        let mut points: Vec<usize> = (0..len).step_by((len / 150).max(1)).collect();
        for k in 1..=len / cs {
            points.extend([k * cs - 1, k * cs, k * cs + 1, k * cs + 18]);
        }
        // Files end with an end-of-file marker and a byte or two after it that readers ignore.
        points.push(len - 4);
        for at in points.into_iter().filter(|&p| p + 3 < len) {
            let anchor = mutated(src, &work, file, |b| b.truncate(at));
            must_fail(&anchor, &format!("{file} cut at {at}"), file);
        }
    }

    // Corrupt chunk headers: the marker, the byte-order mark, the event numbers.
    for (at, v) in [(0, 0x04), (1, 0x00), (2, 0x07), (10, 0xff), (cs, 0x00), (cs + 1, 0x99), (cs + 2, 0x00)] {
        let anchor = mutated(&big, &work, "traces/0.evt", |b| b[at] = v);
        must_fail(&anchor, &format!("chunk header byte {at}"), "traces/0.evt");
    }
    let anchor = mutated(&small, &work, "traces.def", |b| b[0] = 0x13);
    must_fail(&anchor, "global definitions chunk header", "traces.def");

    // Bad record lengths: a huge one, one past its chunk, one too short for its fields.
    let evt = std::fs::read(small.join("traces/0.evt")).unwrap();
    let send = (18..evt.len() - 8)
        .find(|&i| evt[i] == 0x0e && evt[i - 9] == 0x05 && (3..16).contains(&evt[i + 1]))
        .expect("an MPI_SEND record after a timestamp");
    for (what, v) in [("huge", 0xff), ("past the chunk", 0xfe), ("short", 1)] {
        let anchor = mutated(&small, &work, "traces/0.evt", |b| b[send + 1] = v);
        must_fail(&anchor, &format!("{what} record length"), "traces/0.evt");
    }
    let anchor = mutated(&small, &work, "traces/0.evt", |b| {
        b[send + 1] = 0xff;
        b[send + 2..send + 10].copy_from_slice(&u64::MAX.to_le_bytes());
    });
    must_fail(&anchor, "a 2^64-1 record length", "traces/0.evt");
    let anchor = mutated(&small, &work, "traces/0.evt", |b| b[send + 2] = 9);
    must_fail(&anchor, "a compressed integer of 9 bytes", "traces/0.evt");

    // A missing events file.
    let _ = std::fs::remove_dir_all(&work);
    copy_dir(&small, &work);
    std::fs::remove_file(work.join("traces/1.evt")).unwrap();
    let e = must_fail(&work.join("traces.otf2"), "a missing .evt", "traces/1.evt");
    assert_eq!(e.kind, ErrorKind::Io);

    // A newer OTF2 major version; an anchor that is not one.
    let anchor = mutated(&small, &work, "traces.otf2", |b| b[9] = 4);
    let e = must_fail(&anchor, "OTF2 4.0", "traces.otf2");
    assert_eq!(e.kind, ErrorKind::Version);
    assert!(e.message.contains("4.0"), "{e}");
    let anchor = mutated(&small, &work, "traces.otf2", |b| b[2] = b'X');
    assert_eq!(must_fail(&anchor, "no magic", "traces.otf2").kind, ErrorKind::Corrupt);

    // Random bytes in place of each file.
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for file in ["traces.otf2", "traces.def", "traces/0.evt", "traces/1.def"] {
        for _ in 0..20 {
            let anchor = mutated(&small, &work, file, |b| {
                let n = b.len();
                b.clear();
                b.extend((0..n).map(|_| rng.next() as u8));
            });
            must_fail(&anchor, &format!("random {file}"), file);
        }
    }

    // Random byte changes anywhere: an error or not, never a panic.
    let files = ["traces.otf2", "traces.def", "traces/0.evt", "traces/1.evt", "traces/1.def"];
    for _ in 0..400 {
        let file = files[rng.below(files.len())];
        let anchor = mutated(&small, &work, file, |b| {
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
        });
        let _ = read(&anchor);
    }
}
