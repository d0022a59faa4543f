//! The PAG file (formats/pag.md, "The PAG file"): a header, then checksummed chunks
//! framed like the trace format's; and [`load`], which takes a PAG file or a trace.

use crate::build;
use crate::cost::{Local, Mode};
use crate::cp::{CpOptions, Distances};
use crate::error::{Error, Result};
use crate::net::Network;
use crate::pag::{ArcKind, Context, Pag, PhaseMark, CLOCK_OFFSET, NONE, VIRTUAL};
use spoor_format::binary::{self, chunk, ChunkHeader};
use spoor_format::spill::Arena;
use spoor_format::varint::{get_u64, put_i64, put_u64, unzigzag, Cursor, VarintError};
use spoor_format::{ReadOptions, TraceReader};
use spoor_model::{Feedback, KIND_COUNT};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// The first bytes of every PAG file.
pub const MAGIC: [u8; 8] = *b"\x89SPAG\r\n\x1a";
/// The PAG format's major version: a reader refuses a later one.
pub const MAJOR: u16 = 1;
/// The PAG format's minor version.
pub const MINOR: u16 = 0;
/// Magic, major and minor version (u16 each), mode (u8), 3 reserved bytes, t0 (i64).
pub const HEADER_LEN: usize = 24;

/// Chunk types of a PAG file (formats/pag.md).
pub mod kind {
    /// The trace's definitions.
    pub const DEFS: u8 = 0x01;
    /// The calling-context tree.
    pub const CONTEXTS: u8 = 0x02;
    /// The nodes and their local arcs.
    pub const NODES: u8 = 0x03;
    /// The remote arcs.
    pub const ARCS: u8 = 0x04;
    /// Phase begins and ends.
    pub const PHASES: u8 = 0x05;
    /// What the builder could not turn into arcs.
    pub const NOTES: u8 = 0x06;
    /// The end: the counts of what came before.
    pub const END: u8 = 0x07;
    /// The ends of blocking receives posted for any source (optional: readers that do
    /// not know it skip it).
    pub const WILDCARDS: u8 = 0x40;
}

/// Nodes (and arcs) per chunk.
pub(crate) const BATCH: usize = 1 << 16;

/// Writes `pag` as a PAG file.
pub fn write(out: &mut impl Write, pag: &Pag) -> io::Result<()> {
    write_front(out, pag)?;
    let mut buf = Vec::new();
    let mut p = Vec::new();
    for start in (0..pag.nodes()).step_by(BATCH) {
        let end = (start + BATCH).min(pag.nodes());
        encode_nodes(&mut p, start, pag, start..end);
        emit(out, kind::NODES, &p, &mut buf)?;
    }
    for start in (0..pag.arcs()).step_by(BATCH) {
        encode_arcs(&mut p, pag, start..(start + BATCH).min(pag.arcs()));
        emit(out, kind::ARCS, &p, &mut buf)?;
    }
    write_back(out, pag, pag.nodes(), pag.arcs())
}

/// Writes one chunk (`buf`: room to frame it in).
pub(crate) fn emit(out: &mut dyn Write, k: u8, payload: &[u8], buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    binary::put_chunk(buf, k, payload);
    out.write_all(buf)
}

/// The header, the definitions and the contexts of `pag`.
pub(crate) fn write_front(out: &mut dyn Write, pag: &Pag) -> io::Result<()> {
    let mut head = Vec::with_capacity(HEADER_LEN);
    head.extend_from_slice(&MAGIC);
    head.extend_from_slice(&MAJOR.to_le_bytes());
    head.extend_from_slice(&MINOR.to_le_bytes());
    head.push(pag.mode.code());
    head.extend_from_slice(&[0, 0, 0]);
    head.extend_from_slice(&pag.t0.to_le_bytes());
    out.write_all(&head)?;
    let mut buf = Vec::new();
    emit(out, kind::DEFS, &binary::encode_defs(&pag.defs), &mut buf)?;
    let mut p = Vec::new();
    put_u64(&mut p, pag.contexts.len() as u64 - 1);
    for c in &pag.contexts[1..] {
        put_u64(&mut p, c.parent as u64);
        put_u64(&mut p, c.proc as u64);
    }
    emit(out, kind::CONTEXTS, &p, &mut buf)
}

