//! The byte layout of formats/trace.md: header, chunks, definitions and event blocks.
//! Readers and writers of whole files are in `reader` and `writer`; this module
//! encodes and decodes the pieces, with offsets relative to the piece.

use crate::varint::{put_i64, put_u64, unzigzag, vlen, zigzag, Cursor, VarintError};
use spoor_model::*;

/// `\x89SPOOR\r\n`: a non-ASCII first byte so no text file starts this way, and a
/// CR LF pair that a text-mode transfer would damage visibly.
pub const MAGIC: [u8; 8] = *b"\x89SPOOR\r\n";
/// The format's major version: a reader refuses a later one.
pub const MAJOR: u16 = 1;
/// The format's minor version: later minors only add what readers may skip.
pub const MINOR: u16 = 2;
/// Bytes of the v1.0 header: magic, major, minor, header length, feature flags.
pub const HEADER_LEN: u32 = 24;

/// Bytes of a trace file an event takes at the least, to reckon the events of a trace
/// without its end chunk generously from its size: the compact blocks take 5 to 9.
pub const LEAST_BYTES_PER_EVENT: u64 = 4;

/// Feature flags: the low 32 bits describe the trace and may be ignored by a
/// reader that does not know them; a reader must refuse unknown bits of the high 32.
pub mod flags {
    /// Events are in one global, causally consistent order in multi-location blocks.
    pub const GLOBAL_ORDER: u64 = 1 << 0;
    /// Every location is on one time base (spoor-align ran).
    pub const ALIGNED: u64 = 1 << 1;
    /// Messages carry their matched partner (spoor-order ran).
    pub const MATCHED: u64 = 1 << 2;
    /// Bits a reader must understand to read the trace.
    pub const REQUIRED_MASK: u64 = 0xffff_ffff_0000_0000;
    /// The trace may hold per-location blocks (chunk type 0x06, format 1.1).
    pub const LOCAL_BLOCKS: u64 = 1 << 32;
    /// The trace may hold compact blocks (chunk type 0x07, format 1.2).
    pub const COMPACT_BLOCKS: u64 = 1 << 33;
    /// The required bits this version understands.
    pub const KNOWN_REQUIRED: u64 = LOCAL_BLOCKS | COMPACT_BLOCKS;
}

/// Chunk types. Types from [`chunk::FIRST_OPTIONAL`] up may be skipped by a reader that
/// does not know them (room for minor versions); an unknown type below it is an error.
pub mod chunk {
    /// Definitions (the last one wins).
    pub const DEFS: u8 = 0x01;
    /// Events of one location.
    pub const BLOCK: u8 = 0x02;
    /// Events of several locations, CPU deltas running through the block (1.0).
    pub const MULTI_BLOCK: u8 = 0x03;
    /// The index of blocks.
    pub const INDEX: u8 = 0x04;
    /// The end: counts and where the index is.
    pub const END: u8 = 0x05;
    /// Multi-location block whose CPU times and Lamport clocks run per location (1.1).
    pub const LOCAL_BLOCK: u8 = 0x06;
    /// Multi-location block in the compact form: locations, CPU times, partners and
    /// Lamport clocks relative to what the block said before (1.2).
    pub const COMPACT_BLOCK: u8 = 0x07;
    /// Types from here on may be skipped by readers that do not know them.
    pub const FIRST_OPTIONAL: u8 = 0x40;
    /// Type byte, payload length (u32), CRC-32 of the payload (u32).
    pub const HEADER_LEN: usize = 9;
    /// The largest payload a chunk may declare; anything bigger is corrupt.
    pub const MAX_PAYLOAD: u32 = 1 << 28;
    /// END's payload: event count, block count, index offset, each a u64.
    pub const END_PAYLOAD: u32 = 24;
}

/// Event head byte: kind code in the low 5 bits, CPU mode in bits 5-6, annotations flag in bit 7.
pub mod head {
    /// The kind code's bits.
    pub const KIND_MASK: u8 = 0x1f;
    /// Where the CPU mode starts.
    pub const CPU_SHIFT: u8 = 5;
    /// No CPU time: no bytes.
    pub const CPU_NONE: u8 = 0;
    /// CPU advanced by exactly the wall-time delta (computing): no bytes.
    pub const CPU_SAME_AS_WALL: u8 = 1;
    /// A zigzag varint CPU delta follows.
    pub const CPU_DELTA: u8 = 2;
    /// CPU did not advance (waiting): no bytes.
    pub const CPU_UNCHANGED: u8 = 3;
    /// Annotations follow the event.
    pub const ANNOTATED: u8 = 0x80;
}

/// Event kind codes (the head byte's low 5 bits), defined with `Kind::code`.
pub use spoor_model::kind_code as kind;

/// Annotation tags. Unknown tags are skipped (each carries its length).
pub mod ann {
    /// The matched partner event: location and index.
    pub const PARTNER: u64 = 1;
    /// The Lamport clock.
    pub const LAMPORT: u64 = 2;
    /// The wall time before alignment.
    pub const RAW_WALL: u64 = 3;
    /// In a per-location block: the event has no Lamport clock (none is implied).
    pub const NO_LAMPORT: u64 = 4;
}

/// The annotations of an event in a compact block: a varint of these bits, then the
/// bodies of those set, in this order (formats/trace.md). Any other bit is an error.
pub mod compact {
    /// The partner is at the event's implied partner location; its index follows.
    pub const PARTNER: u64 = 1;
    /// The partner's location follows, then its index.
    pub const PARTNER_AT: u64 = 2;
    /// The Lamport clock follows (relative to the implied one, if any).
    pub const LAMPORT: u64 = 4;
    /// The event has no Lamport clock where one would be implied.
    pub const NO_LAMPORT: u64 = 8;
    /// The raw wall time follows.
    pub const RAW_WALL: u64 = 16;
    /// Every bit defined.
    pub const ALL: u64 = 31;

    /// Whether `present` is a set of annotations an event may have: at least one, none
    /// unknown, one partner and one Lamport bit at most.
    #[inline(always)]
    pub fn valid(present: u64) -> bool {
        let both = |a: u64, b: u64| present & (a | b) == a | b;
        present != 0 && present & !ALL == 0 && !both(PARTNER, PARTNER_AT) && !both(LAMPORT, NO_LAMPORT)
    }
}

