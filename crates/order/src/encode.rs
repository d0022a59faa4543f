//! spoor-order's output blocks encoded straight from the replay's compact events,
//! without making an [`Event`](spoor_model::Event) of each: byte for byte what
//! `spoor_format::raw::encode_block` writes for the same events in a multi-location
//! block (formats/trace.md; the tests compare the two on random events).

use spoor_format::binary::{ann, head};
use spoor_format::raw::EncodedBlock;
use spoor_format::varint::{put_i64, put_u64};
use spoor_model::{EventRef, Kind, LocId};

/// A multi-location block being encoded: the payload is written in place, starting
/// with the event count it was told to expect.
#[derive(Default)]
pub(crate) struct MultiBlock {
    buf: Vec<u8>,
    /// The count written at the start of `buf`, and its length.
    declared: u64,
    prefix: usize,
    count: u64,
    min_wall: i64,
    max_wall: i64,
    prev_wall: i64,
    prev_cpu: i64,
}

/// One output event: the input's fields the output keeps, and what spoor-order adds.
pub(crate) struct OutEvent<'a> {
    pub loc: LocId,
    pub wall: i64,
    pub cpu: Option<i64>,
    pub kind: &'a Kind,
    pub partner: Option<EventRef>,
    pub lamport: u64,
    pub raw_wall: Option<i64>,
}

#[inline(always)]
fn put_opt(b: &mut Vec<u8>, v: Option<u32>) {
    put_u64(b, v.map_or(0, |v| v as u64 + 1));
}

/// The bytes of `v` as a varint.
#[inline(always)]
fn vlen(v: u64) -> u64 {
    (64 - (v | 1).leading_zeros() as u64).div_ceil(7)
}

fn put_kind(b: &mut Vec<u8>, k: &Kind) {
    match *k {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => put_opt(b, parent),
        Kind::ProcessEnd | Kind::ThreadEnd => {}
        Kind::Enter { proc: id } | Kind::Leave { proc: id } => put_u64(b, id as u64),
        Kind::PhaseBegin { name: id } | Kind::PhaseEnd { name: id } => put_u64(b, id as u64),
        Kind::Send { to, comm, tag, bytes } => {
            for v in [to as u64, comm as u64, tag as u64, bytes] {
                put_u64(b, v);
            }
        }
        Kind::RecvBegin { from, comm, tag } => {
            put_opt(b, from);
            put_u64(b, comm as u64);
            put_opt(b, tag);
        }
        Kind::RecvEnd { from, comm, tag, bytes } => {
            for v in [from as u64, comm as u64, tag as u64, bytes] {
                put_u64(b, v);
            }
        }
        Kind::Isend { to, comm, tag, bytes, request } => {
            for v in [to as u64, comm as u64, tag as u64, bytes, request] {
                put_u64(b, v);
            }
        }
        Kind::IsendComplete { request } => put_u64(b, request),
        Kind::IrecvRequest { from, comm, tag, request } => {
            put_opt(b, from);
            put_u64(b, comm as u64);
            put_opt(b, tag);
            put_u64(b, request);
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            for v in [request, from as u64, comm as u64, tag as u64, bytes] {
                put_u64(b, v);
            }
        }
        Kind::CollBegin { op, comm } => {
            b.push(op.code());
            put_u64(b, comm as u64);
        }
        Kind::CollEnd { op, comm, root, sent, received } => {
            b.push(op.code());
            put_u64(b, comm as u64);
            put_opt(b, root);
            put_u64(b, sent);
            put_u64(b, received);
        }
        Kind::LockRequest { lock } | Kind::LockAcquire { lock } | Kind::LockRelease { lock } => {
            put_u64(b, lock)
        }
        Kind::Metric { metric, value } => {
            put_u64(b, metric as u64);
            b.extend_from_slice(&value.to_le_bytes());
        }
        Kind::ClockOffset { reference, offset, error } => {
            put_u64(b, reference as u64);
            put_i64(b, offset);
            put_u64(b, error);
        }
    }
}