/// A NODES chunk's payload (in `p`) of `pag`'s nodes `range`, numbered from `first`.
pub(crate) fn encode_nodes(p: &mut Vec<u8>, first: usize, pag: &Pag, range: std::ops::Range<usize>) {
    p.clear();
    put_u64(p, first as u64);
    put_u64(p, range.len() as u64);
    let mut wall = 0i64;
    for (i, k) in (first..).zip(range) {
        let l = pag.loc[k];
        put_u64(p, if l == NONE { 0 } else { l as u64 + 1 });
        let prev = pag.prev[k];
        put_u64(p, if prev == NONE { 0 } else { (i - prev as usize) as u64 });
        put_i64(p, pag.wall[k].wrapping_sub(wall));
        wall = pag.wall[k];
        put_i64(p, pag.weight[k]);
        put_u64(p, pag.ctx[k] as u64);
        p.push(pag.kind[k]);
    }
}

/// The inverse of [`encode_nodes`] for a payload this process coded itself (unchecked):
/// the first node's number and the nodes.
pub(crate) fn decode_own_nodes(p: &[u8]) -> (usize, Pag) {
    let mut at = 0;
    let first = get_u64(p, &mut at) as usize;
    let n = get_u64(p, &mut at) as usize;
    let mut nodes = Pag::default();
    let mut wall = 0i64;
    for i in first..first + n {
        let l = get_u64(p, &mut at);
        nodes.loc.push(if l == 0 { NONE } else { l as u32 - 1 });
        let back = get_u64(p, &mut at) as usize;
        nodes.prev.push(if back == 0 { NONE } else { (i - back) as u32 });
        wall = wall.wrapping_add(unzigzag(get_u64(p, &mut at)));
        nodes.wall.push(wall);
        nodes.weight.push(unzigzag(get_u64(p, &mut at)));
        nodes.ctx.push(get_u64(p, &mut at) as u32);
        nodes.kind.push(p.get(at).copied().unwrap_or(0));
        at += 1;
    }
    (first, nodes)
}

/// An ARCS chunk's payload (in `p`) of `pag`'s arcs `range`.
pub(crate) fn encode_arcs(p: &mut Vec<u8>, pag: &Pag, range: std::ops::Range<usize>) {
    p.clear();
    put_u64(p, range.len() as u64);
    let mut to = 0u32;
    for a in range {
        put_u64(p, (pag.arc_to[a] - to) as u64);
        to = pag.arc_to[a];
        put_u64(p, (pag.arc_to[a] - pag.arc_from[a]) as u64);
        put_i64(p, pag.arc_weight[a]);
        // The operation of a collective arc in the high bits (formats/pag.md).
        p.push(pag.arc_kind[a] as u8 | pag.arc_op[a] << 3);
        put_u64(p, pag.arc_bytes[a]);
    }
}

/// The chunks after the arcs: phases, notes, wildcard receives, and the end with the
/// graph's `nodes` and `arcs`.
pub(crate) fn write_back(out: &mut dyn Write, pag: &Pag, nodes: usize, arcs: usize) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut p = Vec::new();
    put_u64(&mut p, pag.phases.len() as u64);
    for &PhaseMark { name, node, begin } in &pag.phases {
        put_u64(&mut p, name as u64);
        put_u64(&mut p, node as u64);
        p.push(begin as u8);
    }
    emit(out, kind::PHASES, &p, &mut buf)?;
    p.clear();
    put_u64(&mut p, pag.notes.len() as u64);
    for n in &pag.notes {
        put_u64(&mut p, n.len() as u64);
        p.extend_from_slice(n.as_bytes());
    }
    emit(out, kind::NOTES, &p, &mut buf)?;
    if !pag.wildcard_receives.is_empty() {
        p.clear();
        put_u64(&mut p, pag.wildcard_receives.len() as u64);
        let mut last = 0;
        for &x in &pag.wildcard_receives {
            put_u64(&mut p, (x - last) as u64);
            last = x;
        }
        emit(out, kind::WILDCARDS, &p, &mut buf)?;
    }
    p.clear();
    for v in [nodes as u64, arcs as u64, pag.contexts.len() as u64] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    emit(out, kind::END, &p, &mut buf)
}