/// How a block chunk lays out its events (formats/trace.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// 0x02: the events of one location.
    Single,
    /// 0x03: events of several locations, each naming its location; CPU deltas run
    /// from event to event of the block.
    Multi,
    /// 0x06: like `Multi`, but CPU deltas run from event to event of the same
    /// location, and Lamport clocks one more than the location's previous are implied.
    Local,
    /// 0x07: like `Local`, with each location given relative to the previous event's,
    /// CPU times advancing with the location's own wall time, and compact annotations
    /// (partners relative to the location's previous ones).
    Compact,
}

impl Form {
    /// The form of a block chunk type; `None` for other chunks.
    pub fn of_chunk(kind: u8) -> Option<Form> {
        match kind {
            chunk::BLOCK => Some(Form::Single),
            chunk::MULTI_BLOCK => Some(Form::Multi),
            chunk::LOCAL_BLOCK => Some(Form::Local),
            chunk::COMPACT_BLOCK => Some(Form::Compact),
            _ => None,
        }
    }

    /// Whether each event names its location.
    pub fn multi(self) -> bool {
        self != Form::Single
    }

    /// Whether events keep state per location within the block.
    pub fn per_location(self) -> bool {
        matches!(self, Form::Local | Form::Compact)
    }
}

/// The running state of each location within a per-location block: its last CPU
/// time and Lamport clock. Slots of an earlier block are told apart by generation, so
/// starting a block costs nothing whatever the number of locations. Locations past
/// `DENSE` (only an encoder given any id can see them) live in a map instead.
#[derive(Clone, Default)]
pub(crate) struct PerLocation {
    generation: u32,
    slots: Vec<Slot>,
    sparse: std::collections::HashMap<LocId, Slot>,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct Slot {
    generation: u32,
    pub cpu: i64,
    pub lamport: Option<u64>,
    /// Compact blocks: the wall time of the location's previous event (0 before its
    /// first), and the index of its previous partner on its own location and on
    /// another ([`partner_side`]; 0 before the first).
    pub wall: i64,
    pub partners: [u64; 2],
}

/// Which of a location's two running partner indices a partner at `partner_loc`
/// follows in a compact block: the event's own location's, or any other's.
#[inline(always)]
pub(crate) fn partner_side(loc: LocId, partner_loc: LocId) -> usize {
    (loc != partner_loc) as usize
}

/// Where a compact block implies an event's partner to be: the destination of a send,
/// the source of a received message, the event's own location otherwise (a request's
/// completion, a completion's request).
#[inline(always)]
pub(crate) fn implied_partner_loc(loc: LocId, k: &Kind) -> LocId {
    match *k {
        Kind::Send { to, .. } | Kind::Isend { to, .. } => to,
        Kind::RecvEnd { from, .. } | Kind::IrecvComplete { from, .. } => from,
        _ => loc,
    }
}

impl PerLocation {
    /// Locations with a slot in the vector.
    const DENSE: usize = 1 << 20;

    /// Forgets every location (a new block starts).
    pub fn start(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.clear();
        }
        self.sparse.clear();
    }

    /// The state of `loc`: CPU time 0 and no Lamport clock before its first event.
    #[inline(always)]
    pub fn slot(&mut self, loc: LocId) -> &mut Slot {
        let i = loc as usize;
        if i >= Self::DENSE {
            return self.sparse.entry(loc).or_default();
        }
        if i >= self.slots.len() {
            self.slots.resize(i + 1, Slot::default());
        }
        let s = &mut self.slots[i];
        if s.generation != self.generation {
            *s = Slot { generation: self.generation, ..Slot::default() };
        }
        s
    }
}

/// The Lamport clock a per-location block implies for an event after one with `prev`.
#[inline(always)]
pub(crate) fn implied_lamport(prev: Option<u64>) -> Option<u64> {
    prev.and_then(|p| p.checked_add(1))
}

thread_local! {
    /// Per-location state for decoding, kept between blocks so that a thread decoding
    /// many blocks allocates it once (taken out while in use, so nesting is harmless).
    static DECODE_STATE: std::cell::Cell<PerLocation> = std::cell::Cell::new(PerLocation::default());
}

/// Runs `f` with this thread's per-location decoding state, started afresh.
#[inline]
pub(crate) fn with_per_location<R>(f: impl FnOnce(&mut PerLocation) -> R) -> R {
    let mut st = DECODE_STATE.take();
    st.start();
    let r = f(&mut st);
    DECODE_STATE.set(st);
    r
}

/// The fixed header of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
    /// Bytes in the header, so later minors can grow it.
    pub header_len: u32,
    /// Feature flags (`flags`): optional ones describe the events, required ones must be known.
    pub flags: u64,
}

impl Header {
    /// This build's version with `flags`.
    pub fn new(flags: u64) -> Self {
        Header { major: MAJOR, minor: MINOR, header_len: HEADER_LEN, flags }
    }

    /// The header's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER_LEN as usize);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&self.major.to_le_bytes());
        b.extend_from_slice(&self.minor.to_le_bytes());
        b.extend_from_slice(&self.header_len.to_le_bytes());
        b.extend_from_slice(&self.flags.to_le_bytes());
        b
    }

    /// Parses the first [`HEADER_LEN`] bytes. The caller then skips to `header_len`.
    pub fn decode(b: &[u8]) -> Result<Header, HeaderError> {
        if b.len() < 8 || b[..8] != MAGIC {
            return Err(HeaderError::Magic);
        }
        if b.len() < HEADER_LEN as usize {
            return Err(HeaderError::Truncated);
        }
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let h = Header {
            major: u16_at(8),
            minor: u16_at(10),
            header_len: u32_at(12),
            flags: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
        };
        if h.major > MAJOR {
            return Err(HeaderError::NewerMajor(h.major, h.minor));
        }
        if h.major < 1 {
            return Err(HeaderError::OlderMajor(h.major));
        }
        if h.header_len < HEADER_LEN || h.header_len > 1 << 16 {
            return Err(HeaderError::Length(h.header_len));
        }
        let unknown = h.flags & flags::REQUIRED_MASK & !flags::KNOWN_REQUIRED;
        if unknown != 0 {
            return Err(HeaderError::RequiredFlags(unknown));
        }
        Ok(h)
    }
}

/// Why a header is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The file does not start with the magic.
    #[error("expected the spoor magic \\x89SPOOR\\r\\n")]
    Magic,
    /// Fewer bytes than a header.
    #[error("the header ends before its {HEADER_LEN} bytes")]
    Truncated,
    /// A major version later than this build's (major, minor).
    #[error("trace format version {0}.{1} is newer than this spoor reads ({MAJOR}.x): upgrade spoor")]
    NewerMajor(u16, u16),
    /// A major version below the first.
    #[error("trace format major version {0} does not exist")]
    OlderMajor(u16),
    /// A header length out of range.
    #[error("expected a header length between {HEADER_LEN} and 65536, found {0}")]
    Length(u32),
    /// Required flags this build does not know.
    #[error("the trace needs features this spoor does not know (flags {0:#x}): upgrade spoor")]
    RequiredFlags(u64),
}

