//! The binary format: round trips through every way of reading, and bad input.

mod common;

use common::{arb_trace, same_events};
use proptest::prelude::*;
use spoor_format::{ErrorKind, ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::*;
use std::io::Write;

fn write(defs: &Definitions, events: &[Event], opts: WriterOptions) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), defs, opts).unwrap();
    for e in events {
        w.write(e).unwrap();
    }
    w.finish().unwrap()
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b).unwrap();
    gz.finish().unwrap()
}

/// Reads through the memory path (whole file).
fn read_whole(b: &[u8], salvage: bool) -> Result<(Definitions, Vec<Event>), spoor_format::Error> {
    TraceReader::from_bytes("t.spoor", b.to_vec(), ReadOptions { salvage })?.read_all()
}

/// Reads through the stream path (as from a pipe).
fn read_stream(b: &[u8], salvage: bool) -> Result<(Definitions, Vec<Event>), spoor_format::Error> {
    let input = Box::new(std::io::Cursor::new(b.to_vec()));
    TraceReader::from_reader("<pipe>", input, ReadOptions { salvage })?.read_all()
}

fn per_location(events: &[Event]) -> std::collections::BTreeMap<LocId, Vec<Event>> {
    let mut m = std::collections::BTreeMap::<LocId, Vec<Event>>::new();
    for e in events {
        m.entry(e.loc).or_default().push(e.clone());
    }
    m
}

fn same_per_location(a: &[Event], b: &[Event]) -> bool {
    let (pa, pb) = (per_location(a), per_location(b));
    pa.len() == pb.len() && pa.iter().zip(&pb).all(|((la, ea), (lb, eb))| la == lb && same_events(ea, eb))
}

/// A small trace with events of every kind, for the byte-level tests.
fn sample() -> (Definitions, Vec<Event>) {
    let mut d = Definitions::new();
    let app = d.add_app("app");
    let m = d.add_machine("node");
    for r in 0..2 {
        let p = d.add_process(&format!("p{r}"), app, m, r);
        d.add_location(&format!("p{r}"), p, 0);
    }
    let main = d.strings.intern("main");
    d.add_comm("world", vec![0, 1]);
    let mut ev = Vec::new();
    for l in 0..2 {
        ev.push(Event::new(l, 0, Some(0), Kind::ProcessBegin { parent: None }));
        ev.push(Event::new(l, 10, Some(10), Kind::Enter { proc: main }));
    }
    ev.push(Event::new(0, 1000, Some(900), Kind::Send { to: 1, comm: 0, tag: 7, bytes: 64 }));
    ev.push(Event::new(1, 20, Some(20), Kind::RecvBegin { from: None, comm: 0, tag: None }));
    let mut recv = Event::new(1, 1500, Some(20), Kind::RecvEnd { from: 0, comm: 0, tag: 7, bytes: 64 });
    recv.ann.partner = Some(EventRef { loc: 0, index: 2 });
    ev.push(recv);
    for l in 0..2 {
        ev.push(Event::new(l, 2000, Some(1000), Kind::CollBegin { op: CollOp::Barrier, comm: 0 }));
        ev.push(Event::new(
            l,
            2100,
            Some(1000),
            Kind::CollEnd { op: CollOp::Barrier, comm: 0, root: None, sent: 0, received: 0 },
        ));
        ev.push(Event::new(l, 2200, Some(1100), Kind::Leave { proc: main }));
        ev.push(Event::new(l, 2300, Some(1100), Kind::ProcessEnd));
    }
    (d, ev)
}

