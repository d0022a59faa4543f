//! Blocks as whole pieces: encoding a block's events outside a writer (so that blocks
//! can be encoded in parallel), and decoding a block while finding out whether
//! encoding its events again would give back the very same bytes (so that a program
//! that does not change a block may copy it instead of encoding it again).
//!
//! [`crate::TraceWriter::write_block`] takes such a block; together with
//! [`crate::TraceWriter::takes_block`] the output is byte for byte what writing the
//! events one by one would have given.

use crate::binary::{
    ann, block_end, block_prefix, compact_event, cpu_mode, decode_block, decode_kind, event_cpu, head,
    implied_lamport, u32_of, BlockEncoder, CompactRun, DecodeError, Expect, Form, PerLocation,
};
use crate::varint::{put_u64, vlen, zigzag, Cursor};
use spoor_model::*;

/// A block payload ready to be written as one chunk, with what the index says of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncodedBlock {
    /// The location of a single-location block; `None` for a multi-location block.
    pub loc: Option<LocId>,
    /// Events in the block.
    pub count: u64,
    /// The smallest wall time.
    pub min_wall: i64,
    /// The largest wall time.
    pub max_wall: i64,
    /// The whole payload: location (single-location blocks), event count, events.
    pub payload: Vec<u8>,
}

/// Encodes `events` as one block, exactly as [`crate::TraceWriter`] encodes a block
/// holding them: a multi-location block (in the compact form, 0x07) when `multi`,
/// else a block of the location of the first event (every event must be of that
/// location).
pub fn encode_block(events: &[Event], multi: bool) -> EncodedBlock {
    let mut enc = BlockEncoder::default();
    for ev in events {
        enc.push(ev, multi);
    }
    enc.take_block(if multi { None } else { events.first().map(|e| e.loc) })
}

/// `events` as a block of `form`: 1.1's per-location form for `Local`, and for the older
/// `Multi` too (whose layout it shares); the location of a block of one location is the
/// first event's (0 without events). For tests of the readers.
#[doc(hidden)]
pub fn encode_block_as(events: &[Event], form: Form) -> EncodedBlock {
    let multi = form.multi();
    let mut enc = match form {
        Form::Local | Form::Multi => BlockEncoder::writing_1_1(),
        _ => BlockEncoder::default(),
    };
    for ev in events {
        enc.push(ev, multi);
    }
    enc.take_block((!multi).then(|| events.first().map_or(0, |e| e.loc)))
}

impl BlockEncoder {
    /// The block encoded so far, as a block of location `loc` (`None`: a
    /// multi-location block, events pushed `with_loc`); the encoder starts afresh.
    pub fn take_block(&mut self, loc: Option<LocId>) -> EncodedBlock {
        let mut payload = Vec::with_capacity(self.buf.len() + 12);
        if let Some(l) = loc {
            put_u64(&mut payload, l as u64);
        }
        put_u64(&mut payload, self.count);
        payload.extend_from_slice(&self.buf);
        let b = EncodedBlock {
            loc,
            count: self.count,
            min_wall: if self.count > 0 { self.min_wall } else { 0 },
            max_wall: if self.count > 0 { self.max_wall } else { 0 },
            payload,
        };
        self.clear();
        b
    }
}

#[inline(always)]
fn opt_len(v: Option<u32>) -> usize {
    vlen(v.map_or(0, |v| v as u64 + 1))
}

/// The bytes the encoder writes for the payload of `k`.
fn kind_len(k: &Kind) -> usize {
    let v = |x: u64| vlen(x);
    match *k {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => opt_len(parent),
        Kind::ProcessEnd | Kind::ThreadEnd => 0,
        Kind::Enter { proc: id } | Kind::Leave { proc: id } => v(id as u64),
        Kind::PhaseBegin { name: id } | Kind::PhaseEnd { name: id } => v(id as u64),
        Kind::Send { to, comm, tag, bytes } => v(to as u64) + v(comm as u64) + v(tag as u64) + v(bytes),
        Kind::RecvBegin { from, comm, tag } => opt_len(from) + v(comm as u64) + opt_len(tag),
        Kind::RecvEnd { from, comm, tag, bytes } => {
            v(from as u64) + v(comm as u64) + v(tag as u64) + v(bytes)
        }
        Kind::Isend { to, comm, tag, bytes, request } => {
            v(to as u64) + v(comm as u64) + v(tag as u64) + v(bytes) + v(request)
        }
        Kind::IsendComplete { request } => v(request),
        Kind::IrecvRequest { from, comm, tag, request } => {
            opt_len(from) + v(comm as u64) + opt_len(tag) + v(request)
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            v(request) + v(from as u64) + v(comm as u64) + v(tag as u64) + v(bytes)
        }
        Kind::CollBegin { comm, .. } => 1 + v(comm as u64),
        Kind::CollEnd { comm, root, sent, received, .. } => {
            1 + v(comm as u64) + opt_len(root) + v(sent) + v(received)
        }
        Kind::LockRequest { lock } | Kind::LockAcquire { lock } | Kind::LockRelease { lock } => v(lock),
        Kind::Metric { metric, .. } => v(metric as u64) + 8,
        Kind::ClockOffset { reference, offset, error } => v(reference as u64) + v(zigzag(offset)) + v(error),
    }
}