/// A decoded chunk header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// The chunk type (`chunk`).
    pub kind: u8,
    /// Payload length in bytes.
    pub len: u32,
    /// CRC-32 of the payload.
    pub crc: u32,
}

impl ChunkHeader {
    /// The header of the bytes `b`; `problem` says whether it makes sense.
    pub fn decode(b: &[u8; chunk::HEADER_LEN]) -> ChunkHeader {
        ChunkHeader {
            kind: b[0],
            len: u32::from_le_bytes([b[1], b[2], b[3], b[4]]),
            crc: u32::from_le_bytes([b[5], b[6], b[7], b[8]]),
        }
    }

    /// Why this header cannot start a chunk of a trace with feature flags `trace_flags`,
    /// if it cannot.
    pub fn problem(&self, trace_flags: u64) -> Option<String> {
        let known = (chunk::DEFS..=chunk::COMPACT_BLOCK).contains(&self.kind);
        if !known && self.kind < chunk::FIRST_OPTIONAL {
            return Some(format!("expected a chunk type (1 to 7, or 64 and up), found {}", self.kind));
        }
        // The chunk type is outside the checksum: a block form the header does not
        // allow is damage, not a block to read another way.
        for (kind, flag, name) in [
            (chunk::LOCAL_BLOCK, flags::LOCAL_BLOCKS, "LOCAL_BLOCKS"),
            (chunk::COMPACT_BLOCK, flags::COMPACT_BLOCKS, "COMPACT_BLOCKS"),
        ] {
            if self.kind == kind && trace_flags & flag == 0 {
                return Some(format!(
                    "found a block of type {kind:#04x} in a trace whose header does not allow it ({name} unset)"
                ));
            }
        }
        if self.len > chunk::MAX_PAYLOAD {
            return Some(format!(
                "chunk declares {} payload bytes, more than the limit of {}",
                self.len,
                chunk::MAX_PAYLOAD
            ));
        }
        if self.kind == chunk::END && self.len != chunk::END_PAYLOAD {
            return Some(format!(
                "expected an end chunk of {} bytes, found {}",
                chunk::END_PAYLOAD,
                self.len
            ));
        }
        None
    }
}

/// Appends a whole chunk (header and payload) to `out`.
pub fn put_chunk(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// A decoding problem at `offset` bytes into the piece being decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was expected and what was found.
    pub message: String,
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError { offset, message: message.into() })
}

/// Adds what was being read to a varint failure.
pub(crate) trait Expect<T> {
    fn want(self, c: &Cursor, what: &str) -> Result<T, DecodeError>;
}

impl<T> Expect<T> for Result<T, VarintError> {
    #[inline]
    fn want(self, c: &Cursor, what: &str) -> Result<T, DecodeError> {
        self.map_err(|e| DecodeError {
            offset: c.pos,
            message: match e {
                VarintError::Truncated => format!("expected {what}, found the end of the chunk"),
                VarintError::Overflow => format!("expected {what}, found a varint longer than 64 bits"),
            },
        })
    }
}

/// How an event's CPU time is written after a CPU time `prev_cpu` and a wall delta `dw`:
/// the head's CPU mode, and the delta to write (0 unless the mode is `CPU_DELTA`).
#[inline(always)]
pub fn cpu_mode(cpu: Option<i64>, prev_cpu: i64, dw: i64) -> (u8, i64) {
    match cpu {
        None => (head::CPU_NONE, 0),
        Some(cpu) => {
            let dc = cpu.wrapping_sub(prev_cpu);
            if dc == 0 {
                (head::CPU_UNCHANGED, 0)
            } else if dc == dw {
                (head::CPU_SAME_AS_WALL, 0)
            } else {
                (head::CPU_DELTA, dc)
            }
        }
    }
}

#[inline(always)]
pub(crate) fn u32_of(c: &mut Cursor, what: &str) -> Result<u32, DecodeError> {
    let at = c.pos;
    let v = c.u64().want(c, what)?;
    u32::try_from(v).or_else(|_| err(at, format!("expected {what} (at most 2^32-1), found {v}")))
}

/// A block's location (none for a multi-location form) and event count, checked against
/// the locations defined and the bytes that remain.
pub(crate) fn block_prefix(
    c: &mut Cursor,
    form: Form,
    loc_count: usize,
) -> Result<(Option<u32>, u64), DecodeError> {
    let block_loc = if form.multi() {
        None
    } else {
        let at = c.pos;
        let l = u32_of(c, "the block's location")?;
        if l as usize >= loc_count {
            return err(at, format!("block names location {l}, but {loc_count} locations are defined"));
        }
        Some(l)
    };
    let at = c.pos;
    let count = c.u64().want(c, "the block's event count")?;
    // Every event takes at least two bytes (head and wall delta).
    if count > (c.remaining() / 2) as u64 {
        return err(
            at,
            format!("block declares {count} events, more than its {} bytes can hold", c.remaining()),
        );
    }
    Ok((block_loc, count))
}

/// 0 stands for `None`, n+1 for `Some(n)`.
#[inline(always)]
fn opt_u32_of(c: &mut Cursor, what: &str) -> Result<Option<u32>, DecodeError> {
    let at = c.pos;
    let v = c.u64().want(c, what)?;
    match v {
        0 => Ok(None),
        v if v - 1 <= u32::MAX as u64 => Ok(Some((v - 1) as u32)),
        v => err(at, format!("expected {what} (at most 2^32-1), found {}", v - 1)),
    }
}

fn put_opt(out: &mut Vec<u8>, v: Option<u32>) {
    put_u64(out, v.map_or(0, |v| v as u64 + 1));
}

/// A count of items that each take at least one byte: it cannot exceed what is left.
#[inline(always)]
fn count_of(c: &mut Cursor, what: &str) -> Result<usize, DecodeError> {
    let at = c.pos;
    let n = c.u64().want(c, what)?;
    if n > c.remaining() as u64 {
        return err(at, format!("{what} is {n}, but only {} bytes remain", c.remaining()));
    }
    Ok(n as usize)
}

// ---- definitions ----

