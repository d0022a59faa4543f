//! A fast decoder for consumers that need only a few fields of each event (the PAG
//! builder): it fills compact [`Brief`]s straight from a block's bytes, without making
//! an [`Event`] or keeping ids it does not need.
//!
//! It refuses exactly the blocks [`crate::binary::decode_block`] refuses, but says
//! nothing about why: when it answers `false`, the caller decodes the block with
//! `decode_block` to name the problem. When it answers `true`, its briefs are exactly
//! `Brief::of` of the events `decode_block` gives (both property-tested below).
//!
//! Speed: an event that starts 128 bytes or more before its block's end is read without
//! a bounds check on every varint (its fixed part and each annotation of interest take
//! fewer), the position kept in a register; the last events of a block take the checked
//! path.

use crate::binary::{ann, compact, head, kind, partner_side, with_per_location, Form, PerLocation, Slot};
use crate::varint::{from_word, unzigzag, Cursor};
use spoor_model::{Event, EventRef, Kind, KIND_COUNT};

/// `Brief::cpu` of an event without CPU time.
pub const NO_CPU: i64 = i64::MIN;
/// `Brief::partner_loc` of an event without partner.
pub const NO_PARTNER: u32 = u32::MAX;
/// The largest collective operation code (formats/trace.md).
const LAST_COLL_OP: u8 = 14;

/// An event reduced to what a graph needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Brief {
    /// The event's location.
    pub loc: u32,
    /// Kind code (`Kind::code`).
    pub code: u8,
    /// Collective operation code; 1 when a process or thread begin has a parent, or a
    /// receive (its begin or request) takes any source.
    pub sub: u8,
    /// Procedure (enter, leave), phase name (phase begin, end), communicator
    /// (collectives).
    pub a: u32,
    /// Wall time, ns.
    pub wall: i64,
    /// `NO_CPU` when unknown.
    pub cpu: i64,
    /// Message bytes; root location + 1 of a collective end (0: none); the size of a
    /// clock-offset sample's offset, ns.
    pub bytes: u64,
    /// `NO_PARTNER` when none (always for a collective end: the graph needs none).
    pub partner_loc: u32,
    /// The partner's index among its location's events; of a collective end, its
    /// bytes (the more of what it sent and received).
    pub partner_idx: u64,
}

impl Brief {
    /// The brief of a decoded event.
    pub fn of(e: &Event) -> Brief {
        Brief::of_parts(e.loc, e.wall, e.cpu, &e.kind, e.ann.partner)
    }

    /// The brief of an event given by its parts (an ordering that hands its events on
    /// without building them whole).
    #[inline]
    pub fn of_parts(loc: u32, wall: i64, cpu: Option<i64>, kind: &Kind, partner: Option<EventRef>) -> Brief {
        let (mut a, mut bytes, mut sub, mut coll_bytes) = (0u32, 0u64, 0u8, None);
        match kind {
            Kind::Enter { proc } | Kind::Leave { proc } => a = *proc,
            Kind::Send { bytes: b, .. } | Kind::Isend { bytes: b, .. } => bytes = *b,
            Kind::RecvEnd { bytes: b, .. } | Kind::IrecvComplete { bytes: b, .. } => bytes = *b,
            Kind::CollBegin { op, comm } => {
                a = *comm;
                sub = op.code();
            }
            Kind::CollEnd { op, comm, root, sent, received } => {
                a = *comm;
                sub = op.code();
                bytes = root.map_or(0, |r| r as u64 + 1);
                coll_bytes = Some((*sent).max(*received));
            }
            Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => sub = parent.is_some() as u8,
            Kind::PhaseBegin { name } | Kind::PhaseEnd { name } => a = *name,
            Kind::ClockOffset { offset, .. } => bytes = offset.unsigned_abs(),
            Kind::RecvBegin { from, .. } | Kind::IrecvRequest { from, .. } => sub = from.is_none() as u8,
            _ => {}
        }
        let (partner_loc, partner_idx) = match (coll_bytes, partner) {
            (Some(b), _) => (NO_PARTNER, b),
            (None, Some(p)) => (p.loc, p.index),
            (None, None) => (NO_PARTNER, 0),
        };
        Brief {
            loc,
            code: kind.code(),
            sub,
            a,
            wall,
            cpu: cpu.unwrap_or(NO_CPU),
            bytes,
            partner_loc,
            partner_idx,
        }
    }
}

