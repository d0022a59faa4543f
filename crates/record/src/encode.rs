//! The recorder's block encoder: the bytes of spoor_format's `BlockEncoder` for a
//! single-location block without annotations (formats/trace.md, "Block"), written into
//! room reserved once per event instead of checked byte by byte: the hot path's encoder.
//! tests/encode.rs checks that both write the same bytes for every kind.

use spoor_format::binary::{cpu_mode, head};
use spoor_model::Kind;

/// More than the encoding of any event this encoder writes: head, two varint deltas
/// and at most five varints of payload.
pub const MAX_EVENT_BYTES: usize = 96;

/// One block's events and what its index entry needs.
#[derive(Default)]
pub struct Block {
    pub buf: Vec<u8>,
    pub count: u64,
    pub min_wall: i64,
    pub max_wall: i64,
    prev_wall: i64,
    prev_cpu: i64,
    /// Events pushed before their CPU time is known (`push_pending`): their offsets and
    /// wall times, oldest first.
    pend: Vec<(u32, i64)>,
    /// The wall and CPU time the first of them is encoded against (the block's previous
    /// event, or 0 and 0 at the start of a block).
    pend_base: (i64, i64),
}

/// Writes varints at a raw position with room for them.
struct Out {
    p: *mut u8,
}

impl Out {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        // SAFETY: `Block::push` reserved MAX_EVENT_BYTES, more than one event writes.
        unsafe {
            self.p.write(b);
            self.p = self.p.add(1);
        }
    }

    #[inline(always)]
    fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte(v as u8 | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    #[inline(always)]
    fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }

    #[inline(always)]
    fn opt(&mut self, v: Option<u32>) {
        self.u64(v.map_or(0, |v| v as u64 + 1));
    }
}

impl Block {
    /// A block with room for `bytes` of events and `pending` events waiting for their
    /// CPU time, allocated now.
    pub fn with_capacity(bytes: usize, pending: usize) -> Block {
        Block { buf: Vec::with_capacity(bytes), pend: Vec::with_capacity(pending), ..Block::default() }
    }

    /// Empties the block (there must be no pending event).
    pub fn clear(&mut self) {
        debug_assert!(self.pend.is_empty());
        self.buf.clear();
        self.count = 0;
        self.prev_wall = 0;
        self.prev_cpu = 0;
    }

    /// How many events wait for their CPU time.
    #[inline]
    pub fn pending(&self) -> usize {
        self.pend.len()
    }

    /// Appends an event whose CPU time is not known yet: encoded as if its CPU time
    /// advanced with wall time, until `settle` says what it is. The events after it that
    /// carry a CPU time must wait for that `settle`.
    #[inline]
    pub fn push_pending(&mut self, wall: i64, kind: &Kind) {
        if self.pend.is_empty() {
            self.pend_base = (self.prev_wall, self.prev_cpu);
        }
        let at = self.buf.len() as u32;
        self.encode(wall, head::CPU_SAME_AS_WALL, 0, kind);
        self.pend.push((at, wall));
    }

    /// Gives the pending events their CPU times: from `last`, the wall and CPU time of
    /// the location's event before them, the CPU time advances with the wall time from
    /// event to event, capped at `cpu` (formats/trace.md, "CPU time of recorded
    /// traces"). Rewrites their CPU modes (at most one gets a delta, inserted in place)
    /// and returns the wall and CPU time of the last of them.
    pub fn settle(&mut self, last: (i64, i64), cpu: i64) -> Option<(i64, i64)> {
        if self.pend.is_empty() {
            return None;
        }
        let (mut pw, mut pc) = last;
        let (mut ew, mut ec) = self.pend_base;
        let mut shift = 0usize;
        for i in 0..self.pend.len() {
            let (at, w) = self.pend[i];
            let at = at as usize + shift;
            let c = (pc + (w - pw).max(0)).min(cpu).max(pc);
            let (dw, dc) = (w.wrapping_sub(ew), c.wrapping_sub(ec));
            let mode = if dc == 0 {
                head::CPU_UNCHANGED
            } else if dc == dw {
                head::CPU_SAME_AS_WALL
            } else {
                head::CPU_DELTA
            };
            if mode != head::CPU_SAME_AS_WALL {
                let h = &mut self.buf[at];
                *h = (*h & !(3 << head::CPU_SHIFT)) | (mode << head::CPU_SHIFT);
            }
            if mode == head::CPU_DELTA {
                // The delta goes after the head and the wall delta.
                let mut p = at + 1;
                while self.buf[p] & 0x80 != 0 {
                    p += 1;
                }
                let mut tmp = [0u8; 10];
                let mut o = Out { p: tmp.as_mut_ptr() };
                o.i64(dc);
                // SAFETY: `o` wrote within `tmp` (a varint takes at most 10 bytes).
                let n = unsafe { o.p.offset_from(tmp.as_ptr()) } as usize;
                self.buf.splice(p + 1..p + 1, tmp[..n].iter().copied());
                shift += n;
            }
            (pw, pc, ew, ec) = (w, c, w, c);
        }
        self.prev_cpu = ec;
        self.pend.clear();
        Some((pw, pc))
    }