/// Is this the start of a PAG file?
pub fn is_pag(first: &[u8]) -> bool {
    first.starts_with(&MAGIC)
}

/// Whether the file at `path` (not a stream) begins as a PAG file does.
pub fn is_pag_file(path: &str) -> Result<bool> {
    let mut first = [0u8; 8];
    let mut f = std::fs::File::open(path).map_err(|e| Error::Format(spoor_format::Error::io(path, &e)))?;
    Ok(read_full(&mut f, &mut first).unwrap_or(false) && is_pag(&first))
}

/// The node count of the PAG file at `path`, from its END chunk (the file's last 33
/// bytes), without reading the rest; `None` where the file does not end in one, or
/// could not hold that many nodes ([`node_count_of`]).
pub fn node_count(path: &str) -> Result<Option<u64>> {
    use std::io::{Seek, SeekFrom};
    let io_err = |e: &io::Error| Error::Format(spoor_format::Error::io(path, e));
    let mut f = std::fs::File::open(path).map_err(|e| io_err(&e))?;
    let len = f.metadata().map_err(|e| io_err(&e))?.len();
    let mut end = [0u8; END_CHUNK_LEN];
    if len < (HEADER_LEN + END_CHUNK_LEN) as u64 {
        return Ok(None);
    }
    f.seek(SeekFrom::End(-(END_CHUNK_LEN as i64))).map_err(|e| io_err(&e))?;
    f.read_exact(&mut end).map_err(|e| io_err(&e))?;
    Ok(node_count_of(&end, len))
}

/// The END chunk's framed length: a chunk header and three u64 counts.
const END_CHUNK_LEN: usize = 33;

/// The node count a PAG's last `END_CHUNK_LEN` bytes give, in a file of `len` bytes:
/// `None` unless they are a whole END chunk (type, length, checksum) whose count the
/// file could hold (each node takes at least 6 bytes).
pub fn node_count_of(end: &[u8], len: u64) -> Option<u64> {
    let end: &[u8; END_CHUNK_LEN] = end.try_into().ok()?;
    let framed = end[0] == kind::END
        && end[1..5] == 24u32.to_le_bytes()
        && crc32fast::hash(&end[9..]).to_le_bytes() == end[5..9];
    let nodes = u64::from_le_bytes(end[9..17].try_into().expect("8 bytes"));
    (framed && nodes <= len / 6).then_some(nodes)
}

/// Reads a PAG file, checking every count, index and checksum.
pub fn read(name: &str, input: impl Read) -> Result<Pag> {
    read_in(name, input, None)
}