/// Appends the briefs of a block payload's events to `out`; `false` (with `out` in any
/// state) when `decode_block` has to look at the block. `form` and `loc_count` as for
/// `decode_block`.
pub fn decode_block_brief(payload: &[u8], form: Form, loc_count: usize, out: &mut Vec<Brief>) -> bool {
    // One loop for each form, so that the form is not asked again at every event.
    match form {
        Form::Local => with_per_location(|st| decode::<LOCAL>(payload, loc_count, out, st).is_some()),
        Form::Compact => with_per_location(|st| decode::<COMPACT>(payload, loc_count, out, st).is_some()),
        Form::Multi => decode::<MULTI>(payload, loc_count, out, &mut PerLocation::default()).is_some(),
        Form::Single => decode::<SINGLE>(payload, loc_count, out, &mut PerLocation::default()).is_some(),
    }
}

// The `FORM` of `decode`.
const SINGLE: u8 = 0;
const MULTI: u8 = 1;
const LOCAL: u8 = 2;
const COMPACT: u8 = 3;

/// Where this many bytes remain from the start of an event's fixed part (head,
/// location, times and payload: at most 81 bytes, then the annotation count) or of an
/// annotation (tag, length and a partner's body: at most 40), that part is read
/// without a bounds check on every varint: with its eight-byte words it reads fewer.
const SLACK: usize = 128;

/// A position in a payload, read with (`FAST == false`) or, within `SLACK` bytes of a
/// position checked by `has_slack`, without bounds checks.
struct Rd<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Rd<'_> {
    #[inline(always)]
    fn has_slack(&self) -> bool {
        self.buf.len() - self.pos >= SLACK
    }

    #[inline(always)]
    fn u64<const FAST: bool>(&mut self) -> Option<u64> {
        if !FAST {
            return self.u64_checked();
        }
        // SAFETY: `has_slack` held where the event (or the annotation) began, and what
        // was read since leaves these eight bytes inside the payload (see `SLACK`).
        let word = u64::from_le(unsafe { self.buf.as_ptr().add(self.pos).cast::<u64>().read_unaligned() });
        if word & 0x80 == 0 {
            self.pos += 1;
            return Some(word & 0x7f);
        }
        if word & 0x8000 == 0 {
            self.pos += 2;
            return Some(word & 0x7f | (word >> 1) & 0x3f80);
        }
        match from_word(word) {
            Some((x, len)) => {
                self.pos += len;
                Some(x)
            }
            None => self.u64_checked(),
        }
    }

    /// The cursor's reading, bounds checked: near a block's end, and nine- or ten-byte
    /// varints.
    #[inline(always)]
    fn u64_checked(&mut self) -> Option<u64> {
        let mut c = Cursor { buf: self.buf, pos: self.pos };
        let v = c.u64().ok()?;
        self.pos = c.pos;
        Some(v)
    }

    #[inline(always)]
    fn i64<const FAST: bool>(&mut self) -> Option<i64> {
        self.u64::<FAST>().map(unzigzag)
    }

    #[inline(always)]
    fn u32<const FAST: bool>(&mut self) -> Option<u32> {
        u32::try_from(self.u64::<FAST>()?).ok()
    }

    /// An `opt` location or tag: whether it is present.
    #[inline(always)]
    fn opt_u32<const FAST: bool>(&mut self) -> Option<bool> {
        match self.u64::<FAST>()? {
            0 => Some(false),
            v if v - 1 <= u32::MAX as u64 => Some(true),
            _ => None,
        }
    }

    #[inline(always)]
    fn u8<const FAST: bool>(&mut self) -> Option<u8> {
        let b = if FAST {
            // SAFETY: as for `u64`.
            unsafe { *self.buf.get_unchecked(self.pos) }
        } else {
            *self.buf.get(self.pos)?
        };
        self.pos += 1;
        Some(b)
    }
}

/// What runs from one event to the next within a block.
struct Running {
    wall: i64,
    cpu: i64,
    /// The previous event's location (compact blocks).
    loc: u32,
}