fn small_blocks() -> WriterOptions {
    WriterOptions { block_events: 2, ..Default::default() }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn per_location_blocks_round_trip((defs, events) in arb_trace(60), block in 1usize..8) {
        let b = write(&defs, &events, WriterOptions { block_events: block, ..Default::default() });
        let (d1, e1) = read_whole(&b, false).unwrap();
        prop_assert_eq!(&d1, &defs);
        prop_assert!(same_per_location(&e1, &events));
        let (d2, e2) = read_stream(&b, false).unwrap();
        prop_assert_eq!(&d2, &defs);
        prop_assert!(same_events(&e2, &e1), "stream and memory-mapped reads differ");
        let (_, e3) = read_stream(&gzip(&b), false).unwrap();
        prop_assert!(same_events(&e3, &e1), "gzip read differs");
    }

    #[test]
    fn global_order_keeps_the_order((defs, events) in arb_trace(60), block in 1usize..8) {
        let opts = WriterOptions { block_events: block, global_order: true, ..Default::default() };
        let b = write(&defs, &events, opts);
        let r = TraceReader::from_bytes("t", b.clone(), ReadOptions::default()).unwrap();
        prop_assert!(r.header().unwrap().flags & spoor_format::binary::flags::GLOBAL_ORDER != 0);
        let (_, e1) = r.read_all().unwrap();
        prop_assert!(same_events(&e1, &events));
        let (_, e2) = read_stream(&b, false).unwrap();
        prop_assert!(same_events(&e2, &events));
    }

    /// Per-location blocks imply a Lamport clock one more than the location's previous
    /// one: runs of such clocks, clocks missing where one would be implied, jumps, the
    /// largest clock (after which none is implied), all read back as written.
    #[test]
    fn per_location_blocks_keep_every_lamport_clock(
        (defs, mut events) in arb_trace(80),
        steps in prop::collection::vec(0u8..6, 80),
        block in 1usize..9,
    ) {
        let mut last = std::collections::HashMap::<LocId, Option<u64>>::new();
        for (e, step) in events.iter_mut().zip(steps) {
            let prev = last.get(&e.loc).copied().flatten();
            e.ann.lamport = match step {
                0..=2 => Some(prev.map_or(1, |p| p.wrapping_add(1))),
                3 => None,
                4 => Some(prev.unwrap_or(0).saturating_add(7)),
                _ => Some(u64::MAX),
            };
            last.insert(e.loc, e.ann.lamport);
        }
        let opts = WriterOptions { block_events: block, global_order: true, ..Default::default() };
        let b = write(&defs, &events, opts);
        let (_, got) = read_whole(&b, false).unwrap();
        prop_assert!(same_events(&got, &events));
        let (_, streamed) = read_stream(&b, false).unwrap();
        prop_assert!(same_events(&streamed, &events));
        let mut r = TraceReader::from_bytes("t", b, ReadOptions::default()).unwrap();
        let par: Vec<Event> = r.par_map_blocks(|_, blk| blk.events).unwrap().concat();
        prop_assert!(same_events(&par, &events));
    }

    #[test]
    fn parallel_decoding_matches_sequential((defs, events) in arb_trace(80)) {
        let b = write(&defs, &events, small_blocks());
        let mut r = TraceReader::from_bytes("t", b.clone(), ReadOptions::default()).unwrap();
        let par: Vec<Event> = r.par_map_blocks(|_, blk| blk.events).unwrap().concat();
        let (_, seq) = read_whole(&b, false).unwrap();
        prop_assert!(same_events(&par, &seq));
        let mut s = TraceReader::from_reader("p", Box::new(std::io::Cursor::new(b)), ReadOptions::default()).unwrap();
        let spar: Vec<Event> = s.par_map_blocks(|_, blk| blk.events).unwrap().concat();
        prop_assert!(same_events(&spar, &seq));
    }

    #[test]
    fn reading_ahead_gives_the_blocks_in_order((defs, events) in arb_trace(80)) {
        let b = write(&defs, &events, small_blocks());
        let (_, seq) = read_whole(&b, false).unwrap();
        let r = TraceReader::from_reader("p", Box::new(std::io::Cursor::new(b.clone())), ReadOptions::default()).unwrap();
        let mut ahead = r.read_ahead(2);
        let got: Vec<Event> = (&mut ahead).map(|blk| blk.unwrap().events).collect::<Vec<_>>().concat();
        prop_assert!(same_events(&got, &seq));
        prop_assert_eq!(ahead.finish().defs().locations.len(), defs.locations.len());
        // Blocks decoded into the rooms of blocks handed back are the same blocks.
        for path_or_stream in [true, false] {
            let r = if path_or_stream {
                TraceReader::from_bytes("t", b.clone(), ReadOptions::default()).unwrap()
            } else {
                TraceReader::from_reader("p", Box::new(std::io::Cursor::new(b.clone())), ReadOptions::default()).unwrap()
            };
            let mut ahead = r.read_ahead(1);
            let mut got = Vec::new();
            while let Some(blk) = ahead.next() {
                let blk = blk.unwrap();
                got.extend(blk.events.iter().cloned());
                ahead.recycle(blk);
            }
            prop_assert!(same_events(&got, &seq));
        }
        // A damaged tail: the blocks before it, then its error, then nothing.
        if b.len() > 60 {
            let mut bad = b.clone();
            let n = bad.len();
            bad[n - 20..].fill(0xff);
            let cut = TraceReader::from_reader("bad", Box::new(std::io::Cursor::new(bad)), ReadOptions::default());
            if let Ok(r) = cut {
                let items: Vec<_> = r.read_ahead(1).collect();
                prop_assert!(items.last().is_some_and(|x| x.is_err()));
                prop_assert!(items[..items.len() - 1].iter().all(|x| x.is_ok()));
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(tail in prop::collection::vec(any::<u8>(), 0..300), keep_magic in any::<bool>()) {
        let mut b = if keep_magic { spoor_format::binary::Header::new(0).encode() } else { Vec::new() };
        b.extend_from_slice(&tail);
        let _ = read_whole(&b, false);
        let _ = read_stream(&b, false);
        let _ = read_whole(&b, true);
    }
}

/// The notes readers gave in this test binary.
fn notes() -> &'static std::sync::Mutex<Vec<String>> {
    static NOTES: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    NOTES.get_or_init(|| {
        spoor_format::notes::set_sink(|m| notes().lock().unwrap().push(m.to_owned()));
        Default::default()
    })
}

#[test]
fn a_trace_cut_anywhere_is_read_up_to_the_cut_with_a_note() {
    let (defs, events) = sample();
    let full = write(&defs, &events, small_blocks());
    let orig = per_location(&events);
    notes();
    for cut in 0..full.len() {
        let part = &full[..cut];
        for stream in [false, true] {
            let name = if stream { "<cut-pipe>" } else { "cut-note.spoor" };
            let opened = if stream {
                TraceReader::from_reader(
                    name,
                    Box::new(std::io::Cursor::new(part.to_vec())),
                    ReadOptions::default(),
                )
            } else {
                TraceReader::from_bytes(name, part.to_vec(), ReadOptions::default())
            };
            let mut r = match opened {
                Ok(r) => r,
                // Nothing to read: the cut is in the header or the definitions.
                Err(err) => {
                    assert_eq!(err.kind, ErrorKind::Corrupt, "cut at {cut}: {err}");
                    assert!(err.to_string().contains("byte"), "cut at {cut}: no offset in {err}");
                    continue;
                }
            };
            let mut got = Vec::new();
            while let Some(b) = r.next_block().unwrap_or_else(|e| panic!("cut at {cut}: {e}")) {
                got.extend(b.events);
            }
            let stop = r.salvage_report().stopped.clone().unwrap_or_else(|| panic!("cut at {cut}: no stop"));
            assert!(stop.offset <= cut as u64 && stop.why.contains("truncated"), "cut at {cut}: {stop:?}");
            for (loc, evs) in per_location(&got) {
                assert_eq!(&orig[&loc][..evs.len()], &evs[..], "cut at {cut}");
            }
            // What a salvaging read keeps, no more and no less.
            let salvaged = if stream { read_stream(part, true) } else { read_whole(part, true) };
            assert!(same_events(&salvaged.unwrap().1, &got), "cut at {cut}");
            let said = notes().lock().unwrap().iter().any(|n| {
                n.starts_with(&format!("{name}: cut short at byte {}", stop.offset))
                    && n.contains("truncated")
            });
            assert!(said, "cut at {cut}: no note");
        }
    }
    // The whole file has no stop and gives no note.
    let r = TraceReader::from_bytes("whole-note.spoor", full, ReadOptions::default()).unwrap();
    assert!(r.salvage_report().is_clean());
    assert!(!notes().lock().unwrap().iter().any(|n| n.starts_with("whole-note.spoor")));
}

#[test]
fn damage_that_is_not_a_cut_still_fails() {
    let (defs, events) = sample();
    let mut b = write(&defs, &events, small_blocks());
    // The end chunk's last bytes overwritten: its checksum fails.
    let n = b.len();
    b[n - 4..].copy_from_slice(&[0xff; 4]);
    for stream in [false, true] {
        let err = if stream { read_stream(&b, false) } else { read_whole(&b, false) }.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt, "{err}");
        assert!(err.to_string().contains("byte"), "{err}");
    }
}

#[test]
fn salvage_reports_the_loss() {
    let (defs, events) = sample();
    let full = write(&defs, &events, small_blocks());
    // Cut in the middle of the last block: everything before it is read.
    let index_at = TraceReader::from_bytes("t", full.clone(), ReadOptions::default())
        .unwrap()
        .end()
        .unwrap()
        .index_offset;
    let cut = index_at as usize - 3;
    let r =
        TraceReader::from_bytes("cut.spoor", full[..cut].to_vec(), ReadOptions { salvage: true }).unwrap();
    let report = r.salvage_report().clone();
    let (_, got) = r.read_all().unwrap();
    assert!(!got.is_empty() && got.len() < events.len());
    let spoor_format::Stop { offset: off, lost, why } = report.stopped.expect("a stop is reported");
    assert!(off < cut as u64 && lost > 0, "{off} {lost}");
    assert!(why.contains("truncated"), "{why}");
}

#[test]
fn every_flipped_byte_is_caught_or_harmless() {
    let (defs, events) = sample();
    for opts in [small_blocks(), WriterOptions { global_order: true, ..small_blocks() }] {
        flipped_bytes_are_caught_or_harmless(&defs, &events, opts);
    }
}

fn flipped_bytes_are_caught_or_harmless(defs: &Definitions, events: &[Event], opts: WriterOptions) {
    let full = write(defs, events, opts);
    for i in 0..full.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = full.clone();
            b[i] ^= bit;
            for read in [read_whole, read_stream] {
                match read(&b, false) {
                    Err(e) => assert!(e.to_string().contains("t.spoor") || e.to_string().contains("<pipe>")),
                    // Only descriptive header bits (minor version, flags) may change
                    // harmlessly, and LOCAL_BLOCKS (bit 32), which only allows a chunk type;
                    // and the end chunk's: a trace that does not end with one was cut
                    // short, and is read up to the cut (here, every block).
                    Ok((d, e)) => {
                        let end_chunk = i >= full.len() - 36;
                        assert!(
                            (10..12).contains(&i)
                                || (16..20).contains(&i)
                                || (i == 20 && bit == 0x01)
                                || end_chunk,
                            "flip at byte {i} of {} went unnoticed",
                            full.len()
                        );
                        assert_eq!(&d, defs);
                        assert!(same_per_location(&e, events));
                    }
                }
            }
        }
    }
}

