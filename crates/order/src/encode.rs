//! spoor-order's output blocks encoded straight from the replay's compact events,
//! without making an [`Event`](spoor_model::Event) of each: the format's own block
//! encoder (`BlockEncoder::push_parts`), writing into a payload that starts with the
//! event count it expects, so that the bytes are those of
//! `spoor_format::raw::encode_block` for the same events in a multi-location block
//! without copying the payload (formats/trace.md; the tests compare the two on random
//! events).

use spoor_format::binary::BlockEncoder;
use spoor_format::raw::EncodedBlock;
use spoor_format::varint::put_u64;
use spoor_model::{Annotations, EventRef, Kind, LocId};

/// A multi-location block being encoded: the payload is written in place, starting
/// with the event count it was told to expect.
#[derive(Default)]
pub(crate) struct MultiBlock {
    enc: BlockEncoder,
    /// The count written at the start of the payload, and its length.
    declared: u64,
    prefix: usize,
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

impl MultiBlock {
    /// Starts a block of (most likely) `count` events in `buf` (cleared; its capacity
    /// is reused).
    pub fn start(&mut self, count: u64, mut buf: Vec<u8>) {
        self.enc.clear();
        buf.clear();
        put_u64(&mut buf, count);
        self.prefix = buf.len();
        self.enc.buf = buf;
        self.declared = count;
    }

    /// Appends one event (it always has a Lamport clock).
    pub fn push(&mut self, e: &OutEvent) {
        let ann = Annotations { partner: e.partner, lamport: Some(e.lamport), raw_wall: e.raw_wall };
        self.enc.push_parts(e.loc, e.wall, e.cpu, e.kind, &ann, true);
    }

    /// The block, ready for `TraceWriter::write_block`; `start` begins the next.
    pub fn finish(&mut self) -> EncodedBlock {
        let mut payload = std::mem::take(&mut self.enc.buf);
        let count = self.enc.count;
        if count != self.declared {
            // Not the count written at the start: write it again.
            let mut p = Vec::with_capacity(payload.len() + 10);
            put_u64(&mut p, count);
            p.extend_from_slice(&payload[self.prefix..]);
            payload = p;
        }
        let b = EncodedBlock {
            loc: None,
            count,
            min_wall: if count > 0 { self.enc.min_wall } else { 0 },
            max_wall: if count > 0 { self.enc.max_wall } else { 0 },
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
            let push_all = |enc: &mut MultiBlock| {
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
            };
            push_all(&mut enc);
            // Twice: the encoder starts afresh after `start`.
            for _ in 0..2 {
                let got = enc.finish();
                assert_eq!(got, want, "round {round}");
                enc.start(n as u64, got.payload);
                push_all(&mut enc);
            }
        }
    }
}