fn decode<const FORM: u8>(
    payload: &[u8],
    loc_count: usize,
    out: &mut Vec<Brief>,
    st: &mut PerLocation,
) -> Option<()> {
    let r = &mut Rd { buf: payload, pos: 0 };
    let block_loc = if FORM != SINGLE {
        None
    } else {
        let l = r.u32::<false>()?;
        if l as usize >= loc_count {
            return None;
        }
        Some(l)
    };
    let count = r.u64::<false>()?;
    if count > ((payload.len() - r.pos) / 2) as u64 {
        return None;
    }
    out.reserve(count as usize);
    let run = &mut Running { wall: 0, cpu: 0, loc: 0 };
    // Room for every brief is reserved above: they are written without asking again.
    let mut at = out.len();
    for _ in 0..count {
        let brief = if r.has_slack() {
            event::<FORM, true>(r, block_loc, loc_count, run, st)?
        } else {
            event::<FORM, false>(r, block_loc, loc_count, run, st)?
        };
        // SAFETY: `at` < out.len() + count <= the capacity reserved above; the length is
        // set to cover the written briefs before anyone can read them.
        unsafe {
            out.as_mut_ptr().add(at).write(brief);
            at += 1;
            out.set_len(at);
        }
    }
    (r.pos == payload.len()).then_some(())
}

/// One event's brief; `FAST` when `has_slack` held at its start.
// Left whole (over 100 lines): the PAG builder's hottest decoder, tuned as one body with
// the read position in a register; splitting it is only worth it with a benchmark showing no loss.
#[inline(always)]
fn event<const FORM: u8, const FAST: bool>(
    r: &mut Rd,
    block_loc: Option<u32>,
    loc_count: usize,
    run: &mut Running,
    st: &mut PerLocation,
) -> Option<Brief> {
    let h = r.u8::<FAST>()?;
    let code = h & head::KIND_MASK;
    if code >= KIND_COUNT {
        return None;
    }
    let loc = match block_loc {
        Some(l) => l,
        None if FORM == COMPACT => {
            let l = (run.loc as i64).wrapping_add(r.i64::<FAST>()?);
            if l < 0 || l as u64 >= loc_count as u64 {
                return None;
            }
            run.loc = l as u32;
            l as u32
        }
        None => {
            let l = r.u32::<FAST>()?;
            if l as usize >= loc_count {
                return None;
            }
            l
        }
    };
    let mut dw = r.i64::<FAST>()?;
    run.wall = run.wall.wrapping_add(dw);
    let mut slot = if FORM == COMPACT || FORM == LOCAL { Some(st.slot(loc)) } else { None };
    if let (Some(s), COMPACT) = (&mut slot, FORM) {
        // CPU time advances with the location's own wall time.
        dw = run.wall.wrapping_sub(s.wall);
        s.wall = run.wall;
    }
    let mode = (h >> head::CPU_SHIFT) & 3;
    let ev_cpu = if mode == head::CPU_NONE {
        NO_CPU
    } else {
        let cpu = match &mut slot {
            Some(s) => &mut s.cpu,
            None => &mut run.cpu,
        };
        match mode {
            head::CPU_SAME_AS_WALL => *cpu = cpu.wrapping_add(dw),
            head::CPU_DELTA => *cpu = cpu.wrapping_add(r.i64::<FAST>()?),
            _ => {}
        }
        *cpu
    };
    let (mut a, mut bytes, mut sub, mut coll_bytes) = (0u32, 0u64, 0u8, 0u64);
    // Where a compact block implies the partner to be: the other side of a message.
    let mut peer = loc;
    match code {
        kind::PROCESS_BEGIN | kind::THREAD_BEGIN => sub = r.opt_u32::<FAST>()? as u8,
        kind::PROCESS_END | kind::THREAD_END => {}
        kind::ENTER | kind::LEAVE | kind::PHASE_BEGIN | kind::PHASE_END => a = r.u32::<FAST>()?,
        kind::SEND | kind::RECV_END => {
            peer = r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            bytes = r.u64::<FAST>()?;
        }
        kind::RECV_BEGIN => {
            sub = (!r.opt_u32::<FAST>()?) as u8;
            r.u32::<FAST>()?;
            r.opt_u32::<FAST>()?;
        }
        kind::ISEND => {
            peer = r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            bytes = r.u64::<FAST>()?;
            r.u64::<FAST>()?;
        }
        kind::ISEND_COMPLETE | kind::LOCK_REQUEST | kind::LOCK_ACQUIRE | kind::LOCK_RELEASE => {
            r.u64::<FAST>()?;
        }
        kind::IRECV_REQUEST => {
            sub = (!r.opt_u32::<FAST>()?) as u8;
            r.u32::<FAST>()?;
            r.opt_u32::<FAST>()?;
            r.u64::<FAST>()?;
        }
        kind::IRECV_COMPLETE => {
            r.u64::<FAST>()?;
            peer = r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            r.u32::<FAST>()?;
            bytes = r.u64::<FAST>()?;
        }
        kind::COLL_BEGIN | kind::COLL_END => {
            sub = r.u8::<FAST>()?;
            if sub > LAST_COLL_OP {
                return None;
            }
            a = r.u32::<FAST>()?;
            if code == kind::COLL_END {
                let root = r.u64::<FAST>()?;
                if root > u32::MAX as u64 + 1 {
                    return None;
                }
                bytes = root;
                coll_bytes = r.u64::<FAST>()?.max(r.u64::<FAST>()?);
            }
        }
        kind::METRIC => {
            r.u32::<FAST>()?;
            if r.buf.len() - r.pos < 8 {
                return None;
            }
            r.pos += 8;
        }
        _ => {
            // kind::CLOCK_OFFSET, the last code
            r.u32::<FAST>()?;
            bytes = r.i64::<FAST>()?.unsigned_abs();
            r.u64::<FAST>()?;
        }
    }
    let (mut partner_loc, mut partner_idx) = (NO_PARTNER, 0);
    if let (Some(s), COMPACT, true) = (slot, FORM, h & head::ANNOTATED != 0) {
        // The fixed part may have used up the slack: asked again.
        let p = if r.has_slack() {
            compact_annotations::<true>(r, s, loc, peer)?
        } else {
            compact_annotations::<false>(r, s, loc, peer)?
        };
        if let Some(p) = p {
            (partner_loc, partner_idx) = p;
        }
    } else if h & head::ANNOTATED != 0 {
        let n = r.u64::<FAST>()?;
        if n > (r.buf.len() - r.pos) as u64 {
            return None;
        }
        for _ in 0..n {
            let partner = if r.has_slack() { annotation::<true>(r)? } else { annotation::<false>(r)? };
            if let Some(p) = partner {
                (partner_loc, partner_idx) = p;
            }
        }
    }
    if code == kind::COLL_END {
        (partner_loc, partner_idx) = (NO_PARTNER, coll_bytes);
    }
    Some(Brief { loc, code, sub, a, wall: run.wall, cpu: ev_cpu, bytes, partner_loc, partner_idx })
}