/// The definitions chunk's payload.
pub fn encode_defs(d: &Definitions) -> Vec<u8> {
    let mut b = Vec::new();
    put_u64(&mut b, d.strings.len() as u64);
    for s in d.strings.iter() {
        put_u64(&mut b, s.len() as u64);
        b.extend_from_slice(s.as_bytes());
    }
    put_u64(&mut b, d.apps.len() as u64);
    for a in &d.apps {
        put_u64(&mut b, a.name as u64);
    }
    put_u64(&mut b, d.machines.len() as u64);
    for m in &d.machines {
        put_u64(&mut b, m.name as u64);
    }
    put_u64(&mut b, d.processes.len() as u64);
    for p in &d.processes {
        for v in [p.name, p.app, p.machine, p.rank] {
            put_u64(&mut b, v as u64);
        }
    }
    put_u64(&mut b, d.locations.len() as u64);
    for l in &d.locations {
        for v in [l.name, l.process, l.thread] {
            put_u64(&mut b, v as u64);
        }
    }
    put_u64(&mut b, d.comms.len() as u64);
    for c in &d.comms {
        put_u64(&mut b, c.name as u64);
        put_u64(&mut b, c.members.len() as u64);
        for &m in &c.members {
            put_u64(&mut b, m as u64);
        }
    }
    put_u64(&mut b, d.metrics.len() as u64);
    for m in &d.metrics {
        put_u64(&mut b, m.name as u64);
        put_u64(&mut b, m.unit as u64);
    }
    put_u64(&mut b, d.properties.len() as u64);
    for (k, v) in &d.properties {
        put_u64(&mut b, *k as u64);
        put_u64(&mut b, *v as u64);
    }
    b
}

/// Decodes a definitions payload. Bytes after the known sections are ignored
/// (a later minor version may append sections) and every reference is checked.
pub fn decode_defs(payload: &[u8]) -> Result<Definitions, DecodeError> {
    let mut c = Cursor::new(payload);
    let c = &mut c;
    let mut d = Definitions::new();
    let n = count_of(c, "the number of strings")?;
    for i in 0..n {
        let len = count_of(c, "a string length")?;
        let at = c.pos;
        let bytes = c.bytes(len).want(c, "string bytes")?;
        let s = std::str::from_utf8(bytes).or_else(|_| err(at, format!("string {i} is not valid UTF-8")))?;
        if d.strings.lookup(s).is_some() {
            return err(at, format!("string {i} ({s:?}) appears twice in the string table"));
        }
        d.strings.intern(s);
    }
    for _ in 0..count_of(c, "the number of applications")? {
        d.apps.push(Application { name: u32_of(c, "an application name")? });
    }
    for _ in 0..count_of(c, "the number of machines")? {
        d.machines.push(Machine { name: u32_of(c, "a machine name")? });
    }
    for _ in 0..count_of(c, "the number of processes")? {
        d.processes.push(Process {
            name: u32_of(c, "a process name")?,
            app: u32_of(c, "a process's application")?,
            machine: u32_of(c, "a process's machine")?,
            rank: u32_of(c, "a process's rank")?,
        });
    }
    for _ in 0..count_of(c, "the number of locations")? {
        d.locations.push(Location {
            name: u32_of(c, "a location name")?,
            process: u32_of(c, "a location's process")?,
            thread: u32_of(c, "a location's thread number")?,
        });
    }
    for _ in 0..count_of(c, "the number of communicators")? {
        let name = u32_of(c, "a communicator name")?;
        let n = count_of(c, "the number of communicator members")?;
        let mut members = Vec::new();
        for _ in 0..n {
            members.push(u32_of(c, "a communicator member")?);
        }
        d.comms.push(Communicator { name, members });
    }
    for _ in 0..count_of(c, "the number of metrics")? {
        d.metrics.push(Metric { name: u32_of(c, "a metric name")?, unit: u32_of(c, "a metric unit")? });
    }
    for _ in 0..count_of(c, "the number of properties")? {
        d.properties.push((u32_of(c, "a property key")?, u32_of(c, "a property value")?));
    }
    d.check().or_else(|e| err(c.pos, format!("inconsistent definitions: {e}")))?;
    Ok(d)
}

// ---- events ----

/// Encoder state of one block: the previous event's times, and the block's bytes.
#[derive(Default)]
pub struct BlockEncoder {
    /// The encoded events so far (the block chunk adds its location and count before them).
    pub buf: Vec<u8>,
    /// Events in the block.
    pub count: u64,
    /// The smallest wall time in the block.
    pub min_wall: i64,
    /// The largest wall time in the block.
    pub max_wall: i64,
    prev_wall: i64,
    prev_cpu: i64,
    /// Compact blocks: the previous event's location.
    prev_loc: LocId,
    /// Multi-location blocks: each location's running state.
    local: PerLocation,
    /// Multi-location blocks in the per-location form of 1.1 (0x06), not the compact
    /// one: only to test that readers still read them.
    legacy_local: bool,
}

