//! Reads a trace in any of its forms: the binary format from a file (memory-mapped,
//! blocks decoded in parallel), from a pipe or through gzip (streamed), or the text form.

use crate::binary::{self, chunk, ChunkHeader, DecodeError, End, Form, Header, IndexEntry};
use crate::ordered;
use crate::text::{self, TextParser};
use crate::Error;
use rayon::prelude::*;
use spoor_model::{Definitions, Event, LocId};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

/// How to read a trace.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Read every intact block of a damaged or truncated trace instead of failing,
    /// and say what was lost (see [`TraceReader::salvage_report`]).
    pub salvage: bool,
}

/// The events of one block, or of a batch of text lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The location of a single-location block; `None` for multi-location blocks and text.
    pub loc: Option<LocId>,
    /// The events, in input order.
    pub events: Vec<Event>,
}

/// What a salvaging read could not recover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SalvageReport {
    /// Blocks that were skipped.
    pub bad_blocks: Vec<BadBlock>,
    /// Where reading stopped early, if it did.
    pub stopped: Option<Stop>,
}

/// A block a salvaging read skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadBlock {
    /// The byte offset of its chunk.
    pub offset: u64,
    /// What was wrong with it.
    pub why: String,
}

/// Where a salvaging read stopped before the end of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The byte offset where the damage starts.
    pub offset: u64,
    /// The bytes from there to the end of the input, none of them read.
    pub lost: u64,
    /// What was expected there and what was found.
    pub why: String,
}

impl SalvageReport {
    /// True when nothing was lost.
    pub fn is_clean(&self) -> bool {
        self.bad_blocks.is_empty() && self.stopped.is_none()
    }

    /// Records a skipped block.
    fn skip(&mut self, offset: u64, why: String) {
        self.bad_blocks.push(BadBlock { offset, why });
    }
}

impl std::fmt::Display for SalvageReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_clean() {
            return write!(f, "nothing lost");
        }
        for BadBlock { offset, why } in &self.bad_blocks {
            writeln!(f, "skipped the block at byte {offset}: {why}")?;
        }
        if let Some(Stop { offset, lost, why }) = &self.stopped {
            write!(f, "stopped at byte {offset} ({why}); {lost} bytes after it lost")?;
        }
        Ok(())
    }
}

/// Events per block made from the text form.
const TEXT_BLOCK: usize = 4096;
/// Raw chunks read from a stream before they are decoded in parallel.
const STREAM_BATCH: usize = 64;

enum Bytes {
    /// A memory-mapped file, and the file for reads that should not map pages.
    Mapped(memmap2::Mmap, File),
    Owned(Vec<u8>),
}

/// Bytes of a memory-mapped file decoded between releases of their pages.
const MAP_WINDOW: u64 = if cfg!(test) { 4096 } else { 16 << 20 };

/// How far before a faulting page Linux maps pages of a file: `fault_around_bytes` (64
/// KiB), or the whole folio the page is in, up to 2 MiB. A file written in large pieces
/// (as spoor's stages write their outputs) sits in the page cache in large folios, and
/// pages let go behind the reader came back with the next page it read: the next stage
/// of a pipeline kept a third of its input resident.
const FAULT_AROUND: u64 = 2 << 20;

impl Bytes {
    /// The chunk header at `at` (the caller checked it lies within the bytes).
    fn header_at(&self, at: usize) -> io::Result<[u8; chunk::HEADER_LEN]> {
        let mut h = [0u8; chunk::HEADER_LEN];
        match self {
            Bytes::Mapped(_, file) => {
                use std::os::unix::fs::FileExt;
                file.read_exact_at(&mut h, at as u64)?;
            }
            Bytes::Owned(v) => h.copy_from_slice(&v[at..at + chunk::HEADER_LEN]),
        }
        Ok(h)
    }

    /// The end chunk the bytes end with, if they do.
    fn end_chunk(&self) -> Option<End> {
        match self {
            Bytes::Mapped(_, file) => End::of_file(file),
            Bytes::Owned(v) => End::of_tail(v),
        }
    }