/// [`read`], the graph's arrays in `arena`'s file (`None`: in memory).
pub fn read_in(name: &str, input: impl Read, arena: Option<&Arc<Arena>>) -> Result<Pag> {
    let mut r = io::BufReader::with_capacity(1 << 16, input);
    let corrupt = |offset: u64, m: String| Error::Format(spoor_format::Error::corrupt(name, offset, m));
    let mut pag = read_header(name, &mut r, arena)?;
    let mut offset = HEADER_LEN as u64;
    let mut payload = Vec::new();
    let mut seen_defs = false;
    let mut seen_contexts = false;
    loop {
        let h = read_chunk(name, &mut r, offset, &mut payload)?;
        let at = offset + chunk::HEADER_LEN as u64;
        // Where the graph's file stopped growing, what was kept is short: that is the error.
        let fail = |e: (usize, String)| match arena.and_then(|a| a.error()) {
            Some(full) => Error::Spill(full),
            None => corrupt(at + e.0 as u64, e.1),
        };
        match h.kind {
            kind::DEFS => {
                pag.defs =
                    binary::decode_defs(&payload).map_err(|e| corrupt(at + e.offset as u64, e.message))?;
                seen_defs = true;
            }
            kind::CONTEXTS => {
                contexts(&mut pag, &payload).map_err(fail)?;
                seen_contexts = true;
            }
            kind::NODES if seen_defs && seen_contexts => nodes(&mut pag, &payload).map_err(fail)?,
            kind::ARCS => arcs(&mut pag, &payload).map_err(fail)?,
            kind::PHASES => phases(&mut pag, &payload).map_err(fail)?,
            kind::NOTES => notes(&mut pag, &payload).map_err(fail)?,
            kind::WILDCARDS => wildcards(&mut pag, &payload).map_err(fail)?,
            kind::END => {
                check_end(name, &pag, &payload, offset)?;
                // The END chunk ends the file: what a reader of its tail alone finds
                // (`node_count`) is then the file's own count.
                let after = at + payload.len() as u64;
                if io::BufRead::fill_buf(&mut r)
                    .map_err(|e| Error::Format(spoor_format::Error::io(name, &e)))?
                    .is_empty()
                {
                    return Ok(pag);
                }
                return Err(corrupt(after, "expected the end of the file after the END chunk".into()));
            }
            kind::NODES => {
                return Err(corrupt(offset, "node chunk before the definitions and contexts".into()))
            }
            k if k >= chunk::FIRST_OPTIONAL => {}
            k => {
                return Err(corrupt(
                    offset,
                    format!("expected a PAG chunk type (1 to 7, or 64 and up), found {k}"),
                ))
            }
        }
        offset = at + h.len as u64;
        // A file that could not grow: the rest need not be read.
        pag.spill_error()?;
    }
}

/// The header: magic, version, weight mode and t0, as an empty PAG whose arrays live in
/// `arena`'s file (`None`: in memory).
fn read_header(name: &str, r: &mut impl Read, arena: Option<&Arc<Arena>>) -> Result<Pag> {
    let corrupt = |offset: u64, m: String| Error::Format(spoor_format::Error::corrupt(name, offset, m));
    let mut head = [0u8; HEADER_LEN];
    read_full(r, &mut head)
        .map_err(|e| Error::Format(spoor_format::Error::io(name, &e)))?
        .then_some(())
        .ok_or_else(|| {
            corrupt(0, format!("expected a PAG header of {HEADER_LEN} bytes, found the end of the file"))
        })?;
    if head[..8] != MAGIC {
        return Err(corrupt(0, "expected a PAG file (magic \\x89SPAG), found something else".into()));
    }
    let major = u16::from_le_bytes([head[8], head[9]]);
    if major != MAJOR {
        return Err(Error::Format(spoor_format::Error::version(
            name,
            format!(
                "PAG format version {major} is not supported (this spoor reads version {MAJOR}): {}",
                if major > MAJOR { "upgrade spoor" } else { "rebuild the PAG with this spoor's spoor-pag" }
            ),
        )));
    }
    let mode = Mode::from_code(head[12])
        .ok_or_else(|| corrupt(12, format!("expected a weight mode 0 or 1, found {}", head[12])))?;
    let t0 = i64::from_le_bytes(head[16..24].try_into().expect("8 bytes"));
    Ok(Pag { mode, t0, ..Pag::in_arena(arena) })
}