impl BlockEncoder {
    /// Empties the block for the next one, keeping its buffer.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.count = 0;
        self.prev_wall = 0;
        self.prev_cpu = 0;
        self.prev_loc = 0;
        self.local.start();
    }

    /// An encoder whose multi-location blocks are in the per-location form of 1.1
    /// (chunk type 0x06), which readers must still read.
    #[doc(hidden)]
    pub fn writing_1_1() -> BlockEncoder {
        BlockEncoder { legacy_local: true, ..Default::default() }
    }

    /// Appends one event. `with_loc` is set in multi-location blocks, which are
    /// written in the compact form (chunk type 0x07).
    pub fn push(&mut self, ev: &Event, with_loc: bool) {
        self.push_parts(ev.loc, ev.wall, ev.cpu, &ev.kind, &ev.ann, with_loc)
    }

    /// `push` of an event given by its parts (for programs that keep events in a form
    /// of their own).
    #[inline]
    pub fn push_parts(
        &mut self,
        loc: LocId,
        wall: i64,
        cpu: Option<i64>,
        kind: &Kind,
        ann: &Annotations,
        with_loc: bool,
    ) {
        let ev = Parts { loc, wall, kind, ann };
        if with_loc && !self.legacy_local {
            return self.push_compact(ev, cpu);
        }
        let b = &mut self.buf;
        let dw = ev.wall.wrapping_sub(self.prev_wall);
        // What the Lamport annotation must say: the clock, "none", or nothing (implied).
        let mut lamport = ev.ann.lamport.map(Lamport::Clock);
        let prev_cpu = if with_loc {
            let slot = self.local.slot(ev.loc);
            let implied = implied_lamport(slot.lamport);
            if implied.is_some() {
                lamport = if ev.ann.lamport == implied {
                    None
                } else {
                    Some(ev.ann.lamport.map_or(Lamport::Nothing, Lamport::Clock))
                };
            }
            slot.lamport = ev.ann.lamport;
            &mut slot.cpu
        } else {
            &mut self.prev_cpu
        };
        let (mode, dc) = cpu_mode(cpu, *prev_cpu, dw);
        if let Some(cpu) = cpu {
            *prev_cpu = cpu;
        }
        let annotated = ev.ann.partner.is_some() || lamport.is_some() || ev.ann.raw_wall.is_some();
        b.push(ev.kind.code() | (mode << head::CPU_SHIFT) | if annotated { head::ANNOTATED } else { 0 });
        if with_loc {
            put_u64(b, ev.loc as u64);
        }
        put_i64(b, dw);
        if mode == head::CPU_DELTA {
            put_i64(b, dc);
        }
        encode_kind(b, ev.kind);
        if annotated {
            encode_annotations(b, &ev, lamport);
        }
        self.count_event(ev.wall);
    }

    /// The block's event count and wall-time range, after an event at `wall`.
    #[inline(always)]
    fn count_event(&mut self, wall: i64) {
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

    /// `push_parts` of an event of a compact block (formats/trace.md, 0x07).
    #[inline]
    fn push_compact(&mut self, ev: Parts, cpu: Option<i64>) {
        let b = &mut self.buf;
        let dw = ev.wall.wrapping_sub(self.prev_wall);
        let dl = (ev.loc as i64).wrapping_sub(self.prev_loc as i64);
        self.prev_loc = ev.loc;
        let slot = self.local.slot(ev.loc);
        let (mode, dc) = cpu_mode(cpu, slot.cpu, ev.wall.wrapping_sub(slot.wall));
        if let Some(cpu) = cpu {
            slot.cpu = cpu;
        }
        slot.wall = ev.wall;
        let implied = implied_lamport(slot.lamport);
        slot.lamport = ev.ann.lamport;
        let mut present = 0;
        let mut partner = None;
        if let Some(p) = ev.ann.partner {
            let side = partner_side(ev.loc, p.loc);
            let delta = p.index.wrapping_sub(slot.partners[side]) as i64;
            slot.partners[side] = p.index;
            let at = (p.loc != implied_partner_loc(ev.loc, ev.kind)).then_some(p.loc);
            present |= if at.is_some() { compact::PARTNER_AT } else { compact::PARTNER };
            partner = Some((at, delta));
        }
        let lamport = if ev.ann.lamport == implied {
            None
        } else {
            match (ev.ann.lamport, implied) {
                (Some(l), Some(i)) => Some(zigzag(l.wrapping_sub(i) as i64)),
                (Some(l), None) => Some(l),
                (None, _) => {
                    present |= compact::NO_LAMPORT;
                    None
                }
            }
        };
        if lamport.is_some() {
            present |= compact::LAMPORT;
        }
        if ev.ann.raw_wall.is_some() {
            present |= compact::RAW_WALL;
        }
        let annotated = present != 0;
        b.push(ev.kind.code() | (mode << head::CPU_SHIFT) | if annotated { head::ANNOTATED } else { 0 });
        put_i64(b, dl);
        put_i64(b, dw);
        if mode == head::CPU_DELTA {
            put_i64(b, dc);
        }
        encode_kind(b, ev.kind);
        if annotated {
            put_u64(b, present);
            if let Some((at, delta)) = partner {
                if let Some(l) = at {
                    put_u64(b, l as u64);
                }
                put_i64(b, delta);
            }
            if let Some(l) = lamport {
                put_u64(b, l);
            }
            if let Some(r) = ev.ann.raw_wall {
                put_i64(b, r.wrapping_sub(ev.wall));
            }
        }
        self.count_event(ev.wall);
    }
}

/// What the encoder reads of an event.
struct Parts<'a> {
    loc: LocId,
    wall: i64,
    kind: &'a Kind,
    ann: &'a Annotations,
}

/// The Lamport annotation an event gets.
#[derive(Clone, Copy)]
enum Lamport {
    Clock(u64),
    /// "No clock", where one would be implied.
    Nothing,
}

fn encode_kind(b: &mut Vec<u8>, k: &Kind) {
    let p = |b: &mut Vec<u8>, v: u64| put_u64(b, v);
    match *k {
        Kind::ProcessBegin { parent } | Kind::ThreadBegin { parent } => put_opt(b, parent),
        Kind::ProcessEnd | Kind::ThreadEnd => {}
        Kind::Enter { proc: id } | Kind::Leave { proc: id } => p(b, id as u64),
        Kind::PhaseBegin { name: id } | Kind::PhaseEnd { name: id } => p(b, id as u64),
        Kind::Send { to, comm, tag, bytes } => {
            for v in [to as u64, comm as u64, tag as u64, bytes] {
                p(b, v);
            }
        }
        Kind::RecvBegin { from, comm, tag } => {
            put_opt(b, from);
            p(b, comm as u64);
            put_opt(b, tag);
        }
        Kind::RecvEnd { from, comm, tag, bytes } => {
            for v in [from as u64, comm as u64, tag as u64, bytes] {
                p(b, v);
            }
        }
        Kind::Isend { to, comm, tag, bytes, request } => {
            for v in [to as u64, comm as u64, tag as u64, bytes, request] {
                p(b, v);
            }
        }
        Kind::IsendComplete { request } => p(b, request),
        Kind::IrecvRequest { from, comm, tag, request } => {
            put_opt(b, from);
            p(b, comm as u64);
            put_opt(b, tag);
            p(b, request);
        }
        Kind::IrecvComplete { request, from, comm, tag, bytes } => {
            for v in [request, from as u64, comm as u64, tag as u64, bytes] {
                p(b, v);
            }
        }
        Kind::CollBegin { op, comm } => {
            b.push(op.code());
            p(b, comm as u64);
        }
        Kind::CollEnd { op, comm, root, sent, received } => {
            b.push(op.code());
            p(b, comm as u64);
            put_opt(b, root);
            p(b, sent);
            p(b, received);
        }
        Kind::LockRequest { lock } | Kind::LockAcquire { lock } | Kind::LockRelease { lock } => p(b, lock),
        Kind::Metric { metric, value } => {
            p(b, metric as u64);
            b.extend_from_slice(&value.to_le_bytes());
        }
        Kind::ClockOffset { reference, offset, error } => {
            p(b, reference as u64);
            put_i64(b, offset);
            p(b, error);
        }
    }
}