    /// Appends one event of this block's location.
    #[inline]
    pub fn push(&mut self, wall: i64, cpu: Option<i64>, kind: &Kind) {
        debug_assert!(self.pend.is_empty() || cpu.is_none());
        let dw = wall.wrapping_sub(self.prev_wall);
        let (mode, dc) = cpu_mode(cpu, self.prev_cpu, dw);
        if let Some(c) = cpu {
            self.prev_cpu = c;
        }
        self.encode(wall, mode, dc, kind);
    }

    #[inline]
    fn encode(&mut self, wall: i64, mode: u8, dc: i64, kind: &Kind) {
        self.buf.reserve(MAX_EVENT_BYTES);
        let dw = wall.wrapping_sub(self.prev_wall);
        let len = self.buf.len();
        // SAFETY: `reserve` made room for MAX_EVENT_BYTES past `len`.
        let start = unsafe { self.buf.as_mut_ptr().add(len) };
        let mut o = Out { p: start };
        o.byte(kind.code() | (mode << head::CPU_SHIFT));
        o.i64(dw);
        if mode == head::CPU_DELTA {
            o.i64(dc);
        }
        payload(&mut o, kind);
        // SAFETY: the bytes up to `o.p` were written, within the reserved room.
        unsafe { self.buf.set_len(len + o.p.offset_from(start) as usize) };
        if self.count == 0 {
            self.min_wall = wall;
            self.max_wall = wall;
        } else {
            self.min_wall = self.min_wall.min(wall);
            self.max_wall = self.max_wall.max(wall);
        }
        self.prev_wall = wall;
        self.count += 1;
    }
}

#[inline(always)]
fn payload(o: &mut Out, k: &Kind) {
    match *k {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => o.opt(parent),
        Kind::ProcessEnd | Kind::ThreadEnd => {}
        Kind::Enter { proc: id } | Kind::Leave { proc: id } => o.u64(id as u64),
        Kind::PhaseBegin { name: id } | Kind::PhaseEnd { name: id } => o.u64(id as u64),
        Kind::Send { to, comm, tag, bytes } | Kind::RecvEnd { from: to, comm, tag, bytes } => {
            o.u64(to as u64);
            o.u64(comm as u64);
            o.u64(tag as u64);
            o.u64(bytes);
        }
        Kind::RecvBegin { from, comm, tag } => {
            o.opt(from);
            o.u64(comm as u64);
            o.opt(tag);
        }
        Kind::Isend { to, comm, tag, bytes, request } => {
            o.u64(to as u64);
            o.u64(comm as u64);
            o.u64(tag as u64);
            o.u64(bytes);
            o.u64(request);
        }
        Kind::IsendComplete { request } => o.u64(request),
        Kind::IrecvRequest { from, comm, tag, request } => {
            o.opt(from);
            o.u64(comm as u64);
            o.opt(tag);
            o.u64(request);
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            o.u64(request);
            o.u64(from as u64);
            o.u64(comm as u64);
            o.u64(tag as u64);
            o.u64(bytes);
        }
        Kind::CollBegin { op, comm } => {
            o.byte(op.code());
            o.u64(comm as u64);
        }
        Kind::CollEnd { op, comm, root, sent, received } => {
            o.byte(op.code());
            o.u64(comm as u64);
            o.opt(root);
            o.u64(sent);
            o.u64(received);
        }
        Kind::LockRequest { lock } | Kind::LockAcquire { lock } | Kind::LockRelease { lock } => o.u64(lock),
        Kind::Metric { metric, value } => {
            o.u64(metric as u64);
            for b in value.to_le_bytes() {
                o.byte(b);
            }
        }
        Kind::ClockOffset { reference, offset, error } => {
            o.u64(reference as u64);
            o.i64(offset);
            o.u64(error);
        }
    }
}