/// The bytes the encoder writes for the annotations of `ev` (count included).
fn annotations_len(ev: &Event) -> usize {
    let a = &ev.ann;
    let item = |tag: u64, body: usize| vlen(tag) + vlen(body as u64) + body;
    let mut n = 0;
    let mut len = 0;
    if let Some(p) = a.partner {
        n += 1;
        len += item(ann::PARTNER, vlen(p.loc as u64) + vlen(p.index));
    }
    if let Some(l) = a.lamport {
        n += 1;
        len += item(ann::LAMPORT, vlen(l));
    }
    if let Some(r) = a.raw_wall {
        n += 1;
        len += item(ann::RAW_WALL, vlen(zigzag(r.wrapping_sub(ev.wall))));
    }
    vlen(n) + len
}

/// Decodes annotations as `binary::decode_annotations` does; returns whether their
/// tags come in the order the encoder writes them, each once and each known, and sets
/// `no_lamport` when they say the event has no Lamport clock.
fn decode_annotations_ordered(
    c: &mut Cursor,
    ev: &mut Event,
    no_lamport: &mut bool,
) -> Result<bool, DecodeError> {
    let at = c.pos;
    let n = c.u64().want(c, "the number of annotations")?;
    if n > c.remaining() as u64 {
        return Err(DecodeError {
            offset: at,
            message: format!("the number of annotations is {n}, but only {} bytes remain", c.remaining()),
        });
    }
    let mut ordered = true;
    let mut last_tag = 0u64;
    for _ in 0..n {
        let tag = c.u64().want(c, "an annotation tag")?;
        let lat = c.pos;
        let len = c.u64().want(c, "an annotation length")?;
        if len > c.remaining() as u64 {
            return Err(DecodeError {
                offset: lat,
                message: format!("an annotation length is {len}, but only {} bytes remain", c.remaining()),
            });
        }
        let len = len as usize;
        let at = c.pos;
        let body = c.bytes(len).want(c, "an annotation")?;
        let mut b = Cursor::new(body);
        let bad = |what: &str| DecodeError {
            offset: at,
            message: format!("expected {what} in a {len}-byte annotation"),
        };
        ordered &= tag > last_tag && (ann::PARTNER..=ann::RAW_WALL).contains(&tag);
        last_tag = tag;
        match tag {
            ann::PARTNER => {
                let loc = b.u64().map_err(|_| bad("a partner location"))?;
                let index = b.u64().map_err(|_| bad("a partner index"))?;
                let loc = u32::try_from(loc).map_err(|_| bad("a partner location below 2^32"))?;
                ev.ann.partner = Some(EventRef { loc, index });
            }
            ann::LAMPORT => ev.ann.lamport = Some(b.u64().map_err(|_| bad("a Lamport clock"))?),
            ann::RAW_WALL => {
                ev.ann.raw_wall =
                    Some(ev.wall.wrapping_add(b.i64().map_err(|_| bad("a raw wall-time delta"))?))
            }
            ann::NO_LAMPORT => *no_lamport = true,
            _ => {}
        }
        // Bytes after the known body are dropped by an encoder.
        ordered &= b.remaining() == 0;
    }
    Ok(ordered)
}

/// What [`decode_block_canonical`] found out about a block besides its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFacts {
    /// How the block lays out its events.
    pub form: Form,
    /// Its location; `None` for a multi-location block.
    pub loc: Option<LocId>,
    /// Its events.
    pub count: u64,
    /// The smallest and largest wall time (0 and 0 for an empty block).
    pub min_wall: i64,
    /// The largest wall time (0 for an empty block).
    pub max_wall: i64,
    /// Encoding the decoded events again gives back exactly this block: a block of
    /// the form the writer writes (never 0x03, which 1.1 writers no longer write),
    /// every varint minimal, CPU modes and annotations as the encoder writes them.
    pub canonical: bool,
}