    /// Tells the kernel the mapped pages from `from` to `to` are no longer needed, and
    /// the 64 KiB before them: a fault maps the pages around it that the page cache holds
    /// (Linux's fault-around), so reading on from `to` maps again pages released behind it.
    fn release(&self, from: u64, to: u64) {
        if let Bytes::Mapped(m, _) = self {
            let page = 4096;
            let from = (from.saturating_sub(FAULT_AROUND) / page * page) as usize;
            let len = (to as usize).min(m.len()).saturating_sub(from);
            // The map is read-only and backed by the file: dropped pages are read back
            // from it if touched again, so their contents cannot change.
            unsafe {
                let _ = m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, len);
            }
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m, _) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// What a scan of a whole file's chunk headers found.
struct ChunkScan {
    blocks: Vec<ChunkLoc>,
    defs_chunk: Option<ChunkLoc>,
    index_chunk: Option<ChunkLoc>,
    end: Option<End>,
    /// Where and why the scan stopped before a clean end, and whether the file was cut
    /// short there (its tail missing rather than damaged).
    stopped: Option<(u64, String, bool)>,
}

/// Scans chunk headers only, from `pos`; payloads are checked when decoded. A mapped
/// file's headers are read with pread, so the scan maps no pages: the decoding then
/// maps each page once, and releases it once the blocks on it are handed on.
fn scan_chunks(name: &str, bytes: &Bytes, mut pos: u64, flags: u64) -> Result<ChunkScan, Error> {
    let file_len = bytes.len() as u64;
    let mut blocks = Vec::new();
    let mut defs_chunk = None;
    let mut index_chunk = None;
    let mut end = None;
    let mut stopped = None;
    loop {
        if pos == file_len {
            stopped = Some((pos, "the file ends without its end chunk: truncated".to_string(), true));
            break;
        }
        if file_len - pos < chunk::HEADER_LEN as u64 {
            stopped = Some((
                pos,
                format!(
                    "expected a {}-byte chunk header, found {} bytes: truncated",
                    chunk::HEADER_LEN,
                    file_len - pos
                ),
                true,
            ));
            break;
        }
        let at = pos as usize;
        let h = ChunkHeader::decode(&bytes.header_at(at).map_err(|e| Error::io(name, &e))?);
        if let Some(p) = h.problem(flags) {
            stopped = Some((pos, p, false));
            break;
        }
        let body = pos + chunk::HEADER_LEN as u64;
        if body + h.len as u64 > file_len {
            stopped = Some((
                pos,
                format!("chunk declares {} bytes, only {} remain: truncated", h.len, file_len - body),
                true,
            ));
            break;
        }
        let c = ChunkLoc { offset: pos, header: h };
        pos = body + h.len as u64;
        match h.kind {
            chunk::DEFS => defs_chunk = Some(c),
            chunk::BLOCK | chunk::MULTI_BLOCK | chunk::LOCAL_BLOCK | chunk::COMPACT_BLOCK => blocks.push(c),
            chunk::INDEX => index_chunk = Some(c),
            chunk::END => {
                let payload = payload_of(bytes, c);
                if crc32fast::hash(payload) != h.crc {
                    stopped = Some((c.offset, "end chunk fails its checksum".into(), false));
                    break;
                }
                end = End::decode(payload);
                if pos != file_len {
                    stopped = Some((
                        pos,
                        format!(
                            "expected the end of the file after the end chunk, found {} more bytes",
                            file_len - pos
                        ),
                        false,
                    ));
                }
                break;
            }
            _ => {} // optional chunk of a later minor version
        }
    }
    // A file that still ends with its end chunk was not cut short: the damage is in a
    // chunk's length, and what follows it would be lost without a word.
    if let Some((_, _, cut)) = &mut stopped {
        *cut = *cut && bytes.end_chunk().is_none();
    }
    Ok(ChunkScan { blocks, defs_chunk, index_chunk, end, stopped })
}

#[derive(Clone, Copy)]
struct ChunkLoc {
    offset: u64,
    header: ChunkHeader,
}

enum Source {
    /// The whole binary trace in memory: its chunks found by one scan of the headers.
    Whole {
        bytes: Bytes,
        blocks: Vec<ChunkLoc>,
        next: usize,
        /// Where the pages of a mapped file read block by block were last released.
        released: u64,
    },
    /// A binary trace read chunk by chunk.
    Stream {
        input: Box<dyn Read + Send>,
        offset: u64,
        finished: bool,
        blocks: u64,
        index_at: u64,
    },
    Text {
        parser: Box<TextParser<Box<dyn BufRead + Send>>>,
        finished: bool,
    },
}

/// A raw chunk read from a stream, not yet checked or decoded.
struct RawChunk {
    offset: u64,
    header: ChunkHeader,
    payload: Vec<u8>,
}

/// A trace being read: its definitions and header at once, its blocks on demand.
pub struct TraceReader {
    name: String,
    opts: ReadOptions,
    header: Option<Header>,
    defs: Definitions,
    /// The number of locations the definitions define, which blocks are checked against
    /// (kept when the definitions are taken).
    loc_count: usize,
    source: Source,
    index: Option<Vec<IndexEntry>>,
    end: Option<End>,
    report: SalvageReport,
}

fn is_gzip(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

/// The blocks of a [`TraceReader::read_ahead`], in order.
pub struct ReadAhead {
    rx: crate::queue::Receiver<Result<Block, Error>>,
    thread: std::thread::JoinHandle<TraceReader>,
    recycler: Recycler,
}

/// Gives blocks' event vectors back to the thread that decodes them: the next blocks
/// are decoded into their room, not into fresh pages the kernel must clear (a block's
/// events are megabytes; fresh pages for each cost about a tenth of a fold's time).
#[derive(Clone)]
pub struct Recycler(std::sync::mpsc::SyncSender<Vec<Event>>);

impl Recycler {
    /// Hands `events` back (dropped when enough are waiting already).
    pub fn recycle(&self, events: Vec<Event>) {
        let _ = self.0.try_send(events);
    }
}

impl Iterator for ReadAhead {
    type Item = Result<Block, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        self.rx.recv()
    }
}

impl ReadAhead {
    /// Hands a consumed block's room back for the next blocks.
    pub fn recycle(&self, block: Block) {
        self.recycler.recycle(block.events);
    }

    /// A handle that hands rooms back from other threads.
    pub fn recycler(&self) -> Recycler {
        self.recycler.clone()
    }