/// The next chunk (at `offset`): its header, and its payload, checked against its
/// length and checksum, in `payload`.
fn read_chunk(name: &str, r: &mut impl Read, offset: u64, payload: &mut Vec<u8>) -> Result<ChunkHeader> {
    let corrupt = |offset: u64, m: String| Error::Format(spoor_format::Error::corrupt(name, offset, m));
    let mut h = [0u8; chunk::HEADER_LEN];
    if !read_full(r, &mut h).map_err(|e| Error::Format(spoor_format::Error::io(name, &e)))? {
        return Err(corrupt(
            offset,
            "expected a chunk header, found the end of the file (truncated: no end chunk)".into(),
        ));
    }
    let h = ChunkHeader::decode(&h);
    if h.len > chunk::MAX_PAYLOAD {
        return Err(corrupt(offset, format!("chunk declares {} payload bytes, more than the limit", h.len)));
    }
    payload.clear();
    let got = r
        .take(h.len as u64)
        .read_to_end(payload)
        .map_err(|e| Error::Format(spoor_format::Error::io(name, &e)))?;
    if got < h.len as usize {
        return Err(corrupt(
            offset,
            format!("chunk declares {} payload bytes, only {got} remain (truncated)", h.len),
        ));
    }
    if crc32fast::hash(payload) != h.crc {
        return Err(corrupt(offset, "chunk checksum does not match its payload".into()));
    }
    Ok(h)
}