impl MultiBlock {
    /// Starts a block of (most likely) `count` events in `buf` (cleared; its capacity
    /// is reused).
    pub fn start(&mut self, count: u64, mut buf: Vec<u8>) {
        buf.clear();
        put_u64(&mut buf, count);
        self.prefix = buf.len();
        self.buf = buf;
        self.declared = count;
        self.count = 0;
        self.prev_wall = 0;
        self.prev_cpu = 0;
    }

    /// Appends one event (annotated: it always has a Lamport clock).
    pub fn push(&mut self, e: &OutEvent) {
        let b = &mut self.buf;
        let dw = e.wall.wrapping_sub(self.prev_wall);
        let (mode, dc) = match e.cpu {
            None => (head::CPU_NONE, 0),
            Some(cpu) => {
                let dc = cpu.wrapping_sub(self.prev_cpu);
                self.prev_cpu = cpu;
                if dc == 0 {
                    (head::CPU_UNCHANGED, 0)
                } else if dc == dw {
                    (head::CPU_SAME_AS_WALL, 0)
                } else {
                    (head::CPU_DELTA, dc)
                }
            }
        };
        b.push(e.kind.code() | (mode << head::CPU_SHIFT) | head::ANNOTATED);
        put_u64(b, e.loc as u64);
        put_i64(b, dw);
        if mode == head::CPU_DELTA {
            put_i64(b, dc);
        }
        if self.count == 0 {
            self.min_wall = e.wall;
            self.max_wall = e.wall;
        } else {
            self.min_wall = self.min_wall.min(e.wall);
            self.max_wall = self.max_wall.max(e.wall);
        }
        self.prev_wall = e.wall;
        self.count += 1;
        put_kind(b, e.kind);
        // Annotations: their number, then (tag, length, body) for each, in tag order.
        put_u64(b, 1 + e.partner.is_some() as u64 + e.raw_wall.is_some() as u64);
        if let Some(p) = e.partner {
            put_u64(b, ann::PARTNER);
            put_u64(b, vlen(p.loc as u64) + vlen(p.index));
            put_u64(b, p.loc as u64);
            put_u64(b, p.index);
        }
        put_u64(b, ann::LAMPORT);
        put_u64(b, vlen(e.lamport));
        put_u64(b, e.lamport);
        if let Some(r) = e.raw_wall {
            let d = r.wrapping_sub(e.wall);
            put_u64(b, ann::RAW_WALL);
            put_u64(b, vlen(spoor_format::varint::zigzag(d)));
            put_i64(b, d);
        }
    }

    /// The block, ready for `TraceWriter::write_block`; `start` begins the next.
    pub fn finish(&mut self) -> EncodedBlock {
        let mut payload = std::mem::take(&mut self.buf);
        if self.count != self.declared {
            // Not the count written at the start: write it again.
            let mut p = Vec::with_capacity(payload.len() + 10);
            put_u64(&mut p, self.count);
            p.extend_from_slice(&payload[self.prefix..]);
            payload = p;
        }
        let b = EncodedBlock {
            loc: None,
            count: self.count,
            min_wall: if self.count > 0 { self.min_wall } else { 0 },
            max_wall: if self.count > 0 { self.max_wall } else { 0 },
            payload,
        };
        self.start(0, Vec::new());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spoor_model::{Annotations, CollOp, Event};

    /// A small deterministic generator (SplitMix64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Values of every varint length, and the extremes.
        fn val(&mut self) -> u64 {
            match self.next() % 6 {
                0 => 0,
                1 => u64::MAX,
                2 => self.next() % 200,
                _ => self.next() >> (self.next() % 64),
            }
        }

        fn below_len(&mut self) -> u64 {
            self.next() % 300
        }

        fn opt(&mut self) -> Option<u32> {
            (!self.next().is_multiple_of(3)).then(|| self.val() as u32)
        }
    }

