//! Writes the binary trace format: header, definitions, blocks, index, end.

use crate::binary::{self, chunk, flags, BlockEncoder, End, Header, IndexEntry};
use crate::raw::EncodedBlock;
use spoor_model::{Definitions, Event, LocId};
use std::io::{self, Write};

/// How to write a trace.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Events per block before it is written out.
    pub block_events: usize,
    /// Write the events in the order given, in multi-location blocks of the
    /// compact form (a stream in global order); otherwise one block per location,
    /// each location's events in order.
    pub global_order: bool,
    /// Write the trailing index of blocks.
    pub index: bool,
    /// Extra feature flags (ALIGNED, MATCHED) describing the events.
    pub flags: u64,
}

/// Events per block that writers of traces in global order take by default: four times
/// a per-location block's, since a compact block says afresh what it holds of each
/// location (its first CPU time, Lamport clock and partner indices), and a block in
/// global order holds many locations (a 1,024-process stencil ordered: 8.1 bytes an event
/// against 8.6 with blocks of 4,096; decoding is no slower).
pub const GLOBAL_ORDER_BLOCK_EVENTS: usize = 16384;

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions { block_events: 4096, global_order: false, index: true, flags: 0 }
    }
}

/// Writes a trace. Memory is bounded by one block per location (or one block in
/// global order), whatever the number of events.
pub struct TraceWriter<W: Write> {
    out: W,
    opts: WriterOptions,
    location_count: usize,
    /// Per-location encoders (or one, in global order).
    blocks: Vec<BlockEncoder>,
    offset: u64,
    index: Vec<IndexEntry>,
    events: u64,
    scratch: Vec<u8>,
    /// The chunk type of its multi-location blocks.
    multi_chunk: u8,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header and `defs` to `out`; events follow with `write`.
    pub fn new(out: W, defs: &Definitions, opts: WriterOptions) -> io::Result<Self> {
        Self::of_version(out, defs, opts, binary::MINOR)
    }

    /// [`TraceWriter::new`] writing a trace of format 1.1, whose multi-location blocks
    /// are in the per-location form (0x06): only to test that readers still read them.
    #[doc(hidden)]
    pub fn new_1_1(out: W, defs: &Definitions, opts: WriterOptions) -> io::Result<Self> {
        Self::of_version(out, defs, opts, 1)
    }

    fn of_version(mut out: W, defs: &Definitions, opts: WriterOptions, minor: u16) -> io::Result<Self> {
        let legacy = minor < 2;
        let mut fl = opts.flags;
        if opts.global_order {
            fl |= flags::GLOBAL_ORDER | if legacy { flags::LOCAL_BLOCKS } else { flags::COMPACT_BLOCKS };
        }
        let header = Header { minor, ..Header::new(fl) }.encode();
        out.write_all(&header)?;
        let n = if opts.global_order { 1 } else { defs.locations.len() };
        let encoder = || if legacy { BlockEncoder::writing_1_1() } else { BlockEncoder::default() };
        let mut w = TraceWriter {
            out,
            opts,
            location_count: defs.locations.len(),
            blocks: (0..n).map(|_| encoder()).collect(),
            offset: header.len() as u64,
            index: Vec::new(),
            events: 0,
            scratch: Vec::new(),
            multi_chunk: if legacy { chunk::LOCAL_BLOCK } else { chunk::COMPACT_BLOCK },
        };
        w.write_defs(defs)?;
        Ok(w)
    }

    fn write_defs(&mut self, defs: &Definitions) -> io::Result<()> {
        let payload = binary::encode_defs(defs);
        self.write_chunk(chunk::DEFS, &payload)
    }