#[test]
fn a_corrupt_block_is_skipped_by_salvage() {
    let (defs, events) = sample();
    let full = write(&defs, &events, small_blocks());
    let r = TraceReader::from_bytes("x", full.clone(), ReadOptions::default()).unwrap();
    let first_block = r.index().unwrap()[0].offset as usize;
    let mut b = full;
    b[first_block + 12] ^= 0xff;
    let err = read_whole(&b, false).unwrap_err();
    assert!(err.to_string().contains(&format!("byte {first_block}")), "{err}");
    assert!(err.to_string().contains("checksum"), "{err}");
    let r = TraceReader::from_bytes("x", b, ReadOptions { salvage: true }).unwrap();
    let mut r2 = r;
    let mut n = 0;
    while let Some(blk) = r2.next_block().unwrap() {
        n += blk.events.len();
    }
    assert_eq!(n, events.len() - 2, "one block of two events lost");
    assert_eq!(r2.salvage_report().bad_blocks.len(), 1);
    assert_eq!(r2.salvage_report().bad_blocks[0].offset, first_block as u64);
}

#[test]
fn hostile_lengths_are_refused_without_allocating() {
    use spoor_format::binary::{chunk, put_chunk, Header};
    use spoor_format::varint::put_u64;
    let header = Header::new(0).encode();
    // A chunk declaring 2^31 bytes.
    let mut b = header.clone();
    b.push(chunk::DEFS);
    b.extend_from_slice(&(1u32 << 31).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    for read in [read_whole, read_stream] {
        let e = read(&b, false).unwrap_err();
        assert!(e.to_string().contains("more than the limit"), "{e}");
        assert_eq!(e.offset, Some(24));
    }
    // Definitions claiming 2^60 strings.
    let mut payload = Vec::new();
    put_u64(&mut payload, 1 << 60);
    let mut b = header.clone();
    put_chunk(&mut b, chunk::DEFS, &payload);
    let end = spoor_format::binary::End { events: 0, blocks: 0, index_offset: 0 };
    put_chunk(&mut b, chunk::END, &end.encode());
    let e = read_whole(&b, false).unwrap_err();
    assert!(e.to_string().contains("the number of strings is 1152921504606846976"), "{e}");
    assert_eq!(e.offset, Some(24 + 9));
    // A block claiming 2^40 events in 3 bytes.
    let mut d = Definitions::new();
    let a = d.add_app("a");
    let m = d.add_machine("m");
    let p = d.add_process("p", a, m, 0);
    d.add_location("p", p, 0);
    let mut b = header.clone();
    put_chunk(&mut b, chunk::DEFS, &spoor_format::binary::encode_defs(&d));
    let mut blk = Vec::new();
    put_u64(&mut blk, 0);
    put_u64(&mut blk, 1 << 40);
    blk.extend_from_slice(&[4, 0, 0]);
    put_chunk(&mut b, chunk::BLOCK, &blk);
    let end = spoor_format::binary::End { events: 0, blocks: 1, index_offset: 0 };
    put_chunk(&mut b, chunk::END, &end.encode());
    let e = read_whole(&b, false).unwrap_err();
    assert!(e.to_string().contains("block declares 1099511627776 events"), "{e}");
    // A block naming an undefined location.
    let mut b2 = header;
    put_chunk(&mut b2, chunk::DEFS, &spoor_format::binary::encode_defs(&d));
    put_chunk(&mut b2, chunk::BLOCK, &[9, 0]);
    put_chunk(&mut b2, chunk::END, &end.encode());
    let e = read_whole(&b2, false).unwrap_err();
    assert!(e.to_string().contains("block names location 9, but 1 locations are defined"), "{e}");
}

#[test]
fn a_newer_major_version_is_refused_with_exit_code_3() {
    let (defs, events) = sample();
    let mut b = write(&defs, &events, WriterOptions::default());
    b[8] = 2;
    for read in [read_whole, read_stream] {
        let e = read(&b, false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Version);
        assert!(e.to_string().contains("version 2.2 is newer"), "{e}");
        assert!(e.to_string().contains("upgrade spoor"), "{e}");
    }
    // An unknown required feature bit is refused the same way.
    let mut b = write(&defs, &events, WriterOptions::default());
    b[23] = 0x80;
    assert_eq!(read_whole(&b, false).unwrap_err().kind, ErrorKind::Version);
}

#[test]
fn unknown_optional_chunks_and_annotations_are_skipped() {
    use spoor_format::binary::{chunk, put_chunk};
    let (defs, events) = sample();
    let full = write(&defs, &events, WriterOptions { index: false, ..Default::default() });
    // Insert an optional chunk of a future minor version after the header.
    let mut b = full[..24].to_vec();
    put_chunk(&mut b, 0x77, b"future");
    b.extend_from_slice(&full[24..]);
    let (_, e) = read_whole(&b, false).unwrap();
    assert!(same_per_location(&e, &events));
    let (_, e) = read_stream(&b, false).unwrap();
    assert!(same_per_location(&e, &events));
    // An unknown required chunk type is an error.
    let mut b = full[..24].to_vec();
    put_chunk(&mut b, 0x20, b"?");
    b.extend_from_slice(&full[24..]);
    let e = read_whole(&b, false).unwrap_err();
    assert!(e.to_string().contains("expected a chunk type"), "{e}");
    let _ = chunk::END;
}

#[test]
fn empty_and_foreign_inputs_say_what_was_expected() {
    let e = read_stream(b"", false).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = read_stream(b"\x00\x01\x02binary junk", false).unwrap_err();
    assert!(e.to_string().contains("not a spoor trace"), "{e}");
    let e = read_stream(&gzip(b"\x00\x01\x02binary junk"), false).unwrap_err();
    assert!(e.to_string().contains("not a spoor trace"), "{e}");
    // A damaged gzip stream.
    let mut gz = gzip(&write(&sample().0, &sample().1, WriterOptions::default()));
    let n = gz.len();
    gz[n / 2] ^= 0xff;
    assert!(read_stream(&gz, false).is_err());
}

#[test]
fn the_index_describes_every_block() {
    let (defs, events) = sample();
    let b = write(&defs, &events, small_blocks());
    let r = TraceReader::from_bytes("t", b.clone(), ReadOptions::default()).unwrap();
    let index = r.index().unwrap().to_vec();
    let end = r.end().unwrap();
    assert_eq!(end.events, events.len() as u64);
    assert_eq!(end.blocks, index.len() as u64);
    assert_eq!(index.iter().map(|e| e.count).sum::<u64>(), events.len() as u64);
    for e in &index {
        assert_eq!(b[e.offset as usize], spoor_format::binary::chunk::BLOCK);
        let loc_events: Vec<_> = events.iter().filter(|x| Some(x.loc) == e.loc).collect();
        assert!(loc_events.iter().any(|x| x.wall == e.min_wall));
        assert!(e.max_wall >= e.min_wall);
    }
}

#[test]
fn a_file_is_memory_mapped_and_a_gzip_file_streamed() {
    let (defs, events) = sample();
    let b = write(&defs, &events, small_blocks());
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("t.spoor");
    std::fs::write(&plain, &b).unwrap();
    let gz = dir.path().join("t.spoor.gz");
    std::fs::write(&gz, gzip(&b)).unwrap();
    for p in [&plain, &gz] {
        let r = TraceReader::open(p.to_str().unwrap(), ReadOptions::default()).unwrap();
        let (d, e) = r.read_all().unwrap();
        assert_eq!(d, defs);
        assert!(same_per_location(&e, &events));
    }
    let e = TraceReader::open(dir.path().join("missing").to_str().unwrap(), ReadOptions::default())
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(e.to_string().contains("missing"));
}

#[test]
fn cpu_modes_compress_computing_and_waiting() {
    // Computing (cpu advances with wall) and waiting (cpu still) cost no CPU bytes.
    let mut d = Definitions::new();
    let a = d.add_app("a");
    let m = d.add_machine("m");
    let p = d.add_process("p", a, m, 0);
    d.add_location("p", p, 0);
    let f = d.strings.intern("f");
    let mut ev = Vec::new();
    let (mut wall, mut cpu) = (1_000_000i64, 0i64);
    for i in 0..1000 {
        wall += 5000;
        if i % 2 == 0 {
            cpu += 5000;
        }
        ev.push(Event::new(
            0,
            wall,
            Some(cpu),
            if i % 2 == 0 { Kind::Enter { proc: f } } else { Kind::Leave { proc: f } },
        ));
    }
    let b = write(&d, &ev, WriterOptions { block_events: 1000, ..Default::default() });
    // Head, a two-byte wall delta and the procedure: 4 bytes an event, plus the framing.
    assert!(b.len() < 1000 * 4 + 200, "{} bytes", b.len());
    let (_, got) = read_whole(&b, false).unwrap();
    assert_eq!(got, ev);
}

/// A compact block worked out by hand (formats/trace.md, 0x07): locations, CPU times,
/// partners and Lamport clocks relative to what the block said before.
#[test]
fn a_compact_block_is_encoded_as_worked_out_by_hand() {
    use spoor_format::binary::{decode_block, Form};
    let ev = |loc, wall, cpu, kind, partner: Option<(u32, u64)>, lamport| {
        let mut e = Event::new(loc, wall, Some(cpu), kind);
        e.ann.partner = partner.map(|(loc, index)| EventRef { loc, index });
        e.ann.lamport = Some(lamport);
        e
    };
    let events = vec![
        ev(2, 100, 50, Kind::Enter { proc: 1 }, None, 1),
        ev(2, 110, 60, Kind::Isend { to: 1, comm: 0, tag: 3, bytes: 8, request: 5 }, Some((1, 7)), 2),
        ev(
            1,
            120,
            40,
            Kind::IrecvComplete { request: 9, from: 2, comm: 0, tag: 3, bytes: 8 },
            Some((2, 1)),
            9,
        ),
        ev(2, 130, 60, Kind::IsendComplete { request: 5 }, Some((2, 1)), 3),
    ];
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        4, // events
        // enter, CPU delta, annotated; location +2; wall +100; CPU +50; procedure 1;
        // a Lamport clock, none implied yet: 1.
        0xC4, 0x04, 0xC8, 0x01, 0x64, 0x01, 0x04, 0x01,
        // isend, CPU advanced with the location's own wall time (10), annotated; same
        // location; wall +10; to 1, comm 0, tag 3, 8 bytes, request 5; a partner at the
        // implied location (the destination), index 0 + 7; the clock implied (2).
        0xA9, 0x00, 0x14, 0x01, 0x00, 0x03, 0x08, 0x05, 0x01, 0x0E,
        // irecv_complete, CPU delta, annotated; location -1; wall +10; CPU +40 (the
        // location's first); request 9, from 2, comm 0, tag 3, 8 bytes; a partner at the
        // source, index 0 + 1, and a clock, none implied yet: 9.
        0xCC, 0x01, 0x14, 0x50, 0x09, 0x02, 0x00, 0x03, 0x08, 0x05, 0x02, 0x09,
        // isend_complete, CPU unchanged, annotated; location +1; wall +10; request 5; a
        // partner on its own location (its first there), index 0 + 1; clock implied (3).
        0xEA, 0x02, 0x14, 0x05, 0x01, 0x02,
    ];
    let b = spoor_format::raw::encode_block(&events, true);
    assert_eq!(b.payload, want);
    let mut got = Vec::new();
    decode_block(&want, Form::Compact, 3, |e| got.push(e)).unwrap();
    assert_eq!(got, events);
}