/// Reads the annotations of an event of a compact block of location `loc`, whose
/// implied partner location is `peer`: the partner they name, if any.
#[inline(always)]
fn compact_annotations<const FAST: bool>(
    r: &mut Rd,
    slot: &mut Slot,
    loc: u32,
    peer: u32,
) -> Option<Option<(u32, u64)>> {
    let present = r.u64::<FAST>()?;
    if !compact::valid(present) {
        return None;
    }
    let mut partner = None;
    if present & (compact::PARTNER | compact::PARTNER_AT) != 0 {
        let at = if present & compact::PARTNER_AT != 0 { r.u32::<FAST>()? } else { peer };
        let side = partner_side(loc, at);
        let index = slot.partners[side].wrapping_add(r.i64::<FAST>()? as u64);
        slot.partners[side] = index;
        partner = Some((at, index));
    }
    // Not needed, but decode_block would refuse them damaged.
    if present & compact::LAMPORT != 0 {
        r.u64::<FAST>()?;
    }
    if present & compact::RAW_WALL != 0 {
        r.u64::<FAST>()?;
    }
    Some(partner)
}

/// Reads one annotation: the partner it names, if it is one. `FAST` when `has_slack`
/// held at its start.
#[inline(always)]
fn annotation<const FAST: bool>(r: &mut Rd) -> Option<Option<(u32, u64)>> {
    let tag = r.u64::<FAST>()?;
    let len = r.u64::<FAST>()?;
    if len > (r.buf.len() - r.pos) as u64 {
        return None;
    }
    // The body is read in place; a varint running past its end is damage, as it is
    // for decode_block.
    let end = r.pos + len as usize;
    let mut partner = None;
    match tag {
        ann::PARTNER => partner = Some((r.u32::<FAST>()?, r.u64::<FAST>()?)),
        // Not needed, but decode_block would refuse them damaged.
        ann::LAMPORT | ann::RAW_WALL => {
            r.u64::<FAST>()?;
        }
        _ => r.pos = end,
    }
    if r.pos > end {
        return None;
    }
    r.pos = end;
    Some(partner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{decode_block, implied_partner_loc};
    use proptest::prelude::*;
    use spoor_model::{Annotations, CollOp, EventRef};

    /// What `decode_block` makes of a payload, as briefs, or `None` if it refuses it.
    fn reference(payload: &[u8], form: Form, locs: usize) -> Option<Vec<Brief>> {
        let mut v = Vec::new();
        decode_block(payload, form, locs, |e| v.push(Brief::of(&e))).ok().map(|_| v)
    }

    fn kind_of(code: u8, x: u32, y: u64) -> Kind {
        let op = CollOp::from_code((x % 15) as u8).unwrap();
        let opt = (!x.is_multiple_of(3)).then_some(x);
        match code {
            kind::PROCESS_BEGIN => Kind::ProcessBegin { parent: opt },
            kind::PROCESS_END => Kind::ProcessEnd,
            kind::THREAD_BEGIN => Kind::ThreadBegin { parent: opt },
            kind::THREAD_END => Kind::ThreadEnd,
            kind::ENTER => Kind::Enter { proc: x },
            kind::LEAVE => Kind::Leave { proc: x },
            kind::SEND => Kind::Send { to: x, comm: x / 2, tag: x / 3, bytes: y },
            kind::RECV_BEGIN => Kind::RecvBegin { from: opt, comm: x, tag: opt },
            kind::RECV_END => Kind::RecvEnd { from: x, comm: x / 2, tag: x / 3, bytes: y },
            kind::ISEND => Kind::Isend { to: x, comm: 1, tag: 2, bytes: y, request: y / 7 },
            kind::ISEND_COMPLETE => Kind::IsendComplete { request: y },
            kind::IRECV_REQUEST => Kind::IrecvRequest { from: opt, comm: x, tag: None, request: y },
            kind::IRECV_COMPLETE => {
                Kind::IrecvComplete { request: y, from: x, comm: 0, tag: x, bytes: y / 3 }
            }
            kind::COLL_BEGIN => Kind::CollBegin { op, comm: x },
            kind::COLL_END => Kind::CollEnd { op, comm: x, root: opt, sent: y, received: y / 5 },
            kind::LOCK_REQUEST => Kind::LockRequest { lock: y },
            kind::LOCK_ACQUIRE => Kind::LockAcquire { lock: y },
            kind::LOCK_RELEASE => Kind::LockRelease { lock: y },
            kind::PHASE_BEGIN => Kind::PhaseBegin { name: x },
            kind::PHASE_END => Kind::PhaseEnd { name: x },
            kind::METRIC => Kind::Metric { metric: x, value: y as f64 / 3.0 },
            _ => Kind::ClockOffset { reference: x, offset: -(y as i64), error: y / 2 },
        }
    }

    fn event() -> impl Strategy<Value = Event> {
        (
            0u32..40,
            0u8..KIND_COUNT,
            any::<u32>(),
            any::<u64>(),
            -1_000_000i64..1_000_000,
            prop::option::of(-5i64..1_000_000),
            // A partner, where compact blocks imply it to be or not.
            prop::option::of((0u32..40, any::<u32>(), any::<bool>())),
            prop::option::of(any::<u32>()),
            prop::option::of(-100i64..100),
        )
            .prop_map(|(loc, code, x, y, wall, cpu, partner, lamport, raw)| {
                let kind = kind_of(code, x, y);
                let partner = partner.map(|(at, i, implied)| EventRef {
                    loc: if implied { implied_partner_loc(loc, &kind) } else { at },
                    index: i as u64,
                });
                Event {
                    loc,
                    wall,
                    cpu,
                    kind,
                    ann: Annotations {
                        partner,
                        lamport: lamport.map(u64::from),
                        raw_wall: raw.map(|r| wall + r),
                    },
                }
            })
    }

    const FORMS: [Form; 4] = [Form::Single, Form::Multi, Form::Local, Form::Compact];

    /// A block of `form` (`Multi` blocks in 1.1's layout: both decoders read the same
    /// bytes, whatever they mean).
    fn encode(events: &[Event], form: Form) -> Vec<u8> {
        crate::raw::encode_block_as(events, form).payload
    }

    proptest! {
        /// Whole blocks: the fast path takes them and agrees with decode_block.
        #[test]
        fn briefs_of_whole_blocks_are_those_of_decode_block(
            mut events in prop::collection::vec(event(), 0..60),
            form in prop::sample::select(FORMS.to_vec()),
        ) {
            if !form.multi() {
                let l = events.first().map_or(0, |e| e.loc);
                events.iter_mut().for_each(|e| e.loc = l);
            }
            let payload = encode(&events, form);
            let mut got = Vec::new();
            prop_assert!(decode_block_brief(&payload, form, 40, &mut got));
            prop_assert_eq!(Some(got), reference(&payload, form, 40));
        }

        /// Damaged blocks (bytes changed, cut, or naming locations that are not
        /// defined): the fast path refuses exactly what decode_block refuses, and
        /// agrees with it on the rest.
        #[test]
        fn briefs_of_damaged_blocks_never_differ_from_decode_block(
            events in prop::collection::vec(event(), 1..30),
            form in prop::sample::select(FORMS.to_vec()),
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            locs in 1usize..45,
        ) {
            let mut payload = encode(&events, form);
            for (at, b) in edits {
                let i = at.index(payload.len());
                payload[i] = b;
            }
            let keep = if cut.index(4) == 0 { cut.index(payload.len() + 1) } else { payload.len() };
            payload.truncate(keep);
            let mut got = Vec::new();
            let ok = decode_block_brief(&payload, form, locs, &mut got);
            let want = reference(&payload, form, locs);
            prop_assert_eq!(ok, want.is_some());
            if ok {
                prop_assert_eq!(Some(got), want);
            }
        }
    }

    #[test]
    fn long_varints_and_damage_far_from_the_end_agree_with_decode_block() {
        // Events far from the block's end are read without bounds checks: ten-byte
        // varints (sizes of u64::MAX), then every single-byte change to the first
        // events, must still read as decode_block reads them.
        let events: Vec<Event> = (0..64u32)
            .map(|i| Event {
                loc: i % 7,
                wall: i as i64 * 1_000_003,
                cpu: Some(i as i64 * 999),
                kind: kind_of((i % 22) as u8, i * 977, u64::MAX - i as u64),
                ann: Annotations {
                    partner: Some(EventRef { loc: i % 5, index: u64::MAX >> (i % 60) }),
                    lamport: Some(i as u64 + 1),
                    raw_wall: None,
                },
            })
            .collect();
        for form in [Form::Local, Form::Compact] {
            let payload = encode(&events, form);
            let mut got = Vec::new();
            assert!(decode_block_brief(&payload, form, 8, &mut got));
            assert_eq!(Some(got), reference(&payload, form, 8));
            for at in 0..96.min(payload.len()) {
                for b in [0x00, 0x7f, 0x80, 0xff] {
                    let mut damaged = payload.clone();
                    damaged[at] = b;
                    let mut got = Vec::new();
                    let ok = decode_block_brief(&damaged, form, 8, &mut got);
                    let want = reference(&damaged, form, 8);
                    assert_eq!(ok, want.is_some(), "{form:?}: byte {at} set to {b:#x}");
                    if ok {
                        assert_eq!(Some(got), want, "{form:?}: byte {at} set to {b:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_counts_and_unknown_kinds_are_left_to_decode_block() {
        let mut out = Vec::new();
        // 2^40 events declared in four bytes.
        assert!(!decode_block_brief(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20], Form::Multi, 4, &mut out));
        // Kind code 22 is not defined in 1.0.
        assert!(!decode_block_brief(&[1, 22, 0, 0], Form::Multi, 4, &mut out));
        assert!(reference(&[1, 22, 0, 0], Form::Multi, 4).is_none());
        // Location 5 of 4.
        assert!(!decode_block_brief(&[1, 1, 5, 0], Form::Multi, 4, &mut out));
        // Trailing bytes after the last event.
        assert!(!decode_block_brief(&[1, 1, 0, 0, 7], Form::Multi, 4, &mut out));
    }

    #[test]
    fn annotation_bodies_are_read_to_their_length() {
        // One process_end at location 0 with a partner annotation: count 1, tag 1,
        // length, then the partner's location 2 and index 300 (two bytes).
        let block = |len: u8, extra: &[u8]| {
            let mut b = vec![1, 1 | head::ANNOTATED, 0, 0, 1, 1, len, 2, 0xac, 0x02];
            b.extend_from_slice(extra);
            b
        };
        let mut out = Vec::new();
        let exact = block(3, &[]);
        assert!(decode_block_brief(&exact, Form::Multi, 4, &mut out));
        assert_eq!((out[0].partner_loc, out[0].partner_idx), (2, 300));
        // A body longer than its varints: the rest is skipped by both decoders.
        let longer = block(4, &[9]);
        out.clear();
        assert!(decode_block_brief(&longer, Form::Multi, 4, &mut out));
        assert_eq!(Some(out), reference(&longer, Form::Multi, 4));
        // The index runs past a body one byte too short: damage for both.
        let short = block(2, &[]);
        assert!(!decode_block_brief(&short, Form::Multi, 4, &mut Vec::new()));
        assert!(reference(&short, Form::Multi, 4).is_none());
    }
}