    /// Stops reading and gives the reader back: its definitions then hold every
    /// definitions chunk read so far.
    pub fn finish(self) -> TraceReader {
        drop(self.rx);
        drop(self.recycler);
        self.thread.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// Whether the trace at `path` can be read only once, as it comes: standard input (`-`),
/// a pipe (a FIFO, `<(...)`), a terminal. Whoever reads a trace twice, or looks at its
/// first bytes before reading it, must read such a one once (or copy it first).
pub fn is_stream(path: &str) -> bool {
    path == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

impl TraceReader {
    /// Opens `path`, or standard input for `-`, detecting the form from its first bytes.
    pub fn open(path: &str, opts: ReadOptions) -> Result<Self, Error> {
        if path == "-" {
            let stdin: Box<dyn Read + Send> = Box::new(io::stdin());
            return Self::from_reader("<stdin>", stdin, opts);
        }
        let file = File::open(path).map_err(|e| Error::io(path, &e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, &e))?;
        if meta.is_dir() {
            return Err(Error::io(path, &io::Error::other("is a directory, expected a trace file")));
        }
        let mut first = [0u8; 8];
        let n = read_up_to(&mut &file, &mut first).map_err(|e| Error::io(path, &e))?;
        if meta.is_file() && n == 8 && first == binary::MAGIC {
            // Safety of the map: spoor does not write a file while reading it; a file
            // truncated underneath by another program is outside what any reader can guard.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, &e))?;
            return Self::from_whole(path, Bytes::Mapped(map, file), opts);
        }
        // Not a seekable binary trace: read it as a stream from the start.
        let rest = io::Cursor::new(first[..n].to_vec()).chain(file);
        Self::from_reader(path, Box::new(rest), opts)
    }

    /// Reads a trace held in memory (any form).
    pub fn from_bytes(name: &str, bytes: Vec<u8>, opts: ReadOptions) -> Result<Self, Error> {
        if bytes.starts_with(&binary::MAGIC) {
            return Self::from_whole(name, Bytes::Owned(bytes), opts);
        }
        Self::from_reader(name, Box::new(io::Cursor::new(bytes)), opts)
    }

    /// Reads a trace from any byte stream (any form).
    pub fn from_reader(name: &str, input: Box<dyn Read + Send>, opts: ReadOptions) -> Result<Self, Error> {
        let mut input = BufReader::with_capacity(1 << 16, input);
        let first = input.fill_buf().map_err(|e| Error::io(name, &e))?;
        if is_gzip(first) {
            let gz: Box<dyn Read + Send> = Box::new(flate2::read::MultiGzDecoder::new(input));
            let mut inner = BufReader::with_capacity(1 << 16, gz);
            let first = inner.fill_buf().map_err(|e| gzip_error(name, &e))?;
            if is_gzip(first) {
                return Err(Error::corrupt(name, 0, "gzip inside gzip: expected one layer of compression"));
            }
            return Self::from_buffered(name, Box::new(inner), opts);
        }
        Self::from_buffered(name, Box::new(input), opts)
    }

    fn from_buffered(
        name: &str,
        mut input: Box<dyn BufRead + Send>,
        opts: ReadOptions,
    ) -> Result<Self, Error> {
        let first = input.fill_buf().map_err(|e| Error::io(name, &e))?;
        if first.is_empty() {
            return Err(Error::corrupt(name, 0, "the input is empty: expected a spoor trace"));
        }
        if first.starts_with(&binary::MAGIC[..first.len().min(8)]) {
            return Self::from_stream(name, input, opts);
        }
        if !text::looks_like_text(first) {
            return Err(Error::corrupt(
                name,
                0,
                "not a spoor trace: expected the binary magic \\x89SPOOR\\r\\n, gzip, or the text form",
            ));
        }
        let mut r = TraceReader {
            name: name.into(),
            opts,
            header: None,
            defs: Definitions::new(),
            loc_count: 0,
            source: Source::Text { parser: Box::new(TextParser::new(name, input)), finished: false },
            index: None,
            end: None,
            report: SalvageReport::default(),
        };
        r.prime_text()?;
        Ok(r)
    }

    fn new_binary(name: &str, opts: ReadOptions, header: Header, source: Source) -> Self {
        TraceReader {
            name: name.into(),
            opts,
            header: Some(header),
            defs: Definitions::new(),
            loc_count: 0,
            source,
            index: None,
            end: None,
            report: SalvageReport::default(),
        }
    }

    fn from_whole(name: &str, bytes: Bytes, opts: ReadOptions) -> Result<Self, Error> {
        let header = Header::decode(&bytes).map_err(|e| header_error(name, e))?;
        let file_len = bytes.len() as u64;
        let pos = header.header_len as u64;
        if pos > file_len {
            return Err(Error::corrupt(
                name,
                12,
                format!("header length {pos} is beyond the end of the file"),
            ));
        }
        let ChunkScan { blocks, defs_chunk, index_chunk, end, stopped } =
            scan_chunks(name, &bytes, pos, header.flags)?;
        let mut r =
            Self::new_binary(name, opts, header, Source::Whole { bytes, blocks, next: 0, released: 0 });
        match stopped {
            Some((off, why, true)) => r.cut_short(off, file_len - off, why),
            Some((off, why, false)) => r.stop_or_fail(off, file_len - off, why)?,
            None => {}
        }
        let Source::Whole { bytes, blocks, .. } = &r.source else { unreachable!("a whole source") };
        let Some(dc) = defs_chunk else {
            return Err(Error::corrupt(
                name,
                header.header_len as u64,
                "expected a definitions chunk, found none",
            ));
        };
        r.defs = decode_chunk(name, &bytes[..], dc, binary::decode_defs)?;
        r.loc_count = r.defs.locations.len();
        if let Some(ic) = index_chunk {
            r.index = Some(decode_chunk(name, &bytes[..], ic, binary::decode_index)?);
        }
        let block_count = blocks.len() as u64;
        if let Some(e) = end {
            r.check_end(&e, index_chunk, block_count, file_len)?;
        }
        r.end = end;
        Ok(r)
    }

    /// The end chunk must point at the index and count the blocks the file holds.
    fn check_end(
        &mut self,
        e: &End,
        index_chunk: Option<ChunkLoc>,
        block_count: u64,
        file_len: u64,
    ) -> Result<(), Error> {
        let index_at = index_chunk.map_or(0, |c| c.offset);
        if e.index_offset != index_at {
            let msg = format!(
                "the end chunk puts the index at byte {}, the file has it at {index_at}",
                e.index_offset
            );
            self.stop_or_fail(file_len, 0, msg)?;
        }
        if e.blocks != block_count {
            let msg = format!("the end chunk counts {} blocks, the file holds {block_count}", e.blocks);
            self.stop_or_fail(file_len, 0, msg)?;
        }
        Ok(())
    }

    fn from_stream(name: &str, input: Box<dyn BufRead + Send>, opts: ReadOptions) -> Result<Self, Error> {
        let mut input: Box<dyn Read + Send> = Box::new(input);
        let mut head = [0u8; binary::HEADER_LEN as usize];
        let n = read_up_to(&mut input, &mut head).map_err(|e| Error::io(name, &e))?;
        let header = Header::decode(&head[..n]).map_err(|e| header_error(name, e))?;
        let extra = header.header_len as u64 - binary::HEADER_LEN as u64;
        let skipped =
            io::copy(&mut (&mut input).take(extra), &mut io::sink()).map_err(|e| Error::io(name, &e))?;
        if skipped != extra {
            return Err(Error::corrupt(name, n as u64 + skipped, "the header ends early: truncated"));
        }
        let source = Source::Stream {
            input,
            offset: header.header_len as u64,
            finished: false,
            blocks: 0,
            index_at: 0,
        };
        let mut r = Self::new_binary(name, opts, header, source);
        // The definitions come before the first block, after optional chunks perhaps.
        let mut first = r.read_raw()?;
        while first.as_ref().is_some_and(|c| c.header.kind >= chunk::FIRST_OPTIONAL) {
            first = r.read_raw()?;
        }
        match first {
            Some(c) if c.header.kind == chunk::DEFS => r.apply_defs(&c)?,
            Some(c) => {
                return Err(Error::corrupt(
                    name,
                    c.offset,
                    format!("expected the definitions chunk, found a chunk of type {}", c.header.kind),
                ))
            }
            None if r.opts.salvage && r.report.stopped.is_some() => {}
            None => {
                return Err(Error::corrupt(
                    name,
                    header.header_len as u64,
                    "expected the definitions chunk, found none",
                ))
            }
        }
        Ok(r)
    }

    fn prime_text(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// The input ends early at `offset` (a file whose writer stopped, or was stopped,
    /// before its end): reading goes on with every whole chunk before it, and says so.
    fn cut_short(&mut self, offset: u64, lost: u64, why: String) {
        if !self.opts.salvage {
            let left_out =
                if lost > 0 { format!(", the {lost} bytes from there on left out") } else { String::new() };
            crate::notes::note(&format!(
                "{}: cut short at byte {offset} ({why}): its events up to there are read{left_out}",
                self.name
            ));
        }
        self.report.stopped = Some(Stop { offset, lost, why });
    }

    /// Fails, or in salvage mode records where reading stopped.
    fn stop_or_fail(&mut self, offset: u64, lost: u64, why: String) -> Result<(), Error> {
        if self.opts.salvage {
            self.report.stopped = Some(Stop { offset, lost, why });
            Ok(())
        } else {
            Err(Error::corrupt(&self.name, offset, why))
        }
    }

    fn apply_defs(&mut self, c: &RawChunk) -> Result<(), Error> {
        check_crc(&self.name, c.offset, c.header, &c.payload)?;
        self.defs = binary::decode_defs(&c.payload).map_err(|e| at_payload(&self.name, c.offset, e))?;
        self.loc_count = self.defs.locations.len();
        Ok(())
    }

    /// Reads the next chunk of a stream; `None` after the end chunk or where a salvaging read stopped.
    fn read_raw(&mut self) -> Result<Option<RawChunk>, Error> {
        let Source::Stream { input, offset, finished, blocks, index_at } = &mut self.source else {
            return Ok(None);
        };
        if *finished {
            return Ok(None);
        }
        let at = *offset;
        let mut hb = [0u8; chunk::HEADER_LEN];
        let n = read_up_to(input, &mut hb).map_err(|e| self_io(&self.name, &e))?;
        if n < chunk::HEADER_LEN {
            *finished = true;
            let why = if n == 0 {
                "the input ends without its end chunk: truncated".to_string()
            } else {
                format!("expected a {}-byte chunk header, found {n} bytes: truncated", chunk::HEADER_LEN)
            };
            self.cut_short(at, n as u64, why);
            return Ok(None);
        }
        let h = ChunkHeader::decode(&hb);
        if let Some(p) = h.problem(self.header.map_or(0, |h| h.flags)) {
            *finished = true;
            self.stop_or_fail(at, 0, p)?;
            return Ok(None);
        }
        // Grows with the bytes that actually arrive, never by the declared length alone.
        let mut payload = Vec::with_capacity((h.len as usize).min(1 << 20));
        let got = input.take(h.len as u64).read_to_end(&mut payload).map_err(|e| self_io(&self.name, &e))?;
        *offset += (chunk::HEADER_LEN + got) as u64;
        if got < h.len as usize {
            *finished = true;
            let why = format!("chunk declares {} bytes, only {got} remain: truncated", h.len);
            let lost = (chunk::HEADER_LEN + got) as u64;
            // Input that ends with an end chunk was not cut short: the length is damaged.
            let mut tail = hb.to_vec();
            tail.extend_from_slice(&payload);
            if End::of_tail(&tail).is_some() {
                self.stop_or_fail(at, lost, why)?;
            } else {
                self.cut_short(at, lost, why);
            }
            return Ok(None);
        }
        match h.kind {
            chunk::BLOCK | chunk::MULTI_BLOCK | chunk::LOCAL_BLOCK | chunk::COMPACT_BLOCK => *blocks += 1,
            chunk::INDEX => *index_at = at,
            _ => {}
        }
        if h.kind == chunk::END {
            *finished = true;
            let (blocks, index_at) = (*blocks, *index_at);
            check_crc(&self.name, at, h, &payload)?;
            self.end = End::decode(&payload);
            if let Some(e) = self.end.filter(|e| e.blocks != blocks) {
                let msg = format!("the end chunk counts {} blocks, the input held {blocks}", e.blocks);
                self.stop_or_fail(at, 0, msg)?;
            }
            if let Some(e) = self.end.filter(|e| e.index_offset != index_at) {
                let msg = format!(
                    "the end chunk puts the index at byte {}, the input had it at {index_at}",
                    e.index_offset
                );
                self.stop_or_fail(at, 0, msg)?;
            }
            let mut extra = [0u8; 1];
            let Source::Stream { input, .. } = &mut self.source else { unreachable!("a stream source") };
            if read_up_to(input, &mut extra).map_err(|e| self_io(&self.name, &e))? != 0 {
                let off = at + (chunk::HEADER_LEN + got) as u64;
                self.stop_or_fail(
                    off,
                    0,
                    "expected the end of the input after the end chunk, found more bytes".into(),
                )?;
            }
            return Ok(None);
        }
        Ok(Some(RawChunk { offset: at, header: h, payload }))
    }

    /// The next batch of raw block chunks from a stream (definitions applied on the way).
    fn read_stream_batch(&mut self, max: usize) -> Result<Vec<RawChunk>, Error> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some(c) = self.read_raw()? else { break };
            match c.header.kind {
                chunk::DEFS => self.apply_defs(&c)?,
                chunk::BLOCK | chunk::MULTI_BLOCK | chunk::LOCAL_BLOCK | chunk::COMPACT_BLOCK => out.push(c),
                chunk::INDEX => {
                    check_crc(&self.name, c.offset, c.header, &c.payload)?;
                    self.index = Some(
                        binary::decode_index(&c.payload).map_err(|e| at_payload(&self.name, c.offset, e))?,
                    );
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The name errors give the input (its path, or `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header of a binary trace; `None` for the text form.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The definitions. For a file, the final ones; for a stream, those read so far.
    pub fn defs(&self) -> &Definitions {
        match &self.source {
            Source::Text { parser, .. } => parser.defs(),
            _ => &self.defs,
        }
    }

    /// Takes the definitions out of the reader, for a caller that keeps many readers open
    /// and has taken in what it needs of their definitions (spoor-merge of a run's
    /// thousands of per-process traces, each defining every process). Blocks still decode
    /// as before, checked against the number of locations; what reads the definitions
    /// afterwards (`defs`, the parallel readers' closures) finds none, until a stream's
    /// later definitions chunk brings new ones. Binary traces only: a text form's
    /// definitions stay with its parser.
    pub fn take_defs(&mut self) -> Definitions {
        std::mem::take(&mut self.defs)
    }

    /// The number of locations of the definitions, kept when they are taken.
    pub fn location_count(&self) -> usize {
        match &self.source {
            Source::Text { parser, .. } => parser.defs().locations.len(),
            _ => self.loc_count,
        }
    }

    /// The trailing index, once read (at open for files, at the end for streams).
    pub fn index(&self) -> Option<&[IndexEntry]> {
        self.index.as_deref()
    }

    /// What the end chunk says, once read.
    pub fn end(&self) -> Option<End> {
        self.end
    }

    /// What a salvaging read lost so far.
    pub fn salvage_report(&self) -> &SalvageReport {
        &self.report
    }

    /// Decodes the blocks on another thread, at most `depth` ahead of their consumer,
    /// in the order of the input; the first error ends them. What a consumer does with a
    /// block overlaps the decoding of the next ones.
    pub fn read_ahead(mut self, depth: usize) -> ReadAhead {
        let (tx, rx) = crate::queue::bounded(depth);
        let (back, spares) = std::sync::mpsc::sync_channel(depth.max(1) + 2);
        let thread = std::thread::spawn(move || {
            loop {
                let b = self.next_block_into(spares.try_recv().unwrap_or_default());
                let last = !matches!(b, Ok(Some(_)));
                if let Some(b) = b.transpose() {
                    if tx.send(b).is_err() {
                        break;
                    }
                }
                if last {
                    break;
                }
            }
            self
        });
        ReadAhead { rx, thread, recycler: Recycler(back) }
    }

    /// The next block in the order of the input; `None` at the end.
    pub fn next_block(&mut self) -> Result<Option<Block>, Error> {
        self.next_block_into(Vec::new())
    }

    /// [`TraceReader::next_block`], decoded into `room` (cleared first): the room of a
    /// block already consumed.
    pub fn next_block_into(&mut self, mut room: Vec<Event>) -> Result<Option<Block>, Error> {
        room.clear();
        loop {
            match &mut self.source {
                Source::Whole { bytes, blocks, next, released } => {
                    let Some(&c) = blocks.get(*next) else { return Ok(None) };
                    *next += 1;
                    let room = std::mem::take(&mut room);
                    let r = decode_block_chunk(&self.name, &bytes[..], c, self.loc_count, room);
                    // The pages read go every so often, so memory does not grow with the
                    // file (a mapped page read stays resident until released).
                    let end = c.offset + (chunk::HEADER_LEN as u64) + u64::from(c.header.len);
                    if end.saturating_sub(*released) >= MAP_WINDOW || *next == blocks.len() {
                        bytes.release(*released, end);
                        *released = end;
                    }
                    match r {
                        Ok(b) => return Ok(Some(b)),
                        Err(e) if self.opts.salvage => self.report.skip(c.offset, e.message),
                        Err(e) => return Err(e),
                    }
                }
                Source::Stream { .. } => {
                    let Some(c) = self.read_stream_batch(1)?.pop() else { return Ok(None) };
                    match decode_raw(&self.name, &c, self.loc_count, std::mem::take(&mut room)) {
                        Ok(b) => return Ok(Some(b)),
                        Err(e) if self.opts.salvage => self.report.skip(c.offset, e.message),
                        Err(e) => return Err(e),
                    }
                }
                Source::Text { parser, finished } => {
                    if *finished {
                        return Ok(None);
                    }
                    let mut events = std::mem::take(&mut room);
                    while events.len() < TEXT_BLOCK {
                        match parser.next_event()? {
                            Some(ev) => events.push(ev),
                            None => {
                                *finished = true;
                                break;
                            }
                        }
                    }
                    if events.is_empty() {
                        return Ok(None);
                    }
                    return Ok(Some(Block { loc: None, events }));
                }
            }
        }
    }

    /// The next block in the order of the input, not decoded: its payload (CRC-32
    /// checked) for the binary format, so that it can be decoded lazily (see
    /// [`crate::raw::BlockCursor`]); decoded events for the text form. The pages of a
    /// mapped file are released once copied, so memory does not grow with the file.
    pub fn next_raw_block(&mut self) -> Result<Option<NextBlock>, Error> {
        loop {
            match &mut self.source {
                Source::Whole { bytes, blocks, next, .. } => {
                    let Some(&c) = blocks.get(*next) else { return Ok(None) };
                    *next += 1;
                    let payload = payload_of(&bytes[..], c);
                    let r = check_crc(&self.name, c.offset, c.header, payload);
                    let raw = OwnedRawBlock { offset: c.offset, header: c.header, payload: payload.to_vec() };
                    bytes.release(c.offset, c.offset + (chunk::HEADER_LEN as u64) + c.header.len as u64);
                    match r {
                        Ok(()) => return Ok(Some(NextBlock::Raw(raw))),
                        Err(e) if self.opts.salvage => self.report.skip(c.offset, e.message),
                        Err(e) => return Err(e),
                    }
                }
                Source::Stream { .. } => {
                    let Some(c) = self.read_stream_batch(1)?.pop() else { return Ok(None) };
                    match check_crc(&self.name, c.offset, c.header, &c.payload) {
                        Ok(()) => {
                            let raw =
                                OwnedRawBlock { offset: c.offset, header: c.header, payload: c.payload };
                            return Ok(Some(NextBlock::Raw(raw)));
                        }
                        Err(e) if self.opts.salvage => self.report.skip(c.offset, e.message),
                        Err(e) => return Err(e),
                    }
                }
                Source::Text { .. } => return Ok(self.next_block()?.map(NextBlock::Decoded)),
            }
        }
    }

    /// Decodes every remaining block, in parallel where the input allows, and returns
    /// `f` of each in input order. The first error in input order is returned, so the
    /// result does not depend on the number of threads.
    pub fn par_map_blocks<T, F>(&mut self, f: F) -> Result<Vec<T>, Error>
    where
        T: Send,
        F: Fn(&Definitions, Block) -> T + Sync,
    {
        let mut out = Vec::new();
        self.par_blocks(
            |defs, name, offset, h, payload| {
                decode_payload(name, offset, h, payload, defs.locations.len(), Vec::new()).map(|b| f(defs, b))
            },
            &f,
            &mut |t| {
                out.push(t);
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// Like [`TraceReader::par_map_blocks`], but folds each block's events into a value
    /// as they are decoded, without collecting them: `init` starts the value of a block,
    /// `step` takes each event. The fastest way to visit every event.
    pub fn par_fold_blocks<T, I, S>(&mut self, init: I, step: S) -> Result<Vec<T>, Error>
    where
        T: Send,
        I: Fn(&Definitions) -> T + Sync,
        S: Fn(&mut T, Event) + Sync,
    {
        let mut out = Vec::new();
        self.par_fold_blocks_each(init, step, |t| {
            out.push(t);
            Ok(())
        })?;
        Ok(out)
    }

    /// Like [`TraceReader::par_fold_blocks`], but hands each block's value to `each`
    /// in input order as soon as it is decoded, so a consumer can process the trace in
    /// order while only a few folded blocks wait for it. An error from `each` stops the
    /// read and is returned as it is: `each` chooses the error type, so a consumer
    /// stops with its own error rather than a reading error.
    pub fn par_fold_blocks_each<T, I, S, C, E>(&mut self, init: I, step: S, mut each: C) -> Result<(), E>
    where
        T: Send,
        I: Fn(&Definitions) -> T + Sync,
        S: Fn(&mut T, Event) + Sync,
        C: FnMut(T) -> Result<(), E>,
        E: From<Error>,
    {
        let fold_text = |defs: &Definitions, b: Block| {
            let mut t = init(defs);
            for e in b.events {
                step(&mut t, e);
            }
            t
        };
        self.par_blocks(
            |defs, name, offset, h, payload| {
                check_crc(name, offset, h, payload)?;
                let mut t = init(defs);
                binary::decode_block(payload, block_form(h), defs.locations.len(), |e| step(&mut t, e))
                    .map_err(|e| at_payload(name, offset, e))?;
                Ok(t)
            },
            &fold_text,
            &mut each,
        )
    }

    /// Like [`TraceReader::par_fold_blocks_each`], but hands `decode` each block chunk
    /// as it is in the input ([`RawBlock`]: its place, header and payload, CRC not yet
    /// checked) instead of its events, so that it can decode only what it needs or
    /// copy the block. Blocks of the text form go to `text` instead. Results reach
    /// `each` in input order; salvaging skips blocks whose `decode` fails. An error
    /// from `each` (of the type it chooses) stops the read and is returned.
    pub fn par_raw_blocks_each<T, D, X, C, E>(&mut self, decode: D, text: X, mut each: C) -> Result<(), E>
    where
        T: Send,
        D: Fn(&Definitions, RawBlock<'_>) -> Result<T, Error> + Sync,
        X: Fn(&Definitions, Block) -> T,
        C: FnMut(T) -> Result<(), E>,
        E: From<Error>,
    {
        self.par_blocks(
            |defs, name, offset, header, payload| decode(defs, RawBlock { name, offset, header, payload }),
            &text,
            &mut each,
        )
    }

    /// Runs `decode` on every remaining binary block (in parallel, results in input
    /// order), or `text` on every block of the text form.
    fn par_blocks<T, D, X, E>(
        &mut self,
        decode: D,
        text: &X,
        out: &mut dyn FnMut(T) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<Error>,
        T: Send,
        D: Fn(&Definitions, &str, u64, ChunkHeader, &[u8]) -> Result<T, Error> + Sync,
        X: Fn(&Definitions, Block) -> T,
    {
        match &mut self.source {
            Source::Whole { bytes, blocks, next, .. } => {
                let todo = &blocks[*next..];
                *next = blocks.len();
                let (name, defs) = (&self.name, &self.defs);
                let (salvage, report) = (self.opts.salvage, &mut self.report);
                // The consumer decodes too whenever the next block is not ready, so it
                // counts as one of the decoding threads.
                let threads = rayon::current_num_threads().saturating_sub(1).max(1);
                // Decoded blocks waiting for the consumer: enough to keep every thread
                // busy through uneven blocks, few enough to stay in the caches.
                let ahead = 4 * threads + 8;
                // The pages of a mapped file are let go as the blocks are handed on, so
                // memory stays bounded whatever the file's length.
                let mut released = todo.first().map_or(0, |c| c.offset);
                let bytes = &*bytes;
                ordered::for_each_in_order(
                    todo,
                    threads,
                    ahead,
                    |_, &c| decode(defs, name, c.offset, c.header, payload_of(&bytes[..], c)),
                    |i, r| -> Result<(), E> {
                        let c = todo[i];
                        match r {
                            Ok(t) => out(t)?,
                            Err(e) if salvage => report.skip(c.offset, e.message),
                            Err(e) => return Err(e.into()),
                        }
                        let end = c.offset + (chunk::HEADER_LEN as u64) + c.header.len as u64;
                        if end - released >= MAP_WINDOW || i + 1 == todo.len() {
                            bytes.release(released, end);
                            released = end;
                        }
                        Ok(())
                    },
                )?;
            }
            Source::Stream { .. } => loop {
                let batch = self.read_stream_batch(STREAM_BATCH)?;
                if batch.is_empty() {
                    break;
                }
                let (name, defs) = (&self.name, &self.defs);
                let results: Vec<Result<T, Error>> =
                    batch.par_iter().map(|c| decode(defs, name, c.offset, c.header, &c.payload)).collect();
                for (r, c) in results.into_iter().zip(&batch) {
                    match r {
                        Ok(t) => out(t)?,
                        Err(e) if self.opts.salvage => self.report.skip(c.offset, e.message),
                        Err(e) => return Err(e.into()),
                    }
                }
            },
            Source::Text { .. } => {
                while let Some(b) = self.next_block()? {
                    out(text(self.defs(), b))?;
                }
            }
        }
        Ok(())
    }

    /// Every remaining event, in input order.
    pub fn events(self) -> Events {
        Events { reader: self, block: Vec::new().into_iter(), failed: false }
    }

    /// Reads everything: the final definitions and all events in input order.
    pub fn read_all(mut self) -> Result<(Definitions, Vec<Event>), Error> {
        let mut events = Vec::new();
        while let Some(b) = self.next_block()? {
            events.extend(b.events);
        }
        let defs = match self.source {
            Source::Text { parser, .. } => parser.into_defs(),
            _ => self.defs,
        };
        Ok((defs, events))
    }
}

/// What [`TraceReader::next_raw_block`] gives.
pub enum NextBlock {
    /// A block of the binary format, not decoded.
    Raw(OwnedRawBlock),
    /// Events of the text form.
    Decoded(Block),
}

/// A block chunk of the binary format with its payload (CRC-32 checked).
pub struct OwnedRawBlock {
    /// Byte offset of the chunk header.
    pub offset: u64,
    /// The chunk's header.
    pub header: ChunkHeader,
    /// The chunk's payload, CRC not checked.
    pub payload: Vec<u8>,
}

impl OwnedRawBlock {
    /// How the block lays out its events.
    pub fn form(&self) -> Form {
        block_form(self.header)
    }

    /// Whether it is a multi-location block (of either form).
    pub fn multi(&self) -> bool {
        self.form().multi()
    }

    /// A decoding problem of the payload as an error at its place in input `name`.
    pub fn error(&self, name: &str, e: DecodeError) -> Error {
        at_payload(name, self.offset, e)
    }
}

/// A block chunk as it is in the input (see [`TraceReader::par_raw_blocks_each`]).
#[derive(Clone, Copy)]
pub struct RawBlock<'a> {
    /// The input's name, for errors.
    pub name: &'a str,
    /// Byte offset of the chunk header.
    pub offset: u64,
    /// The chunk's header.
    pub header: ChunkHeader,
    /// The chunk's payload, CRC not checked.
    pub payload: &'a [u8],
}

impl RawBlock<'_> {
    /// How the block lays out its events.
    pub fn form(&self) -> Form {
        block_form(self.header)
    }

    /// Whether it is a multi-location block (of either form).
    pub fn multi(&self) -> bool {
        self.form().multi()
    }

    /// Checks the payload against the chunk's CRC-32.
    pub fn check_crc(&self) -> Result<(), Error> {
        check_crc(self.name, self.offset, self.header, self.payload)
    }

    /// A decoding problem of the payload as an error at its place in the input.
    pub fn error(&self, e: DecodeError) -> Error {
        at_payload(self.name, self.offset, e)
    }
}

/// Iterator over the events of a reader; stops after the first error.
pub struct Events {
    reader: TraceReader,
    block: std::vec::IntoIter<Event>,
    failed: bool,
}

impl Events {
    /// The reader behind the events (its definitions, report).
    pub fn reader(&self) -> &TraceReader {
        &self.reader
    }
}

impl Iterator for Events {
    type Item = Result<Event, Error>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.block.next() {
                return Some(Ok(e));
            }
            if self.failed {
                return None;
            }
            match self.reader.next_block() {
                Ok(Some(b)) => self.block = b.events.into_iter(),
                Ok(None) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

fn payload_of(bytes: &[u8], c: ChunkLoc) -> &[u8] {
    let s = c.offset as usize + chunk::HEADER_LEN;
    &bytes[s..s + c.header.len as usize]
}

/// The form of a block chunk (only block chunks reach the decoders).
fn block_form(h: ChunkHeader) -> Form {
    Form::of_chunk(h.kind).unwrap_or(Form::Single)
}

fn check_crc(name: &str, offset: u64, h: ChunkHeader, payload: &[u8]) -> Result<(), Error> {
    let crc = crc32fast::hash(payload);
    if crc != h.crc {
        return Err(Error::corrupt(
            name,
            offset,
            format!(
                "chunk fails its checksum (expected CRC-32 {:#010x}, computed {crc:#010x}): corrupt",
                h.crc
            ),
        ));
    }
    Ok(())
}

fn at_payload(name: &str, chunk_offset: u64, e: DecodeError) -> Error {
    Error::corrupt(name, chunk_offset + chunk::HEADER_LEN as u64 + e.offset as u64, e.message)
}

fn decode_chunk<T>(
    name: &str,
    bytes: &[u8],
    c: ChunkLoc,
    f: impl Fn(&[u8]) -> Result<T, DecodeError>,
) -> Result<T, Error> {
    let payload = payload_of(bytes, c);
    check_crc(name, c.offset, c.header, payload)?;
    f(payload).map_err(|e| at_payload(name, c.offset, e))
}

fn decode_payload(
    name: &str,
    offset: u64,
    h: ChunkHeader,
    payload: &[u8],
    locs: usize,
    mut events: Vec<Event>,
) -> Result<Block, Error> {
    check_crc(name, offset, h, payload)?;
    // Room for the declared events up front (every event takes at least a byte, so a
    // hostile count cannot reserve more than the payload justifies).
    let declared = binary::block_prefix(&mut crate::varint::Cursor::new(payload), block_form(h), locs)
        .map_or(0, |(_, count)| count.min(payload.len() as u64));
    events.clear();
    events.reserve(declared as usize);
    let prefix = binary::decode_block(payload, block_form(h), locs, |e| events.push(e))
        .map_err(|e| at_payload(name, offset, e))?;
    Ok(Block { loc: prefix.loc, events })
}

fn decode_block_chunk(
    name: &str,
    bytes: &[u8],
    c: ChunkLoc,
    locs: usize,
    room: Vec<Event>,
) -> Result<Block, Error> {
    decode_payload(name, c.offset, c.header, payload_of(bytes, c), locs, room)
}

fn decode_raw(name: &str, c: &RawChunk, locs: usize, room: Vec<Event>) -> Result<Block, Error> {
    decode_payload(name, c.offset, c.header, &c.payload, locs, room)
}

fn header_error(name: &str, e: binary::HeaderError) -> Error {
    match e {
        binary::HeaderError::NewerMajor(..) | binary::HeaderError::RequiredFlags(_) => {
            Error::version(name, e.to_string())
        }
        binary::HeaderError::Magic => Error::corrupt(name, 0, e.to_string()),
        _ => Error::corrupt(name, 8, e.to_string()),
    }
}

fn gzip_error(name: &str, e: &io::Error) -> Error {
    Error::corrupt(name, 0, format!("bad gzip stream: {e}"))
}

fn self_io(name: &str, e: &io::Error) -> Error {
    // Errors of the decompressor surface as InvalidInput/InvalidData: corrupt gzip, not an OS failure.
    if matches!(e.kind(), io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput) {
        Error { offset: None, ..Error::corrupt(name, 0, format!("bad gzip stream: {e}")) }
    } else {
        Error::io(name, e)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TraceWriter, WriterOptions};

    /// A trace of many small blocks: with the unit tests' 4 KiB window, dozens of
    /// releases of the mapped pages.
    fn many_blocks() -> (Vec<u8>, Vec<Event>) {
        blocks_of_steps(200)
    }

    fn blocks_of_steps(steps: u64) -> (Vec<u8>, Vec<Event>) {
        let spec =
            spoor_synth::Spec { procs: 8, steps, ..spoor_synth::Spec::new(spoor_synth::Workload::Stencil) };
        let mut events = Vec::new();
        spoor_synth::generate(&spec, &mut events).unwrap();
        let defs = spoor_synth::definitions(&spec);
        let mut w =
            TraceWriter::new(Vec::new(), &defs, WriterOptions { block_events: 50, ..Default::default() })
                .unwrap();
        for e in &events {
            w.write(e).unwrap();
        }
        let bytes = w.finish().unwrap();
        // The file's order (blocks per location), read one block after the other.
        let (_, events) =
            TraceReader::from_bytes("t", bytes.clone(), ReadOptions::default()).unwrap().read_all().unwrap();
        (bytes, events)
    }

    fn folded(bytes: Vec<u8>, salvage: bool) -> Result<(Vec<Event>, usize), Error> {
        let mut r = TraceReader::from_bytes("t", bytes, ReadOptions { salvage })?;
        let mut got = Vec::new();
        r.par_fold_blocks_each(
            |_| Vec::new(),
            |v: &mut Vec<Event>, e| v.push(e),
            |v| {
                got.extend(v);
                Ok::<_, Error>(())
            },
        )?;
        Ok((got, r.salvage_report().bad_blocks.len()))
    }

    #[test]
    fn blocks_decoded_ahead_arrive_in_order_across_page_releases() {
        let (bytes, events) = many_blocks();
        assert!(bytes.len() as u64 > 20 * MAP_WINDOW, "{} bytes: too few releases", bytes.len());
        let (got, bad) = folded(bytes, false).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(got.len(), events.len());
        assert!(got == events, "the events read are not the file's, in its order");
    }

    /// The resident bytes of this process's mappings of `path` (Linux: /proc/self/smaps).
    #[cfg(target_os = "linux")]
    fn mapped_resident(path: &std::path::Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let (mut ours, mut kib) = (false, 0);
        for line in smaps.lines() {
            if line.split_whitespace().next().is_some_and(|w| w.contains('-') && !w.ends_with(':')) {
                ours = line.ends_with(&*path.to_string_lossy());
            } else if let Some(v) = line.strip_prefix("Rss:").filter(|_| ours) {
                kib += v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
            }
        }
        kib * 1024
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_mapped_file_read_block_by_block_lets_its_pages_go() {
        let (bytes, events) = blocks_of_steps(2000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.spoor");
        std::fs::write(&path, &bytes).unwrap();
        let mut r = TraceReader::open(path.to_str().unwrap(), ReadOptions::default()).unwrap();
        let mut got = Vec::new();
        while let Some(b) = r.next_block().unwrap() {
            got.extend(b.events);
        }
        assert!(got == events, "the events read are not the file's, in its order");
        // What is left mapped is the last window, the pages Linux maps around a fault (or
        // the page cache's larger folios): not the file, as it would be without releases.
        let left = mapped_resident(&path);
        assert!(bytes.len() > 2 << 20, "{} bytes", bytes.len());
        assert!(left < bytes.len() as u64 / 3, "{left} of {} bytes resident", bytes.len());
    }

    #[test]
    fn a_bad_block_in_the_middle_stops_the_read_or_is_skipped() {
        let (mut bytes, events) = many_blocks();
        // A byte in the middle of the file: inside some block's payload (its CRC fails).
        let at = bytes.len() / 2;
        bytes[at] ^= 0x40;
        assert!(folded(bytes.clone(), false).is_err());
        let (got, bad) = folded(bytes, true).unwrap();
        assert_eq!(bad, 1);
        assert!(
            got.len() < events.len() && got.len() >= events.len() - 50,
            "{} of {}",
            got.len(),
            events.len()
        );
        // What is kept is the trace without one block, in order.
        let mut it = events.iter();
        assert!(got.iter().all(|g| it.any(|e| e == g)), "events out of order");
    }
}