fn encode_annotations(b: &mut Vec<u8>, ev: &Parts, lamport: Option<Lamport>) {
    let a = ev.ann;
    let n = a.partner.is_some() as u64 + lamport.is_some() as u64 + a.raw_wall.is_some() as u64;
    put_u64(b, n);
    // Each: tag, body length, body.
    if let Some(p) = a.partner {
        put_u64(b, ann::PARTNER);
        put_u64(b, (vlen(p.loc as u64) + vlen(p.index)) as u64);
        put_u64(b, p.loc as u64);
        put_u64(b, p.index);
    }
    if let Some(Lamport::Clock(l)) = lamport {
        put_u64(b, ann::LAMPORT);
        put_u64(b, vlen(l) as u64);
        put_u64(b, l);
    }
    if let Some(r) = a.raw_wall {
        let d = r.wrapping_sub(ev.wall);
        put_u64(b, ann::RAW_WALL);
        put_u64(b, vlen(zigzag(d)) as u64);
        put_i64(b, d);
    }
    if let Some(Lamport::Nothing) = lamport {
        put_u64(b, ann::NO_LAMPORT);
        put_u64(b, 0);
    }
}

/// The location a block belongs to and the number of events it declares.
pub struct BlockPrefix {
    /// The block's location; `None` for a multi-location block.
    pub loc: Option<LocId>,
    /// The number of events the block declares.
    pub count: u64,
}

/// Decodes the events of a block payload of the given form, calling `f` for each.
/// `loc_count` is the number of defined locations: every location the block names
/// must be below it.
pub fn decode_block(
    payload: &[u8],
    form: Form,
    loc_count: usize,
    f: impl FnMut(Event),
) -> Result<BlockPrefix, DecodeError> {
    match form {
        Form::Local => with_per_location(|st| decode_block_with(payload, form, loc_count, f, st)),
        Form::Compact => with_per_location(|st| decode_compact_block(payload, loc_count, f, st)),
        _ => decode_block_with(payload, form, loc_count, f, &mut PerLocation::default()),
    }
}

fn decode_compact_block(
    payload: &[u8],
    loc_count: usize,
    mut f: impl FnMut(Event),
    st: &mut PerLocation,
) -> Result<BlockPrefix, DecodeError> {
    let mut cur = Cursor::new(payload);
    let c = &mut cur;
    let (_, count) = block_prefix(c, Form::Compact, loc_count)?;
    let mut run = CompactRun::default();
    for _ in 0..count {
        f(compact_event(c, loc_count, &mut run, st)?);
    }
    block_end(c, count)?;
    Ok(BlockPrefix { loc: None, count })
}

/// What a compact block's next event is relative to: the previous event's location and
/// wall time.
#[derive(Clone, Copy, Default)]
pub(crate) struct CompactRun {
    loc: LocId,
    wall: i64,
}

/// Decodes the next event of a compact block (formats/trace.md, 0x07).
#[inline(always)]
pub(crate) fn compact_event(
    c: &mut Cursor,
    loc_count: usize,
    run: &mut CompactRun,
    st: &mut PerLocation,
) -> Result<Event, DecodeError> {
    let start = c.pos;
    let h = c.u8().want(c, "an event")?;
    let at = c.pos;
    let l = (run.loc as i64).wrapping_add(c.i64().want(c, "the event's location")?);
    if l < 0 || l as u64 >= loc_count as u64 {
        return err(at, format!("event names location {l}, but {loc_count} locations are defined"));
    }
    let loc = l as LocId;
    let wall = run.wall.wrapping_add(c.i64().want(c, "a wall-time delta")?);
    *run = CompactRun { loc, wall };
    let slot = st.slot(loc);
    let own_dw = wall.wrapping_sub(slot.wall);
    slot.wall = wall;
    let cpu = event_cpu(c, h, own_dw, &mut slot.cpu)?;
    let kind = decode_kind(c, h & head::KIND_MASK, start)?;
    let implied = implied_lamport(slot.lamport);
    let mut ann = Annotations { lamport: implied, ..Annotations::default() };
    if h & head::ANNOTATED != 0 {
        let at = c.pos;
        let present = c.u64().want(c, "the annotations present")?;
        if !compact::valid(present) {
            return err(
                at,
                format!("expected the annotations present (bits of 31: one partner, one Lamport clock at most), found {present}"),
            );
        }
        if present & (compact::PARTNER | compact::PARTNER_AT) != 0 {
            let ploc = if present & compact::PARTNER_AT != 0 {
                u32_of(c, "a partner location")?
            } else {
                implied_partner_loc(loc, &kind)
            };
            let side = partner_side(loc, ploc);
            let index = slot.partners[side].wrapping_add(c.i64().want(c, "a partner index delta")? as u64);
            slot.partners[side] = index;
            ann.partner = Some(EventRef { loc: ploc, index });
        }
        if present & compact::LAMPORT != 0 {
            let v = c.u64().want(c, "a Lamport clock")?;
            ann.lamport = Some(implied.map_or(v, |i| i.wrapping_add(unzigzag(v) as u64)));
        } else if present & compact::NO_LAMPORT != 0 {
            ann.lamport = None;
        }
        if present & compact::RAW_WALL != 0 {
            ann.raw_wall = Some(wall.wrapping_add(c.i64().want(c, "a raw wall-time delta")?));
        }
    }
    slot.lamport = ann.lamport;
    Ok(Event { loc, wall, cpu, kind, ann })
}

/// Checks that a block's payload ends after its `count` events.
#[inline]
pub(crate) fn block_end(c: &Cursor, count: u64) -> Result<(), DecodeError> {
    if c.remaining() != 0 {
        return err(
            c.pos,
            format!("expected the end of the block after {count} events, found {} more bytes", c.remaining()),
        );
    }
    Ok(())
}