#[test]
fn damaged_compact_annotations_and_locations_are_named() {
    use spoor_format::binary::{decode_block, Form};
    let decode = |payload: &[u8]| match decode_block(payload, Form::Compact, 3, |_| {}) {
        Ok(_) => panic!("{payload:?} decoded"),
        Err(e) => e.message,
    };
    // Enter (annotated), location 0, wall 0, procedure 1, then the annotations present.
    for (present, what) in [(32u8, "found 32"), (3, "found 3"), (12, "found 12"), (0, "found 0")] {
        let e = decode(&[1, 0x84, 0, 0, 1, present, 1, 1]);
        assert!(e.contains("expected the annotations present") && e.contains(what), "{e}");
    }
    // A location delta below location 0, and past the last.
    assert!(decode(&[1, 0x04, 0x01, 0, 1]).contains("event names location -1, but 3 locations are defined"));
    assert!(decode(&[1, 0x04, 0x06, 0, 1]).contains("event names location 3, but 3 locations are defined"));
}

#[test]
fn traces_of_format_1_1_still_read() {
    use spoor_format::binary::{chunk, flags};
    let (defs, events) = sample();
    let opts = WriterOptions { global_order: true, ..small_blocks() };
    let mut w = TraceWriter::new_1_1(Vec::new(), &defs, opts.clone()).unwrap();
    for e in &events {
        w.write(e).unwrap();
    }
    let old = w.finish().unwrap();
    let h = spoor_format::binary::Header::decode(&old).unwrap();
    assert_eq!((h.minor, h.flags & (flags::LOCAL_BLOCKS | flags::COMPACT_BLOCKS)), (1, flags::LOCAL_BLOCKS));
    // The first chunk after the definitions is a per-location block.
    let defs_len = u32::from_le_bytes(old[25..29].try_into().unwrap()) as usize;
    assert_eq!(old[24 + chunk::HEADER_LEN + defs_len], chunk::LOCAL_BLOCK);
    let new = write(&defs, &events, opts);
    assert_eq!(new[24 + chunk::HEADER_LEN + defs_len], chunk::COMPACT_BLOCK);
    for read in [read_whole, read_stream] {
        let (d, got) = read(&old, false).unwrap();
        assert_eq!(d, defs);
        assert!(same_events(&got, &events));
        assert_eq!(got, read(&new, false).unwrap().1);
    }
    // A block whose type the header does not allow is damage.
    let mut stray = new.clone();
    stray[24 + chunk::HEADER_LEN + defs_len] = chunk::LOCAL_BLOCK;
    let e = read_whole(&stray, false).unwrap_err().to_string();
    assert!(e.contains("in a trace whose header does not allow it (LOCAL_BLOCKS unset)"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Blocks of every form, damaged or not, and random bytes: every decoder of blocks
    /// agrees with decode_block (the fuzz target `block` asks the same of any bytes).
    #[test]
    fn every_block_decoder_agrees_on_damaged_blocks(
        (defs, events) in arb_trace(40),
        pick in 0usize..4,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        noise in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        use spoor_format::binary::Form;
        let form = [Form::Single, Form::Multi, Form::Local, Form::Compact][pick];
        let first = events.first().map_or(0, |e| e.loc);
        let mine: Vec<Event> = events.into_iter().filter(|e| form.multi() || e.loc == first).collect();
        let mut payload = spoor_format::raw::encode_block_as(&mine, form).payload;
        for (at, b) in edits {
            let i = at.index(payload.len());
            payload[i] = b;
        }
        payload.truncate(if cut.index(3) == 0 { cut.index(payload.len() + 1) } else { payload.len() });
        let locs = defs.locations.len();
        prop_assert_eq!(spoor_format::raw::decoders_agree(&payload, form, locs), Ok(()));
        prop_assert_eq!(spoor_format::raw::decoders_agree(&noise, form, locs), Ok(()));
    }
}

#[test]
fn the_end_chunk_of_a_file_is_read_from_its_last_bytes() {
    use spoor_format::binary::End;
    let (defs, events) = sample();
    let b = write(&defs, &events, small_blocks());
    let dir = tempfile::tempdir().unwrap();
    let (whole, cut) = (dir.path().join("t.spoor"), dir.path().join("cut.spoor"));
    std::fs::write(&whole, &b).unwrap();
    std::fs::write(&cut, &b[..b.len() - 1]).unwrap();
    let end = End::of_file(&std::fs::File::open(&whole).unwrap()).unwrap();
    assert_eq!(end.events, events.len() as u64);
    assert!(End::of_file(&std::fs::File::open(&cut).unwrap()).is_none());
}
