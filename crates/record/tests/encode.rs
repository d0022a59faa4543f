//! The recorder's encoder writes the same bytes as spoor-format's BlockEncoder, for every
//! kind, CPU mode and size of value (the traces it writes are read back by the recorder's
//! other tests).

use spoor_format::binary::BlockEncoder;
use spoor_model::{CollOp, Event, Kind};
use spoor_record::encode::{Block, MAX_EVENT_BYTES};

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Values of every varint length, 0 and the extremes included.
    fn value(&mut self) -> u64 {
        match self.next() % 6 {
            0 => 0,
            1 => u64::MAX,
            2 => self.next() % 128,
            _ => self.next() >> (self.next() % 64),
        }
    }

    fn u32(&mut self) -> u32 {
        self.value() as u32
    }

    fn opt(&mut self) -> Option<u32> {
        (!self.next().is_multiple_of(3)).then(|| self.u32())
    }

    fn kind(&mut self) -> Kind {
        let op = CollOp::ALL[(self.next() % CollOp::ALL.len() as u64) as usize];
        match self.next() % 22 {
            0 => Kind::ProcessBegin { parent: self.opt() },
            1 => Kind::ProcessEnd,
            2 => Kind::ThreadBegin { parent: self.opt() },
            3 => Kind::ThreadEnd,
            4 => Kind::Enter { proc: self.u32() },
            5 => Kind::Leave { proc: self.u32() },
            6 => Kind::Send { to: self.u32(), comm: self.u32(), tag: self.u32(), bytes: self.value() },
            7 => Kind::RecvBegin { from: self.opt(), comm: self.u32(), tag: self.opt() },
            8 => Kind::RecvEnd { from: self.u32(), comm: self.u32(), tag: self.u32(), bytes: self.value() },
            9 => Kind::Isend {
                to: self.u32(),
                comm: self.u32(),
                tag: self.u32(),
                bytes: self.value(),
                request: self.value(),
            },
            10 => Kind::IsendComplete { request: self.value() },
            11 => Kind::IrecvRequest {
                from: self.opt(),
                comm: self.u32(),
                tag: self.opt(),
                request: self.value(),
            },
            12 => Kind::IrecvComplete {
                request: self.value(),
                from: self.u32(),
                comm: self.u32(),
                tag: self.u32(),
                bytes: self.value(),
            },
            13 => Kind::CollBegin { op, comm: self.u32() },
            14 => Kind::CollEnd {
                op,
                comm: self.u32(),
                root: self.opt(),
                sent: self.value(),
                received: self.value(),
            },
            15 => Kind::LockRequest { lock: self.value() },
            16 => Kind::LockAcquire { lock: self.value() },
            17 => Kind::LockRelease { lock: self.value() },
            18 => Kind::PhaseBegin { name: self.u32() },
            19 => Kind::PhaseEnd { name: self.u32() },
            20 => Kind::Metric { metric: self.u32(), value: f64::from_bits(self.next()) },
            _ => {
                Kind::ClockOffset { reference: self.u32(), offset: self.value() as i64, error: self.value() }
            }
        }
    }
}

#[test]
fn same_bytes_as_the_format_encoder_for_every_kind() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..200 {
        let (mut ours, mut theirs) = (Block::default(), BlockEncoder::default());
        let (mut wall, mut cpu) = (rng.value() as i64 >> 2, rng.value() as i64 >> 2);
        for _ in 0..200 {
            // Wall time forward (or, rarely, back); CPU time unknown, unchanged, advancing
            // with wall time, or by some other amount.
            let dw = match rng.next() % 8 {
                0 => -((rng.next() % 1000) as i64),
                1 => rng.value() as i64 >> 3,
                _ => (rng.next() % 100_000) as i64,
            };
            wall = wall.wrapping_add(dw);
            let c = match rng.next() % 5 {
                0 => None,
                1 => Some(cpu),
                2 => Some(cpu.wrapping_add(dw)),
                _ => Some(cpu.wrapping_add((rng.next() % 50_000) as i64)),
            };
            if let Some(c) = c {
                cpu = c;
            }
            let kind = rng.kind();
            let before = ours.buf.len();
            ours.push(wall, c, &kind);
            assert!(ours.buf.len() - before <= MAX_EVENT_BYTES);
            theirs.push(&Event::new(3, wall, c, kind), false);
        }
        assert_eq!(ours.buf, theirs.buf, "round {round}");
        assert_eq!(
            (ours.count, ours.min_wall, ours.max_wall),
            (theirs.count, theirs.min_wall, theirs.max_wall),
            "round {round}"
        );
        ours.clear();
        theirs.clear();
    }
}

/// Events pushed before their CPU time is known, then settled by a reading, give the bytes
/// of the same events pushed with the CPU times of the rule (formats/trace.md, "CPU time
/// of recorded traces"), across block starts too.
#[test]
fn settled_pending_events_are_encoded_as_if_their_cpu_time_was_known() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..300 {
        let (mut ours, mut theirs) = (Block::default(), BlockEncoder::default());
        // The location's last event with a CPU time (it may be in an earlier block).
        let mut last = ((rng.next() % 1_000_000) as i64, (rng.next() % 1_000_000) as i64);
        if rng.next().is_multiple_of(2) {
            ours.push(last.0, Some(last.1), &Kind::ThreadBegin { parent: None });
            theirs.push(&Event::new(0, last.0, Some(last.1), Kind::ThreadBegin { parent: None }), false);
        }
        let mut wall = last.0;
        for _ in 0..20 {
            // A run of pending events, then a reading at a later event.
            let n = rng.next() % 12;
            let mut walls = Vec::new();
            let mut kinds = Vec::new();
            for _ in 0..n {
                wall += match rng.next() % 10 {
                    0 => -((rng.next() % 50) as i64),
                    1 => 0,
                    _ => (rng.next() % 5000) as i64,
                };
                let k = rng.kind();
                ours.push_pending(wall, &k);
                walls.push(wall);
                kinds.push(k);
            }
            assert_eq!(ours.pending(), n as usize);
            wall += (rng.next() % 5000) as i64;
            // The reading: between no CPU and all the wall time since `last`.
            let reading = last.1 + (rng.next() % ((wall - last.0).max(0) as u64 + 1)) as i64;
            let settled = ours.settle(last, reading);
            assert_eq!(ours.pending(), 0);
            let (mut pw, mut pc) = last;
            for (w, k) in walls.iter().zip(kinds) {
                let c = (pc + (w - pw).max(0)).min(reading).max(pc);
                theirs.push(&Event::new(0, *w, Some(c), k), false);
                (pw, pc) = (*w, c);
            }
            assert_eq!(settled, (n > 0).then_some((pw, pc)), "round {round}");
            let k = rng.kind();
            ours.push(wall, Some(reading), &k);
            theirs.push(&Event::new(0, wall, Some(reading), k), false);
            last = (wall, reading);
            assert_eq!(ours.buf, theirs.buf, "round {round}");
        }
        assert_eq!(
            (ours.count, ours.min_wall, ours.max_wall),
            (theirs.count, theirs.min_wall, theirs.max_wall)
        );
    }
}