    fn kind(r: &mut Rng) -> Kind {
        let v = |r: &mut Rng| r.val();
        let u = |r: &mut Rng| r.val() as u32;
        let op = CollOp::ALL[(r.next() % CollOp::ALL.len() as u64) as usize];
        match r.next() % 24 {
            0 => Kind::ProcessBegin { parent: r.opt() },
            1 => Kind::ProcessEnd,
            2 => Kind::ThreadBegin { parent: r.opt() },
            3 => Kind::ThreadEnd,
            4 => Kind::Enter { proc: u(r) },
            5 => Kind::Leave { proc: u(r) },
            6 => Kind::PhaseBegin { name: u(r) },
            7 => Kind::PhaseEnd { name: u(r) },
            8 => Kind::Send { to: u(r), comm: u(r), tag: u(r), bytes: v(r) },
            9 => Kind::RecvBegin { from: r.opt(), comm: u(r), tag: r.opt() },
            10 => Kind::RecvEnd { from: u(r), comm: u(r), tag: u(r), bytes: v(r) },
            11 => Kind::Isend { to: u(r), comm: u(r), tag: u(r), bytes: v(r), request: v(r) },
            12 => Kind::IsendComplete { request: v(r) },
            13 => Kind::IrecvRequest { from: r.opt(), comm: u(r), tag: r.opt(), request: v(r) },
            14 => Kind::IrecvComplete { request: v(r), from: u(r), comm: u(r), tag: u(r), bytes: v(r) },
            15 => Kind::CollBegin { op, comm: u(r) },
            16 => Kind::CollEnd { op, comm: u(r), root: r.opt(), sent: v(r), received: v(r) },
            17 => Kind::LockRequest { lock: v(r) },
            18 => Kind::LockAcquire { lock: v(r) },
            19 => Kind::LockRelease { lock: v(r) },
            20 => Kind::Metric { metric: u(r), value: f64::from_bits(v(r)) },
            _ => Kind::ClockOffset { reference: u(r), offset: v(r) as i64, error: v(r) },
        }
    }

    #[test]
    fn blocks_are_those_of_the_format_encoder() {
        let mut r = Rng(7);
        for round in 0..300 {
            let n = 1 + (r.next() % 40) as usize;
            let mut events = Vec::new();
            let mut wall = r.val() as i64;
            let mut cpu = r.val() as i64;
            for _ in 0..n {
                // Mostly increasing times, sometimes anything.
                wall = match r.next() % 4 {
                    0 => r.val() as i64,
                    _ => wall.wrapping_add((r.next() % 1000) as i64),
                };
                let c = match r.next() % 5 {
                    0 => None,
                    1 => Some(cpu),
                    2 => Some(cpu.wrapping_add(wall)),
                    _ => {
                        cpu = cpu.wrapping_add(r.val() as i64);
                        Some(cpu)
                    }
                };
                let ann = Annotations {
                    partner: r
                        .next()
                        .is_multiple_of(2)
                        .then(|| EventRef { loc: r.val() as u32, index: r.val() }),
                    lamport: Some(r.val()),
                    raw_wall: r.next().is_multiple_of(3).then(|| r.val() as i64),
                };
                events.push(Event { loc: r.val() as u32, wall, cpu: c, kind: kind(&mut r), ann });
            }
            let want = spoor_format::raw::encode_block(&events, true);
            let mut enc = MultiBlock::default();
            // The count expected, or not (then the payload is made again).
            let expect = if r.next().is_multiple_of(4) { r.below_len() } else { n as u64 };
            enc.start(expect, vec![1, 2, 3]);
            for e in &events {
                enc.push(&OutEvent {
                    loc: e.loc,
                    wall: e.wall,
                    cpu: e.cpu,
                    kind: &e.kind,
                    partner: e.ann.partner,
                    lamport: e.ann.lamport.unwrap_or(0),
                    raw_wall: e.ann.raw_wall,
                });
            }
            // Twice: the encoder starts afresh after `start`.
            for _ in 0..2 {
                let got = enc.finish();
                assert_eq!(got, want, "round {round}");
                enc.start(n as u64, got.payload);
                for e in &events {
                    enc.push(&OutEvent {
                        loc: e.loc,
                        wall: e.wall,
                        cpu: e.cpu,
                        kind: &e.kind,
                        partner: e.ann.partner,
                        lamport: e.ann.lamport.unwrap_or(0),
                        raw_wall: e.ann.raw_wall,
                    });
                }
            }
        }
    }
}