fn decode_block_with(
    payload: &[u8],
    form: Form,
    loc_count: usize,
    mut f: impl FnMut(Event),
    st: &mut PerLocation,
) -> Result<BlockPrefix, DecodeError> {
    let local = form == Form::Local;
    let mut cur = Cursor::new(payload);
    let c = &mut cur;
    let (block_loc, count) = block_prefix(c, form, loc_count)?;
    let mut wall: i64 = 0;
    let mut cpu: i64 = 0;
    for _ in 0..count {
        let start = c.pos;
        let h = c.u8().want(c, "an event")?;
        let code = h & head::KIND_MASK;
        let loc = match block_loc {
            Some(l) => l,
            None => {
                let at = c.pos;
                let l = u32_of(c, "the event's location")?;
                if l as usize >= loc_count {
                    return err(
                        at,
                        format!("event names location {l}, but {loc_count} locations are defined"),
                    );
                }
                l
            }
        };
        let dw = c.i64().want(c, "a wall-time delta")?;
        wall = wall.wrapping_add(dw);
        let mut slot = local.then(|| st.slot(loc));
        let ev_cpu = event_cpu(c, h, dw, slot.as_mut().map_or(&mut cpu, |s| &mut s.cpu))?;
        let kind = decode_kind(c, code, start)?;
        let mut ev = Event { loc, wall, cpu: ev_cpu, kind, ann: Annotations::default() };
        let no_lamport = h & head::ANNOTATED != 0 && decode_annotations(c, &mut ev)?;
        if let Some(s) = slot {
            if ev.ann.lamport.is_none() && !no_lamport {
                ev.ann.lamport = implied_lamport(s.lamport);
            }
            s.lamport = ev.ann.lamport;
        }
        f(ev);
    }
    block_end(c, count)?;
    Ok(BlockPrefix { loc: block_loc, count })
}

/// An event's CPU time from its head's CPU mode (formats/trace.md): none, advanced with
/// the wall delta `dw`, an explicit delta read here, or unchanged; `cpu` is the block's
/// running CPU time.
#[inline(always)]
pub(crate) fn event_cpu(c: &mut Cursor, h: u8, dw: i64, cpu: &mut i64) -> Result<Option<i64>, DecodeError> {
    Ok(match (h >> head::CPU_SHIFT) & 3 {
        head::CPU_NONE => None,
        head::CPU_SAME_AS_WALL => {
            *cpu = cpu.wrapping_add(dw);
            Some(*cpu)
        }
        head::CPU_DELTA => {
            *cpu = cpu.wrapping_add(c.i64().want(c, "a CPU-time delta")?);
            Some(*cpu)
        }
        _ => Some(*cpu),
    })
}

#[inline(always)]
pub(crate) fn decode_kind(c: &mut Cursor, code: u8, start: usize) -> Result<Kind, DecodeError> {
    let u = |c: &mut Cursor, what: &str| c.u64().want(c, what);
    Ok(match code {
        kind::PROCESS_BEGIN => Kind::ProcessBegin { parent: opt_u32_of(c, "a parent location")? },
        kind::PROCESS_END => Kind::ProcessEnd,
        kind::THREAD_BEGIN => Kind::ThreadBegin { parent: opt_u32_of(c, "a parent location")? },
        kind::THREAD_END => Kind::ThreadEnd,
        kind::ENTER => Kind::Enter { proc: u32_of(c, "a procedure name")? },
        kind::LEAVE => Kind::Leave { proc: u32_of(c, "a procedure name")? },
        kind::SEND => Kind::Send {
            to: u32_of(c, "a destination")?,
            comm: u32_of(c, "a communicator")?,
            tag: u32_of(c, "a tag")?,
            bytes: u(c, "a message size")?,
        },
        kind::RECV_BEGIN => Kind::RecvBegin {
            from: opt_u32_of(c, "a source")?,
            comm: u32_of(c, "a communicator")?,
            tag: opt_u32_of(c, "a tag")?,
        },
        kind::RECV_END => Kind::RecvEnd {
            from: u32_of(c, "a source")?,
            comm: u32_of(c, "a communicator")?,
            tag: u32_of(c, "a tag")?,
            bytes: u(c, "a message size")?,
        },
        kind::ISEND => Kind::Isend {
            to: u32_of(c, "a destination")?,
            comm: u32_of(c, "a communicator")?,
            tag: u32_of(c, "a tag")?,
            bytes: u(c, "a message size")?,
            request: u(c, "a request id")?,
        },
        kind::ISEND_COMPLETE => Kind::IsendComplete { request: u(c, "a request id")? },
        kind::IRECV_REQUEST => Kind::IrecvRequest {
            from: opt_u32_of(c, "a source")?,
            comm: u32_of(c, "a communicator")?,
            tag: opt_u32_of(c, "a tag")?,
            request: u(c, "a request id")?,
        },
        kind::IRECV_COMPLETE => Kind::IrecvComplete {
            request: u(c, "a request id")?,
            from: u32_of(c, "a source")?,
            comm: u32_of(c, "a communicator")?,
            tag: u32_of(c, "a tag")?,
            bytes: u(c, "a message size")?,
        },
        kind::COLL_BEGIN | kind::COLL_END => {
            let at = c.pos;
            let oc = c.u8().want(c, "a collective operation")?;
            let op = CollOp::from_code(oc).ok_or_else(|| DecodeError {
                offset: at,
                message: format!("expected a collective operation code (0 to 14), found {oc}"),
            })?;
            let comm = u32_of(c, "a communicator")?;
            if code == kind::COLL_BEGIN {
                Kind::CollBegin { op, comm }
            } else {
                Kind::CollEnd {
                    op,
                    comm,
                    root: opt_u32_of(c, "a root")?,
                    sent: u(c, "bytes sent")?,
                    received: u(c, "bytes received")?,
                }
            }
        }
        kind::LOCK_REQUEST => Kind::LockRequest { lock: u(c, "a lock id")? },
        kind::LOCK_ACQUIRE => Kind::LockAcquire { lock: u(c, "a lock id")? },
        kind::LOCK_RELEASE => Kind::LockRelease { lock: u(c, "a lock id")? },
        kind::PHASE_BEGIN => Kind::PhaseBegin { name: u32_of(c, "a phase name")? },
        kind::PHASE_END => Kind::PhaseEnd { name: u32_of(c, "a phase name")? },
        kind::METRIC => {
            Kind::Metric { metric: u32_of(c, "a metric id")?, value: c.f64().want(c, "a metric value")? }
        }
        kind::CLOCK_OFFSET => Kind::ClockOffset {
            reference: u32_of(c, "a reference location")?,
            offset: c.i64().want(c, "a clock offset")?,
            error: u(c, "a clock-offset error")?,
        },
        other => {
            return err(start, format!("expected an event kind (0 to {}), found {other}", KIND_COUNT - 1))
        }
    })
}