/// Decodes a block payload exactly as [`crate::binary::decode_block`] does (the same
/// events, the same errors), and also says whether the payload is canonical.
pub fn decode_block_canonical(
    payload: &[u8],
    form: Form,
    loc_count: usize,
    mut f: impl FnMut(Event),
) -> Result<BlockFacts, DecodeError> {
    if form.per_location() {
        return decode_per_location_canonical(payload, form, loc_count, f);
    }
    let mut cur = Cursor::new(payload);
    let c = &mut cur;
    let (block_loc, count) = block_prefix(c, form, loc_count)?;
    let mut canonical =
        form == Form::Single && c.pos == block_loc.map_or(0, |l| vlen(l as u64)) + vlen(count);
    let mut wall: i64 = 0;
    let mut cpu: i64 = 0;
    let (mut lo, mut hi) = (0i64, 0i64);
    for i in 0..count {
        let start = c.pos;
        let h = c.u8().want(c, "an event")?;
        let code = h & head::KIND_MASK;
        let loc = match block_loc {
            Some(l) => l,
            None => {
                let at = c.pos;
                let l = u32_of(c, "the event's location")?;
                if l as usize >= loc_count {
                    return Err(DecodeError {
                        offset: at,
                        message: format!("event names location {l}, but {loc_count} locations are defined"),
                    });
                }
                l
            }
        };
        let dw = c.i64().want(c, "a wall-time delta")?;
        wall = wall.wrapping_add(dw);
        let prev_cpu = cpu;
        let ev_cpu = event_cpu(c, h, dw, &mut cpu)?;
        let kind = decode_kind(c, code, start)?;
        let mut ev = Event { loc, wall, cpu: ev_cpu, kind, ann: Annotations::default() };
        if h & head::ANNOTATED != 0 {
            canonical &= decode_annotations_ordered(c, &mut ev, &mut false)?;
        }
        if canonical {
            canonical = encoded_as_written(&ev, h, dw, prev_cpu, block_loc.is_none(), c.pos - start);
        }
        if i == 0 {
            (lo, hi) = (wall, wall);
        } else {
            lo = lo.min(wall);
            hi = hi.max(wall);
        }
        f(ev);
    }
    block_end(c, count)?;
    Ok(BlockFacts { form, loc: block_loc, count, min_wall: lo, max_wall: hi, canonical })
}

/// A compact or per-location (1.1) block: rarer (ordered traces passing through
/// spoor-align), checked by encoding the events again (a 1.1 block never is canonical:
/// the writer writes compact blocks).
fn decode_per_location_canonical(
    payload: &[u8],
    form: Form,
    loc_count: usize,
    f: impl FnMut(Event),
) -> Result<BlockFacts, DecodeError> {
    let mut events = Vec::new();
    let prefix = decode_block(payload, form, loc_count, |e| events.push(e))?;
    let canonical = form == Form::Compact && encode_block(&events, true).payload == payload;
    let lo = events.iter().map(|e| e.wall).min().unwrap_or(0);
    let hi = events.iter().map(|e| e.wall).max().unwrap_or(0);
    events.into_iter().for_each(f);
    Ok(BlockFacts { form, loc: None, count: prefix.count, min_wall: lo, max_wall: hi, canonical })
}