    /// Replaces the definitions (a later definitions chunk supersedes earlier ones),
    /// e.g. once names are known that were not at the start.
    pub fn set_definitions(&mut self, defs: &Definitions) -> io::Result<()> {
        if defs.locations.len() < self.location_count {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "new definitions drop locations"));
        }
        self.location_count = defs.locations.len();
        if !self.opts.global_order {
            self.blocks.resize_with(self.location_count, BlockEncoder::default);
        }
        self.write_defs(defs)
    }

    fn write_chunk(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        self.scratch.clear();
        binary::put_chunk(&mut self.scratch, kind, payload);
        self.out.write_all(&self.scratch)?;
        self.offset += self.scratch.len() as u64;
        Ok(())
    }

    /// Adds one event; full blocks are written out as they fill.
    pub fn write(&mut self, ev: &Event) -> io::Result<()> {
        if ev.loc as usize >= self.location_count {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("event of location {}, but {} locations are defined", ev.loc, self.location_count),
            ));
        }
        let slot = if self.opts.global_order { 0 } else { ev.loc as usize };
        let enc = &mut self.blocks[slot];
        enc.push(ev, self.opts.global_order);
        self.events += 1;
        if enc.count as usize >= self.opts.block_events.max(1) {
            self.flush_block(slot)?;
        }
        Ok(())
    }

    /// Events per block (`WriterOptions::block_events`, at least 1).
    pub fn block_events(&self) -> usize {
        self.opts.block_events.max(1)
    }

    /// Writes events of location `loc` that were encoded elsewhere (e.g. in
    /// parallel, one encoder per location): the same as writing `block`'s
    /// events one by one with [`TraceWriter::write`], which is why the
    /// location must have no event buffered and `block` at most
    /// [`TraceWriter::block_events`] events, its encoder state starting from
    /// a cleared one. A full block is written at once; a shorter one is
    /// buffered as the location's current block (so later events continue it).
    /// Per-location blocks only (not `global_order`).
    pub fn write_encoded(&mut self, loc: u32, block: BlockEncoder) -> io::Result<()> {
        let slot = loc as usize;
        let invalid = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        if self.opts.global_order || slot >= self.location_count {
            return invalid(format!(
                "encoded block of location {loc}: not a per-location block of a defined location"
            ));
        }
        if self.blocks[slot].count > 0 || block.count as usize > self.block_events() {
            return invalid(format!(
                "encoded block of location {loc}: {} events, {} already buffered, blocks of {}",
                block.count,
                self.blocks[slot].count,
                self.block_events()
            ));
        }
        self.events += block.count;
        let full = block.count as usize == self.block_events();
        self.blocks[slot] = block;
        if full {
            self.flush_block(slot)?;
        }
        Ok(())
    }

    fn flush_block(&mut self, slot: usize) -> io::Result<()> {
        if self.blocks[slot].count > 0 {
            let loc = (!self.opts.global_order).then_some(slot as LocId);
            let b = self.blocks[slot].take_block(loc);
            self.put_block(&b)?;
        }
        Ok(())
    }

    /// Writes a block chunk of the kind this writer writes, and its index entry.
    fn put_block(&mut self, b: &EncodedBlock) -> io::Result<()> {
        self.index.push(IndexEntry {
            offset: self.offset,
            loc: b.loc,
            count: b.count,
            min_wall: b.min_wall,
            max_wall: b.max_wall,
        });
        let kind = if self.opts.global_order { self.multi_chunk } else { chunk::BLOCK };
        self.write_chunk(kind, &b.payload)
    }

    /// Whether [`TraceWriter::write_block`] would take a block of `count` events of
    /// `loc` (`None`: a multi-location block) now, giving exactly the bytes that
    /// writing its events one by one would give: the block is full (`block_events`
    /// events), of the kind this writer writes, and the block it replaces is empty.
    pub fn takes_block(&self, loc: Option<LocId>, count: u64) -> bool {
        let slot = match (self.opts.global_order, loc) {
            (true, None) => 0,
            (false, Some(l)) if (l as usize) < self.location_count => l as usize,
            _ => return false,
        };
        count > 0 && count == self.opts.block_events.max(1) as u64 && self.blocks[slot].count == 0
    }

    /// Writes a block encoded elsewhere (in parallel, or copied from an input whose
    /// block is canonical, see [`crate::raw`]). Refused unless
    /// [`TraceWriter::takes_block`] says so.
    pub fn write_block(&mut self, b: &EncodedBlock) -> io::Result<()> {
        if !self.takes_block(b.loc, b.count) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a block of {} events of {:?} does not fit the writer's blocks now", b.count, b.loc),
            ));
        }
        self.put_block(b)?;
        self.events += b.count;
        Ok(())
    }

    /// Events written so far.
    pub fn events_written(&self) -> u64 {
        self.events
    }

    /// Writes what is buffered, the index and the end chunk, and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        for slot in 0..self.blocks.len() {
            self.flush_block(slot)?;
        }
        let mut index_offset = 0;
        if self.opts.index {
            index_offset = self.offset;
            let payload = binary::encode_index(&self.index);
            self.write_chunk(chunk::INDEX, &payload)?;
        }
        let end = End { events: self.events, blocks: self.index.len() as u64, index_offset };
        self.write_chunk(chunk::END, &end.encode())?;
        self.out.flush()?;
        Ok(self.out)
    }
}