/// The annotations spoor-order writes: a Lamport clock, a partner, or both (the
/// clock is implied on most events of per-location blocks). Decoded without the general loop's checks when the bytes are
/// exactly that shape (a body's length must match what its varints take); anything
/// else, including any damage, goes the general way.
#[inline(always)]
fn decode_ordered_annotations(c: &mut Cursor, ev: &mut Event) -> bool {
    let start = c.pos;
    let body = |c: &mut Cursor, tag: u64| -> Option<(u64, Option<u64>)> {
        if c.u64().ok()? != tag {
            return None;
        }
        let len = c.u64().ok()? as usize;
        let at = c.pos;
        let a = c.u64().ok()?;
        let b = if tag == ann::PARTNER { Some(c.u64().ok()?) } else { None };
        (c.pos - at == len).then_some((a, b))
    };
    let ok = match c.u64() {
        Ok(1) => match c.buf.get(c.pos) {
            Some(&b) if b as u64 == ann::PARTNER => match body(c, ann::PARTNER) {
                Some((loc, Some(index))) if loc <= u32::MAX as u64 => {
                    ev.ann.partner = Some(EventRef { loc: loc as u32, index });
                    true
                }
                _ => false,
            },
            _ => body(c, ann::LAMPORT).map(|(l, _)| ev.ann.lamport = Some(l)).is_some(),
        },
        Ok(2) => match body(c, ann::PARTNER) {
            Some((loc, Some(index))) if loc <= u32::MAX as u64 => {
                ev.ann.partner = Some(EventRef { loc: loc as u32, index });
                body(c, ann::LAMPORT).map(|(l, _)| ev.ann.lamport = Some(l)).is_some()
            }
            _ => false,
        },
        _ => false,
    };
    if !ok {
        c.pos = start;
        ev.ann = Annotations::default();
    }
    ok
}

/// Decodes an event's annotations into `ev`; returns whether they say it has no
/// Lamport clock (`ann::NO_LAMPORT`, which only per-location blocks heed).
fn decode_annotations(c: &mut Cursor, ev: &mut Event) -> Result<bool, DecodeError> {
    if decode_ordered_annotations(c, ev) {
        return Ok(false);
    }
    let mut no_lamport = false;
    let n = count_of(c, "the number of annotations")?;
    for _ in 0..n {
        let tag = c.u64().want(c, "an annotation tag")?;
        let len = count_of(c, "an annotation length")?;
        let at = c.pos;
        let body = c.bytes(len).want(c, "an annotation")?;
        let mut b = Cursor::new(body);
        let bad = |what: &str| DecodeError {
            offset: at,
            message: format!("expected {what} in a {len}-byte annotation"),
        };
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
            ann::NO_LAMPORT => no_lamport = true,
            _ => {} // a later minor version's annotation
        }
    }
    Ok(no_lamport)
}

// ---- index and end ----

/// One entry of the trailing index: where a block is and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// Byte offset of the block's chunk.
    pub offset: u64,
    /// Its location; `None` for a multi-location block.
    pub loc: Option<LocId>,
    /// Its events.
    pub count: u64,
    /// Its smallest wall time.
    pub min_wall: i64,
    /// Its largest wall time.
    pub max_wall: i64,
}

/// The index chunk's payload.
pub fn encode_index(entries: &[IndexEntry]) -> Vec<u8> {
    let mut b = Vec::new();
    put_u64(&mut b, entries.len() as u64);
    for e in entries {
        put_u64(&mut b, e.offset);
        put_opt(&mut b, e.loc);
        put_u64(&mut b, e.count);
        put_i64(&mut b, e.min_wall);
        put_u64(&mut b, e.max_wall.wrapping_sub(e.min_wall) as u64);
    }
    b
}

/// The entries of an index chunk's payload.
pub fn decode_index(payload: &[u8]) -> Result<Vec<IndexEntry>, DecodeError> {
    let mut cur = Cursor::new(payload);
    let c = &mut cur;
    let n = count_of(c, "the number of index entries")?;
    let mut v = Vec::new();
    for _ in 0..n {
        let offset = c.u64().want(c, "a block offset")?;
        let loc = opt_u32_of(c, "a block location")?;
        let count = c.u64().want(c, "a block event count")?;
        let min_wall = c.i64().want(c, "a block's first time")?;
        let span = c.u64().want(c, "a block's time span")?;
        v.push(IndexEntry { offset, loc, count, min_wall, max_wall: min_wall.wrapping_add(span as i64) });
    }
    Ok(v)
}

/// The end chunk's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    /// Events in the trace.
    pub events: u64,
    /// Block chunks in the trace.
    pub blocks: u64,
    /// Byte offset of the index chunk, 0 when there is none.
    pub index_offset: u64,
}

impl End {
    /// The payload's bytes.
    pub fn encode(&self) -> [u8; chunk::END_PAYLOAD as usize] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.events.to_le_bytes());
        b[8..16].copy_from_slice(&self.blocks.to_le_bytes());
        b[16..].copy_from_slice(&self.index_offset.to_le_bytes());
        b
    }

    /// The end chunk of the trace file `file`, read from its last bytes without reading
    /// the rest; `None` when they are not an end chunk (a gzip-ed, truncated or text
    /// trace, or not a file).
    pub fn of_file(file: &std::fs::File) -> Option<End> {
        use std::os::unix::fs::FileExt;
        let mut b = [0u8; chunk::HEADER_LEN + chunk::END_PAYLOAD as usize];
        let at = file.metadata().ok()?.len().checked_sub(b.len() as u64)?;
        file.read_exact_at(&mut b, at).ok()?;
        End::of_tail(&b)
    }

    /// The events the trace `file` holds by its end chunk, where the file could hold
    /// that many (an event takes a byte at the least: a larger count says nothing).
    pub fn events_in(file: &std::fs::File) -> Option<u64> {
        let len = file.metadata().ok()?.len();
        End::of_file(file).map(|e| e.events).filter(|&n| n <= len)
    }

    /// The end chunk that `bytes` end with, if they do (checksum and all).
    pub fn of_tail(bytes: &[u8]) -> Option<End> {
        let b = bytes.get(bytes.len().checked_sub(chunk::HEADER_LEN + chunk::END_PAYLOAD as usize)?..)?;
        let h = ChunkHeader::decode(b[..chunk::HEADER_LEN].try_into().expect("a chunk header"));
        let payload = &b[chunk::HEADER_LEN..];
        let end = h.kind == chunk::END && h.len == chunk::END_PAYLOAD && crc32fast::hash(payload) == h.crc;
        end.then(|| End::decode(payload)).flatten()
    }

    /// The end chunk of a payload; `None` if it is not `END_PAYLOAD` bytes.
    pub fn decode(b: &[u8]) -> Option<End> {
        if b.len() != chunk::END_PAYLOAD as usize {
            return None;
        }
        let w = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(End { events: w(0), blocks: w(8), index_offset: w(16) })
    }
}