/// Checks that every decoder of blocks agrees with [`decode_block`] on `payload` as a
/// block of `form`: on whether it is refused, and on the events (the cursor that decodes
/// one at a time, the canonical check, the PAG builder's brief decoder); and that a
/// block found canonical encodes back to the same bytes. What differs, if anything.
/// For the fuzz target and the tests.
#[doc(hidden)]
pub fn decoders_agree(payload: &[u8], form: Form, loc_count: usize) -> Result<(), String> {
    let mut events = Vec::new();
    let full = decode_block(payload, form, loc_count, |e| events.push(e));
    let check = |what: &str, ok: bool, got: &[Event]| -> Result<(), String> {
        if ok != full.is_ok() {
            return Err(format!(
                "{what} {} what decode_block {} ({form:?})",
                ok_word(ok),
                ok_word(full.is_ok())
            ));
        }
        // Events hold floats (a metric's value may be NaN): compared as they print.
        if ok && format!("{got:?}") != format!("{events:?}") {
            return Err(format!("{what} gives other events than decode_block ({form:?})"));
        }
        Ok(())
    };
    let mut briefs = Vec::new();
    let brief_ok = crate::brief::decode_block_brief(payload, form, loc_count, &mut briefs);
    check("the brief decoder", brief_ok, &events)?;
    if brief_ok && briefs != events.iter().map(crate::brief::Brief::of).collect::<Vec<_>>() {
        return Err(format!("the brief decoder gives other briefs ({form:?})"));
    }
    let mut by_cursor = Vec::new();
    let cursor = BlockCursor::new(payload.to_vec(), form, loc_count).and_then(|mut c| {
        while let Some(e) = c.next_event()? {
            by_cursor.push(e);
        }
        Ok(())
    });
    check("the cursor", cursor.is_ok(), &by_cursor)?;
    let mut by_check = Vec::new();
    let facts = decode_block_canonical(payload, form, loc_count, |e| by_check.push(e));
    check("the canonical check", facts.is_ok(), &by_check)?;
    if let Some(f) = facts.ok().filter(|f| f.canonical) {
        // Encoded as the block it is (an empty block names its location too).
        let mut enc = BlockEncoder::default();
        for e in &by_check {
            enc.push(e, form.multi());
        }
        if enc.take_block(f.loc).payload != payload {
            return Err(format!("a canonical {form:?} block encodes to other bytes"));
        }
    }
    Ok(())
}

fn ok_word(ok: bool) -> &'static str {
    if ok {
        "reads"
    } else {
        "refuses"
    }
}

/// Whether `ev`, read with head `h` from `len` bytes after a wall delta `dw` and a CPU
/// time `prev_cpu`, has the head and length the encoder would write (`with_loc`: the
/// event names its location).
#[inline]
fn encoded_as_written(ev: &Event, h: u8, dw: i64, prev_cpu: i64, with_loc: bool, len: usize) -> bool {
    let code = h & head::KIND_MASK;
    let (cmode, dc) = cpu_mode(ev.cpu, prev_cpu, dw);
    let annotated = !ev.ann.is_empty();
    let chead = code | (cmode << head::CPU_SHIFT) | if annotated { head::ANNOTATED } else { 0 };
    let mut want = 1 + vlen(zigzag(dw)) + kind_len(&ev.kind);
    if with_loc {
        want += vlen(ev.loc as u64);
    }
    if cmode == head::CPU_DELTA {
        want += vlen(zigzag(dc));
    }
    if annotated {
        want += annotations_len(ev);
    }
    chead == h && want == len
}

/// A block decoded one event at a time: the payload is kept as it is and each event is
/// decoded when asked for, so that a program holding many blocks at once (one per
/// location, replaying them in an order of its own) holds their bytes, not their events.
/// Gives the events and errors of [`crate::binary::decode_block`].
#[derive(Clone)]
pub struct BlockCursor {
    payload: Vec<u8>,
    pos: usize,
    count: u64,
    left: u64,
    wall: i64,
    cpu: i64,
    loc: Option<LocId>,
    loc_count: usize,
    /// Each location's state in a per-location or compact block.
    local: Option<Box<PerLocation>>,
    /// A compact block's previous event (`None`: another form).
    compact: Option<CompactRun>,
}

impl BlockCursor {
    /// Reads the block's prefix (location, event count).
    pub fn new(payload: Vec<u8>, form: Form, loc_count: usize) -> Result<BlockCursor, DecodeError> {
        let mut c = Cursor::new(&payload);
        let (loc, count) = block_prefix(&mut c, form, loc_count)?;
        let pos = c.pos;
        let local = form.per_location().then(Box::default);
        let compact = (form == Form::Compact).then(CompactRun::default);
        let cur =
            BlockCursor { payload, pos, count, left: count, wall: 0, cpu: 0, loc, loc_count, local, compact };
        if count == 0 {
            cur.check_end()?;
        }
        Ok(cur)
    }

    /// The location of a single-location block.
    pub fn loc(&self) -> Option<LocId> {
        self.loc
    }

    /// Events not yet decoded.
    pub fn remaining(&self) -> u64 {
        self.left
    }

    fn check_end(&self) -> Result<(), DecodeError> {
        block_end(&Cursor { buf: &self.payload, pos: self.pos }, self.count)
    }