/// The end chunk (at `offset`) must count what the file holds: a missing chunk shows.
fn check_end(name: &str, pag: &Pag, payload: &[u8], offset: u64) -> Result<()> {
    let corrupt = |offset: u64, m: String| Error::Format(spoor_format::Error::corrupt(name, offset, m));
    let at = offset + chunk::HEADER_LEN as u64;
    if payload.len() != 24 {
        return Err(corrupt(offset, format!("expected an end chunk of 24 bytes, found {}", payload.len())));
    }
    let v = |k: usize| u64::from_le_bytes(payload[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
    let want = (pag.nodes() as u64, pag.arcs() as u64, pag.contexts.len() as u64);
    if (v(0), v(1), v(2)) != want {
        return Err(corrupt(
            at,
            format!(
                "the end chunk counts {} nodes, {} arcs, {} contexts; the file holds {}, {}, {} (a chunk is missing)",
                v(0), v(1), v(2), want.0, want.1, want.2
            ),
        ));
    }
    Ok(())
}

/// Fills `buf`; false at a clean end of input before the first byte, an error when
/// the input ends part way.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) if n == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file ends inside a header"))
            }
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

type DecodeResult<T> = std::result::Result<T, (usize, String)>;

fn num(c: &mut Cursor, what: &str) -> DecodeResult<u64> {
    let at = c.pos;
    c.u64().map_err(|e| (at, varint_msg(e, what)))
}

fn int(c: &mut Cursor, what: &str) -> DecodeResult<i64> {
    let at = c.pos;
    c.i64().map_err(|e| (at, varint_msg(e, what)))
}

fn byte(c: &mut Cursor, what: &str) -> DecodeResult<u8> {
    let at = c.pos;
    c.u8().map_err(|e| (at, varint_msg(e, what)))
}

fn varint_msg(e: VarintError, what: &str) -> String {
    match e {
        VarintError::Truncated => format!("expected {what}, found the end of the chunk"),
        VarintError::Overflow => format!("expected {what}, found a varint longer than 64 bits"),
    }
}

/// A count of items of at least `min` bytes each: no more than the bytes left allow.
fn count(c: &mut Cursor, what: &str, min: usize) -> DecodeResult<usize> {
    let at = c.pos;
    let n = num(c, what)?;
    if n > (c.remaining() / min) as u64 {
        return Err((at, format!("{what} is {n}, but only {} bytes remain", c.remaining())));
    }
    Ok(n as usize)
}

fn contexts(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let n = count(&mut c, "the context count", 2)?;
    pag.contexts = Vec::with_capacity(n + 1);
    pag.contexts.push(Context { parent: NONE, proc: NONE });
    for id in 1..=n {
        let at = c.pos;
        let parent = num(&mut c, "a context's parent")?;
        let proc = num(&mut c, "a context's procedure")?;
        if parent >= id as u64 {
            return Err((at, format!("context {id} names parent {parent}, which is not an earlier context")));
        }
        if proc >= pag.defs.strings.len() as u64 {
            return Err((at, format!("context {id} names string {proc}, beyond the string table")));
        }
        pag.contexts.push(Context { parent: parent as u32, proc: proc as u32 });
    }
    Ok(())
}

fn nodes(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let at = c.pos;
    let first = num(&mut c, "the first node's number")?;
    if first != pag.nodes() as u64 {
        return Err((
            at,
            format!("expected nodes from {}, found a chunk starting at node {first}", pag.nodes()),
        ));
    }
    let n = count(&mut c, "the node count", 6)?;
    if pag.nodes() + n >= NONE as usize {
        return Err((at, "too many nodes for one PAG".to_owned()));
    }
    let locs = pag.defs.locations.len() as u64;
    let mut wall = 0i64;
    for _ in 0..n {
        let i = pag.nodes();
        let at = c.pos;
        let l = num(&mut c, "a node's location")?;
        if l > locs {
            return Err((at, format!("node {i} names location {}, beyond the {locs} defined", l - 1)));
        }
        let gap = num(&mut c, "a node's local predecessor")?;
        if gap > i as u64 {
            return Err((
                at,
                format!("node {i}'s local predecessor lies {gap} nodes back, before the first node"),
            ));
        }
        let dw = int(&mut c, "a node's time")?;
        wall = wall.wrapping_add(dw);
        let weight = int(&mut c, "a node's arc weight")?;
        let at_ctx = c.pos;
        let ctx = num(&mut c, "a node's calling context")?;
        if ctx >= pag.contexts.len() as u64 {
            return Err((
                at_ctx,
                format!("node {i} names context {ctx}, beyond the {} defined", pag.contexts.len()),
            ));
        }
        let at_kind = c.pos;
        let k = byte(&mut c, "a node's kind")?;
        if k >= KIND_COUNT && k != VIRTUAL {
            return Err((at_kind, format!("node {i} has kind {k}, expected an event kind or {VIRTUAL}")));
        }
        if weight < 0 {
            return Err((at, format!("node {i}'s arc weighs {weight} ns, expected no less than 0")));
        }
        let prev = if gap == 0 { NONE } else { (i as u64 - gap) as u32 };
        if (l == 0) != (k == VIRTUAL) || (l == 0 && prev != NONE) {
            return Err((
                at,
                format!("node {i}: a virtual node has no location and no local arc, and only it"),
            ));
        }
        if prev != NONE && pag.loc[prev as usize] != (l - 1) as u32 {
            return Err((at, format!("node {i}'s local predecessor {prev} is on another location")));
        }
        if prev != NONE && pag.kind[prev as usize] == CLOCK_OFFSET {
            return Err((
                at,
                format!(
                    "node {i}'s local predecessor {prev} is a clock-offset sample, which nothing follows \
                     (a PAG of an older spoor-pag: build it again)"
                ),
            ));
        }
        pag.loc.push(if l == 0 { NONE } else { (l - 1) as u32 });
        pag.prev.push(prev);
        pag.wall.push(wall);
        pag.weight.push(weight);
        pag.ctx.push(ctx as u32);
        pag.kind.push(k);
    }
    trailing(&c)
}

fn arcs(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let n = count(&mut c, "the arc count", 4)?;
    let mut to = 0u64;
    for _ in 0..n {
        let at = c.pos;
        to += num(&mut c, "an arc's target")?;
        if to >= pag.nodes() as u64 {
            return Err((at, format!("an arc leads to node {to}, beyond the {} nodes read", pag.nodes())));
        }
        if pag.arc_to.last().is_some_and(|&t| (t as u64) > to) {
            return Err((at, format!("arcs are not sorted by target at node {to}")));
        }
        let gap = num(&mut c, "an arc's source")?;
        if gap == 0 || gap > to {
            let what = pag.event_refs(&[to as u32])[0]
                .map_or_else(|| "a collective".to_owned(), |r| format!("event {}:{}", r.loc, r.index));
            return Err((
                at,
                format!(
                    "the arc into node {to} ({what}) comes from {}: a cycle (every arc must come from an earlier node)",
                    if gap == 0 { "itself".to_owned() } else { "before the first node".to_owned() }
                ),
            ));
        }
        let weight = int(&mut c, "an arc's weight")?;
        let at_kind = c.pos;
        let k = byte(&mut c, "an arc's kind")?;
        let kind = ArcKind::from_code(k & 7)
            .ok_or_else(|| (at_kind, format!("expected an arc kind 0 to 4, found {}", k & 7)))?;
        let op = k >> 3;
        if op as usize > spoor_model::CollOp::ALL.len() || (op > 0 && !kind.is_collective()) {
            return Err((
                at_kind,
                format!("an arc's operation code {op} does not fit its kind {}", kind.name()),
            ));
        }
        let bytes = num(&mut c, "an arc's message size")?;
        if weight < 0 {
            return Err((at, format!("the arc into node {to} weighs {weight} ns, expected no less than 0")));
        }
        pag.push_arc(to as u32, (to - gap) as u32, weight, kind, bytes, op);
    }
    trailing(&c)
}

fn phases(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let n = count(&mut c, "the phase count", 3)?;
    for _ in 0..n {
        let at = c.pos;
        let name = num(&mut c, "a phase's name")?;
        let node = num(&mut c, "a phase's node")?;
        let begin = byte(&mut c, "a phase's begin flag")?;
        if name >= pag.defs.strings.len() as u64 || node >= pag.nodes() as u64 || begin > 1 {
            return Err((at, "a phase names a string or node that does not exist".to_owned()));
        }
        pag.phases.push(PhaseMark { name: name as u32, node: node as u32, begin: begin == 1 });
    }
    trailing(&c)
}

fn wildcards(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let n = count(&mut c, "the wildcard receive count", 1)?;
    let mut node = 0u64;
    for k in 0..n {
        let at = c.pos;
        let step = num(&mut c, "a wildcard receive")?;
        node = node.saturating_add(step);
        // In node order, each a located node.
        let located = node < pag.nodes() as u64 && pag.loc[node as usize] != NONE;
        if (k > 0 && step == 0) || !located {
            return Err((
                at,
                "a wildcard receive names a node that does not exist or is out of order".to_owned(),
            ));
        }
        pag.wildcard_receives.push(node as u32);
    }
    trailing(&c)
}

fn notes(pag: &mut Pag, p: &[u8]) -> DecodeResult<()> {
    let mut c = Cursor::new(p);
    let n = count(&mut c, "the note count", 1)?;
    for _ in 0..n {
        let at = c.pos;
        let len = count(&mut c, "a note's length", 1)?;
        let b = c.bytes(len).map_err(|e| (at, varint_msg(e, "a note")))?;
        pag.notes.push(String::from_utf8(b.to_vec()).map_err(|_| (at, "a note is not UTF-8".to_owned()))?);
    }
    trailing(&c)
}

fn trailing(c: &Cursor) -> DecodeResult<()> {
    if c.remaining() > 0 {
        return Err((c.pos, format!("{} bytes left over after the chunk's content", c.remaining())));
    }
    Ok(())
}

/// Opens `path` (`-`: standard input) as a PAG file or, failing that, as a trace to
/// build a PAG from in `mode`; `net` (a table's path, and what local means) replaces
/// message-arc weights (a PAG file keeps
/// its mode; asking for the other one is an error). `feedback` hears how far the build
/// has got and the table's warnings.
pub fn load(
    path: &str,
    mode: Mode,
    net: Option<(&str, Option<Local>)>,
    feedback: &dyn Feedback,
) -> Result<Pag> {
    load_inner(path, mode, net, feedback, false, &[], None).map(|(pag, _)| pag)
}

/// `load`, with the global scope's distances when the PAG is built from a trace here
/// and no table changes its weights (for `cp::critical_path_with`).
pub fn load_with_distances(
    path: &str,
    mode: Mode,
    net: Option<(&str, Option<Local>)>,
    feedback: &dyn Feedback,
) -> Result<(Pag, Option<Distances>)> {
    load_inner(path, mode, net, feedback, true, &[], None)
}

/// `load`, the graph's arrays in `arena`'s file (`None`: in memory), as a graph larger
/// than memory is kept: its passes let go of the pages behind them.
pub fn load_in(
    path: &str,
    mode: Mode,
    net: Option<(&str, Option<Local>)>,
    feedback: &dyn Feedback,
    arena: Option<&Arc<Arena>>,
) -> Result<Pag> {
    load_inner(path, mode, net, feedback, false, &[], arena).map(|(pag, _)| pag)
}

/// `load_with_distances`, the graph's arrays (and the distances) in `arena`'s file.
pub fn load_with_distances_in(
    path: &str,
    mode: Mode,
    net: Option<(&str, Option<Local>)>,
    feedback: &dyn Feedback,
    arena: Option<&Arc<Arena>>,
) -> Result<(Pag, Option<Distances>)> {
    load_inner(path, mode, net, feedback, true, &[], arena)
}

/// `load_with_distances` without a table, with the lengths of the longest paths under
/// `lanes` made on the way too where the PAG is built here (`Distances::lanes`): each
/// the length `cp::lengths` finds, without a sweep of the graph of its own.
pub fn load_with_lanes(
    path: &str,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
) -> Result<(Pag, Option<Distances>)> {
    load_with_lanes_in(path, mode, lanes, feedback, None)
}

/// `load_with_lanes`, the graph's arrays in `arena`'s file (`None`: in memory), as
/// [`load_in`] keeps them.
pub fn load_with_lanes_in(
    path: &str,
    mode: Mode,
    lanes: &[CpOptions],
    feedback: &dyn Feedback,
    arena: Option<&Arc<Arena>>,
) -> Result<(Pag, Option<Distances>)> {
    load_inner(path, mode, None, feedback, true, lanes, arena)
}

fn load_inner(
    path: &str,
    mode: Mode,
    net: Option<(&str, Option<Local>)>,
    feedback: &dyn Feedback,
    distances: bool,
    lanes: &[CpOptions],
    arena: Option<&Arc<Arena>>,
) -> Result<(Pag, Option<Distances>)> {
    // Standard input and pipes are read once, as they come; a file is looked at first.
    let stream = spoor_format::is_stream(path);
    let pag_file = !stream && is_pag_file(path)?;
    let build = |r: TraceReader| build::build_inner(r, mode, distances, lanes, feedback, arena);
    let (mut pag, mut made) = if pag_file {
        let f = std::fs::File::open(path).map_err(|e| Error::Format(spoor_format::Error::io(path, &e)))?;
        let pag = read_in(path, f, arena)?;
        if pag.mode != mode {
            return Err(Error::Usage(format!(
                "{path} is a PAG weighted in {} mode; build it again with spoor-pag --weight {}",
                pag.mode.name(),
                mode.name()
            )));
        }
        (pag, None)
    } else if stream {
        let (name, input): (&str, Box<dyn io::Read + Send>) = if path == "-" {
            ("<stdin>", Box::new(io::stdin()))
        } else {
            let f =
                std::fs::File::open(path).map_err(|e| Error::Format(spoor_format::Error::io(path, &e)))?;
            (path, Box::new(f))
        };
        let mut input = io::BufReader::new(input);
        let buf = std::io::BufRead::fill_buf(&mut input)
            .map_err(|e| Error::Format(spoor_format::Error::io(name, &e)))?;
        if is_pag(buf) {
            (read_in(name, input, arena)?, None)
        } else {
            build(TraceReader::from_reader(name, Box::new(input), ReadOptions::default())?)?
        }
    } else {
        build(TraceReader::open(path, ReadOptions::default())?)?
    };
    if let Some((t, local)) = net {
        for note in pag.apply_network(&Network::load(t, feedback)?.with_local(local)) {
            feedback.warn(&note);
        }
        made = None;
    }
    Ok((pag, made))
}