    /// The next event; `None` after the last.
    pub fn next_event(&mut self) -> Result<Option<Event>, DecodeError> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut cur = Cursor { buf: &self.payload, pos: self.pos };
        let c = &mut cur;
        if let (Some(run), Some(st)) = (&mut self.compact, &mut self.local) {
            let ev = compact_event(c, self.loc_count, run, st)?;
            self.pos = c.pos;
            return self.counted(ev);
        }
        let start = c.pos;
        let h = c.u8().want(c, "an event")?;
        let code = h & head::KIND_MASK;
        let loc = match self.loc {
            Some(l) => l,
            None => {
                let at = c.pos;
                let l = u32_of(c, "the event's location")?;
                if l as usize >= self.loc_count {
                    return Err(DecodeError {
                        offset: at,
                        message: format!(
                            "event names location {l}, but {} locations are defined",
                            self.loc_count
                        ),
                    });
                }
                l
            }
        };
        let dw = c.i64().want(c, "a wall-time delta")?;
        let wall = self.wall.wrapping_add(dw);
        let mut slot = self.local.as_mut().map(|st| *st.slot(loc));
        let mut cpu = slot.map_or(self.cpu, |s| s.cpu);
        let ev_cpu = event_cpu(c, h, dw, &mut cpu)?;
        let kind = decode_kind(c, code, start)?;
        let mut ev = Event { loc, wall, cpu: ev_cpu, kind, ann: Annotations::default() };
        let mut no_lamport = false;
        if h & head::ANNOTATED != 0 {
            decode_annotations_ordered(c, &mut ev, &mut no_lamport)?;
        }
        if let Some(s) = &mut slot {
            if ev.ann.lamport.is_none() && !no_lamport {
                ev.ann.lamport = implied_lamport(s.lamport);
            }
            s.lamport = ev.ann.lamport;
            s.cpu = cpu;
        }
        self.pos = c.pos;
        self.wall = wall;
        match (slot, &mut self.local) {
            (Some(s), Some(st)) => *st.slot(loc) = s,
            _ => self.cpu = cpu,
        }
        self.counted(ev)
    }

    /// `ev`, the next event, once counted (the block must end after its last).
    fn counted(&mut self, ev: Event) -> Result<Option<Event>, DecodeError> {
        self.left -= 1;
        if self.left == 0 {
            self.check_end()?;
        }
        Ok(Some(ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> Vec<Event> {
        let mut v = vec![
            Event::new(3, 100, Some(50), Kind::Enter { proc: 2 }),
            Event::new(3, 90, Some(40), Kind::Send { to: 1, comm: 0, tag: 7, bytes: 1 << 20 }),
            Event::new(3, 200, Some(140), Kind::RecvBegin { from: None, comm: 0, tag: Some(3) }),
            Event::new(3, 200, Some(140), Kind::Metric { metric: 0, value: f64::NAN }),
            Event::new(
                3,
                300,
                None,
                Kind::CollEnd { op: CollOp::Bcast, comm: 0, root: Some(0), sent: 0, received: 9 },
            ),
            Event::new(3, 1 << 40, Some(1 << 41), Kind::ClockOffset { reference: 0, offset: -5, error: 3 }),
        ];
        v[1].ann.partner = Some(EventRef { loc: 1, index: 200 });
        v[1].ann.lamport = Some(7);
        v[2].ann.raw_wall = Some(-3);
        v
    }

    #[test]
    fn encoded_blocks_decode_canonical() {
        for multi in [false, true] {
            let evs = events();
            let b = encode_block(&evs, multi);
            assert_eq!(b, encode_block_as(&evs, if multi { Form::Compact } else { Form::Single }));
            let form = if multi { Form::Compact } else { Form::Single };
            let mut got = Vec::new();
            let facts = decode_block_canonical(&b.payload, form, 4, |e| got.push(e)).unwrap();
            assert!(facts.canonical);
            assert_eq!((facts.count, facts.min_wall, facts.max_wall), (6, 90, 1 << 40));
            assert_eq!((b.count, b.min_wall, b.max_wall), (6, 90, 1 << 40));
            let mut plain = Vec::new();
            decode_block(&b.payload, form, 4, |e| plain.push(e)).unwrap();
            assert_eq!(format!("{got:?}"), format!("{plain:?}"));
            assert_eq!(format!("{plain:?}"), format!("{evs:?}"));
        }
    }

    #[test]
    fn blocks_of_the_older_multi_location_form_decode_but_are_not_copied() {
        // 0x03: two events of locations 1 and 0; CPU deltas run across locations.
        // Enter 1 at wall 10, CPU 5 (mode 2, delta 5); enter 2 at wall 12, CPU 5 (mode 3).
        let payload = [2u8, 4 | (2 << 5), 1, 20, 10, 1, 4 | (3 << 5), 0, 4, 2];
        let mut got = Vec::new();
        let facts = decode_block_canonical(&payload, Form::Multi, 2, |e| got.push(e)).unwrap();
        assert!(!facts.canonical);
        assert_eq!((got[0].loc, got[0].wall, got[0].cpu), (1, 10, Some(5)));
        assert_eq!((got[1].loc, got[1].wall, got[1].cpu), (0, 12, Some(5)));
        // The same bytes as a per-location block: location 0 starts from CPU 0.
        let mut local = Vec::new();
        decode_block(&payload, Form::Local, 2, |e| local.push(e)).unwrap();
        assert_eq!(local[1].cpu, Some(0));
    }

    #[test]
    fn overlong_varints_and_odd_annotations_are_not_canonical() {
        // Location 0, one event: enter (head 4, CPU unknown), wall delta 2, procedure 1.
        let good = [0u8, 1, 4, 4, 1];
        assert!(decode_block_canonical(&good, Form::Single, 1, |_| {}).unwrap().canonical);
        // The same procedure id as a two-byte varint.
        let long = [0u8, 1, 4, 4, 0x81, 0];
        let f = decode_block_canonical(&long, Form::Single, 1, |_| {}).unwrap();
        assert!(!f.canonical);
        // CPU mode 2 with a zero delta (the encoder writes mode 3).
        let mode = [0u8, 1, 4 | (2 << 5), 4, 0, 1];
        assert!(!decode_block_canonical(&mode, Form::Single, 1, |_| {}).unwrap().canonical);
        // Annotations: Lamport before partner.
        let mut ev = Event::new(0, 2, None, Kind::Enter { proc: 1 });
        ev.ann.partner = Some(EventRef { loc: 0, index: 1 });
        ev.ann.lamport = Some(5);
        let b = encode_block(&[ev], false);
        assert!(decode_block_canonical(&b.payload, Form::Single, 1, |_| {}).unwrap().canonical);
        let mut swapped = vec![0u8, 1, 4 | 0x80, 4, 1, 2];
        swapped.extend([ann::LAMPORT as u8, 1, 5, ann::PARTNER as u8, 2, 0, 1]);
        let f = decode_block_canonical(&swapped, Form::Single, 1, |_| {}).unwrap();
        assert!(!f.canonical);
        // An unknown annotation tag.
        let mut unknown = vec![0u8, 1, 4 | 0x80, 4, 1, 1];
        unknown.extend([9u8, 1, 0]);
        assert!(!decode_block_canonical(&unknown, Form::Single, 1, |_| {}).unwrap().canonical);
    }

    #[test]
    fn blocks_of_the_per_location_form_of_1_1_decode_but_are_not_copied() {
        let evs = events();
        let b = encode_block_as(&evs, Form::Local);
        let mut got = Vec::new();
        let facts = decode_block_canonical(&b.payload, Form::Local, 4, |e| got.push(e)).unwrap();
        assert!(!facts.canonical);
        assert_eq!(format!("{got:?}"), format!("{evs:?}"));
    }

    #[test]
    fn a_cursor_gives_the_events_of_decode_block() {
        for form in [Form::Single, Form::Local, Form::Compact] {
            let b = encode_block_as(&events(), form);
            let mut plain = Vec::new();
            decode_block(&b.payload, form, 4, |e| plain.push(e)).unwrap();
            let mut cur = BlockCursor::new(b.payload.clone(), form, 4).unwrap();
            assert_eq!(cur.remaining(), 6);
            let mut got = Vec::new();
            while let Some(e) = cur.next_event().unwrap() {
                got.push(e);
            }
            assert_eq!(format!("{got:?}"), format!("{plain:?}"));
        }
        // Trailing bytes are an error once the last event is read.
        let mut cur = BlockCursor::new(vec![0u8, 1, 4, 4, 1, 0], Form::Single, 1).unwrap();
        assert!(cur.next_event().is_err());
    }

    #[test]
    fn errors_are_those_of_decode_block() {
        for bad in [&[0u8, 5, 4][..], &[9u8, 1, 4, 4, 1][..], &[0u8, 1, 31, 4][..], &[0u8, 1, 4, 4, 1, 0][..]]
        {
            let a = decode_block(bad, Form::Single, 1, |_| {}).err();
            let b = decode_block_canonical(bad, Form::Single, 1, |_| {}).err();
            assert_eq!(a, b);
            assert!(a.is_some());
        }
    }
}
